"""IGPUCB and AYGPUCB on SingleTaskGPs with Normalize and Standardize against a dense
NumPy GP on the data transformed by hand (mean + width * std in user units, the widths
from 1/2 log det(I + K / lambda)), GP-BUCB's pending-point variance, posterior
transforms, the data-chosen norm bound and the errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from botorch.optim import optimize_acqf

from botorch_mtucb.acquisition import AYGPUCB, IGPUCB
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound

B, DELTA, NOISE, LENGTHSCALE = 3.0, 0.05, 0.01, 0.35


def model_and_data(dtype, seed=0, t=14):
    generator = torch.Generator().manual_seed(seed)
    X = 6.0 * torch.rand(t, 2, generator=generator, dtype=torch.float64) - 1.0
    Y = 70.0 + 9.0 * torch.sin(X[:, :1]) * torch.cos(X[:, 1:] / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(X.to(dtype), Y.to(dtype), input_transform=Normalize(2))
    model.covar_module.lengthscale = torch.tensor(LENGTHSCALE, dtype=dtype)
    model.likelihood.noise = torch.tensor(NOISE, dtype=dtype)
    model.mean_module.constant = torch.tensor(0.1, dtype=dtype)
    return (
        model.eval(),
        X.to(dtype).detach().double().numpy(),
        Y.to(dtype).detach().double().numpy()[:, 0],
    )


class DenseGP:
    """The model's posterior written out: Normalize and Standardize by hand, RBF kernel,
    constant mean 0.1, noise NOISE (transformed units)."""

    def __init__(self, X, Y):
        self.low, self.high = X.min(0), X.max(0)
        self.mean, self.std = Y.mean(), Y.std(ddof=1)
        self.X = self.inputs(X)
        self.y = (Y - self.mean) / self.std - 0.1

    def inputs(self, Z):
        return (np.asarray(Z, dtype=np.float64) - self.low) / (self.high - self.low)

    @staticmethod
    def k(A, C):
        return np.exp(-0.5 * ((A[:, None] - C[None]) ** 2).sum(-1) / LENGTHSCALE**2)

    def gain(self):
        K = self.k(self.X, self.X)
        return 0.5 * np.linalg.slogdet(np.eye(len(K)) + K / NOISE)[1]

    def mean_std(self, Z, pending=None):
        """User-unit mean and std at ``Z``; with ``pending``: the variance conditioned on
        them as well (noise NOISE), the mean of the data only (GP-BUCB)."""
        Z = self.inputs(Z)
        A = np.linalg.inv(self.k(self.X, self.X) + NOISE * np.eye(len(self.X)))
        kz = self.k(self.X, Z)
        mean = kz.T @ A @ self.y
        inputs = self.X if pending is None else np.vstack([self.X, self.inputs(pending)])
        Ap = np.linalg.inv(self.k(inputs, inputs) + NOISE * np.eye(len(inputs)))
        kp = self.k(inputs, Z)
        variance = 1.0 - np.einsum("tn,ts,sn->n", kp, Ap, kp)
        return self.mean + self.std * (0.1 + mean), self.std * np.sqrt(np.clip(variance, 0, None))


def widths(dense, t):
    gamma, log_term = dense.gain(), 2 * math.log(1 / DELTA)
    eta = 2.0 / t
    igp = B + math.sqrt(1 + eta) * math.sqrt(2 * gamma + t * eta + log_term)
    ay = B + math.sqrt(2 * gamma + log_term)
    return {"IGPUCB": igp, "AYGPUCB": ay}


@pytest.mark.parametrize("cls", [IGPUCB, AYGPUCB])
def test_values_match_the_dense_gp_in_user_units(dtype, cls):
    model, X, Y = model_and_data(dtype)
    dense = DenseGP(X, Y)
    acqf = cls(model, rkhs_norm_bound=B, delta=DELTA)
    width = widths(dense, len(X))[cls.__name__]
    tol = 1e-7 if dtype == torch.float64 else 2e-4
    assert float(acqf.width) == pytest.approx(width, rel=tol)
    Z = (
        6.0 * torch.rand(9, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
        - 1.0
    )
    mean, std = dense.mean_std(Z.numpy())
    values = acqf(Z.to(dtype).unsqueeze(-2))
    assert values.dtype == dtype
    np.testing.assert_allclose(values.detach().double().numpy(), mean + width * std, rtol=tol)
    pending = Z[:2]
    acqf.set_X_pending(pending.to(dtype))
    mean_p, std_p = dense.mean_std(Z.numpy(), pending.numpy())
    np.testing.assert_allclose(
        acqf(Z.to(dtype).unsqueeze(-2)).detach().double().numpy(),
        mean_p + width * std_p,
        rtol=tol,
        atol=tol,
    )
    minimize = cls(model, rkhs_norm_bound=B, delta=DELTA,
                   posterior_transform=ScalarizedPosteriorTransform(-torch.ones(1, dtype=dtype)))  # fmt: skip
    np.testing.assert_allclose(
        minimize(Z.to(dtype).unsqueeze(-2)).detach().double().numpy(),
        -mean + width * std,
        rtol=tol,
        atol=tol,
    )


def test_norm_bound_from_the_data():
    model, X, Y = model_and_data(torch.float64)
    dense = DenseGP(X, Y)
    expected = choose_rkhs_norm_bound(
        torch.as_tensor(dense.k(dense.X, dense.X)),
        torch.as_tensor(dense.y),
        math.sqrt(NOISE),
        DELTA,
    )
    acqf = IGPUCB(model, delta=DELTA)
    assert acqf.rkhs_norm_bound_from_data and acqf.rkhs_norm_bound == pytest.approx(
        expected, rel=1e-8
    )
    assert not AYGPUCB(model, rkhs_norm_bound=B).rkhs_norm_bound_from_data
    assert repr(acqf).startswith("IGPUCB(width=")


def test_sequential_batches_and_errors():
    torch.manual_seed(0)
    model, *_ = model_and_data(torch.float64)
    acqf = AYGPUCB(model, rkhs_norm_bound=B)
    box = torch.tensor([[-1.0, -1.0], [5.0, 5.0]], dtype=torch.float64)
    batch, _ = optimize_acqf(acqf, box, q=3, num_restarts=2, raw_samples=32, sequential=True)
    assert torch.cdist(batch, batch).add(torch.eye(3)).min() > 1e-3
    with pytest.raises(ValueError, match="q = 1 is required"):
        optimize_acqf(acqf, box, q=3, num_restarts=2, raw_samples=32)
    X = torch.rand(6, 1, dtype=torch.float64)
    unequal = SingleTaskGP(X, X.sin(), train_Yvar=0.01 + X.square())  # per-point noise
    assert IGPUCB(unequal, rkhs_norm_bound=B).width > B
    assert AYGPUCB(unequal).rkhs_norm_bound_from_data
    with pytest.raises(TypeError, match="exact GP of BoTorch"):
        AYGPUCB(object(), rkhs_norm_bound=B)
    with pytest.raises(ValueError, match="X_pending"):
        acqf.set_X_pending(torch.zeros(2, 3, dtype=torch.float64))


@pytest.mark.parametrize("cls", [IGPUCB, AYGPUCB])
def test_no_training_points_give_the_width_at_t_0(cls):
    """t = 0: the prior mean plus the theorem's width at gamma_0 = 0 (IGP: eta = 2)
    times the prior std; B from the data is refused with a message (nothing to choose
    it from), as MartingaleMixtureUCB does. Also for the scalarized multi-output route."""
    empty = torch.zeros(0, 2, dtype=torch.float64)
    model = SingleTaskGP(empty, empty[:, :1], outcome_transform=None)
    Z = torch.rand(4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        prior_std = model.covar_module(Z, Z, diag=True).sqrt().numpy()
    log_term = 2 * math.log(1 / DELTA)
    width = B + (math.sqrt(3.0) if cls is IGPUCB else 1.0) * math.sqrt(log_term)
    values = cls(model, rkhs_norm_bound=B, delta=DELTA)(Z.unsqueeze(-2))
    np.testing.assert_allclose(values.detach().numpy(), width * prior_std, rtol=1e-10)
    with pytest.raises(ValueError, match="no training points to choose it from; pass rkhs"):
        cls(model, delta=DELTA)
    two = SingleTaskGP(empty, empty, outcome_transform=None)
    w = torch.tensor([0.6, 0.8], dtype=torch.float64)
    transform = ScalarizedPosteriorTransform(w, offset=1.5)
    scalarized = cls(two, rkhs_norm_bound=B, delta=DELTA, posterior_transform=transform)
    with torch.no_grad():
        variances = torch.stack([two.covar_module(Z, Z, diag=True)[i] for i in range(2)])
    expected = 1.5 + width * (w.square() @ variances).sqrt().numpy()
    np.testing.assert_allclose(scalarized(Z.unsqueeze(-2)).detach().numpy(), expected, rtol=1e-10)
    with pytest.raises(ValueError, match="no training points to choose it from"):
        cls(two, delta=DELTA, posterior_transform=transform)


@pytest.mark.parametrize("rkhs_norm_bound", [None, B])
def test_targets_whose_squares_overflow_are_refused_with_a_message(rkhs_norm_bound):
    """A 1e308 observation without an outcome transform: scipy's 'function value is NaN'
    (B from the data) or silent NaN values (B given) before; now the message of
    MartingaleMixtureUCB (the sum of squares overflows float64)."""
    X = torch.rand(8, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    Y = X.sum(-1, keepdim=True)
    Y[3] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(X, Y, outcome_transform=None)
        two = SingleTaskGP(X, torch.cat([Y, X[:, :1]], -1), outcome_transform=None)
    transform = ScalarizedPosteriorTransform(torch.ones(2, dtype=torch.float64))
    for cls in (IGPUCB, AYGPUCB):
        with pytest.raises(ValueError, match="train_Y is too large for float64: the sum of its"):
            cls(model, rkhs_norm_bound=rkhs_norm_bound)
        with pytest.raises(ValueError, match="train_Y is too large for float64"):
            cls(two, rkhs_norm_bound=rkhs_norm_bound, posterior_transform=transform)
