"""Pending points in MartingaleMixtureBound (GP-BUCB): the grid and analytic bounds
against eq. (12) written out with NumPy (mean and radius of the real data, rho_alpha on
the data and the pending points), the exact bound against a fine log-grid of the same
objective, the order with and without pending points, the cache and the checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from martingale_oracles import (
    DELTA,
    SIGMA,
    B,
    dense_radius_squared,
    dense_radius_tilde_squared,
    gram,
    instance,
)

from botorch_mtucb.confidence import MartingaleMixtureBound


def dense_pending_objective(kernel, X, y, P, x, radius_sq, sign):
    """alpha -> mu_alpha(x) + sign R~_alpha / sqrt(alpha) rho^P_alpha(x) (Desautels et
    al. 2014): the mean and radius of the data ``(X, y)``, the variance on ``X`` and ``P``."""
    K = gram(kernel, X, X)
    kx = gram(kernel, X, x)[:, 0]
    XP = torch.cat([X, P])
    KP, kPx = gram(kernel, XP, XP), gram(kernel, XP, x)[:, 0]
    kxx = gram(kernel, x, x)[0, 0]

    def objective(alpha):
        mean = kx @ np.linalg.solve(K + alpha * np.eye(len(y)), y)
        variance = kxx - kPx @ np.linalg.solve(KP + alpha * np.eye(len(XP)), kPx)
        rt2 = max(dense_radius_tilde_squared(K, y, radius_sq, B, alpha), 0.0)
        return mean + sign * math.sqrt(rt2 / alpha) * math.sqrt(max(variance, 0.0))

    return objective


def setup(dtype=torch.float64):
    kernel, X, Y, test_X = instance("m52", t=30, d=2, seed=3)
    bound = MartingaleMixtureBound(X.to(dtype), Y.to(dtype), kernel, B, SIGMA, DELTA)
    P = test_X[:3].clone()
    P[0] = X[0]  # a pending point on a training input is fine
    return kernel, X, Y, test_X, bound, P


@pytest.mark.parametrize("alphas", [[0.3 * SIGMA**2, SIGMA**2, 3 * SIGMA**2], SIGMA**2])
def test_grid_and_analytic_with_pending_match_the_dense_formula(dtype, alphas):
    kernel, X, Y, test_X, bound, P = setup(dtype)
    X64, Y64 = X.to(dtype).double(), Y.to(dtype).double()
    K, y = gram(kernel, X64, X64), Y64.numpy()[:, 0]
    radius_sq = dense_radius_squared(K, y, SIGMA, 1.0, DELTA)
    grid = alphas if isinstance(alphas, list) else [alphas]
    P = P.to(dtype)
    upper = bound.upper(test_X.to(dtype), alphas, X_pending=P)
    lower = bound.lower(test_X.to(dtype), alphas, X_pending=P)
    tol = 1e-8 if dtype == torch.float64 else 1e-4
    for i in range(len(test_X)):
        x = test_X[i : i + 1].to(dtype).double()
        up = dense_pending_objective(kernel, X64, y, P.double(), x, radius_sq, 1.0)
        low = dense_pending_objective(kernel, X64, y, P.double(), x, radius_sq, -1.0)
        ups, lows = [up(a) for a in grid], [low(a) for a in grid]
        assert float(upper[i]) == pytest.approx(min(ups), rel=tol, abs=tol)
        assert float(lower[i]) == pytest.approx(max(lows), rel=tol, abs=tol)


def test_exact_with_pending_is_the_minimum_over_alpha():
    kernel, X, Y, test_X, bound, P = setup()
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    radius_sq = dense_radius_squared(K, y, SIGMA, 1.0, DELTA)
    exact = bound.upper(test_X, X_pending=P)
    assert bool((exact <= bound.upper(test_X) + 1e-12).all())  # only the variance shrinks
    fine = np.logspace(-7, 3, 300)
    for i in range(3):
        objective = dense_pending_objective(kernel, X, y, P, test_X[i : i + 1], radius_sq, 1.0)
        values = [objective(a) for a in fine]
        j = int(np.argmin(values))  # then refine in the bracket of the best grid point
        bracket = np.logspace(np.log10(fine[max(j - 1, 0)]), np.log10(fine[min(j + 1, 299)]), 200)
        dense = min(min(values), *(objective(a) for a in bracket))
        assert float(exact[i]) <= dense + 1e-9 * abs(dense)
        assert float(exact[i]) == pytest.approx(dense, rel=1e-7)
    # a pending candidate: its own variance is nearly gone, the bound nearly its mean
    at_pending = bound.upper(P[1:2], alphas=SIGMA**2, X_pending=P[1:2])
    without = bound.upper(P[1:2], alphas=SIGMA**2)
    assert float(at_pending) < float(without)


def test_cache_empty_pending_and_checks():
    kernel, X, Y, test_X, bound, P = setup()
    first = bound.upper(test_X, X_pending=P)
    cached = bound._pending
    assert torch.equal(bound.upper(test_X, X_pending=P.clone()), first) and bound._pending is cached
    bound.upper(test_X, X_pending=P[:2])
    assert bound._pending is not cached
    assert torch.equal(bound.upper(test_X, X_pending=P[:0]), bound.upper(test_X))
    bound.append_observations(P[:1], torch.zeros(1, 1, dtype=torch.float64))
    assert bound._pending is None
    for bad, error, match in [
        (P.unsqueeze(0), ValueError, "m x 2"),
        (P[:, :1], ValueError, "m x 2"),
        (torch.full((1, 2), float("nan"), dtype=torch.float64), ValueError, "NaN"),
        (torch.zeros(1, 2, dtype=torch.long), TypeError, "floating-point"),
        ([[0.0, 0.0]], TypeError, "torch.Tensor of shape m x 2"),
    ]:
        with pytest.raises(error, match=match):
            bound.upper(test_X, X_pending=bad)
