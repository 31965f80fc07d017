"""Paper 002's KernelUCB with its confidence rules (martingale mixtures, AY-GP-UCB,
IGP-UCB), the factory of the paper's named methods, and the random baseline."""

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

__all__ = [
    "AYGPUCBWidth",
    "ConfidenceRule",
    "IGPUCBWidth",
    "KERNEL_UCB_METHODS",
    "KernelUCB",
    "MartingaleMixtureRule",
    "RandomPolicy",
    "WidthRule",
    "confidence_rule",
    "default_mixture_scale",
]
