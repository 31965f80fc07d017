"""Paper 000's algorithms: scalarized multi-task kernelized bandits (MT-KB, MT-BKB, their
independent-task baselines and MOBO's random-scalarization UCB)."""

from botorch_mtucb.bandits.scalarized.mobo import RandomScalarizationUCB
from botorch_mtucb.bandits.scalarized.mt_bkb import (
    IndependentTaskBudgetedKernelizedBandit,
    MultiTaskBudgetedKernelizedBandit,
)
from botorch_mtucb.bandits.scalarized.mt_kb import (
    IndependentTaskKernelizedBandit,
    MultiTaskKernelizedBandit,
)

__all__ = [
    "IndependentTaskBudgetedKernelizedBandit",
    "IndependentTaskKernelizedBandit",
    "MultiTaskBudgetedKernelizedBandit",
    "MultiTaskKernelizedBandit",
    "RandomScalarizationUCB",
]
