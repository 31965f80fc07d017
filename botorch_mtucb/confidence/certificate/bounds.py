r"""Confidence bounds on a scalar function, as the certificate reads them.

``ConfidenceBounds`` is what ``certify`` needs: ``upper(X)`` and ``lower(X)`` (``N x d``
to ``N``) such that, with probability ``1 - delta``, ``lower(x) <= f(x) <= upper(x)`` for
every ``x`` and every round at once; the RKHS norm bound ``B`` and the kernel metric
``d`` with ``|f(x) - f(x')| <= B d(x, x')`` (``kernel_metric``), for boxes; whether the
guarantee holds (``guaranteed``) and the text of its assumptions.

Adapters:

* ``MartingaleMixtureBounds``: paper 002's single-task bound (exact, grid DMM, analytic
  AMM; Lemma 4.2: the confidence set holds for all rounds at once), built directly or
  ``from_model`` on a fitted BoTorch ``SingleTaskGP``;
* ``MultiTaskMartingaleMixtureBounds``: the multi-task bound on one task or ``w^T f``;
* ``MTKBBounds``: paper 000's ``mu_w(x) +- beta_t sqrt(w^T Gamma_t(x, x) w)`` on a
  ``VectorValuedGP`` (Theorem 1's event, the width ``beta_t`` of Theorem 2,
  ``mt_kb_width``; ``|w^T (f(x) - mu_t(x))| <= beta_t ||(V_t + eta I)^{-1/2} Phi(x) w||``
  in the proof of Theorem 1, Appendix C.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import torch
from torch import Tensor

from botorch_mtucb.confidence.certificate.kernel_metric import KernelMetric
from botorch_mtucb.confidence.martingale_mixture import (
    MartingaleMixtureBound,
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.confidence.scalarized_widths import mt_kb_width
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils.checks import as_int

_DTYPE = torch.float64


@runtime_checkable
class ConfidenceBounds(Protocol):
    """Simultaneous confidence bounds on a scalar ``f`` (module docstring): ``upper`` /
    ``lower`` (``N x d`` to ``N``), ``rkhs_norm_bound`` and ``kernel_distance`` /
    ``cell_radius`` (``|f(x) - f(x')| <= B d(x, x')``), ``evaluated_inputs()`` (``m x d``),
    ``guaranteed``, ``assumptions`` and ``delta``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import (
        ...     ConfidenceBounds, MartingaleMixtureBounds)
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X, RBFKernel(), 2.0, 0.1, 0.1)
        >>> isinstance(MartingaleMixtureBounds(bound), ConfidenceBounds)
        True
    """

    guaranteed: bool
    assumptions: str
    delta: float

    @property
    def input_dim(self) -> int: ...

    @property
    def rkhs_norm_bound(self) -> float: ...

    def upper(self, X: Tensor) -> Tensor: ...

    def lower(self, X: Tensor) -> Tensor: ...

    def kernel_distance(self, X1: Tensor, X2: Tensor) -> Tensor: ...

    def cell_radius(self, centres: Tensor, half_widths: Tensor) -> Tensor: ...

    def evaluated_inputs(self) -> Tensor: ...


def _assumptions(
    kind: str, rkhs_norm_bound: float, from_data: bool, noise: str, delta: float, fixed: bool
) -> str:
    norm = (
        f"B = {rkhs_norm_bound:.4g} chosen from the data (practical, not guaranteed)"
        if from_data
        else f"||f||_H <= B = {rkhs_norm_bound:.4g} (given)"
    )
    kernel = (
        "the kernel fixed before the data"
        if fixed
        else "kernel hyperparameters fitted to the data (practical, not guaranteed)"
    )
    return f"{kind}: {norm}; {noise}; {kernel}; delta = {delta:g}, for all rounds at once"


class _MetricMixin:
    """``kernel_distance`` and ``cell_radius`` from a ``KernelMetric``."""

    _metric: KernelMetric

    def kernel_distance(self, X1: Tensor, X2: Tensor) -> Tensor:
        """The kernel metric ``d(x1, x2)`` between ``N x d`` rows (``N``, float64)."""
        return self._metric.distance(X1, X2)

    def cell_radius(self, centres: Tensor, half_widths: Tensor) -> Tensor:
        """``sup_{x in cell} d(x, c)`` of cells ``c +- h`` (``N x d`` each; ``N``)."""
        return self._metric.cell_radius(half_widths)


class MartingaleMixtureBounds(_MetricMixin):
    r"""Paper 002's single-task bound as ``ConfidenceBounds``.

    ``upper(x) = bound.upper(x, alphas)``, ``lower(x) = bound.lower(x, alphas)``: with
    probability ``1 - delta``, ``f(x)`` lies between them for every ``x`` and ``t`` (Lemma
    4.2; exact ``alphas=None``, DMM grid, AMM one ``alpha``), if ``||f||_H <= B`` for the
    bound's (fixed) kernel and the noise is ``sigma``-sub-Gaussian. In the user's units
    (a bound ``from_model``) ``|f(x) - f(x')| <= |outcome_scale| B d_k(T x, T x')``,
    ``T`` the input transform: ``rkhs_norm_bound`` is ``|outcome_scale| B``.

    Args:
        bound: A ``MartingaleMixtureBound``.
        alphas: ``None`` (exact), a grid (DMM) or one ``alpha`` (AMM).
        hyperparameters_fixed: ``False`` if the kernel was fitted to these data (the
            result is then labelled practical, not guaranteed).

    Raises:
        TypeError: If ``bound`` is not a ``MartingaleMixtureBound``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import MartingaleMixtureBounds
        >>> X = torch.rand(10, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 2.0, 0.1, 0.1)
        >>> bounds = MartingaleMixtureBounds(bound)
        >>> bounds.guaranteed, bounds.upper(X).shape
        (True, torch.Size([10]))
    """

    def __init__(
        self,
        bound: MartingaleMixtureBound,
        alphas: float | Sequence[float] | Tensor | None = None,
        hyperparameters_fixed: bool = True,
    ) -> None:
        if not isinstance(bound, MartingaleMixtureBound):
            raise TypeError(f"bound must be a MartingaleMixtureBound, got {type(bound).__name__}")
        self.bound, self.alphas = bound, alphas
        self.delta = float(bound.delta)
        from_data = bool(bound.rkhs_norm_bound_from_data)
        self.guaranteed = not from_data and bool(hyperparameters_fixed)
        route = "exact (CMM)"
        if alphas is not None:
            single = torch.as_tensor(alphas).numel() == 1
            route = "analytic (AMM)" if single else "grid (DMM)"
        self.assumptions = _assumptions(
            f"paper 002 martingale-mixture bound, {route}",
            float(bound.rkhs_norm_bound), from_data,
            f"sigma-sub-Gaussian noise, sigma = {float(bound.noise_std):.4g}",
            self.delta, bool(hyperparameters_fixed),
        )  # fmt: skip
        self._metric = KernelMetric(
            bound.kernel, input_transform=bound.input_transform, input_dim=bound.input_dim
        )

    @classmethod
    def from_model(
        cls,
        model,
        rkhs_norm_bound: float | None = None,
        noise_std: float | None = None,
        delta: float = 0.01,
        alphas: float | Sequence[float] | Tensor | None = None,
        hyperparameters_fixed: bool = False,
    ) -> MartingaleMixtureBounds:
        """The bounds of ``MartingaleMixtureBound.from_model(model, ...)`` (same arguments
        and errors); ``hyperparameters_fixed=False`` by default: a fitted model's kernel
        was chosen from the data, so the result is practical, not guaranteed, unless the
        kernel was fixed beforehand.

        Example:
            >>> import torch
            >>> from botorch.models import SingleTaskGP
            >>> from botorch_mtucb.confidence.certificate import MartingaleMixtureBounds
            >>> X = torch.rand(8, 1, dtype=torch.float64)
            >>> bounds = MartingaleMixtureBounds.from_model(SingleTaskGP(X, X.cos()))
            >>> bounds.guaranteed
            False
        """
        bound = MartingaleMixtureBound.from_model(
            model, rkhs_norm_bound=rkhs_norm_bound, noise_std=noise_std, delta=delta
        )
        return cls(bound, alphas=alphas, hyperparameters_fixed=hyperparameters_fixed)

    @property
    def input_dim(self) -> int:
        return self.bound.input_dim

    @property
    def rkhs_norm_bound(self) -> float:
        return abs(float(self.bound.outcome_scale)) * float(self.bound.rkhs_norm_bound)

    def upper(self, X: Tensor) -> Tensor:
        """``u_t(X)``: ``N x d`` to ``N`` (float64)."""
        return self.bound.upper(X.to(_DTYPE), alphas=self.alphas).detach()

    def lower(self, X: Tensor) -> Tensor:
        """``l_t(X)``: ``N x d`` to ``N`` (float64)."""
        return self.bound.lower(X.to(_DTYPE), alphas=self.alphas).detach()

    def evaluated_inputs(self) -> Tensor:
        """The bound's training inputs in the user's space (``m x d``, float64)."""
        X = self.bound.train_X
        if self.bound.input_transform is not None and X.shape[0] > 0:
            with torch.no_grad():
                X = self.bound.input_transform.untransform(X)
        return X.detach().to(_DTYPE)


def _functional(weights: Tensor | None, task: int | None, num_tasks: int) -> Tensor:
    """The functional ``w`` (``n``, float64) from exactly one of ``weights`` / ``task``."""
    if (weights is None) == (task is None):
        raise ValueError("give exactly one of weights (an n vector) or task (an index)")
    if task is not None:
        task = as_int(task, "task", minimum=0)
        if task >= num_tasks:
            raise ValueError(f"task must lie in [0, {num_tasks - 1}], got {task}")
        return torch.eye(num_tasks, dtype=_DTYPE)[task]
    if not isinstance(weights, Tensor):
        raise TypeError(f"weights must be a tensor of n = {num_tasks} numbers")
    if weights.shape != (num_tasks,) or not bool(torch.isfinite(weights).all()):
        raise ValueError(
            f"weights must be a finite vector of n = {num_tasks} numbers, got shape "
            f"{tuple(weights.shape)}"
        )
    return weights.detach().to(_DTYPE)


def _term_weights(task_covariances: Tensor, w: Tensor) -> Tensor:
    """``w^T B_j w`` for each term (``J``)."""
    w = w.to(task_covariances)
    return torch.einsum("i,jik,k->j", w, task_covariances.to(_DTYPE), w)


class MultiTaskMartingaleMixtureBounds(_MetricMixin):
    r"""The multi-task martingale-mixture bound on ``w^T f`` (one task: ``w = e_i``) as
    ``ConfidenceBounds``; the metric is ``sqrt(w^T (Gamma(x, x) + Gamma(x', x') -
    Gamma(x, x') - Gamma(x', x)) w)`` (``kernel_metric``).

    Args:
        bound: A ``MultiTaskMartingaleMixtureBound``.
        weights: ``n`` weights ``w`` (or ``task``: an index).
        alphas: As in ``MartingaleMixtureBounds``.
        hyperparameters_fixed: As in ``MartingaleMixtureBounds``.

    Raises:
        TypeError, ValueError: For another bound, or not exactly one of ``weights`` /
            ``task``, or a bad one.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import MultiTaskMartingaleMixtureBounds
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> bound = MultiTaskMartingaleMixtureBound(X, X.repeat(1, 2), RBFKernel(), B, 3.0, 0.1, 0.1)
        >>> MultiTaskMartingaleMixtureBounds(bound, task=1).upper(X).shape
        torch.Size([6])
    """

    def __init__(
        self,
        bound: MultiTaskMartingaleMixtureBound,
        weights: Tensor | None = None,
        task: int | None = None,
        alphas: float | Sequence[float] | Tensor | None = None,
        hyperparameters_fixed: bool = True,
    ) -> None:
        if not isinstance(bound, MultiTaskMartingaleMixtureBound):
            raise TypeError(
                f"bound must be a MultiTaskMartingaleMixtureBound, got {type(bound).__name__}"
            )
        self.bound, self.alphas = bound, alphas
        self.weights = _functional(weights, task, bound.num_tasks)
        self.delta = float(bound.delta)
        self.guaranteed = bool(hyperparameters_fixed)
        self.assumptions = _assumptions(
            f"paper 002 multi-task martingale-mixture bound on w^T f, w = {self.weights.tolist()}",
            float(bound.rkhs_norm_bound), False,
            f"sigma-sub-Gaussian noise per scalar observation, sigma = {float(bound.noise_std):.4g}",
            self.delta, bool(hyperparameters_fixed),
        )  # fmt: skip
        kernel = bound.kernel
        self._metric = KernelMetric(
            list(kernel.kernels),
            _term_weights(kernel.task_covariances, self.weights),
            input_dim=bound.input_dim,
        )

    @property
    def input_dim(self) -> int:
        return self.bound.input_dim

    @property
    def rkhs_norm_bound(self) -> float:
        return float(self.bound.rkhs_norm_bound)

    def upper(self, X: Tensor) -> Tensor:
        """Upper bound on ``w^T f(X)``: ``N x d`` to ``N`` (float64)."""
        w = self.weights.to(self.bound.train_Y.device)
        return self.bound.upper(X.to(_DTYPE), weights=w, alphas=self.alphas).detach()

    def lower(self, X: Tensor) -> Tensor:
        """Lower bound on ``w^T f(X)``: ``N x d`` to ``N`` (float64)."""
        w = self.weights.to(self.bound.train_Y.device)
        return self.bound.lower(X.to(_DTYPE), weights=w, alphas=self.alphas).detach()

    def evaluated_inputs(self) -> Tensor:
        """The distinct training inputs (``m x d``, float64)."""
        return torch.unique(self.bound.train_X.detach().to(_DTYPE), dim=0)


class MTKBBounds(_MetricMixin):
    r"""Paper 000's MT-KB confidence bounds on ``w^T f`` for a ``VectorValuedGP``:
    ``w^T mu_t(x) +- beta_t sqrt(w^T Gamma_t(x, x) w)``, ``beta_t = mt_kb_width(model, b,
    noise_std, delta)`` (Theorem 2's width; the event of Theorem 1 holds for all ``x`` and
    ``t`` at once, and its proof, Appendix C.1, bounds every direction ``w``). The metric
    is that of ``Gamma`` and ``w`` with ``B = b`` (``b`` bounds ``||f - c||_Gamma``, ``c``
    the model's constant prior mean, which cancels in ``f(x) - f(x')``).

    Args:
        model: A ``VectorValuedGP`` with all its outputs.
        rkhs_norm_bound: ``b``; noise_std, delta: as in ``mt_kb_width``.
        weights / task: The functional (exactly one).
        hyperparameters_fixed: As in ``MartingaleMixtureBounds``.

    Raises:
        TypeError: If ``model`` is not a ``VectorValuedGP``; as ``mt_kb_width``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.confidence.certificate import MTKBBounds
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X.repeat(1, 2), RBFKernel(), torch.eye(2), 0.01)
        >>> bounds = MTKBBounds(model, 2.0, noise_std=0.1, delta=0.1, task=0)
        >>> bool((bounds.lower(X) <= bounds.upper(X)).all())
        True
    """

    def __init__(
        self,
        model,
        rkhs_norm_bound: float,
        noise_std: float | None = None,
        delta: float = 0.01,
        weights: Tensor | None = None,
        task: int | None = None,
        hyperparameters_fixed: bool = True,
    ) -> None:
        if not isinstance(model, VectorValuedGP):
            raise TypeError(f"model must be a VectorValuedGP, got {type(model).__name__}")
        if model.num_outputs != model.num_tasks:
            raise ValueError("model must keep all its outputs (not a subset_output)")
        self.model = model
        self.width = float(mt_kb_width(model, rkhs_norm_bound, noise_std, delta))
        self._b, self.delta = float(rkhs_norm_bound), float(delta)
        self.weights = _functional(weights, task, model.num_tasks)
        self.guaranteed = bool(hyperparameters_fixed)
        noise = "model's noise level" if noise_std is None else f"sigma = {noise_std:.4g}"
        self.assumptions = _assumptions(
            f"paper 000 MT-KB (Theorem 2 width {self.width:.4g}) on w^T f, "
            f"w = {self.weights.tolist()}",
            self._b, False, f"sigma-sub-Gaussian noise vectors, {noise}",
            self.delta, bool(hyperparameters_fixed),
        )  # fmt: skip
        kernel = model.kernel
        self._metric = KernelMetric(
            list(kernel.kernels),
            _term_weights(kernel.task_covariances, self.weights),
            input_dim=model.train_X.shape[-1],
        )

    @property
    def input_dim(self) -> int:
        return self.model.train_X.shape[-1]

    @property
    def rkhs_norm_bound(self) -> float:
        return self._b

    def _moments(self, X: Tensor) -> tuple[Tensor, Tensor]:
        with torch.no_grad():
            X = X.to(self.model.train_X)
            mean, covariance = self.model.point_moments(X.unsqueeze(-2))
        w = self.weights.to(mean)
        variance = torch.einsum("i,...ij,j->...", w, covariance, w).clamp_min(0.0)
        return (mean @ w).to(_DTYPE), variance.sqrt().to(_DTYPE)

    def upper(self, X: Tensor) -> Tensor:
        """``w^T mu_t(X) + beta_t sigma_w(X)``: ``N x d`` to ``N`` (float64)."""
        mean, std = self._moments(X)
        return mean + self.width * std

    def lower(self, X: Tensor) -> Tensor:
        """``w^T mu_t(X) - beta_t sigma_w(X)``: ``N x d`` to ``N`` (float64)."""
        mean, std = self._moments(X)
        return mean - self.width * std

    def evaluated_inputs(self) -> Tensor:
        """The distinct training inputs (``m x d``, float64)."""
        return torch.unique(self.model.train_X.detach().to(_DTYPE), dim=0)


def as_confidence_bounds(source, **options) -> ConfidenceBounds:
    """``source`` as ``ConfidenceBounds``: itself, or a martingale-mixture bound wrapped
    (``options``: ``alphas``, ``hyperparameters_fixed``; for the multi-task bound also
    ``weights`` / ``task``).

    Raises:
        TypeError: For anything else (naming what is accepted).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import as_confidence_bounds
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X, RBFKernel(), 2.0, 0.1, 0.1)
        >>> type(as_confidence_bounds(bound)).__name__
        'MartingaleMixtureBounds'
    """
    if isinstance(source, MartingaleMixtureBound):
        return MartingaleMixtureBounds(source, **options)
    if isinstance(source, MultiTaskMartingaleMixtureBound):
        return MultiTaskMartingaleMixtureBounds(source, **options)
    if isinstance(source, ConfidenceBounds) and not options:
        return source
    raise TypeError(
        "bounds must be ConfidenceBounds (MartingaleMixtureBounds, "
        "MultiTaskMartingaleMixtureBounds, MTKBBounds or your own object with upper, lower, "
        "rkhs_norm_bound, kernel_distance, cell_radius, evaluated_inputs, guaranteed, "
        "assumptions and delta), a MartingaleMixtureBound or a "
        f"MultiTaskMartingaleMixtureBound, got {type(source).__name__}"
        + (" with options" if options else "")
    )
