r"""The Kronecker route of the multi-task bounds: ``K_t (x) B`` through ``K_t`` and ``B``.

For one ICM term ``k(x, x') B`` and full-vector data the Gram matrix of the ``M = t n``
scalar observations (observation ``(s, i)`` at row ``s n + i``) is ``K_t (x) B``, whose
eigen-decomposition is that of ``K_t`` and of ``B``: eigenvalues ``lambda_a mu_j``,
eigenvectors ``u_a (x) v_j``, ``U^T y = vec(U_K^T Y U_B)`` and, for the functional ``w``
at ``x``, ``U^T k_L = (U_K^T k_t(x)) (x) (U_B^T B w)``: ``O(t^3 + n^3)`` per data set and
``O(t^2 + n^2 + t n)`` per point and functional, never ``(n t)^3``
(``KroneckerSpectrum``). The exact bounds' 1-D duals are solved by matrix products at
shared ``alpha`` and power series around them (``KroneckerSpectralDual``: ``O(t n + n
F)`` per point and ``alpha`` for ``F`` functionals, never the ``(N F) x (n t)``
projections); the grid bounds likewise (``KroneckerSpectrum.grid``). Repeated inputs
fold into the distinct ``x_s`` (``repeated_inputs``).

Source: paper 002, Section 4 (eq. (12)), applied to the scalar kernel of paper 000,
Section 2 (``multi_task_bound``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    SpectralDual,
    dual_log_derivatives,
    dual_value,
    posterior_std,
)
from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum, radius_tilde_squared
from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import input_spectrum
from botorch_mtucb.confidence.martingale_mixture.spectra import (
    ObservationSpectrum,
    functional_prior_variance,
)
from botorch_mtucb.utils.checks import check_kernel_values

if TYPE_CHECKING:
    from botorch_mtucb.confidence.martingale_mixture.bound_base import MartingaleMixtureBoundBase

SERIES_TERMS = 32  # KroneckerSpectralDual: (10^(1/8) - 1)^32 = 5e-16
GRID_CHUNK = 2**20  # grid bounds on the Kronecker route: alphas x t x n per batch


class KroneckerSpectralDual(SpectralDual):
    r"""``SpectralDual`` for functionals of full-vector ICM data on the Kronecker route,
    at ``O(t n + n F)`` per point and ``alpha``: never the ``(N F) x (n t)`` projections.

    ``K_t (x) B`` has the eigenvalues ``lambda_a mu_j``, ``z = vec(Z)`` with ``Z = U_K^T Y
    U_B`` and, for the functional ``w`` at ``x``, the projection ``p (x) q`` (``p = U_K^T
    k_t(x)``, ``q = U_B^T B w``). At one ``alpha`` shared by all points, with ``G_{aj} = 1
    / (lambda_a mu_j + alpha)``, the sums of eq. (12) are matrix products: the mean ``p (G
    o Z) q^T``, the explained variance ``p^2 G (q^2)^T``, the data fit ``sum Z^2 o G``
    (``grid_values``). The Newton steps of ``minimize`` need one ``alpha`` per point and
    functional; they read the same sums as power series around the pair's best grid
    point ``alpha_c``: with ``v = 1 - alpha / alpha_c`` and ``g = alpha_c / (lambda +
    alpha_c)`` in ``(0, 1]``, ``1 / (lambda + alpha) = alpha_c^{-1} sum_{k >= 1} g^k
    v^{k - 1}``, whose coefficients are the matrix products above with ``g^k`` in place
    of ``G`` (``k = 1 ... SERIES_TERMS``; scaled by ``alpha_c^k`` so that no power
    overflows when ``lambda + alpha_c`` is tiny, e.g. eigenvalues at round-off and
    small noise). The bracket of a pair lies within a grid step of ``alpha_c``, ``|v| <=
    r`` with ``r = 10^{1 / GRID_PER_DECADE} - 1``, so the series converges geometrically
    and ``SERIES_TERMS`` terms reach ``r^K < 1e-15``: the values are those of eq. (12)
    to round-off, for every pair at the cost of a few shared ``alpha`` (the distinct
    ``alpha_c``, for the points whose pairs use them).

    Args:
        spectrum: The spectrum of ``K_t (x) B`` (``GramSpectrum``; ``rotated_y`` is
            ``vec(Z)``, row-major ``t x n``; its eigenvectors are not used).
        radius_sq, rkhs_norm_bound: As ``SpectralDual``.
        sign: ``1`` for upper bounds, ``-1`` for lower bounds.
        data_factor: ``p`` (``N x t``; gradients flow through it).
        task_factor: ``q`` (``F x n``).
        data_eigenvalues, task_eigenvalues: ``lambda`` (``t``) and ``mu`` (``n``).
        prior_variance: ``w^T Gamma(x, x) w`` (``N x F``).

    The points of the dual are the ``N F`` pairs, row-major (``(N F)`` vectors).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.kronecker import (
        ...     KroneckerSpectralDual)
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum
        >>> f64 = dict(dtype=torch.float64)
        >>> lam, mu = torch.tensor([1.0, 0.5], **f64), torch.ones(1, **f64)
        >>> spectrum = GramSpectrum(lam, None, torch.tensor([0.3, -0.1], **f64))
        >>> dual = KroneckerSpectralDual(spectrum, torch.tensor(1.0, **f64), 2.0, 1.0,
        ...     torch.tensor([[0.4, 0.2]], **f64), torch.ones(1, 1, **f64), lam, mu,
        ...     torch.ones(1, 1, **f64))
        >>> alpha, value = dual.minimize(base_alpha=0.1)
        >>> bool(torch.isclose(dual.dense()(alpha), value, rtol=1e-12))
        True
    """

    def __init__(
        self,
        spectrum: GramSpectrum,
        radius_sq: Tensor,
        rkhs_norm_bound: float,
        sign: float,
        data_factor: Tensor,
        task_factor: Tensor,
        data_eigenvalues: Tensor,
        task_eigenvalues: Tensor,
        prior_variance: Tensor,
    ) -> None:
        self.spectrum = spectrum
        self.variance_eigenvalues = None
        self.radius_sq = radius_sq
        self.rkhs_norm_bound = rkhs_norm_bound
        self.sign = sign
        self.data_factor, self.task_factor = data_factor, task_factor
        self.prior_variance = prior_variance.reshape(-1)
        self.products = data_eigenvalues[:, None] * task_eigenvalues  # t x n
        self.rotated_Y = spectrum.rotated_y.reshape(self.products.shape)  # Z
        self._centers: Tensor | None = None  # each pair's alpha_c (N F)
        self._series: tuple[Tensor, Tensor, Tensor] | None = None

    def dense(self) -> SpectralDual:
        """The same dual on the materialized ``(N F) x (n t)`` projections (``O(N F n
        t)`` memory; for tests and small cases)."""
        N, F = self.data_factor.shape[0], self.task_factor.shape[0]
        p, q = self.data_factor, self.task_factor
        projected = (p[:, None, :, None] * q[None, :, None, :]).reshape(N * F, -1)
        return SpectralDual(
            self.spectrum, self.radius_sq, self.rkhs_norm_bound,
            self.sign * projected * self.spectrum.rotated_y, projected**2, self.prior_variance,
        )  # fmt: skip

    def grid_values(self, alphas: Tensor) -> Tensor:
        """The objective for each ``alpha`` of a shared grid (``G``), ``(N F) x G``, by
        matrix products (``O(G (N t n + N n F))``)."""
        p, q = self.data_factor, self.task_factor
        inverse = 1.0 / (self.products + alphas[:, None, None])  # G x t x n
        mean = (p @ (inverse * self.rotated_Y)) @ q.mT  # G x N x F
        explained = ((p * p) @ inverse) @ (q * q).mT
        G = alphas.shape[0]
        mean = self.sign * mean.reshape(G, -1).mT  # (N F) x G
        std = posterior_std(self.prior_variance.unsqueeze(-1), explained.reshape(G, -1).mT)
        data_fit = alphas * (inverse * self.rotated_Y**2).sum((-2, -1))  # G
        rt2 = radius_tilde_squared(self.radius_sq, self.rkhs_norm_bound, alphas, data_fit)
        return dual_value(mean, std, rt2, alphas)

    def prepare_refinement(self, log_alphas: Tensor) -> None:
        """Expand the sums around each pair's best grid ``alpha`` (``(N F)``)."""
        self._centers = log_alphas.exp()
        self._series = None

    def _coefficients(self) -> tuple[Tensor, Tensor, Tensor]:
        """The scaled series coefficients (``alpha_c^k`` times those of ``(lambda +
        alpha_c)^{-k}``) of the mean, explained variance and data fit at each pair's
        centre: three ``(N F) x K`` tensors (cached when gradients are off)."""
        if self._series is not None and not torch.is_grad_enabled():
            return self._series
        p, q = self.data_factor, self.task_factor
        N, F, K = p.shape[0], q.shape[0], SERIES_TERMS
        centers = self._centers.reshape(N, F)
        mean = p.new_zeros(N, F, K)
        explained = p.new_zeros(N, F, K)
        fit = p.new_zeros(N, F, K)
        for center in torch.unique(centers):  # a few distinct grid points
            uses = centers == center  # N x F
            rows = uses.any(-1).nonzero().squeeze(-1)
            ratio = center / (self.products + center)  # t x n, in (0, 1]
            powers = torch.cumprod(ratio.expand(K, *ratio.shape), dim=0)  # K x t x n: g^k
            p_rows = p[rows]
            m = ((p_rows @ (powers * self.rotated_Y)) @ q.mT).permute(1, 2, 0)  # R x F x K
            e = (((p_rows * p_rows) @ powers) @ (q * q).mT).permute(1, 2, 0)
            d = (powers * self.rotated_Y**2).sum((-2, -1))  # K
            here = uses[rows].unsqueeze(-1)
            mean = mean.index_put((rows,), torch.where(here, m, mean[rows]))
            explained = explained.index_put((rows,), torch.where(here, e, explained[rows]))
            fit = fit.index_put((rows,), torch.where(here, d.expand_as(m), fit[rows]))
        series = (self.sign * mean.reshape(N * F, K), explained.reshape(N * F, K))
        series = (*series, fit.reshape(N * F, K))
        if not torch.is_grad_enabled():
            self._series = series
        return series

    def _sums(self, alpha: Tensor) -> tuple[tuple[Tensor, Tensor, Tensor], ...]:
        """Each sum and its first two ``alpha``-derivatives at ``alpha`` (``(N F)``)."""
        K = SERIES_TERMS
        center = self._centers
        v = 1.0 - alpha / center  # the series variable: (lambda + alpha)^-1 in powers of v
        k = torch.arange(K, dtype=v.dtype, device=v.device)
        powers = v.unsqueeze(-1) ** k  # (N F) x K: v^(k-1) for the k-th coefficient
        lower = torch.cat([torch.zeros_like(powers[:, :1]), powers[:, :-1]], -1)  # v^(k-2)
        lowest = torch.cat([torch.zeros_like(powers[:, :2]), powers[:, :-2]], -1)  # v^(k-3)
        result = []
        for coefficients in self._coefficients():
            value = (coefficients * powers).sum(-1) / center
            first = -(coefficients * k * lower).sum(-1) / center**2  # d/d alpha = -d/dv / c
            second = (coefficients * k * (k - 1) * lowest).sum(-1) / center**3
            result.append((value, first, second))
        return tuple(result)

    def log_derivatives(self, alpha: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """As ``SpectralDual.log_derivatives``, from the series (``(N F)``)."""
        mean, explained, fit = self._sums(alpha)
        return dual_log_derivatives(
            alpha, mean, explained, fit, self.radius_sq, self.rkhs_norm_bound,
            self.prior_variance,
        )  # fmt: skip

    def __call__(self, alpha: Tensor) -> Tensor:
        """The objective at one ``alpha`` per pair (``(N F)``) within a grid step of the
        pairs' centres (after ``minimize``), from the series; gradients flow to ``p``."""
        if self._centers is None:
            raise RuntimeError("call minimize first: the series are centred at its grid")
        (mean, _, _), (explained, _, _), (fit, _, _) = self._sums(alpha)
        std = posterior_std(self.prior_variance, explained)
        rt2 = radius_tilde_squared(self.radius_sq, self.rkhs_norm_bound, alpha, alpha * fit)
        return dual_value(mean, std, rt2, alpha)


class KroneckerSpectrum(ObservationSpectrum):
    r"""``K_t (x) B`` of full-vector data and one ICM term ``k(x, x') B`` (module
    docstring): the spectrum from those of ``K_t`` (folded over repeated inputs) and ``B``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.kronecker import KroneckerSpectrum
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> bound = MultiTaskMartingaleMixtureBound(X, X.sin().expand(4, 2), RBFKernel(), B,
        ...     5.0, 0.1, 0.01)
        >>> isinstance(bound.gram_spectrum, KroneckerSpectrum), bound.spectrum().eigenvalues.shape
        (True, torch.Size([8]))
    """

    def __init__(self, bound: MartingaleMixtureBoundBase) -> None:
        super().__init__()
        mu, U_B = torch.linalg.eigh(bound.kernel.task_covariances[0])
        self.register_buffer("task_eigenvalues", mu.clamp_min(0.0), persistent=False)
        self.register_buffer("task_eigenvectors", U_B, persistent=False)
        self.data_eigenvalues: Tensor | None = None  # lambda of K_t (folded), with the spectrum
        self._distinct.add(bound.train_X[:: bound.num_tasks])  # the distinct x_s

    def add(self, bound: MartingaleMixtureBoundBase, X: Tensor, tasks: Tensor, Y: Tensor) -> None:
        self._distinct.add(X[:: bound.num_tasks])
        self.reset()

    def _compute(self, bound: MartingaleMixtureBoundBase) -> GramSpectrum:
        if bound.num_observations == 0:
            empty = bound.train_Y.new_zeros(0)
            return GramSpectrum(empty, empty.reshape(0, 0), empty)
        Y = bound.train_Y.reshape(-1, bound.num_tasks)
        kernel = bound.kernel.kernels[0]
        inputs, inverse, counts = self._distinct.groups()
        device = bound.train_X.device
        data = input_spectrum(  # repeated inputs (a finite domain): from the distinct ones
            lambda A, B: kernel(A, B).to_dense(),
            bound.train_X[:: bound.num_tasks],
            Y,
            self.task_eigenvectors,
            (inputs.to(device), inverse.to(device), counts.to(device)),
        )
        eigenvalues = (data.eigenvalues[:, None] * self.task_eigenvalues).reshape(-1)
        self.spectral_inputs, self.spectral_basis = data.inputs, data.basis
        self.data_eigenvalues = data.eigenvalues
        return GramSpectrum(eigenvalues, None, data.rotated.reshape(-1))

    def factors(
        self, bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor, inputs: Tensor, basis: Tensor
    ) -> tuple[Tensor, Tensor]:
        """``p = basis^T k(inputs, x)`` (``N x r``; ``U_K^T k_t(x)`` for the data's
        ``inputs`` and ``basis``) and ``q = U_B^T B w`` (``F x n``): the projection of the
        functional ``w`` at ``x`` is ``p (x) q``."""
        k = bound.kernel.kernels[0](X, inputs).to_dense()
        check_kernel_values(k.detach(), X.detach(), "X")
        q = W @ bound.kernel.task_covariances[0] @ self.task_eigenvectors
        return k @ basis, q

    def projection(self, bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor) -> Tensor:
        if bound.num_observations == 0:
            return X.new_zeros(X.shape[0], W.shape[0], 0)
        self.spectrum(bound)  # the eigenvectors of K_t
        p, q = self.factors(bound, X, W, self.spectral_inputs, self.spectral_basis)
        size = p.shape[-1] * q.shape[-1]
        return (p[:, None, :, None] * q[None, :, None, :]).reshape(X.shape[0], W.shape[0], size)

    def pending_inputs(
        self, bound: MartingaleMixtureBoundBase, key: Tensor, X_pending: Tensor
    ) -> PendingInputs:
        """The data inputs and ``X_pending`` with their ``K`` (all tasks observed)."""
        inputs = torch.cat([bound.train_X[:: bound.num_tasks], X_pending])
        with torch.no_grad():
            gram = bound.kernel.kernels[0](inputs, inputs).to_dense()
        check_kernel_values(gram, inputs, "X_pending")
        return PendingInputs(key, inputs, gram)

    def pending_variance(
        self, bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor, pending: PendingInputs
    ) -> tuple[Tensor, Tensor]:
        spectrum = pending.spectrum()  # of K on the data and pending inputs
        eigenvalues = (spectrum.eigenvalues[:, None] * self.task_eigenvalues).reshape(-1)
        p, q = self.factors(bound, X, W, pending.inputs, spectrum.eigenvectors)
        squared = (p[:, None, :, None] ** 2 * q[None, :, None, :] ** 2).reshape(
            X.shape[0], W.shape[0], eigenvalues.shape[0]
        )
        return squared, eigenvalues

    def _spectral_values(self, bound, X, W, sign, alphas, radius_tilde_sq, pending):
        """Without pending points, by matrix products (``KroneckerSpectralDual`` and
        ``_kronecker_grid``); with them (or without data), the spectral route."""
        if pending is not None or bound.num_observations == 0:
            return super()._spectral_values(bound, X, W, sign, alphas, radius_tilde_sq, pending)
        prior = functional_prior_variance(bound, X, W)
        if alphas is None:
            return sign * self._kronecker_exact(bound, X, W, sign, prior), None
        rt2 = radius_tilde_sq.clamp_min(0.0)
        return sign * self._kronecker_grid(bound, X, W, sign, alphas, rt2, prior), None

    def _kronecker_exact(self, bound, X, W, sign, prior) -> Tensor:
        r"""The exact bound (eq. (12), one ``alpha`` per point and functional) by
        ``KroneckerSpectralDual``, ``N x F`` signed values."""
        spectrum = self.spectrum(bound)  # and the eigenvectors of K_t
        p, q = self.factors(bound, X, W, self.spectral_inputs, self.spectral_basis)
        dual = KroneckerSpectralDual(
            spectrum, bound.radius_squared, bound.rkhs_norm_bound, sign, p, q,
            self.data_eigenvalues, self.task_eigenvalues, prior,
        )  # fmt: skip
        with torch.no_grad():
            alpha, _ = dual.minimize(bound.base_alpha)
        return dual(alpha).reshape(X.shape[0], W.shape[0])

    def _kronecker_grid(self, bound, X, W, sign, grid, rt2, prior) -> Tensor:
        r"""``min_{alpha in A}`` of eq. (12) for every point and functional by matrix
        products: with ``G_{aj} = 1 / (lambda_a mu_j + alpha)`` the mean is ``p (G o Z)
        q^T`` and the explained variance ``p^2 G (q^2)^T`` (``p = U_K^T k_t(x)``, ``q =
        U_B^T B w``, ``Z = U_K^T Y U_B``): ``O(t n + n F)`` per point and ``alpha`` instead
        of ``O(t n F)`` (linear in ``n`` for the ``n`` per-task bounds)."""
        Z = self.spectrum(bound).rotated_y.reshape(-1, bound.num_tasks)  # t x n
        p, q = self.factors(bound, X, W, self.spectral_inputs, self.spectral_basis)
        products = self.data_eigenvalues[:, None] * self.task_eigenvalues  # t x n
        best = None
        step = max(1, GRID_CHUNK // products.numel())  # alphas at once: G_chunk x t x n
        for start in range(0, grid.shape[0], step):
            alpha = grid[start : start + step, None, None]
            G = 1.0 / (products + alpha)
            mean = (p @ (G * Z)) @ q.mT  # G_chunk x N x F
            explained = (p**2 @ G) @ (q**2).mT
            std = posterior_std(prior, explained)
            value = sign * mean + (rt2[start : start + step, None, None] / alpha).sqrt() * std
            value = value.min(dim=0).values
            best = value if best is None else torch.minimum(best, value)
        return best
