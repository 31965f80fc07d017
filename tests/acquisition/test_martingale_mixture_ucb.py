"""MartingaleMixtureUCB: values equal the bound, BoTorch's optimizers maximize it."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from gpytorch.kernels import MaternKernel, RBFKernel

from botorch_mtucb.acquisition import MartingaleMixtureUCB
from botorch_mtucb.confidence import MartingaleMixtureBound

DTYPES = (torch.float64, torch.float32)


def data(dtype, t=30, d=3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    y = torch.sin(4 * X[:, :1]) * torch.cos(3 * X[:, 1:2]) + X[:, 2:3] ** 2
    Y = y + 0.1 * torch.randn(t, 1, generator=generator, dtype=torch.float64)
    return X.to(dtype), Y.to(dtype)


def make_bound(dtype, kernel=None):
    kernel = kernel or RBFKernel()
    kernel.lengthscale = 0.3
    X, Y = data(dtype)
    return MartingaleMixtureBound(X, Y, kernel, 5.0, 0.1, 0.01)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alphas", [None, [0.003, 0.01, 0.03], 0.01])
def test_forward_is_the_upper_bound(dtype, alphas):
    bound = make_bound(dtype)
    acqf = MartingaleMixtureUCB(bound, alphas)
    X = torch.rand(5, 4, 1, 3, dtype=dtype)
    values = acqf(X)
    assert values.shape == (5, 4) and values.dtype == dtype
    assert torch.allclose(values, bound.upper(X.squeeze(-2), alphas))
    assert acqf(X[0, 0]).shape == (1,)  # a single 1 x d point gets a t-batch of 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alphas", [None, [0.003, 0.01, 0.03]])
def test_optimize_acqf_beats_random_search(dtype, alphas):
    torch.manual_seed(0)  # BoTorch draws from the global generator (Boltzmann sampling)
    bound = make_bound(dtype, MaternKernel(nu=2.5))
    acqf = MartingaleMixtureUCB(bound, alphas)
    box = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=dtype)
    # the exact bound is smooth in x (envelope theorem); the grid bound is a minimum of
    # five smooth functions, whose kinks can stop L-BFGS-B: more starting points
    restarts, raw = (8, 256) if alphas is None else (16, 1024)
    candidate, value = optimize_acqf(
        acqf, box, q=1, num_restarts=restarts, raw_samples=raw, options={"seed": 0}
    )
    assert candidate.dtype == dtype and ((candidate >= 0) & (candidate <= 1)).all()
    assert float(value) == pytest.approx(float(bound.upper(candidate, alphas)[0]), rel=1e-5)
    random_points = torch.rand(3000, 3, dtype=dtype, generator=torch.Generator().manual_seed(1))
    best_random = float(bound.upper(random_points, alphas).max())
    assert float(value) >= best_random - 1e-6 * abs(best_random)


@pytest.mark.parametrize("dtype", DTYPES)
def test_optimize_acqf_discrete_picks_the_largest_bound(dtype):
    bound = make_bound(dtype)
    acqf = MartingaleMixtureUCB(bound)
    choices = torch.rand(200, 3, dtype=dtype, generator=torch.Generator().manual_seed(2))
    candidate, value = optimize_acqf_discrete(acqf, q=1, choices=choices)
    values = bound.upper(choices)
    assert torch.equal(candidate[0], choices[values.argmax()])
    assert math.isclose(float(value), float(values.max()), rel_tol=1e-6)


def test_bad_input():
    bound = make_bound(torch.float64)
    with pytest.raises(TypeError, match="MartingaleMixtureBound"):
        MartingaleMixtureUCB(object())
    for alphas in (0.0, [-1.0], float("inf")):
        with pytest.raises(ValueError, match="alphas"):
            MartingaleMixtureUCB(bound, alphas)
    acqf = MartingaleMixtureUCB(bound)
    with pytest.raises(ValueError, match=r"X must have shape batch_shape x 1 x 3: q = 1"):
        acqf(torch.rand(4, 2, 3, dtype=torch.float64))


def test_the_bound_is_not_stored_as_a_model():
    bound = make_bound(torch.float64)
    acqf = MartingaleMixtureUCB(bound, [0.003, 0.01])
    assert acqf.bound is bound
    assert dict(acqf.named_children()) == {"bound": bound}
    assert not hasattr(acqf, "model")  # no non-Model under the name BoTorch reserves
    assert repr(acqf) == "MartingaleMixtureUCB(alphas=[0.003, 0.01], t=30)"


@pytest.mark.parametrize("alphas", [None, [0.003, 0.01, 0.03]])
def test_to_moves_without_rounding_the_bound_or_the_grid(alphas):
    bound = make_bound(torch.float64)
    acqf = MartingaleMixtureUCB(bound, alphas)
    X = torch.rand(7, 1, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    before = acqf(X)
    assert acqf.to(torch.float32) is acqf and acqf.to("cpu") is acqf
    assert bound.train_X.dtype == torch.float64
    if alphas is not None:
        assert acqf.alphas.dtype == torch.float64 and acqf.alphas.tolist() == alphas
    assert torch.equal(acqf(X), before)
    assert acqf(X.float()).dtype == torch.float32
