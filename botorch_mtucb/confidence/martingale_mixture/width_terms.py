r"""Where a martingale-mixture bound's width comes from: its radius, term by term.

Paper 002's bound at ``x`` (eq. (12), Cor. 4.3) is, at the minimizing ``alpha``,

.. math::
    u_t(x) = \mu_\alpha(x) + \sqrt{\tilde R_\alpha^2 / \alpha}\, \rho_\alpha(x),

and the squared radius is a sum of four terms (eq. (8) and Lemma C.1; ``K = K_t``,
``y = y_t``, ``c`` the mixture scale, ``sigma`` the noise level):

.. math::
    \tilde R_\alpha^2 =
    \underbrace{\alpha B^2}_{\text{norm}}
    + \underbrace{\sigma^2 \ln\det(I + cK/\sigma^2)}_{\text{log-det}}
    + \underbrace{2 \sigma^2 \ln(1/\delta)}_{\text{confidence}}
    + \underbrace{y^\top (I + cK/\sigma^2)^{-1} y - \alpha\, y^\top (K + \alpha I)^{-1} y}
      _{\text{data fit}} .

The data-fit term may be negative (it is zero at ``alpha = sigma^2 / c``, where the two
quadratic forms coincide). ``width_decomposition`` returns the four terms, their shares
of ``R~_alpha^2`` and the multiplier ``sqrt(R~_alpha^2 / alpha)`` of ``rho_alpha(x)``,
the number that plays the role of GP-UCB's ``beta^{1/2}``. The terms are read from the
spectrum of ``K_t`` (``radius``), so they cost nothing once the exact bound has run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.bound import MartingaleMixtureBound

TERMS = ("norm", "log_det", "confidence", "data_fit")


@dataclass(frozen=True)
class WidthDecomposition:
    r"""The terms of ``R~_alpha^2`` at the ``alpha`` where the bound at each point is
    attained (module docstring), in the bound's (transformed) units squared.

    Attributes:
        alpha: The minimizing ``alpha`` per point (``N``).
        norm: ``alpha B^2`` (``N``).
        log_det: ``sigma^2 ln det(I + c K / sigma^2)`` (``N``, the same for every point).
        confidence: ``2 sigma^2 ln(1 / delta)`` (``N``).
        data_fit: ``y^T (I + c K / sigma^2)^{-1} y - alpha y^T (K + alpha I)^{-1} y`` (``N``).
        radius_tilde_squared: ``R~_alpha^2``, the sum of the four (``N``).
        beta_sqrt: ``sqrt(R~_alpha^2 / alpha)``, the multiplier of ``rho_alpha(x)`` (``N``).
        mixture_scale, noise_std, rkhs_norm_bound, delta: The bound's ``c``, ``sigma``,
            ``B`` and ``delta``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.width_terms import (
        ...     width_decomposition)
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 2.0, 0.1, 0.01)
        >>> terms = width_decomposition(bound, X[:2])
        >>> shares = terms.shares()
        >>> bool(torch.allclose(sum(shares.values()), torch.ones(2, dtype=torch.float64)))
        True
    """

    alpha: Tensor
    norm: Tensor
    log_det: Tensor
    confidence: Tensor
    data_fit: Tensor
    radius_tilde_squared: Tensor
    beta_sqrt: Tensor
    mixture_scale: float
    noise_std: float
    rkhs_norm_bound: float
    delta: float

    def shares(self) -> dict[str, Tensor]:
        """Each term divided by ``R~_alpha^2`` (``N`` each; they sum to 1, the data-fit
        share may be negative)."""
        total = self.radius_tilde_squared.clamp_min(torch.finfo(torch.float64).tiny)
        return {name: getattr(self, name) / total for name in TERMS}

    def summary(self, index: int = 0) -> dict[str, float]:
        """The numbers at one point as plain floats (for JSON records and tables)."""
        shares = self.shares()
        record = {f"{name}_share": float(shares[name][index]) for name in TERMS}
        record.update(
            alpha=float(self.alpha[index]),
            beta_sqrt=float(self.beta_sqrt[index]),
            radius_tilde_squared=float(self.radius_tilde_squared[index]),
            mixture_scale=self.mixture_scale,
            noise_std=self.noise_std,
            rkhs_norm_bound=self.rkhs_norm_bound,
        )
        return record


def width_decomposition(
    bound: MartingaleMixtureBound,
    X: Tensor,
    alphas: float | Sequence[float] | Tensor | None = None,
) -> WidthDecomposition:
    r"""The terms of the radius of ``bound.upper(X, alphas)`` at its minimizing ``alpha``.

    Args:
        bound: A ``MartingaleMixtureBound`` with at least one observation (its ``B``
            given or chosen from the data).
        X: ``N x d`` points (the user's space).
        alphas: As ``bound.upper``: ``None`` (exact), a grid (DMM) or one ``alpha``
            (analytic).

    Returns:
        A ``WidthDecomposition`` with ``N`` values per term (float64).

    Raises:
        TypeError: If ``bound`` is not a ``MartingaleMixtureBound``.
        ValueError: If ``X`` is not ``N x d``, for a bound without observations, and as
            ``bound.upper``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.width_terms import (
        ...     width_decomposition)
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 2.0, 0.1, 0.01)
        >>> terms = width_decomposition(bound, X[:1], alphas=bound.base_alpha)
        >>> float(terms.data_fit[0]) == 0.0 or abs(float(terms.data_fit[0])) < 1e-12
        True
    """
    if not isinstance(bound, MartingaleMixtureBound):
        raise TypeError(f"bound must be a MartingaleMixtureBound, got {type(bound).__name__}")
    if X.dim() != 2:
        raise ValueError(f"X must be N x d, got shape {tuple(X.shape)}")
    if bound.num_observations == 0:
        raise ValueError("the bound has no observations: its radius is 2 sigma^2 ln(1/delta)")
    with torch.no_grad():
        alpha = bound.optimal_alpha(X, alphas).reshape(-1).to(torch.float64)
        spectrum = bound.spectrum()
    lam, z2 = spectrum.eigenvalues, spectrum.rotated_y**2
    sigma2, c = bound.noise_std**2, bound.mixture_scale
    ratio = c * lam / sigma2
    alpha = alpha.to(lam.device)
    ones = torch.ones_like(alpha)
    fit_c = (z2 / (1.0 + ratio)).sum()
    fit_alpha = (alpha.unsqueeze(-1) * z2 / (lam + alpha.unsqueeze(-1))).sum(-1)
    norm = alpha * bound.rkhs_norm_bound**2
    log_det = sigma2 * torch.log1p(ratio).sum() * ones
    confidence = 2.0 * sigma2 * math.log(1.0 / bound.delta) * ones
    data_fit = fit_c - fit_alpha
    total = norm + log_det + confidence + data_fit
    return WidthDecomposition(
        alpha=alpha,
        norm=norm,
        log_det=log_det,
        confidence=confidence,
        data_fit=data_fit,
        radius_tilde_squared=total,
        beta_sqrt=(total.clamp_min(0.0) / alpha).sqrt(),
        mixture_scale=c,
        noise_std=bound.noise_std,
        rkhs_norm_bound=bound.rkhs_norm_bound,
        delta=bound.delta,
    )
