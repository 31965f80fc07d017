"""MultiTaskArmProblem: per-task finite arms with known values."""

from __future__ import annotations

import pytest
import torch

from botorch_mtucb.problems.task_arms import MultiTaskArmProblem


def test_lookup_optimum_and_noise():
    arms = [torch.tensor([[0.0, 1.0], [1.0, 0.0]]), torch.tensor([[2.0, 2.0]])]
    values = [torch.tensor([0.5, -1.0]), torch.tensor([3.0])]
    problem = MultiTaskArmProblem(arms, values, noise_std=0.0, task_names=["x", "y"])
    assert problem.num_tasks == 2 and problem.dim == 2
    assert problem.optimum(0) == 0.5 and problem.optimum(1) == 3.0
    assert problem.objective(0, torch.tensor([1.0, 0.0])) == -1.0
    assert float(problem.observe(1, torch.tensor([2.0, 2.0]))) == 3.0
    assert torch.equal(problem.domain(1).points, arms[1])


def test_bad_input():
    arm = torch.zeros(2, 2)
    with pytest.raises(ValueError, match="task 1 has no arms"):
        MultiTaskArmProblem([arm, torch.zeros(0, 2)], [torch.zeros(2), torch.zeros(0)], 0.1)
    with pytest.raises(ValueError, match="same dimension"):
        MultiTaskArmProblem([arm, torch.zeros(2, 3)], [torch.zeros(2), torch.zeros(2)], 0.1)
    with pytest.raises(ValueError, match="noise_std"):
        MultiTaskArmProblem([arm], [torch.zeros(2)], -1.0)
    problem = MultiTaskArmProblem([arm], [torch.zeros(2)], 0.1)
    with pytest.raises(ValueError, match="task must lie"):
        problem.optimum(1)
