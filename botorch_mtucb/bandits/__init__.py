"""The papers' algorithms as policies (select / update), their environments, and one loop
runner that records every round and resumes interrupted runs."""

from botorch_mtucb.bandits.environments.scalarized import ScalarizedEnvironment
from botorch_mtucb.bandits.environments.task_indexed import (
    ActiveLearningAction,
    ActiveMultiTaskEnvironment,
    OnlineMultiTaskEnvironment,
)
from botorch_mtucb.bandits.kernel_ucb.confidence_rules import (
    AYGPUCBWidth,
    ConfidenceRule,
    IGPUCBWidth,
    MartingaleMixtureRule,
    WidthRule,
)
from botorch_mtucb.bandits.kernel_ucb.kernel_ucb import KernelUCB
from botorch_mtucb.bandits.kernel_ucb.methods import (
    KERNEL_UCB_METHODS,
    confidence_rule,
    default_mixture_scale,
)
from botorch_mtucb.bandits.kernel_ucb.random_policy import RandomPolicy
from botorch_mtucb.bandits.protocols import Action, Environment, Policy
from botorch_mtucb.bandits.runner import StepRecord, run_policy
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
from botorch_mtucb.bandits.task_indexed.adaptive_mt_ucb import AdaptiveMultiTaskUCB
from botorch_mtucb.bandits.task_indexed.mt_ucb import MultiTaskUCB
from botorch_mtucb.bandits.task_indexed.regression import AgnosticMultiTaskRegression

__all__ = [
    "AELSVI",
    "AYGPUCBWidth",
    "Action",
    "ActiveLearningAction",
    "ActiveMultiTaskEnvironment",
    "AdaptiveMultiTaskUCB",
    "AgnosticMultiTaskRegression",
    "ConfidenceRule",
    "Environment",
    "IGPUCBWidth",
    "IndependentTaskBudgetedKernelizedBandit",
    "IndependentTaskKernelizedBandit",
    "KERNEL_UCB_METHODS",
    "KernelUCB",
    "MartingaleMixtureRule",
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
    "WidthRule",
    "confidence_rule",
    "default_mixture_scale",
    "run_policy",
]
