r"""The one-task spectrum: ``K_t`` grown in place with its regularized Cholesky factors.

``GramCacheSpectrum`` is the spectrum object (``spectra.ObservationSpectrum``) of
``MartingaleMixtureBound``: the Gram cache of Appendix E.2 of paper 002 serves the radius,
the grid and the analytic bounds, and the exact bound takes one of two routes, the
factored one (``factored_dual``) or the eigen-decomposition of ``K_t``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    minimize_over_grid,
    posterior_std,
)
from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
    DualTerms,
    factored_exact,
    nearest_node,
    node_alpha,
)
from botorch_mtucb.confidence.martingale_mixture.gram_cache import RegularizedGramCache
from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum, radius_squared
from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import input_spectrum
from botorch_mtucb.confidence.martingale_mixture.ridge_witness import witnesses_nonempty
from botorch_mtucb.confidence.martingale_mixture.spectra import (
    ObservationSpectrum,
    distinct_groups,
)
from botorch_mtucb.utils.checks import check_kernel_values

if TYPE_CHECKING:
    from botorch_mtucb.confidence.martingale_mixture.bound_base import MartingaleMixtureBoundBase

_DTYPE = torch.float64
FACTORED_MIN_OBSERVATIONS = 800  # below, the eigen route is as fast or faster (measured)
FACTORED_BUDGET = 0.3  # points per observation the factored route serves per data set


class GramCacheSpectrum(ObservationSpectrum):
    r"""One task's ``K_t``, grown in place with the factors of ``K_t + alpha I``.

    The radius ``R_t^2`` of eq. (8) and the grid and analytic bounds read the Cholesky
    factors (``RegularizedGramCache``: ``O(t^2)`` per point and ``alpha``, bordered in
    ``O(t^2)`` per observation, Appendix E.2). The exact bound reads the factors at the
    lattice nodes of ``factored_dual`` (``O(t^2)`` per point, no ``O(t^3)`` step after an
    append) while few points are asked for on the data (``FACTORED_BUDGET`` per
    observation, ``FACTORED_MIN_OBSERVATIONS`` or more of them, no gradient or pending
    points), else the spectrum of ``K_t`` (``O(t^3)`` once per data set, folded over
    repeated inputs), which then serves every later call on the same data; both give
    the same minimum of eq. (12) to round-off. Pending points:
    the factors and spectrum of the training plus pending inputs (``PendingInputs``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.gram_cache_spectrum import (
        ...     GramCacheSpectrum)
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 5.0, 0.1, 0.01)
        >>> isinstance(bound.gram_spectrum, GramCacheSpectrum)
        True
        >>> bound.gram_spectrum.cache.gram.shape
        torch.Size([5, 5])
    """

    FACTORED_GRID = True

    def __init__(self, bound: MartingaleMixtureBoundBase) -> None:
        super().__init__()
        X = bound.train_X
        with torch.no_grad():
            gram = _dense(bound, X, X) if X.shape[0] else X.new_zeros(0, 0)
        check_kernel_values(gram, X, "train_X")
        # K_t and, for fixed alphas, the factors of K_t + alpha I (Appendix E.2), grown in place.
        self.cache = RegularizedGramCache(gram)
        self._distinct.add(X)
        self.cache.ensure(torch.tensor([bound.base_alpha], dtype=_DTYPE))
        self._start_node = 0  # the factored route's lattice node to start at (last minimizers)
        self._nodes: set[float] = set()  # lattice alphas the factored route factorized
        self._factored_points = 0  # points it evaluated since the data changed
        self._radius_sq: Tensor | None = None

    def add(self, bound: MartingaleMixtureBoundBase, X: Tensor, Y: Tensor) -> None:
        """Border ``K_t`` and every cached factor, one row at a time (``O(t^2)`` each)."""
        inputs = bound.train_X
        for x in X:
            x = x.unsqueeze(0)
            t = inputs.shape[0]
            cross = _dense(bound, inputs, x).reshape(t) if t else inputs.new_zeros(0)
            self.cache.append(cross, _dense(bound, x, x).reshape(()))
            inputs = torch.cat([inputs, x])
            self._distinct.add(x)
        self.reset()
        self._factored_points = 0

    def _compute(self, bound: MartingaleMixtureBoundBase) -> GramSpectrum:
        if self._distinct.num_distinct < bound.num_observations:
            data = input_spectrum(
                lambda A, B: _dense(bound, A, B), bound.train_X, bound.train_Y, None,
                distinct_groups(self._distinct, bound.train_X.device),
            )  # fmt: skip
            self.spectral_inputs, self.spectral_basis = data.inputs, data.basis
            return GramSpectrum(data.eigenvalues, None, data.rotated[:, 0])
        return GramSpectrum.from_gram(self.cache.gram, bound.train_Y.reshape(-1))

    def radius_squared(self, bound: MartingaleMixtureBoundBase) -> Tensor:
        """``R_t^2`` as ``s y^T (K + s I)^{-1} y + sigma^2 ln det(I + K / s) + 2 sigma^2
        ln(1 / delta)`` with ``s = sigma^2 / c``, from the factor of ``K_t + s I`` (kept
        until new data)."""
        if self._radius_sq is None:
            index = self.cache.index(bound.base_alpha)
            fit = self.cache.data_fit(bound.train_Y, index)[0]  # s y^T (K + s I)^{-1} y
            log_det = self.cache.log_det(index)[0]
            self._radius_sq = radius_squared(fit, log_det, bound.noise_std, bound.delta)
        return self._radius_sq

    def reset(self) -> None:
        """Forget the spectrum and the radius (new data)."""
        super().reset()
        self._radius_sq = None

    def data_fit(self, bound: MartingaleMixtureBoundBase, alphas: Tensor) -> Tensor:
        """``alpha ||L_alpha^{-1} y||^2`` from the factors (factorized if missing)."""
        with torch.no_grad():
            return self.cache.data_fit(bound.train_Y, self.cache.ensure(alphas))

    def largest_prior_variance(self, bound: MartingaleMixtureBoundBase) -> float:
        return float(self.cache.gram.diagonal().max())

    def pending_inputs(
        self, bound: MartingaleMixtureBoundBase, key: Tensor, X_pending: Tensor
    ) -> PendingInputs:
        with torch.no_grad():
            inputs = torch.cat([bound.train_X, X_pending])
            gram = _dense(bound, inputs, inputs)
        check_kernel_values(gram, inputs, "X_pending")
        return PendingInputs(key, inputs, gram)

    def prior_terms(
        self, bound: MartingaleMixtureBoundBase, X: Tensor, pending: PendingInputs | None = None
    ) -> tuple[Tensor, Tensor]:
        """``k(x, x)`` (``N``) and ``k_t(x)`` (``N x t``); with pending points, ``k(x, .)``
        on the training inputs followed by the pending points (``N x (t + m)``)."""
        kxx = bound.kernel(X, X, diag=True)
        inputs = bound.train_X if pending is None else pending.inputs
        cross = _dense(bound, X, inputs) if len(inputs) else X.new_zeros(X.shape[0], 0)
        check_kernel_values(cross.detach(), X.detach(), "X")
        return kxx, cross

    def projection(
        self, bound: MartingaleMixtureBoundBase, X: Tensor, W: None, cross: Tensor | None = None
    ) -> Tensor:
        """``U^T k_t(x)`` (``N x 1 x r``); ``cross``: ``k_t(x)`` if at hand."""
        spectrum = self.spectrum(bound)
        if spectrum.eigenvectors is None:  # repeated inputs: through the distinct ones
            distinct = _dense(bound, X, self.spectral_inputs)
            check_kernel_values(distinct.detach(), X.detach(), "X")
            return (distinct @ self.spectral_basis).unsqueeze(1)
        if cross is None:
            cross = self.prior_terms(bound, X)[1]
        return (cross @ spectrum.eigenvectors).unsqueeze(1)  # v = U^T k_t(x)

    def pending_variance(
        self,
        bound: MartingaleMixtureBoundBase,
        X: Tensor,
        W: None,
        pending: PendingInputs,
        augmented: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """``augmented``: ``k(x, .)`` on the training and pending inputs if at hand."""
        if augmented is None:
            augmented = self.prior_terms(bound, X, pending)[1]
        squared, eigenvalues = pending.squared_projection(augmented)
        return squared.unsqueeze(1), eigenvalues

    def exact(self, bound, X, W, sign, pending):
        """``min_{alpha > 0}`` of eq. (12) (``N x 1``): from the factors at lattice nodes
        (``factored_dual``) for few points after new data (``FACTORED_MIN_OBSERVATIONS``
        observations or more, at most ``FACTORED_BUDGET`` points per observation until
        the next, no gradient, no pending points), else from the spectrum of ``K_t``."""
        kxx, augmented = self.prior_terms(bound, X, pending)
        t = bound.num_observations
        if t == 0:  # F_0 = {||f|| <= B}: alpha -> infinity
            value = bound.rkhs_norm_bound * posterior_std(kxx, torch.zeros_like(kxx))
            return (sign * value).unsqueeze(-1), torch.full_like(kxx, math.inf).unsqueeze(-1)
        if self._factored_route(bound, X, pending):
            return self._factored(bound, X, sign, kxx, augmented)
        return self._spectral_exact(bound, X, W, sign, pending, kxx, augmented)

    def _factored_route(self, bound, X: Tensor, pending: PendingInputs | None) -> bool:
        """Whether the factored route is the cheaper (no spectrum at hand: it would cost
        ``O(t^3)``, the factored route ``O(t^2)`` per point)."""
        t, N = bound.num_observations, X.shape[0]
        return (
            pending is None
            and self._spectrum is None
            and not (torch.is_grad_enabled() and X.requires_grad)
            and t >= FACTORED_MIN_OBSERVATIONS
            and self._factored_points + N <= FACTORED_BUDGET * t
        )

    def _factor_at(self, alpha: float):
        """The cached factor of ``K_t + alpha I`` (factorized if missing)."""
        index = int(self.cache.ensure(torch.tensor([alpha], dtype=_DTYPE)))
        if index > 0:
            self._nodes.add(alpha)
        return self.cache.factors[index]

    def _factored(self, bound, X, sign, kxx, augmented):
        """The factored route (``factored_dual``); points it leaves unresolved take the
        spectrum's."""
        terms = DualTerms(
            bound.train_Y.reshape(-1), augmented.detach(), kxx.detach(), sign,
            bound.radius_squared, bound.rkhs_norm_bound, bound.base_alpha,
        )  # fmt: skip
        with torch.no_grad():
            result = factored_exact(terms, self._factor_at, self._start_node)
        self._factored_points += X.shape[0]
        value, alpha, resolved = result.value, result.alpha, result.resolved
        if bool(resolved.any()):
            nodes = torch.tensor(
                [nearest_node(bound.base_alpha, a) for a in alpha[resolved].tolist()]
            )
            self._start_node = int(nodes.median())
        low, high = result.nodes
        stale = [
            a for a in self._nodes if not low - 1 <= nearest_node(bound.base_alpha, a) <= high + 1
        ]
        self.cache.discard(stale)
        self._nodes.difference_update(stale)
        if not bool(resolved.all()):
            rows = torch.nonzero(~resolved).squeeze(-1)
            spectral, spectral_alpha = self._spectral_exact(
                bound, X[rows], None, sign, None, kxx[rows], augmented[rows]
            )
            value, alpha = value.clone(), alpha.clone()
            value[rows], alpha[rows] = spectral[:, 0].detach(), spectral_alpha[:, 0]
        return value.unsqueeze(-1), alpha.unsqueeze(-1)

    def witnesses_nonempty(self, bound: MartingaleMixtureBoundBase) -> bool:
        """A kernel ridge estimate at a cached or lattice alpha in ``F_t``
        (``ridge_witness.witnesses_nonempty``), where the factored route serves."""
        if self._spectrum is not None or bound.num_observations < FACTORED_MIN_OBSERVATIONS:
            return False
        last = node_alpha(bound.base_alpha, self._start_node)  # the last minimizers' node
        cached = sorted(self.cache.alphas.tolist(), key=lambda alpha: abs(math.log(alpha / last)))
        with torch.no_grad():
            return witnesses_nonempty(
                self._factor_at, cached, bound.train_Y.reshape(-1),
                bound.rkhs_norm_bound, float(bound.radius_squared), bound.base_alpha,
            )  # fmt: skip

    def _spectral_exact(self, bound, X, W, sign, pending, kxx, augmented):
        """The eigen route: ``U^T k_t(x)`` and the dual of eq. (12) per point."""
        t = bound.num_observations
        projected = self.projection(bound, X, W, augmented[:, :t])
        if pending is None:
            squared, variance_eigenvalues = projected**2, None
        else:
            squared, variance_eigenvalues = self.pending_variance(bound, X, W, pending, augmented)
        prior = kxx.unsqueeze(-1)
        return self._dual_values(bound, sign, projected, squared, prior, variance_eigenvalues, None)

    def grid(self, bound, X, W, sign, alphas, radius_tilde_sq, pending):
        """``min_{alpha in A}`` of eq. (12) with the cached factors (``O(t^2)`` per
        point and alpha; ``N x 1``)."""
        with torch.no_grad():
            index = self.cache.ensure(alphas)
            alpha = self.cache.alphas[index]  # m
            weights = self.cache.weights(bound.train_Y, index)  # m x t
        kxx, augmented = self.prior_terms(bound, X, pending)  # N, N x (t [+ m])
        cross = augmented[:, : bound.num_observations]  # N x t
        mean = cross @ weights.transpose(0, 1)  # N x m
        if pending is None:
            explained = self.cache.explained_variance(index, cross)
        else:
            explained = pending.explained_variance(alpha, augmented)
        std = posterior_std(kxx.unsqueeze(-1), explained)
        best, best_alpha = minimize_over_grid(sign * mean, std, radius_tilde_sq, alpha)
        return (sign * best).unsqueeze(-1), best_alpha.unsqueeze(-1)


def _dense(bound: MartingaleMixtureBoundBase, X1: Tensor, X2: Tensor) -> Tensor:
    """``k(X1, X2)`` of a one-task bound's kernel as a dense tensor."""
    return bound.kernel(X1, X2).to_dense()
