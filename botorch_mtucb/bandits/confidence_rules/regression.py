"""The agnostic multi-task regression of paper 001 as the state of its bandits.

One instance holds the regression of Section 2.1 for one kernel parameter ``b`` and
regularization ``lambda`` (eqs. 3-4, kernel ``[K_task(b)]_ij k_X(x, x')``), the data
statistics that the widths of Theorem 1 need (``gamma_t^mt``, ``gamma_t^st`` and the
effective dimension of eq. 26), and the confidence bounds of eq. 7.

The posterior is a ``VectorValuedGP`` on task-indexed data. On finite arm sets
(``FiniteDomain`` per task) it tracks every task's arms (``track_candidates``: the exact
posterior at the ``A`` arms, ``O(M A)`` per round); on boxes it is maximized with
``TaskConditionedUCB`` / ``TaskConditionedLCB`` and BoTorch's ``optimize_acqf``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB
from botorch_mtucb.bandits.confidence_rules.base import per_task_domains
from botorch_mtucb.confidence.agnostic_widths import multitask_regularization, multitask_widths
from botorch_mtucb.confidence.constant_checks import check_finite_width
from botorch_mtucb.confidence.information_gain import (
    IncrementalInformationGain,
    task_kernel_matrix,
)
from botorch_mtucb.kernels.task_checks import check_b
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils.domains import (
    Domain,
    FiniteDomain,
    find_rows,
    maximize_acquisition,
)
from botorch_mtucb.utils.random import argmax_random_ties


class AgnosticMultiTaskRegression:
    r"""Kernel ridge regression with ``K_task(b)`` and its confidence bounds (paper 001).

    Args:
        domains: One ``FiniteDomain`` or ``BoxDomain`` per task (all finite, or all
            boxes); a single domain is shared by ``num_tasks`` tasks.
        data_kernel: The input kernel ``k_X`` (fixed; e.g. a unit-variance
            ``gpytorch.kernels.LinearKernel``).
        b: Kernel parameter ``b >= 0`` (``math.inf``: all tasks one task).
        regularization: ``lambda``; default ``(N + b) / (N + bN)`` (Theorem 2).
        num_tasks: Needed only when ``domains`` is a single domain.

    Raises:
        ValueError: For a mix of finite and box domains, ``b < 0`` or
            ``regularization <= 0``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import AgnosticMultiTaskRegression
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> regression = AgnosticMultiTaskRegression(arms, LinearKernel().double(), b=1.0,
        ...                                          num_tasks=2)
        >>> regression.update(0, arms.points[1], 0.5)
        >>> x, mean, std = regression.ucb_maximizer(1, width=2.0)
        >>> regression.num_observations, x.shape
        (1, torch.Size([3]))
    """

    def __init__(
        self,
        domains: Domain | Sequence[Domain],
        data_kernel: Kernel,
        b: float,
        regularization: float | None = None,
        num_tasks: int | None = None,
    ) -> None:
        self.domains = per_task_domains(domains, num_tasks)
        self.num_tasks = len(self.domains)
        if self.num_tasks == 0:
            raise ValueError("domains must hold one domain per task")
        self.b = check_b(b)
        if regularization is None:
            regularization = multitask_regularization(self.num_tasks, self.b)
        self.regularization = float(regularization)
        if not self.regularization > 0:
            raise ValueError(f"regularization must be > 0, got {regularization}")
        self.data_kernel = data_kernel
        finite = [isinstance(d, FiniteDomain) for d in self.domains]
        if any(finite) and not all(finite):
            raise ValueError("domains must be all FiniteDomain or all BoxDomain")
        self.finite = all(finite)
        reference = self.domains[0].points if self.finite else self.domains[0].bounds
        self.dtype = reference.dtype
        task_covariance = task_kernel_matrix(
            self.num_tasks, self.b, reference.dtype, reference.device
        )
        self.model = VectorValuedGP(
            reference.new_zeros(0, reference.shape[-1]),
            reference.new_zeros(0, 1),
            data_kernel.to(reference),
            task_covariance,
            self.regularization,
            train_tasks=torch.zeros(0, dtype=torch.long),
        )
        if self.finite:  # the posterior at every task's arms, kept as observations arrive
            self.model.track_candidates(self.domains)
        scale = math.inf if math.isinf(self.b) else self.regularization * (1 + self.b)
        self._task_statistics = [
            IncrementalInformationGain(data_kernel, self.regularization, scale, like=reference)
            for _ in range(self.num_tasks)
        ]

    # ------------------------------------------------------------ statistics
    @property
    def num_observations(self) -> int:
        """``t``, the number of observations so far."""
        return sum(statistics.num_observations for statistics in self._task_statistics)

    @property
    def info_gain_mt(self) -> float:
        """``gamma_t^mt(b) = 1/2 ln det(I + K_t / lambda)`` of the data seen."""
        return float(self.model.information_gain())

    @property
    def info_gain_st(self) -> float:
        """``gamma_t^st``: the largest ``1/2 ln det(I + K_{t_i} / lambda)`` over tasks."""
        return max(statistics.information_gain for statistics in self._task_statistics)

    @property
    def effective_dimension(self) -> float:
        """``S = sum_l Tr(K_{t_l} (K_{t_l} + lambda (1 + b) I)^{-1})`` (eq. 26)."""
        return sum(statistics.effective_dimension for statistics in self._task_statistics)

    @property
    def kernel_trace(self) -> float:
        """``sum_l Tr(K_{t_l}) = sum_s k_X(x_s, x_s)`` over the observations (eq. 27's
        ``t`` when ``k_X(x, x) <= 1``)."""
        return sum(statistics.kernel_trace for statistics in self._task_statistics)

    def widths(
        self, rkhs_norm_bound: float, task_deviation: float, delta: float, noise_std: float = 1.0
    ) -> dict[str, float]:
        """All widths of ``multitask_widths`` for the data seen (floats, keyed by name)."""
        widths = multitask_widths(
            self.num_tasks,
            self.b,
            rkhs_norm_bound,
            task_deviation,
            self.regularization,
            delta,
            self.info_gain_mt,
            self.info_gain_st,
            self.num_observations,
            noise_std=noise_std,
            effective_dimension=self.effective_dimension,
            kernel_trace=self.kernel_trace,
        )
        return {k: float(v) for k, v in widths.items()}

    # ---------------------------------------------------------------- bounds
    def ucb_maximizer(
        self, task: int, width: float, generator: torch.Generator | None = None
    ) -> tuple[Tensor, float, float]:
        """``argmax_x ucb_t(task, x)``: the point, its posterior mean and std.

        On finite domains, arms whose UCBs tie up to round-off are drawn uniformly at
        random from ``generator`` (``argmax_random_ties``); ``generator=None`` takes the
        first of them.
        """
        check_finite_width(width)
        if self.finite:
            mean, std = self.arm_moments(task)
            index = argmax_random_ties(mean + width * std, generator)
            return self.domains[task].points[index], float(mean[index]), float(std[index])
        acquisition = TaskConditionedUCB(self.model, task, width)
        x, _ = maximize_acquisition(acquisition, self.domains[task], generator)
        mean, std = self.mean_std_at(task, x)
        return x.detach(), mean, std

    def max_lcb(self, task: int, width: float, generator: torch.Generator | None = None) -> float:
        """``max_x lcb_t(task, x)`` over the task's domain."""
        check_finite_width(width)
        if self.finite:
            mean, std = self.arm_moments(task)
            return float((mean - width * std).max())
        acquisition = TaskConditionedLCB(self.model, task, width)
        _, value = maximize_acquisition(acquisition, self.domains[task], generator)
        return float(value)

    def mean_std_at(self, task: int, x: Tensor) -> tuple[float, float]:
        """Posterior mean and std of ``f(task, x)`` (``x``: an arm on finite domains)."""
        if self.finite:
            index = self.arm_index(task, x)
            mean, std = self.arm_moments(task)
            return float(mean[index]), float(std[index])
        with torch.no_grad():
            posterior = self.model.posterior(x.reshape(1, 1, -1), output_indices=[task])
        return float(posterior.mean), float(posterior.variance.clamp_min(0.0).sqrt())

    def sample(self, task: int, generator: torch.Generator | None = None) -> Tensor:
        """A joint posterior sample at the arms of ``task`` (finite domains only)."""
        if not self.finite:
            raise TypeError("posterior samples over a task need finite domains (FiniteDomain)")
        return self.model.sample_candidates(task, generator)

    def arm_index(self, task: int, x: Tensor) -> int:
        """The index of ``x`` among the arms of ``task`` (finite domains).

        Raises:
            ValueError: If ``task`` is out of range or ``x`` is not one of its arms.
        """
        if not 0 <= task < self.num_tasks:
            raise ValueError(f"task must lie in [0, {self.num_tasks - 1}], got {task}")
        index = find_rows(self.domains[task].points, x.reshape(-1))
        if index is None:
            raise ValueError("x is not one of the arms of this task")
        return int(index[0])

    def arm_moments(self, task: int) -> tuple[Tensor, Tensor]:
        """Posterior mean and std at the arms of ``task`` (finite domains; two tensors of
        its number of arms): from the tracked candidates, or the model's posterior if
        they could not be tracked.

        Raises:
            ValueError: If ``task`` is out of range.
        """
        if not 0 <= task < self.num_tasks:
            raise ValueError(f"task must lie in [0, {self.num_tasks - 1}], got {task}")
        candidates = self.model.candidates
        if candidates is not None:
            mean, variance = candidates.task_moments(task)
        else:
            with torch.no_grad():
                points = self.domains[task].points.unsqueeze(-2)
                posterior = self.model.posterior(points, output_indices=[task])
            mean, variance = posterior.mean.reshape(-1), posterior.variance.reshape(-1)
        return mean, variance.clamp_min(0.0).sqrt()

    # ---------------------------------------------------------------- update
    def update(self, task: int, x: Tensor, y: float | Tensor) -> None:
        """Condition on ``y = f(task, x) + noise`` and refresh the task's statistics."""
        x = x.reshape(-1).to(self.dtype)
        y = float(torch.as_tensor(y).reshape(()))
        if self.finite:
            self.arm_index(task, x)  # an arm of the task, or a ValueError
        self.model.append_observations(
            x.reshape(1, -1),
            torch.tensor([[y]], dtype=self.dtype),
            train_tasks=torch.tensor([task]),
        )
        self._task_statistics[task].append(x)
