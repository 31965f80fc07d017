"""width_decomposition: the four terms of R~_alpha^2 against a dense NumPy transcription of
eq. (8) and Cor. 4.3 (each term separately, and their sum), the bound rebuilt from the
multiplier (mu_alpha + sqrt(R~^2 / alpha) rho_alpha, dense) for the exact, grid and
analytic bounds, repeated inputs, float32 points and the argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from martingale_oracles import (
    DELTA,
    dense_radius_squared,
    dense_radius_tilde_squared,
    gram,
    instance,
)

from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.width_terms import TERMS, width_decomposition


def dense_terms(K, y, sigma, c, delta, norm, alpha):
    t = len(y)
    M = np.eye(t) + c * K / sigma**2
    return {
        "norm": alpha * norm**2,
        "log_det": sigma**2 * np.linalg.slogdet(M)[1],
        "confidence": 2 * sigma**2 * math.log(1 / delta),
        "data_fit": y @ np.linalg.solve(M, y)
        - alpha * y @ np.linalg.solve(K + alpha * np.eye(t), y),
    }


def dense_upper(K, kx, kxx, y, radius_tilde_sq, alpha):
    A = np.linalg.inv(K + alpha * np.eye(len(y)))
    rho = math.sqrt(max(kxx - kx @ A @ kx, 0.0))
    return kx @ A @ y + math.sqrt(radius_tilde_sq / alpha) * rho


@pytest.mark.parametrize(
    "alphas", [None, [1e-3, 1e-2, 1e-1], 0.02], ids=["exact", "grid", "analytic"]
)
@pytest.mark.parametrize("mixture_scale", [1.0, 0.1])
def test_terms_match_the_dense_formulas(alphas, mixture_scale, dtype):
    kernel, X, Y, test_X = instance("m52", t=25, norm=3.0, noise=0.05)
    sigma, norm = 0.05, 4.0
    bound = MartingaleMixtureBound(X, Y, kernel, norm, sigma, DELTA, mixture_scale)
    terms = width_decomposition(bound, test_X.to(dtype), alphas)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    Kx, kxx = gram(kernel, test_X, X), np.diag(gram(kernel, test_X, test_X))
    radius_sq = dense_radius_squared(K, y, sigma, mixture_scale, DELTA)
    upper = bound.upper(test_X, alphas)
    for i in range(test_X.shape[0]):
        alpha = float(terms.alpha[i])
        expected = dense_terms(K, y, sigma, mixture_scale, DELTA, norm, alpha)
        for name in TERMS:
            assert float(getattr(terms, name)[i]) == pytest.approx(
                expected[name], rel=1e-7, abs=1e-10
            )
        total = dense_radius_tilde_squared(K, y, radius_sq, norm, alpha)
        assert float(terms.radius_tilde_squared[i]) == pytest.approx(total, rel=1e-7)
        assert float(terms.beta_sqrt[i]) == pytest.approx(math.sqrt(total / alpha), rel=1e-7)
        rebuilt = dense_upper(K, Kx[i], kxx[i], y, total, alpha)
        assert float(upper[i]) == pytest.approx(rebuilt, rel=1e-6)
    shares = terms.shares()
    assert torch.allclose(sum(shares.values()), torch.ones(6, dtype=torch.float64))
    assert terms.alpha.dtype == torch.float64


def test_data_fit_vanishes_at_the_base_alpha_and_the_summary():
    kernel, X, Y, test_X = instance("rbf", t=15)
    bound = MartingaleMixtureBound(X, Y, kernel, 12.0, 0.1, DELTA, mixture_scale=2.0)
    terms = width_decomposition(bound, test_X[:2], alphas=bound.base_alpha)  # sigma^2 / c
    assert terms.data_fit.abs().max() < 1e-10  # the two quadratic forms coincide there
    record = terms.summary(1)
    assert record["mixture_scale"] == 2.0 and record["rkhs_norm_bound"] == 12.0
    assert record["norm_share"] == pytest.approx(float(terms.shares()["norm"][1]))


def test_repeated_inputs_agree_with_the_radius():
    kernel, X, Y, test_X = instance("rbf", t=12)
    X, Y = torch.cat([X, X[:4]]), torch.cat([Y, Y[:4] + 0.01])
    bound = MartingaleMixtureBound(X, Y, kernel, None, 0.1, DELTA)
    terms = width_decomposition(bound, test_X)
    expected = bound.radius_tilde_squared(terms.alpha)
    assert torch.allclose(terms.radius_tilde_squared, expected, rtol=1e-8)


def test_argument_checks():
    kernel, X, Y, test_X = instance("rbf", t=5)
    bound = MartingaleMixtureBound(X, Y, kernel, 10.0, 0.1, DELTA)
    with pytest.raises(TypeError, match="MartingaleMixtureBound"):
        width_decomposition(object(), test_X)
    with pytest.raises(ValueError, match="N x d"):
        width_decomposition(bound, test_X[0])
    empty = MartingaleMixtureBound(X[:0], Y[:0], kernel, 10.0, 0.1, DELTA)
    with pytest.raises(ValueError, match="no observations"):
        width_decomposition(empty, test_X)
