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
by a grid shared by all points (``GRID_PER_DECADE`` per decade, evaluated by matrix
products: ``N x t`` times ``t x G``) followed by ``NEWTON_STEPS`` safeguarded Newton
steps on ``d phi / d ln alpha`` in the bracket of each point's best grid point (the
derivatives are sums of the same kind, ``sum_i c_i / (lambda_i + alpha)^k``, one batched
pass for all three; a step that leaves the bracket, meets negative curvature or does
not halve the step before last is a bisection, as in Numerical Recipes' ``rtsafe``):
the objective is empirically quasiconvex (Section 4.3), and any ``alpha`` gives a valid
bound, so a poor search only loosens it. Against a golden-section search to ``4e-7``
decades (54 evaluations) the values agree to round-off
(``2e-8`` relative where the objective is flat at that level, ``1e-12`` elsewhere) in
about a fifth of the passes over the spectrum, and no host synchronization (on the CPU
the search runs on NumPy arrays: the steps are small and dispatch-bound). The lower
bound is the mirror image (``v z`` replaced by ``-v z``, the result negated). A fixed
grid of alphas (DMM-UCB, Section 5.4) takes the minimum over the grid instead
(``minimize_over_grid``). ``kronecker.KroneckerSpectralDual`` is the same search for
full-vector ICM data without the ``(N F) x (n t)`` projections.

Why this module is long: the search is written once for tensors and NumPy arrays
(``_search``), and its steps on arrays (``_ArrayDual``) sit beside those on tensors
(``SpectralDual``) whose formulas they share.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum, radius_tilde_squared

GRID_PER_DECADE = 8  # the grid that brackets the minimum (evaluated by matrix products)
NEWTON_STEPS = 3  # safeguarded Newton steps from the best grid point (quadratic convergence)
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
    if isinstance(variance, np.ndarray):  # the search on NumPy arrays (SpectralDual.minimize)
        return np.sqrt(np.maximum(variance, np.finfo(variance.dtype).tiny))
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
    if isinstance(radius_tilde_sq, np.ndarray):  # the search on NumPy arrays
        return mean + np.sqrt(np.maximum(radius_tilde_sq, 0.0) / alpha) * std
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
        self._stacked: Tensor | None = None  # the numerators of log_derivatives

    def _numerators(self) -> Tensor:
        """``[s v z, v^2, z^2]`` (``N x 3 x t``), stacked at the first Newton step."""
        if self._stacked is None:
            sp = self.signed_projection
            self._stacked = torch.stack(
                [sp, self.squared_projection, self._squared_y.expand_as(sp)], dim=-2
            )
        return self._stacked

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

    def grid_values(self, alphas: Tensor) -> Tensor:
        """The objective at every point for each ``alpha`` of a shared grid (``G``):
        ``N x G``, by matrix products (``O(N t G)``, one BLAS call per term)."""
        inverse = 1.0 / (self.spectrum.eigenvalues + alphas.unsqueeze(-1))  # G x t
        if self.variance_eigenvalues is not None:
            inverse_var = 1.0 / (self.variance_eigenvalues + alphas.unsqueeze(-1))
        else:
            inverse_var = inverse
        mean = self.signed_projection @ inverse.mT  # N x G
        explained = self.squared_projection @ inverse_var.mT
        std = posterior_std(self.prior_variance.unsqueeze(-1), explained)
        data_fit = alphas * (inverse @ self._squared_y)  # G
        rt2 = radius_tilde_squared(self.radius_sq, self.rkhs_norm_bound, alphas, data_fit)
        return dual_value(mean, std, rt2, alphas)

    def log_derivatives(self, alpha: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        r"""The objective ``phi`` and its first two derivatives in ``s = ln alpha`` at one
        ``alpha`` per point (``N``), in one pass over the spectrum.

        With ``A_k = sum_i (s v z)_i / (lambda_i + alpha)^k``, ``E_k`` the same with
        ``v_i^2``, ``D_k`` with ``z_i^2``: ``mu = A_1``, ``rho^2 = k - E_1`` and
        ``R~^2 / alpha = R_t^2 / alpha + B^2 - D_1``; every derivative in ``alpha`` is a
        sum of the same kind (``d/d alpha (lambda + alpha)^{-k} = -k (lambda +
        alpha)^{-k-1}``), and ``d phi / ds = alpha phi'``, ``d^2 phi / ds^2 = alpha phi' +
        alpha^2 phi''``. Where ``R~^2 <= 0`` or ``rho`` vanishes the square-root term is
        taken constant (its derivatives set to 0).

        Returns:
            ``phi``, ``d phi / ds``, ``d^2 phi / ds^2`` (each ``N``).
        """
        r1 = (self.spectrum.eigenvalues + alpha.unsqueeze(-1)).reciprocal()  # N x t
        if self.variance_eigenvalues is None:  # the three sums over one spectrum at once
            sums = _power_sums(self._numerators(), r1)  # N x 3 (sums) x 3 (derivatives)
        else:  # pending points: the variance reads another spectrum
            q1 = (self.variance_eigenvalues + alpha.unsqueeze(-1)).reciprocal()
            mean_fit = torch.stack([self.signed_projection, self._squared_y.expand_as(r1)], -2)
            explained = _power_sums(self.squared_projection.unsqueeze(-2), q1)
            sums = torch.cat([_power_sums(mean_fit, r1), explained], -2)[:, [0, 2, 1]]
        mean, explained, fit = (part.unbind(-1) for part in sums.unbind(-2))
        return dual_log_derivatives(
            alpha, mean, explained, fit, self.radius_sq, self.rkhs_norm_bound,
            self.prior_variance,
        )  # fmt: skip

    def prepare_refinement(self, log_alphas: Tensor) -> None:
        """Called by ``minimize`` with each point's best grid ``ln alpha`` (``N``) before
        the Newton steps (a hook for ``KroneckerSpectralDual``)."""

    def minimize(self, base_alpha: float) -> tuple[Tensor, Tensor]:
        """Per point, the ``alpha`` of the smallest objective found and that value.

        A log-spaced grid over ``search_range`` (``GRID_PER_DECADE`` points per decade,
        evaluated for all points at once by ``grid_values``), then ``NEWTON_STEPS``
        safeguarded Newton steps on ``d phi / ds`` (``s = ln alpha``) inside the bracket
        of the best grid point: a Newton step that leaves the bracket or meets negative
        curvature is replaced by bisection, and the bracket shrinks to the side where
        the minimum lies (the sign of ``d phi / ds``; quasiconvexity). A fixed number of
        steps and no host synchronization. The best point evaluated is returned (two
        tensors of shape ``N``); any ``alpha`` gives a valid bound. On the CPU, in float64
        and without gradients, the same steps run on NumPy arrays (``_ArrayDual``: each of
        them costs a fraction of a torch call on these small arrays), with the same values
        to round-off.
        """
        arrays = _ArrayDual.of(self)
        if arrays is not None:  # on the CPU: the same steps on NumPy arrays
            alpha, value = _search(arrays, _log_grid(self.spectrum.eigenvalues, base_alpha, np))
            like = self.radius_sq
            return torch.from_numpy(alpha).to(like), torch.from_numpy(value).to(like)
        return _search(self, _log_grid(self.spectrum.eigenvalues, base_alpha, torch))


def _log_grid(eigenvalues: Tensor, base_alpha: float, xp):
    """``minimize``'s grid: ``ln alpha`` at ``GRID_PER_DECADE`` points per decade of
    ``search_range`` (an array for ``xp = numpy``, else a tensor like the eigenvalues)."""
    low, high = search_range(eigenvalues, base_alpha)
    num_grid = max(int(math.ceil(GRID_PER_DECADE * math.log10(high / low))) + 1, 3)
    if xp is np:
        return np.linspace(math.log(low), math.log(high), num_grid)
    return torch.linspace(
        math.log(low), math.log(high), num_grid, dtype=eigenvalues.dtype, device=eigenvalues.device
    )


def _search(dual, grid):
    """``SpectralDual.minimize``'s search on ``grid`` (``G`` log-alphas) for ``dual`` (a
    ``SpectralDual`` on tensors, or an ``_ArrayDual`` on NumPy arrays: the functions are
    those of ``torch`` or ``numpy``, whichever holds the grid)."""
    xp = np if isinstance(grid, np.ndarray) else torch
    values = dual.grid_values(xp.exp(grid))  # N x G
    j = xp.argmin(values, -1)
    last_index = grid.shape[0] - 1
    rows = _rows(values)
    best_value = values[rows, j]
    left = grid[xp.clip(j - 1, 0, last_index)]
    right = grid[xp.clip(j + 1, 0, last_index)]
    best_log = grid[j]
    dual.prepare_refinement(best_log)
    step = (grid[1] - grid[0]) * _parabola_vertex(values, j)  # the parabola through j -+ 1
    s = xp.minimum(xp.maximum(best_log + step, left), right)
    previous = right - left  # the length of the step before last (rtsafe's rule)
    last = previous
    for _ in range(NEWTON_STEPS):
        value, slope, curvature = dual.log_derivatives(xp.exp(s))
        better = value < best_value
        best_value = xp.where(better, value, best_value)
        best_log = xp.where(better, s, best_log)
        rising = slope > 0
        right = xp.where(rising, s, right)
        left = xp.where(rising, left, s)
        convex = curvature > 0
        newton = -slope / xp.where(convex, curvature, 1.0)
        step = s + newton
        length = xp.abs(newton)
        take = convex & (step > left) & (step < right)
        take = take & (length < 0.5 * previous)  # else it may oscillate: bisect
        middle = 0.5 * (left + right)
        previous, last = last, xp.where(take, length, xp.abs(middle - s))
        s = xp.where(take, step, middle)
    value = dual(xp.exp(s))
    better = value < best_value
    return xp.exp(xp.where(better, s, best_log)), xp.where(better, value, best_value)


def _rows(values):
    """``0 .. N - 1`` for the rows of ``values`` (a tensor on its device, or an array)."""
    if isinstance(values, np.ndarray):
        return np.arange(values.shape[0])
    return torch.arange(values.shape[0], device=values.device)


class _ArrayDual:
    """A ``SpectralDual`` on NumPy arrays, for its search on the CPU: on arrays of a few
    hundred numbers each of the search's steps costs a fraction of a torch call, and
    they are the same steps (``grid_values``, ``log_derivatives`` and the objective, as
    ``SpectralDual``'s; the variance always through its own spectrum, that of ``K_t``
    without pending points), with the same numbers to round-off."""

    def __init__(
        self, eigenvalues, variance_eigenvalues, signed_projection, squared_projection,
        squared_y, prior_variance, radius_sq: float, rkhs_norm_bound: float,
    ) -> None:  # fmt: skip
        self.eigenvalues, self.variance_eigenvalues = eigenvalues, variance_eigenvalues
        self.signed_projection = sp = signed_projection  # N x t
        self.squared_projection = sq = squared_projection  # N x t
        self.squared_y, self.prior_variance = squared_y, prior_variance  # t, N
        self.radius_sq, self.rkhs_norm_bound = radius_sq, rkhs_norm_bound
        self.mean_fit = np.stack([sp, np.broadcast_to(squared_y, sp.shape)], axis=-2)  # N x 2 x t
        self.explained = sq[:, None, :]  # N x 1 x t

    @classmethod
    def of(cls, dual: SpectralDual) -> _ArrayDual | None:
        """The arrays of ``dual`` when its search can run on them: a plain
        ``SpectralDual`` in float64 on the CPU, without gradients."""
        if type(dual) is not SpectralDual:
            return None
        tensors = (dual.signed_projection, dual.squared_projection, dual.prior_variance)
        tensors = (*tensors, dual.spectrum.eigenvalues, dual.radius_sq)
        if dual.variance_eigenvalues is not None:
            tensors = (*tensors, dual.variance_eigenvalues)
        if any(t.device.type != "cpu" or t.dtype != torch.float64 for t in tensors):
            return None
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return None
        variance = dual.variance_eigenvalues
        return cls(
            dual.spectrum.eigenvalues.detach().numpy(),
            None if variance is None else variance.detach().numpy(),
            dual.signed_projection.detach().numpy(), dual.squared_projection.detach().numpy(),
            dual._squared_y.detach().numpy(), dual.prior_variance.detach().numpy(),
            float(dual.radius_sq), float(dual.rkhs_norm_bound),
        )  # fmt: skip

    def prepare_refinement(self, log_alphas: np.ndarray) -> None:
        """Nothing to prepare (``SpectralDual.prepare_refinement``)."""

    def _inverses(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``1 / (lambda + alpha)`` of the spectrum and of the variance's (``... x t``)."""
        inverse = 1.0 / (self.eigenvalues + alpha[:, None])
        if self.variance_eigenvalues is None:
            return inverse, inverse
        return inverse, 1.0 / (self.variance_eigenvalues + alpha[:, None])

    def grid_values(self, alphas: np.ndarray) -> np.ndarray:
        """``SpectralDual.grid_values``: ``N x G``."""
        inverse, inverse_var = self._inverses(alphas)  # G x t
        mean = self.signed_projection @ inverse.T
        explained = self.squared_projection @ inverse_var.T
        std = posterior_std(self.prior_variance[:, None], explained)
        data_fit = alphas * (inverse @ self.squared_y)
        rt2 = radius_tilde_squared(self.radius_sq, self.rkhs_norm_bound, alphas, data_fit)
        return dual_value(mean, std, rt2, alphas)

    def log_derivatives(self, alpha: np.ndarray) -> tuple[np.ndarray, ...]:
        """``SpectralDual.log_derivatives`` (``N`` each)."""
        r1, q1 = self._inverses(alpha)  # N x t
        scales = _DERIVATIVE_SCALES.numpy()
        mean, fit = np.moveaxis((self.mean_fit @ _powers(r1)) * scales, 1, 0)  # N x 3 each
        explained = (self.explained @ _powers(q1))[:, 0] * scales
        return dual_log_derivatives(
            alpha, tuple(mean.T), tuple(explained.T), tuple(fit.T), self.radius_sq,
            self.rkhs_norm_bound, self.prior_variance,
        )  # fmt: skip

    def __call__(self, alpha: np.ndarray) -> np.ndarray:
        """The objective at one ``alpha`` per point (``SpectralDual.__call__``)."""
        inverse, inverse_var = self._inverses(alpha)  # N x t
        mean = (self.signed_projection * inverse).sum(-1)
        std = posterior_std(self.prior_variance, (self.squared_projection * inverse_var).sum(-1))
        data_fit = alpha * (self.squared_y * inverse).sum(-1)
        rt2 = radius_tilde_squared(self.radius_sq, self.rkhs_norm_bound, alpha, data_fit)
        return dual_value(mean, std, rt2, alpha)


def _powers(ratios: np.ndarray) -> np.ndarray:
    """``[r, r^2, r^3]`` of ``ratios`` (``N x t``): ``N x t x 3``."""
    squared = ratios * ratios
    return np.stack([ratios, squared, squared * ratios], axis=-1)


def dual_log_derivatives(
    alpha: Tensor,
    mean: tuple[Tensor, Tensor, Tensor],
    explained: tuple[Tensor, Tensor, Tensor],
    fit: tuple[Tensor, Tensor, Tensor],
    radius_sq: Tensor,
    rkhs_norm_bound: float,
    prior_variance: Tensor,
) -> tuple[Tensor, Tensor, Tensor]:
    r"""The objective of eq. (12) and its first two derivatives in ``s = ln alpha``, from
    its three sums and their ``alpha``-derivatives.

    With ``m = s mu_alpha``, ``e = k_t^T (K + alpha I)^{-1} k_t`` and ``d = y^T (K + alpha
    I)^{-1} y``: ``phi = m + sqrt(T V)``, ``T = R~_alpha^2 / alpha = R_t^2 / alpha + B^2
    - d``, ``V = rho^2 = k(x, x) - e``; then ``d phi / ds = alpha phi'`` and ``d^2 phi /
    ds^2 = alpha phi' + alpha^2 phi''``. Where ``T <= 0`` or ``V <= 0`` the square-root
    term is taken constant (its derivatives set to 0).

    Args:
        alpha: ``alpha > 0`` (``N``).
        mean, explained, fit: ``(m, m', m'')``, ``(e, e', e'')``, ``(d, d', d'')``
            (derivatives in ``alpha``; each ``N``).
        radius_sq: ``R_t^2``.
        rkhs_norm_bound: ``B``.
        prior_variance: ``k(x, x)`` (``N``).

    Returns:
        ``phi``, ``d phi / ds``, ``d^2 phi / ds^2`` (each ``N``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
        ...     dual_log_derivatives)
        >>> zero = (torch.zeros(1),) * 3  # no data: phi = sqrt((R^2 / alpha + B^2) k)
        >>> value, slope, _ = dual_log_derivatives(torch.ones(1), zero, zero, zero,
        ...     torch.tensor(3.0), 1.0, torch.ones(1))
        >>> value.item(), slope.item()  # d/ds sqrt(3 e^-s + 1) = -3 / (2 * 2)
        (2.0, -0.75)
    """
    m, m1, m2 = mean
    e, e1, e2 = explained
    d, d1, d2 = fit
    inverse = 1.0 / alpha
    scaled = radius_sq * inverse  # R_t^2 / alpha
    T = scaled + rkhs_norm_bound**2 - d
    T1 = -scaled * inverse - d1
    T2 = 2.0 * scaled * inverse * inverse - d2
    V = prior_variance - e  # V' = -e', V'' = -e''
    live = (T > 0) & (V > 0)
    xp = np if isinstance(V, np.ndarray) else torch  # NumPy: the search on the CPU
    root = xp.sqrt(xp.where(live, T * V, 0.0))
    half = 0.5 / xp.where(live, root, 1.0)  # 1 / (2 sqrt(P)) where live
    P1 = T1 * V - T * e1
    P2 = T2 * V - 2.0 * T1 * e1 - T * e2
    g1 = xp.where(live, P1 * half, 0.0)  # d sqrt(P) / d alpha
    g2 = xp.where(live, (P2 - 2.0 * g1 * g1) * half, 0.0)  # P2 / 2 sqrt(P) - P1^2 / 4 P^1.5
    first = alpha * (m1 + g1)  # d phi / ds = alpha d phi / d alpha
    return m + root, first, first + alpha * alpha * (m2 + g2)


def _parabola_vertex(values: Tensor, j: Tensor) -> Tensor:
    """Per row of ``values`` (``N x G``, a uniform grid), the offset of the vertex of the
    parabola through the grid points ``j - 1, j, j + 1`` from point ``j``, in grid steps
    (within ``[-1, 1]``; ``0`` at the ends of the grid or without upward curvature).
    Tensors or NumPy arrays."""
    xp = np if isinstance(values, np.ndarray) else torch
    G = values.shape[-1]
    inner = (j > 0) & (j < G - 1)
    rows = _rows(values)
    below = values[rows, xp.clip(j - 1, 0, G - 1)]
    above = values[rows, xp.clip(j + 1, 0, G - 1)]
    centre = values[rows, j]
    curvature = below - 2.0 * centre + above
    ok = inner & (curvature > 0) & xp.isfinite(curvature) & xp.isfinite(below - above)
    offset = 0.5 * (below - above) / xp.where(ok, curvature, 1.0)
    return xp.where(ok, xp.clip(offset, -1.0, 1.0), 0.0)


def _power_sums(numerators: Tensor, ratios: Tensor) -> Tensor:
    """``sum_i numerators[n, j, i] ratios[n, i]^k`` for ``k = 1, 2, 3``, scaled to the
    sums' value and first two ``alpha``-derivatives (``d/d alpha (lambda + alpha)^{-1} =
    -(lambda + alpha)^{-2}``, the second ``2 (lambda + alpha)^{-3}``): ``N x J x 3``,
    one batched product (``numerators`` ``N x J x t``, ``ratios`` ``N x t``)."""
    squared = ratios * ratios
    powers = torch.stack([ratios, squared, squared * ratios], -1)  # N x t x 3
    return (numerators @ powers) * _DERIVATIVE_SCALES.to(ratios)


_DERIVATIVE_SCALES = torch.tensor([1.0, -1.0, 2.0], dtype=torch.float64)


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
