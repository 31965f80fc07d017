"""Paper 000's synthetic problems against independent NumPy transcriptions."""

import math

import numpy as np
import pytest
import torch

from botorch_mtucb.problems import perturbed_sine_problem, rkhs_problem, shifted_branin_problem
from botorch_mtucb.utils import BoxDomain, FiniteDomain


def np_se(a, b, lengthscale):
    return np.exp(-((a[:, None, :] - b[None, :, :]) ** 2).sum(-1) / (2 * lengthscale**2))


@pytest.mark.parametrize("num_tasks", [2, 5])
def test_rkhs_function_is_a_kernel_expansion(num_tasks):
    seed = 3
    problem = rkhs_problem(num_tasks, seed=seed)
    # Regenerate the random draws the documented way, independently of the module.
    generator = torch.Generator().manual_seed(seed)
    A = torch.rand(num_tasks, num_tasks, generator=generator, dtype=torch.float64).numpy()
    grid = np.linspace(0, 1, 101)[:, None]
    centres = grid[torch.randperm(101, generator=generator)[:50].numpy()]
    c = (2 * torch.rand(50, num_tasks, generator=generator, dtype=torch.float64) - 1).numpy()
    B = A.T @ A
    lengthscale = float(problem.data_kernel.lengthscale)
    expected = sum(
        np_se(grid, centres[i : i + 1], lengthscale) * (B @ c[i])[None, :] for i in range(50)
    )
    values = problem.objective(torch.tensor(grid)).numpy()
    np.testing.assert_allclose(values, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(problem.task_covariance.numpy(), B, rtol=1e-12)
    kappa = np.linalg.eigvalsh(B).max()
    assert problem.rkhs_norm_bound == pytest.approx(np.linalg.norm(expected, axis=1).max() / kappa)
    assert isinstance(problem.domain, FiniteDomain) and problem.domain.points.shape == (101, 1)
    np.testing.assert_allclose(problem.reference_point.numpy(), expected.min(0))
    assert problem.noise_std == 0.1 and problem.regularization == 0.1


def test_rkhs_problem_depends_on_seed_and_rejects_bad_tasks():
    a, b = rkhs_problem(2, seed=0), rkhs_problem(2, seed=1)
    assert not torch.allclose(a.objective(a.regret_points), b.objective(b.regret_points))
    with pytest.raises(ValueError, match="num_tasks"):
        rkhs_problem(0)


def test_perturbed_sine_matches_formula():
    problem = perturbed_sine_problem()
    x = np.linspace(0, 1, 101)
    weights = np.array([[1.0, -0.5, 0.0], [0.0, 1.0, -0.5], [-0.5, 0.0, 1.0], [0.5, 0.5, 0.5]])
    bumps = np.exp(-((x[:, None] - np.array([0.05, 0.4, 0.7])) ** 2) / (2 * 0.01))
    expected = np.sin(2 * np.pi * x)[:, None] + 0.6 * bumps @ weights.T
    values = problem.objective(torch.tensor(x[:, None])).numpy()
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    omega = 0.4
    B = omega * np.eye(4) + (1 - omega) / 4 * np.ones((4, 4))
    np.testing.assert_allclose(problem.task_covariance.numpy(), B, atol=1e-7)
    assert problem.noise_std == pytest.approx(math.sqrt(0.01))


def branin(x1, x2):
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * np.cos(x1) + 10


@pytest.mark.parametrize("continuous", [False, True])
def test_shifted_branin_tasks(continuous):
    problem = shifted_branin_problem(continuous=continuous)
    assert problem.num_tasks == 9
    assert isinstance(problem.domain, BoxDomain if continuous else FiniteDomain)
    u = np.random.default_rng(0).random((50, 2))
    grid = np.stack(np.meshgrid(np.linspace(0, 1, 100), np.linspace(0, 1, 100)), -1).reshape(-1, 2)
    raw = branin(-5 + 15 * grid[:, 0], 15 * grid[:, 1])
    values = problem.objective(torch.tensor(u)).numpy()
    for i in range(1, 10):
        shift = np.zeros(2)
        shift[(i - 1) % 2] = i / 100
        v = u - shift
        expected = (raw.max() - branin(-5 + 15 * v[:, 0], 15 * v[:, 1])) / (raw.max() - raw.min())
        np.testing.assert_allclose(values[:, i - 1], expected, rtol=1e-10)
    # The known global minimum of Branin (0.397887) maps to the top of the unshifted scale.
    assert branin(np.pi, 2.275) == pytest.approx(0.397887, abs=1e-6)


@pytest.mark.parametrize("continuous", [False, True])
def test_shifted_branin_equals_the_closed_form_on_every_point(continuous):
    # BoTorch's Branin (the problem's source) against the closed form, to 1e-12, on
    # the regret points, the domain's corners (where the shifted tasks leave the
    # Branin box) and the normalization grid; and the derived norm bound and
    # reference point.
    problem = shifted_branin_problem(continuous=continuous)
    corners = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    grid = np.stack(np.meshgrid(np.linspace(0, 1, 100), np.linspace(0, 1, 100)), -1).reshape(-1, 2)
    raw = branin(-5 + 15 * grid[:, 0], 15 * grid[:, 1])
    shifts = np.zeros((9, 2))
    for i in range(1, 10):
        shifts[i - 1, (i - 1) % 2] = i / 100

    def closed_form(u):
        v = u[:, None, :] - shifts  # P x n x 2
        return (raw.max() - branin(-5 + 15 * v[..., 0], 15 * v[..., 1])) / (raw.max() - raw.min())

    for points in (problem.regret_points.numpy(), corners, grid):
        values = problem.objective(torch.tensor(points)).numpy()
        np.testing.assert_allclose(values, closed_form(points), rtol=1e-12, atol=1e-12)
    expected = closed_form(problem.regret_points.numpy())
    kappa = np.linalg.eigvalsh(problem.task_covariance.numpy()).max()
    bound = np.linalg.norm(expected, axis=-1).max() / kappa
    assert problem.rkhs_norm_bound == pytest.approx(bound, rel=1e-12)
    np.testing.assert_allclose(
        problem.reference_point.numpy(), closed_form(grid).min(0), atol=1e-12
    )


def test_observations_add_gaussian_noise_with_the_stated_level():
    problem = rkhs_problem(2, seed=0)
    x = problem.domain.points[10]
    generator = torch.Generator().manual_seed(0)
    draws = torch.stack([problem.observe(x, generator) for _ in range(4000)])
    residual = draws - problem.objective(x.reshape(1, -1))
    assert residual.mean().abs() < 0.01
    assert residual.std().item() == pytest.approx(0.1, rel=0.05)
