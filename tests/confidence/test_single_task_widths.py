"""Single-task baselines: IGP-UCB and AY-GP-UCB widths (paper 002, Appendix C.2) and
Theorem 6.3 (the analytic martingale-mixture bound with the mapped parameters is strictly
below both); BKB (Calandriello et al. 2019, Theorem 1), GP-UCB (Srinivas et al. 2010,
Theorem 1) and Dragonfly's MOBO radius against the formulas written out with ``math``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.models import ModelListGP, SingleTaskGP
from botorch_models import CASE_NAMES as BOTORCH_CASES
from botorch_models import build_botorch_case, numpy_gain
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel

from botorch_mtucb.confidence import (
    MartingaleMixtureBound,
    ay_gp_ucb_width,
    bkb_width,
    dragonfly_ucb_width,
    gp_ucb_width,
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


def test_bkb_width_is_calandriello_theorem_1():
    F, xi, delta, eps, lam, kappa2 = 2.0, 0.1, 0.1, 0.5, 0.1, 1.5
    alpha = (1 + eps) / (1 - eps)
    for t, variance_sum in ((0, 0.0), (1, 0.8), (50, 7.5)):
        log_factor = max(math.log(kappa2 * t), 0.0) if t else 0.0
        beta = 2 * xi * math.sqrt(alpha * log_factor * variance_sum + math.log(1 / delta))
        beta += (1 + 1 / math.sqrt(1 - eps)) * math.sqrt(lam) * F
        got = bkb_width(variance_sum, t, F, xi, delta, eps, lam, kappa2)
        assert float(got) == pytest.approx(beta / math.sqrt(lam), rel=1e-12)
    # kappa^2 t < 1: the log factor is clipped at 0 (the width stays well defined)
    small = bkb_width(3.0, 2, F, xi, delta, eps, lam, 0.1)
    assert float(small) == pytest.approx(float(bkb_width(0.0, 0, F, xi, delta, eps, lam, 0.1)))
    # per-task values in one call, and the width grows with the variance sum
    several = bkb_width(torch.tensor([0.5, 2.0]), 30, F, xi, delta, eps, lam, kappa2)
    assert several.shape == (2,) and several[1] > several[0]


def test_gp_ucb_and_dragonfly_widths():
    for t, size, delta in ((1, 101, 0.1), (200, 225, 0.01)):
        expected = math.sqrt(2 * math.log(size * t**2 * math.pi**2 / (6 * delta)))
        assert gp_ucb_width(t, size, delta) == pytest.approx(expected, rel=1e-15)
    assert dragonfly_ucb_width(10, 2) == pytest.approx(math.sqrt(0.4 * math.log(41)), rel=1e-15)
    assert gp_ucb_width(5, 101, 0.1) > gp_ucb_width(4, 101, 0.1)


@pytest.mark.parametrize("eps", (0.0, 1.0, -0.2, 1.5, float("nan")))
def test_bkb_eps_outside_the_open_unit_interval(eps):
    with pytest.raises(ValueError, match=r"eps"):
        bkb_width(1.0, 3, 1.0, 0.1, 0.1, eps, 0.1, 1.0)


def test_bkb_and_gp_ucb_bad_input():
    with pytest.raises(ValueError, match="variance_sum"):
        bkb_width(-1.0, 3, 1.0, 0.1, 0.1, 0.5, 0.1, 1.0)
    with pytest.raises(ValueError, match="regularization"):
        bkb_width(1.0, 3, 1.0, 0.1, 0.1, 0.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="kernel_bound"):
        bkb_width(1.0, 3, 1.0, 0.1, 0.1, 0.5, 0.1, 0.0)
    with pytest.raises(ValueError, match="round_index"):
        gp_ucb_width(0, 10, 0.1)
    with pytest.raises(ValueError, match="domain_size"):
        gp_ucb_width(1, 0, 0.1)


@pytest.mark.parametrize("t", (2.5, True, "10"))
def test_igp_ucb_number_of_observations_must_be_an_int(t):
    # num_observations=2.5 used to be used as t = 2.5 in the t * eta term.
    with pytest.raises(TypeError, match=r"num_observations must be an int >= 0, got "):
        igp_ucb_width(1.0, t, B, SIGMA, DELTA, 0.1)
    with pytest.raises(ValueError, match=r"num_observations must be >= 0, got -1"):
        igp_ucb_width(1.0, -1, B, SIGMA, DELTA, 0.1)
    eta = 0.1  # an int t gives the formula's value
    expected = B + SIGMA * math.sqrt(2.0 + 10 * eta + 2 * math.log(1 / DELTA))
    assert float(igp_ucb_width(1.0, 10, B, SIGMA, DELTA, eta)) == pytest.approx(expected, rel=1e-14)


# ------------------------------------------------------------- widths of BoTorch models
def fitted_model(dtype=torch.float64, m=1, noise=0.02, fixed=False, seed=0):
    """A SingleTaskGP (Standardize by default) with set hyperparameters, in user units."""
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(20, 2, generator=generator, dtype=torch.float64)
    Y = torch.cat(
        [10.0 + (k + 1) * torch.sin(5 * X.sum(-1, keepdim=True) + k) for k in range(m)], -1
    )
    Yvar = torch.full_like(Y, noise) if fixed else None
    model = SingleTaskGP(X.to(dtype), Y.to(dtype), None if Yvar is None else Yvar.to(dtype))
    model.covar_module.lengthscale = torch.tensor(0.3, dtype=dtype)
    if not fixed:
        model.likelihood.noise = torch.tensor(noise, dtype=dtype)
    return model, X, Y


def dense_gain(X, lengthscale, regularization):
    """1/2 log det(I + K / lambda) with the RBF kernel, transcribed."""
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1) / lengthscale**2)
    return 0.5 * np.linalg.slogdet(np.eye(len(X)) + K / regularization)[1]


@pytest.mark.parametrize("fixed", [False, True])
def test_widths_of_a_single_output_model_match_the_dense_formula(dtype, fixed):
    model, X, Y = fitted_model(dtype, fixed=fixed)
    std = float(Y.std())
    lam = 0.02 / std**2 if fixed else 0.02  # fixed noise is divided by the std squared
    gamma = dense_gain(X.numpy(), 0.3, lam)
    t, eta = 20, 0.1
    tol = 1e-9 if dtype == torch.float64 else 1e-4
    ay = ay_gp_ucb_width(model, rkhs_norm_bound=B, delta=DELTA)
    assert ay.shape == () and ay.dtype == torch.float64
    assert float(ay) == pytest.approx(B + math.sqrt(2 * gamma + 2 * math.log(1 / DELTA)), rel=tol)
    igp = igp_ucb_width(model, rkhs_norm_bound=B, noise_std=0.3, delta=DELTA, eta=eta)
    expected = B + 0.3 * math.sqrt((1 + eta) / lam) * math.sqrt(
        2 * gamma + t * eta + 2 * math.log(1 / DELTA)
    )
    assert float(igp) == pytest.approx(expected, rel=tol)
    default_eta = igp_ucb_width(model, rkhs_norm_bound=B, delta=DELTA)  # eta = 2 / t
    expected = B + math.sqrt(1 + 2 / t) * math.sqrt(2 * gamma + 2 + 2 * math.log(1 / DELTA))
    assert float(default_eta) == pytest.approx(expected, rel=tol)


def test_igp_from_a_model_is_igp_for_the_rescaled_kernel():
    """mu + beta rho_lambda (model route) = mu' + beta' rho'_{1+eta} for k' = (1+eta) k / lambda
    and B' = sqrt(lambda / (1 + eta)) B (Chowdhury & Gopalan's theorem as stated)."""
    lam, eta = 0.02, 0.3
    model, X, Y = fitted_model(noise=lam, fixed=False)
    model.likelihood.noise = torch.tensor(lam, dtype=torch.float64)
    model.mean_module.constant = torch.tensor(0.0, dtype=torch.float64)
    kernel = RBFKernel().to(torch.float64)
    kernel.lengthscale = torch.tensor(0.3, dtype=torch.float64)
    Yt = (Y - Y.mean()) / Y.std()
    test_X = torch.rand(8, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    mean, rho = dense_mean_std(kernel, X, Yt, test_X, lam)
    width = float(igp_ucb_width(model, rkhs_norm_bound=B, noise_std=SIGMA, delta=DELTA, eta=eta))
    scaled = ScaleKernel(kernel).to(torch.float64)
    scaled.outputscale = torch.tensor((1 + eta) / lam, dtype=torch.float64)
    mean2, rho2 = dense_mean_std(scaled, X, Yt, test_X, 1 + eta)
    K2 = (1 + eta) / lam * kernel(X, X).to_dense().detach()
    gamma2 = information_gain(K2, 1 + eta)
    beta2 = float(igp_ucb_width(gamma2, 20, math.sqrt(lam / (1 + eta)) * B, SIGMA, DELTA, eta))
    np.testing.assert_allclose(mean + width * rho, mean2 + beta2 * rho2, rtol=1e-9)


def test_one_width_per_output():
    batched, X, Y = fitted_model(m=2)
    single, *_ = fitted_model(seed=1)
    widths = ay_gp_ucb_width(ModelListGP(batched, single), rkhs_norm_bound=B, delta=DELTA)
    assert widths.shape == (3,)
    assert float(widths[2]) == pytest.approx(float(ay_gp_ucb_width(single, B, delta=DELTA)))
    gamma = dense_gain(X.numpy(), 0.3, 0.02)  # both outputs: same inputs, kernel and noise
    expected = B + math.sqrt(2 * gamma + 2 * math.log(1 / DELTA))
    assert widths[:2].tolist() == pytest.approx([expected, expected], rel=1e-9)
    assert igp_ucb_width(batched, rkhs_norm_bound=B, delta=DELTA, eta=0.1).shape == (2,)


def test_model_route_errors():
    model, *_ = fitted_model()
    with pytest.raises(ValueError, match="num_observations is read from the model"):
        igp_ucb_width(model, 10, B, SIGMA, DELTA, 0.1)
    with pytest.raises(ValueError, match="regularization is read from the model"):
        ay_gp_ucb_width(model, B, SIGMA, DELTA, 0.1)
    with pytest.raises(TypeError, match="rkhs_norm_bound must be"):
        ay_gp_ucb_width(model, delta=DELTA)


@pytest.mark.parametrize("name", BOTORCH_CASES)
def test_whitened_widths_of_every_botorch_model_match_numpy(name, dtype):
    """Per-task / per-point noise and multi-task models: B + sigma_w sqrt(1 + eta)
    sqrt(2 gamma + t eta + 2 ln(1/delta)) (IGP) and B + sigma_w sqrt(2 gamma + 2
    ln(1/delta)) (AY), gamma = 1/2 log det(I + Sigma^-1/2 K Sigma^-1/2) and sigma_w =
    sigma / sqrt(lambda_min(Sigma)) per independent group, from the NumPy K and Sigma."""
    case = build_botorch_case(name, dtype)
    model, eta, sigma = case.model, 0.05, 0.3
    tol = 1e-8 if dtype == torch.float64 else 2e-4
    joint = name.startswith(("multitask", "kronecker"))
    expected_igp, expected_ay, expected_ay_none = [], [], []
    for K, Sigma in case.groups:
        gamma, t = numpy_gain([(K, Sigma)]), K.shape[0]
        sigma_w = sigma / math.sqrt(np.linalg.eigvalsh(Sigma).min())
        log_igp = 2 * gamma + t * eta + 2 * math.log(1 / DELTA)
        expected_igp.append(B + sigma_w * math.sqrt(1 + eta) * math.sqrt(log_igp))
        expected_ay.append(B + sigma_w * math.sqrt(2 * gamma + 2 * math.log(1 / DELTA)))
        expected_ay_none.append(B + math.sqrt(2 * gamma + 2 * math.log(1 / DELTA)))
    igp = igp_ucb_width(model, rkhs_norm_bound=B, noise_std=sigma, delta=DELTA, eta=eta)
    ay = ay_gp_ucb_width(model, rkhs_norm_bound=B, noise_std=sigma, delta=DELTA)
    ay_none = ay_gp_ucb_width(model, rkhs_norm_bound=B, delta=DELTA)
    if joint or name in ("single", "fixed_noise"):
        assert igp.shape == ay.shape == ()
    else:
        assert igp.shape == (case.num_tasks,)
    assert igp.reshape(-1).tolist() == pytest.approx(expected_igp, rel=tol)
    assert ay.reshape(-1).tolist() == pytest.approx(expected_ay, rel=tol)
    assert ay_none.reshape(-1).tolist() == pytest.approx(expected_ay_none, rel=tol)


def test_a_multi_task_member_of_a_model_list_gets_its_joint_width_per_output():
    multitask = build_botorch_case("multitask").model
    single, *_ = fitted_model()
    listed = ay_gp_ucb_width(ModelListGP(multitask, single), rkhs_norm_bound=B, delta=DELTA)
    joint = ay_gp_ucb_width(multitask, rkhs_norm_bound=B, delta=DELTA)
    alone = ay_gp_ucb_width(single, rkhs_norm_bound=B, delta=DELTA)
    assert listed.shape == (multitask.num_outputs + 1,)
    assert listed.tolist() == [float(joint)] * multitask.num_outputs + [float(alone)]


def test_heteroskedastic_fixed_noise_is_the_weighted_theorem():
    """Unequal train_Yvar: gamma with Sigma = diag(Yvar) and sigma_w = 1 (noise_std=None);
    the width shrinks to the homoskedastic one when all Yvar are equal."""
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(6, 1, generator=generator, dtype=torch.float64)
    Yvar = 0.01 + X.square()
    model = SingleTaskGP(X, X.sin(), train_Yvar=Yvar, outcome_transform=None)
    model.covar_module.lengthscale = torch.tensor(0.3, dtype=torch.float64)
    K = np.exp(-0.5 * (X.numpy() - X.numpy().T) ** 2 / 0.3**2)
    gamma = numpy_gain([(K, np.diag(Yvar.numpy()[:, 0]))])
    expected = B + math.sqrt(2 * gamma + 2 * math.log(1 / DELTA))
    assert float(ay_gp_ucb_width(model, B, delta=DELTA)) == pytest.approx(expected, rel=1e-10)


def test_widths_of_a_model_without_data_are_the_theorems_at_t_0():
    """t = 0: gamma_0 = 0, and (IGP) eta = 2 / max(t, 1) = 2 unless given; with
    noise_std, sigma_w = sigma / sqrt(lambda) with the likelihood's noise variance."""
    empty = torch.zeros(0, 2, dtype=torch.float64)
    model = SingleTaskGP(empty, empty[:, :1], outcome_transform=None)
    lam = float(model.likelihood.noise)
    log_term = 2 * math.log(1 / DELTA)
    assert float(igp_ucb_width(model, rkhs_norm_bound=B, delta=DELTA)) == pytest.approx(
        B + math.sqrt(3.0) * math.sqrt(log_term), rel=1e-12
    )
    igp = igp_ucb_width(model, rkhs_norm_bound=B, noise_std=SIGMA, delta=DELTA, eta=0.1)
    assert float(igp) == pytest.approx(
        B + SIGMA / math.sqrt(lam) * math.sqrt(1.1) * math.sqrt(log_term), rel=1e-12
    )
    assert float(ay_gp_ucb_width(model, B, delta=DELTA)) == pytest.approx(
        B + math.sqrt(log_term), rel=1e-12
    )
    _, X, Y, _ = instance(RBFKernel(), t=5)
    listed = ay_gp_ucb_width(ModelListGP(model, SingleTaskGP(X, Y)), B, SIGMA, DELTA)
    assert float(listed[0]) == pytest.approx(B + SIGMA / math.sqrt(lam) * math.sqrt(log_term))
    fixed = SingleTaskGP(empty, empty[:, :1], empty[:, :1], outcome_transform=None)
    assert float(ay_gp_ucb_width(fixed, B, delta=DELTA)) == pytest.approx(
        B + math.sqrt(log_term), rel=1e-12
    )
    with pytest.raises(ValueError, match="no training data and no homoskedastic noise"):
        ay_gp_ucb_width(fixed, B, SIGMA, DELTA)  # no lambda to measure sigma against
