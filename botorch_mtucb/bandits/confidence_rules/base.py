r"""What a round protocol asks of a confidence rule.

A policy is a confidence rule composed with a round protocol (``ConfidencePolicy``). The
rule holds the data and builds the round's upper confidence bound; the protocol
(``bandits.rounds``) decides what the bound is maximized for and what is fed back. Two
shapes of rule serve the four protocols:

* ``ConfidenceRule`` (a point per round: paper 000's scalarized feedback, paper 002's
  single task): ``acquisition(*objective)`` is the bound as a BoTorch acquisition
  function (with the round's scalarization in paper 000, without one for a single
  output), ``update(X, Y, generator=None)`` adds observations
  (paper 000's round passes its ``generator`` by keyword, for rules that draw, as MT-BKB's
  sketch; the single-task round passes none), ``diagnostics()`` gives the numbers
  recorded with each round. Optional: ``maximize(domain, generator, *objective)`` when
  the rule maximizes its bound faster than ``maximize_acquisition`` (the screened exact
  argmax), ``settings()`` for the run file's header.
* ``TaskConfidenceRule`` (paper 001's task-indexed feedback, revealed or chosen):
  ``num_tasks``, ``task_argmax(task, generator)`` is the maximizer of the bound on one task's arms as a
  ``TaskChoice``, ``observe(task, x, y)`` adds an observation, ``diagnostics()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

import torch
from botorch.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_mtucb.utils.domains import BoxDomain, Domain, FiniteDomain, maximize_acquisition


@runtime_checkable
class ConfidenceRule(Protocol):
    """A rule whose bound is maximized over points (paper 000's and 002's rounds).

    Example:
        >>> from botorch_mtucb.bandits import ConfidenceRule, confidence_rule
        >>> from botorch_mtucb.problems import make_kernel
        >>> isinstance(confidence_rule("DMM-UCB", make_kernel("rbf", 0.5), 2), ConfidenceRule)
        True
    """

    def acquisition(self, *objective: Any) -> AcquisitionFunction:
        """``u_{t-1}`` on the data seen so far (for the round's scalarization, if any)."""

    def update(self, X: Tensor, Y: Tensor, generator: torch.Generator | None = None) -> None:
        """Add the observations ``Y`` (``m x n``) at ``X`` (``m x d``); ``generator`` is
        the round's random stream where the protocol passes one (by keyword)."""

    def diagnostics(self) -> dict[str, float]:
        """Numbers recorded with each round."""


class TaskChoice(NamedTuple):
    """A task-indexed rule's choice on one task's arms.

    Attributes:
        x: The arm (``d``), in the dtype of the task's domain.
        upper: The rule's upper bound of ``f(task, x)`` there.
        gain: What querying the task is worth to the rule: its half-width
            ``(u - l) / 2`` at ``x`` (``beta sigma`` for ``mu +- beta sigma``; paper 001,
            Algorithm 2), or the sampled improvement of posterior sampling.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import TaskChoice
        >>> TaskChoice(torch.zeros(2), upper=1.5, gain=0.5).gain
        0.5
    """

    x: Tensor
    upper: float
    gain: float


@runtime_checkable
class TaskConfidenceRule(Protocol):
    """A rule on paper 001's task-indexed data (``f(i, x)`` observed one task at a time).

    Example:
        >>> from botorch_mtucb.bandits import TaskConfidenceRule
        >>> from botorch_mtucb.bandits.task_indexed import mt_ucb
        >>> from botorch_mtucb.experiments.paper001.methods import linear_kernel
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> import torch
        >>> policy = mt_ucb(FiniteDomain(torch.eye(2, dtype=torch.float64)), linear_kernel(),
        ...                 1.0, 1.0, 0.5, num_tasks=2)
        >>> isinstance(policy.rule, TaskConfidenceRule)
        True
    """

    num_tasks: int

    def task_argmax(self, task: int, generator: torch.Generator | None) -> TaskChoice:
        """The maximizer of the rule's upper bound over the arms of ``task``."""

    def observe(self, task: int, x: Tensor, y: Tensor | float) -> None:
        """Add the observation ``y = f(task, x) + noise``."""

    def diagnostics(self) -> dict[str, float]:
        """Numbers recorded with each round."""


def maximize_rule(
    rule: ConfidenceRule, domain: Domain, generator: torch.Generator | None, *objective: Any
) -> Tensor:
    """The maximizer (``d``, detached) of ``rule``'s bound over ``domain``: the rule's own
    ``maximize`` where it has one, else ``maximize_acquisition`` of its acquisition.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import confidence_rule
        >>> from botorch_mtucb.bandits.confidence_rules.base import maximize_rule
        >>> from botorch_mtucb.problems import make_kernel
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> rule = confidence_rule("AMM-UCB", make_kernel("rbf", 0.5), 1)
        >>> points = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
        >>> maximize_rule(rule, FiniteDomain(points), None)  # flat prior: the first point
        tensor([0.], dtype=torch.float64)
    """
    maximize = getattr(rule, "maximize", None)
    if maximize is not None:
        return maximize(domain, generator, *objective)
    x, _ = maximize_acquisition(rule.acquisition(*objective), domain, generator)
    return x.detach()


def per_task_domains(domains: Domain | Sequence[Domain], num_tasks: int | None) -> list[Domain]:
    """One domain per task: ``domains`` as a list, or one domain repeated ``num_tasks``
    times (paper 001's rules take either).

    Raises:
        ValueError: If a single domain is given without ``num_tasks``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits.confidence_rules.base import per_task_domains
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> len(per_task_domains(FiniteDomain(torch.eye(2, dtype=torch.float64)), 3))
        3
    """
    if isinstance(domains, (FiniteDomain, BoxDomain)):
        if num_tasks is None:
            raise ValueError("num_tasks is required when a single domain is given")
        return [domains] * num_tasks
    return list(domains)
