"""The light-sensor problem against a NumPy transcription of its documented recipe."""

import numpy as np
import pytest
import torch

from botorch_mtucb.problems import light_sensor_problem
from botorch_mtucb.problems.light_sensor import (
    FiniteDomainNuggetKernel,
    fit_spatial_se_kernel,
    load_light_sensor_data,
)


@pytest.fixture(scope="module")
def problem():
    return light_sensor_problem()


@pytest.fixture(scope="module")
def data():
    return load_light_sensor_data()


def test_shipped_data_has_the_documented_shapes(data):
    assert data["train_lux"].shape == (601, 41)
    assert data["test_lux"].shape == (192, 41)
    assert data["coords"].shape == (41, 2)


def test_domain_tasks_and_observations(problem, data):
    coords = data["coords"]
    X = (coords - coords.min(0)) / (coords.max(0) - coords.min(0)).max()
    np.testing.assert_allclose(problem.domain.points.numpy(), X)
    assert X.min() == 0 and X.max() == 1
    test = data["test_lux"] / data["test_lux"].max()
    blocks = np.array_split(np.arange(192), 3)
    F = np.stack([test[b].mean(0) for b in blocks], 1)
    np.testing.assert_allclose(problem.objective(problem.domain.points).numpy(), F, rtol=1e-12)
    # An observation is one test reading of each block at that location.
    generator = torch.Generator().manual_seed(1)
    location = 7
    for _ in range(20):
        y = problem.observe(problem.domain.points[location], generator).numpy()
        for i, b in enumerate(blocks):
            assert np.isclose(test[b, location], y[i]).any()
    with pytest.raises(ValueError, match="41 locations"):
        problem.objective(torch.tensor([[0.5, 0.5]], dtype=torch.float64) + 1e-3)


def test_kernel_task_covariance_noise_and_norms(problem, data):
    X = problem.domain.points.numpy()
    fitted = problem.notes["fitted_se_kernel"]
    lengthscale, nugget = fitted["lengthscale"], fitted["noise"] / fitted["outputscale"]
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * lengthscale**2)) + nugget * np.eye(41)
    with torch.no_grad():
        K_model = problem.data_kernel(problem.domain.points, problem.domain.points).to_dense()
    np.testing.assert_allclose(K_model.numpy(), K, rtol=1e-6, atol=1e-9)
    scale = data["test_lux"].max()
    train = data["train_lux"] / scale
    blocks = np.array_split(np.arange(601), 3)
    R = np.stack([train[b].mean(0) for b in blocks], 1)
    B = R.T @ np.linalg.solve(K, R) / 41
    np.testing.assert_allclose(problem.task_covariance.numpy(), B, rtol=1e-6)
    sigma2 = max(train[b].var(0, ddof=1).mean() for b in blocks)
    assert problem.noise_std == pytest.approx(np.sqrt(sigma2), rel=1e-6)
    F = problem.objective(problem.domain.points).numpy()
    norm = np.sqrt(F.reshape(-1) @ np.linalg.solve(np.kron(K, B), F.reshape(-1)))
    assert problem.rkhs_norm_bound == pytest.approx(norm, rel=1e-6)
    independent = np.kron(K, np.diag(np.diag(B)))
    norm_independent = np.sqrt(F.reshape(-1) @ np.linalg.solve(independent, F.reshape(-1)))
    assert problem.independent_rkhs_norm_bound == pytest.approx(norm_independent, rel=1e-6)


def test_spatial_fit_maximizes_the_replicated_likelihood(problem, data):
    # The fitted hyperparameters (all 601 training rows) are a maximum: perturbing
    # them lowers the summed Gaussian log-likelihood computed here with NumPy.
    coords = data["coords"]
    X = (coords - coords.min(0)) / (coords.max(0) - coords.min(0)).max()
    Y = data["train_lux"] / data["test_lux"].max()
    fitted = problem.notes["fitted_se_kernel"]
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)

    def loglik(lengthscale, outputscale, noise):
        K = outputscale * np.exp(-D2 / (2 * lengthscale**2)) + noise * np.eye(41)
        L = np.linalg.cholesky(K)
        a = np.linalg.solve(L, Y.T)
        return -0.5 * (a**2).sum() - Y.shape[0] * np.log(np.diag(L)).sum()

    best = loglik(fitted["lengthscale"], fitted["outputscale"], fitted["noise"])
    for factor in (0.97, 1.03):
        assert loglik(fitted["lengthscale"] * factor, fitted["outputscale"], fitted["noise"]) < best
        assert loglik(fitted["lengthscale"], fitted["outputscale"] * factor, fitted["noise"]) < best
        assert loglik(fitted["lengthscale"], fitted["outputscale"], fitted["noise"] * factor) < best


def test_spatial_fit_lands_on_the_published_hyperparameters(problem):
    # BoTorch's fit_gpytorch_mll (L-BFGS-B) reaches the optimum that the earlier
    # hand-written torch L-BFGS loop found (values written into the main job's
    # summaries), to the flatness of the likelihood; the fit is deterministic.
    fitted = problem.notes["fitted_se_kernel"]
    published = {
        "lengthscale": 0.20244246664147852,
        "outputscale": 0.22927952575490904,
        "noise": 0.0038348298934526145,
    }
    for name, value in published.items():
        assert fitted[name] == pytest.approx(value, rel=1e-6)
    X, readings = torch.rand(12, 2, dtype=torch.float64), torch.randn(30, 12, dtype=torch.float64)
    assert fit_spatial_se_kernel(X, readings) == fit_spatial_se_kernel(X, readings)


def test_spatial_fit_recovers_a_known_kernel():
    # Replicated draws from a known SE kernel: the fit lands near the truth.
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(30, 2, generator=generator, dtype=torch.float64)
    K = 0.5 * torch.exp(-torch.cdist(X, X).square() / (2 * 0.3**2)) + 0.01 * torch.eye(30)
    L = torch.linalg.cholesky(K)
    Y = (L @ torch.randn(30, 400, generator=generator, dtype=torch.float64)).T
    fitted = fit_spatial_se_kernel(X, Y)
    assert fitted["lengthscale"] == pytest.approx(0.3, rel=0.1)
    assert fitted["outputscale"] == pytest.approx(0.5, rel=0.15)
    assert fitted["noise"] == pytest.approx(0.01, rel=0.15)


def test_nugget_kernel():
    X = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]], dtype=torch.float64)
    K = FiniteDomainNuggetKernel(0.5)(X, X).to_dense()
    expected = 0.5 * torch.tensor([[1.0, 0, 1], [0, 1, 0], [1, 0, 1]], dtype=torch.float64)
    assert torch.equal(K, expected)
    with pytest.raises(ValueError, match="nugget"):
        FiniteDomainNuggetKernel(-1.0)
