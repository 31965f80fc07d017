"""The bandit protocol: what ``run_policy`` needs from an environment, a policy and an action.

At round ``t`` the environment reveals a context (paper 000: scalarization weights
``lambda_t``; paper 001: the task nature picks; paper 002: the round's action set), the
policy selects an action, the environment returns a noisy observation ``y_t`` and the
instantaneous regret, and the policy updates with ``(action, y_t)``.

An action is a point ``x_t`` (a ``d`` tensor) or a structured action (an ``Action``,
e.g. paper 001's ``ActiveLearningAction``: the queried task and one recommendation per
task). The runner writes every action to its run file as JSON and, on resume, rebuilds
it with the environment's ``action_type``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch
from torch import Tensor


@runtime_checkable
class Action(Protocol):
    """A structured action: one round's decision, written to and read from JSON.

    ``from_json(action.to_json())`` must rebuild an action that every policy and
    environment treats exactly as the original (same numbers, same dtype), so that a
    resumed run replays bit-identically.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import Action, ActiveLearningAction
        >>> action = ActiveLearningAction(1, torch.tensor([[0.0], [0.5]]))
        >>> isinstance(action, Action)
        True
        >>> ActiveLearningAction.from_json(action.to_json()) == action
        True
    """

    def to_json(self) -> Any:
        """The action as JSON-serializable data (numbers, lists, dicts)."""

    @classmethod
    def from_json(cls, data: Any) -> Action:
        """The action that ``to_json`` wrote."""


@runtime_checkable
class Environment(Protocol):
    """What the runner needs from a problem (the bandit protocol of one paper).

    An environment whose actions are not ``d`` tensors sets the class attribute
    ``action_type`` to their ``Action`` class (the runner rebuilds recorded actions
    with ``action_type.from_json``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import Environment, OnlineMultiTaskEnvironment
        >>> from botorch_mtucb.problems import MultiTaskArmProblem
        >>> arms = [torch.tensor([[0.0], [1.0]])] * 2
        >>> values = [torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0])]
        >>> problem = MultiTaskArmProblem(arms, values, noise_std=0.1)
        >>> isinstance(OnlineMultiTaskEnvironment(problem), Environment)
        True
    """

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """The round's context (weights, task, action set, ...).

        Tensors and numbers are recorded with the round, except under keys that
        start with ``_`` (large items such as action sets, regenerated on resume).
        """

    def observe(
        self, x: Tensor | Action, context: dict[str, Any], generator: torch.Generator
    ) -> Tensor:
        """A noisy observation for the action ``x``."""

    def regret(self, x: Tensor | Action, context: dict[str, Any]) -> float:
        """The instantaneous regret of the action ``x`` in this context (``>= 0``)."""


@runtime_checkable
class Policy(Protocol):
    """A bandit algorithm: ``select`` an action, then ``update`` with what was observed.

    Optional methods: ``diagnostics()`` (a dict of numbers recorded with each round)
    and ``settings()`` (the parameters that change the policy's behaviour, stored in
    the run file's header and checked on resume; ``None``: none). The package's UCB
    policies are ``ConfidencePolicy`` s (a confidence rule and a round protocol).

    Example:
        >>> from botorch_mtucb.bandits import Policy, RandomPolicy
        >>> isinstance(RandomPolicy(), Policy)
        True
    """

    name: str

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor | Action:
        """The action to play: a point ``x_t`` (``d`` tensor) or a structured action."""

    def update(
        self, x: Tensor | Action, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Take the observation ``y`` for the action ``x`` into account."""
