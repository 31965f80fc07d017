"""MT-AL (Algorithm 2 of paper 001) and its baselines: Uniform, MTS and AE-LSVI.

Source: paper 001 (Sessa et al. 2023), Section 4 (Algorithm 2, Theorem 4), Section 5
(baselines) and Appendix C.3 (AE-LSVI's task rule).

Every method keeps the agnostic multi-task regression of Section 2 and, each round,
recommends ``x_t^i`` for every task ``i``, then queries one task ``i_t``; ``select``
returns the ``ActiveLearningAction(i_t, [x_t^1, ..., x_t^N])`` (see
``botorch_mtucb.bandits.environments.task_indexed``). They differ in the task rule:

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
from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits.environments.task_indexed import ActiveLearningAction
from botorch_mtucb.bandits.task_indexed.policy import TaskIndexedUCBPolicy
from botorch_mtucb.utils.random import argmax_random_ties


class MultiTaskActiveLearning(TaskIndexedUCBPolicy):
    r"""MT-AL, Algorithm 2 of paper 001: query the task whose recommendation is the most
    uncertain, ``i_t = argmax_i beta_{t-1} sigma_{t-1}(i, x_t^i)``.

    The widths are uniform over tasks (one ``B`` and ``epsilon``), so ``beta^i`` is the
    same for every task. Exact ties are broken uniformly at random.

    Args:
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        regularization, width_rule, num_tasks: See ``TaskIndexedUCBPolicy``.
        name: Name used in results (default: the class's ``default_name``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import MultiTaskActiveLearning
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = MultiTaskActiveLearning(arms, LinearKernel().double(), b=1.0,
        ...                                  rkhs_norm_bound=1.0, task_deviation=0.5,
        ...                                  num_tasks=2)
        >>> action = policy.select({}, torch.Generator().manual_seed(0))
        >>> action.recommendations.shape
        torch.Size([2, 3])
        >>> policy.update(action, torch.tensor([0.2]), {}, torch.Generator())
        >>> policy.last_task == action.task
        True
    """

    default_name = "MT-AL"
    last_task = -1  # the task queried last (-1 before the first round)

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

    def select(self, context: dict[str, Any], generator: torch.Generator) -> ActiveLearningAction:
        """The action: the queried task ``i_t`` and the recommendations ``x_t^1 .. x_t^N``."""
        recommendations, scores = self.recommend(generator)
        self.last_task = self.choose_task(scores, generator)
        return ActiveLearningAction(self.last_task, recommendations)

    def update(
        self,
        action: ActiveLearningAction,
        y: Tensor,
        context: dict[str, Any],
        generator: torch.Generator,
    ) -> None:
        """Condition on ``y_t`` at ``(i_t, x_t^{i_t})`` and recompute the width."""
        self.last_task = action.task
        self.observe(action.task, action.query, y)

    def diagnostics(self) -> dict[str, float]:
        """The queried task, the width and the information gains."""
        return {
            "task": float(self.last_task),
            "width": self._width,
            "info_gain_mt": self.regression.info_gain_mt,
        }


class UniformTaskActiveLearning(MultiTaskActiveLearning):
    """Uniform (Section 5): MT-AL's recommendations, the queried task uniformly at random
    (from the policy's generator).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import UniformTaskActiveLearning
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = UniformTaskActiveLearning(arms, LinearKernel().double(), 1.0, 1.0, 0.5,
        ...                                    num_tasks=2)
        >>> policy.select({}, torch.Generator().manual_seed(0)).task in (0, 1)
        True
    """

    default_name = "Uniform"

    def task_score(self, task, x, mean, std, generator) -> float:  # noqa: D102
        return 0.0

    def choose_task(self, scores: list[float], generator: torch.Generator) -> int:
        """A task drawn uniformly at random."""
        return int(torch.randint(self.num_tasks, (1,), generator=generator))


class AELSVI(MultiTaskActiveLearning):
    r"""AE-LSVI (paper 001, Appendix C.3): query
    ``argmax_i ucb_{t-1}(i, x_t^i) - max_x lcb_{t-1}(i, x)``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import AELSVI
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = AELSVI(arms, LinearKernel().double(), 1.0, 1.0, 0.5, num_tasks=2)
        >>> policy.name, policy.select({}, torch.Generator().manual_seed(0)).num_tasks
        ('AE-LSVI', 2)
    """

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

    Raises:
        TypeError: If the domains are not finite.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import MultiTaskThompsonSampling
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = MultiTaskThompsonSampling(arms, LinearKernel().double(), 1.0, 1.0, 0.5,
        ...                                    num_tasks=2)
        >>> action = policy.select({}, torch.Generator().manual_seed(0))
        >>> policy.update(action, torch.tensor([0.1]), {}, torch.Generator())
        >>> policy.select({}, torch.Generator().manual_seed(1)).task == 1 - action.task
        True
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
        self,
        action: ActiveLearningAction,
        y: Tensor,
        context: dict[str, Any],
        generator: torch.Generator,
    ) -> None:
        """Condition on the observation and remember the queried arm."""
        arm = self.regression.arm_index(action.task, action.query)
        self._queried[action.task].append(arm)
        super().update(action, y, context, generator)
