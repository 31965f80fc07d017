"""MartingaleMixtureBound: the grid and analytic bounds against the dense formula of
eq. (12) and Cor. 4.6, their order (exact <= grid <= analytic), shapes, dtypes, devices,
gradients, appends and argument checks (paper 002); ``from_model`` is in
``test_from_model.py``, pending points in ``test_hallucination.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gpytorch.kernels import ScaleKernel
from martingale_oracles import (
    DELTA,
    DTYPES,
    SIGMA,
    B,
    dense_dual_objective,
    dense_radius_squared,
    gram,
    instance,
    make_kernel,
)

from botorch_mtucb.confidence import MartingaleMixtureBound


@pytest.mark.parametrize("dtype", DTYPES)
def test_grid_and_analytic_match_dense_formula(dtype):
    kernel, X, Y, test_X = instance("rbf", t=45, seed=1)
    c = 0.5
    bound = MartingaleMixtureBound(X.to(dtype), Y.to(dtype), kernel, B, SIGMA, DELTA, c)
    base = SIGMA**2 / c
    grid = [0.1 * base, 0.3 * base, base, 3 * base, 10 * base]
    X64, Y64 = X.to(dtype).double(), Y.to(dtype).double()
    K, y = gram(kernel, X64, X64), Y64.numpy()[:, 0]
    R2 = dense_radius_squared(K, y, SIGMA, c, DELTA)
    tol = 1e-9 if dtype == torch.float64 else 2e-5
    upper_grid = bound.upper(test_X.to(dtype), alphas=grid)
    lower_grid = bound.lower(test_X.to(dtype), alphas=grid)
    analytic = bound.upper(test_X.to(dtype), alphas=base)
    assert upper_grid.dtype == dtype and analytic.dtype == dtype
    for i in range(test_X.shape[0]):
        kx = gram(kernel, X64, test_X[i : i + 1].to(dtype))[:, 0]
        ups = [dense_dual_objective(K, kx, 1.0, y, R2, B, a, 1.0) for a in grid]
        lows = [dense_dual_objective(K, kx, 1.0, y, R2, B, a, -1.0) for a in grid]
        assert float(upper_grid[i]) == pytest.approx(min(ups), rel=tol, abs=tol)
        assert float(lower_grid[i]) == pytest.approx(max(lows), rel=tol, abs=tol)
        assert float(analytic[i]) == pytest.approx(ups[2], rel=tol, abs=tol)


@pytest.mark.parametrize("name", ["rbf", "m52", "m32"])
def test_exact_tighter_than_grid_tighter_than_analytic(name):
    kernel, X, Y, test_X = instance(name, t=100, seed=7, lengthscale=0.4)
    c = 0.2 if name != "rbf" else 1.0
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
    base = SIGMA**2 / c
    grid = [0.1 * base, 0.3 * base, base, 3 * base, 10 * base]
    exact_u, grid_u, analytic_u = (bound.upper(test_X, a) for a in (None, grid, base))
    exact_l, grid_l, analytic_l = (bound.lower(test_X, a) for a in (None, grid, base))
    assert (exact_u <= grid_u + 1e-10).all() and (grid_u <= analytic_u + 1e-12).all()
    assert (exact_l >= grid_l - 1e-10).all() and (grid_l >= analytic_l - 1e-12).all()
    assert (exact_u < analytic_u).any()


def test_without_data_the_bounds_are_the_prior_ball():
    kernel = ScaleKernel(make_kernel("rbf", 0.4)).to(torch.float64)
    kernel.outputscale = 2.0
    bound = MartingaleMixtureBound(torch.zeros(0, 2), torch.zeros(0, 1), kernel, B, SIGMA, DELTA)
    X = torch.rand(4, 2, dtype=torch.float64)
    assert torch.allclose(bound.upper(X), torch.full((4,), B * math.sqrt(2.0), dtype=torch.float64))
    assert torch.allclose(bound.lower(X), -bound.upper(X))
    alpha = 0.05  # Cor. 4.6 with t = 0: sqrt(R^2 / alpha + B^2) sqrt(k(x, x))
    R2 = 2 * SIGMA**2 * math.log(1 / DELTA)
    expected = math.sqrt(R2 / alpha + B**2) * math.sqrt(2.0)
    assert torch.allclose(bound.upper(X, alpha), torch.full((4,), expected, dtype=torch.float64))


@pytest.mark.parametrize("shape", [(7,), (2, 3), (2, 1, 4)])
def test_batch_shapes(shape):
    kernel, X, Y, _ = instance("m52", t=20, d=2)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    test_X = torch.rand(*shape, 2, dtype=torch.float64)
    flat = test_X.reshape(-1, 2)
    for alphas in (None, [0.01, 0.1], 0.01):
        values = bound.upper(test_X, alphas)
        assert values.shape == shape
        assert torch.allclose(values.reshape(-1), bound.upper(flat, alphas), rtol=1e-12)
        assert bound.lower(test_X, alphas).shape == shape


def test_float32_inputs():
    kernel, X, Y, test_X = instance("rbf", t=30)
    b64 = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    b32 = MartingaleMixtureBound(X.float(), Y.float(), kernel, B, SIGMA, DELTA)
    value = b32.upper(test_X.float())
    assert value.dtype == torch.float32
    assert torch.allclose(value.double(), b64.upper(test_X), rtol=1e-4, atol=1e-4)


# -------------------------------------------------------------------- gradients
@pytest.mark.parametrize("alphas", [None, [0.003, 0.01, 0.03], 0.01])
def test_gradients_match_finite_differences(alphas):
    kernel, X, Y, test_X = instance("m52", t=40, seed=2)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    x = test_X[:3].clone().requires_grad_(True)
    for method in (bound.upper, bound.lower):
        (gradient,) = torch.autograd.grad(method(x, alphas).sum(), x)
        eps = 1e-6
        for j in range(x.shape[-1]):
            step = torch.zeros_like(x)
            step[:, j] = eps
            with torch.no_grad():
                numeric = (method(x + step, alphas) - method(x - step, alphas)) / (2 * eps)
            assert torch.allclose(gradient[:, j], numeric, rtol=1e-4, atol=1e-5)


# -------------------------------------------------------------- recursive updates
def test_recursive_updates_equal_a_fresh_bound():
    kernel, X, Y, test_X = instance("m52", t=150, seed=4)
    grid = [0.003, 0.01, 0.1]
    bound = MartingaleMixtureBound(X[:10], Y[:10], kernel, B, SIGMA, DELTA, mixture_scale=0.4)
    bound.upper(test_X, alphas=grid)  # caches the grid's inverses
    for i in range(10, 150, 7):
        bound.append_observations(X[i : i + 7], Y[i : i + 7])
    fresh = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.4)
    assert bound.num_observations == 150
    assert float(bound.radius_squared) == pytest.approx(float(fresh.radius_squared), rel=1e-10)
    K = gram(kernel, X, X)
    for alpha in grid:
        index = bound.gram_spectrum.cache.index(alpha)
        factor = bound.gram_spectrum.cache.factors[int(index)]
        inverse = factor.solve_spd(torch.eye(150, dtype=torch.float64))
        expected = np.linalg.inv(K + alpha * np.eye(150))
        assert np.allclose(inverse.numpy(), expected, rtol=1e-7, atol=1e-7)
        logdet = np.linalg.slogdet(np.eye(150) + K / alpha)[1]
        assert float(bound.gram_spectrum.cache.log_det(index)) == pytest.approx(logdet, rel=1e-10)
    for alphas in (None, grid, 0.01):
        assert torch.allclose(bound.upper(test_X, alphas), fresh.upper(test_X, alphas), rtol=1e-8)
        assert torch.allclose(bound.lower(test_X, alphas), fresh.lower(test_X, alphas), rtol=1e-8)


def test_append_from_empty():
    kernel, X, Y, test_X = instance("rbf", t=12, d=2)
    bound = MartingaleMixtureBound(X[:0], Y[:0], kernel, B, SIGMA, DELTA)
    for i in range(12):
        bound.append_observations(X[i : i + 1], Y[i : i + 1])
    fresh = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    assert torch.allclose(bound.upper(test_X, 0.01), fresh.upper(test_X, 0.01), rtol=1e-10)
    assert torch.allclose(bound.upper(test_X), fresh.upper(test_X), rtol=1e-8)


# ------------------------------------------------------------------ bad input
def test_bad_input():
    kernel, X, Y, test_X = instance("rbf", t=10, d=3)
    good = dict(kernel=kernel, rkhs_norm_bound=B, noise_std=SIGMA, delta=DELTA)
    cases = [
        (dict(mixture_scale=0.0), ValueError, "mixture_scale"),
        (dict(mixture_scale=-1.0), ValueError, "mixture_scale"),
        (dict(rkhs_norm_bound=0.0), ValueError, "rkhs_norm_bound"),
        (dict(noise_std=-0.1), ValueError, "noise_std"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(noise_std=float("nan")), ValueError, "noise_std"),
        (dict(kernel="rbf"), TypeError, "kernel"),
    ]
    for change, error, match in cases:
        with pytest.raises(error, match=match):
            MartingaleMixtureBound(X, Y, **{**good, **change})
    for bad_Y in (Y[:, 0], torch.cat([Y, Y], -1), Y[:5]):
        with pytest.raises(ValueError, match="train_Y must be t x 1"):
            MartingaleMixtureBound(X, bad_Y, **good)
    nan_Y = Y.clone()
    nan_Y[0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        MartingaleMixtureBound(X, nan_Y, **good)
    bound = MartingaleMixtureBound(X, Y, **good)
    for alphas in (0.0, -1.0, [0.1, float("inf")], float("nan"), []):
        with pytest.raises(ValueError, match="alphas"):
            bound.upper(test_X, alphas=alphas)
    with pytest.raises(ValueError, match="batch x 3"):
        bound.upper(torch.rand(4, 2))
    with pytest.raises(ValueError, match="NaN"):
        bound.lower(torch.full((1, 3), float("nan")))
    with pytest.raises(ValueError, match="Y must be m x 1"):
        bound.append_observations(test_X[:2], torch.zeros(2))


def test_gradient_without_data_is_zero_not_an_error():
    kernel = make_kernel("rbf", 0.3)
    bound = MartingaleMixtureBound(torch.zeros(0, 2), torch.zeros(0, 1), kernel, B, SIGMA, DELTA)
    x = torch.rand(3, 2, dtype=torch.float64, requires_grad=True)
    for alphas in (None, 0.01):
        (gradient,) = torch.autograd.grad(bound.upper(x, alphas).sum(), x)
        assert torch.equal(gradient, torch.zeros_like(x))


# ---------------------------------------------------------------- devices and dtypes
def test_to_moves_the_bound_and_keeps_float64():
    kernel, X, Y, test_X = instance("m52", t=20, d=2)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    grid = [0.003, 0.03]
    before = [bound.upper(test_X, alphas) for alphas in (None, grid)]
    assert bound.to(torch.float32) is bound
    assert (
        bound.train_X.dtype == torch.float64
        and bound.gram_spectrum.cache.gram.dtype == torch.float64
    )
    assert all(factor.buffer.dtype == torch.float64 for factor in bound.gram_spectrum.cache.factors)
    bound.to("cpu").float().double()
    after = [bound.upper(test_X, alphas) for alphas in (None, grid)]
    for value, again in zip(before, after):
        assert torch.equal(value, again)
    assert bound.upper(test_X.float()).dtype == torch.float32


def test_a_grid_of_more_than_max_alphas_is_refused_before_anything_is_computed():
    """Each alpha of a grid bound costs a t x t factor: 3,000 alphas at t = 300 held
    3 GB. Every public method that takes alphas refuses more than MAX_ALPHAS first."""
    kernel, X, Y, test_X = instance("rbf", t=12, seed=3)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    cached = bound.gram_spectrum.cache.alphas.tolist()
    for alphas in (torch.logspace(-4, 2, 101), [0.01] * 3000, torch.ones(10**6)):
        for call in (bound.upper, bound.lower, bound.optimal_alpha, bound.radius_tilde_squared):
            args = (alphas,) if call == bound.radius_tilde_squared else (test_X, alphas)
            with pytest.raises(ValueError, match=r"alphas must hold at most MAX_ALPHAS = 100 "):
                call(*args)
    assert bound.gram_spectrum.cache.alphas.tolist() == cached
    grid = torch.logspace(-4, 2, 100, dtype=torch.float64)  # the limit itself is accepted
    assert torch.isfinite(bound.upper(test_X, alphas=grid)).all()
