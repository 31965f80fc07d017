"""Online / active protocols of paper 001 (eq. 6 and Section 4) and the action encoding."""

from __future__ import annotations

import pytest
import torch

from botorch_mtucb.bandits.environments.task_indexed import (
    ActiveMultiTaskEnvironment,
    OnlineMultiTaskEnvironment,
    decode_active_action,
    encode_active_action,
)
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
    action = encode_active_action(1, torch.tensor([[2.0], [5.0]]))
    assert action.tolist() == [1.0, 2.0, 5.0]
    assert environment.regret(action, {}) == pytest.approx(((3 - 2) + (4 - (-1))) / 2)
    generator = torch.Generator().manual_seed(0)
    y = environment.observe(action, {}, generator)
    assert abs(float(y) - (-1.0)) < 3.0  # the queried task 1 at x = 5
    task, recommendations = decode_active_action(action, 2)
    assert task == 1 and torch.equal(
        recommendations, torch.tensor([[2.0], [5.0]], dtype=torch.float64)
    )
    with pytest.raises(ValueError, match="1 \\+ N d"):
        decode_active_action(torch.zeros(4), 2)
    with pytest.raises(ValueError, match="queried task"):
        decode_active_action(torch.tensor([2.0, 0.0, 0.0]), 2)
    with pytest.raises(ValueError, match="not one of the arms"):
        environment.regret(encode_active_action(0, torch.tensor([[0.5], [5.0]])), {})
