r"""MT-CMM-UCB and MT-CMM-AL: paper 001's MT-UCB and MT-AL with the exact multi-task
martingale-mixture bound in place of Theorem 1's widths.

Source: paper 001 (Sessa et al. 2023), Algorithms 1 and 2, eq. 2 (``K_task(b)``),
Sections A.1-A.2 (the norm of ``f`` in the RKHS of ``K_task(b) (x) k``); paper 002,
Section 4 (the CMM bound, eqs. (8), (10), (12)), applied to task-indexed data by
``MultiTaskMartingaleMixtureBound``; the combination is issue 12's.

Both policies keep one ``MultiTaskMartingaleMixtureBound`` on the observations
``(i_s, x_s, y_s)`` with the kernel ``[K_task(b)]_{ij} k(x, x')`` (the task kernel
``UniformSimilarityTaskKernel.from_b(N, b)``) and the norm bound ``B_mt`` of
``task_indexed_norm_bound``; each observation is appended (``append_observations``).

* MT-CMM-UCB (Algorithm 1): for the revealed task ``i_t``,
  ``x_t = argmax_x u_{t-1}(i_t, x)``, the bound's per-task upper bound.
* MT-CMM-AL (Algorithm 2): ``x_t^i = argmax_x u_{t-1}(i, x)`` for every task and
  ``i_t = argmax_i (u_{t-1}(i, x_t^i) - l_{t-1}(i, x_t^i)) / 2``: MT-AL's rule with the
  bound's half-width in place of ``beta_{t-1} sigma_{t-1}(i, x_t^i)``.

The bound needs no regularization ``lambda`` (the dual of eq. (12) optimizes its own);
``b = 0`` (``K_task(0) = I``) is the independent baseline, with one confidence set for
all tasks. Arms whose bounds tie up to round-off are drawn at random
(``argmax_random_ties``). Finite domains (one ``FiniteDomain`` per task) only.

**Screening.** The exact bound's alpha search costs tens of evaluations per arm; the
argmax over a task's arms first evaluates the bound on a few alphas (``SCREEN_DECADES``
times ``sigma^2 / c``: paper 002's DMM bound, never below the exact one), then the exact
bound at the best-screened arm, ``u*``, and then only at the arms whose screened value is
at least ``u* (1 - SCREEN_RTOL)``: no other arm can reach ``u*``. The value of an arm is
the smaller of its exact and screened bounds (both bound ``f``), so the argmax is that
of the exact bound over all arms up to the accuracy of its alpha search.

**Empty confidence sets.** If the data contradict ``B_mt`` and ``sigma`` (a misspecified
model: the set of Lemma 4.2 of paper 002 is empty), ``on_empty="raise"`` raises
``EmptyConfidenceSetError``; ``on_empty="grow"`` raises the norm bound to
``max(B_mt, choose_rkhs_norm_bound(...))`` (the package's data-driven ``B``, whose set
contains the kernel ridge mean) and rebuilds the bound on the same data. The grown
bound is a practical choice, not paper 002's guarantee (``B`` then depends on the data).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.environments.task_indexed import ActiveLearningAction
from botorch_mtucb.confidence.martingale_mixture import (
    EmptyConfidenceSetError,
    choose_rkhs_norm_bound,
)
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.utils.checks import check_b, check_choice, check_positive
from botorch_mtucb.utils.domains import Domain, FiniteDomain
from botorch_mtucb.utils.random import argmax_random_ties

ON_EMPTY = ("raise", "grow")
SCREEN_DECADES = (-1, 0, 1, 2, 3, 4)  # the screening alphas: 10^k sigma^2 / c
SCREEN_RTOL = 1e-6  # arms screened within this (relative) of u* are evaluated exactly
_DTYPE = torch.float64


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
        >>> from botorch_mtucb.bandits.task_indexed.mt_cmm import task_indexed_norm_bound
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


class TaskIndexedCMMPolicy:
    r"""Base of MT-CMM-UCB and MT-CMM-AL: the multi-task CMM bound on the data seen.

    Subclasses implement ``select`` / ``update`` and call ``observe(task, x, y)``.

    Args:
        domains: One ``FiniteDomain`` per task, or one shared with ``num_tasks``.
        data_kernel: The input kernel ``k`` (fixed; e.g. a unit-variance linear kernel).
        b: Kernel parameter ``b >= 0`` (finite) of ``K_task(b)``.
        rkhs_norm_bound: ``B >= max_i ||f_i||_k``.
        task_deviation: ``epsilon`` of eq. 5 (``B_mt = task_indexed_norm_bound(B,
            epsilon, N, b)``).
        delta: Confidence level in ``(0, 1)``.
        noise_std: ``sigma``, the sub-Gaussian level of the noise.
        mixture_scale: ``c`` of paper 002's eq. (8).
        on_empty: ``"raise"`` or ``"grow"`` (module docstring).
        num_tasks: Needed only with a single shared domain.
        name: Name used in results (default: the class's ``default_name``).

    Raises:
        TypeError: If the domains are not ``FiniteDomain`` s.
        ValueError: For an unknown ``on_empty``, or arguments that
            ``task_indexed_norm_bound`` or the bound reject.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed.mt_cmm import TaskIndexedCMMPolicy
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = TaskIndexedCMMPolicy(arms, LinearKernel().double(), 0.5, 1.0, 0.2,
        ...                               num_tasks=2)
        >>> policy.observe(0, arms.points[1], torch.tensor(0.3))
        >>> policy.bound.num_observations, policy.task_upper(1).shape
        (1, torch.Size([3]))
    """

    default_name = "TaskIndexedCMM"

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
        name: str | None = None,
    ) -> None:
        self.name = name or self.default_name
        if isinstance(domains, FiniteDomain):
            if num_tasks is None:
                raise ValueError("num_tasks is required when a single domain is given")
            domains = [domains] * num_tasks
        self.domains = list(domains)
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

    def _build(self, X: Tensor, Y: Tensor, tasks: Tensor) -> MultiTaskMartingaleMixtureBound:
        return MultiTaskMartingaleMixtureBound(
            X, Y, self.data_kernel, self.task_kernel, self.norm_bound, self.noise_std,
            self.delta, self.mixture_scale, train_tasks=tasks,
        )  # fmt: skip

    # ---------------------------------------------------------------- bounds
    def task_upper(self, task: int) -> Tensor:
        """``u_{t-1}(task, x)`` at every arm of ``task`` (float64, ``A``)."""
        return self.bound.upper(self._points[task], weights=self._unit[task])

    def task_half_width(self, task: int, index: int) -> float:
        """``(u_{t-1} - l_{t-1}) / 2`` at arm ``index`` of ``task``."""
        x = self._points[task][index : index + 1]
        weights = self._unit[task]
        return float(self.bound.upper(x, weights) - self.bound.lower(x, weights)) / 2.0

    def ucb_maximizer(self, task: int, generator: torch.Generator | None) -> int:
        """``argmax_x u_{t-1}(task, x)`` over the arms of ``task`` (screened, module
        docstring): the arm's index, ties drawn from ``generator``."""
        points, weights = self._points[task], self._unit[task]
        alphas = self.bound.base_alpha * 10.0 ** torch.tensor(SCREEN_DECADES, dtype=_DTYPE)
        screened = self.bound.upper(points, weights, alphas=alphas)
        top = int(screened.argmax())
        best = min(float(self.bound.upper(points[top : top + 1], weights)), float(screened[top]))
        candidates = (screened >= best - SCREEN_RTOL * abs(best)).nonzero().reshape(-1)
        exact = self.bound.upper(points[candidates], weights)
        values = torch.minimum(exact, screened[candidates])
        return int(candidates[argmax_random_ties(values, generator)])

    # ---------------------------------------------------------------- update
    def observe(self, task: int, x: Tensor, y: float | Tensor) -> None:
        """Append ``y = f(task, x) + noise`` to the bound; then apply ``on_empty`` if the
        data contradict the norm bound.

        Raises:
            EmptyConfidenceSetError: With ``on_empty="raise"``, if the set is empty.
        """
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
        """``R_t^2``, the norm bound in use and the number of growths."""
        return {
            "radius_squared": float(self.bound.radius_squared),
            "rkhs_norm_bound": self.norm_bound,
            "growths": float(self.num_growths),
        }

    def settings(self) -> dict[str, Any]:
        """The parameters that change what the policy does (run-file header)."""
        return {
            "b": self.b,
            "rkhs_norm_bound": self.initial_norm_bound,
            "noise_std": self.noise_std,
            "delta": self.delta,
            "mixture_scale": self.mixture_scale,
            "on_empty": self.on_empty,
        }


class MultiTaskCMMUCB(TaskIndexedCMMPolicy):
    r"""MT-CMM-UCB: Algorithm 1 of paper 001 with the multi-task CMM bound,
    ``x_t = argmax_x u_{t-1}(i_t, x)`` for the revealed task ``i_t = context["task"]``.

    Args:
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        mixture_scale, on_empty, num_tasks, name: See ``TaskIndexedCMMPolicy``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import MultiTaskCMMUCB
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = MultiTaskCMMUCB(arms, LinearKernel().double(), b=1.0, rkhs_norm_bound=1.0,
        ...                          task_deviation=0.5, num_tasks=2)
        >>> x = policy.select({"task": 1}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.2]), {"task": 1}, torch.Generator())
        >>> policy.bound.num_observations, sorted(policy.diagnostics())
        (1, ['growths', 'radius_squared', 'rkhs_norm_bound', 'width'])
    """

    default_name = "MT-CMM-UCB"
    last_width = math.nan  # the half-width at the last point played

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``x_t = argmax_x u_{t-1}(i_t, x)`` over the arms of ``i_t = context["task"]``."""
        task = int(context["task"])
        index = self.ucb_maximizer(task, generator)
        self.last_width = self.task_half_width(task, index)
        return self.domains[task].points[index]

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Append ``y_t`` at ``(i_t, x_t)``."""
        self.observe(int(context["task"]), x, y)

    def diagnostics(self) -> dict[str, float]:
        """The base diagnostics and the half-width at the point played."""
        return {**super().diagnostics(), "width": self.last_width}


class MultiTaskCMMActiveLearning(TaskIndexedCMMPolicy):
    r"""MT-CMM-AL: Algorithm 2 of paper 001 with the multi-task CMM bound.

    ``x_t^i = argmax_x u_{t-1}(i, x)`` for every task ``i`` and the queried task
    ``i_t = argmax_i (u_{t-1}(i, x_t^i) - l_{t-1}(i, x_t^i)) / 2`` (MT-AL's
    ``beta_{t-1} sigma_{t-1}(i, x_t^i)`` replaced by the bound's half-width). Ties of
    arms and of tasks are drawn from the generator (arms first, task by task).

    Args:
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        mixture_scale, on_empty, num_tasks, name: See ``TaskIndexedCMMPolicy``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import MultiTaskCMMActiveLearning
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = MultiTaskCMMActiveLearning(arms, LinearKernel().double(), 1.0, 1.0, 0.5,
        ...                                     num_tasks=2)
        >>> action = policy.select({}, torch.Generator().manual_seed(0))
        >>> action.recommendations.shape
        torch.Size([2, 3])
        >>> policy.update(action, torch.tensor([0.2]), {}, torch.Generator())
        >>> policy.last_task == action.task
        True
    """

    default_name = "MT-CMM-AL"
    last_task = -1  # the task queried last (-1 before the first round)
    last_width = math.nan  # its half-width

    def select(self, context: dict[str, Any], generator: torch.Generator) -> ActiveLearningAction:
        """The queried task ``i_t`` and the recommendations ``x_t^1 .. x_t^N``."""
        points, widths = [], []
        for task in range(self.num_tasks):
            index = self.ucb_maximizer(task, generator)
            points.append(self.domains[task].points[index])
            widths.append(self.task_half_width(task, index))
        scores = torch.tensor(widths, dtype=_DTYPE)
        self.last_task = argmax_random_ties(scores, generator)
        self.last_width = widths[self.last_task]
        return ActiveLearningAction(self.last_task, torch.stack(points))

    def update(
        self,
        action: ActiveLearningAction,
        y: Tensor,
        context: dict[str, Any],
        generator: torch.Generator,
    ) -> None:
        """Append ``y_t`` at ``(i_t, x_t^{i_t})``."""
        self.last_task = action.task
        self.observe(action.task, action.query, y)

    def diagnostics(self) -> dict[str, float]:
        """The base diagnostics, the queried task and its half-width."""
        return {**super().diagnostics(), "task": float(self.last_task), "width": self.last_width}
