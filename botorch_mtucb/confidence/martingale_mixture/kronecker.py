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
projections; for small ``N F n t`` the dual on the materialized projections, fewer and
larger operations); the grid bounds likewise (``KroneckerSpectrum.grid``). Repeated
inputs fold into the distinct ``x_s`` (``repeated_inputs``). On a finite candidate set
(``track_candidates``: a fixed kernel on a finite domain) the kernel values at the
candidates are read from ``k(D, D)``, computed once.

Source: paper 002, Section 4 (eq. (12)), applied to the scalar kernel of paper 000,
Section 2 (``multi_task_bound``).

Why this module is long: the route's spectrum, its dual (the series, and for small
problems the projections materialized, searched on NumPy arrays on the CPU) and the
candidate set's kernel matrix read one another's factors, so they stay together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    SpectralDual,
    _ArrayDual,
    _log_grid,
    _search,
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
from botorch_mtucb.utils.domains import RowIndex

if TYPE_CHECKING:
    from botorch_mtucb.confidence.martingale_mixture.bound_base import MartingaleMixtureBoundBase

SERIES_TERMS = 32  # KroneckerSpectralDual: (10^(1/8) - 1)^32 = 5e-16
GRID_CHUNK = 2**20  # grid bounds on the Kronecker route: alphas x t x n per batch
DENSE_ENTRIES = 2**16  # the exact bound's dual on materialized projections up to this size
SERIES_CHUNK = 2**21  # KroneckerSpectralDual's coefficients: points x F x K x t x n per batch


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
        projected = p[:, None, :, None] * q[None, :, None, :]
        projected = projected.reshape(N * F, p.shape[-1] * q.shape[-1])
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

    def _coefficients(self) -> Tensor:
        """The scaled series coefficients (``alpha_c^k`` times those of ``(lambda +
        alpha_c)^{-k}``) of the mean, explained variance and data fit at each pair's
        centre: ``(N F) x K x 3`` (cached when gradients are off).

        All pairs at once (``SERIES_CHUNK`` entries per batch): the powers ``g^k`` of each
        pair's ratios (``K x t n``) times the pair's numerators ``[p_a Z_aj q_j, p_a^2
        q_j^2, Z_aj^2]`` (``t n x 3``), one batched matrix product."""
        if self._series is not None and not torch.is_grad_enabled():
            return self._series
        p, q = self.data_factor, self.task_factor
        (N, F), K, (t, n) = (p.shape[0], q.shape[0]), SERIES_TERMS, self.products.shape
        centers = self._centers.reshape(N, F, 1, 1)
        Z = self.rotated_Y
        step = max(1, SERIES_CHUNK // (F * K * t * n))  # points per batch
        parts = []
        for start in range(0, N, step):
            rows, center = p[start : start + step], centers[start : start + step]
            ratio = center / (self.products + center)  # R x F x t x n, in (0, 1]
            powers = torch.cumprod(ratio.unsqueeze(2).expand(-1, -1, K, -1, -1), dim=2)
            mean = (rows[:, None, :, None] * Z) * q[None, :, None, :]  # R x F x t x n
            explained = (rows * rows)[:, None, :, None] * (q * q)[None, :, None, :]
            numerators = torch.stack([mean, explained, (Z * Z).expand_as(mean)], dim=-1)
            parts.append(powers.flatten(-2) @ numerators.flatten(-3, -2))  # R x F x K x 3
        signs = p.new_tensor([self.sign, 1.0, 1.0])
        series = torch.cat(parts).reshape(N * F, K, 3) * signs
        if not torch.is_grad_enabled():
            self._series = series
        return series

    def _series_powers(self, alpha: Tensor, derivatives: bool) -> Tensor:
        """The powers of ``v = 1 - alpha / alpha_c`` that the coefficients multiply:
        ``(N F) x D x K`` with the rows ``v^k`` and, with ``derivatives``, ``-k v^(k-1)``
        and ``k (k - 1) v^(k-2)`` (``d / d alpha = -d / dv / alpha_c``)."""
        K = SERIES_TERMS
        v = (1.0 - alpha / self._centers).unsqueeze(-1)  # (N F) x 1
        k = torch.arange(K, dtype=v.dtype, device=v.device)
        powers = v**k  # (N F) x K
        if not derivatives:
            return powers.unsqueeze(-2)
        zero = powers.new_zeros(powers.shape[0], 2)
        lower = torch.cat([zero, powers[:, :-1]], -1)  # v^(k-1), after one more zero
        rows = torch.stack([powers, -k * lower[:, 1:], k * (k - 1) * lower[:, :-1]], -2)
        return rows

    def _sums(self, alpha: Tensor, derivatives: bool = True) -> Tensor:
        """The three sums (mean, explained variance, data fit; columns) and, with
        ``derivatives``, their first two ``alpha``-derivatives (rows): ``(N F) x 3 x 3``
        (``(N F) x 1 x 3`` without), one batched product with the coefficients."""
        center = self._centers.unsqueeze(-1)  # (N F) x 1
        sums = self._series_powers(alpha, derivatives) @ self._coefficients()  # (N F) x D x 3
        scale = 1.0 / center
        if derivatives:
            scale = torch.cat([scale, scale**2, scale**3], -1)
        return sums * scale.unsqueeze(-1)

    def log_derivatives(self, alpha: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """As ``SpectralDual.log_derivatives``, from the series (``(N F)``)."""
        mean, explained, fit = self._sums(alpha).permute(2, 1, 0)  # each 3 x (N F)
        return dual_log_derivatives(
            alpha, tuple(mean), tuple(explained), tuple(fit), self.radius_sq,
            self.rkhs_norm_bound, self.prior_variance,
        )  # fmt: skip

    def __call__(self, alpha: Tensor) -> Tensor:
        """The objective at one ``alpha`` per pair (``(N F)``) within a grid step of the
        pairs' centres (after ``minimize``), from the series; gradients flow to ``p``."""
        if self._centers is None:
            raise RuntimeError("call minimize first: the series are centred at its grid")
        mean, explained, fit = self._sums(alpha, derivatives=False)[:, 0].unbind(-1)
        std = posterior_std(self.prior_variance, explained)
        rt2 = radius_tilde_squared(self.radius_sq, self.rkhs_norm_bound, alpha, alpha * fit)
        return dual_value(mean, std, rt2, alpha)


def _dense_arrays(dual: KroneckerSpectralDual) -> _ArrayDual | None:
    """``dual.dense()`` on NumPy arrays for the search (``_ArrayDual``; the projections
    materialized in NumPy), when the search can run on them (float64 on the CPU, no
    gradients); else ``None``."""
    tensors = (dual.data_factor, dual.task_factor, dual.products, dual.prior_variance)
    tensors = (*tensors, dual.rotated_Y, dual.radius_sq)
    if any(t.device.type != "cpu" or t.dtype != torch.float64 for t in tensors):
        return None
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return None
    p, q = dual.data_factor.numpy(), dual.task_factor.numpy()
    projected = (p[:, None, :, None] * q[None, :, None, :]).reshape(
        p.shape[0] * q.shape[0], p.shape[1] * q.shape[1]
    )  # (N F) x (t n)
    rotated = dual.rotated_Y.numpy().reshape(-1)
    return _ArrayDual(
        dual.products.numpy().reshape(-1), None, dual.sign * projected * rotated, projected**2,
        rotated**2, dual.prior_variance.numpy(), float(dual.radius_sq),
        float(dual.rkhs_norm_bound),
    )  # fmt: skip


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
        # A finite candidate set D (track_candidates) and k(D, D): kernel values at its
        # points are read from it.
        self.register_buffer("candidate_points", None, persistent=False)
        self.register_buffer("candidate_gram", None, persistent=False)
        self._candidate_source: Tensor | None = None  # the tensor D was given as
        self._candidate_rows: RowIndex | None = None  # the lookup of D's rows
        self._found_candidates: tuple[Tensor, Tensor] | None = None  # (D, x_s's candidates)
        self._spectral_index: Tensor | None = None  # the candidate of each spectral input
        self._candidate_factor: tuple[GramSpectrum, Tensor] | None = None  # p at D, per spectrum
        self._radius: tuple[GramSpectrum, tuple[float, ...], Tensor] | None = None

    def add(self, bound: MartingaleMixtureBoundBase, X: Tensor, tasks: Tensor, Y: Tensor) -> None:
        self._distinct.add(X[:: bound.num_tasks])
        self.reset()

    def radius_squared(self, bound: MartingaleMixtureBoundBase) -> Tensor:
        """``R_t^2`` of eq. (8) from the spectrum, kept with it (the round's bounds, the
        emptiness test and the diagnostics read it several times per spectrum)."""
        spectrum = self.spectrum(bound)
        numbers = (bound.noise_std, bound.mixture_scale, bound.delta)
        if self._radius is None or self._radius[0] is not spectrum or self._radius[1] != numbers:
            self._radius = (spectrum, numbers, super().radius_squared(bound))
        return self._radius[2]

    def tracks(self, points: Tensor) -> bool:
        """Whether ``points`` is the tensor whose candidates are tracked."""
        return points is self._candidate_source

    def track_candidates(self, bound: MartingaleMixtureBoundBase, points: Tensor) -> None:
        """Keep the candidate set ``D`` (``points``, ``N x d``, checked by the bound) and
        ``k(D, D)`` in float64, and recompute the spectrum from it; a no-op for the tensor
        already tracked.

        Raises:
            ValueError: If the kernel is not finite at ``points``.
        """
        if points is self._candidate_source:
            return
        inputs = points.detach().to(device=bound.train_X.device, dtype=bound.train_X.dtype)
        if self.candidate_points is not None and torch.equal(inputs, self.candidate_points):
            self._candidate_source = points
            return
        with torch.no_grad():
            gram = bound.kernel.kernels[0](inputs, inputs).to_dense()
        check_kernel_values(gram, inputs, "points")
        self.candidate_points, self.candidate_gram = inputs, gram
        self._candidate_source, self._candidate_factor = points, None
        self.reset()  # recomputed from k(D, D) where every x_s is a candidate

    def holds_candidates(self, X: Tensor) -> bool:
        """Whether every row of ``X`` (``m x d``) is a tracked candidate."""
        return self._candidate_index(X) is not None

    def _candidate_index(self, inputs: Tensor) -> Tensor | None:
        """The rows of ``inputs`` among the candidates (``None``: none tracked, or a row
        that is not a candidate)."""
        if self.candidate_points is None:
            return None
        if self._candidate_rows is None or self._candidate_rows.points is not self.candidate_points:
            self._candidate_rows = RowIndex(self.candidate_points)
        return self._candidate_rows.find(inputs)

    def _compute(self, bound: MartingaleMixtureBoundBase) -> GramSpectrum:
        if bound.num_observations == 0:
            empty = bound.train_Y.new_zeros(0)
            return GramSpectrum(empty, empty.reshape(0, 0), empty)
        Y = bound.train_Y.reshape(-1, bound.num_tasks)
        inputs, inverse, counts = self._distinct.groups()
        device = bound.train_X.device
        inputs = inputs.to(device)
        index = self._distinct_candidates(inputs)
        if index is None:
            kernel = bound.kernel.kernels[0]
            covariance = lambda A, B: kernel(A, B).to_dense()  # noqa: E731
        else:  # every x_s is a candidate: K_t (or K_u) is read from k(D, D)
            block = self.candidate_gram[index][:, index]
            covariance = lambda A, B: block  # noqa: E731 (the distinct rows, once)
        data = input_spectrum(  # repeated inputs (a finite domain): from the distinct ones
            covariance,
            bound.train_X[:: bound.num_tasks],
            Y,
            self.task_eigenvectors,
            (inputs, inverse.to(device), counts.to(device)),
        )
        eigenvalues = (data.eigenvalues[:, None] * self.task_eigenvalues).reshape(-1)
        self.spectral_inputs, self.spectral_basis = data.inputs, data.basis
        self.data_eigenvalues = data.eigenvalues
        self._spectral_index = index  # the candidates of spectral_inputs (the x_s)
        return GramSpectrum(eigenvalues, None, data.rotated.reshape(-1))

    def _distinct_candidates(self, inputs: Tensor) -> Tensor | None:
        """The candidates of the distinct inputs (``u``, in ``groups()`` order; ``None``
        if one is not a candidate): the rows found before are kept, new ones looked up."""
        if self.candidate_points is None:
            return None
        found = self._found_candidates
        if found is None or found[0] is not self.candidate_points:
            found = (self.candidate_points, inputs.new_zeros(0, dtype=torch.long))
        known = found[1]
        if known.shape[0] < inputs.shape[0]:
            new = self._candidate_index(inputs[known.shape[0] :])
            if new is None:
                return None
            found = (found[0], torch.cat([known, new]))
        self._found_candidates = found
        return found[1][: inputs.shape[0]]

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
        self.spectrum(bound)  # and the eigenvectors of K_t
        p, q = self.factors(bound, X, W, self.spectral_inputs, self.spectral_basis)
        return self._factored_values(bound, p, q, sign, prior, alphas, radius_tilde_sq), None

    def candidate_values(
        self,
        bound: MartingaleMixtureBoundBase,
        index: Tensor | None,
        W: Tensor,
        sign: float,
        alphas: Tensor | None,
        radius_tilde_sq: Tensor | None,
    ) -> Tensor:
        """``exact`` / ``grid`` at the candidates ``index`` (``k``; ``None``: all) of
        ``track_candidates``, with ``k(x, x_s)`` and ``k(x, x)`` read from ``k(D, D)``
        (``k x F`` values)."""
        gram = self.candidate_gram
        diagonal = gram.diagonal() if index is None else gram.diagonal()[index]
        B = bound.kernel.task_covariances[0]
        prior = diagonal[:, None] * ((W @ B) * W).sum(-1)  # w^T Gamma(x, x) w: k x F
        if bound.num_observations == 0:
            return sign * bound.rkhs_norm_bound * posterior_std(prior, torch.zeros_like(prior))
        p = self._candidate_data_factor(bound)
        p = p if index is None else p[index]
        q = W @ B @ self.task_eigenvectors
        return self._factored_values(bound, p, q, sign, prior, alphas, radius_tilde_sq)

    def _candidate_data_factor(self, bound: MartingaleMixtureBoundBase) -> Tensor:
        """``p = U_K^T k_t(x)`` at every candidate (``N x r``), kept with the spectrum."""
        spectrum = self.spectrum(bound)
        cached = self._candidate_factor
        if cached is None or cached[0] is not spectrum:
            index = self._spectral_index
            if index is None:  # the spectrum was not computed from the candidates
                index = self._candidate_index(self.spectral_inputs)
            if index is None:  # a data input that is not a candidate
                k = bound.kernel.kernels[0](self.candidate_points, self.spectral_inputs)
                k = k.to_dense().detach()
            else:
                k = self.candidate_gram[:, index]
            self._candidate_factor = cached = (spectrum, k @ self.spectral_basis)
        return cached[1]

    def _factored_values(self, bound, p, q, sign, prior, alphas, radius_tilde_sq) -> Tensor:
        """The bound (``N x F``) from the factors ``p`` and ``q``: exact or on a grid."""
        if alphas is None:
            return sign * self._kronecker_exact(bound, p, q, sign, prior)
        rt2 = radius_tilde_sq.clamp_min(0.0)
        return sign * self._kronecker_grid(bound, p, q, sign, alphas, rt2, prior)

    def _kronecker_exact(self, bound, p, q, sign, prior) -> Tensor:
        r"""The exact bound (eq. (12), one ``alpha`` per point and functional) by
        ``KroneckerSpectralDual`` (by its ``dense`` form when the ``(N F) x (n t)``
        projections hold at most ``DENSE_ENTRIES`` entries: fewer, larger operations),
        ``N x F`` signed values."""
        dual = KroneckerSpectralDual(
            self.spectrum(bound), bound.radius_squared, bound.rkhs_norm_bound, sign, p, q,
            self.data_eigenvalues, self.task_eigenvalues, prior,
        )  # fmt: skip
        if prior.numel() * self.task_eigenvalues.numel() * p.shape[-1] <= DENSE_ENTRIES:
            arrays = _dense_arrays(dual)
            if arrays is not None:  # on the CPU: the search on NumPy arrays
                grid = _log_grid(dual.spectrum.eigenvalues, bound.base_alpha, np)
                _, value = _search(arrays, grid)
                return torch.from_numpy(value).to(p).reshape(prior.shape)
            dual = dual.dense()
        with torch.no_grad():
            alpha, value = dual.minimize(bound.base_alpha)
        if torch.is_grad_enabled():  # the value again, for gradients at the minimizing alpha
            value = dual(alpha)
        return value.reshape(prior.shape)

    def _kronecker_grid(self, bound, p, q, sign, grid, rt2, prior) -> Tensor:
        r"""``min_{alpha in A}`` of eq. (12) for every point and functional by matrix
        products: with ``G_{aj} = 1 / (lambda_a mu_j + alpha)`` the mean is ``p (G o Z)
        q^T`` and the explained variance ``p^2 G (q^2)^T`` (``p = U_K^T k_t(x)``, ``q =
        U_B^T B w``, ``Z = U_K^T Y U_B``): ``O(t n + n F)`` per point and ``alpha`` instead
        of ``O(t n F)`` (linear in ``n`` for the ``n`` per-task bounds). On the CPU in
        float64 without gradients, on NumPy arrays (a fraction of torch's per-call cost
        on these small arrays)."""
        Z = self.spectrum(bound).rotated_y.reshape(-1, bound.num_tasks)  # t x n
        products = self.data_eigenvalues[:, None] * self.task_eigenvalues  # t x n
        tensors = (p, q, prior, Z, products, grid, rt2)
        on_arrays = all(x.device.type == "cpu" and x.dtype == torch.float64 for x in tensors)
        if on_arrays and not (torch.is_grad_enabled() and p.requires_grad):
            arrays = [x.detach().numpy() for x in tensors]
            return torch.from_numpy(_grid_minimum(*arrays, sign)).to(p)
        return _grid_minimum(p, q, prior, Z, products, grid, rt2, sign)


def _grid_minimum(p, q, prior, Z, products, grid, rt2, sign):
    """``KroneckerSpectrum._kronecker_grid`` on tensors or NumPy arrays (``N x F``)."""
    xp = np if isinstance(p, np.ndarray) else torch
    (N, t), n = p.shape, products.shape[-1]
    best = None
    step = max(1, GRID_CHUNK // (t * n))  # alphas at once: G_chunk x t x n
    for start in range(0, grid.shape[0], step):
        alpha = grid[start : start + step, None, None]
        G = 1.0 / (products + alpha)  # G_chunk x t x n
        shape = (N, alpha.shape[0], n)
        # one product over t for all alphas and tasks (N x G_chunk n), then over n
        mean = (p @ (G * Z).swapaxes(0, 1).reshape(t, -1)).reshape(shape) @ q.T
        explained = (p**2 @ G.swapaxes(0, 1).reshape(t, -1)).reshape(shape) @ (q**2).T
        std = posterior_std(prior[..., None, :], explained)
        width = xp.sqrt(rt2[start : start + step, None] / alpha[..., 0])  # G_chunk x 1
        value = xp.amin(sign * mean + width * std, -2)
        best = value if best is None else xp.minimum(best, value)
    return best
