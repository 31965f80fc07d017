"""Paper 001's algorithms: task-indexed multitask regression, MT-UCB, AdaMT-UCB,
multitask active learning, and MT-CMM-UCB / MT-CMM-AL (their multi-task CMM-bound variants)."""

from botorch_mtucb.bandits.task_indexed.active_learning import (
    AELSVI,
    MultiTaskActiveLearning,
    MultiTaskThompsonSampling,
    UniformTaskActiveLearning,
)
from botorch_mtucb.bandits.task_indexed.adaptive_mt_ucb import AdaptiveMultiTaskUCB
from botorch_mtucb.bandits.task_indexed.mt_cmm import (
    MultiTaskCMMActiveLearning,
    MultiTaskCMMUCB,
    TaskIndexedCMMPolicy,
    task_indexed_norm_bound,
)
from botorch_mtucb.bandits.task_indexed.mt_ucb import MultiTaskUCB
from botorch_mtucb.bandits.task_indexed.regression import AgnosticMultiTaskRegression

__all__ = [
    "AELSVI",
    "AdaptiveMultiTaskUCB",
    "AgnosticMultiTaskRegression",
    "MultiTaskActiveLearning",
    "MultiTaskCMMActiveLearning",
    "MultiTaskCMMUCB",
    "MultiTaskThompsonSampling",
    "MultiTaskUCB",
    "TaskIndexedCMMPolicy",
    "UniformTaskActiveLearning",
    "task_indexed_norm_bound",
]
