"""The papers' algorithms as policies (select / update) and one loop runner."""

from botorch_mtucb.bandits.environments.scalarized import ScalarizedEnvironment
from botorch_mtucb.bandits.environments.task_indexed import (
    ActiveMultiTaskEnvironment,
    OnlineMultiTaskEnvironment,
    decode_active_action,
    encode_active_action,
)
from botorch_mtucb.bandits.kernel_ucb.kernel_ucb import (
    KernelUCB,
    RandomPolicy,
    default_mixture_scale,
)
from botorch_mtucb.bandits.runner import Environment, Policy, StepRecord, run_policy
from botorch_mtucb.bandits.scalarized.mobo import RandomScalarizationUCB
from botorch_mtucb.bandits.scalarized.mt_bkb import (
    IndependentTaskBudgetedKernelizedBandit,
    MultiTaskBudgetedKernelizedBandit,
)
from botorch_mtucb.bandits.scalarized.mt_kb import (
    IndependentTaskKernelizedBandit,
    MultiTaskKernelizedBandit,
)
from botorch_mtucb.bandits.task_indexed.active_learning import (
    AELSVI,
    MultiTaskActiveLearning,
    MultiTaskThompsonSampling,
    UniformTaskActiveLearning,
)
from botorch_mtucb.bandits.task_indexed.mt_ucb import AdaptiveMultiTaskUCB, MultiTaskUCB
from botorch_mtucb.bandits.task_indexed.regression import AgnosticMultiTaskRegression

__all__ = [
    "AELSVI",
    "ActiveMultiTaskEnvironment",
    "AdaptiveMultiTaskUCB",
    "AgnosticMultiTaskRegression",
    "Environment",
    "IndependentTaskBudgetedKernelizedBandit",
    "IndependentTaskKernelizedBandit",
    "KernelUCB",
    "MultiTaskActiveLearning",
    "MultiTaskBudgetedKernelizedBandit",
    "MultiTaskKernelizedBandit",
    "MultiTaskThompsonSampling",
    "MultiTaskUCB",
    "OnlineMultiTaskEnvironment",
    "Policy",
    "RandomPolicy",
    "RandomScalarizationUCB",
    "ScalarizedEnvironment",
    "StepRecord",
    "UniformTaskActiveLearning",
    "decode_active_action",
    "default_mixture_scale",
    "encode_active_action",
    "run_policy",
]
