"""AdaMT-UCB (Algorithm 3 of paper 001): MT-UCB learners for candidate task deviations,
with a misspecification test that discards the learners the data contradict.

Source: paper 001 (Sessa et al. 2023), Section 3.2 and Appendix B.4 (Algorithm 3,
misspecification test eq. 45).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.task_indexed.regression import AgnosticMultiTaskRegression
from botorch_mtucb.confidence import (
    WIDTH_RULES,
    multitask_regularization,
    theorem2_kernel_parameter,
)
from botorch_mtucb.utils.checks import check_choice
from botorch_mtucb.utils.domains import Domain


class AdaptiveMultiTaskUCB:
    r"""AdaMT-UCB, Algorithm 3 of paper 001: MT-UCB learners for candidate deviations.

    Learner ``e`` is MT-UCB with ``epsilon = e``, the kernel parameter ``b_e`` and
    ``lambda_e = (N + b_e) / (N + b_e N)`` (Theorem 2). Each round the learner with the
    smallest remaining ``e`` plays; all learners are updated. Per epoch the algorithm
    accumulates ``U += y_t``, ``R += 2 beta^{e_t}_{t-1} sigma^{e_t}_{t-1}(i_t, x_t)`` and
    ``L^e += lcb^e_{t-1}(i_t, x_t)``, and removes ``e_t`` when (eq. 45)

    .. math::
        U + R + c \sqrt{\tau \ln(\max(\ln \tau, 1) / \delta)} < \max_e L^e,

    then starts a new epoch (``ln ln tau`` is floored at ``ln 1`` so that the term is
    defined for ``tau < e``; the last remaining candidate is never removed). Learners
    that share ``(b, lambda)`` share one regression.

    Args:
        domains, data_kernel, rkhs_norm_bound, delta, noise_std, num_tasks: As
            ``MultiTaskUCB``.
        candidate_deviations: The set ``E`` in ``(0, 2]`` (Section 5:
            ``0.1, 0.2, ..., 1``).
        b: ``None`` (default): ``b_e`` from Theorem 2 (``theorem2_kernel_parameter``,
            needs ``horizon``); a number: the same ``b`` for every learner, as in the
            experiments of Section 5 ("run with the same b").
        horizon: ``T`` for Theorem 2's choice of ``b``.
        concentration_constant: ``c`` of eq. 44; default ``noise_std``.
        width_rule: The width rule of every learner (``"new"``).
        name: Name used in results.

    Raises:
        ValueError: For an empty or out-of-range ``candidate_deviations``, or
            ``b is None`` without ``horizon``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import AdaptiveMultiTaskUCB
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = AdaptiveMultiTaskUCB(arms, LinearKernel().double(), rkhs_norm_bound=1.0,
        ...                               b=0.5, num_tasks=2)
        >>> policy.current_deviation  # the smallest candidate plays first
        0.1
        >>> x = policy.select({"task": 0}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.2]), {"task": 0}, torch.Generator())
        >>> policy.epoch_length, policy.removed
        (1, [])
    """

    def __init__(
        self,
        domains: Domain | Sequence[Domain],
        data_kernel: Kernel,
        rkhs_norm_bound: float,
        candidate_deviations: Sequence[float] = tuple(round(0.1 * k, 1) for k in range(1, 11)),
        b: float | None = None,
        horizon: int | None = None,
        delta: float = 0.01,
        noise_std: float = 1.0,
        concentration_constant: float | None = None,
        width_rule: str = "new",
        num_tasks: int | None = None,
        name: str = "AdaMT-UCB",
    ) -> None:
        self.name = name
        deviations = sorted(float(e) for e in candidate_deviations)
        if not deviations or deviations[0] <= 0 or deviations[-1] > 2:
            raise ValueError(
                f"candidate_deviations must be a non-empty subset of (0, 2], got {deviations}"
            )
        if b is None and horizon is None:
            raise ValueError("horizon is required when b is None (Theorem 2's choice of b)")
        self.width_rule = check_choice(width_rule, "width_rule", WIDTH_RULES)
        self.rkhs_norm_bound = rkhs_norm_bound
        self.delta = delta
        self.noise_std = noise_std
        self.concentration_constant = (
            noise_std if concentration_constant is None else float(concentration_constant)
        )
        n = num_tasks if num_tasks is not None else len(domains)
        self.kernel_parameters: dict[float, float] = {}
        regressions: dict[tuple[float, float], AgnosticMultiTaskRegression] = {}
        self.regression_of: dict[float, AgnosticMultiTaskRegression] = {}
        for e in deviations:
            b_e = theorem2_kernel_parameter(n, e, horizon) if b is None else float(b)
            key = (b_e, multitask_regularization(n, b_e))
            if key not in regressions:
                regressions[key] = AgnosticMultiTaskRegression(
                    domains, data_kernel, b_e, key[1], num_tasks=num_tasks
                )
            self.kernel_parameters[e] = b_e
            self.regression_of[e] = regressions[key]
        self.regressions = list(regressions.values())
        self.candidates = deviations  # the current set E, sorted
        self.removed: list[float] = []
        self._reset_epoch()
        self._widths = self._all_widths()

    def _reset_epoch(self) -> None:
        self.epoch_length = 0
        self.cumulative_reward = 0.0  # U
        self.believed_regret = 0.0  # R
        self.lower_bounds = dict.fromkeys(self.candidates, 0.0)  # L^e

    def _all_widths(self) -> dict[float, float]:
        return {
            e: self.regression_of[e].widths(self.rkhs_norm_bound, e, self.delta, self.noise_std)[
                self.width_rule
            ]
            for e in self.candidates
        }

    @property
    def current_deviation(self) -> float:
        """``e_t = min E``, the learner that plays."""
        return self.candidates[0]

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """The action of learner ``e_t`` on the revealed task."""
        e = self.current_deviation
        x, _, _ = self.regression_of[e].ucb_maximizer(
            int(context["task"]), self._widths[e], generator
        )
        return x

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Accumulate (Line 7), update every learner (Line 6), run the test (Line 8)."""
        task = int(context["task"])
        e_t = self.current_deviation
        _, std = self.regression_of[e_t].mean_std_at(task, x)
        self.epoch_length += 1
        self.cumulative_reward += float(torch.as_tensor(y).reshape(()))
        self.believed_regret += 2.0 * self._widths[e_t] * std
        for e in self.candidates:
            mean_e, std_e = self.regression_of[e].mean_std_at(task, x)
            self.lower_bounds[e] += mean_e - self._widths[e] * std_e
        for regression in self.regressions:
            regression.update(task, x, y)
        tau = self.epoch_length
        slack = self.concentration_constant * math.sqrt(
            tau * math.log(max(math.log(tau), 1.0) / self.delta)
        )
        triggered = self.cumulative_reward + self.believed_regret + slack < max(
            self.lower_bounds.values()
        )
        if triggered and len(self.candidates) > 1:
            self.removed.append(self.candidates.pop(0))
            self._reset_epoch()
        self._widths = self._all_widths()

    def diagnostics(self) -> dict[str, float]:
        """The deviation in use, its ``b`` and width, and the number of removals."""
        e = self.current_deviation
        return {
            "task_deviation": e,
            "b": self.kernel_parameters[e],
            "width": self._widths[e],
            "removed": float(len(self.removed)),
        }
