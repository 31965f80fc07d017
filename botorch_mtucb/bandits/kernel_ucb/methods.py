r"""Paper 002's named KernelUCB methods and their parameters (Sections 5, 6.2 and 7).

``confidence_rule(method, ...)`` builds, on no data, the confidence rule of each method:

* ``"CMM-UCB"``: the exact martingale-mixture bound (Section 5.3);
* ``"DMM-UCB"``: its minimum over ``A = {0.1, 0.3, 1, 3, 10} sigma^2 / c`` (Sections 5.4
  and 7);
* ``"AMM-UCB"``: the analytic bound of Cor. 4.6 with ``alpha = sigma^2 / c`` (Section 5.5);
* ``"AY-GP-UCB"``: ``mu_lambda + beta^AY rho_lambda`` with ``lambda = sigma^2 / c``
  (Abbasi-Yadkori 2012, Theorem 3.11; Appendix C.2, Theorem 6.3 and Section 7);
* ``"IGP-UCB"``: ``mu_{1+eta} + beta^IGP rho_{1+eta}`` with ``eta = 2 / T`` in the paper
  (Chowdhury & Gopalan 2017, Theorem 2; Appendix C.2 and Section 7).

``c`` is the mixture's covariance scale (``default_mixture_scale``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from gpytorch.kernels import Kernel

from botorch_mtucb.bandits.confidence_rules import (
    AYGPUCBWidth,
    ConfidenceRule,
    IGPUCBWidth,
    MartingaleMixtureRule,
    WidthRule,
)
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils.checks import as_int, check_choice, check_positive

KERNEL_UCB_METHODS = ("CMM-UCB", "DMM-UCB", "AMM-UCB", "AY-GP-UCB", "IGP-UCB")
DMM_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)  # multiples of sigma^2 / c (paper 002, Section 7)


def default_mixture_scale(nu: float, dim: int, horizon: int) -> float:
    r"""Paper 002's covariance scale ``c`` (Section 6.2 and 7).

    ``c = 1`` for the RBF kernel (``nu = inf``) and ``c = T^{-d / (2 d + 2 nu)}`` for a
    Matern kernel of smoothness ``nu``.

    Raises:
        ValueError: If ``nu <= 0``, ``dim < 1`` or ``horizon < 1``.

    Example:
        >>> import math
        >>> from botorch_mtucb.bandits import default_mixture_scale
        >>> default_mixture_scale(math.inf, 3, 1000)
        1.0
        >>> round(default_mixture_scale(2.5, 3, 1000), 6)  # 1000^(-3/11)
        0.151991
    """
    if not nu > 0:
        raise ValueError(f"nu must be > 0 (math.inf for RBF), got {nu}")
    if dim < 1 or horizon < 1:
        raise ValueError(f"dim and horizon must be >= 1, got {dim} and {horizon}")
    if math.isinf(nu):
        return 1.0
    return float(horizon) ** (-dim / (2.0 * dim + 2.0 * nu))


def confidence_rule(
    method: str,
    kernel: Kernel,
    dim: int,
    rkhs_norm_bound: float = 10.0,
    noise_std: float = 0.1,
    delta: float = 0.01,
    mixture_scale: float = 1.0,
    eta: float | None = None,
    dmm_grid: Sequence[float] = DMM_GRID,
) -> ConfidenceRule:
    r"""The confidence rule of paper 002's ``method``, on no data.

    Args:
        method: One of ``KERNEL_UCB_METHODS`` (see the module docstring).
        kernel: The (fixed, known) GPyTorch kernel.
        dim: The input dimension ``d``.
        rkhs_norm_bound: ``B > 0`` (paper 002 uses the true norm, 10).
        noise_std: ``sigma > 0`` (paper 002: 0.1).
        delta: Confidence level in (0, 1) (paper 002: 0.01).
        mixture_scale: ``c > 0``; also sets AY-GP-UCB's ``lambda = sigma^2 / c`` and the
            alphas of DMM / AMM.
        eta: IGP-UCB's ``eta > 0`` (paper 002: ``2 / T``); required for ``"IGP-UCB"``.
        dmm_grid: DMM's grid as multiples of ``sigma^2 / c``.

    Returns:
        A ``MartingaleMixtureRule`` (CMM, DMM, AMM) or a ``WidthRule`` (AY-GP-UCB,
        IGP-UCB).

    Raises:
        ValueError: For an unknown ``method``, ``dim < 1``, non-positive numbers,
            ``delta`` outside (0, 1), or ``"IGP-UCB"`` without ``eta``.
        TypeError: If ``dim`` is not an int.

    Example:
        >>> from botorch_mtucb.bandits import KernelUCB, confidence_rule, default_mixture_scale
        >>> from botorch_mtucb.problems import make_kernel
        >>> rule = confidence_rule("DMM-UCB", make_kernel("matern52", 0.4), dim=3,
        ...                        mixture_scale=default_mixture_scale(2.5, 3, 100))
        >>> rule.alphas.numel()
        5
        >>> policy = KernelUCB(rule, name="DMM-UCB")
    """
    method = check_choice(method, "method", KERNEL_UCB_METHODS)
    dim = as_int(dim, "dim", minimum=1)
    rkhs_norm_bound = check_positive(rkhs_norm_bound, "rkhs_norm_bound")
    noise_std = check_positive(noise_std, "noise_std")
    mixture_scale = check_positive(mixture_scale, "mixture_scale")
    empty_X = torch.zeros(0, dim, dtype=torch.float64)
    empty_Y = torch.zeros(0, 1, dtype=torch.float64)
    base_alpha = noise_std**2 / mixture_scale
    if method in ("CMM-UCB", "DMM-UCB", "AMM-UCB"):
        bound = MartingaleMixtureBound(
            empty_X, empty_Y, kernel, rkhs_norm_bound, noise_std, delta, mixture_scale
        )
        alphas = {
            "CMM-UCB": None,
            "DMM-UCB": torch.tensor([m * base_alpha for m in dmm_grid], dtype=torch.float64),
            "AMM-UCB": torch.tensor([base_alpha], dtype=torch.float64),
        }[method]
        return MartingaleMixtureRule(bound, alphas)
    if method == "IGP-UCB":
        if eta is None:
            raise ValueError("IGP-UCB needs eta > 0 (paper 002 uses eta = 2 / T)")
        eta = check_positive(eta, "eta")
        regularization = 1.0 + eta
        width = IGPUCBWidth(rkhs_norm_bound, noise_std, delta, eta)
    else:
        regularization = base_alpha  # lambda = sigma^2 / c (Theorem 6.3)
        width = AYGPUCBWidth(rkhs_norm_bound, noise_std, delta, regularization)
    model = VectorValuedGP(
        empty_X,
        empty_Y,
        kernel,
        torch.ones(1, 1, dtype=torch.float64),
        regularization=regularization,
    )
    return WidthRule(model, width)
