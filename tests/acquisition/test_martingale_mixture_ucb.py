"""MartingaleMixtureUCB: values equal the bound, BoTorch's optimizers maximize it."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.acquisition.objective import (
    ExpectationPosteriorTransform,
    ScalarizedPosteriorTransform,
)
from botorch.exceptions import UnsupportedError
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
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
    acqf = MartingaleMixtureUCB(bound, alphas=alphas)
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
    acqf = MartingaleMixtureUCB(bound, alphas=alphas)
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
    with pytest.raises(TypeError, match="or a MartingaleMixtureBound, got object"):
        MartingaleMixtureUCB(object())
    with pytest.raises(TypeError, match="bound must be a MartingaleMixtureBound"):
        MartingaleMixtureUCB.from_bound(object())
    with pytest.raises(ValueError, match="delta, noise_std must not be given"):
        MartingaleMixtureUCB(bound, delta=0.1, noise_std=0.2)
    with pytest.raises(ValueError, match="'DMM', 'AMM'"):
        MartingaleMixtureUCB(bound, alphas="CMM")
    for alphas in (0.0, [-1.0], float("inf")):
        with pytest.raises(ValueError, match="alphas"):
            MartingaleMixtureUCB(bound, alphas=alphas)
    # a grid bound keeps one t x t factor per alpha: the count is bounded first
    for alphas in (torch.logspace(-3, 0, 101), [0.01] * 101, torch.ones(10**7)):
        with pytest.raises(ValueError, match=r"at most MAX_ALPHAS = 100 values .*got 10"):
            MartingaleMixtureUCB(bound, alphas=alphas)
    assert MartingaleMixtureUCB(bound, alphas=torch.logspace(-3, 0, 100)).alphas.numel() == 100
    acqf = MartingaleMixtureUCB(bound)
    with pytest.raises(ValueError, match=r"X must have shape batch_shape x 1 x 3: q = 1"):
        acqf(torch.rand(4, 2, 3, dtype=torch.float64))


def test_the_bound_is_not_stored_as_a_model():
    bound = make_bound(torch.float64)
    acqf = MartingaleMixtureUCB.from_bound(bound, [0.003, 0.01])
    assert acqf.bound is bound
    assert dict(acqf.named_children()) == {"bound": bound}
    assert acqf.model is None  # no non-Model under the name BoTorch reserves
    box = torch.tensor([[0.0] * 3, [1.0] * 3], dtype=torch.float64)
    batch, _ = optimize_acqf(acqf, box, q=2, num_restarts=2, raw_samples=16, sequential=True)
    assert batch.shape == (2, 3) and acqf.X_pending is None  # BoTorch resets it
    assert repr(acqf) == "MartingaleMixtureUCB(alphas=[0.003, 0.01], t=30)"


@pytest.mark.parametrize("alphas", [None, [0.003, 0.01, 0.03]])
def test_to_moves_without_rounding_the_bound_or_the_grid(alphas):
    bound = make_bound(torch.float64)
    acqf = MartingaleMixtureUCB(bound, alphas=alphas)
    X = torch.rand(7, 1, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    before = acqf(X)
    assert acqf.to(torch.float32) is acqf and acqf.to("cpu") is acqf
    assert bound.train_X.dtype == torch.float64
    if alphas is not None:
        assert acqf.alphas.dtype == torch.float64 and acqf.alphas.tolist() == alphas
    assert torch.equal(acqf(X), before)
    assert acqf(X.float()).dtype == torch.float32


# ------------------------------------------------------------- from a BoTorch model
def fitted_gp(dtype, seed=0, t=15):
    """A SingleTaskGP with Standardize (default) and Normalize, in user units."""
    generator = torch.Generator().manual_seed(seed)
    X = 4.0 * torch.rand(t, 3, generator=generator, dtype=torch.float64) + 1.0
    Y = 200.0 + 30.0 * torch.sin(X[:, :1]) * torch.cos(X[:, 1:2]) + X[:, 2:3]
    gp = SingleTaskGP(X.to(dtype), Y.to(dtype), input_transform=Normalize(3))
    gp.covar_module.lengthscale = torch.tensor([0.4, 0.5, 0.6], dtype=dtype)
    gp.likelihood.noise = torch.tensor(1e-3, dtype=dtype)
    return gp.eval()


@pytest.mark.parametrize("alphas", [None, "DMM", "AMM"])
def test_from_a_model_equals_the_bound_of_the_model(dtype, alphas):
    gp = fitted_gp(dtype)
    acqf = MartingaleMixtureUCB(gp, delta=0.05, alphas=alphas)
    bound = MartingaleMixtureBound.from_model(gp, delta=0.05)
    assert acqf.model is gp and bound.rkhs_norm_bound == acqf.bound.rkhs_norm_bound
    s = bound.base_alpha
    expected_alphas = {None: None, "DMM": [m * s for m in (0.1, 0.3, 1, 3, 10)], "AMM": [s]}
    if alphas is not None:
        assert acqf.alphas.tolist() == pytest.approx(expected_alphas[alphas], rel=1e-12)
    X = 4.0 * torch.rand(7, 1, 3, dtype=dtype) + 1.0
    values = acqf(X)
    assert values.dtype == dtype and values.shape == (7,)
    torch.testing.assert_close(values, bound.upper(X.squeeze(-2), expected_alphas[alphas]))
    assert bool((values > gp.posterior(X).mean.reshape(-1) - 1e-3).all())  # user units


def test_posterior_transform_is_an_affine_map_of_the_objective():
    gp = fitted_gp(torch.float64)
    X = 4.0 * torch.rand(6, 1, 3, dtype=torch.float64) + 1.0
    plain = MartingaleMixtureUCB(gp)
    bound = plain.bound
    minimize = MartingaleMixtureUCB(
        gp, posterior_transform=ScalarizedPosteriorTransform(-torch.ones(1))
    )
    torch.testing.assert_close(minimize(X), -bound.lower(X.squeeze(-2)))  # UCB of -f
    scaled = ScalarizedPosteriorTransform(torch.full((1,), 2.0), offset=3.0)
    torch.testing.assert_close(
        MartingaleMixtureUCB(gp, posterior_transform=scaled)(X), 3.0 + 2.0 * plain(X)
    )
    with pytest.raises(UnsupportedError):
        MartingaleMixtureUCB(gp, posterior_transform=ExpectationPosteriorTransform(n_w=1))
    with pytest.raises(ValueError, match="1 weights"):
        MartingaleMixtureUCB(gp, posterior_transform=ScalarizedPosteriorTransform(torch.ones(2)))


def test_pending_points_follow_gp_bucb():
    gp = fitted_gp(torch.float64)
    X = 4.0 * torch.rand(6, 1, 3, dtype=torch.float64) + 1.0
    pending = 4.0 * torch.rand(2, 3, dtype=torch.float64) + 1.0
    acqf = MartingaleMixtureUCB(gp, X_pending=pending)
    torch.testing.assert_close(acqf(X), acqf.bound.upper(X.squeeze(-2), X_pending=pending))
    # Hallucinated points only shrink rho_alpha: never above the plain bound, up to the
    # exact search's round-off (relative 1e-8 here, where its best alpha sits at the
    # bottom of the search range; the values are in train_Y's units, about 200).
    plain = MartingaleMixtureUCB(gp)(X)
    assert bool((acqf(X) <= plain + 1e-7 * plain.abs()).all())
    acqf.set_X_pending(None)
    torch.testing.assert_close(acqf(X), MartingaleMixtureUCB(gp)(X))
    for bad, error in [(pending[:, :2], ValueError), (pending.unsqueeze(0), ValueError),
                       (torch.full((1, 3), float("nan"), dtype=torch.float64), ValueError),
                       ("x", TypeError)]:  # fmt: skip
        with pytest.raises(error, match="X_pending"):
            acqf.set_X_pending(bad)


def test_batches_of_distinct_points():
    torch.manual_seed(0)
    gp = fitted_gp(torch.float64)
    acqf = MartingaleMixtureUCB(gp, alphas="AMM")
    box = torch.tensor([[1.0] * 3, [5.0] * 3], dtype=torch.float64)
    batch, _ = optimize_acqf(acqf, box, q=3, num_restarts=2, raw_samples=32, sequential=True)
    assert batch.shape == (3, 3) and torch.cdist(batch, batch).add(torch.eye(3)).min() > 1e-3
    assert acqf.X_pending is None  # BoTorch restores the acquisition's pending points
    choices = (
        4.0 * torch.rand(40, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
        + 1.0
    )
    picked, _ = optimize_acqf_discrete(acqf, q=3, choices=choices)
    assert len({tuple(row.tolist()) for row in picked}) == 3
    first, _ = optimize_acqf_discrete(acqf, q=1, choices=choices)
    assert torch.equal(picked[0], first[0])  # the first point is the plain bound's maximizer
    with pytest.raises(ValueError, match="q = 1 is required"):
        optimize_acqf(acqf, box, q=3, num_restarts=2, raw_samples=32, sequential=False)
