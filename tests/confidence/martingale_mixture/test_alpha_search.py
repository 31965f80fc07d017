"""The exact bound of paper 002 through the one-dimensional dual of eq. (12): against
cvxpy's SOCP of eq. (10), a dense alpha grid, and the search's pieces one by one."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from martingale_oracles import (
    DELTA,
    SIGMA,
    B,
    dense_dual_objective,
    gram,
    instance,
    socp_bound,
)

from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    SpectralDual,
    minimize_over_grid,
    posterior_std,
    search_range,
)


@pytest.mark.parametrize(
    "name, t, lengthscale, c",
    [("rbf", 120, 0.3, 1.0), ("m52", 80, 0.5, 0.2), ("m32", 120, 0.2, 0.15), ("rbf", 5, 0.5, 1.0)],
)
def test_exact_bounds_equal_socp_eq10(name, t, lengthscale, c):
    kernel, X, Y, test_X = instance(name, t=t, lengthscale=lengthscale, seed=t)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
    upper, lower = bound.upper(test_X[:3]), bound.lower(test_X[:3])
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    radius = math.sqrt(float(bound.radius_squared))
    for i in range(3):
        kx = gram(kernel, X, test_X[i : i + 1])[:, 0]
        kxx = float(gram(kernel, test_X[i : i + 1], test_X[i : i + 1])[0, 0])
        socp_upper = socp_bound(K, kx, kxx, y, radius, B, upper=True)
        socp_lower = socp_bound(K, kx, kxx, y, radius, B, upper=False)
        scale = max(abs(socp_upper), abs(socp_lower), 1.0)
        assert abs(float(upper[i]) - socp_upper) <= 1e-4 * scale
        assert abs(float(lower[i]) - socp_lower) <= 1e-4 * scale
        assert lower[i] < upper[i]


def test_exact_bound_is_the_minimum_over_a_dense_alpha_grid():
    kernel, X, Y, test_X = instance("m52", t=60, seed=3)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.3)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    R2 = float(bound.radius_squared)
    alphas = np.logspace(-7, 5, 1500)
    for i in range(3):
        kx = gram(kernel, X, test_X[i : i + 1])[:, 0]
        for sign, method in ((1.0, bound.upper), (-1.0, bound.lower)):
            values = [dense_dual_objective(K, kx, 1.0, y, R2, B, a, sign) for a in alphas]
            brute = min(values) if sign > 0 else max(values)
            ours = float(method(test_X[i : i + 1])[0])
            assert sign * ours <= sign * brute + 1e-9  # at least as tight as the grid
            assert abs(ours - brute) <= 1e-4 * max(abs(brute), 1.0)  # and not far off
            star = float(bound.optimal_alpha(test_X[i : i + 1], upper=sign > 0)[0])
            at_star = dense_dual_objective(K, kx, 1.0, y, R2, B, star, sign)
            assert at_star == pytest.approx(ours, rel=1e-8, abs=1e-9)


def test_exact_bound_matches_cvxpy_at_t_300():
    # The speed-up over cvxpy is measured by `python -m botorch_mtucb benchmark
    # mm-bound-vs-cvxpy` (not a timed unit test); here only the agreement at its size.
    kernel, X, Y, test_X = instance("m52", t=300, seed=8, lengthscale=0.5)
    candidates = torch.rand(100, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.2)
    ours = bound.upper(candidates)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    radius = math.sqrt(float(bound.radius_squared))
    for i in range(2):
        kx = gram(kernel, X, candidates[i : i + 1])[:, 0]
        value = socp_bound(K, kx, 1.0, y, radius, B)
        assert abs(value - float(ours[i])) <= 1e-4 * max(abs(value), 1.0)


def test_spectral_dual_is_the_dense_objective_of_eq_12():
    kernel, X, Y, test_X = instance("m52", t=35, seed=9)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.5)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    R2 = float(bound.radius_squared)
    spectrum = bound.spectrum()
    cross = torch.as_tensor(gram(kernel, test_X[:2], X))
    projected = cross @ spectrum.eigenvectors
    kxx = torch.ones(2, dtype=torch.float64)
    for sign in (1.0, -1.0):
        dual = SpectralDual(
            spectrum, bound.radius_squared, B, sign * projected * spectrum.rotated_y,
            projected**2, kxx,
        )  # fmt: skip
        for alpha in (1e-4, 0.01, 0.3, 7.0):
            values = dual(torch.tensor(alpha, dtype=torch.float64))
            for i in range(2):
                kx = cross[i].numpy()
                expected = sign * dense_dual_objective(K, kx, 1.0, y, R2, B, alpha, sign)
                assert float(values[i]) == pytest.approx(expected, rel=1e-9, abs=1e-12)
        per_point = dual(torch.tensor([0.01, 0.3], dtype=torch.float64))
        assert per_point[1] == pytest.approx(float(dual(torch.tensor(0.3, dtype=torch.float64))[1]))
        alpha, best = dual.minimize(bound.base_alpha)
        assert alpha.shape == best.shape == (2,)
        assert torch.allclose(dual(alpha), best, rtol=1e-12)
        grid = torch.logspace(-7, 5, 600, dtype=torch.float64)
        brute = torch.stack([dual(a) for a in grid]).min(0).values
        assert (best <= brute + 1e-12).all()


def test_search_range_spans_the_spectrum_and_sigma2_over_c():
    eigenvalues = torch.tensor([1e-3, 0.5, 20.0], dtype=torch.float64)
    low, high = search_range(eigenvalues, 0.01)
    assert low == pytest.approx(max(1e-8 * 0.01, 1e-10 * 20.0))
    assert high == pytest.approx(1e8 * 20.0)
    assert search_range(eigenvalues[:0], 0.01) == pytest.approx((1e-10, 1e6))


def test_minimize_over_grid_is_the_smallest_grid_value():
    generator = torch.Generator().manual_seed(0)
    mean = torch.randn(5, 3, generator=generator, dtype=torch.float64)
    std = torch.rand(5, 3, generator=generator, dtype=torch.float64)
    rt2 = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64)  # clipped at 0
    alphas = torch.tensor([0.1, 1.0, 10.0], dtype=torch.float64)
    best, alpha = minimize_over_grid(mean, std, rt2, alphas)
    values = mean + (rt2.clamp_min(0) / alphas).sqrt() * std
    assert torch.equal(best, values.min(-1).values)
    assert torch.equal(alpha, alphas[values.argmin(-1)])


def test_posterior_std_clips_round_off_with_a_finite_gradient():
    prior = torch.tensor([1.0, 1.0], dtype=torch.float64, requires_grad=True)
    std = posterior_std(prior, torch.tensor([0.75, 1.0 + 1e-15], dtype=torch.float64))
    assert std[0] == 0.5 and 0 < std[1] < 1e-150
    (gradient,) = torch.autograd.grad(std.sum(), prior)
    assert torch.isfinite(gradient).all()


def random_dual(seed, pending=False, N=6, t=25):
    kernel, X, Y, test_X = instance("m52", t=t, seed=seed)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.5)
    spectrum = bound.spectrum()
    cross = torch.as_tensor(gram(kernel, test_X[:N], X))
    projected = cross @ spectrum.eigenvectors
    squared, variance_eigenvalues = projected**2, None
    if pending:  # the variance on the data and two more inputs (GP-BUCB's hallucination)
        inputs = torch.cat([X, test_X[N : N + 2]])
        lam, U = torch.linalg.eigh(torch.as_tensor(gram(kernel, inputs, inputs)))
        squared = (torch.as_tensor(gram(kernel, test_X[:N], inputs)) @ U) ** 2
        variance_eigenvalues = lam.clamp_min(0.0)
    return bound, SpectralDual(
        spectrum, bound.radius_squared, B, projected * spectrum.rotated_y, squared,
        torch.ones(N, dtype=torch.float64), variance_eigenvalues,
    )  # fmt: skip


@pytest.mark.parametrize("pending", [False, True])
def test_log_derivatives_equal_finite_differences(pending):
    _, dual = random_dual(21, pending)
    for log_alpha in (-6.0, -2.0, 0.5):
        s = torch.full((6,), log_alpha, dtype=torch.float64)
        value, first, second = dual.log_derivatives(s.exp())
        torch.testing.assert_close(value, dual(s.exp()), rtol=1e-12, atol=1e-14)
        h = 1e-4
        up, down = dual((s + h).exp()), dual((s - h).exp())
        torch.testing.assert_close(first, (up - down) / (2 * h), rtol=1e-6, atol=1e-9)
        torch.testing.assert_close(second, (up - 2 * value + down) / h**2, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("pending", [False, True])
def test_minimize_equals_a_bounded_scalar_minimization(pending):
    from scipy.optimize import minimize_scalar

    bound, dual = random_dual(5, pending)
    alpha, value = dual.minimize(bound.base_alpha)
    low, high = search_range(bound.spectrum().eigenvalues, bound.base_alpha)
    for i in range(6):

        def objective(log_alpha, i=i):
            return float(dual(torch.full((6,), log_alpha, dtype=torch.float64).exp())[i])

        grid = np.linspace(math.log(low), math.log(high), 800)
        start = grid[int(np.argmin([objective(g) for g in grid]))]
        reference = minimize_scalar(
            objective, bounds=(start - 0.05, start + 0.05), method="bounded",
            options={"xatol": 1e-12},
        )  # fmt: skip
        assert float(value[i]) <= reference.fun + 1e-12 * abs(reference.fun)
        assert float(value[i]) == pytest.approx(reference.fun, rel=1e-10, abs=1e-13)
        assert float(dual(alpha)[i]) == pytest.approx(float(value[i]), rel=1e-13)


def test_the_search_on_numpy_arrays_takes_the_tensor_route_steps():
    # on the CPU without gradients minimize runs on NumPy arrays (_ArrayDual); a dual on
    # tensors that require gradients takes the torch route: the same values to round-off
    from botorch_mtucb.confidence.martingale_mixture.alpha_search import _ArrayDual

    bound, dual = random_dual(9)
    assert _ArrayDual.of(dual) is not None
    alpha, value = dual.minimize(bound.base_alpha)
    assert alpha.dtype == value.dtype == torch.float64 and value.shape == (6,)
    projection = dual.signed_projection.clone().requires_grad_(True)
    on_tensors = SpectralDual(
        dual.spectrum, dual.radius_sq, B, projection, dual.squared_projection,
        dual.prior_variance,
    )  # fmt: skip
    assert _ArrayDual.of(on_tensors) is None
    reference_alpha, reference = on_tensors.minimize(bound.base_alpha)
    torch.testing.assert_close(value, reference.detach(), rtol=1e-13, atol=1e-15)
    torch.testing.assert_close(alpha, reference_alpha.detach(), rtol=1e-6, atol=0.0)
