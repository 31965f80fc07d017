"""IGP-UCB and AY-GP-UCB widths (paper 002, Appendix C.2) and Theorem 6.3: the analytic
martingale-mixture bound with the mapped parameters is strictly below both."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gpytorch.kernels import MaternKernel, RBFKernel

from botorch_mtucb.confidence import (
    MartingaleMixtureBound,
    ay_gp_ucb_width,
    igp_ucb_width,
    information_gain,
)

B, SIGMA, DELTA = 10.0, 0.1, 0.01


def instance(kernel, t=40, d=2, seed=0):
    generator = torch.Generator().manual_seed(seed)
    kernel = kernel.to(torch.float64)
    kernel.lengthscale = 0.4
    kernel.requires_grad_(False)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    Y = torch.sin(5 * X.sum(-1, keepdim=True)) + SIGMA * torch.randn(
        t, 1, generator=generator, dtype=torch.float64
    )
    with torch.no_grad():
        K = kernel(X, X).to_dense().numpy()
    return kernel, X, Y, K


def dense_mean_std(kernel, X, Y, x, regularization):
    """mu_lambda(x) and rho_lambda(x) of eqs. (2)-(3), transcribed."""
    with torch.no_grad():
        K = kernel(X, X).to_dense().numpy()
        kx = kernel(X, x).to_dense().numpy()  # t x N
        kxx = kernel(x, x, diag=True).numpy()
    A = np.linalg.inv(K + regularization * np.eye(len(K)))
    mean = kx.T @ A @ Y.numpy()[:, 0]
    var = kxx - np.einsum("tn,ts,sn->n", kx, A, kx)
    return mean, np.sqrt(np.clip(var, 0, None))


@pytest.mark.parametrize("eta", [0.002, 0.1, 1.0])
def test_igp_ucb_width_matches_appendix_c2(eta):
    _, _, _, K = instance(RBFKernel())
    t = K.shape[0]
    logdet = np.linalg.slogdet(np.eye(t) + K / (1 + eta))[1]
    expected = B + SIGMA * math.sqrt(logdet + t * eta + 2 * math.log(1 / DELTA))
    gamma = information_gain(torch.as_tensor(K), 1 + eta)
    assert float(igp_ucb_width(gamma, t, B, SIGMA, DELTA, eta)) == pytest.approx(
        expected, rel=1e-10
    )


@pytest.mark.parametrize("regularization", [0.01, 0.05, 1.0])
def test_ay_gp_ucb_width_matches_appendix_c2(regularization):
    _, _, _, K = instance(MaternKernel(nu=2.5))
    t = K.shape[0]
    logdet = np.linalg.slogdet(np.eye(t) + K / regularization)[1]
    radius = SIGMA * math.sqrt(logdet + 2 * math.log(1 / DELTA)) + math.sqrt(regularization) * B
    expected = radius / math.sqrt(regularization)  # R~^AY / sqrt(lambda)
    gamma = information_gain(torch.as_tensor(K), regularization)
    width = ay_gp_ucb_width(gamma, B, SIGMA, DELTA, regularization)
    assert width.dtype == torch.float64
    assert float(width) == pytest.approx(expected, rel=1e-10)
    widths = ay_gp_ucb_width(torch.stack([gamma * 0, gamma]), B, SIGMA, DELTA, regularization)
    assert widths.shape == (2,) and float(widths[1]) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("kernel", [RBFKernel(), MaternKernel(nu=1.5)])
def test_theorem_6_3_analytic_bound_is_strictly_tighter(kernel):
    kernel, X, Y, K = instance(kernel, t=50, d=2, seed=3)
    t = K.shape[0]
    test_X = torch.rand(20, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    # AY-GP-UCB with lambda vs AMM with c = sigma^2 / lambda, alpha = lambda
    for lam in (SIGMA**2, 0.05):
        mean, std = dense_mean_std(kernel, X, Y, test_X, lam)
        gamma = information_gain(torch.as_tensor(K), lam)
        ay = mean + float(ay_gp_ucb_width(gamma, B, SIGMA, DELTA, lam)) * std
        bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=SIGMA**2 / lam)
        amm = bound.upper(test_X, alphas=lam).numpy()
        assert (amm < ay).all()
    # IGP-UCB with eta vs AMM with c = sigma^2 / (1 + eta), alpha = 1 + eta
    for eta in (2 / 1000, 0.5):
        mean, std = dense_mean_std(kernel, X, Y, test_X, 1 + eta)
        gamma = information_gain(torch.as_tensor(K), 1 + eta)
        igp = mean + float(igp_ucb_width(gamma, t, B, SIGMA, DELTA, eta)) * std
        c = SIGMA**2 / (1 + eta)
        bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
        amm = bound.upper(test_X, alphas=1 + eta).numpy()
        assert (amm < igp).all()


def test_bad_input():
    with pytest.raises(ValueError, match="regularization"):
        ay_gp_ucb_width(1.0, B, SIGMA, DELTA, 0.0)
    with pytest.raises(ValueError, match="delta"):
        ay_gp_ucb_width(1.0, B, SIGMA, 1.5, 0.1)
    with pytest.raises(ValueError, match="information_gain"):
        ay_gp_ucb_width(-1.0, B, SIGMA, DELTA, 0.1)
    with pytest.raises(ValueError, match="noise_std"):
        ay_gp_ucb_width(1.0, B, -SIGMA, DELTA, 0.1)
    with pytest.raises(ValueError, match="eta"):
        igp_ucb_width(1.0, 10, B, SIGMA, DELTA, 0.0)
    with pytest.raises(ValueError, match="information_gain"):
        igp_ucb_width(float("nan"), 10, B, SIGMA, DELTA, 0.1)
