"""What paper 001's MT-UCB and multi-task active learners share: one agnostic multi-task
regression with kernel ``K_task(b)``, and the width ``beta_t`` of a chosen rule of
Theorem 1 (``multitask_widths``), recomputed after every observation.

Source: paper 001 (Sessa et al. 2023), Section 2 (the regression, eqs. 3-4), Theorem 1
and Table 1 (the widths), eq. 7 (the confidence bounds).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.task_indexed.regression import AgnosticMultiTaskRegression
from botorch_mtucb.confidence import WIDTH_RULES
from botorch_mtucb.utils.checks import check_choice
from botorch_mtucb.utils.domains import Domain


class TaskIndexedUCBPolicy:
    r"""Base of MT-UCB and the active learners: the regression and its width ``beta_t``.

    Subclasses implement ``select`` / ``update`` (the bandit protocol) and call
    ``observe(task, x, y)`` to condition on an observation.

    Args:
        domains: One ``FiniteDomain`` / ``BoxDomain`` per task (or one shared domain
            with ``num_tasks``).
        data_kernel: The input kernel ``k_X`` (fixed).
        b: Kernel parameter ``b >= 0`` (``math.inf`` allowed).
        rkhs_norm_bound: ``B >= max_i ||f_i||``.
        task_deviation: ``epsilon`` of eq. 5 assumed by the widths, in ``[0, 2]``.
        delta: Confidence level in ``(0, 1)``.
        noise_std: Sub-Gaussian noise level assumed by the widths.
        regularization: ``lambda``; default ``(N + b) / (N + bN)`` (Theorem 2).
        width_rule: Which width of ``multitask_widths`` to use: ``"new"`` (Theorem 1, with
            the data-dependent large-b width in the minimum) or ``"naive"``,
            ``"small_b"``, ``"large_b"``, ``"large_b_data_dependent"``.
        num_tasks: Needed only with a single shared domain.
        name: Name used in results (default: the class's ``default_name``).

    Raises:
        ValueError: For an unknown ``width_rule``, or arguments that
            ``AgnosticMultiTaskRegression`` or ``multitask_widths`` reject.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed.policy import TaskIndexedUCBPolicy
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = TaskIndexedUCBPolicy(arms, LinearKernel().double(), 1.0, 1.0, 0.5,
        ...                               num_tasks=2)
        >>> policy.observe(0, arms.points[1], torch.tensor(0.3))
        >>> policy.regression.num_observations
        1
    """

    default_name = "TaskIndexedUCB"

    def __init__(
        self,
        domains: Domain | Sequence[Domain],
        data_kernel: Kernel,
        b: float,
        rkhs_norm_bound: float,
        task_deviation: float,
        delta: float = 0.01,
        noise_std: float = 1.0,
        regularization: float | None = None,
        width_rule: str = "new",
        num_tasks: int | None = None,
        name: str | None = None,
    ) -> None:
        self.name = name or self.default_name
        self.width_rule = check_choice(width_rule, "width_rule", WIDTH_RULES)
        self.regression = AgnosticMultiTaskRegression(
            domains, data_kernel, b, regularization, num_tasks=num_tasks
        )
        self.num_tasks = self.regression.num_tasks
        self.rkhs_norm_bound = rkhs_norm_bound
        self.task_deviation = task_deviation
        self.delta = delta
        self.noise_std = noise_std
        self._width = self.width()

    def width(self) -> float:
        """``beta_t(b)`` of the width rule for the data seen so far (same for every task)."""
        widths = self.regression.widths(
            self.rkhs_norm_bound, self.task_deviation, self.delta, self.noise_std
        )
        return widths[self.width_rule]

    def observe(self, task: int, x: Tensor, y: Tensor) -> None:
        """Condition on ``y = f(task, x) + noise`` and recompute the width."""
        self.regression.update(task, x, y)
        self._width = self.width()
