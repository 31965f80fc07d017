r"""The spectrum a martingale-mixture bound reads, one class per route (pluggable spectra).

Paper 002's bounds (Section 4) read the Gram matrix ``K`` of the scalar observations only
through its spectrum ``K = U diag(lambda) U^T``, ``z = U^T y`` and the projections ``U^T
k_L`` of the functional ``L`` bounded (``GramSpectrum``: the radius of eq. (8), the dual
of eq. (12), the empty-set test of Lemma 4.2). A bound (``bound_base.MartingaleMixtureBoundBase``)
holds the kernel, the data and the numbers, and one spectrum object, chosen when it is
built, that holds what is derived from them and computes the bounds:

* ``GramCacheSpectrum`` (one task, ``gram_cache_spectrum``): ``K_t`` grown in place with the Cholesky factors of
  ``K_t + alpha I`` (``gram_cache``, Appendix E.2); the radius, the grid and the analytic
  bounds read the factors (no eigen-decomposition), the exact bound the factors at a
  lattice of alphas after new data (``factored_dual``: ``O(t^2)`` per point) or the
  spectrum (``O(t^3)`` once per data set, then ``O(t)`` per point and alpha);
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

from typing import TYPE_CHECKING

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    SpectralDual,
    posterior_std,
)
from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
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

    def witnesses_nonempty(self, bound: MartingaleMixtureBoundBase) -> bool:
        """Whether ``F_t`` is shown non-empty without the spectrum (``False``: the
        spectral test of ``check_nonempty`` decides)."""
        return False

    def _apply(self, fn, recurse=True):
        self.reset()  # recomputed where the data now are
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
                None, distinct_groups(self._distinct, bound.train_X.device),
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


def _pair_rows(X: Tensor, tasks: Tensor) -> Tensor:
    """The ``(x, task)`` rows of scalar observations (``M x (d + 1)``)."""
    return torch.cat([X, tasks.unsqueeze(-1).to(X)], dim=-1)


def _pair_covariance(bound: MartingaleMixtureBoundBase, A: Tensor, B: Tensor) -> Tensor:
    """``K((x, i), (x', j))`` between ``(x, task)`` rows."""
    return bound.kernel.observation_covariance(
        A[:, :-1], A[:, -1].long(), B[:, :-1], B[:, -1].long()
    )


def distinct_groups(
    distinct: DistinctInputs, device: torch.device
) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct rows, each row's index among them and the counts, on ``device``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import DistinctInputs
        >>> from botorch_mtucb.confidence.martingale_mixture.spectra import distinct_groups
        >>> distinct = DistinctInputs()
        >>> distinct.add(torch.tensor([[0.0], [1.0], [0.0]], dtype=torch.float64))
        >>> distinct_groups(distinct, torch.device("cpu"))[2].tolist()
        [2, 1]
    """
    inputs, inverse, counts = distinct.groups()
    return inputs.to(device), inverse.to(device), counts.to(device)
