"""The papers' algorithms as policies (select / update) and one loop runner."""

from botorch_mtucb.bandits.domain import BoxDomain, FiniteDomain, maximize_acquisition
from botorch_mtucb.bandits.mt_kb import IndependentTaskKernelizedBandit, MultiTaskKernelizedBandit
from botorch_mtucb.bandits.runner import Environment, Policy, StepRecord, run_policy
from botorch_mtucb.bandits.scalarized_environment import ScalarizedEnvironment

__all__ = [
    "BoxDomain",
    "Environment",
    "FiniteDomain",
    "IndependentTaskKernelizedBandit",
    "MultiTaskKernelizedBandit",
    "Policy",
    "ScalarizedEnvironment",
    "StepRecord",
    "maximize_acquisition",
    "run_policy",
]
