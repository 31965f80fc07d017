"""Online / active protocols of paper 001 (eq. 6 and Section 4) and the active-learning
action (validation, JSON round trip)."""

from __future__ import annotations

import json

import pytest
import torch

from botorch_mtucb.bandits.environments.task_indexed import (
    ActiveLearningAction,
    ActiveMultiTaskEnvironment,
    OnlineMultiTaskEnvironment,
)
from botorch_mtucb.bandits.protocols import Action
from botorch_mtucb.bandits.runner import action_from_json, action_to_json
from botorch_mtucb.problems.task_arms import MultiTaskArmProblem


def _problem():
    arms = [torch.tensor([[0.0], [1.0], [2.0]]), torch.tensor([[5.0], [6.0]])]
    values = [torch.tensor([1.0, 3.0, 2.0]), torch.tensor([-1.0, 4.0])]
    return MultiTaskArmProblem(arms, values, noise_std=0.5)


def test_online_regret_and_noise():
    problem = _problem()
    environment = OnlineMultiTaskEnvironment(problem)
    generator = torch.Generator().manual_seed(0)
    tasks = [environment.context(t, generator)["task"] for t in range(400)]
    assert set(tasks) == {0, 1} and 150 < sum(tasks) < 250
    assert environment.regret(torch.tensor([0.0]), {"task": 0}) == pytest.approx(2.0)
    assert environment.regret(torch.tensor([6.0]), {"task": 1}) == pytest.approx(0.0)
    ys = torch.stack(
        [environment.observe(torch.tensor([1.0]), {"task": 0}, generator) for _ in range(2000)]
    )
    assert float(ys.mean()) == pytest.approx(3.0, abs=0.05)
    assert float(ys.std()) == pytest.approx(0.5, abs=0.05)


def test_active_regret_is_the_task_average():
    problem = _problem()
    environment = ActiveMultiTaskEnvironment(problem)
    action = ActiveLearningAction(1, torch.tensor([[2.0], [5.0]]))
    assert action.task == 1 and action.num_tasks == 2
    assert action.recommendations.dtype == torch.float64
    assert torch.equal(action.query, torch.tensor([5.0], dtype=torch.float64))
    assert environment.regret(action, {}) == pytest.approx(((3 - 2) + (4 - (-1))) / 2)
    generator = torch.Generator().manual_seed(0)
    y = environment.observe(action, {}, generator)
    assert abs(float(y) - (-1.0)) < 3.0  # the queried task 1 at x = 5
    # the observation is the problem's noisy f(1, 5) with the same generator draws
    expected = problem.observe(1, torch.tensor([5.0]), torch.Generator().manual_seed(0))
    assert torch.equal(y, expected.reshape(-1))
    with pytest.raises(ValueError, match="not one of the arms"):
        environment.regret(ActiveLearningAction(0, torch.tensor([[0.5], [5.0]])), {})
    with pytest.raises(ValueError, match="2 tasks"):
        environment.regret(ActiveLearningAction(0, torch.zeros(3, 1)), {})
    with pytest.raises(TypeError, match="ActiveLearningAction"):
        environment.observe(torch.tensor([1.0, 2.0, 5.0]), {}, generator)


def test_active_learning_action_checks_its_fields():
    with pytest.raises(ValueError, match="N x d"):
        ActiveLearningAction(0, torch.zeros(4))
    with pytest.raises(ValueError, match="queried task"):
        ActiveLearningAction(2, torch.zeros(2, 1))
    with pytest.raises(ValueError, match="queried task"):
        ActiveLearningAction(-1, torch.zeros(2, 1))
    for task in (1.0, True, "1", None):
        with pytest.raises(TypeError, match="task"):
            ActiveLearningAction(task, torch.zeros(2, 1))
    assert ActiveLearningAction(torch.tensor(1), torch.zeros(2, 1)).task == 1
    action = ActiveLearningAction(0, torch.zeros(2, 1))
    with pytest.raises(AttributeError):
        action.task = 1  # frozen


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_active_learning_action_json_round_trip_is_exact(dtype):
    generator = torch.Generator().manual_seed(0)
    recommendations = torch.randn(3, 4, generator=generator, dtype=dtype) / 7.0
    action = ActiveLearningAction(2, recommendations)
    assert isinstance(action, Action)
    data = json.loads(json.dumps(action_to_json(action)))  # through a run file's text
    assert data == {"task": 2, "recommendations": recommendations.double().tolist()}
    rebuilt = action_from_json(data, ActiveMultiTaskEnvironment(_problem()))
    assert isinstance(rebuilt, ActiveLearningAction) and rebuilt == action
    assert rebuilt.recommendations.dtype == torch.float64
    assert torch.equal(rebuilt.recommendations, recommendations.double())  # bit for bit
    assert rebuilt != ActiveLearningAction(1, recommendations)
    assert rebuilt != ActiveLearningAction(2, recommendations.double() + 1e-12)
    # points (online protocol) are plain tensors, recorded as their floats
    point = torch.tensor([0.1, 1 / 3], dtype=torch.float64)
    assert action_to_json(point.reshape(1, 2)) == point.tolist()
    assert torch.equal(
        action_from_json(point.tolist(), OnlineMultiTaskEnvironment(_problem())), point
    )
    with pytest.raises(TypeError, match="to_json"):
        action_to_json([0.1, 0.2])
