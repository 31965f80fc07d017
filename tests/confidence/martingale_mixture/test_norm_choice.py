"""choose_rkhs_norm_bound: ||mu_t||_H against the dense formula w^T K w, the posterior
mean inside the confidence set (a NumPy check of ||mu_t - y|| <= R_t), the chosen B never
below the smallest non-empty B (a brute-force bisection), data that contradict a small
explicit B, the noise floor and the argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from martingale_oracles import DELTA, dense_radius_squared, gram, instance

from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
    choose_rkhs_norm_bound,
    leave_one_out_allowance,
    norm_bound_with_allowance,
    posterior_mean_norm,
    rkhs_norm_bound_from_spectrum,
)
from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum


def dense_mean_norm(K, y, s):
    w = np.linalg.solve(K + s * np.eye(len(y)), y)
    return math.sqrt(w @ K @ w), K @ w


@pytest.mark.parametrize("noise", [1e-3, 0.1, 1.0])
def test_posterior_mean_norm_and_membership(noise):
    kernel, X, Y, _ = instance("m52", t=30, norm=4.0, noise=noise)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    spectrum = GramSpectrum.from_gram(torch.as_tensor(K), Y[:, 0])
    norm, mean = dense_mean_norm(K, y, noise**2)
    assert posterior_mean_norm(spectrum, noise**2) == pytest.approx(norm, rel=1e-8)
    radius_sq = dense_radius_squared(K, y, noise, 1.0, DELTA)
    assert np.sum((mean - y) ** 2) <= radius_sq  # mu_t is in F_t once B >= ||mu_t||
    chosen = choose_rkhs_norm_bound(torch.as_tensor(K), Y, noise, DELTA)
    assert chosen == pytest.approx(max(norm, noise / math.sqrt(K.diagonal().max())), rel=1e-8)


def smallest_nonempty_norm(kernel, X, Y, noise, low=1e-6, high=1e3):
    """Bisection on the constructor's own empty-set test (brute force, 60 steps)."""
    for _ in range(60):
        middle = math.sqrt(low * high)
        try:
            MartingaleMixtureBound(X, Y, kernel, middle, noise, DELTA)
            high = middle
        except EmptyConfidenceSetError:
            low = middle
    return high


@pytest.mark.parametrize("factor", [1.0, 3.0])
def test_the_chosen_set_is_never_empty(factor):
    # near noise-free observations of a large function: small explicit bounds are empty
    kernel, X, Y, test_X = instance("rbf", t=25, norm=50.0, noise=1e-3)
    noise = 1e-3
    with pytest.raises(EmptyConfidenceSetError):
        MartingaleMixtureBound(X, Y, kernel, 1.0, noise, DELTA)
    K = torch.as_tensor(gram(kernel, X, X))
    chosen = choose_rkhs_norm_bound(K, Y, noise, DELTA, factor=factor)
    assert chosen >= factor * smallest_nonempty_norm(kernel, X, Y, noise) * (1 - 1e-9)
    bound = MartingaleMixtureBound(X, Y, kernel, chosen, noise, DELTA)
    assert torch.isfinite(bound.upper(test_X)).all()
    assert torch.isfinite(bound.upper(test_X, alphas=[1e-7, 1e-6, 1e-5])).all()


def test_zero_data_take_the_noise_floor():
    K = torch.eye(3, dtype=torch.float64) * 4.0
    chosen = choose_rkhs_norm_bound(K, torch.zeros(3, 1, dtype=torch.float64), 0.5, DELTA)
    assert chosen == pytest.approx(0.5 / 2.0)


def test_bad_input():
    K, Y = torch.eye(2, dtype=torch.float64), torch.ones(2, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="at least one observation"):
        choose_rkhs_norm_bound(torch.zeros(0, 0, dtype=torch.float64), Y[:0], 0.1, DELTA)
    with pytest.raises(ValueError, match="factor must be >= 1"):
        choose_rkhs_norm_bound(K, Y, 0.1, DELTA, factor=0.5)
    with pytest.raises(ValueError, match="train_Y must have 2 rows"):
        choose_rkhs_norm_bound(K, Y[:1], 0.1, DELTA)
    with pytest.raises(ValueError, match="noise_std"):
        choose_rkhs_norm_bound(K, Y, 0.0, DELTA)
    with pytest.raises(ValueError, match="delta"):
        choose_rkhs_norm_bound(K, Y, 0.1, 1.5)


@pytest.mark.parametrize("kernel_name", ["linear", "polynomial"])
def test_non_stationary_kernels_need_no_constant_prior_variance(kernel_name):
    """The rule uses max_i k(x_i, x_i), not a constant k(x, x): a linear or polynomial
    kernel (k(x, x) growing with |x|) on a SingleTaskGP gets a non-empty set whose B is
    the rule's value computed by hand, and bounds that contain the posterior mean."""
    from botorch.models import SingleTaskGP
    from gpytorch.kernels import LinearKernel, PolynomialKernel

    generator = torch.Generator().manual_seed(3)
    X = 3.0 * torch.rand(15, 2, generator=generator, dtype=torch.float64)
    Y = X.sum(-1, keepdim=True) ** 2 + 0.05 * torch.randn(15, 1, generator=generator).double()
    kernel = LinearKernel() if kernel_name == "linear" else PolynomialKernel(power=2)
    model = SingleTaskGP(X, Y, covar_module=kernel.double(), outcome_transform=None)
    model.likelihood.noise = torch.tensor(0.01, dtype=torch.float64)
    model.mean_module.constant.data.fill_(0.0)
    bound = MartingaleMixtureBound.from_model(model, delta=DELTA)
    K = gram(model.covar_module, X, X)
    assert np.ptp(K.diagonal()) > 1.0  # not stationary
    norm, _ = dense_mean_norm(K, Y.numpy()[:, 0], 0.01)
    expected = max(norm, 0.1 / math.sqrt(K.diagonal().max()))
    assert bound.rkhs_norm_bound == pytest.approx(expected, rel=1e-6)
    test_X = 3.0 * torch.rand(20, 2, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        mean = model.posterior(test_X).mean.squeeze(-1)
    assert (bound.lower(test_X) <= mean + 1e-6).all() and (mean <= bound.upper(test_X) + 1e-6).all()


@pytest.mark.parametrize("repeated", [False, True])
def test_constructor_chooses_b_from_its_own_spectrum(repeated):
    # rkhs_norm_bound=None: the rule on the bound's spectrum (folded over repeated inputs)
    # equals the rule on the dense t x t Gram matrix, and the bound equals one built with
    # that B given explicitly.
    kernel, X, Y, test_X = instance("m52", t=24, seed=5)
    if repeated:
        X, Y = torch.cat([X[:12], X[:12]]), Y + 0.05  # every input twice
    K = torch.as_tensor(gram(kernel, X, X))
    expected = choose_rkhs_norm_bound(K, Y, 0.1, DELTA, mixture_scale=0.5)
    chosen = MartingaleMixtureBound(X, Y, kernel, None, 0.1, DELTA, mixture_scale=0.5)
    assert chosen.rkhs_norm_bound_from_data
    assert (chosen.spectrum().eigenvectors is None) == repeated  # folded over the repeats
    assert chosen.rkhs_norm_bound == pytest.approx(expected, rel=1e-9)
    spectrum = GramSpectrum.from_gram(K, Y.reshape(-1))
    direct = rkhs_norm_bound_from_spectrum(spectrum, float(K.diagonal().max()), 0.1, DELTA, 0.5)
    assert direct == pytest.approx(expected, rel=1e-14)
    given = MartingaleMixtureBound(X, Y, kernel, chosen.rkhs_norm_bound, 0.1, DELTA, 0.5)
    torch.testing.assert_close(chosen.upper(test_X), given.upper(test_X), rtol=1e-12, atol=0.0)
    with pytest.raises(ValueError, match="no training points to choose it from"):
        MartingaleMixtureBound(X[:0], Y[:0], kernel, None, 0.1, DELTA)
    with pytest.raises(ValueError, match="at least one observation"):
        rkhs_norm_bound_from_spectrum(GramSpectrum.from_gram(K[:0, :0], Y[:0, 0]), 1.0, 0.1, DELTA)


def brute_force_increments(K, y, s):
    """Refit the ridge mean without each observation, by dense solves."""
    t, out = len(y), []
    for i in range(t):
        keep = [j for j in range(t) if j != i]
        Ki, ki = K[np.ix_(keep, keep)] + s * np.eye(t - 1), K[keep, i]
        residual = y[i] - ki @ np.linalg.solve(Ki, y[keep])
        variance = K[i, i] - ki @ np.linalg.solve(Ki, ki)
        out.append(residual**2 * variance / (variance + s) ** 2)
    return np.array(out)


@pytest.mark.parametrize("s", [1e-8, 1e-3, 0.1])
def test_leave_one_out_allowance_against_refits(s):
    kernel, X, Y, _ = instance("m52", t=20, norm=3.0, noise=0.0)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    expected = brute_force_increments(K, y, s).max()
    value = leave_one_out_allowance(torch.as_tensor(K), Y, s)
    assert value == pytest.approx(expected, rel=1e-5)


def test_allowance_is_the_interpolant_norm_increment_on_exact_data():
    """For s -> 0: Delta_i = ||mu_t||^2 - ||mu_{t minus i}||^2 (dense norms y^T K^{-1} y)."""
    kernel, X, Y, _ = instance("m52", t=12, norm=3.0, noise=0.0, lengthscale=0.2)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    full = y @ np.linalg.solve(K, y)
    increments = []
    for i in range(len(y)):
        keep = [j for j in range(len(y)) if j != i]
        increments.append(full - y[keep] @ np.linalg.solve(K[np.ix_(keep, keep)], y[keep]))
    value = leave_one_out_allowance(torch.as_tensor(K), Y, 1e-12)
    assert value == pytest.approx(max(increments), rel=1e-4)


def test_norm_bound_with_allowance_and_from_model():
    kernel, X, Y, _ = instance("rbf", t=15, norm=3.0, noise=0.0)
    K = torch.as_tensor(gram(kernel, X, X))
    rule = choose_rkhs_norm_bound(K, Y, 1e-3, DELTA)
    allowance = leave_one_out_allowance(K, Y, 1e-6)
    assert norm_bound_with_allowance(K, Y, 1e-3, DELTA) == pytest.approx(
        math.sqrt(rule**2 + allowance)
    )
    assert norm_bound_with_allowance(K[:1, :1], Y[:1], 1e-3, DELTA) == pytest.approx(
        choose_rkhs_norm_bound(K[:1, :1], Y[:1], 1e-3, DELTA)
    )
    with pytest.raises(ValueError, match="at least 2 observations"):
        leave_one_out_allowance(K[:1, :1], Y[:1], 1e-3)
    with pytest.raises(ValueError, match="regularization must be > 0"):
        leave_one_out_allowance(K, Y, 0.0)


def test_from_model_adds_the_allowance_only_for_a_stated_noise():
    from botorch.models import SingleTaskGP

    generator = torch.Generator().manual_seed(1)
    X = torch.rand(15, 2, generator=generator, dtype=torch.float64)
    model = SingleTaskGP(X, (3 * X).sin().sum(-1, keepdim=True)).eval()
    stated = MartingaleMixtureBound.from_model(model, measurement_noise_std=1e-6)
    plain = MartingaleMixtureBound.from_model(model, noise_std=stated.noise_std)
    assert stated.rkhs_norm_bound_from_data and plain.rkhs_norm_bound_from_data
    K = plain.kernel(plain.train_X).to_dense().detach()
    allowance = leave_one_out_allowance(K, plain.train_Y, stated.base_alpha)
    assert stated.rkhs_norm_bound == pytest.approx(
        math.sqrt(plain.rkhs_norm_bound**2 + allowance), rel=1e-9
    )
    explicit = MartingaleMixtureBound.from_model(model, 50.0, measurement_noise_std=1e-6)
    assert explicit.rkhs_norm_bound == 50.0 and not explicit.rkhs_norm_bound_from_data
