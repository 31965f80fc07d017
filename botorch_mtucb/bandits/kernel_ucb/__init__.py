"""Paper 002's KernelUCB (the single-task round with a confidence rule), the factory of
the paper's named methods' rules, and the random baseline."""

from botorch_mtucb.bandits.kernel_ucb.kernel_ucb import KernelUCB
from botorch_mtucb.bandits.kernel_ucb.methods import (
    KERNEL_UCB_METHODS,
    confidence_rule,
    default_mixture_scale,
)
from botorch_mtucb.bandits.kernel_ucb.random_policy import RandomPolicy

__all__ = [
    "KERNEL_UCB_METHODS",
    "KernelUCB",
    "RandomPolicy",
    "confidence_rule",
    "default_mixture_scale",
]
