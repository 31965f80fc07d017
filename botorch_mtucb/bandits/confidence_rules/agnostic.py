r"""Paper 001's rules on the agnostic multi-task regression: ``mu_t(i, x) +- beta_t
sigma_t(i, x)`` with a width of Theorem 1, posterior sampling (MTS), and AdaMT-UCB's
learners for candidate task deviations with the misspecification test.

Source: paper 001 (Sessa et al. 2023), Section 2 (the regression, eqs. 3-4), Theorem 1 and
Table 1 (the widths), eq. 7 (the bounds), Algorithm 3 and eq. 45 (AdaMT-UCB), Section 5
(MTS, Char et al. 2019).

A width of Theorem 1 is an object ``regression -> beta_t`` (``ImprovedWidth``,
``NaiveWidth``, ``SmallBWidth``, ``LargeBWidth``, ``DataDependentLargeBWidth``: the
entries of ``multitask_widths``), so that the rule is chosen by composition, not by name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.confidence_rules.base import TaskChoice
from botorch_mtucb.bandits.confidence_rules.regression import AgnosticMultiTaskRegression
from botorch_mtucb.confidence import multitask_regularization, theorem2_kernel_parameter
from botorch_mtucb.utils.domains import Domain

DEFAULT_DEVIATIONS = tuple(round(0.1 * k, 1) for k in range(1, 11))
"""AdaMT-UCB's candidate task deviations ``epsilon`` (paper 001, Section 5)."""


@dataclass(frozen=True)
class AgnosticWidth:
    r"""A width ``beta_t(b)`` of Theorem 1 of paper 001 for a regression's data: the entry
    ``key`` of ``multitask_widths`` (via ``AgnosticMultiTaskRegression.widths``).

    Subclasses name the entry: ``ImprovedWidth`` (``"new"``: Theorem 1, with the
    data-dependent large-b width in the minimum), ``NaiveWidth`` (``"naive"``, GoB.Lin's),
    ``SmallBWidth``, ``LargeBWidth``, ``DataDependentLargeBWidth``.

    Args:
        rkhs_norm_bound: ``B >= max_i ||f_i||``.
        task_deviation: ``epsilon`` of eq. 5, in ``[0, 2]``.
        delta: Confidence level in ``(0, 1)``.
        noise_std: Sub-Gaussian noise level.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import AgnosticMultiTaskRegression, ImprovedWidth
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> regression = AgnosticMultiTaskRegression(
        ...     FiniteDomain(torch.eye(3, dtype=torch.float64)), LinearKernel().double(), 1.0,
        ...     num_tasks=2)
        >>> width = ImprovedWidth(rkhs_norm_bound=1.0, task_deviation=0.5)
        >>> width(regression) == regression.widths(1.0, 0.5, 0.01)["new"]
        True
    """

    rkhs_norm_bound: float
    task_deviation: float
    delta: float = 0.01
    noise_std: float = 1.0
    key: ClassVar[str] = "new"
    label_suffix: ClassVar[str] = ""  # appended to a method's label (``"-naive"``)

    def __call__(self, regression: AgnosticMultiTaskRegression) -> float:
        """``beta_t`` for the data of ``regression`` (the same for every task)."""
        widths = regression.widths(
            self.rkhs_norm_bound, self.task_deviation, self.delta, self.noise_std
        )
        return widths[self.key]


class ImprovedWidth(AgnosticWidth):
    """Theorem 1's width: the minimum of the widths, the data-dependent large-b one
    included (``multitask_widths()["new"]``).

    Example:
        >>> from botorch_mtucb.bandits import ImprovedWidth
        >>> ImprovedWidth(rkhs_norm_bound=1.0, task_deviation=0.5).key
        'new'
    """

    key = "new"


class NaiveWidth(AgnosticWidth):
    """The naive width of Table 1 (GoB.Lin's, ``multitask_widths()["naive"]``).

    Example:
        >>> from botorch_mtucb.bandits import NaiveWidth
        >>> NaiveWidth(rkhs_norm_bound=1.0, task_deviation=0.5).key
        'naive'
    """

    key = "naive"
    label_suffix = "-naive"


class SmallBWidth(AgnosticWidth):
    """Theorem 1's small-b width (``multitask_widths()["small_b"]``).

    Example:
        >>> from botorch_mtucb.bandits import SmallBWidth
        >>> SmallBWidth(rkhs_norm_bound=1.0, task_deviation=0.5).key
        'small_b'
    """

    key = "small_b"


class LargeBWidth(AgnosticWidth):
    """Theorem 1's large-b width (``multitask_widths()["large_b"]``).

    Example:
        >>> from botorch_mtucb.bandits import LargeBWidth
        >>> LargeBWidth(rkhs_norm_bound=1.0, task_deviation=0.5).key
        'large_b'
    """

    key = "large_b"


class DataDependentLargeBWidth(AgnosticWidth):
    """The data-dependent large-b width (``multitask_widths()["large_b_data_dependent"]``).

    Example:
        >>> from botorch_mtucb.bandits import DataDependentLargeBWidth
        >>> DataDependentLargeBWidth(rkhs_norm_bound=1.0, task_deviation=0.5).key
        'large_b_data_dependent'
    """

    key = "large_b_data_dependent"


def _check_width(width: object) -> AgnosticWidth:
    if not isinstance(width, AgnosticWidth):
        raise TypeError(
            "width must be a width of Theorem 1 (ImprovedWidth(...), NaiveWidth(...), ...), "
            f"got {width!r}"
        )
    return width


class AgnosticWidthRule:
    r"""``mu_t(i, x) +- beta_t sigma_t(i, x)`` (paper 001, eq. 7) on the agnostic
    regression, ``beta_t`` a width of Theorem 1 recomputed after every observation.

    ``task_argmax`` is ``argmax_x ucb_{t-1}(i, x)`` (ties up to round-off drawn at random,
    ``AgnosticMultiTaskRegression.ucb_maximizer``); its gain is ``beta_{t-1}
    sigma_{t-1}(i, x)``.

    Args:
        regression: An ``AgnosticMultiTaskRegression`` (updated in place).
        width: A width of Theorem 1 (``ImprovedWidth(B, epsilon, delta, sigma)``, ...).

    Raises:
        TypeError: If ``width`` is not an ``AgnosticWidth``.
        ValueError: For arguments that ``multitask_widths`` rejects.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import (
        ...     AgnosticMultiTaskRegression, AgnosticWidthRule, ImprovedWidth)
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> rule = AgnosticWidthRule(
        ...     AgnosticMultiTaskRegression(arms, LinearKernel().double(), 1.0, num_tasks=2),
        ...     ImprovedWidth(rkhs_norm_bound=1.0, task_deviation=0.5))
        >>> rule.observe(0, arms.points[1], torch.tensor(0.3))
        >>> rule.regression.num_observations, sorted(rule.diagnostics())
        (1, ['info_gain_mt', 'info_gain_st', 'width'])
    """

    def __init__(self, regression: AgnosticMultiTaskRegression, width: AgnosticWidth) -> None:
        self.regression = regression
        self.width_function = _check_width(width)
        self.width = self.width_function(regression)

    @property
    def num_tasks(self) -> int:
        """``N``."""
        return self.regression.num_tasks

    def task_argmax(self, task: int, generator: torch.Generator | None) -> TaskChoice:
        """``x = argmax_x ucb_{t-1}(task, x)``, its UCB and ``beta_{t-1} sigma_{t-1}(task, x)``."""
        x, mean, std = self.regression.ucb_maximizer(task, self.width, generator)
        return TaskChoice(x, mean + self.width * std, self.width * std)

    def max_lower(self, task: int, generator: torch.Generator | None) -> float:
        """``max_x lcb_{t-1}(task, x)`` over the task's domain."""
        return self.regression.max_lcb(task, self.width, generator)

    def observe(self, task: int, x: Tensor, y: Tensor | float) -> None:
        """Condition on ``y = f(task, x) + noise`` and recompute the width."""
        self.regression.update(task, x, y)
        self.width = self.width_function(self.regression)

    def diagnostics(self) -> dict[str, float]:
        """The width and the information gains."""
        return {
            "width": self.width,
            "info_gain_mt": self.regression.info_gain_mt,
            "info_gain_st": self.regression.info_gain_st,
        }


class PosteriorSamplingRule(AgnosticWidthRule):
    r"""Multi-task Thompson sampling (MTS, Char et al. 2019; paper 001, Section 5).

    For each task one exact joint posterior sample ``g_i`` over its arms; ``task_argmax``
    is ``x^i = argmax g_i`` and its gain the sampled improvement ``max_x g_i(x) - max_{x
    in Q_i} g_i(x)`` over the points ``Q_i`` observed on task ``i`` (``+inf`` while
    ``Q_i`` is empty). Needs finite domains. The width of the parent is kept (recorded
    with the rounds), not used.

    Raises:
        TypeError: If the domains are not finite.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import (
        ...     AgnosticMultiTaskRegression, ImprovedWidth, PosteriorSamplingRule)
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> rule = PosteriorSamplingRule(
        ...     AgnosticMultiTaskRegression(arms, LinearKernel().double(), 1.0, num_tasks=2),
        ...     ImprovedWidth(1.0, 0.5))
        >>> rule.task_argmax(0, torch.Generator().manual_seed(0)).gain  # task 0 not observed
        inf
    """

    def __init__(self, regression: AgnosticMultiTaskRegression, width: AgnosticWidth) -> None:
        super().__init__(regression, width)
        if not regression.finite:
            raise TypeError("MTS needs finite domains (one FiniteDomain per task)")
        self._queried: list[list[int]] = [[] for _ in range(self.num_tasks)]

    def task_argmax(self, task: int, generator: torch.Generator | None) -> TaskChoice:
        """The sample's maximizer on ``task``, the sample there and the sampled improvement."""
        sample = self.regression.sample(task, generator)
        index = int(torch.argmax(sample))
        gain = math.inf
        if self._queried[task]:
            gain = float(sample[index]) - float(sample[self._queried[task]].max())
        return TaskChoice(self.regression.domains[task].points[index], float(sample[index]), gain)

    def observe(self, task: int, x: Tensor, y: Tensor | float) -> None:
        """Remember the observed arm, then condition on the observation."""
        self._queried[task].append(self.regression.arm_index(task, x))
        super().observe(task, x, y)


class AdaptiveDeviationRule:
    r"""AdaMT-UCB's rule (paper 001, Algorithm 3): MT-UCB learners for candidate task
    deviations, with the misspecification test that discards the learners the data
    contradict.

    Learner ``e`` is ``mu +- beta^e sigma`` with ``epsilon = e``, the kernel parameter
    ``b_e`` and ``lambda_e = (N + b_e) / (N + b_e N)`` (Theorem 2). The learner with the
    smallest remaining ``e`` chooses; every learner observes. Per epoch the rule
    accumulates ``U += y_t``, ``R += 2 beta^{e_t}_{t-1} sigma^{e_t}_{t-1}(i_t, x_t)`` and
    ``L^e += lcb^e_{t-1}(i_t, x_t)``, and removes ``e_t`` when (eq. 45)

    .. math::
        U + R + c \sqrt{\tau \ln(\max(\ln \tau, 1) / \delta)} < \max_e L^e,

    then starts a new epoch (``ln ln tau`` is floored at ``ln 1`` so that the term is
    defined for ``tau < e``; the last remaining candidate is never removed). Learners
    that share ``(b, lambda)`` share one regression.

    Args:
        domains, data_kernel, num_tasks: As ``AgnosticMultiTaskRegression``.
        rkhs_norm_bound, delta, noise_std: ``B``, ``delta`` and ``sigma`` of the widths.
        candidate_deviations: The set ``E`` in ``(0, 2]`` (Section 5: ``0.1, ..., 1``).
        b: ``None``: ``b_e`` from Theorem 2 (``theorem2_kernel_parameter``, needs
            ``horizon``); a number: the same ``b`` for every learner (Section 5).
        horizon: ``T`` for Theorem 2's choice of ``b``.
        concentration_constant: ``c`` of eq. 44; default ``noise_std``.
        width: The width of Theorem 1 of every learner (a subclass of ``AgnosticWidth``,
            built for each ``e``).

    Raises:
        ValueError: For an empty or out-of-range ``candidate_deviations``, or
            ``b is None`` without ``horizon``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import AdaptiveDeviationRule
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> rule = AdaptiveDeviationRule(arms, LinearKernel().double(), rkhs_norm_bound=1.0,
        ...                              b=0.5, num_tasks=2)
        >>> rule.current_deviation  # the smallest candidate chooses first
        0.1
    """

    def __init__(
        self,
        domains: Domain | Sequence[Domain],
        data_kernel: Kernel,
        rkhs_norm_bound: float,
        candidate_deviations: Sequence[float] = DEFAULT_DEVIATIONS,
        b: float | None = None,
        horizon: int | None = None,
        delta: float = 0.01,
        noise_std: float = 1.0,
        concentration_constant: float | None = None,
        width: type[AgnosticWidth] = ImprovedWidth,
        num_tasks: int | None = None,
    ) -> None:
        deviations = sorted(float(e) for e in candidate_deviations)
        if not deviations or deviations[0] <= 0 or deviations[-1] > 2:
            raise ValueError(
                f"candidate_deviations must be a non-empty subset of (0, 2], got {deviations}"
            )
        if b is None and horizon is None:
            raise ValueError("horizon is required when b is None (Theorem 2's choice of b)")
        if not (isinstance(width, type) and issubclass(width, AgnosticWidth)):
            raise TypeError(f"width must be a subclass of AgnosticWidth, got {width!r}")
        self.delta = delta
        self.concentration_constant = (
            noise_std if concentration_constant is None else float(concentration_constant)
        )
        n = num_tasks if num_tasks is not None else len(domains)
        self.kernel_parameters: dict[float, float] = {}
        self.width_of = {e: width(rkhs_norm_bound, e, delta, noise_std) for e in deviations}
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
        self.num_tasks = self.regressions[0].num_tasks
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
        return {e: self.width_of[e](self.regression_of[e]) for e in self.candidates}

    @property
    def current_deviation(self) -> float:
        """``e_t = min E``, the learner that chooses."""
        return self.candidates[0]

    def task_argmax(self, task: int, generator: torch.Generator | None) -> TaskChoice:
        """The choice of learner ``e_t`` on ``task``."""
        width = self._widths[self.current_deviation]
        regression = self.regression_of[self.current_deviation]
        x, mean, std = regression.ucb_maximizer(task, width, generator)
        return TaskChoice(x, mean + width * std, width * std)

    def upper_bounds(self, task: int) -> Tensor:
        """``ucb_t(task, x) = mu + beta sigma`` of the learner that chooses, at every arm of
        ``task`` (finite domains; its number of arms)."""
        mean, std = self.regression_of[self.current_deviation].arm_moments(task)
        return mean + self._widths[self.current_deviation] * std

    def add_prior_data(self, task: int, x: Tensor, y: Tensor | float) -> None:
        """An observation the rule did not choose (e.g. a source task's past data): every
        learner learns it (Line 6); the misspecification test (Lines 7-8), which is about
        the rule's own choices, does not count it.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.bandits import AdaptiveDeviationRule
            >>> from botorch_mtucb.utils import FiniteDomain
            >>> arms = FiniteDomain(torch.eye(2, dtype=torch.float64))
            >>> rule = AdaptiveDeviationRule(arms, LinearKernel().double(), 1.0, b=0.5,
            ...                              num_tasks=2)
            >>> rule.add_prior_data(1, arms.points[0], 0.7)
            >>> rule.epoch_length, rule.regressions[0].num_observations
            (0, 1)
        """
        for regression in self.regressions:
            regression.update(task, x, y)
        self._widths = self._all_widths()

    def observe(self, task: int, x: Tensor, y: Tensor | float) -> None:
        """Accumulate (Line 7), update every learner (Line 6), run the test (Line 8)."""
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

    def diagnostics(self) -> dict[str, Any]:
        """The deviation in use, its ``b`` and width, and the number of removals."""
        e = self.current_deviation
        return {
            "task_deviation": e,
            "b": self.kernel_parameters[e],
            "width": self._widths[e],
            "removed": float(len(self.removed)),
        }
