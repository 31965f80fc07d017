"""The papers' algorithms as policies (select / update), their environments, and one loop
runner that records every round and resumes interrupted runs.

Each family of algorithms is a subpackage (``scalarized``: paper 000, ``task_indexed``:
paper 001, ``kernel_ucb``: paper 002) and ``environments`` holds the feedback protocols;
their public names are re-exported here with the runner's.
"""

from botorch_mtucb.bandits import environments, kernel_ucb, scalarized, task_indexed
from botorch_mtucb.bandits.environments import *  # noqa: F403
from botorch_mtucb.bandits.kernel_ucb import *  # noqa: F403
from botorch_mtucb.bandits.protocols import Action, Environment, Policy
from botorch_mtucb.bandits.runner import StepRecord, run_policy
from botorch_mtucb.bandits.scalarized import *  # noqa: F403
from botorch_mtucb.bandits.task_indexed import *  # noqa: F403

__all__ = ["Action", "Environment", "Policy", "StepRecord", "run_policy"]
__all__ += environments.__all__
__all__ += kernel_ucb.__all__
__all__ += scalarized.__all__
__all__ += task_indexed.__all__
