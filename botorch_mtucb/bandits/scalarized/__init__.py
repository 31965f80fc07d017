"""Paper 000's algorithms: scalarized multi-task kernelized bandits (MT-KB, MT-BKB, their
independent-task baselines and MOBO's random-scalarization UCB), and MT-KB with the
multi-task martingale-mixture bound (MT-CMM-UCB, MT-DMM-UCB, IT-CMM-UCB)."""

from botorch_mtucb.bandits.scalarized.mobo import RandomScalarizationUCB
from botorch_mtucb.bandits.scalarized.mt_bkb import (
    IndependentTaskBudgetedKernelizedBandit,
    MultiTaskBudgetedKernelizedBandit,
)
from botorch_mtucb.bandits.scalarized.mt_cmm_ucb import (
    IndependentTaskMartingaleMixtureBandit,
    MultiTaskMartingaleMixtureBandit,
)
from botorch_mtucb.bandits.scalarized.mt_kb import (
    IndependentTaskKernelizedBandit,
    MultiTaskKernelizedBandit,
)

__all__ = [
    "IndependentTaskBudgetedKernelizedBandit",
    "IndependentTaskKernelizedBandit",
    "IndependentTaskMartingaleMixtureBandit",
    "MultiTaskBudgetedKernelizedBandit",
    "MultiTaskKernelizedBandit",
    "MultiTaskMartingaleMixtureBandit",
    "RandomScalarizationUCB",
]
