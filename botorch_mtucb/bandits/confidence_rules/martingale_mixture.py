r"""Martingale-mixture rules: the confidence bounds of paper 002 as confidence rules.

``u_t(x) = min_{alpha in A} mu_alpha(x) + R~_alpha / sqrt(alpha) rho_alpha(x)`` (paper
002, eq. (12)) with the exact ``A = (0, inf)`` (CMM, Section 5.3), a grid (DMM, Section
5.4) or one ``alpha`` (AMM, Cor. 4.6, Section 5.5); each observation is appended in
``O(t^2)`` (Appendix E.2). Three rules, one per shape of data:

* ``MartingaleMixtureRule``: one task (paper 002's KernelUCB);
* ``MultiTaskMartingaleMixtureRule``: full vectors ``y_t = f(x_t) + eps`` of a multi-task
  kernel (paper 000's feedback; MT-CMM-UCB, MT-DMM-UCB, IT-CMM-UCB), the bound of the
  round's scalarization (``ScalarizedMartingaleMixtureUCB``);
* ``TaskIndexedMartingaleMixtureRule``: one task's value per round with the kernel
  ``[K_task(b)]_ij k(x, x')`` (paper 001's feedback; MT-CMM-UCB, MT-CMM-AL), the
  per-task bound ``u(i, x)``, the norm bound ``task_indexed_norm_bound``.

On a finite set the exact bound is maximized by ``utils.screened_argmax``: every
``alpha`` gives a valid bound (eq. (12) holds for each), so the minimum over a few fixed
``alpha`` (the DMM bound, ``O(t n)`` per point and ``alpha`` on the Kronecker route) is
an upper bound of the exact one, and the exact bound (tens of evaluations per point in
its alpha search) is computed only where it can win.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.acquisition import MartingaleMixtureUCB, ScalarizedMartingaleMixtureUCB
from botorch_mtucb.bandits.confidence_rules.base import TaskChoice, per_task_domains
from botorch_mtucb.confidence import (
    EmptyConfidenceSetError,
    MartingaleMixtureBound,
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.confidence.martingale_mixture import choose_rkhs_norm_bound
from botorch_mtucb.confidence.martingale_mixture.alpha_search import search_range
from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_alphas
from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.kernels.task_checks import check_b
from botorch_mtucb.scalarization import (
    ChebyshevScalarization,
    LinearScalarization,
    Scalarization,
)
from botorch_mtucb.utils.checks import check_choice, check_positive
from botorch_mtucb.utils.domains import Domain, FiniteDomain, maximize_acquisition
from botorch_mtucb.utils.screening import screened_argmax

ON_EMPTY = ("raise", "grow")
SCREEN_DECADES = (-1, 0, 1, 2, 3, 4)  # paper 001's screening alphas: 10^k sigma^2 / c
_DTYPE = torch.float64


class MartingaleMixtureRule:
    r"""The martingale-mixture bound of one task at a set of alphas (paper 002, eq. (12)),
    as ``MartingaleMixtureUCB``: ``alphas=None`` for the exact bound (CMM-UCB), a grid
    (DMM-UCB) or one alpha (AMM-UCB).

    Args:
        bound: A ``MartingaleMixtureBound`` on the data seen so far (updated in place).
        alphas: ``None``, or a ``k`` tensor of ``alpha > 0`` (checked by
            ``MartingaleMixtureUCB``).

    Raises:
        TypeError: If ``bound`` is not a ``MartingaleMixtureBound``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import MartingaleMixtureRule
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.problems import make_kernel
        >>> X, Y = torch.rand(5, 2, dtype=torch.float64), torch.zeros(5, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, Y, make_kernel("rbf", 0.5), 10.0, 0.1, 0.01)
        >>> rule = MartingaleMixtureRule(bound, torch.tensor([0.01], dtype=torch.float64))
        >>> test_X = torch.rand(3, 2, dtype=torch.float64)
        >>> torch.equal(rule.acquisition()(test_X.unsqueeze(-2)), bound.upper(test_X, 0.01))
        True
    """

    def __init__(self, bound: MartingaleMixtureBound, alphas: Tensor | None = None) -> None:
        if not isinstance(bound, MartingaleMixtureBound):
            raise TypeError(f"bound must be a MartingaleMixtureBound, got {type(bound).__name__}")
        self.bound = bound
        self.alphas = alphas

    def acquisition(self) -> MartingaleMixtureUCB:
        """``MartingaleMixtureUCB.from_bound(bound, alphas)``."""
        return MartingaleMixtureUCB.from_bound(self.bound, self.alphas)

    def update(self, X: Tensor, Y: Tensor) -> None:
        """Append ``(X, Y)`` to the bound (``O(t^2)`` per observation)."""
        self.bound.append_observations(X, Y)

    def diagnostics(self) -> dict[str, float]:
        """The radius ``R_t^2`` of the mixture (eq. (9))."""
        return {"radius_squared": float(self.bound.radius_squared)}


class MultiTaskMartingaleMixtureRule:
    r"""The multi-task martingale-mixture bound of the round's scalarization ``s``.

    For the scalar kernel ``K((x, i), (x', j)) = Gamma(x, x')_{ij}`` (paper 000, Remark
    2) the confidence set ``F_t`` of ``MultiTaskMartingaleMixtureBound`` (paper 002,
    Lemma 4.2) bounds ``s(f(x))``: linear ``s(y) = lambda^T y`` by the bound of the linear
    functional itself, Chebyshev ``min_i lambda_i (y_i - z_i)`` by ``min_i lambda_i (u_i(x)
    - z_i)`` with the per-task bounds (``ScalarizedMartingaleMixtureUCB``). Each round's
    full vector ``y_t`` is appended.

    Args:
        bound: A ``MultiTaskMartingaleMixtureBound`` on full-vector data (updated in place).
        alphas: ``None`` for the exact bound (CMM), a grid of ``alpha > 0`` (DMM).

    Raises:
        TypeError: If ``bound`` is not a ``MultiTaskMartingaleMixtureBound``.
        ValueError: For alphas that ``check_alphas`` refuses.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import MultiTaskMartingaleMixtureRule
        >>> from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
        >>> from botorch_mtucb.problems import make_kernel
        >>> from botorch_mtucb.scalarization import LinearScalarization
        >>> B = torch.eye(2, dtype=torch.float64)
        >>> X, Y = torch.rand(3, 1, dtype=torch.float64), torch.zeros(3, 2, dtype=torch.float64)
        >>> bound = MultiTaskMartingaleMixtureBound(X, Y, make_kernel("rbf", 0.5), B, 10.0,
        ...                                         0.1, 0.1)
        >>> rule = MultiTaskMartingaleMixtureRule(bound)
        >>> weights = torch.tensor([0.5, 0.5], dtype=torch.float64)
        >>> test_X = torch.rand(4, 1, dtype=torch.float64)
        >>> values = rule.acquisition(LinearScalarization(weights))(test_X.unsqueeze(-2))
        >>> torch.equal(values, bound.upper(test_X, weights=weights))
        True
    """

    def __init__(
        self,
        bound: MultiTaskMartingaleMixtureBound,
        alphas: float | Sequence[float] | Tensor | None = None,
    ) -> None:
        if not isinstance(bound, MultiTaskMartingaleMixtureBound):
            raise TypeError(
                f"bound must be a MultiTaskMartingaleMixtureBound, got {type(bound).__name__}"
            )
        self.bound = bound
        self.alphas = None if alphas is None else check_alphas(alphas)

    def acquisition(self, scalarization: Scalarization) -> ScalarizedMartingaleMixtureUCB:
        """``u_{t-1}`` of ``scalarization`` on the data seen so far."""
        return ScalarizedMartingaleMixtureUCB(self.bound, scalarization, alphas=self.alphas)

    def maximize(
        self, domain: Domain, generator: torch.Generator | None, scalarization: Scalarization
    ) -> Tensor:
        """The maximizer of ``u_{t-1}`` over ``domain``: ``maximize_acquisition`` (the first
        maximizer on a finite domain), or with the exact bound on a finite domain and
        data, ``screened_argmax`` (the same point)."""
        if self.alphas is None and isinstance(domain, FiniteDomain):
            if self.bound.num_observations > 0:
                return self.screened_argmax(domain.points, scalarization)
        x, _ = maximize_acquisition(self.acquisition(scalarization), domain, generator)
        return x.detach()

    def screened_argmax(self, points: Tensor, scalarization: Scalarization) -> Tensor:
        r"""The first maximizer over ``points`` (``N x d``) of the exact ``u_{t-1}``,
        screened by the grid bound (``utils.screened_argmax`` with exact ties only, the
        tie-breaking of ``optimize_acqf_discrete``). The grid: three points per decade over
        ``alpha_search.search_range`` of the spectrum. On the Kronecker route the points
        are the bound's tracked candidates (``track_candidates``: kernel values read from
        ``k(D, D)``) and the linear or Chebyshev bound is assembled from
        ``candidate_upper``, as ``ScalarizedMartingaleMixtureUCB`` assembles it from
        ``upper``.

        Returns:
            The chosen point (``d``).
        """
        bound = self.bound
        functional = _scalarized_functional(scalarization, bound.num_tasks)
        tracked = functional is not None and bound.track_candidates(points)
        low, high = search_range(bound.spectrum().eigenvalues, bound.base_alpha)
        decades = math.log10(high / low)
        grid = torch.logspace(
            math.log10(low), math.log10(high), max(int(3 * decades) + 1, 3), dtype=_DTYPE
        )
        with torch.no_grad():
            if tracked:
                weights, combine = functional
                upper = combine(bound.candidate_upper(None, weights, alphas=grid))

                def score(indices: Tensor) -> Tensor:
                    return combine(bound.candidate_upper(indices, weights))

            else:
                screen = ScalarizedMartingaleMixtureUCB(bound, scalarization, alphas=grid)
                exact = ScalarizedMartingaleMixtureUCB(bound, scalarization, alphas=None)
                upper = screen(points.unsqueeze(-2)).to(_DTYPE)

                def score(indices: Tensor) -> Tensor:
                    return exact(points[indices].unsqueeze(-2)).to(_DTYPE)

            index = screened_argmax(upper, score, rtol=0.0)
        return points[index].detach()

    def update(self, X: Tensor, Y: Tensor, generator: torch.Generator | None = None) -> None:
        """Append ``y_t`` (all ``n`` tasks) at ``x_t`` to the bound."""
        self.bound.append_observations(X, Y)

    def diagnostics(self) -> dict[str, float]:
        """``R_t^2`` of the mixture over the scalar observations (paper 002, eq. (8))."""
        return {"radius_squared": float(self.bound.radius_squared)}

    def settings(self) -> dict[str, Any]:
        """The bound's parameters (stored in the run file's header)."""
        bound = self.bound
        return {
            "rkhs_norm_bound": bound.rkhs_norm_bound,
            "noise_std": bound.noise_std,
            "delta": bound.delta,
            "mixture_scale": bound.mixture_scale,
            "alphas": None if self.alphas is None else self.alphas.tolist(),
        }


def _scalarized_functional(
    scalarization: Scalarization, num_tasks: int
) -> tuple[Tensor, Callable[[Tensor], Tensor]] | None:
    """The functionals ``W`` (``F x n``) whose bounds give ``ScalarizedMartingaleMixtureUCB``'s
    value (its per-task form) and the map from their bounds (``k x F``) to it: ``w`` for
    a linear scalarization (its own bound), the unit vectors for a Chebyshev one (``s``
    of the per-task bounds); ``None`` for anything else, or weights that are not one
    vector of ``n``."""
    weights = getattr(scalarization, "weights", None)
    if not isinstance(weights, Tensor) or tuple(weights.shape) != (num_tasks,):
        return None
    if isinstance(scalarization, LinearScalarization):
        return weights.detach().to(_DTYPE).reshape(1, -1), lambda values: values[:, 0]
    if isinstance(scalarization, ChebyshevScalarization):
        if tuple(scalarization.reference_point.shape) != (num_tasks,):
            return None
        return torch.eye(num_tasks, dtype=_DTYPE), scalarization
    return None


def task_indexed_norm_bound(
    rkhs_norm_bound: float, task_deviation: float, num_tasks: int, b: float
) -> float:
    r"""``B_mt = B sqrt(N (1 + b epsilon^2))``, a bound on the RKHS norm of ``f`` for the
    kernel ``[K_task(b)]_{ij} k(x, x')``.

    With ``K_task(b) = I / (1 + b) + b / (1 + b) 11^T / N`` (paper 001, eq. 2; the
    covariance of ``UniformSimilarityTaskKernel.from_b(N, b)``, ``omega = 1 / (1 + b)``:
    the same matrix, no constant factor) the norm is, with ``A(b) = K_task(b)^{-1} =
    (1 + b) I - b 11^T / N`` (paper 001, Section A.1, eq. 15-16),

    .. math::
        \|f\|^2 = \sum_{ij} A_{ij} \langle f_i, f_j \rangle_k
        = \sum_i \|f_i\|_k^2 + b \sum_i \|f_i - f_{avg}\|_k^2 \le N B^2 (1 + b \epsilon^2)

    if ``||f_i||_k <= B`` and ``||f_i - f_avg||_k <= epsilon B`` for every task (eq. 5).

    Args:
        rkhs_norm_bound: ``B > 0``, the bound on each ``||f_i||_k``.
        task_deviation: ``epsilon >= 0`` of eq. 5.
        num_tasks: ``N >= 1``.
        b: Kernel parameter ``b >= 0``, finite (``b = inf`` leaves the norm of
            ``K_task(inf) = 11^T / N`` undefined unless the tasks are equal).

    Returns:
        ``B_mt`` (units of ``f``).

    Raises:
        TypeError, ValueError: For a non-positive ``B``, a negative ``epsilon``, ``N <
            1`` or ``b`` negative, NaN or infinite.

    Example:
        >>> from botorch_mtucb.bandits import task_indexed_norm_bound
        >>> task_indexed_norm_bound(1.0, 0.5, num_tasks=4, b=4.0)  # sqrt(4 (1 + 4 / 4))
        2.8284271247461903
    """
    bound = check_positive(rkhs_norm_bound, "rkhs_norm_bound")
    numeric = isinstance(task_deviation, (int, float)) and not isinstance(task_deviation, bool)
    if not (numeric and math.isfinite(task_deviation) and task_deviation >= 0):
        raise ValueError(f"task_deviation must be a finite number >= 0, got {task_deviation!r}")
    if isinstance(num_tasks, bool) or not isinstance(num_tasks, int) or num_tasks < 1:
        raise ValueError(f"num_tasks must be an int >= 1, got {num_tasks!r}")
    b = check_b(b)
    if math.isinf(b):
        raise ValueError("b must be finite: the RKHS of K_task(inf) holds only equal tasks")
    return bound * math.sqrt(num_tasks * (1.0 + b * task_deviation**2))


class TaskIndexedMartingaleMixtureRule:
    r"""The exact multi-task martingale-mixture bound on paper 001's task-indexed data.

    One ``MultiTaskMartingaleMixtureBound`` on the observations ``(i_s, x_s, y_s)`` with
    the kernel ``[K_task(b)]_{ij} k(x, x')`` (``UniformSimilarityTaskKernel.from_b(N,
    b)``) and the norm bound ``B_mt = task_indexed_norm_bound(B, epsilon, N, b)``; the
    bound needs no regularization ``lambda`` (the dual of eq. (12) optimizes its own);
    ``b = 0`` (``K_task(0) = I``) is the independent baseline, with one confidence set for
    all tasks. ``task_argmax`` is the per-task bound's maximizer over the task's arms
    (``screened_argmax``: screened by the grid ``SCREEN_DECADES`` times ``sigma^2 / c``,
    each arm's value the smaller of its exact and screened bounds, both bounds of ``f``),
    arms that tie up to round-off drawn at random; its ``gain`` is the half-width
    ``(u - l) / 2`` there (paper 001's ``beta sigma`` in MT-AL's task rule).

    **Empty confidence sets.** If the data contradict ``B_mt`` and ``sigma`` (a
    misspecified model: the set of Lemma 4.2 of paper 002 is empty), ``on_empty="raise"``
    raises ``EmptyConfidenceSetError``; ``on_empty="grow"`` raises the norm bound to
    ``max(B_mt, choose_rkhs_norm_bound(...))`` (the package's data-driven ``B``, whose set
    contains the kernel ridge mean) and rebuilds the bound on the same data. The grown
    bound is a practical choice, not paper 002's guarantee (``B`` then depends on the data).

    Args:
        domains: One ``FiniteDomain`` per task, or one shared with ``num_tasks``.
        data_kernel: The input kernel ``k`` (fixed; e.g. a unit-variance linear kernel).
        b: Kernel parameter ``b >= 0`` (finite) of ``K_task(b)``.
        rkhs_norm_bound: ``B >= max_i ||f_i||_k``.
        task_deviation: ``epsilon`` of eq. 5 (for ``B_mt``).
        delta: Confidence level in ``(0, 1)``.
        noise_std: ``sigma``, the sub-Gaussian level of the noise.
        mixture_scale: ``c`` of paper 002's eq. (8).
        on_empty: ``"raise"`` or ``"grow"`` (above).
        num_tasks: Needed only with a single shared domain.

    Raises:
        TypeError: If the domains are not ``FiniteDomain`` s.
        ValueError: For an unknown ``on_empty``, or arguments that
            ``task_indexed_norm_bound`` or the bound reject.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import TaskIndexedMartingaleMixtureRule
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> rule = TaskIndexedMartingaleMixtureRule(arms, LinearKernel().double(), 0.5, 1.0,
        ...                                         0.2, num_tasks=2)
        >>> rule.observe(0, arms.points[1], torch.tensor(0.3))
        >>> rule.bound.num_observations, rule.task_upper(1).shape
        (1, torch.Size([3]))
    """

    def __init__(
        self,
        domains: Domain | Sequence[Domain],
        data_kernel: Kernel,
        b: float,
        rkhs_norm_bound: float,
        task_deviation: float,
        delta: float = 0.01,
        noise_std: float = 1.0,
        mixture_scale: float = 1.0,
        on_empty: str = "raise",
        num_tasks: int | None = None,
    ) -> None:
        self.domains = per_task_domains(domains, num_tasks)
        if not self.domains or not all(isinstance(d, FiniteDomain) for d in self.domains):
            raise TypeError("MT-CMM needs one FiniteDomain per task")
        self.num_tasks = len(self.domains)
        self.b = check_b(b)
        self.on_empty = check_choice(on_empty, "on_empty", ON_EMPTY)
        self.initial_norm_bound = task_indexed_norm_bound(
            rkhs_norm_bound, task_deviation, self.num_tasks, self.b
        )
        self.norm_bound = self.initial_norm_bound  # B_mt, or the grown B
        self.task_kernel = UniformSimilarityTaskKernel.from_b(self.num_tasks, self.b, dtype=_DTYPE)
        self.data_kernel = data_kernel
        self.delta, self.noise_std, self.mixture_scale = delta, noise_std, mixture_scale
        self._points = [d.points.to(_DTYPE) for d in self.domains]
        self._unit = torch.eye(self.num_tasks, dtype=_DTYPE)
        dim = self._points[0].shape[-1]
        self.bound = self._build(
            torch.zeros(0, dim, dtype=_DTYPE),
            torch.zeros(0, 1, dtype=_DTYPE),
            torch.zeros(0, dtype=torch.long),
        )
        self.num_growths = 0  # how often on_empty="grow" raised the norm bound
        self._half_widths: dict[int, float] = {}  # of the last choice on each task
        self._last_task = -1  # the task observed last

    def _build(self, X: Tensor, Y: Tensor, tasks: Tensor) -> MultiTaskMartingaleMixtureBound:
        return MultiTaskMartingaleMixtureBound(
            X, Y, self.data_kernel, self.task_kernel, self.norm_bound, self.noise_std,
            self.delta, self.mixture_scale, train_tasks=tasks,
        )  # fmt: skip

    # ---------------------------------------------------------------- bounds
    def task_upper(self, task: int) -> Tensor:
        """``u_{t-1}(task, x)`` at every arm of ``task`` (float64, ``A``)."""
        return self.bound.upper(self._points[task], weights=self._unit[task])

    def task_interval(self, task: int, index: int) -> tuple[Tensor, Tensor]:
        """``u_{t-1}(task, x)`` and ``l_{t-1}(task, x)`` at arm ``index`` of ``task``
        (float64, ``1`` each)."""
        x = self._points[task][index : index + 1]
        weights = self._unit[task]
        return self.bound.upper(x, weights), self.bound.lower(x, weights)

    def ucb_maximizer(self, task: int, generator: torch.Generator | None) -> int:
        """The index of ``argmax_x u_{t-1}(task, x)`` over the arms of ``task``
        (``screened_argmax``; ties up to round-off drawn from ``generator``)."""
        points, weights = self._points[task], self._unit[task]
        alphas = self.bound.base_alpha * 10.0 ** torch.tensor(SCREEN_DECADES, dtype=_DTYPE)
        screened = self.bound.upper(points, weights, alphas=alphas)

        def score(indices: Tensor) -> Tensor:
            return torch.minimum(self.bound.upper(points[indices], weights), screened[indices])

        return screened_argmax(screened, score, generator)

    def task_argmax(self, task: int, generator: torch.Generator | None) -> TaskChoice:
        """The arm ``argmax_x u_{t-1}(task, x)``, its bound and half-width."""
        index = self.ucb_maximizer(task, generator)
        upper, lower = self.task_interval(task, index)
        half_width = float(upper - lower) / 2.0
        self._half_widths[task] = half_width
        return TaskChoice(self.domains[task].points[index], float(upper), half_width)

    # ---------------------------------------------------------------- update
    def observe(self, task: int, x: Tensor, y: float | Tensor) -> None:
        """Append ``y = f(task, x) + noise`` to the bound; then apply ``on_empty`` if the
        data contradict the norm bound.

        Raises:
            EmptyConfidenceSetError: With ``on_empty="raise"``, if the set is empty.
        """
        self._last_task = int(task)
        X = x.reshape(1, -1).to(_DTYPE)
        Y = torch.as_tensor(y, dtype=_DTYPE).reshape(1, 1)
        self.bound.append_observations(X, Y, torch.tensor([int(task)]))
        try:
            self.bound.check_nonempty()
        except EmptyConfidenceSetError:
            if self.on_empty == "raise":
                raise
            self._grow()

    def _grow(self) -> None:
        bound = self.bound
        with torch.no_grad():
            X, tasks = bound.train_X, bound.train_tasks
            gram = bound.kernel.observation_covariance(X, tasks, X, tasks)
        grown = choose_rkhs_norm_bound(
            gram, bound.train_Y, self.noise_std, self.delta, self.mixture_scale
        )
        self.norm_bound = max(self.norm_bound, grown)
        self.bound = self._build(X, bound.train_Y.unsqueeze(-1), tasks)
        self.num_growths += 1

    def diagnostics(self) -> dict[str, float]:
        """``R_t^2``, the norm bound in use, the number of growths and the half-width of
        the last choice on the task observed last."""
        return {
            "radius_squared": float(self.bound.radius_squared),
            "rkhs_norm_bound": self.norm_bound,
            "growths": float(self.num_growths),
            "width": self._half_widths.get(self._last_task, math.nan),
        }

    def settings(self) -> dict[str, Any]:
        """The parameters that change what the rule does (run-file header)."""
        return {
            "b": self.b,
            "rkhs_norm_bound": self.initial_norm_bound,
            "noise_std": self.noise_std,
            "delta": self.delta,
            "mixture_scale": self.mixture_scale,
            "on_empty": self.on_empty,
        }
