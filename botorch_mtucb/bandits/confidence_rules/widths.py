r"""Width rules: ``u_t(x) = mu_t(x) + width_t * sigma_t(x)`` on a model, the width a
function of the model recomputed after every update.

``WidthRule`` holds the model (exact ``VectorValuedGP`` or MT-BKB's sketch) and a width
function; the width functions are the theorems' (paper 000: MT-KB's Theorem 2, MT-BKB's
Theorem 3, the independent-task IGP-UCB and BKB widths times ``sqrt(n)`` of IT-KB and
IT-BKB, MOBO's GP-UCB radii; paper 002's baselines AY-GP-UCB and IGP-UCB). A width function
is a callable ``model -> width``; it may also have ``observe(model, X)`` (called before
each append, for widths that accumulate statistics of the points played) and
``diagnostics(model)`` (numbers recorded with the width).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gpytorch
import torch
from botorch.acquisition import AcquisitionFunction, UpperConfidenceBound
from torch import Tensor

from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.input_checks import check_width
from botorch_mtucb.acquisition.posterior_moments import posterior_mean_and_covariance
from botorch_mtucb.acquisition.scalarized_ucb import (
    check_scalarized_arguments,
    scalarized_ucb_values,
)
from botorch_mtucb.confidence import (
    ay_gp_ucb_width,
    bkb_width,
    dragonfly_ucb_width,
    gp_ucb_width,
    igp_ucb_width,
    information_gain_increment,
    mt_bkb_width,
    mt_kb_width,
)
from botorch_mtucb.models.nystrom_vector_valued_gp import NystromVectorValuedGP
from botorch_mtucb.scalarization import Scalarization
from botorch_mtucb.utils.domains import Domain, FiniteDomain, maximize_acquisition

DISCRETE_BATCH = 2048  # optimize_acqf_discrete's batch: larger domains take its route


class WidthRule:
    r"""``u_t(x) = mu_t(x) + width_t * sigma_t(x)`` with ``width_t = width_function(model)``.

    Without a scalarization (a single-output model, paper 002) the acquisition is
    BoTorch's ``UpperConfidenceBound`` with ``beta = width^2`` (BoTorch multiplies
    ``sqrt(beta)``; our widths multiply the standard deviation); with the round's
    scalarization (paper 000) it is ``acquisition_class(model, scalarization, width)``:
    ``ScalarizedMultiTaskUCB`` (eq. (2) of paper 000) or ``ScalarizedObjectiveUCB``
    (MOBO). The model is updated in place (``append_observations``; a sketch redraws its
    dictionary with the round's generator) and the width recomputed.

    On a finite ``candidates`` domain the model keeps its posterior at the domain's
    points incrementally (``track_candidates``, where the model has it), asked once at
    the first ``maximize`` or ``update``, whichever comes first: a run resumed by
    replaying its rounds (``update`` only) goes through the same operations as an
    uninterrupted one, to the last bit.

    Args:
        model: A ``VectorValuedGP`` or ``NystromVectorValuedGP`` on the data seen so far.
        width_function: ``model -> width`` (e.g. ``MTKBWidth``, ``AYGPUCBWidth``).
        acquisition_class: The acquisition of a scalarization (``ScalarizedMultiTaskUCB``).
        candidates: The domain whose points the model tracks (a ``FiniteDomain``; other
            domains are not tracked).
        settings: The parameters recorded with the runs (the run file's header, checked
            on resume), e.g. a sketch's accuracy; ``None``: none.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import AYGPUCBWidth, WidthRule
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.problems import make_kernel
        >>> X, Y = torch.zeros(0, 2, dtype=torch.float64), torch.zeros(0, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, Y, make_kernel("rbf", 0.5), torch.ones(1, 1,
        ...                        dtype=torch.float64), regularization=0.01)
        >>> rule = WidthRule(model, AYGPUCBWidth(10.0, 0.1, 0.01, regularization=0.01))
        >>> rule.update(torch.rand(1, 2, dtype=torch.float64), torch.ones(1, 1, dtype=torch.float64))
        >>> float(rule.width) > 10.0
        True
    """

    def __init__(
        self,
        model: Any,
        width_function: Callable[[Any], Tensor | float],
        acquisition_class: Callable[..., AcquisitionFunction] = ScalarizedMultiTaskUCB,
        candidates: Domain | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(width_function):
            raise TypeError(
                f"width_function must be a callable model -> width, got {width_function!r}"
            )
        self.model = model
        self.width_function = width_function
        self.acquisition_class = acquisition_class
        self.candidates = candidates
        self._settings = None if settings is None else dict(settings)
        self._tracking_asked = False
        self.width = width_function(model)
        self._checked_width: Tensor | None = None  # the width as the acquisition holds it

    def acquisition(self, scalarization: Scalarization | None = None) -> AcquisitionFunction:
        """``UpperConfidenceBound(model, beta=width^2)``, or for a scalarization
        ``acquisition_class(model, scalarization, width)``."""
        if scalarization is None:
            return UpperConfidenceBound(self.model, beta=self.width**2)
        return self.acquisition_class(self.model, scalarization, self.width)

    def maximize(
        self, domain: Domain, generator: torch.Generator | None, *objective: Any
    ) -> Tensor:
        """The maximizer of the acquisition over ``domain`` (``maximize_acquisition``; on
        tracked candidates the values of the plain posterior to round-off). On a finite
        domain with ``ScalarizedMultiTaskUCB``, its values are computed from the posterior
        moments at the domain's points (``scalarized_ucb_values``, the same numbers and
        the first maximizer, as ``optimize_acqf_discrete`` in one batch of at most
        ``DISCRETE_BATCH`` points) without building the acquisition.

        Raises:
            ValueError: If the acquisition is NaN somewhere on a finite domain.
        """
        self._track()
        if (
            isinstance(domain, FiniteDomain)
            and domain.points.shape[0] <= DISCRETE_BATCH
            and len(objective) == 1
            and self.acquisition_class is ScalarizedMultiTaskUCB
        ):
            return self._maximize_on_points(domain.points, objective[0])
        x, _ = maximize_acquisition(self.acquisition(*objective), domain, generator)
        return x.detach()

    def _maximize_on_points(self, points: Tensor, scalarization: Scalarization) -> Tensor:
        """The first maximizer of ``ScalarizedMultiTaskUCB`` over ``points`` (``N x d``)."""
        scalarization, _ = check_scalarized_arguments(self.model, scalarization, None)
        if self._checked_width is None:
            self._checked_width = check_width(self.width)
        with torch.no_grad():
            mean, covariance = posterior_mean_and_covariance(self.model, points.unsqueeze(-2))
            values = scalarized_ucb_values(mean, covariance, scalarization, self._checked_width)
        if bool(torch.isnan(values).any()):
            raise ValueError(
                "the acquisition function ScalarizedMultiTaskUCB returned NaN, so it has "
                "no maximizer; check the model's data and hyperparameters for NaN or inf"
            )
        return points[torch.argmax(values)].detach()

    def update(self, X: Tensor, Y: Tensor, generator: torch.Generator | None = None) -> None:
        """Condition the model on ``(X, Y)``, then recompute the width."""
        self._track()
        observe = getattr(self.width_function, "observe", None)
        if observe is not None:
            observe(self.model, X)
        if isinstance(self.model, NystromVectorValuedGP):  # the round's dictionary draw
            self.model.append_observations(X, Y, generator=generator)
        else:
            self.model.append_observations(X, Y)
        self.width = self.width_function(self.model)
        self._checked_width = None

    def _track(self) -> None:
        if self._tracking_asked:
            return
        self._tracking_asked = True
        track = getattr(self.model, "track_candidates", None)
        if isinstance(self.candidates, FiniteDomain) and track is not None:
            track(self.candidates.points)

    def diagnostics(self) -> dict[str, float]:
        """The current width and the width function's own numbers."""
        extra = getattr(self.width_function, "diagnostics", None)
        return {"width": float(self.width), **(extra(self.model) if extra is not None else {})}

    def settings(self) -> dict[str, Any] | None:
        """The parameters recorded with the runs (``None``: none)."""
        return None if self._settings is None else dict(self._settings)


# ------------------------------------------------------------------ paper 000
@dataclass(frozen=True)
class MTKBWidth:
    r"""MT-KB's ``beta_t`` (paper 000, Theorem 2): ``mt_kb_width(model, b, sigma, delta)``.

    Example:
        >>> from botorch_mtucb.bandits import MTKBWidth
        >>> MTKBWidth(rkhs_norm_bound=1.0, noise_std=0.1, delta=0.1).delta
        0.1
    """

    rkhs_norm_bound: float
    noise_std: float
    delta: float

    def __call__(self, model: Any) -> Tensor:
        """``beta_t`` for the data of ``model``."""
        return mt_kb_width(model, self.rkhs_norm_bound, self.noise_std, self.delta)

    def diagnostics(self, model: Any) -> dict[str, float]:
        """The information gain ``gamma_t`` of the model's data."""
        return {"information_gain": float(model.information_gain())}


@dataclass(frozen=True)
class MTBKBWidth:
    r"""MT-BKB's ``beta~_t`` (paper 000, Theorem 3): ``mt_bkb_width(model, b, sigma,
    delta, eps)`` of a ``NystromVectorValuedGP``.

    Example:
        >>> from botorch_mtucb.bandits import MTBKBWidth
        >>> MTBKBWidth(rkhs_norm_bound=1.0, noise_std=0.1, delta=0.1, eps=0.5).eps
        0.5
    """

    rkhs_norm_bound: float
    noise_std: float
    delta: float
    eps: float

    def __call__(self, model: NystromVectorValuedGP) -> Tensor:
        """``beta~_t`` for the sketch's data."""
        return mt_bkb_width(model, self.rkhs_norm_bound, self.noise_std, self.delta, self.eps)

    def diagnostics(self, model: NystromVectorValuedGP) -> dict[str, float]:
        """The dictionary size ``m_t`` and the sum of sketched log-dets."""
        return {
            "dictionary_size": float(model.dictionary_size),
            "log_det_sum": float(model.sketched_log_det_sum),
        }


class IndependentIGPUCBWidth:
    r"""IT-KB's width: ``sqrt(n) max_i beta_i`` with IGP-UCB's ``beta_i`` per task.

    Task ``i`` is a scalar GP with kernel ``B_ii k`` and regularization ``1 + eta``
    (Chowdhury & Gopalan 2017, Theorem 2); ``beta_i = igp_ucb_width(gamma_i, t, b,
    sigma, delta, eta)`` with task ``i``'s information gain ``gamma_i = 1/2 log det(I +
    K_i / (1 + eta))``, accumulated exactly by the chain rule from the posterior
    variances at the points played (``observe``, before each append). With ``|f_i -
    mu_i| <= beta_i sigma_i`` for each task, ``||f - mu||_2 <= sqrt(n) max_i beta_i
    max_i sigma_i`` (paper 000, Section 5 and Appendix E).

    Args:
        rkhs_norm_bound, noise_std, delta: ``b``, ``sigma`` and ``delta``.
        eta: IGP-UCB's ``eta > 0``.
        num_tasks: ``n``.

    Example:
        >>> from botorch_mtucb.bandits import IndependentIGPUCBWidth
        >>> width = IndependentIGPUCBWidth(1.0, 0.1, 0.1, eta=0.1, num_tasks=2)
        >>> width.task_information_gain.tolist(), width.num_observations
        ([0.0, 0.0], 0)
    """

    def __init__(
        self, rkhs_norm_bound: float, noise_std: float, delta: float, eta: float, num_tasks: int
    ) -> None:
        self.rkhs_norm_bound = rkhs_norm_bound
        self.noise_std = noise_std
        self.delta = delta
        self.eta = eta
        self.num_tasks = num_tasks
        self.task_information_gain = torch.zeros(num_tasks, dtype=torch.float64)
        self.num_observations = 0

    def __call__(self, model: Any) -> Tensor:
        """``sqrt(n) * max_i beta_i`` for the points observed so far."""
        widths = igp_ucb_width(
            self.task_information_gain,
            self.num_observations,
            self.rkhs_norm_bound,
            self.noise_std,
            self.delta,
            self.eta,
        )
        return math.sqrt(self.num_tasks) * widths.amax()

    def observe(self, model: Any, X: Tensor) -> None:
        """Add ``1/2 log(1 + sigma_i^2(x_t) / (1 + eta))`` to each task's gain (``X``:
        ``1 x d``, before the model is conditioned on it)."""
        with torch.no_grad():
            _, covariance = model.point_moments(X.unsqueeze(0))  # 1 x n x n
            variance = covariance.diagonal(dim1=-2, dim2=-1).reshape(-1)
            # as the posterior's variance (GPyTorch's floor, min_variance)
            variance = variance.clamp_min(gpytorch.settings.min_variance.value(variance.dtype))
        self.task_information_gain += information_gain_increment(
            variance.to(torch.float64), 1.0 + self.eta
        )
        self.num_observations += 1

    def diagnostics(self, model: Any) -> dict[str, float]:
        """The largest per-task information gain."""
        return {"information_gain": float(self.task_information_gain.max())}


@dataclass(frozen=True, eq=False)
class IndependentBKBWidth:
    r"""IT-BKB's width: ``sqrt(n) max_i w_i`` with BKB's ``w_i`` per task.

    ``w_i = bkb_width(sum_s Gamma~_t(x_s, x_s)_ii / lambda, t, b, sigma, delta, eps,
    lambda, kappa_i^2)`` (Calandriello et al. 2019, Theorem 1), per unit of the task's
    sketched posterior std, ``kappa_i^2 = B_ii max_x k(x, x)`` (paper 000, Section 5
    and Appendix E).

    Args:
        rkhs_norm_bound, noise_std, delta, eps: ``b``, ``sigma``, ``delta`` and ``eps``.
        regularization: BKB's ``lambda > 0``.
        kernel_bounds: The ``n`` bounds ``kappa_i^2``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import IndependentBKBWidth
        >>> width = IndependentBKBWidth(1.0, 0.1, 0.1, 0.5, 0.1, torch.tensor([1.0, 2.0]))
        >>> width.kernel_bounds.tolist()
        [1.0, 2.0]
    """

    rkhs_norm_bound: float
    noise_std: float
    delta: float
    eps: float
    regularization: float
    kernel_bounds: Tensor

    def task_widths(self, model: NystromVectorValuedGP) -> Tensor:
        """BKB's width of each task (per unit of its posterior std), ``n``."""
        variance_sum = model.train_variances.sum(0).to(torch.float64) / self.regularization
        t = model.train_X.shape[0]
        widths = [
            bkb_width(
                variance_sum[i],
                t,
                self.rkhs_norm_bound,
                self.noise_std,
                self.delta,
                self.eps,
                self.regularization,
                float(self.kernel_bounds[i]),
            )
            for i in range(self.kernel_bounds.numel())
        ]
        return torch.stack(widths)

    def __call__(self, model: NystromVectorValuedGP) -> Tensor:
        """``sqrt(n) * max_i w_i``."""
        return math.sqrt(self.kernel_bounds.numel()) * self.task_widths(model).amax()

    def diagnostics(self, model: NystromVectorValuedGP) -> dict[str, float]:
        """The dictionary size ``m_t``."""
        return {"dictionary_size": float(model.dictionary_size)}


@dataclass(frozen=True)
class GPUCBRadius:
    r"""MOBO's default radius, GP-UCB's for a finite domain (Srinivas et al. 2010,
    Theorem 1): ``sqrt(2 log(|X| t^2 pi^2 / (6 delta)))`` for the round ``t`` to come
    (``gp_ucb_width``; see ``bandits.scalarized.methods.mobo``).

    Example:
        >>> from botorch_mtucb.bandits import GPUCBRadius
        >>> GPUCBRadius(domain_size=101, delta=0.1).domain_size
        101
    """

    domain_size: int
    delta: float

    def __call__(self, model: Any) -> float:
        """``w_t`` for ``t = (observations so far) + 1``."""
        return gp_ucb_width(model.train_X.shape[0] + 1, int(self.domain_size), self.delta)


@dataclass(frozen=True)
class DragonflyRadius:
    r"""The radius of Paria et al.'s released code (Dragonfly): ``sqrt(0.2 d log(2 d t +
    1))`` for the round ``t`` to come (``dragonfly_ucb_width``).

    Example:
        >>> from botorch_mtucb.bandits import DragonflyRadius
        >>> DragonflyRadius(dim=1).dim
        1
    """

    dim: int

    def __call__(self, model: Any) -> float:
        """``w_t`` for ``t = (observations so far) + 1``."""
        return dragonfly_ucb_width(model.train_X.shape[0] + 1, self.dim)


# ------------------------------------------------------------------ paper 002
@dataclass(frozen=True)
class AYGPUCBWidth:
    r"""AY-GP-UCB's width of a model: ``ay_gp_ucb_width(gamma_t, B, sigma, delta, lambda)``.

    ``gamma_t`` is the model's information gain ``1/2 ln det(I + K_t / lambda)``
    (Abbasi-Yadkori 2012, Theorem 3.11; paper 002, Appendix C.2), with ``lambda`` the
    model's regularization, given again here as ``regularization``.

    Example:
        >>> from botorch_mtucb.bandits import AYGPUCBWidth
        >>> width = AYGPUCBWidth(rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05,
        ...                      regularization=0.01)
        >>> width.rkhs_norm_bound
        1.0
    """

    rkhs_norm_bound: float
    noise_std: float
    delta: float
    regularization: float

    def __call__(self, model: Any) -> Tensor:
        """The width for the data of ``model`` (0-d float64 tensor)."""
        gamma = model.information_gain().detach()
        return ay_gp_ucb_width(
            gamma, self.rkhs_norm_bound, self.noise_std, self.delta, self.regularization
        )


@dataclass(frozen=True)
class IGPUCBWidth:
    r"""IGP-UCB's width of a model: ``igp_ucb_width(gamma_t, t, B, sigma, delta, eta)``.

    ``gamma_t`` is the model's information gain with regularization ``1 + eta`` and ``t``
    its number of observations (Chowdhury & Gopalan 2017, Theorem 2; paper 002,
    Appendix C.2).

    Example:
        >>> from botorch_mtucb.bandits import IGPUCBWidth
        >>> width = IGPUCBWidth(rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05, eta=0.02)
        >>> width.eta
        0.02
    """

    rkhs_norm_bound: float
    noise_std: float
    delta: float
    eta: float

    def __call__(self, model: Any) -> Tensor:
        """The width for the data of ``model`` (0-d float64 tensor)."""
        gamma = model.information_gain().detach()
        return igp_ucb_width(
            gamma,
            model.num_observations,
            self.rkhs_norm_bound,
            self.noise_std,
            self.delta,
            self.eta,
        )
