r"""The one-dimensional dual of paper 002's exact bound, eq. (12), and its minimization.

Source: paper 002, Section 4.3. The exact upper bound ``max_{f in F_t} f(x)`` (the SOCP
of eq. (10)) equals

.. math::
    \min_{\alpha > 0} \; \mu_\alpha(x) + \frac{\widetilde R_\alpha}{\sqrt\alpha}
    \rho_\alpha(x),

with the kernel ridge mean ``mu_alpha``, the posterior standard deviation ``rho_alpha``
and the radius ``R~_alpha`` of Cor. 4.3. With ``K_t = U diag(lambda) U^T``, ``z = U^T y``
and ``v = U^T k_t(x)`` every term is a sum over the spectrum,

.. math::
    \mu_\alpha = \sum_i \frac{v_i z_i}{\lambda_i + \alpha},\quad
    \rho_\alpha^2 = k(x, x) - \sum_i \frac{v_i^2}{\lambda_i + \alpha},\quad
    \widetilde R_\alpha^2 = R_t^2 + \alpha B^2 - \sum_i \frac{\alpha z_i^2}{\lambda_i + \alpha},

so each ``alpha`` costs ``O(t)`` per point. The minimizing ``alpha`` is found in log-space
by a grid (one point per decade) followed by a golden-section search in the bracket of
the best grid point: the objective is empirically quasiconvex (Section 4.3), and any
``alpha`` gives a valid bound, so a poor search only loosens it. The lower bound is the
mirror image (``v z`` replaced by ``-v z``, the result negated). A fixed grid of alphas
(DMM-UCB, Section 5.4) takes the minimum over the grid instead (``minimize_over_grid``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum, radius_tilde_squared

GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0  # 0.618...
GOLDEN_STEPS = 32  # brackets of two decades shrink to 2 * 0.618^32 = 4e-7 decades
BASE_MARGIN = 1e-2  # the search starts at least two decades below sigma^2 / c
ROUND_OFF_FLOOR = 1e-12  # ... but not below 1e-12 lambda_max


def posterior_std(prior_variance: Tensor, explained_variance: Tensor) -> Tensor:
    r"""``rho = sqrt(k(x, x) - k_t(x)^T (K_t + alpha I)^{-1} k_t(x))``, clipped at round-off.

    The difference is clamped at the smallest positive float, so the gradient stays
    finite where the variance vanishes.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.alpha_search import posterior_std
        >>> posterior_std(torch.tensor([1.0, 1.0]), torch.tensor([0.75, 1.0]))[0].item()
        0.5
    """
    variance = prior_variance - explained_variance
    return variance.clamp_min(torch.finfo(variance.dtype).tiny).sqrt()


def dual_value(mean: Tensor, std: Tensor, radius_tilde_sq: Tensor, alpha: Tensor) -> Tensor:
    r"""The objective of eq. (12): ``mu_alpha + R~_alpha / sqrt(alpha) rho_alpha``.

    ``R~_alpha^2`` is clipped at 0. Pass ``-mu_alpha`` for the mirrored lower bound.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.alpha_search import dual_value
        >>> dual_value(torch.tensor(1.0), torch.tensor(0.5), torch.tensor(4.0), torch.tensor(1.0))
        tensor(2.)
    """
    return mean + (radius_tilde_sq.clamp_min(0.0) / alpha).sqrt() * std


class SpectralDual:
    r"""The objective of eq. (12) at ``N`` points, as a function of ``alpha``, from the
    spectrum of ``K_t``.

    Args:
        spectrum: The spectrum of ``K_t``.
        radius_sq: ``R_t^2`` of eq. (8).
        rkhs_norm_bound: ``B > 0``.
        signed_projection: ``sign * v * z`` (``N x t``; ``sign = -1`` for lower bounds).
        squared_projection: ``v^2`` (``N x t``).
        prior_variance: ``k(x, x)`` (``N``).
        variance_eigenvalues: The spectrum that ``squared_projection`` refers to, if
            not that of ``K_t`` (the variance of ``rho_alpha`` on more inputs than the
            data, e.g. pending points hallucinated as in GP-BUCB); ``None``: ``K_t``'s.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.alpha_search import SpectralDual
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum
        >>> spectrum = GramSpectrum.from_gram(torch.eye(1, dtype=torch.float64),
        ...                                   torch.ones(1, dtype=torch.float64))
        >>> v = torch.zeros(1, 1, dtype=torch.float64)  # a point far from the data
        >>> dual = SpectralDual(spectrum, torch.tensor(1.0, dtype=torch.float64), 1.0,
        ...                     v, v, torch.ones(1, dtype=torch.float64))
        >>> alpha, value = dual.minimize(base_alpha=1.0)
        >>> bool(value <= dual(torch.tensor(1.0, dtype=torch.float64)))
        True
    """

    def __init__(
        self,
        spectrum: GramSpectrum,
        radius_sq: Tensor,
        rkhs_norm_bound: float,
        signed_projection: Tensor,
        squared_projection: Tensor,
        prior_variance: Tensor,
        variance_eigenvalues: Tensor | None = None,
    ) -> None:
        self.spectrum = spectrum
        self.variance_eigenvalues = variance_eigenvalues
        self.radius_sq = radius_sq
        self.rkhs_norm_bound = rkhs_norm_bound
        self.signed_projection = signed_projection
        self.squared_projection = squared_projection
        self.prior_variance = prior_variance
        self._squared_y = spectrum.rotated_y**2

    def __call__(self, alpha: Tensor) -> Tensor:
        """The objective at ``alpha`` of shape ``N`` (one per point) or ``()``: ``N``."""
        alpha_col = alpha.unsqueeze(-1) if alpha.dim() else alpha
        inverse = 1.0 / (self.spectrum.eigenvalues + alpha_col)  # N x t or t
        mean = (self.signed_projection * inverse).sum(-1)
        if self.variance_eigenvalues is not None:
            inverse_var = 1.0 / (self.variance_eigenvalues + alpha_col)
        else:
            inverse_var = inverse
        std = posterior_std(self.prior_variance, (self.squared_projection * inverse_var).sum(-1))
        data_fit = alpha * (self._squared_y * inverse).sum(-1)
        rt2 = radius_tilde_squared(self.radius_sq, self.rkhs_norm_bound, alpha, data_fit)
        return dual_value(mean, std, rt2, alpha)

    def minimize(self, base_alpha: float) -> tuple[Tensor, Tensor]:
        """Per point, the ``alpha`` of the smallest objective found and that value.

        A log-spaced grid over ``search_range`` (one point per decade), then
        ``GOLDEN_STEPS`` golden-section steps in the bracket of the best grid point; the
        best point evaluated is returned (two tensors of shape ``N``).
        """
        low, high = search_range(self.spectrum.eigenvalues, base_alpha)
        num_grid = max(int(math.ceil(math.log10(high / low))) + 1, 3)
        grid = torch.linspace(
            math.log(low), math.log(high), num_grid, dtype=self.radius_sq.dtype,
            device=self.signed_projection.device,
        )  # fmt: skip
        values = torch.stack([self(g.exp()) for g in grid])  # G x N
        best_value, j = values.min(dim=0)
        left = grid[(j - 1).clamp_min(0)]
        right = grid[(j + 1).clamp_max(num_grid - 1)]
        best_log = grid[j]
        x1 = right - GOLDEN * (right - left)
        x2 = left + GOLDEN * (right - left)
        f1, f2 = self(x1.exp()), self(x2.exp())
        for _ in range(GOLDEN_STEPS):
            move_left = f1 < f2  # the minimum lies in [left, x2]
            right = torch.where(move_left, x2, right)
            left = torch.where(move_left, left, x1)
            new_x1 = right - GOLDEN * (right - left)
            new_x2 = left + GOLDEN * (right - left)
            probe = torch.where(move_left, new_x1, new_x2)
            f_probe = self(probe.exp())
            x1, x2, f1, f2 = (
                torch.where(move_left, new_x1, x2),
                torch.where(move_left, x1, new_x2),
                torch.where(move_left, f_probe, f2),
                torch.where(move_left, f1, f_probe),
            )
            better = f_probe < best_value
            best_value = torch.where(better, f_probe, best_value)
            best_log = torch.where(better, probe, best_log)
        return best_log.exp(), best_value


def search_range(eigenvalues: Tensor, base_alpha: float) -> tuple[float, float]:
    r"""``[alpha_lo, alpha_hi]`` of the search: 8 decades around ``sigma^2 / c`` and the
    spectrum, floored at ``1e-10 lambda_max`` (round-off of the eigenvalues); the floor
    gives way down to ``BASE_MARGIN sigma^2 / c``, but never below ``ROUND_OFF_FLOOR
    lambda_max``.

    The second rule keeps ``sigma^2 / c`` (the analytic bound's alpha) and the DMM grid
    ``{0.1, ..., 10} sigma^2 / c`` inside the search when the noise is tiny next to the
    spectrum (``sigma^2 / c < 1e-8 lambda_max``), so that exact ``<=`` grid ``<=``
    analytic holds there too; below ``ROUND_OFF_FLOOR lambda_max`` the eigenvalues'
    round-off (about ``t eps lambda_max``) would dominate ``lambda_i + alpha``.

    Args:
        eigenvalues: The spectrum ``lambda`` of ``K_t`` (``t``, may be empty).
        base_alpha: ``sigma^2 / c``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.alpha_search import search_range
        >>> search_range(torch.tensor([0.5, 2.0]), base_alpha=0.01)  # 1e-10 x 2 and 1e8 x 2
        (2e-10, 200000000.0)
        >>> search_range(torch.tensor([0.5, 20.0]), base_alpha=1e-8)[0]  # 1e-2 x 1e-8
        1e-10
        >>> search_range(torch.tensor([0.5, 20.0]), base_alpha=1e-20)[0]  # 1e-12 x 20
        2e-11
    """
    lam_max = float(eigenvalues.max()) if eigenvalues.numel() else 0.0
    low = max(1e-8 * min(base_alpha, lam_max if lam_max > 0 else base_alpha), 1e-10 * lam_max)
    high = 1e8 * max(base_alpha, lam_max)
    return max(min(low, BASE_MARGIN * base_alpha), ROUND_OFF_FLOOR * lam_max), high


def minimize_over_grid(
    signed_mean: Tensor, std: Tensor, radius_tilde_sq: Tensor, alphas: Tensor
) -> tuple[Tensor, Tensor]:
    r"""``min_{alpha in A}`` of eq. (12) (DMM-UCB, Section 5.4; one ``alpha``: AMM-UCB).

    Args:
        signed_mean: ``sign * mu_alpha(x)`` (``N x m``).
        std: ``rho_alpha(x)`` (``N x m``).
        radius_tilde_sq: ``R~_alpha^2`` (``m``).
        alphas: The grid ``A`` (``m``).

    Returns:
        The minimum (``N``) and the ``alpha`` attaining it (``N``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.alpha_search import minimize_over_grid
        >>> mean, std = torch.zeros(1, 2), torch.ones(1, 2)
        >>> minimize_over_grid(mean, std, torch.tensor([1.0, 1.0]), torch.tensor([1.0, 4.0]))
        (tensor([0.5000]), tensor([4.]))
    """
    best, which = dual_value(signed_mean, std, radius_tilde_sq, alphas).min(dim=-1)
    return best, alphas[which]
