"""Bandit environments: the feedback protocols of papers 000 and 001."""

from botorch_mtucb.bandits.environments.scalarized import ScalarizedEnvironment
from botorch_mtucb.bandits.environments.task_indexed import (
    ActiveLearningAction,
    ActiveMultiTaskEnvironment,
    OnlineMultiTaskEnvironment,
)

__all__ = [
    "ActiveLearningAction",
    "ActiveMultiTaskEnvironment",
    "OnlineMultiTaskEnvironment",
    "ScalarizedEnvironment",
]
