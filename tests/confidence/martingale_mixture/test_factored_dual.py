"""The exact bound from factors at a lattice of alphas (``factored_dual``) against a
brute-force minimization of eq. (12) with dense NumPy solves and against the eigen
route, and the route's choices inside ``MartingaleMixtureBound``."""

import math

import numpy as np
import pytest
import torch
from gpytorch.kernels import MaternKernel, RBFKernel
from scipy.optimize import minimize_scalar

from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture import factored_dual as fd
from botorch_mtucb.confidence.martingale_mixture import gram_cache_spectrum as spectra
from botorch_mtucb.confidence.martingale_mixture.ridge_witness import ridge_witness
from botorch_mtucb.utils import GrowingCholesky


def _data(t, kernel, seed=0, noise=0.1):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(t + 8, 2, generator=generator, dtype=torch.float64)
    Y = (
        (4 * X[:, :1]).sin()
        + X[:, 1:] ** 2
        + noise * torch.randn(t + 8, 1, generator=generator, dtype=torch.float64)
    )
    return X[:t], Y[:t], X[t:]


def _brute_force(K, kx, kxx, y, radius_sq, B, sign):
    """min over alpha of eq. (12) with dense solves: a log grid, then a bounded search."""

    def phi(log_alpha):
        a = math.exp(log_alpha)
        solve = np.linalg.solve(K + a * np.eye(len(y)), np.column_stack([kx, y]))
        mean, explained, fit = kx @ solve[:, 1], kx @ solve[:, 0], y @ solve[:, 1]
        rt2 = max(radius_sq + a * B**2 - a * fit, 0.0)
        return sign * mean + math.sqrt(rt2 / a) * math.sqrt(max(kxx - explained, 1e-300))

    grid = np.linspace(math.log(1e-6), math.log(1e6), 400)
    j = int(np.argmin([phi(s) for s in grid]))
    found = minimize_scalar(phi, bounds=(grid[max(j - 1, 0)], grid[min(j + 1, 399)]),
                            method="bounded", options={"xatol": 1e-10})  # fmt: skip
    return sign * min(found.fun, phi(grid[j]))


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("kernel", [RBFKernel(), MaternKernel(nu=2.5)], ids=["rbf", "matern"])
def test_factored_exact_is_the_brute_force_minimum(sign, kernel):
    kernel.lengthscale = 0.3
    X, Y, Xq = _data(60, kernel)
    bound = MartingaleMixtureBound(X, Y, kernel, 5.0, 0.1, 0.01, 0.5)
    cache = bound.gram_spectrum.cache
    with torch.no_grad():
        cross = bound.kernel(Xq, X).to_dense()
    terms = fd.DualTerms(bound.train_Y[:, 0], cross, torch.ones(8, dtype=torch.float64), sign,
                         bound.radius_squared, 5.0, bound.base_alpha)  # fmt: skip
    result = fd.factored_exact(terms, lambda a: cache.factors[int(cache.index(a))], 0)
    assert bool(result.resolved.all())
    K, y = cache.gram.numpy(), bound.train_Y[:, 0].numpy()
    expected = [
        _brute_force(K, cross[i].numpy(), 1.0, y, float(bound.radius_squared), 5.0, sign)
        for i in range(8)
    ]
    np.testing.assert_allclose(result.value.numpy(), expected, rtol=1e-8)
    # the minimizing alpha gives that value (any alpha is a valid bound)
    check = bound.upper(Xq, alphas=result.alpha[:1].tolist()) if sign > 0 else None
    if check is not None:
        assert float(check[0]) == pytest.approx(float(result.value[0]), rel=1e-8)


@pytest.fixture
def factored_from_small_t(monkeypatch):
    monkeypatch.setattr(spectra, "FACTORED_MIN_OBSERVATIONS", 10)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_the_bound_takes_the_factored_route_after_an_append(factored_from_small_t, dtype):
    kernel = MaternKernel(nu=2.5)
    kernel.lengthscale = 0.4
    X, Y, Xq = _data(80, kernel, seed=1)
    bound = MartingaleMixtureBound(X[:70], Y[:70], kernel, 8.0, 0.1, 0.01)
    assert bound.gram_spectrum._spectrum is None  # the constructor's test took a witness
    bound.append_observations(X[70:], Y[70:])
    queries = Xq.to(dtype).reshape(2, 4, 2)  # a batch shape
    upper, lower = bound.upper(queries), bound.lower(queries)
    assert bound.gram_spectrum._spectrum is None and upper.shape == (2, 4) and upper.dtype == dtype
    reference = MartingaleMixtureBound(X, Y, kernel, 8.0, 0.1, 0.01)
    reference.spectrum()  # the eigen route
    tolerance = 1e-10 if dtype == torch.float64 else 1e-6
    torch.testing.assert_close(upper, reference.upper(queries), rtol=tolerance, atol=0.0)
    torch.testing.assert_close(lower, reference.lower(queries), rtol=tolerance, atol=0.0)
    alpha = bound.optimal_alpha(Xq[:2])
    assert bool((alpha > 0).all())


def test_gradients_pending_points_and_many_points_take_the_eigen_route(factored_from_small_t):
    kernel = RBFKernel()
    kernel.lengthscale = 0.3
    X, Y, Xq = _data(40, kernel, seed=2)
    bound = MartingaleMixtureBound(X, Y, kernel, 5.0, 0.1, 0.01)
    bound.upper(Xq[:2])  # few points: factored
    assert bound.gram_spectrum._spectrum is None
    query = Xq[:3].clone().requires_grad_(True)
    bound.upper(query).sum().backward()  # gradients: the spectrum (one eigh per data set)
    assert bound.gram_spectrum._spectrum is not None and torch.isfinite(query.grad).all()
    bound.append_observations(Xq[6:7], Y[:1])
    bound.upper(Xq[:2], X_pending=Xq[3:4])
    assert bound.gram_spectrum._spectrum is not None  # pending points: the eigen route
    bound.append_observations(Xq[7:], Y[:1])
    bound.upper(torch.rand(100, 2, dtype=torch.float64))  # beyond FACTORED_BUDGET per observation
    assert bound.gram_spectrum._spectrum is not None


def test_unresolved_points_take_the_eigen_route(factored_from_small_t, monkeypatch):
    monkeypatch.setattr(fd, "MAX_NODES", 3)  # no room to bracket most minimizers
    kernel = RBFKernel()
    kernel.lengthscale = 0.3
    X, Y, Xq = _data(40, kernel, seed=3)
    far = torch.tensor([[5.0, 5.0]], dtype=torch.float64)  # alpha* at the search's top
    queries = torch.cat([Xq, far])
    bound = MartingaleMixtureBound(X, Y, kernel, 5.0, 0.1, 0.01)
    value = bound.upper(queries)
    reference = MartingaleMixtureBound(X, Y, kernel, 5.0, 0.1, 0.01)
    reference.spectrum()
    torch.testing.assert_close(value, reference.upper(queries), rtol=1e-10, atol=0.0)
    assert bound.gram_spectrum._spectrum is not None  # the unresolved ones' spectrum


def test_ridge_witness_and_an_empty_set(factored_from_small_t):
    kernel = RBFKernel()
    kernel.lengthscale = 0.3
    X, Y, _ = _data(30, kernel, seed=4)
    K = kernel(X).to_dense().detach()
    factor = GrowingCholesky(K + 0.2 * torch.eye(30, dtype=torch.float64))
    norm_sq, residual_sq = ridge_witness(factor, 0.2, Y[:, 0])
    w = torch.linalg.solve(K + 0.2 * torch.eye(30, dtype=torch.float64), Y[:, 0])
    assert norm_sq == pytest.approx(float(w @ K @ w), rel=1e-10)
    assert residual_sq == pytest.approx(float((K @ w - Y[:, 0]).square().sum()), rel=1e-10)
    with pytest.raises(EmptyConfidenceSetError):  # the witness fails, the spectrum decides
        MartingaleMixtureBound(X, 100.0 + Y, kernel, 1.0, 0.1, 0.01)
