"""``VectorValuedGP.from_model``: the converted model's posterior equals the BoTorch
model's (its constant means and per-task noise carried over), mean and full covariance,
in the user's units, for hand-set and for fitted models; the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from botorch.exceptions.warnings import BotorchWarning, OptimizationWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import KroneckerMultiTaskGP, ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from botorch.posteriors import GPyTorchPosterior
from botorch_models import CASE_NAMES, build_botorch_case, np64
from gpytorch.distributions import MultitaskMultivariateNormal
from gpytorch.means import LinearMean
from gpytorch.mlls import ExactMarginalLogLikelihood, SumMarginalLogLikelihood

from botorch_mtucb.confidence import information_gain, mt_kb_width
from botorch_mtucb.models import VectorValuedGP

EXACT = tuple(name for name in CASE_NAMES if name != "kronecker_rank1")
TOL = {torch.float64: dict(rtol=1e-8, atol=1e-8), torch.float32: dict(rtol=2e-3, atol=2e-3)}


def _test_X(case, dtype):
    g = torch.Generator().manual_seed(7)
    return (5.0 * torch.rand(4, 2, generator=g, dtype=torch.float64)).to(dtype)


def _interleaved(distribution, q: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean ``q x n`` and covariance with point ``a``, task ``i`` at ``a n + i``."""
    mean = np64(distribution.mean).reshape(q, n)
    covariance = np64(distribution.covariance_matrix)
    if isinstance(distribution, MultitaskMultivariateNormal) and not distribution._interleaved:
        covariance = covariance.reshape(n, q, n, q).transpose(1, 0, 3, 2).reshape(q * n, q * n)
    return mean, covariance


def _outcome_map(model, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(shift, scale)`` per task of the model's Standardize (written out by hand)."""
    if isinstance(model, ModelListGP):
        maps = [_outcome_map(m, m.num_outputs) for m in model.models]
        return np.concatenate([a for a, _ in maps]), np.concatenate([b for _, b in maps])
    transform = getattr(model, "outcome_transform", None)
    if transform is None:
        return np.zeros(n), np.ones(n)
    means, stdvs = np64(transform.means).reshape(-1), np64(transform.stdvs).reshape(-1)
    return np.broadcast_to(means, (n,)).copy(), np.broadcast_to(stdvs, (n,)).copy()


def _botorch_posterior(model, X, n):
    """BoTorch's own posterior in the user's units (the full joint covariance)."""
    q = X.shape[0]
    if isinstance(model, ModelListGP):
        blocks = [_interleaved(m.posterior(X).distribution, q, 1) for m in model.models]
        mean = np.concatenate([m for m, _ in blocks], axis=-1)
        covariance = np.zeros((q * n, q * n))
        for i, (_, C) in enumerate(blocks):
            covariance[i::n, i::n] = C
        return mean, covariance
    if isinstance(model, KroneckerMultiTaskGP):  # its posterior keeps variances only
        model.eval()
        with torch.no_grad():
            latent = model(model.transform_inputs(X))
        posterior = model.outcome_transform.untransform_posterior(GPyTorchPosterior(latent))
        return _interleaved(posterior.distribution, q, n)
    return _interleaved(model.posterior(X).distribution, q, n)


def _converted_posterior(model, converted, X, n):
    """The converted posterior (the model's outcome space) mapped back by hand."""
    q = X.shape[0]
    mean, covariance = _interleaved(converted.posterior(X).distribution, q, n)
    shift, scale = _outcome_map(model, n)
    scales = np.tile(scale, q)
    return shift + scale * mean, covariance * np.outer(scales, scales)


def _set_means(model) -> None:
    """Nonzero constant means, different per task (the cases start at zero)."""
    for k, (name, parameter) in enumerate(model.named_parameters()):
        if "mean_module" in name:
            values = torch.linspace(-0.7, 0.9, parameter.numel()) + 0.3 * k
            parameter.data.copy_(values.reshape(parameter.shape))


@pytest.mark.parametrize(
    "name, equal_noise",
    [(name, True) for name in EXACT]
    + [(name, False) for name in EXACT if name != "fixed_noise"],  # heteroskedastic: refused
)
def test_posterior_equals_the_botorch_posterior(name, equal_noise, dtype):
    case = build_botorch_case(name, dtype, equal_noise=equal_noise)
    _set_means(case.model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BotorchWarning)
        converted = VectorValuedGP.from_model(case.model)
    assert converted.has_task_noise == (not equal_noise and name not in ("single",))
    assert isinstance(converted, VectorValuedGP) and converted.num_tasks == case.num_tasks
    X = _test_X(case, dtype)
    mean, covariance = _converted_posterior(case.model, converted, X, case.num_tasks)
    expected_mean, expected_covariance = _botorch_posterior(case.model, X, case.num_tasks)
    np.testing.assert_allclose(mean, expected_mean, **TOL[dtype])
    np.testing.assert_allclose(covariance, expected_covariance, **TOL[dtype])
    # same kernel, same noise: the same information gain and width by either route
    np.testing.assert_allclose(
        float(converted.information_gain()), float(information_gain(case.model)), rtol=1e-4
    )
    for sigma in (None, 0.2):
        np.testing.assert_allclose(
            float(mt_kb_width(converted, 1.5, sigma, 0.1)),
            float(mt_kb_width(case.model, 1.5, sigma, 0.1)),
            rtol=1e-4,
        )


def test_botorchs_untransform_maps_the_posterior_back():
    case = build_botorch_case("kronecker", equal_noise=True)
    _set_means(case.model)
    converted = VectorValuedGP.from_model(case.model)
    assert converted.uses_eigen_route  # an ICM kernel on full-vector data
    X = _test_X(case, torch.float64)
    posterior = case.model.outcome_transform.untransform_posterior(converted.posterior(X))
    expected = case.model.posterior(X)
    np.testing.assert_allclose(np64(posterior.mean), np64(expected.mean), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        np64(posterior.variance), np64(expected.variance), rtol=1e-9, atol=1e-9
    )


def test_from_model_classmethod_is_the_same_conversion():
    case = build_botorch_case("two_outputs", equal_noise=True)
    X = _test_X(case, torch.float64)
    ours = VectorValuedGP.from_model(case.model).posterior(X).mean
    theirs = VectorValuedGP.from_model(case.model).posterior(X).mean
    assert torch.equal(ours, theirs)


@pytest.mark.parametrize("name", ["two_outputs", "multitask", "kronecker"])
def test_per_task_noise_and_means_are_carried_and_regularization_overrides(name):
    case = build_botorch_case(name)
    _set_means(case.model)
    noise = np64(case.model.likelihood.noise).reshape(-1)
    if name == "kronecker":  # per-task noise plus the shared noise
        noise = np64(case.model.likelihood.task_noises).reshape(-1) + noise[0]
    converted = VectorValuedGP.from_model(case.model)
    np.testing.assert_allclose(np64(converted.noise_variances), noise, rtol=1e-12)
    assert converted.regularization == pytest.approx(noise.min(), rel=1e-12)
    means = [np64(p).reshape(-1) for n, p in case.model.named_parameters() if "mean_module" in n]
    np.testing.assert_allclose(np64(converted.prior_mean), np.concatenate(means), rtol=1e-12)
    chosen = VectorValuedGP.from_model(case.model, regularization=0.01)
    assert chosen.regularization == 0.01 and not chosen.has_task_noise
    assert torch.equal(chosen.prior_mean, converted.prior_mean)


def test_appending_observations_equals_the_botorch_model_on_all_data():
    """The O(t^2) update of the converted model = BoTorch's model on all rows, same
    hyperparameters (no transforms, so that they do not depend on the data), with its
    constant means and per-task noise."""
    g = torch.Generator().manual_seed(5)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = torch.randn(9, 2, generator=g, dtype=torch.float64)
    first = KroneckerMultiTaskGP(X[:6], Y[:6])
    first.likelihood.task_noises = torch.tensor([0.02, 0.2], dtype=torch.float64)
    first.mean_module.base_means[0].constant.data.fill_(0.8)
    first.mean_module.base_means[1].constant.data.fill_(-1.5)
    converted = VectorValuedGP.from_model(first)
    converted.append_observations(X[6:], Y[6:])
    every = KroneckerMultiTaskGP(X, Y)
    every.load_state_dict(first.state_dict())
    X_test = torch.rand(3, 2, generator=g, dtype=torch.float64)
    np.testing.assert_allclose(
        np64(converted.posterior(X_test).mean), np64(every.posterior(X_test).mean), atol=1e-9
    )


def test_noise_that_one_regularization_cannot_stand_for():
    with pytest.raises(ValueError, match="differs between the training points of task 0"):
        VectorValuedGP.from_model(build_botorch_case("fixed_noise").model)
    rank_one = build_botorch_case("kronecker_rank1").model
    with pytest.raises(ValueError, match="correlates the noise of different tasks"):
        VectorValuedGP.from_model(rank_one)
    assert VectorValuedGP.from_model(rank_one, regularization=0.05).regularization == 0.05
    with pytest.raises(ValueError, match="regularization must be > 0"):
        VectorValuedGP.from_model(rank_one, regularization=0.0)
    X = torch.rand(2, 5, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="must not be batched"):
        VectorValuedGP.from_model(SingleTaskGP(X, X.sin()))
    with pytest.raises(TypeError, match="fitted BoTorch exact GP"):
        VectorValuedGP.from_model("model")
    X = torch.rand(6, 3, dtype=torch.float64)
    X[:, -1] = torch.tensor([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    linear = MultiTaskGP(X, X[:, :1], task_feature=-1, mean_module=LinearMean(3).to(X))
    with pytest.raises(ValueError, match="prior mean differs between the training points"):
        VectorValuedGP.from_model(linear)


def test_a_task_without_observations_gets_the_models_mean_and_noise():
    """MultiTaskGP(all_tasks=...) with an unobserved task: its constant mean and noise
    are read from the model (they set its posterior and future observations)."""
    g = torch.Generator().manual_seed(3)
    X = torch.rand(8, 2, generator=g, dtype=torch.float64)
    tasks = torch.tensor([0, 2, 0, 2, 2, 0, 0, 2], dtype=torch.float64)
    Y = torch.randn(8, 1, generator=g, dtype=torch.float64) + 3.0
    model = MultiTaskGP(torch.cat([X, tasks[:, None]], -1), Y, task_feature=-1, all_tasks=[0, 1, 2])
    model.likelihood.noise = torch.tensor([0.01, 0.05, 0.02], dtype=torch.float64)
    for i, value in enumerate((-0.3, 0.7, 0.1)):
        model.mean_module.base_means[i].constant.data.fill_(value)
    converted = VectorValuedGP.from_model(model)
    np.testing.assert_allclose(np64(converted.prior_mean), [-0.3, 0.7, 0.1], rtol=1e-12)
    np.testing.assert_allclose(np64(converted.noise_variances), [0.01, 0.05, 0.02], rtol=1e-12)
    X_test = torch.rand(3, 2, generator=g, dtype=torch.float64)
    mean, covariance = _converted_posterior(model, converted, X_test, 3)
    expected_mean, expected_covariance = _botorch_posterior(model, X_test, 3)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(covariance, expected_covariance, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------- fitted models, float64
def _fitted(model):
    """``fit_gpytorch_mll`` with at most 25 L-BFGS-B iterations (fast; the conversion
    does not depend on how far the fit went)."""
    if isinstance(model, ModelListGP):
        mll = SumMarginalLogLikelihood(model.likelihood, model)
    else:
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizationWarning)  # stopped at maxiter
        fit_gpytorch_mll(mll, optimizer_kwargs={"options": {"maxiter": 25}}, max_attempts=1)
    return model.eval()


def _fitted_model(name):
    g = torch.Generator().manual_seed(3)
    X = 4.0 * torch.rand(10, 2, generator=g, dtype=torch.float64)
    F = torch.stack([X.sum(-1).sin(), X[:, 0].cos(), X[:, 1] ** 2 / 8], -1)
    scale = torch.tensor([0.05, 0.2, 0.1], dtype=torch.float64)
    offset = torch.tensor([5.0, -2.0, 1.0], dtype=torch.float64)
    Y = 3.0 * F + offset + scale * torch.randn(10, 3, generator=g, dtype=torch.float64)
    if name in ("single", "two_outputs"):
        m = 1 if name == "single" else 2
        return _fitted(SingleTaskGP(X, Y[:, :m], input_transform=Normalize(2))), X, Y[:, :m]
    if name == "multitask":
        tasks = torch.tensor([0, 1, 2, 0, 1, 2, 1, 1, 0, 2], dtype=torch.float64)
        inputs = torch.cat([X, tasks[:, None]], -1)
        targets = Y.gather(1, tasks.long()[:, None])
        model = MultiTaskGP(
            inputs, targets, task_feature=-1, input_transform=Normalize(3, indices=[0, 1])
        )
        return _fitted(model), X, targets
    if name == "kronecker":  # defaults: per-task noise plus a shared noise, no transform
        return _fitted(KroneckerMultiTaskGP(X, Y[:, :2])), X, Y[:, :2]
    members = [SingleTaskGP(X, Y[:, i : i + 1], input_transform=Normalize(2)) for i in (0, 1)]
    return _fitted(ModelListGP(*members)), X, Y[:, :2]


def _relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.abs(ours - theirs).max() / np.abs(theirs).max())


@pytest.mark.parametrize("name", ("single", "two_outputs", "multitask", "kronecker", "model_list"))
def test_fitted_model_posterior_is_reproduced(name):
    """A model fitted with fit_gpytorch_mll (fitted constant means, per-task noise) and
    its conversion: BoTorch's untransform of the converted posterior equals the model's
    posterior, mean and full covariance (cross-task terms included), to 1e-6 relative.

    KroneckerMultiTaskGP.posterior's variances are not the exact GP's when the task
    noises differ (BoTorch 0.18 adds the noise diagonal to the eigenvalues of K kron B,
    which is exact only for one noise level: a variance of this test's model is off by
    66%); its mean is exact, and the covariance is compared with GPyTorch's exact
    prediction of the same model (``model(X)``), which is the exact posterior."""
    model, X, Y = _fitted_model(name)
    converted = VectorValuedGP.from_model(model)
    X_test = 4.0 * torch.rand(5, 2, generator=torch.Generator().manual_seed(8), dtype=X.dtype)
    n, q = converted.num_outputs, X_test.shape[0]
    if name == "model_list":  # the members' Standardize(1) maps, as one Standardize(2)
        transform = Standardize(2)
        transform(Y)
        transform.eval()
    else:
        transform = getattr(model, "outcome_transform", None)
    posterior = converted.posterior(X_test)
    if transform is not None:
        posterior = transform.untransform_posterior(posterior)
    mean, covariance = _interleaved(posterior.distribution, q, n)
    expected = model.posterior(X_test)
    expected_mean, expected_covariance = _interleaved(expected.distribution, q, n)
    if name == "kronecker":
        with torch.no_grad():
            _, expected_covariance = _interleaved(model(model.transform_inputs(X_test)), q, n)
    assert _relative_error(mean, expected_mean) < 1e-6
    assert _relative_error(covariance, expected_covariance) < 1e-6
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-6)
    assert converted.has_task_noise == (name != "single")
    assert converted.prior_mean.abs().max() > 0.1  # fitted means, carried over
