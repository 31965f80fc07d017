"""BoTorch acquisition functions: scalarized multi-task UCB (000), task-conditioned UCB /
LCB (001), the martingale-mixture UCB (002) and its
scalarized multi-task form, and MOBO's scalarized objective UCB; pending
points (``X_pending``) as in GP-BUCB (``condition_on_pending``); Ax generation strategies
with them (``ax_generation_strategy``); stopping on the certified optimality gap, in a
BoTorch loop (``CertifiedStopping``) or as an Ax global stopping strategy
(``certified_global_stopping_strategy``)."""

# registers the BoTorch input constructors (Ax's botorch_acqf_class=...)
from botorch_mtucb.acquisition import input_constructors  # noqa: F401
from botorch_mtucb.acquisition.ax_generation import ax_generation_strategy
from botorch_mtucb.acquisition.ax_stopping import certified_global_stopping_strategy
from botorch_mtucb.acquisition.martingale_mixture_ucb import MartingaleMixtureUCB
from botorch_mtucb.acquisition.pending import condition_on_pending
from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import (
    ScalarizedMartingaleMixtureUCB,
)
from botorch_mtucb.acquisition.scalarized_objective_ucb import ScalarizedObjectiveUCB
from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.single_task_ucb import AYGPUCB, IGPUCB
from botorch_mtucb.acquisition.stopping import CertifiedStopping, StoppingDecision
from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB

__all__ = [
    "AYGPUCB",
    "CertifiedStopping",
    "IGPUCB",
    "MartingaleMixtureUCB",
    "ScalarizedMartingaleMixtureUCB",
    "ScalarizedMultiTaskUCB",
    "ScalarizedObjectiveUCB",
    "StoppingDecision",
    "TaskConditionedLCB",
    "TaskConditionedUCB",
    "ax_generation_strategy",
    "certified_global_stopping_strategy",
    "condition_on_pending",
]
