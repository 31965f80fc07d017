"""BoTorch acquisition functions: scalarized multi-task UCB (000), task-conditioned UCB /
LCB (001), the martingale-mixture UCB (002) and MOBO's scalarized objective UCB."""

from botorch_mtucb.acquisition.martingale_mixture_ucb import MartingaleMixtureUCB
from botorch_mtucb.acquisition.scalarized_objective_ucb import ScalarizedObjectiveUCB
from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB

__all__ = [
    "MartingaleMixtureUCB",
    "ScalarizedMultiTaskUCB",
    "ScalarizedObjectiveUCB",
    "TaskConditionedLCB",
    "TaskConditionedUCB",
]
