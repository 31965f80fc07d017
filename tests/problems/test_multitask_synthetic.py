"""Paper 001's synthetic tasks (Section 5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from botorch_mtucb.problems.multitask_synthetic import multitask_synthetic_problem


@pytest.mark.parametrize("num_tasks, weight", [(3, 0.2), (5, 0.4), (10, 0.0)])
def test_tasks_actions_and_constants(num_tasks, weight):
    problem = multitask_synthetic_problem(num_tasks, weight, dim=4, num_actions=500, seed=7)
    theta = problem.task_vectors.numpy()
    # f_i = (1 - delta) f_bar + delta f_dev^i with unit f_bar, f_dev^i: the deviations
    # theta_i - theta_j = delta (dev_i - dev_j) have norm <= 2 delta.
    pairwise = np.linalg.norm(theta[:, None] - theta[None], axis=-1)
    assert pairwise.max() <= 2 * weight + 1e-12
    assert np.linalg.norm(theta, axis=1).max() <= 1 + 1e-12
    B = np.linalg.norm(theta, axis=1).max()
    eps = np.linalg.norm(theta - theta.mean(0), axis=1).max() / B
    assert problem.rkhs_norm_bound == pytest.approx(B)
    assert problem.task_deviation == pytest.approx(eps, abs=1e-12)
    actions = problem.arms[0]
    assert actions.shape == (500, 4)
    np.testing.assert_allclose(actions.norm(dim=-1).numpy(), 10.0)
    for i in range(num_tasks):
        assert problem.optimum(i) == pytest.approx(float((actions @ problem.task_vectors[i]).max()))
        assert problem.objective(i, actions[3]) == pytest.approx(
            float(actions[3] @ problem.task_vectors[i])
        )


def test_default_size_and_bad_input():
    problem = multitask_synthetic_problem(3, 0.2)
    assert problem.arms[0].shape == (10_000, 4) and problem.noise_std == 1.0
    with pytest.raises(ValueError, match="deviation_weight"):
        multitask_synthetic_problem(3, 1.5)
    with pytest.raises(ValueError, match="num_tasks"):
        multitask_synthetic_problem(0, 0.2)
    a = multitask_synthetic_problem(3, 0.2, num_actions=10, seed=1)
    b = multitask_synthetic_problem(3, 0.2, num_actions=10, seed=1)
    assert torch.equal(a.task_vectors, b.task_vectors)
