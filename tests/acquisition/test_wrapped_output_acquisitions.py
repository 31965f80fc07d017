"""Single-output acquisitions on one output of BoTorch's multi-output wrappers
(``ModelListGP`` of one model, ``MultiTaskGP(output_tasks=[i])``, a multi-output
``SingleTaskGP`` with a ``ScalarizedPosteriorTransform``), each checked against an
independent computation: BoTorch's own posterior (with the transform), the widths from a
dense NumPy Gram matrix, and a ``MartingaleMixtureBound`` built by hand on the scalar GP's
data (NumPy standardization and min-max scaling, the kernel written out)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models import ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.models.transforms import Normalize
from gpytorch.kernels import AdditiveKernel, ProductKernel, RBFKernel, ScaleKernel
from oracles import se_kernel

from botorch_mtucb.acquisition import AYGPUCB, IGPUCB, MartingaleMixtureUCB
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound
from botorch_mtucb.kernels import FixedTaskCovarianceKernel

B_NORM, DELTA = 8.0, 0.05
TASK_NOISE = [0.01, 0.04]
TASK_MEANS = [0.3, -0.4]


def _tolerance(dtype):
    return {"rtol": 1e-8, "atol": 1e-8} if dtype == torch.float64 else {"rtol": 2e-4, "atol": 2e-4}


def _bound_tolerance(dtype):
    """Two routes to one bound: the posterior standard deviation near the data is the
    square root of a difference of nearly equal numbers (round-off ``1e-16`` becomes
    ``1e-8`` relative)."""
    return {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float64 else {"rtol": 2e-4, "atol": 2e-4}


def _igp(gamma, t, b=B_NORM, delta=DELTA):
    eta = 2.0 / t
    return b + math.sqrt(1 + eta) * math.sqrt(2 * gamma + t * eta + 2 * math.log(1 / delta))


def _ay(gamma, b=B_NORM, delta=DELTA):
    return b + math.sqrt(2 * gamma + 2 * math.log(1 / delta))


def _whitened_gain(K, noise):
    D = np.diag(1.0 / np.sqrt(noise))
    return 0.5 * np.linalg.slogdet(np.eye(len(noise)) + D @ K @ D)[1]


def _check_posterior_ucb(acqf, model, X, transform=None):
    """``mu + width sigma`` with BoTorch's own posterior (with the transform)."""
    posterior = model.posterior(X, posterior_transform=transform)
    mean = posterior.mean.reshape(-1)
    std = posterior.variance.reshape(-1).sqrt()
    tol = _tolerance(X.dtype)
    torch.testing.assert_close(acqf(X), (mean + acqf.width.to(mean) * std).detach(), **tol)


# ----------------------------------------------------------------------- ModelListGP(gp)
def test_model_list_of_one_model_is_that_model(dtype):
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(9, 2, generator=generator, dtype=torch.float64).to(dtype)
    gp = SingleTaskGP(X, (3.0 * X).sin().sum(-1, keepdim=True), input_transform=Normalize(2))
    listed = ModelListGP(gp)
    test_X = torch.rand(5, 1, 2, dtype=dtype)
    for build in (
        lambda m: MartingaleMixtureUCB(m, delta=DELTA),
        lambda m: MartingaleMixtureUCB(m, rkhs_norm_bound=10.0, alphas="DMM"),
        lambda m: IGPUCB(m, rkhs_norm_bound=B_NORM, delta=DELTA),
        lambda m: AYGPUCB(m, delta=DELTA),
    ):
        torch.testing.assert_close(build(listed)(test_X), build(gp)(test_X), rtol=0, atol=0)
    pending = torch.rand(2, 2, dtype=dtype)
    acqf = IGPUCB(listed, rkhs_norm_bound=B_NORM, X_pending=pending)
    torch.testing.assert_close(
        acqf(test_X), IGPUCB(gp, rkhs_norm_bound=B_NORM, X_pending=pending)(test_X)
    )


# ------------------------------------------------------------------------ MultiTaskGP
def _multi_task(dtype, output_task=1):
    """Two tasks, per-task noise and constant means, BoTorch's Standardize; the NumPy
    oracle's rows, centered standardized targets, kernel matrix and noise."""
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(10, 1, generator=generator, dtype=torch.float64)
    tasks = torch.tensor([0.0, 1.0]).repeat(5)[:, None].double()
    y = 2.0 + (4.0 * x).sin() + 0.5 * tasks * x + 0.1 * torch.randn(10, 1, generator=generator)
    model = MultiTaskGP(
        torch.cat([x, tasks], -1).to(dtype), y.to(dtype), task_feature=-1,
        output_tasks=[output_task],
    )  # fmt: skip
    model.covar_module.kernels[0].lengthscale = 0.35
    model.likelihood.noise = torch.tensor(TASK_NOISE, dtype=dtype)
    for mean, constant in zip(model.mean_module.base_means, TASK_MEANS):
        mean.constant = constant
    model.eval()
    B = model.covar_module.kernels[1].covar_matrix.detach().double().numpy()
    lengthscale = float(model.covar_module.kernels[0].lengthscale)
    y_np, t = y.numpy().reshape(-1), tasks.numpy().reshape(-1).astype(int)
    m, s = y_np.mean(), y_np.std(ddof=1)  # Standardize(m=1) over all rows
    oracle = {
        "x": x.numpy(),
        "tasks": t,
        "centered": (y_np - m) / s - np.array(TASK_MEANS)[t],
        "K": se_kernel([lengthscale])(x.numpy(), x.numpy()) * B[t][:, t],
        "noise": np.array(TASK_NOISE)[t],
        "shift": m + s * TASK_MEANS[output_task],
        "scale": s,
        "B": B,
        "lengthscale": lengthscale,
    }
    return model, oracle


def _hand_multi_task_bound(oracle, rkhs_norm_bound):
    kernel = ProductKernel(
        RBFKernel(active_dims=[0]),
        FixedTaskCovarianceKernel(torch.tensor(oracle["B"]), active_dims=[1]),
    )
    kernel.kernels[0].lengthscale = oracle["lengthscale"]
    rows = torch.tensor(np.c_[oracle["x"], oracle["tasks"]], dtype=torch.float64)
    return MartingaleMixtureBound(
        rows,
        torch.tensor(oracle["centered"])[:, None],
        kernel,
        rkhs_norm_bound,
        math.sqrt(max(TASK_NOISE)),  # the noisiest task's level, valid for every row
        DELTA,
        outcome_shift=oracle["shift"],
        outcome_scale=oracle["scale"],
    )


@pytest.mark.parametrize("output_task", [0, 1])
def test_multi_task_gp_output_is_the_scalar_gp_on_x_times_tasks(dtype, output_task):
    """The bound of task ``i`` at ``x`` is the scalar GP's at ``(x, i)``, from all tasks'
    observations (product kernel, per-task means and noise); IGP/AY: BoTorch's posterior
    with the joint width of the whitened observations."""
    model, oracle = _multi_task(dtype, output_task)
    X = torch.rand(6, 1, 1, dtype=dtype)
    rows = torch.cat([X.squeeze(-2).double(), torch.full((6, 1), float(output_task))], -1)
    tol = _bound_tolerance(dtype)
    acqf = MartingaleMixtureUCB(model, rkhs_norm_bound=B_NORM, delta=DELTA)
    hand = _hand_multi_task_bound(oracle, B_NORM)
    torch.testing.assert_close(acqf(X).double(), hand.upper(rows), **tol)
    lower = MartingaleMixtureUCB(model, rkhs_norm_bound=B_NORM, delta=DELTA, maximize=False)
    torch.testing.assert_close(lower(X).double(), -hand.lower(rows), **tol)
    pending = torch.rand(2, 1, dtype=dtype)
    pending_rows = torch.cat([pending.double(), torch.full((2, 1), float(output_task))], -1)
    acqf.set_X_pending(pending)
    torch.testing.assert_close(acqf(X).double(), hand.upper(rows, X_pending=pending_rows), **tol)
    # B chosen from the data, as for a single-output model
    chosen = MartingaleMixtureUCB(model, delta=DELTA)
    expected_B = choose_rkhs_norm_bound(
        torch.tensor(oracle["K"]), torch.tensor(oracle["centered"])[:, None],
        math.sqrt(max(TASK_NOISE)), DELTA,
    )  # fmt: skip
    assert chosen.bound.rkhs_norm_bound == pytest.approx(expected_B, rel=1e-6)
    gamma = _whitened_gain(oracle["K"], oracle["noise"])
    for cls, width in ((IGPUCB, _igp(gamma, 10)), (AYGPUCB, _ay(gamma))):
        ucb = cls(model, rkhs_norm_bound=B_NORM, delta=DELTA)
        assert float(ucb.width) == pytest.approx(
            width, rel=1e-6 if dtype == torch.float64 else 1e-4
        )
        _check_posterior_ucb(ucb, model, X)
    data_B = IGPUCB(model, delta=DELTA).rkhs_norm_bound
    assert data_B == pytest.approx(expected_B, rel=1e-6 if dtype == torch.float64 else 1e-3)


def test_multi_task_gp_refuses_several_outputs():
    model, _ = _multi_task(torch.float64)
    x = model.train_inputs[0]
    both = MultiTaskGP(x, model.train_targets[:, None], task_feature=-1)
    for build in (MartingaleMixtureUCB, IGPUCB):
        with pytest.raises(ValueError, match=r"must have one output, got a MultiTaskGP with 2"):
            build(both)


# ------------------------------------------------------ multi-output SingleTaskGP + w^T f
LENGTHSCALES = [[0.4, 0.7], [0.25, 0.5]]
OUTPUT_NOISE = [0.02, 0.06]
OUTPUT_MEANS = [0.3, -0.2]


def _two_outputs(dtype):
    generator = torch.Generator().manual_seed(2)
    X = 5.0 * torch.rand(12, 2, generator=generator, dtype=torch.float64)
    Y = torch.stack([X.sin().sum(-1), 3.0 * (X[:, 0] / 5.0).square() + 10.0], -1)
    Y = Y + 0.1 * torch.randn(12, 2, generator=generator, dtype=torch.float64)
    model = SingleTaskGP(X.to(dtype), Y.to(dtype), input_transform=Normalize(2))
    model.covar_module.lengthscale = torch.tensor(LENGTHSCALES, dtype=dtype)[:, None, :]
    model.likelihood.noise = torch.tensor(OUTPUT_NOISE, dtype=dtype)[:, None]
    model.mean_module.constant = torch.tensor(OUTPUT_MEANS, dtype=dtype)
    return model.eval(), X.numpy(), Y.numpy()


def _normalize(X, train_X):
    low, high = train_X.min(0), train_X.max(0)
    return (X - low) / (high - low)


def test_scalarized_single_task_gp_martingale_mixture_is_the_scalarized_gp(dtype):
    """``w^T f + offset``: paper 002's bound on ``g~ = sum_i (a_i / S)(f~_i - c_i)``, built
    by hand from NumPy's standardization, the summed kernel and the summed noise."""
    model, X, Y = _two_outputs(dtype)
    w, offset = np.array([0.7, -1.3]), 0.5
    transform = ScalarizedPosteriorTransform(torch.tensor(w, dtype=dtype), offset=offset)
    m, s = Y.mean(0), Y.std(0, ddof=1)
    a = w * s
    S = np.linalg.norm(a)
    p = a / S
    z = (((Y - m) / s - OUTPUT_MEANS) * p).sum(-1)
    kernel = AdditiveKernel(*[ScaleKernel(RBFKernel(ard_num_dims=2)) for _ in p])
    for part, share, lengthscale in zip(kernel.kernels, p, LENGTHSCALES):
        part.outputscale = share**2
        part.base_kernel.lengthscale = torch.tensor(lengthscale)
    noise_std = math.sqrt(float((p**2 * np.array(OUTPUT_NOISE)).sum()))
    hand = MartingaleMixtureBound(
        torch.tensor(_normalize(X, X)), torch.tensor(z)[:, None], kernel, B_NORM, noise_std,
        DELTA, outcome_shift=offset + float(w @ (m + s * np.array(OUTPUT_MEANS))),
        outcome_scale=float(S),
    )  # fmt: skip
    test_X = 5.0 * torch.rand(6, 1, 2, dtype=dtype)
    rows = torch.tensor(_normalize(test_X.squeeze(-2).double().numpy(), X))
    acqf = MartingaleMixtureUCB(model, rkhs_norm_bound=B_NORM, delta=DELTA,
                                posterior_transform=transform)  # fmt: skip
    tol = _bound_tolerance(dtype)
    torch.testing.assert_close(acqf(test_X).double(), hand.upper(rows), **tol)
    minimize = MartingaleMixtureUCB(model, rkhs_norm_bound=B_NORM, delta=DELTA,
                                    posterior_transform=transform, maximize=False)  # fmt: skip
    torch.testing.assert_close(minimize(test_X).double(), -hand.lower(rows), **tol)
    grid = MartingaleMixtureUCB(model, rkhs_norm_bound=B_NORM, delta=DELTA, alphas="AMM",
                                posterior_transform=transform)  # fmt: skip
    torch.testing.assert_close(grid(test_X).double(), hand.upper(rows, alphas=noise_std**2), **tol)
    # the bound is valid: it lies above BoTorch's posterior mean of w^T f minus slack
    mean = model.posterior(test_X, posterior_transform=transform).mean.reshape(-1)
    assert bool((acqf(test_X) > mean.detach() - 1e-3).all())


def test_scalarized_single_task_gp_width_ucbs(dtype):
    """IGP/AY: BoTorch's posterior of ``w^T f + offset``, the joint width of the scalar GP
    on ``X x [2]`` (block-diagonal kernel, per-output noise), from NumPy."""
    model, X, Y = _two_outputs(dtype)
    w = torch.tensor([0.7, -1.3], dtype=dtype)
    transform = ScalarizedPosteriorTransform(w, offset=0.5)
    Xn = _normalize(X, X)
    K = np.zeros((24, 24))
    for i, lengthscale in enumerate(LENGTHSCALES):
        K[12 * i : 12 * (i + 1), 12 * i : 12 * (i + 1)] = se_kernel(lengthscale)(Xn, Xn)
    gamma = _whitened_gain(K, np.repeat(OUTPUT_NOISE, 12))
    test_X = 5.0 * torch.rand(6, 1, 2, dtype=dtype)
    rel = 1e-6 if dtype == torch.float64 else 1e-4
    for cls, width in ((IGPUCB, _igp(gamma, 24)), (AYGPUCB, _ay(gamma))):
        acqf = cls(model, rkhs_norm_bound=B_NORM, delta=DELTA, posterior_transform=transform)
        assert float(acqf.width) == pytest.approx(width, rel=rel)
        _check_posterior_ucb(acqf, model, test_X, transform)
        minimize = cls(model, rkhs_norm_bound=B_NORM, delta=DELTA,
                       posterior_transform=transform, maximize=False)  # fmt: skip
        posterior = model.posterior(test_X, posterior_transform=transform)
        expected = -(posterior.mean.reshape(-1) - width * posterior.variance.reshape(-1).sqrt())
        torch.testing.assert_close(minimize(test_X), expected.detach(), **_tolerance(dtype))
    pending = 5.0 * torch.rand(2, 2, dtype=dtype)
    acqf = IGPUCB(model, rkhs_norm_bound=B_NORM, posterior_transform=transform, X_pending=pending)
    assert bool((acqf(test_X) <= IGPUCB(model, rkhs_norm_bound=B_NORM,
                                        posterior_transform=transform)(test_X) + 1e-6).all())  # fmt: skip


def test_scalarized_single_task_gp_errors():
    model, _, _ = _two_outputs(torch.float64)
    zero = ScalarizedPosteriorTransform(torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="weights are all zero"):
        MartingaleMixtureUCB(model, posterior_transform=zero)
    for build in (MartingaleMixtureUCB, IGPUCB, AYGPUCB):
        with pytest.raises(ValueError, match=r"2 outputs: pass posterior_transform=Scalarized"):
            build(model)
    one = ScalarizedPosteriorTransform(torch.ones(1, dtype=torch.float64))
    with pytest.raises(ValueError, match="must have one output"):
        MartingaleMixtureUCB(model, posterior_transform=one)
