"""MartingaleMixtureBound.from_model on SingleTaskGPs with Normalize and Standardize:
the bound equals paper 002's dense formula (eq. (12), NumPy) on the data transformed by
hand, mapped back with y = mean + std * y_tilde; a negative scale swaps the bounds;
append_observations in the user's units; gradients through the input transform; the
noise and norm bound read from the model; the refusals."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from botorch.models.transforms.input import FilterFeatures
from botorch.models.transforms.outcome import Log
from gpytorch.kernels import MaternKernel, ScaleKernel
from martingale_oracles import DELTA, dense_dual_objective, dense_radius_squared, gram

from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound

B, NOISE, PRIOR_MEAN = 4.0, 0.01, 0.2


def user_data(dtype, t=15, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = 10.0 * torch.rand(t, 2, generator=generator, dtype=torch.float64) - 3.0
    Y = 40.0 + 15.0 * torch.sin(X[:, :1] / 2) * torch.cos(X[:, 1:] / 3)
    test_X = 10.0 * torch.rand(6, 2, generator=generator, dtype=torch.float64) - 3.0
    return X.to(dtype), Y.to(dtype), test_X.to(dtype)


def make_model(X, Y, fixed_noise=False):
    dtype = X.dtype
    kernel = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=2)).to(dtype)
    kernel.base_kernel.lengthscale = torch.tensor([0.3, 0.5], dtype=dtype)
    kernel.outputscale = torch.tensor(1.5, dtype=dtype)
    Yvar = torch.full_like(Y, 0.02) if fixed_noise else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(X, Y, Yvar, covar_module=kernel, input_transform=Normalize(2))
    model.mean_module.constant = torch.tensor(PRIOR_MEAN, dtype=dtype)
    if not fixed_noise:
        model.likelihood.noise = torch.tensor(NOISE, dtype=dtype)
    return model


def by_hand(X, Y):
    """The transforms of Normalize and Standardize, computed with NumPy."""
    X64, Y64 = X.double().numpy(), Y.double().numpy()[:, 0]
    low, high = X64.min(0), X64.max(0)
    mean, std = Y64.mean(), Y64.std(ddof=1)

    def inputs(Z):
        return torch.as_tensor((Z.double().numpy() - low) / (high - low))

    return inputs, (Y64 - mean) / std - PRIOR_MEAN, mean, std


@pytest.mark.parametrize("mode", ["eval", "train"])
@pytest.mark.parametrize("fixed_noise", [False, True])
def test_bound_equals_the_dense_formula_on_the_transformed_data(dtype, mode, fixed_noise):
    X, Y, test_X = user_data(dtype)
    model = make_model(X, Y, fixed_noise)
    model.train(mode == "train")
    bound = MartingaleMixtureBound.from_model(model, B, None, DELTA)
    inputs, y, mean, std = by_hand(X, Y)
    sigma = math.sqrt(0.02 / std**2) if fixed_noise else math.sqrt(NOISE)
    assert bound.noise_std == pytest.approx(sigma, rel=1e-5)
    assert bound.outcome_shift == pytest.approx(mean + std * PRIOR_MEAN, rel=1e-6)
    assert bound.outcome_scale == pytest.approx(std, rel=1e-6)
    kernel = model.covar_module
    K = gram(kernel, inputs(X), inputs(X))
    R2 = dense_radius_squared(K, y, sigma, 1.0, DELTA)
    grid = [0.3 * sigma**2, sigma**2, 3 * sigma**2]
    upper, lower = bound.upper(test_X, alphas=grid), bound.lower(test_X, alphas=grid)
    assert upper.dtype == dtype
    tol = 1e-8 if dtype == torch.float64 else 1e-4
    for i in range(len(test_X)):
        kx = gram(kernel, inputs(X), inputs(test_X[i : i + 1]))[:, 0]
        kxx = gram(kernel, inputs(test_X[i : i + 1]), inputs(test_X[i : i + 1]))[0, 0]
        ups = [dense_dual_objective(K, kx, kxx, y, R2, B, a, 1.0) for a in grid]
        lows = [dense_dual_objective(K, kx, kxx, y, R2, B, a, -1.0) for a in grid]
        expected_upper = mean + std * (PRIOR_MEAN + min(ups))
        expected_lower = mean + std * (PRIOR_MEAN + max(lows))
        assert float(upper[i]) == pytest.approx(expected_upper, rel=tol)
        assert float(lower[i]) == pytest.approx(expected_lower, rel=tol)
    # the exact bound: the same bound built by hand on the transformed data, mapped back
    direct = MartingaleMixtureBound(
        inputs(X), torch.as_tensor(y).unsqueeze(-1), kernel, B, sigma, DELTA
    )
    expected = mean + std * (PRIOR_MEAN + direct.upper(inputs(test_X)))
    torch.testing.assert_close(bound.upper(test_X).double(), expected, rtol=tol, atol=tol)


def test_a_negative_scale_swaps_upper_and_lower():
    X, Y, test_X = user_data(torch.float64)
    kernel = make_model(X, Y).covar_module
    plain = MartingaleMixtureBound(X / 10, Y - 40, kernel, 30.0, 0.1, DELTA)
    flipped = MartingaleMixtureBound(
        X / 10, Y - 40, kernel, 30.0, 0.1, DELTA, outcome_shift=1.0, outcome_scale=-2.0
    )
    Z = test_X / 10
    torch.testing.assert_close(flipped.upper(Z), 1.0 - 2.0 * plain.lower(Z))
    torch.testing.assert_close(
        flipped.lower(Z, alphas=0.01), 1.0 - 2.0 * plain.upper(Z, alphas=0.01)
    )
    assert bool((flipped.lower(Z) <= flipped.upper(Z)).all())


def test_append_observations_in_user_units():
    X, Y, test_X = user_data(torch.float64, t=20)
    model = make_model(X[:12], Y[:12])
    bound = MartingaleMixtureBound.from_model(model, B, None, DELTA)
    bound.append_observations(X[12:], Y[12:])
    shift, scale = bound.outcome_shift, bound.outcome_scale
    transform = model.input_transform
    transform.eval()
    with torch.no_grad():
        direct = MartingaleMixtureBound(
            transform(X), (Y - shift) / scale, model.covar_module, B, bound.noise_std, DELTA
        )
        expected = shift + scale * direct.upper(transform(test_X), alphas=0.01)
    torch.testing.assert_close(bound.upper(test_X, alphas=0.01), expected, rtol=1e-10, atol=1e-10)


def test_gradients_flow_through_the_input_transform():
    X, Y, test_X = user_data(torch.float64)
    bound = MartingaleMixtureBound.from_model(make_model(X, Y), B, None, DELTA)
    point = test_X[:1].clone().requires_grad_(True)
    bound.upper(point, alphas=NOISE).sum().backward()
    step = 1e-6
    for j in range(2):
        shift = torch.zeros(1, 2, dtype=torch.float64)
        shift[0, j] = step
        numeric = (bound.upper(point + shift, NOISE) - bound.upper(point - shift, NOISE)) / (
            2 * step
        )
        assert float(point.grad[0, j]) == pytest.approx(float(numeric), rel=1e-5, abs=1e-7)


def test_noise_and_norm_bound_from_the_model():
    X, Y, _ = user_data(torch.float64)
    model = make_model(X, Y)
    chosen = MartingaleMixtureBound.from_model(model, delta=DELTA)
    assert chosen.rkhs_norm_bound_from_data
    inputs, y, *_ = by_hand(X, Y)
    K = torch.as_tensor(gram(model.covar_module, inputs(X), inputs(X)))
    expected = choose_rkhs_norm_bound(K, torch.as_tensor(y), math.sqrt(NOISE), DELTA)
    assert chosen.rkhs_norm_bound == pytest.approx(expected, rel=1e-8)
    explicit = MartingaleMixtureBound.from_model(model, 2.0 * expected, 0.3, DELTA)
    assert not explicit.rkhs_norm_bound_from_data and explicit.noise_std == 0.3
    with pytest.raises(EmptyConfidenceSetError):  # an explicit B keeps the theorem's test
        MartingaleMixtureBound.from_model(model, 1e-3, None, DELTA)


def test_refusals():
    X, Y, _ = user_data(torch.float64)
    with pytest.raises(TypeError, match="exact GP of BoTorch"):
        MartingaleMixtureBound.from_model(object())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logged = SingleTaskGP(X / 10, Y, outcome_transform=Log())
        filtered = SingleTaskGP(X / 10, Y, input_transform=FilterFeatures(torch.tensor([0])))
        two = SingleTaskGP(X / 10, torch.cat([Y, Y], -1), outcome_transform=Standardize(m=2))
    with pytest.raises(ValueError, match="not an affine map"):
        MartingaleMixtureBound.from_model(logged)
    with pytest.raises(ValueError, match="keeps the number of columns"):
        MartingaleMixtureBound.from_model(filtered)
    with pytest.raises(ValueError, match="one output"):
        MartingaleMixtureBound.from_model(two)
    with pytest.raises(ValueError, match="outcome_scale must be non-zero"):
        MartingaleMixtureBound(X, Y, make_model(X, Y).covar_module, B, 1.0, DELTA, outcome_scale=0)
    with pytest.raises(TypeError, match="input_transform"):
        MartingaleMixtureBound(
            X, Y, make_model(X, Y).covar_module, B, 1.0, DELTA, input_transform=1
        )


def test_choosing_b_evaluates_the_kernel_on_the_training_set_once(monkeypatch):
    # One Gram matrix and one eigen-decomposition for the norm choice, the emptiness
    # check and the exact bound's spectrum; the values are those of the route that chose
    # B from its own Gram matrix first (choose_rkhs_norm_bound) and built the bound after.
    X, Y, test_X = user_data(torch.float64, t=30)
    model = make_model(X, Y)
    inputs, y, *_ = by_hand(X, Y)
    K = torch.as_tensor(gram(model.covar_module, inputs(X), inputs(X)))
    B_old = choose_rkhs_norm_bound(K, torch.as_tensor(y), math.sqrt(NOISE), DELTA)
    old = MartingaleMixtureBound.from_model(model, rkhs_norm_bound=B_old, delta=DELTA)
    kernel_class = type(model.covar_module.base_kernel)
    calls, forward = [], kernel_class.forward

    def counted(self, x1, x2, *args, **kwargs):
        if x1.shape[-2] == x2.shape[-2] == 30:
            calls.append(x1.shape)
        return forward(self, x1, x2, *args, **kwargs)

    eighs, eigh = [], torch.linalg.eigh

    def counted_eigh(*args, **kwargs):
        eighs.append(args[0].shape)
        return eigh(*args, **kwargs)

    monkeypatch.setattr(kernel_class, "forward", counted)
    monkeypatch.setattr(torch.linalg, "eigh", counted_eigh)
    bound = MartingaleMixtureBound.from_model(model, delta=DELTA)
    upper, lower = bound.upper(test_X), bound.lower(test_X)
    assert len(calls) == 1 and len(eighs) == 1  # build and exact bounds together
    assert bound.rkhs_norm_bound == pytest.approx(B_old, rel=1e-12)
    torch.testing.assert_close(upper, old.upper(test_X), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(lower, old.lower(test_X), rtol=1e-12, atol=1e-12)


def test_a_model_without_training_data():
    # B cannot be chosen from no data: refused, saying what to pass; with an explicit B
    # the bound is the prior's, B sqrt(k(x, x)) in the user's units (exact bound).
    from botorch_mtucb.acquisition import MartingaleMixtureUCB

    X, Y, test_X = user_data(torch.float64)
    model = SingleTaskGP(X[:0] / 10, Y[:0], outcome_transform=None)
    with pytest.raises(ValueError, match="no training points.*pass rkhs_norm_bound"):
        MartingaleMixtureUCB(model)
    with pytest.raises(ValueError, match="no training points.*pass rkhs_norm_bound"):
        MartingaleMixtureBound.from_model(model)
    acqf = MartingaleMixtureUCB(model, rkhs_norm_bound=B)
    assert acqf.bound.num_observations == 0
    prior = model.covar_module(test_X / 10, diag=True).detach()
    constant = float(model.mean_module.constant)
    torch.testing.assert_close(acqf(test_X.unsqueeze(-2) / 10), constant + B * prior.sqrt())
    noise = math.sqrt(float(model.likelihood.noise))  # the learned noise, without data
    assert acqf.bound.noise_std == pytest.approx(noise, rel=1e-12)
    fixed = SingleTaskGP(
        X[:0], Y[:0], torch.ones(0, 1, dtype=torch.float64), outcome_transform=None
    )
    with pytest.raises(ValueError, match="fixed noise.*no training data.*pass noise_std"):
        MartingaleMixtureBound.from_model(fixed, rkhs_norm_bound=B)
    assert MartingaleMixtureBound.from_model(fixed, B, 0.1).upper(test_X).shape == (6,)


def test_non_finite_training_data_are_named():
    from botorch_mtucb.acquisition import MartingaleMixtureUCB

    X, Y, _ = user_data(torch.float64)
    Y[3, 0] = math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(X / 10, Y, outcome_transform=None)
    with pytest.raises(ValueError, match="SingleTaskGP's train_Y .* must not contain NaN or inf"):
        MartingaleMixtureUCB(model)
    with pytest.raises(ValueError, match="train_Y must not contain NaN or inf, got 1 non-finite"):
        MartingaleMixtureBound(X, Y, make_model(X[:3], Y[:3]).covar_module, B, 0.1, DELTA)
    with pytest.raises(ValueError, match="train_Y must not contain NaN or inf"):
        choose_rkhs_norm_bound(torch.eye(15, dtype=torch.float64), Y, 0.1, DELTA)


def test_two_dimensional_alphas_are_refused():
    X, Y, test_X = user_data(torch.float64)
    bound = MartingaleMixtureBound.from_model(make_model(X, Y), delta=DELTA)
    grid = torch.tensor([[1e-3, 1e-2], [1e-1, 1.0]], dtype=torch.float64)
    for method in (bound.upper, bound.lower):
        with pytest.raises(ValueError, match=r"alphas must be a number or a 1-d grid"):
            method(test_X, alphas=grid)
    with pytest.raises(ValueError, match=r"alphas must be a number or a 1-d grid"):
        bound.radius_tilde_squared(grid)
