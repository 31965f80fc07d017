"""The papers' algorithms as policies (select / update), their environments, and one loop
runner that records every round and resumes interrupted runs.

A policy is a confidence rule composed with a round protocol (``ConfidencePolicy``): the
rules are in ``confidence_rules`` (one folder for all of them), the protocols in
``rounds`` (paper 000's scalarized feedback, paper 001's revealed task and active task
choice, paper 002's single task), the feedback of the problems in ``environments``. Each
paper's named methods are compositions built in its folder (``scalarized``: paper 000,
``task_indexed``: paper 001, ``kernel_ucb``: paper 002's ``KernelUCB``), a method's
constructor named after its label (``bandits.scalarized.mt_cmm_ucb``,
``bandits.task_indexed.mt_cmm_ucb``: the same rule, each paper's round). The shared
names are re-exported here with the runner's; the methods' constructors are imported from
their paper's folder.
"""

from botorch_mtucb.bandits import (
    confidence_rules,
    environments,
    kernel_ucb,
    scalarized,
    task_indexed,
)
from botorch_mtucb.bandits.confidence_rules import *  # noqa: F403
from botorch_mtucb.bandits.environments import *  # noqa: F403
from botorch_mtucb.bandits.kernel_ucb import *  # noqa: F403
from botorch_mtucb.bandits.policy import ConfidencePolicy
from botorch_mtucb.bandits.protocols import Action, Environment, Policy
from botorch_mtucb.bandits.rounds import (
    ActiveTaskRound,
    LargestGain,
    OptimisticGap,
    RevealedTaskRound,
    ScalarizedRound,
    SingleTaskRound,
    UniformTask,
)
from botorch_mtucb.bandits.runner import StepRecord, run_policy

__all__ = [
    "Action",
    "ActiveTaskRound",
    "ConfidencePolicy",
    "Environment",
    "LargestGain",
    "OptimisticGap",
    "Policy",
    "RevealedTaskRound",
    "ScalarizedRound",
    "SingleTaskRound",
    "StepRecord",
    "UniformTask",
    "run_policy",
    "scalarized",
    "task_indexed",
]
__all__ += confidence_rules.__all__
__all__ += environments.__all__
__all__ += kernel_ucb.__all__
