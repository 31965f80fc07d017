"""Paper 002's methods with the parameters of Section 7 for a ``BanditConfig``.

KernelUCB with the exact (CMM-UCB), grid (DMM-UCB) and analytic (AMM-UCB)
martingale-mixture bounds, AY-GP-UCB, IGP-UCB (``eta = 2 / T``) and random actions, with
``delta = 0.01``; ``c = 1`` (RBF) or ``T^{-d / (2 d + 2 nu)}`` (Matern), where ``T`` is
the run's horizon (so quick runs use their own shorter ``T``). Kernel CMM-UCB runs for
the full horizon (the paper stops it at 200 rounds, Section 7).
"""

from __future__ import annotations

from botorch_mtucb.bandits import (
    KERNEL_UCB_METHODS,
    KernelUCB,
    Policy,
    RandomPolicy,
    confidence_rule,
    default_mixture_scale,
)
from botorch_mtucb.experiments.paper002.configs import BanditConfig
from botorch_mtucb.problems.kernel_bandit import KERNEL_FAMILIES, make_kernel

METHODS = (*KERNEL_UCB_METHODS, "Random")
DELTA = 0.01


def make_policy(method: str, config: BanditConfig, horizon: int) -> Policy:
    """The policy ``method`` (one of ``METHODS``) with paper 002's parameters for
    ``config`` and a run of ``horizon`` rounds.

    Example:
        >>> from botorch_mtucb.experiments.paper002.configs import BanditConfig
        >>> from botorch_mtucb.experiments.paper002.methods import make_policy
        >>> make_policy("AMM-UCB", BanditConfig("rbf", 0.5), horizon=200).name
        'AMM-UCB'
    """
    if method == "Random":
        return RandomPolicy()
    nu = KERNEL_FAMILIES[config.family]
    rule = confidence_rule(
        method,
        make_kernel(config.family, config.lengthscale),
        config.dim,
        rkhs_norm_bound=config.assumed_norm,
        noise_std=config.assumed_noise,
        delta=DELTA,
        mixture_scale=default_mixture_scale(nu, config.dim, horizon),
        eta=2.0 / horizon,
    )
    return KernelUCB(rule, name=method)
