"""``maximize=False`` (BoTorch's minimization switch) in every acquisition of the package:
the upper bound of ``-f`` (``-s(f)``), checked against an independent computation from
the model's posterior or the bound's lower bounds, composed with a posterior transform,
and minimized by BoTorch's optimizers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models import ModelListGP, SingleTaskGP
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from gpytorch.kernels import RBFKernel

from botorch_mtucb.acquisition import (
    AYGPUCB,
    IGPUCB,
    MartingaleMixtureUCB,
    ScalarizedMartingaleMixtureUCB,
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedLCB,
    TaskConditionedUCB,
)
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.scalarization import ChebyshevScalarization, LinearScalarization

WIDTH = 1.7


def _gp(dtype, outputs: int = 1, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(10, 2, generator=generator, dtype=torch.float64)
    Y = torch.cat([(3.0 * X).sin().sum(-1, keepdim=True), X.prod(-1, keepdim=True)], -1)
    model = SingleTaskGP(X.to(dtype), (5.0 + 2.0 * Y[:, :outputs]).to(dtype))
    model.covar_module.lengthscale = torch.full_like(model.covar_module.lengthscale, 0.3)
    return model.eval()


def _moments(model, X, weights=None, offset=0.0):
    """Mean and std (``batch x n``) from BoTorch's own posterior, NumPy."""
    posterior = model.posterior(X)
    mean = posterior.mean.squeeze(-2).detach().double().numpy()
    std = posterior.variance.squeeze(-2).detach().double().sqrt().numpy()
    if weights is not None:
        return mean @ weights + offset, np.sqrt(std**2 @ weights**2)
    return mean, std


@pytest.mark.parametrize("weight", [None, -2.0, 0.5])
def test_width_ucbs_bound_minus_f(dtype, weight):
    """``-(mu - width sigma)`` from the model's posterior; with ``T(y) = w y + c`` the
    upper bound of ``-T(f)``: ``-(w mu + c) + width |w| sigma``."""
    gp = _gp(dtype)
    X = torch.rand(6, 1, 2, dtype=dtype)
    transform = None
    w, c = 1.0, 0.0
    if weight is not None:
        w, c = weight, 0.3
        transform = ScalarizedPosteriorTransform(torch.tensor([w], dtype=dtype), offset=c)
    mean, std = _moments(gp, X)
    mean, std = mean[:, 0] * w + c, std[:, 0] * abs(w)
    rtol = 1e-10 if dtype == torch.float64 else 1e-5
    for acqf in (
        TaskConditionedUCB(gp, 0, WIDTH, transform, maximize=False),
        IGPUCB(gp, rkhs_norm_bound=1.0, posterior_transform=transform, maximize=False),
        AYGPUCB(gp, rkhs_norm_bound=1.0, posterior_transform=transform, maximize=False),
    ):
        width = float(acqf.width)
        expected = -(mean - width * std)
        np.testing.assert_allclose(acqf(X).detach().double().numpy(), expected, rtol=rtol)
        upper = type(acqf) is TaskConditionedUCB  # maximize=True: the bound of +T(f)
        if upper:
            plus = TaskConditionedUCB(gp, 0, WIDTH, transform)(X).detach().double().numpy()
            np.testing.assert_allclose(plus, mean + width * std, rtol=rtol)
    lower = TaskConditionedLCB(gp, 0, WIDTH, transform, maximize=False)(X)
    np.testing.assert_allclose(lower.detach().double().numpy(), -(mean + WIDTH * std), rtol=rtol)


def test_scalarized_ucbs_bound_minus_s_of_f(dtype):
    """``ScalarizedMultiTaskUCB``: ``-s(mu) + L width ||Gamma||^{1/2}``;
    ``ScalarizedObjectiveUCB``: ``-s(mu - width sigma)``; linear and Chebyshev, and with a
    transform of two weights (``s`` then acts on ``w^T f + c``)."""
    gp = _gp(dtype, outputs=2)
    model = ModelListGP(_gp(dtype, 1, seed=1), _gp(dtype, 1, seed=2))
    X = torch.rand(6, 1, 2, dtype=dtype)
    weights = np.array([0.3, 0.7])
    reference = np.array([-1.0, 0.5])
    scalarizations = {
        "linear": (LinearScalarization(torch.tensor(weights, dtype=dtype)), lambda y: y @ weights),
        "chebyshev": (
            ChebyshevScalarization(
                torch.tensor(weights, dtype=dtype), torch.tensor(reference, dtype=dtype)
            ),
            lambda y: (weights * (y - reference)).min(-1),
        ),
    }
    rtol = 1e-9 if dtype == torch.float64 else 1e-4
    for m in (gp, model):
        mean, std = _moments(m, X)  # independent outputs: Gamma = diag(std^2)
        for scalarization, s in scalarizations.values():
            L = float(scalarization.lipschitz_constant)
            acqf = ScalarizedMultiTaskUCB(m, scalarization, WIDTH, maximize=False)
            expected = -s(mean) + L * WIDTH * std.max(-1)
            np.testing.assert_allclose(acqf(X).detach().double().numpy(), expected, rtol=rtol)
            acqf = ScalarizedObjectiveUCB(m, scalarization, WIDTH, maximize=False)
            expected = -s(mean - WIDTH * std)
            np.testing.assert_allclose(acqf(X).detach().double().numpy(), expected, rtol=rtol)
    w = np.array([-1.0, 2.0])
    transform = ScalarizedPosteriorTransform(torch.tensor(w, dtype=dtype), offset=0.5)
    mean, std = _moments(gp, X, w, 0.5)
    for cls in (ScalarizedMultiTaskUCB, ScalarizedObjectiveUCB):
        value = cls(gp, None, WIDTH, transform, maximize=False)(X)
        np.testing.assert_allclose(value.detach().double().numpy(), -mean + WIDTH * std, rtol=rtol)


@pytest.mark.parametrize("weight", [None, -1.5, 2.0])
def test_martingale_mixture_bounds_minus_f(dtype, weight):
    """``-l_t(x)`` of the bound; with ``T(y) = w y + c``: ``-(c + w l_t)`` for ``w > 0``
    and ``-(c + w u_t)`` for ``w < 0``."""
    generator = torch.Generator().manual_seed(3)
    train_X = torch.rand(12, 2, generator=generator, dtype=torch.float64)
    train_Y = (4.0 * train_X).sin().sum(-1, keepdim=True)
    bound = MartingaleMixtureBound(train_X, train_Y, RBFKernel(), 5.0, 0.1, 0.01)
    gp = SingleTaskGP(train_X, train_Y)
    X = torch.rand(5, 1, 2, dtype=dtype)
    rtol = 1e-10 if dtype == torch.float64 else 1e-5
    if weight is None:
        acqf = MartingaleMixtureUCB(bound, maximize=False)
        expected = -bound.lower(X.squeeze(-2).double())
        np.testing.assert_allclose(acqf(X).double().numpy(), expected.numpy(), rtol=rtol)
        assert acqf(X).dtype == dtype
        return
    transform = ScalarizedPosteriorTransform(torch.tensor([weight], dtype=torch.float64), 0.25)
    acqf = MartingaleMixtureUCB(gp, delta=0.05, posterior_transform=transform, maximize=False)
    rows = X.squeeze(-2).double()
    side = acqf.bound.lower if weight > 0 else acqf.bound.upper
    expected = -(0.25 + weight * side(rows))
    np.testing.assert_allclose(acqf(X).double().numpy(), expected.numpy(), rtol=rtol)
    plus = MartingaleMixtureUCB(gp, delta=0.05, posterior_transform=transform)(X)
    side = acqf.bound.upper if weight > 0 else acqf.bound.lower
    np.testing.assert_allclose(
        plus.double().numpy(), (0.25 + weight * side(rows)).numpy(), rtol=rtol
    )


def test_scalarized_martingale_mixture_bounds_minus_s_of_f(dtype):
    """Linear: ``-l_t(x, w)``; Chebyshev: ``max_i w_i (z_i - l_t(x, i))`` (the lattice does
    not enter); both are at least ``-s(f)`` for a function that generated the data."""
    generator = torch.Generator().manual_seed(4)
    train_X = torch.rand(10, 2, generator=generator, dtype=torch.float64)

    def f(X):
        return torch.stack([(3.0 * X[..., 0]).sin(), X[..., 1].cos()], -1)

    noise = 0.05 * torch.randn(10, 2, generator=generator, dtype=torch.float64)
    B = torch.tensor([[1.0, 0.3], [0.3, 1.0]], dtype=torch.float64)
    bound = MultiTaskMartingaleMixtureBound(
        train_X, f(train_X) + noise, RBFKernel(), B, 20.0, 0.1, 0.05
    )
    w = torch.tensor([0.4, 0.6], dtype=torch.float64)
    z = torch.tensor([-2.0, -1.0], dtype=torch.float64)
    X = torch.rand(7, 1, 2, dtype=dtype)
    rows = X.squeeze(-2).double()
    rtol = 1e-10 if dtype == torch.float64 else 1e-5
    linear = ScalarizedMartingaleMixtureUCB(bound, w, maximize=False)(X)
    np.testing.assert_allclose(
        linear.double().numpy(), -bound.lower(rows, weights=w).numpy(), rtol=rtol
    )
    chebyshev = ChebyshevScalarization(w, z)
    lower = bound.lower(rows)  # 7 x 2
    expected = (w * (z - lower)).amax(-1)
    for lattice in (1, 3):
        value = ScalarizedMartingaleMixtureUCB(
            bound, chebyshev, chebyshev_lattice=lattice, maximize=False
        )(X)
        np.testing.assert_allclose(value.double().numpy(), expected.numpy(), rtol=rtol)
    truth = -chebyshev(f(rows))
    assert bool((expected >= truth - 1e-9).all())  # holds for the generating function here


def test_optimizers_minimize(dtype):
    """With ``maximize=False`` BoTorch's optimizers find the minimizer of ``f`` (dense,
    nearly noise-free data: the bound is tight)."""
    X = torch.linspace(0.0, 1.0, 25, dtype=torch.float64).unsqueeze(-1)
    Y = (X - 0.3).square() * 4.0 + 1.0
    gp = SingleTaskGP(X.to(dtype), Y.to(dtype), train_Yvar=torch.full_like(Y, 1e-6).to(dtype))
    gp.covar_module.lengthscale = torch.full_like(gp.covar_module.lengthscale, 0.3)
    grid = torch.linspace(0.0, 1.0, 11, dtype=dtype).unsqueeze(-1)
    argmin = grid[(grid - 0.3).abs().argmin()]
    bounds = torch.tensor([[0.0], [1.0]], dtype=dtype)
    for acqf in (
        IGPUCB(gp, rkhs_norm_bound=1.0, maximize=False),
        TaskConditionedUCB(gp, 0, 2.0, maximize=False),
        MartingaleMixtureUCB(gp, rkhs_norm_bound=10.0, maximize=False),
    ):
        choice, _ = optimize_acqf_discrete(acqf, q=1, choices=grid)
        torch.testing.assert_close(choice.reshape(-1), argmin)
        x, _ = optimize_acqf(acqf, bounds, q=1, num_restarts=2, raw_samples=16)
        assert abs(float(x) - 0.3) < 0.02, type(acqf).__name__


def test_maximize_must_be_a_bool():
    gp = _gp(torch.float64)
    for bad in ("no", 0, None):
        with pytest.raises(TypeError, match="maximize must be True or False"):
            TaskConditionedUCB(gp, 0, 1.0, maximize=bad)
        with pytest.raises(TypeError, match="maximize must be True or False"):
            MartingaleMixtureUCB(gp, maximize=bad)
