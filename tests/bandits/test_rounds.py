"""The round protocols with a recording rule: what each asks of the rule and in which order
(paper 000's scalarized round, paper 002's single task, paper 001's revealed task and
active task choice with its three queries)."""

from __future__ import annotations

import pytest
import torch

from botorch_mtucb.bandits import (
    ActiveLearningAction,
    ActiveTaskRound,
    ConfidencePolicy,
    LargestGain,
    OptimisticGap,
    RevealedTaskRound,
    ScalarizedRound,
    SingleTaskRound,
    TaskChoice,
    UniformTask,
)
from botorch_mtucb.utils import FiniteDomain, argmax_random_ties

POINTS = torch.tensor([[0.0], [0.5], [1.0]], dtype=torch.float64)


class PointRule:
    """A rule whose bound is ``values[i]`` at ``POINTS[i]`` (any objective), recording calls."""

    def __init__(self, values):
        self.values, self.calls = torch.as_tensor(values, dtype=torch.float64), []

    def acquisition(self, *objective):
        self.calls.append(("acquisition", objective))
        values = self.values

        class Lookup(torch.nn.Module):
            def forward(self, X):  # b x 1 x 1 -> b
                index = (X.reshape(-1, 1) == POINTS.T).double().argmax(-1)
                return values[index]

        return Lookup()

    def update(self, X, Y, **kwargs):
        self.calls.append(("update", X.clone(), Y.clone(), kwargs))

    def diagnostics(self):
        return {"calls": float(len(self.calls))}


class TaskRule:
    """A task-indexed rule: arm ``task`` on every task, upper ``task``, gain ``gains[task]``."""

    num_tasks = 3

    def __init__(self, gains):
        self.gains, self.calls = gains, []

    def task_argmax(self, task, generator):
        self.calls.append(("task_argmax", task))
        return TaskChoice(POINTS[task], float(task), self.gains[task])

    def max_lower(self, task, generator):
        self.calls.append(("max_lower", task))
        return 2.0 * task

    def observe(self, task, x, y):
        self.calls.append(("observe", task, x.clone(), float(y)))

    def diagnostics(self):
        return {"width": 1.0}


def test_scalarized_round_maximizes_for_the_rounds_scalarization():
    rule = PointRule([0.1, 0.9, 0.4])
    policy = ConfidencePolicy(rule, ScalarizedRound(FiniteDomain(POINTS)), "scalarized")
    scalarization = object()
    generator = torch.Generator()
    x = policy.select({"_scalarization": scalarization}, generator)
    assert torch.equal(x, POINTS[1]) and rule.calls[0] == ("acquisition", (scalarization,))
    policy.update(x, torch.tensor([1.0, 2.0]), {}, generator)
    _, X, Y, kwargs = rule.calls[-1]
    assert X.shape == (1, 1) and Y.tolist() == [[1.0, 2.0]] and kwargs["generator"] is generator


def test_single_task_round_uses_the_rounds_actions_and_float64():
    rule = PointRule([0.3, 0.2, 0.7])
    policy = ConfidencePolicy(rule, SingleTaskRound(), "single")
    x = policy.select({"_actions": POINTS}, torch.Generator())
    assert torch.equal(x, POINTS[2]) and rule.calls[0] == ("acquisition", ())
    policy.update(x.float(), torch.tensor(0.5, dtype=torch.float32), {}, torch.Generator())
    _, X, Y, kwargs = rule.calls[-1]
    assert X.dtype == Y.dtype == torch.float64 and Y.shape == (1, 1) and kwargs == {}
    with pytest.raises(ValueError, match="_actions"):
        policy.select({}, torch.Generator())


def test_revealed_task_round():
    rule = TaskRule([0.0, 0.0, 0.0])
    policy = ConfidencePolicy(rule, RevealedTaskRound(), "revealed")
    x = policy.select({"task": 2}, torch.Generator())
    policy.update(x, torch.tensor([0.25]), {"task": 2}, torch.Generator())
    assert rule.calls == [("task_argmax", 2), ("observe", 2, POINTS[2], 0.25)]
    assert policy.diagnostics() == {"width": 1.0}


@pytest.mark.parametrize("query", [LargestGain(), UniformTask(), OptimisticGap()])
def test_active_task_round_queries(query):
    gains = [0.5, 0.9, 0.1]
    rule = TaskRule(gains)
    policy = ConfidencePolicy(rule, ActiveTaskRound(query), "active")
    action = policy.select({}, torch.Generator().manual_seed(3))
    assert isinstance(action, ActiveLearningAction)
    assert torch.equal(action.recommendations, POINTS)
    if isinstance(query, OptimisticGap):  # u(i, x^i) - max_x l(i, x) = i - 2 i: task 0
        assert action.task == 0
        expected = [("task_argmax", 0), ("max_lower", 0), ("task_argmax", 1), ("max_lower", 1),
                    ("task_argmax", 2), ("max_lower", 2)]  # fmt: skip
        assert rule.calls == expected  # task by task: the generator's order
    elif isinstance(query, UniformTask):
        expected = int(torch.randint(3, (1,), generator=torch.Generator().manual_seed(3)))
        assert action.task == expected
    else:
        assert action.task == 1  # the largest gain
    assert policy.diagnostics() == {"task": float(action.task), "width": 1.0}
    policy.update(action, torch.tensor([0.5]), {}, torch.Generator())
    assert rule.calls[-1] == ("observe", action.task, POINTS[action.task], 0.5)


def test_largest_gain_breaks_exact_ties_at_random():
    scores = [1.0, 3.0, 3.0]
    drawn = {LargestGain().choose(scores, torch.Generator().manual_seed(s)) for s in range(30)}
    assert drawn == {1, 2}
    generator = torch.Generator().manual_seed(4)
    reference = argmax_random_ties(torch.tensor(scores, dtype=torch.float64),
                                   torch.Generator().manual_seed(4))  # fmt: skip
    assert LargestGain().choose(scores, generator) == reference
