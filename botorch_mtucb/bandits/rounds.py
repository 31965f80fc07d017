r"""The round protocols: what a policy's confidence rule is maximized for each round, and
what is fed back to it.

* ``ScalarizedRound`` (paper 000): the round's scalarization ``s_{lambda_t}`` (context key
  ``"_scalarization"``); ``x_t = argmax_x u_{t-1}(s_{lambda_t}, x)`` over a fixed domain,
  then the full vector ``y_t`` goes to the rule.
* ``SingleTaskRound`` (paper 002, KernelUCB's Algorithm 1): ``x_t = argmax u_{t-1}(x)``
  over the round's action set (context key ``"_actions"``) or a fixed domain; ``y_t``.
* ``RevealedTaskRound`` (paper 001, online, Algorithm 1): nature reveals ``i_t`` (context
  key ``"task"``); ``x_t = argmax_x u_{t-1}(i_t, x)``; ``y_t`` on ``i_t``.
* ``ActiveTaskRound`` (paper 001, active learning, Algorithm 2): the rule recommends
  ``x_t^i = argmax_x u_{t-1}(i, x)`` on every task and a task query picks ``i_t``
  (``LargestGain``: MT-AL's most uncertain task, MTS's largest sampled improvement;
  ``UniformTask``; ``OptimisticGap``: AE-LSVI's); the action is an
  ``ActiveLearningAction`` and ``y_t`` is observed on ``(i_t, x_t^{i_t})``.

A protocol's ``rule_type`` names what it asks of a rule (``confidence_rules.base``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits.confidence_rules.base import (
    ConfidenceRule,
    TaskChoice,
    TaskConfidenceRule,
    maximize_rule,
)
from botorch_mtucb.bandits.environments.task_indexed import ActiveLearningAction
from botorch_mtucb.utils.domains import BoxDomain, Domain, FiniteDomain
from botorch_mtucb.utils.random import argmax_random_ties


def round_domain(context: dict[str, Any], domain: Domain | None) -> Domain:
    """The round's action set ``context["_actions"]`` as a ``FiniteDomain``, or ``domain``.

    Raises:
        ValueError: If the context has no ``"_actions"`` and ``domain`` is ``None``.
        TypeError: If ``domain`` is neither a ``FiniteDomain`` nor a ``BoxDomain``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits.rounds import round_domain
        >>> round_domain({"_actions": torch.eye(2)}, None).points.shape
        torch.Size([2, 2])
    """
    actions = context.get("_actions")
    if actions is not None:
        return FiniteDomain(actions)
    if domain is None:
        raise ValueError("the context has no '_actions' and the policy has no domain")
    if not isinstance(domain, (FiniteDomain, BoxDomain)):
        raise TypeError(f"domain must be a FiniteDomain or BoxDomain, got {type(domain).__name__}")
    return domain


class ScalarizedRound:
    r"""Paper 000's round: maximize the rule's bound of the round's scalarization.

    ``x_t = argmax_{x in domain} u_{t-1}(s_{lambda_t}, x)`` with ``s_{lambda_t} =
    context["_scalarization"]`` (``ScalarizedEnvironment``), then ``rule.update(x_t,
    y_t, generator=generator)`` with the full vector ``y_t`` (``1 x d`` and ``1 x n``).

    Args:
        domain: A ``FiniteDomain`` or ``BoxDomain``.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
        >>> from botorch_mtucb.bandits.scalarized import mt_kb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = mt_kb(problem.make_data_kernel(), problem.task_covariance,
        ...                problem.domain, problem.rkhs_norm_bound, problem.noise_std)
        >>> type(policy.protocol).__name__
        'ScalarizedRound'
    """

    rule_type = ConfidenceRule
    rule_methods = "acquisition(scalarization), update(X, Y, generator=None) and diagnostics()"

    def __init__(self, domain: Domain) -> None:
        self.domain = domain

    def select(
        self, rule: ConfidenceRule, context: dict[str, Any], generator: torch.Generator
    ) -> Tensor:
        """``x_t``, the maximizer of the rule's bound for the round's scalarization."""
        return maximize_rule(rule, self.domain, generator, context["_scalarization"])

    def update(
        self,
        rule: ConfidenceRule,
        x: Tensor,
        y: Tensor,
        context: dict[str, Any],
        generator: torch.Generator,
    ) -> None:
        """``y_t`` (all ``n`` tasks) at ``x_t`` to the rule."""
        rule.update(x.reshape(1, -1), y.reshape(1, -1), generator=generator)

    def diagnostics(self) -> dict[str, float]:
        """None of its own."""
        return {}


class SingleTaskRound:
    r"""Paper 002's round (KernelUCB, Algorithm 1): ``x_t = argmax_{x in X_t}
    u_{t-1}(x)`` over the round's action set ``X_t`` (context key ``"_actions"``, Section
    5.1) or a fixed domain; then ``rule.update(x_t, y_t)`` in float64 (``1 x d``, ``1 x 1``).

    Args:
        domain: Where to look when the context has no ``"_actions"`` (a
            ``FiniteDomain`` or ``BoxDomain``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import KernelUCB, confidence_rule
        >>> from botorch_mtucb.problems import make_kernel
        >>> policy = KernelUCB(confidence_rule("AMM-UCB", make_kernel("rbf", 0.5), 2))
        >>> type(policy.protocol).__name__
        'SingleTaskRound'
    """

    rule_type = ConfidenceRule
    rule_methods = "acquisition(), update(X, Y) and diagnostics()"

    def __init__(self, domain: Domain | None = None) -> None:
        self.domain = domain

    def select(
        self, rule: ConfidenceRule, context: dict[str, Any], generator: torch.Generator
    ) -> Tensor:
        """``x_t = argmax u_{t-1}(x)`` over the round's actions (or the domain)."""
        return maximize_rule(rule, round_domain(context, self.domain), generator)

    def update(
        self,
        rule: ConfidenceRule,
        x: Tensor,
        y: Tensor,
        context: dict[str, Any],
        generator: torch.Generator,
    ) -> None:
        """Add ``(x_t, y_t)`` to the rule (recursive updates, ``O(t^2)``)."""
        rule.update(x.reshape(1, -1).to(torch.float64), y.reshape(1, 1).to(torch.float64))

    def diagnostics(self) -> dict[str, float]:
        """None of its own."""
        return {}


class RevealedTaskRound:
    r"""Paper 001's online round (Algorithm 1): ``x_t = argmax_x u_{t-1}(i_t, x)`` for
    the task ``i_t = context["task"]`` revealed by nature (``OnlineMultiTaskEnvironment``),
    then ``rule.observe(i_t, x_t, y_t)``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits.task_indexed import mt_ucb
        >>> from botorch_mtucb.experiments.paper001.methods import linear_kernel
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> policy = mt_ucb(FiniteDomain(torch.eye(3, dtype=torch.float64)), linear_kernel(),
        ...                 b=1.0, rkhs_norm_bound=1.0, task_deviation=0.5, num_tasks=2)
        >>> x = policy.select({"task": 1}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.2]), {"task": 1}, torch.Generator())
        >>> policy.rule.regression.num_observations
        1
    """

    rule_type = TaskConfidenceRule
    rule_methods = "num_tasks, task_argmax(task, generator), observe(task, x, y), diagnostics()"

    def select(
        self, rule: TaskConfidenceRule, context: dict[str, Any], generator: torch.Generator
    ) -> Tensor:
        """``x_t``, the rule's choice on the revealed task."""
        return rule.task_argmax(int(context["task"]), generator).x

    def update(
        self,
        rule: TaskConfidenceRule,
        x: Tensor,
        y: Tensor,
        context: dict[str, Any],
        generator: torch.Generator,
    ) -> None:
        """``y_t`` at ``(i_t, x_t)`` to the rule."""
        rule.observe(int(context["task"]), x, y)

    def diagnostics(self) -> dict[str, float]:
        """None of its own."""
        return {}


class LargestGain:
    """Query the task whose choice is worth the most to the rule (``TaskChoice.gain``:
    MT-AL's ``beta sigma(i, x^i)``, paper 001 Algorithm 2; the half-width of a
    martingale-mixture bound; MTS's sampled improvement), exact ties broken uniformly at
    random with the round's generator (e.g. round 1, when every task has the prior's).

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import LargestGain
        >>> LargestGain().choose([0.1, 0.7, 0.3], torch.Generator())
        1
    """

    label = "MT-AL"

    def score(self, rule: Any, task: int, choice: TaskChoice, generator: torch.Generator) -> float:
        """The choice's gain."""
        return choice.gain

    def choose(self, scores: list[float], generator: torch.Generator) -> int:
        """``argmax_random_ties`` of the scores."""
        return argmax_random_ties(torch.tensor(scores, dtype=torch.float64), generator)


class UniformTask(LargestGain):
    """Query a task drawn uniformly at random from the round's generator (paper 001,
    Section 5, "Uniform").

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import UniformTask
        >>> UniformTask().choose([0.0, 0.0], torch.Generator().manual_seed(0)) in (0, 1)
        True
    """

    label = "Uniform"

    def score(self, rule, task, choice, generator) -> float:  # noqa: D102
        return 0.0

    def choose(self, scores: list[float], generator: torch.Generator) -> int:
        """A task drawn uniformly at random."""
        return int(torch.randint(len(scores), (1,), generator=generator))


class OptimisticGap(LargestGain):
    r"""AE-LSVI's query (paper 001, Appendix C.3): ``argmax_i u_{t-1}(i, x_t^i) - max_x
    l_{t-1}(i, x)``; needs a rule with ``max_lower(task, generator)``.

    Example:
        >>> from botorch_mtucb.bandits import OptimisticGap
        >>> OptimisticGap().label
        'AE-LSVI'
    """

    label = "AE-LSVI"

    def score(self, rule, task, choice, generator) -> float:  # noqa: D102
        return choice.upper - rule.max_lower(task, generator)


class ActiveTaskRound:
    r"""Paper 001's active-learning round (Algorithm 2): recommend ``x_t^i = argmax_x
    u_{t-1}(i, x)`` for every task, query ``i_t`` by ``query``; the action is
    ``ActiveLearningAction(i_t, [x_t^1, ..., x_t^N])`` and ``y_t`` is observed on
    ``(i_t, x_t^{i_t})``. The rule's choices and the query's scores are computed task by
    task (with the round's generator), then the query chooses.

    Args:
        query: ``LargestGain()`` (default), ``UniformTask()`` or ``OptimisticGap()``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits.task_indexed import mt_al
        >>> from botorch_mtucb.experiments.paper001.methods import linear_kernel
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> policy = mt_al(FiniteDomain(torch.eye(3, dtype=torch.float64)), linear_kernel(),
        ...                b=1.0, rkhs_norm_bound=1.0, task_deviation=0.5, num_tasks=2)
        >>> action = policy.select({}, torch.Generator().manual_seed(0))
        >>> action.recommendations.shape
        torch.Size([2, 3])
        >>> policy.update(action, torch.tensor([0.2]), {}, torch.Generator())
        >>> policy.diagnostics()["task"] == action.task
        True
    """

    rule_type = TaskConfidenceRule
    rule_methods = "num_tasks, task_argmax(task, generator), observe(task, x, y), diagnostics()"

    def __init__(self, query: LargestGain | None = None) -> None:
        self.query = LargestGain() if query is None else query
        self.last_task = -1  # the task queried last (-1 before the first round)

    def recommend(
        self, rule: TaskConfidenceRule, generator: torch.Generator
    ) -> tuple[Tensor, list[float]]:
        """The recommendations ``x_t^i`` (``N x d``) and the query's scores (``N``)."""
        points, scores = [], []
        for task in range(rule.num_tasks):
            choice = rule.task_argmax(task, generator)
            points.append(choice.x)
            scores.append(self.query.score(rule, task, choice, generator))
        return torch.stack(points), scores

    def select(
        self, rule: TaskConfidenceRule, context: dict[str, Any], generator: torch.Generator
    ) -> ActiveLearningAction:
        """The action: the queried task ``i_t`` and the recommendations."""
        recommendations, scores = self.recommend(rule, generator)
        self.last_task = self.query.choose(scores, generator)
        return ActiveLearningAction(self.last_task, recommendations)

    def update(
        self,
        rule: TaskConfidenceRule,
        action: ActiveLearningAction,
        y: Tensor,
        context: dict[str, Any],
        generator: torch.Generator,
    ) -> None:
        """``y_t`` at ``(i_t, x_t^{i_t})`` to the rule."""
        self.last_task = action.task
        rule.observe(action.task, action.query, y)

    def diagnostics(self) -> dict[str, float]:
        """The task queried last."""
        return {"task": float(self.last_task)}
