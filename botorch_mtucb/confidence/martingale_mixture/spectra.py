r"""The spectrum a martingale-mixture bound reads, one class per route (pluggable spectra).

Paper 002's bounds (Section 4) read the Gram matrix ``K`` of the scalar observations only
through its spectrum ``K = U diag(lambda) U^T``, ``z = U^T y`` and the projections ``U^T
k_L`` of the functional ``L`` bounded (``GramSpectrum``: the radius of eq. (8), the dual
of eq. (12), the empty-set test of Lemma 4.2). A bound (``bound_base.MartingaleMixtureBoundBase``)
holds the kernel, the data and the numbers, and one spectrum object, chosen when it is
built, that holds what is derived from them and computes the bounds:

* ``GramCacheSpectrum`` (one task): ``K_t`` grown in place with the Cholesky factors of
  ``K_t + alpha I`` (``gram_cache``, Appendix E.2); the radius, the grid and the analytic
  bounds read the factors (no eigen-decomposition), the exact bound the spectrum;
* ``DenseSpectrum`` (multi-task: sums of separable terms, task-indexed data): the ``M x
  M`` Gram matrix of the scalar observations ``(x_s, i_s)``;
* ``KroneckerSpectrum`` (``kronecker.py``; one ICM term, full-vector data): ``K_t (x) B``
  from the spectra of ``K_t`` and ``B``.

Each folds repeated inputs (``repeated_inputs``: the spectrum through the distinct rows,
``eigenvectors`` then ``None`` and projections through ``spectral_inputs`` and
``spectral_basis``). A spectrum object keeps no reference to its bound: each call gets the
bound (its kernel, data and numbers) as an argument. Its tensors are non-persistent (not in
the bound's ``state_dict``; the bound rebuilds its spectrum after loading) and follow
``.to(device)``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    SpectralDual,
    minimize_over_grid,
    posterior_std,
)
from botorch_mtucb.confidence.martingale_mixture.gram_cache import RegularizedGramCache
from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    radius_squared,
    spectral_data_fit,
    spectral_radius_squared,
)
from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import (
    DistinctInputs,
    input_spectrum,
)
from botorch_mtucb.utils.checks import check_kernel_values

if TYPE_CHECKING:
    from botorch_mtucb.confidence.martingale_mixture.bound_base import MartingaleMixtureBoundBase

_DTYPE = torch.float64


class ObservationSpectrum(Module):
    r"""The spectrum of a bound's Gram matrix and the bounds computed from it (base class).

    Subclasses compute the spectrum (``_compute``), record new observations (``add``),
    project the functionals at query points on the spectrum (``projection``) and build
    the pending points' inputs (``pending_inputs``, GP-BUCB). The bounds (``exact``,
    ``grid``) default to the spectral route of the multi-task bounds: ``F_t`` tested
    first (Lemma 4.2), the dual of eq. (12) per point and functional (``SpectralDual``).

    ``FACTORED_GRID``: whether the grid bounds read Cholesky factors and not the spectrum
    (then they test ``R~_alpha^2 >= 0`` at their alphas only, and not ``F_t`` itself,
    which would need the eigen-decomposition).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.spectra import ObservationSpectrum
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 5.0, 0.1, 0.01)
        >>> isinstance(bound.gram_spectrum, ObservationSpectrum)
        True
        >>> bound.gram_spectrum.spectrum(bound).eigenvalues.shape
        torch.Size([6])
    """

    FACTORED_GRID = False

    def __init__(self) -> None:
        super().__init__()
        self._spectrum: GramSpectrum | None = None
        self._distinct = DistinctInputs()  # repeated rows fold into the distinct ones
        self.spectral_inputs: Tensor | None = None  # with folded repeats: the distinct rows
        self.spectral_basis: Tensor | None = None  # ... and U^T k(rows, x) = k(inputs, x) basis

    # ------------------------------------------------------------ subclass hooks
    def _compute(self, bound: MartingaleMixtureBoundBase) -> GramSpectrum:
        """The spectrum of the Gram matrix of ``bound``'s observations."""
        raise NotImplementedError

    def add(self, bound: MartingaleMixtureBoundBase, *new: Tensor) -> None:
        """Record new observations (the bound's data buffers, in order; called before
        the bound's buffers grow)."""
        raise NotImplementedError

    def projection(self, bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor) -> Tensor:
        """``U^T k_L`` (``N x F x r``) of the functionals ``W`` (``F x n``) at ``X``."""
        raise NotImplementedError

    def pending_inputs(
        self, bound: MartingaleMixtureBoundBase, key: Tensor, X_pending: Tensor
    ) -> PendingInputs:
        """The data's rows and ``X_pending`` (``m x d``, the kernel's space), with their
        Gram matrix."""
        raise NotImplementedError

    def pending_variance(
        self, bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor, pending: PendingInputs
    ) -> tuple[Tensor, Tensor]:
        """``(U_P^T k_L)^2`` (``N x F x r_P``) and the eigenvalues ``r_P`` of the Gram
        matrix of the data plus the pending points (GP-BUCB's variance)."""
        raise NotImplementedError

    # ------------------------------------------------------------ the spectrum
    def spectrum(self, bound: MartingaleMixtureBoundBase) -> GramSpectrum:
        """The spectrum of the Gram matrix and ``U^T y`` (cached until new data)."""
        if self._spectrum is None:
            with torch.no_grad():
                self._spectrum = self._compute(bound)
        return self._spectrum

    def reset(self) -> None:
        """Forget the spectrum (new data)."""
        self._spectrum = None

    def radius_squared(self, bound: MartingaleMixtureBoundBase) -> Tensor:
        """``R_t^2`` of eq. (8) from the spectrum (a 0-d float64 tensor)."""
        return spectral_radius_squared(
            self.spectrum(bound), bound.noise_std, bound.mixture_scale, bound.delta
        )

    def data_fit(self, bound: MartingaleMixtureBoundBase, alphas: Tensor) -> Tensor:
        """``alpha y^T (K + alpha I)^{-1} y`` for each ``alpha`` of a grid (``m``)."""
        return spectral_data_fit(self.spectrum(bound), alphas)

    def largest_prior_variance(self, bound: MartingaleMixtureBoundBase) -> float:
        """``max_s K_ss``, the largest prior variance at the observations."""
        raise NotImplementedError

    def _apply(self, fn, recurse=True):
        self._spectrum = None  # recomputed where the data now are
        return super()._apply(fn, recurse)

    # ------------------------------------------------------------ the bounds
    def exact(
        self,
        bound: MartingaleMixtureBoundBase,
        X: Tensor,
        W: Tensor,
        sign: float,
        pending: PendingInputs | None,
    ) -> tuple[Tensor, Tensor | None]:
        """The exact bound (``sign`` ``1``: upper, ``-1``: lower) of the functionals ``W``
        at ``X`` (``N x d``): ``N x F`` values and the minimizing alphas (or ``None``)."""
        return self._spectral_values(bound, X, W, sign, None, None, pending)

    def grid(
        self,
        bound: MartingaleMixtureBoundBase,
        X: Tensor,
        W: Tensor,
        sign: float,
        alphas: Tensor,
        radius_tilde_sq: Tensor,
        pending: PendingInputs | None,
    ) -> tuple[Tensor, Tensor | None]:
        """The minimum of eq. (12) over ``alphas`` (``m``, with their checked ``R~^2``):
        ``N x F`` values and the minimizing alphas (or ``None``)."""
        return self._spectral_values(bound, X, W, sign, alphas, radius_tilde_sq, pending)

    def _spectral_values(self, bound, X, W, sign, alphas, radius_tilde_sq, pending):
        """The dual of eq. (12) on the projections (``SpectralDual``); without data,
        ``B sqrt(w^T Gamma(x, x) w)`` (and ``B rho`` at ``sigma^2 / c`` with pending
        points)."""
        prior = functional_prior_variance(bound, X, W)  # N x F
        N, F = prior.shape
        if bound.num_observations == 0 and pending is None:
            value = bound.rkhs_norm_bound * posterior_std(prior, torch.zeros_like(prior))
            return sign * value, None
        projected = self.projection(bound, X, W)
        if pending is not None:
            squared, variance_eigenvalues = self.pending_variance(bound, X, W, pending)
        else:
            squared, variance_eigenvalues = projected**2, None
        if bound.num_observations == 0:  # pending points only: B rho at sigma^2 / c
            inverse = 1.0 / (variance_eigenvalues + bound.base_alpha)
            explained = (squared.reshape(N * F, squared.shape[-1]) * inverse).sum(-1)
            std = posterior_std(prior.reshape(-1), explained)
            return sign * (bound.rkhs_norm_bound * std).reshape(N, F), None
        return self._dual_values(
            bound, sign, projected, squared, prior, variance_eigenvalues, alphas
        )

    def _dual_values(self, bound, sign, projected, squared, prior, variance_eigenvalues, alphas):
        """``SpectralDual`` on ``U^T k_L`` (``N x F x r``): the exact bound (``alphas``
        ``None``; ``N x F`` values and alphas) or the minimum over ``alphas``."""
        N, F = prior.shape
        spectrum = self.spectrum(bound)
        dual = SpectralDual(
            spectrum,
            bound.radius_squared,
            bound.rkhs_norm_bound,
            sign * (projected * spectrum.rotated_y).reshape(N * F, projected.shape[-1]),
            squared.reshape(N * F, squared.shape[-1]),
            prior.reshape(-1),
            variance_eigenvalues,
        )
        if alphas is None:
            with torch.no_grad():
                alpha, _ = dual.minimize(bound.base_alpha)
            return sign * dual(alpha).reshape(N, F), alpha.reshape(N, F)  # gradients at alpha
        values = torch.stack([dual(a) for a in alphas], -1)  # (N F) x m
        return sign * values.min(-1).values.reshape(N, F), None


def functional_prior_variance(bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor) -> Tensor:
    """``w^T Gamma(x, x) w`` (``N x F``) for a multi-task bound's kernel.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.spectra import (
        ...     functional_prior_variance)
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 2.0]], dtype=torch.float64)
        >>> X = torch.rand(3, 1, dtype=torch.float64)
        >>> bound = MultiTaskMartingaleMixtureBound(X, torch.zeros(3, 2), RBFKernel(), B,
        ...     5.0, 0.1, 0.01)
        >>> functional_prior_variance(bound, X[:1], torch.eye(2, dtype=torch.float64))
        tensor([[1., 2.]], dtype=torch.float64)
    """
    blocks = bound.kernel.diagonal_blocks(X)  # N x n x n
    return torch.einsum("fi,nij,fj->nf", W, blocks, W)


class DenseSpectrum(ObservationSpectrum):
    r"""The ``M x M`` Gram matrix of a multi-task bound's scalar observations ``(x_s,
    i_s)``, ``K((x, i), (x', j)) = Gamma(x, x')_{ij}`` (``O(M^3)`` per spectrum; ``O(u^3)``
    for ``u`` distinct ``(x, i)`` rows).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.spectra import DenseSpectrum
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> bound = MultiTaskMartingaleMixtureBound(X, X.sin(), RBFKernel(), B, 5.0, 0.1,
        ...     0.01, train_tasks=torch.tensor([0, 1, 0, 1]))
        >>> isinstance(bound.gram_spectrum, DenseSpectrum), bound.spectrum().eigenvalues.shape
        (True, torch.Size([4]))
    """

    def __init__(self, bound: MartingaleMixtureBoundBase) -> None:
        super().__init__()
        self._distinct.add(_pair_rows(bound.train_X, bound.train_tasks))

    def add(self, bound: MartingaleMixtureBoundBase, X: Tensor, tasks: Tensor, Y: Tensor) -> None:
        self._distinct.add(_pair_rows(X, tasks))
        self.reset()

    def _compute(self, bound: MartingaleMixtureBoundBase) -> GramSpectrum:
        if bound.num_observations == 0:
            empty = bound.train_Y.new_zeros(0)
            return GramSpectrum(empty, empty.reshape(0, 0), empty)
        if self._distinct.num_distinct < bound.num_observations:  # repeated (x, task)
            rows = _pair_rows(bound.train_X, bound.train_tasks)
            data = input_spectrum(
                lambda A, B: _pair_covariance(bound, A, B), rows, bound.train_Y.unsqueeze(-1),
                None, _groups(self._distinct, bound.train_X.device),
            )  # fmt: skip
            self.spectral_inputs, self.spectral_basis = data.inputs, data.basis
            return GramSpectrum(data.eigenvalues, None, data.rotated[:, 0])
        X, tasks = bound.train_X, bound.train_tasks
        gram = bound.kernel.observation_covariance(X, tasks, X, tasks)
        return GramSpectrum.from_gram(gram, bound.train_Y)

    def projection(self, bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor) -> Tensor:
        if bound.num_observations == 0:
            return X.new_zeros(X.shape[0], W.shape[0], 0)
        spectrum = self.spectrum(bound)
        if spectrum.eigenvectors is None:  # repeated (x, task): through the distinct rows
            rows = self.spectral_inputs
            inputs, tasks, basis = rows[:, :-1], rows[:, -1].long(), self.spectral_basis
        else:
            inputs, tasks, basis = bound.train_X, bound.train_tasks, spectrum.eigenvectors
        representer = bound.kernel.functional_covariance(X, W, inputs, tasks)  # N x F x (M|u)
        check_kernel_values(representer.detach(), X.detach(), "X")
        return representer @ basis

    def pending_inputs(
        self, bound: MartingaleMixtureBoundBase, key: Tensor, X_pending: Tensor
    ) -> PendingInputs:
        """All ``n`` tasks at the data inputs and at ``X_pending`` (full-vector data)."""
        inputs = torch.cat([bound.train_X[:: bound.num_tasks], X_pending])
        n = bound.num_tasks
        scalar_X = inputs.repeat_interleave(n, dim=0)
        scalar_tasks = torch.arange(n, device=inputs.device).repeat(inputs.shape[0])
        with torch.no_grad():
            gram = bound.kernel.observation_covariance(
                scalar_X, scalar_tasks, scalar_X, scalar_tasks
            )
        check_kernel_values(gram, inputs, "X_pending")
        return PendingInputs(key, _pair_rows(scalar_X, scalar_tasks), gram)

    def pending_variance(
        self, bound: MartingaleMixtureBoundBase, X: Tensor, W: Tensor, pending: PendingInputs
    ) -> tuple[Tensor, Tensor]:
        spectrum = pending.spectrum()
        rows = pending.inputs
        cross = bound.kernel.task_block_covariance(X, rows[:, :-1], rows[:, -1].long())
        representer = torch.einsum("fi,nim->nfm", W, cross)
        return (representer @ spectrum.eigenvectors) ** 2, spectrum.eigenvalues


class GramCacheSpectrum(ObservationSpectrum):
    r"""One task's ``K_t``, grown in place with the factors of ``K_t + alpha I``.

    The radius ``R_t^2`` of eq. (8) and the grid and analytic bounds read the Cholesky
    factors (``RegularizedGramCache``: ``O(t^2)`` per point and ``alpha``, bordered in
    ``O(t^2)`` per observation, Appendix E.2); the exact bound reads the spectrum of
    ``K_t`` (``O(t^3)`` once per data set, folded over repeated inputs). Pending points:
    the factors and spectrum of the training plus pending inputs (``PendingInputs``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.spectra import GramCacheSpectrum
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

    def _compute(self, bound: MartingaleMixtureBoundBase) -> GramSpectrum:
        if self._distinct.num_distinct < bound.num_observations:
            data = input_spectrum(
                lambda A, B: _dense(bound, A, B), bound.train_X, bound.train_Y, None,
                _groups(self._distinct, bound.train_X.device),
            )  # fmt: skip
            self.spectral_inputs, self.spectral_basis = data.inputs, data.basis
            return GramSpectrum(data.eigenvalues, None, data.rotated[:, 0])
        return GramSpectrum.from_gram(self.cache.gram, bound.train_Y.reshape(-1))

    def radius_squared(self, bound: MartingaleMixtureBoundBase) -> Tensor:
        """``R_t^2`` as ``s y^T (K + s I)^{-1} y + sigma^2 ln det(I + K / s) + 2 sigma^2
        ln(1 / delta)`` with ``s = sigma^2 / c``, from the factor of ``K_t + s I``."""
        index = self.cache.index(bound.base_alpha)
        fit = self.cache.data_fit(bound.train_Y, index)[0]  # s y^T (K + s I)^{-1} y
        log_det = self.cache.log_det(index)[0]
        return radius_squared(fit, log_det, bound.noise_std, bound.delta)

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
        """``min_{alpha > 0}`` of eq. (12) from the spectrum of ``K_t`` (``N x 1``)."""
        kxx, augmented = self.prior_terms(bound, X, pending)
        t = bound.num_observations
        if t == 0:  # F_0 = {||f|| <= B}: alpha -> infinity
            value = bound.rkhs_norm_bound * posterior_std(kxx, torch.zeros_like(kxx))
            return (sign * value).unsqueeze(-1), torch.full_like(kxx, math.inf).unsqueeze(-1)
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


def _pair_rows(X: Tensor, tasks: Tensor) -> Tensor:
    """The ``(x, task)`` rows of scalar observations (``M x (d + 1)``)."""
    return torch.cat([X, tasks.unsqueeze(-1).to(X)], dim=-1)


def _pair_covariance(bound: MartingaleMixtureBoundBase, A: Tensor, B: Tensor) -> Tensor:
    """``K((x, i), (x', j))`` between ``(x, task)`` rows."""
    return bound.kernel.observation_covariance(
        A[:, :-1], A[:, -1].long(), B[:, :-1], B[:, -1].long()
    )


def _groups(distinct: DistinctInputs, device: torch.device) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct rows, each row's index among them and the counts, on ``device``."""
    inputs, inverse, counts = distinct.groups()
    return inputs.to(device), inverse.to(device), counts.to(device)
