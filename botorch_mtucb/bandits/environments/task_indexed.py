"""Paper 001's two protocols as runner environments: online and active learning.

Source: paper 001 (Sessa et al. 2023).

* Online (Section 3): nature reveals a task ``i_t`` (uniformly at random, as in
  Section 5), the learner plays ``x_t`` and the regret is
  ``max_x f(i_t, x) - f(i_t, x_t)`` (eq. 6). The context is ``{"task": i_t}`` and the
  policy returns ``x_t`` (``d``).
* Active learning (Section 4): the learner recommends ``x_t^i`` for every task and
  queries one task ``i_t``; the regret is
  ``(1 / N) sum_i [max_x f(i, x) - f(i, x_t^i)]``. The context is empty and the policy
  returns an ``ActiveLearningAction(i_t, [x_t^1, ..., x_t^N])``, so that the runner
  records, and replays on resume, everything the round decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import Tensor

from botorch_mtucb.utils.checks import as_int


class TaskIndexedProblem(Protocol):
    """What the environments need from a problem (e.g. ``MultiTaskArmProblem``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems import MultiTaskArmProblem
        >>> arms = [torch.tensor([[0.0], [1.0]])] * 2
        >>> values = [torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0])]
        >>> problem = MultiTaskArmProblem(arms, values, noise_std=0.1)
        >>> problem.optimum(1), problem.objective(1, torch.tensor([1.0]))
        (1.0, 0.0)
    """

    num_tasks: int
    dim: int

    def optimum(self, task: int) -> float:
        """``max_x f(i, x)``."""

    def objective(self, task: int, x: Tensor) -> float:
        """Noise-free ``f(i, x)`` for ``x`` (``d``)."""

    def observe(self, task: int, x: Tensor, generator: torch.Generator) -> Tensor:
        """A noisy observation of ``f(i, x)`` (one element)."""


@dataclass(frozen=True, eq=False)
class ActiveLearningAction:
    r"""One round of multi-task active learning (paper 001, Section 4, Algorithm 2).

    The learner recommends ``x_t^i`` for every task ``i`` (the rows of
    ``recommendations``) and queries task ``i_t = task``: it observes
    ``y_t = f(i_t, x_t^{i_t}) + xi_t`` and is charged the average regret of all
    recommendations. ``recommendations`` is stored detached, as float64.

    Attributes:
        task: The queried task ``i_t`` in ``[0, N - 1]``.
        recommendations: ``N x d`` recommendations ``x_t^1, ..., x_t^N``.

    Raises:
        TypeError: If ``task`` is not an int.
        ValueError: If ``recommendations`` is not ``N x d`` or ``task`` is outside
            ``[0, N - 1]``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import ActiveLearningAction
        >>> action = ActiveLearningAction(1, torch.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> action.query
        tensor([2., 3.], dtype=torch.float64)
        >>> action.to_json()
        {'task': 1, 'recommendations': [[0.0, 1.0], [2.0, 3.0]]}
        >>> ActiveLearningAction.from_json(action.to_json()) == action
        True
    """

    task: int
    recommendations: Tensor

    def __post_init__(self) -> None:
        recommendations = torch.as_tensor(self.recommendations)
        if recommendations.dim() != 2:
            raise ValueError(
                f"recommendations must be N x d, got shape {tuple(recommendations.shape)}"
            )
        num_tasks = recommendations.shape[0]
        task = as_int(self.task, "task")
        if not 0 <= task < num_tasks:
            raise ValueError(f"the queried task must lie in [0, {num_tasks - 1}], got {task}")
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "recommendations", recommendations.detach().to(torch.float64))

    @property
    def num_tasks(self) -> int:
        """``N``, the number of recommendations."""
        return self.recommendations.shape[0]

    @property
    def query(self) -> Tensor:
        """``x_t^{i_t}``, the point queried on task ``i_t`` (``d``)."""
        return self.recommendations[self.task]

    def to_json(self) -> dict[str, Any]:
        """``{"task": i_t, "recommendations": [[x_t^1], ..., [x_t^N]]}``."""
        return {"task": self.task, "recommendations": self.recommendations.tolist()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActiveLearningAction:
        """The action that ``to_json`` wrote (float64 recommendations, bit for bit).

        Example:
            >>> from botorch_mtucb.bandits import ActiveLearningAction
            >>> ActiveLearningAction.from_json({"task": 0, "recommendations": [[0.5]]}).query
            tensor([0.5000], dtype=torch.float64)
        """
        return cls(int(data["task"]), torch.tensor(data["recommendations"], dtype=torch.float64))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ActiveLearningAction):
            return NotImplemented
        return self.task == other.task and torch.equal(self.recommendations, other.recommendations)


class _TaskIndexedEnvironment:
    """The problem and its per-task optima ``max_x f(i, x)``."""

    def __init__(self, problem: TaskIndexedProblem) -> None:
        self.problem = problem
        self._optima = [problem.optimum(i) for i in range(problem.num_tasks)]

    def _gap(self, task: int, x: Tensor) -> float:
        """``max_x f(i, x) - f(i, x)``."""
        return self._optima[task] - self.problem.objective(task, x.reshape(-1))


class OnlineMultiTaskEnvironment(_TaskIndexedEnvironment):
    """Online multi-task learning (paper 001, Section 3): nature reveals the task.

    Actions are points ``x_t`` (``d`` tensors) played on the revealed task.

    Args:
        problem: A task-indexed problem (``MultiTaskArmProblem``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import OnlineMultiTaskEnvironment
        >>> from botorch_mtucb.problems import MultiTaskArmProblem
        >>> arms = [torch.tensor([[0.0], [1.0]])] * 2
        >>> values = [torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0])]
        >>> environment = OnlineMultiTaskEnvironment(MultiTaskArmProblem(arms, values, 0.1))
        >>> environment.regret(torch.tensor([0.0]), {"task": 0})
        1.0
    """

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """``{"task": i_t}`` with ``i_t`` uniform over the tasks."""
        task = int(torch.randint(self.problem.num_tasks, (1,), generator=generator))
        return {"task": task}

    def observe(self, x: Tensor, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``y_t = f(i_t, x_t) + xi_t``."""
        return self.problem.observe(context["task"], x.reshape(-1), generator).reshape(-1)

    def regret(self, x: Tensor, context: dict[str, Any]) -> float:
        """``max_x f(i_t, x) - f(i_t, x_t)`` (eq. 6)."""
        return self._gap(context["task"], x)


class ActiveMultiTaskEnvironment(_TaskIndexedEnvironment):
    """Multi-task active learning (paper 001, Section 4): the learner picks the task.

    Actions are ``ActiveLearningAction`` s (the class attribute ``action_type``, with
    which the runner rebuilds recorded rounds).

    Args:
        problem: A task-indexed problem (``MultiTaskArmProblem``).

    Raises:
        TypeError: (``observe``, ``regret``) If the action is not an
            ``ActiveLearningAction``.
        ValueError: (``observe``, ``regret``) If it does not hold one recommendation
            per task.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import ActiveLearningAction, ActiveMultiTaskEnvironment
        >>> from botorch_mtucb.problems import MultiTaskArmProblem
        >>> arms = [torch.tensor([[0.0], [1.0]])] * 2
        >>> values = [torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0])]
        >>> environment = ActiveMultiTaskEnvironment(MultiTaskArmProblem(arms, values, 0.1))
        >>> action = ActiveLearningAction(0, torch.tensor([[1.0], [1.0]]))
        >>> environment.regret(action, {})  # (0 + 1) / 2
        0.5
    """

    action_type = ActiveLearningAction

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """No context: the learner chooses which task to query."""
        return {}

    def observe(
        self, action: ActiveLearningAction, context: dict[str, Any], generator: torch.Generator
    ) -> Tensor:
        """``y_t = f(i_t, x_t^{i_t}) + xi_t`` for the queried task."""
        self._check(action)
        return self.problem.observe(action.task, action.query, generator).reshape(-1)

    def regret(self, action: ActiveLearningAction, context: dict[str, Any]) -> float:
        """``(1 / N) sum_i [max_x f(i, x) - f(i, x_t^i)]`` (Section 4)."""
        self._check(action)
        gaps = [self._gap(i, x) for i, x in enumerate(action.recommendations)]
        return sum(gaps) / len(gaps)

    def _check(self, action: ActiveLearningAction) -> None:
        if not isinstance(action, ActiveLearningAction):
            raise TypeError(
                f"actions of active learning are ActiveLearningAction, got {type(action).__name__}"
            )
        if action.num_tasks != self.problem.num_tasks:
            raise ValueError(
                f"the action holds {action.num_tasks} recommendations; the problem has "
                f"{self.problem.num_tasks} tasks"
            )
