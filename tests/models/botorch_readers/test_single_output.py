"""single_output_data / output_data against the transforms computed by hand: min-max
scaling of the inputs, standardized targets (Bessel-corrected std), noise divided by the
std squared, the constant prior mean, in train and eval mode; one entry per output of a
batched multi-output SingleTaskGP and of a ModelListGP; the refusals."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from botorch.models import ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from botorch.models.transforms.input import FilterFeatures, InputPerturbation
from botorch.models.transforms.outcome import ChainedOutcomeTransform, Log
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import _GaussianLikelihoodBase
from gpytorch.likelihoods.noise_models import HeteroskedasticNoise
from gpytorch.means import LinearMean

from botorch_mtucb.models.botorch_readers import output_data, single_output_data


def raw_data(dtype, t=12, m=1, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = 10.0 * torch.rand(t, 2, generator=generator, dtype=torch.float64) - 3.0
    columns = [
        40.0 + 15.0 * (k + 1) * torch.sin(X[:, :1] + k) * torch.cos(X[:, 1:]) for k in range(m)
    ]
    return X.to(dtype), torch.cat(columns, -1).to(dtype)


def model_with_transforms(dtype, fixed_noise=False, chained=False):
    X, Y = raw_data(dtype)
    kernel = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=2)).to(dtype)
    kernel.base_kernel.lengthscale = torch.tensor([0.3, 0.5], dtype=dtype)
    kernel.outputscale = torch.tensor(2.0, dtype=dtype)
    outcome = Standardize(m=1)
    if chained:
        outcome = ChainedOutcomeTransform(first=Standardize(m=1), second=Standardize(m=1))
    Yvar = 0.5 + torch.arange(len(Y), dtype=dtype).unsqueeze(-1) / 10.0 if fixed_noise else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(
            X, Y, Yvar, covar_module=kernel, input_transform=Normalize(2), outcome_transform=outcome
        )
    model.mean_module.constant = torch.tensor(0.2, dtype=dtype)
    if not fixed_noise:
        model.likelihood.noise = 0.01
    return model, X, Y, Yvar


@pytest.mark.parametrize("fixed_noise", [False, True])
@pytest.mark.parametrize("mode", ["train", "eval", "eval-then-train"])
def test_reads_the_transformed_space(dtype, fixed_noise, mode):
    model, X, Y, Yvar = model_with_transforms(dtype, fixed_noise)
    if mode.startswith("eval"):
        model.eval()
    if mode.endswith("train"):
        model.train()
    data = single_output_data(model)
    X64, Y64 = X.double().numpy(), Y.double().numpy()[:, 0]
    low, high = X64.min(0), X64.max(0)
    mean, std = Y64.mean(), Y64.std(ddof=1)
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == torch.float64 else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(data.train_X.double().numpy(), (X64 - low) / (high - low), **tol)
    np.testing.assert_allclose(data.train_Y.double().numpy()[:, 0], (Y64 - mean) / std, **tol)
    assert data.prior_mean == pytest.approx(0.2, rel=1e-6)
    np.testing.assert_allclose(
        data.centered_Y.double().numpy()[:, 0], (Y64 - mean) / std - 0.2, **tol
    )
    assert data.outcome_shift == pytest.approx(mean, rel=1e-6)
    assert data.outcome_scale == pytest.approx(std, rel=1e-6)
    expected_noise = Yvar.double().numpy()[:, 0] / std**2 if fixed_noise else np.full(12, 0.01)
    np.testing.assert_allclose(data.noise_variance.double().numpy(), expected_noise, rtol=1e-5)
    assert data.fixed_noise is fixed_noise and data.input_dim == 2 and data.num_observations == 12
    assert data.kernel is model.covar_module and data.model_name == "SingleTaskGP"
    torch.testing.assert_close(data.untransform(data.train_Y), Y, rtol=1e-5, atol=1e-4)
    assert model.training is (mode != "eval")  # the model's mode is left as it is
    # the Gram matrix is the kernel on the transformed inputs: 2 x Matern-5/2 by hand
    Xt = (X64 - low) / (high - low)
    r = np.sqrt((((Xt[:, None, :] - Xt[None, :, :]) / np.array([0.3, 0.5])) ** 2).sum(-1))
    matern = 2.0 * (1 + math.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-math.sqrt(5) * r)
    np.testing.assert_allclose(data.gram().double().numpy(), matern, **tol)


def test_chained_standardize_composes_the_affine_maps():
    model, _, Y, _ = model_with_transforms(torch.float64, chained=True)
    data = single_output_data(model)
    torch.testing.assert_close(data.untransform(data.train_Y), Y, rtol=1e-12, atol=1e-10)


def test_largest_noise_variance_with_and_without_training_data():
    model, _, Y, Yvar = model_with_transforms(torch.float64, fixed_noise=True)
    std = float(Y.std())
    data = single_output_data(model)
    assert data.learned_noise_variance is None
    assert data.largest_noise_variance() == pytest.approx(float(Yvar.max()) / std**2, rel=1e-10)
    model, X, Y, _ = model_with_transforms(torch.float64)  # learned noise 0.01
    assert single_output_data(model).largest_noise_variance() == pytest.approx(0.01, rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BoTorch's scaling checks of the data
        empty = SingleTaskGP(X[:0], Y[:0], outcome_transform=None)
        fixed = SingleTaskGP(X[:0], Y[:0], torch.ones(0, 1, dtype=X.dtype), outcome_transform=None)
        two = SingleTaskGP(X, torch.cat([Y, -Y], -1), outcome_transform=None)
    empty.likelihood.noise = 0.03
    data = single_output_data(empty)
    assert data.num_observations == 0 and data.noise_variance.numel() == 0
    assert data.largest_noise_variance() == pytest.approx(0.03, rel=1e-6)
    with pytest.raises(ValueError, match="fixed noise .* no training data, so no noise level"):
        single_output_data(fixed).largest_noise_variance()
    two.likelihood.noise = torch.tensor([[0.02], [0.05]], dtype=X.dtype)
    levels = [d.learned_noise_variance for d in output_data(two)]
    assert levels == pytest.approx([0.02, 0.05], rel=1e-6)


def test_homoskedastic_noise_variance():
    model, *_ = model_with_transforms(torch.float64)
    assert single_output_data(model).homoskedastic_noise_variance() == pytest.approx(0.01)
    model, *_ = model_with_transforms(torch.float64, fixed_noise=True)
    with pytest.raises(ValueError, match="heteroskedastic noise"):
        single_output_data(model).homoskedastic_noise_variance()


def test_output_data_of_batched_and_listed_models(dtype):
    X, Y = raw_data(dtype, m=3)
    batched = SingleTaskGP(X / 10.0, Y, train_Yvar=torch.full_like(Y, 0.3))
    batched.covar_module.lengthscale = torch.tensor(
        [[[0.2, 0.3]], [[0.4, 0.5]], [[0.6, 0.7]]], dtype=dtype
    )
    single = SingleTaskGP(X / 10.0, Y[:, :1])
    outputs = output_data(ModelListGP(batched, single))
    assert len(outputs) == 4 and [d.output_index for d in outputs] == [0, 1, 2, None]
    Xs = X.double().numpy() / 10.0
    for i, data in enumerate(outputs[:3]):
        y = Y.double().numpy()[:, i]
        np.testing.assert_allclose(
            data.train_Y.double().numpy()[:, 0],
            (y - y.mean()) / y.std(ddof=1),
            rtol=1e-5,
            atol=1e-5,
        )
        np.testing.assert_allclose(
            data.noise_variance.double().numpy(), 0.3 / y.std(ddof=1) ** 2, rtol=1e-5
        )
        scale = np.array([[0.2, 0.3], [0.4, 0.5], [0.6, 0.7]])[i]
        rbf = np.exp(-0.5 * (((Xs[:, None] - Xs[None]) / scale) ** 2).sum(-1))
        np.testing.assert_allclose(data.gram().double().numpy(), rbf, rtol=1e-5, atol=1e-6)
    assert len(output_data(single)) == 1


def _bad_models():
    X, Y = raw_data(torch.float64, t=8)
    X = X / 10.0
    noise_model = SingleTaskGP(X, torch.full_like(Y, -4.0))
    heteroskedastic = _GaussianLikelihoodBase(noise_covar=HeteroskedasticNoise(noise_model))
    tasks = torch.cat([X, torch.randint(0, 2, (8, 1)).double()], -1)
    return [
        (object(), TypeError, "got object"),
        (ModelListGP(SingleTaskGP(X, Y)), TypeError, "ModelListGP"),
        (MultiTaskGP(tasks, Y, task_feature=-1), TypeError, "multi-task"),
        (SingleTaskGP(X.expand(3, 8, 2), Y.expand(3, 8, 1)), ValueError, "batched"),
        (SingleTaskGP(X, torch.cat([Y, Y], -1)), ValueError, "one output"),
        (SingleTaskGP(X, Y, outcome_transform=Log()), ValueError, "not an affine map"),
        (SingleTaskGP(X, Y, likelihood=heteroskedastic), TypeError, "HeteroskedasticNoise"),
        (SingleTaskGP(X, Y, mean_module=LinearMean(2)), TypeError, "mean_module"),
        (
            SingleTaskGP(X, Y, input_transform=InputPerturbation(torch.zeros(3, 2))),
            ValueError,
            "one-to-many",
        ),
    ]


def test_bad_models_name_the_type_and_what_is_accepted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = _bad_models()
    for model, error, match in cases:
        with pytest.raises(error, match=match):
            single_output_data(model)
    X, Y = raw_data(torch.float64, t=8)
    filtered = SingleTaskGP(X / 10, Y, input_transform=FilterFeatures(torch.tensor([0])))
    data = single_output_data(filtered)  # read; the bound refuses the changed dimension
    assert data.train_X.shape == (8, 1) and data.input_dim == 2
    assert isinstance(
        single_output_data(SingleTaskGP(X / 10, Y, covar_module=RBFKernel())).kernel, RBFKernel
    )
