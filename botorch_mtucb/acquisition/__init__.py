"""BoTorch acquisition functions built from a model and a width or a bound."""

from botorch_mtucb.acquisition.martingale_mixture_ucb import MartingaleMixtureUCB
from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB

__all__ = [
    "MartingaleMixtureUCB",
    "ScalarizedMultiTaskUCB",
    "TaskConditionedLCB",
    "TaskConditionedUCB",
]
