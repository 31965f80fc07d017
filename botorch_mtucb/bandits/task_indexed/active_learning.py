"""MT-AL (Algorithm 2 of paper 001) and its baselines: Uniform, MTS and AE-LSVI.

Source: paper 001 (Sessa et al. 2023), Section 4 (Algorithm 2, Theorem 4), Section 5
(baselines) and Appendix C.3 (AE-LSVI's task rule).

Every method keeps the agnostic multi-task regression of Section 2 and, each round,
recommends ``x_t^i`` for every task ``i``, then queries one task ``i_t``; ``select``
returns the active-learning action ``encode_active_action(i_t, [x_t^1, ..., x_t^N])``
(see ``botorch_mtucb.bandits.environments.task_indexed``). They differ in the task rule:

* MT-AL: ``x_t^i = argmax_x ucb_{t-1}(i, x)``, ``i_t = argmax_i beta^i sigma_{t-1}(i, x_t^i)``;
* Uniform: the same recommendations, ``i_t`` uniformly at random;
* AE-LSVI [16]: the same recommendations,
  ``i_t = argmax_i ucb_{t-1}(i, x_t^i) - max_x lcb_{t-1}(i, x)`` (Appendix C.3);
* MTS [7] (multi-task Thompson sampling): one joint posterior sample ``g_i`` per task,
  ``x_t^i = argmax g_i``, ``i_t = argmax_i [max_x g_i(x) - max_{x in Q_i} g_i(x)]`` with
  ``Q_i`` the points queried on task ``i`` so far (``+inf`` if none); finite domains only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.environments.task_indexed import (
    decode_active_action,
    encode_active_action,
)
from botorch_mtucb.bandits.task_indexed.regression import WIDTH_RULES, AgnosticMultiTaskRegression
from botorch_mtucb.utils.checks import check_choice
from botorch_mtucb.utils.domains import Domain
from botorch_mtucb.utils.random import argmax_random_ties


class MultiTaskActiveLearning:
    r"""MT-AL, Algorithm 2 of paper 001: query the task whose recommendation is the most
    uncertain, ``i_t = argmax_i beta_{t-1} sigma_{t-1}(i, x_t^i)``.

    The widths are uniform over tasks (one ``B`` and ``epsilon``), so ``beta^i`` is the
    same for every task. Ties go to the smallest task index.

    Args:
        domains: One ``FiniteDomain`` / ``BoxDomain`` per task (or one shared domain
            with ``num_tasks``).
        data_kernel: The input kernel ``k_X`` (fixed).
        b: Kernel parameter ``b >= 0``.
        rkhs_norm_bound: ``B``.
        task_deviation: ``epsilon`` in ``[0, 2]``.
        delta: Confidence level in ``(0, 1)``.
        noise_std: Sub-Gaussian noise level assumed by the widths.
        regularization: ``lambda``; default ``(N + b) / (N + bN)``.
        width_rule: Width rule (``"new"`` or ``"naive"``, ...; see ``MultiTaskUCB``).
        num_tasks: Needed only with a single shared domain.
        name: Name used in results.
    """

    default_name = "MT-AL"

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
        self.last_task = -1

    def width(self) -> float:
        """``beta_t`` for the data seen so far (same for every task)."""
        widths = self.regression.widths(
            self.rkhs_norm_bound, self.task_deviation, self.delta, self.noise_std
        )
        return widths[self.width_rule]

    def recommend(self, generator: torch.Generator) -> tuple[Tensor, list[float]]:
        """``x_t^i = argmax_x ucb_{t-1}(i, x)`` for every task (``N x d``) and the
        task scores of this method's rule (``N``)."""
        points, scores = [], []
        for i in range(self.num_tasks):
            x, mean, std = self.regression.ucb_maximizer(i, self._width, generator)
            points.append(x)
            scores.append(self.task_score(i, x, mean, std, generator))
        return torch.stack(points), scores

    def task_score(
        self, task: int, x: Tensor, mean: float, std: float, generator: torch.Generator
    ) -> float:
        """MT-AL's score ``beta_{t-1} sigma_{t-1}(i, x_t^i)``."""
        return self._width * std

    def choose_task(self, scores: list[float], generator: torch.Generator) -> int:
        """The task with the largest score, exact ties broken uniformly at random with
        ``generator`` (e.g. round 1, when every task has the prior's width)."""
        return argmax_random_ties(torch.tensor(scores, dtype=torch.float64), generator)

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """The action ``[i_t, x_t^1, ..., x_t^N]`` (``1 + N d``)."""
        recommendations, scores = self.recommend(generator)
        self.last_task = self.choose_task(scores, generator)
        return encode_active_action(self.last_task, recommendations)

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Condition on ``y_t`` at ``(i_t, x_t^{i_t})`` and recompute the width."""
        task, recommendations = decode_active_action(x, self.num_tasks)
        self.last_task = task
        self.regression.update(task, recommendations[task], y)
        self._width = self.width()

    def diagnostics(self) -> dict[str, float]:
        """The queried task, the width and the information gains."""
        return {
            "task": float(self.last_task),
            "width": self._width,
            "info_gain_mt": self.regression.info_gain_mt,
        }


class UniformTaskActiveLearning(MultiTaskActiveLearning):
    """Uniform (Section 5): MT-AL's recommendations, the queried task uniformly at random
    (from the policy's generator)."""

    default_name = "Uniform"

    def task_score(self, task, x, mean, std, generator) -> float:  # noqa: D102
        return 0.0

    def choose_task(self, scores: list[float], generator: torch.Generator) -> int:
        """A task drawn uniformly at random."""
        return int(torch.randint(self.num_tasks, (1,), generator=generator))


class AELSVI(MultiTaskActiveLearning):
    r"""AE-LSVI (paper 001, Appendix C.3): query
    ``argmax_i ucb_{t-1}(i, x_t^i) - max_x lcb_{t-1}(i, x)``."""

    default_name = "AE-LSVI"

    def task_score(self, task, x, mean, std, generator) -> float:  # noqa: D102
        ucb = mean + self._width * std
        return ucb - self.regression.max_lcb(task, self._width, generator)


class MultiTaskThompsonSampling(MultiTaskActiveLearning):
    r"""MTS (multi-task Thompson sampling, Char et al. 2019; paper 001, Section 5).

    For each task one exact joint posterior sample ``g_i`` over its arms;
    ``x_t^i = argmax g_i``; the queried task maximizes the sampled improvement
    ``max_x g_i(x) - max_{x in Q_i} g_i(x)`` over the points ``Q_i`` already queried on
    task ``i`` (``+inf`` while ``Q_i`` is empty). Needs finite domains. The width
    arguments are unused (kept for a uniform signature).
    """

    default_name = "MTS"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not self.regression.finite:
            raise TypeError("MTS needs finite domains (one FiniteDomain per task)")
        self._queried: list[list[int]] = [[] for _ in range(self.num_tasks)]

    def recommend(self, generator: torch.Generator) -> tuple[Tensor, list[float]]:
        """Thompson recommendations and sampled improvements."""
        points, scores = [], []
        for i in range(self.num_tasks):
            sample = self.regression.sample(i, generator)
            index = int(torch.argmax(sample))
            points.append(self.regression.domains[i].points[index])
            if self._queried[i]:
                best_queried = float(sample[self._queried[i]].max())
                scores.append(float(sample[index]) - best_queried)
            else:
                scores.append(math.inf)
        return torch.stack(points), scores

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Condition on the observation and remember the queried arm."""
        task, recommendations = decode_active_action(x, self.num_tasks)
        arm = self.regression.posterior.arm_index(task, recommendations[task])
        self._queried[task].append(arm)
        super().update(x, y, context, generator)
