"""Paper 001's two protocols as runner environments: online and active learning.

Source: paper 001 (Sessa et al. 2023).

* Online (Section 3): nature reveals a task ``i_t`` (uniformly at random, as in
  Section 5), the learner plays ``x_t`` and the regret is
  ``max_x f(i_t, x) - f(i_t, x_t)`` (eq. 6). The context is ``{"task": i_t}`` and the
  policy returns ``x_t`` (``d``).
* Active learning (Section 4): the learner recommends ``x_t^i`` for every task and
  queries one task ``i_t``; the regret is
  ``(1 / N) sum_i [max_x f(i, x) - f(i, x_t^i)]``. The context is empty and the policy
  returns the *active-learning action* ``[i_t, x_t^1, ..., x_t^N]`` (``1 + N d``; see
  ``encode_active_action``), so that the runner records, and replays on resume,
  everything the round decided.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch
from torch import Tensor


class TaskIndexedProblem(Protocol):
    """What the environments need from a problem (e.g. ``MultiTaskArmProblem``)."""

    num_tasks: int
    dim: int

    def optimum(self, task: int) -> float:
        """``max_x f(i, x)``."""

    def objective(self, task: int, x: Tensor) -> float:
        """Noise-free ``f(i, x)`` for ``x`` (``d``)."""

    def observe(self, task: int, x: Tensor, generator: torch.Generator) -> Tensor:
        """A noisy observation of ``f(i, x)`` (one element)."""


def encode_active_action(task: int, recommendations: Tensor) -> Tensor:
    """``[task, x^1, ..., x^N]`` (``1 + N d``, float64) from ``N x d`` recommendations."""
    if recommendations.dim() != 2:
        raise ValueError(f"recommendations must be N x d, got {tuple(recommendations.shape)}")
    if not 0 <= int(task) < recommendations.shape[0]:
        raise ValueError(f"task must lie in [0, {recommendations.shape[0] - 1}], got {task}")
    head = torch.tensor([float(task)], dtype=torch.float64)
    return torch.cat([head, recommendations.detach().to(torch.float64).reshape(-1)])


def decode_active_action(action: Tensor, num_tasks: int) -> tuple[int, Tensor]:
    """The queried task and the ``N x d`` recommendations of an active-learning action.

    Raises:
        ValueError: If the length is not ``1 + N d`` or the task is out of range.
    """
    action = action.reshape(-1)
    if (action.numel() - 1) % num_tasks != 0 or action.numel() < 1 + num_tasks:
        raise ValueError(
            f"an active-learning action has 1 + N d entries (N = {num_tasks}), got {action.numel()}"
        )
    task = int(action[0])
    if float(action[0]) != task or not 0 <= task < num_tasks:
        raise ValueError(
            f"the queried task must be an int in [0, {num_tasks - 1}], got {action[0]}"
        )
    return task, action[1:].reshape(num_tasks, -1)


class OnlineMultiTaskEnvironment:
    """Online multi-task learning (paper 001, Section 3): nature reveals the task.

    Args:
        problem: A task-indexed problem (``MultiTaskArmProblem``).
    """

    def __init__(self, problem: TaskIndexedProblem) -> None:
        self.problem = problem
        self._optima = [problem.optimum(i) for i in range(problem.num_tasks)]

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """``{"task": i_t}`` with ``i_t`` uniform over the tasks."""
        task = int(torch.randint(self.problem.num_tasks, (1,), generator=generator))
        return {"task": task}

    def observe(self, x: Tensor, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``y_t = f(i_t, x_t) + xi_t``."""
        return self.problem.observe(context["task"], x.reshape(-1), generator).reshape(-1)

    def regret(self, x: Tensor, context: dict[str, Any]) -> float:
        """``max_x f(i_t, x) - f(i_t, x_t)`` (eq. 6)."""
        task = context["task"]
        return self._optima[task] - self.problem.objective(task, x.reshape(-1))


class ActiveMultiTaskEnvironment:
    """Multi-task active learning (paper 001, Section 4): the learner picks the task.

    Actions are ``encode_active_action(i_t, recommendations)``.

    Args:
        problem: A task-indexed problem (``MultiTaskArmProblem``).
    """

    def __init__(self, problem: TaskIndexedProblem) -> None:
        self.problem = problem
        self._optima = [problem.optimum(i) for i in range(problem.num_tasks)]

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """No context: the learner chooses which task to query."""
        return {}

    def observe(self, x: Tensor, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``y_t = f(i_t, x_t^{i_t}) + xi_t`` for the queried task."""
        task, recommendations = decode_active_action(x, self.problem.num_tasks)
        return self.problem.observe(task, recommendations[task], generator).reshape(-1)

    def regret(self, x: Tensor, context: dict[str, Any]) -> float:
        """``(1 / N) sum_i [max_x f(i, x) - f(i, x_t^i)]`` (Section 4)."""
        _, recommendations = decode_active_action(x, self.problem.num_tasks)
        gaps = [
            self._optima[i] - self.problem.objective(i, recommendations[i])
            for i in range(self.problem.num_tasks)
        ]
        return sum(gaps) / len(gaps)
