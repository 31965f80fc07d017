"""Paper 001's algorithms: task-indexed multitask regression, MT-UCB, AdaMT-UCB and
multitask active learning."""

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
    "AdaptiveMultiTaskUCB",
    "AgnosticMultiTaskRegression",
    "MultiTaskActiveLearning",
    "MultiTaskThompsonSampling",
    "MultiTaskUCB",
    "UniformTaskActiveLearning",
]
