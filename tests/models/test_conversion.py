"""``vector_valued_gp_from_model``: the converted model's posterior equals the BoTorch
model's (zero constant mean, one noise level), mean and full covariance, in the user's
units; the stated differences (averaged per-task noise) and the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from botorch.exceptions.warnings import BotorchWarning
from botorch.models import KroneckerMultiTaskGP, ModelListGP, SingleTaskGP
from botorch.posteriors import GPyTorchPosterior
from botorch_models import CASE_NAMES, build_botorch_case, np64
from gpytorch.distributions import MultitaskMultivariateNormal

from botorch_mtucb.confidence import information_gain
from botorch_mtucb.models import VectorValuedGP, vector_valued_gp_from_model

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


@pytest.mark.parametrize("name", EXACT)
def test_posterior_equals_the_botorch_posterior(name, dtype):
    case = build_botorch_case(name, dtype, equal_noise=True, zero_mean=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BotorchWarning)  # one noise level: no averaging
        converted = vector_valued_gp_from_model(case.model)
    assert isinstance(converted, VectorValuedGP) and converted.num_tasks == case.num_tasks
    X = _test_X(case, dtype)
    mean, covariance = _converted_posterior(case.model, converted, X, case.num_tasks)
    expected_mean, expected_covariance = _botorch_posterior(case.model, X, case.num_tasks)
    np.testing.assert_allclose(mean, expected_mean, **TOL[dtype])
    np.testing.assert_allclose(covariance, expected_covariance, **TOL[dtype])
    # same kernel, same noise: the same information gain by either route
    np.testing.assert_allclose(
        float(converted.information_gain()), float(information_gain(case.model)), rtol=1e-4
    )


def test_botorchs_untransform_maps_the_posterior_back():
    case = build_botorch_case("kronecker", equal_noise=True, zero_mean=True)
    converted = vector_valued_gp_from_model(case.model)
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
    ours = vector_valued_gp_from_model(case.model).posterior(X).mean
    theirs = VectorValuedGP.from_model(case.model).posterior(X).mean
    assert torch.equal(ours, theirs)


@pytest.mark.parametrize("name", ["two_outputs", "multitask"])
def test_per_task_noise_is_averaged_over_the_observations_with_a_warning(name):
    case = build_botorch_case(name)
    noise = np64(case.model.likelihood.noise).reshape(-1)
    if name == "two_outputs":  # two outputs, 8 rows each
        expected = float(noise.mean())
    else:  # MultiTaskGP: per-task noise weighted by the tasks' row counts
        expected = float(noise[[0, 1, 2, 0, 1, 2, 1, 1]].mean())
    with pytest.warns(BotorchWarning, match="using their mean over the training observations"):
        converted = vector_valued_gp_from_model(case.model)
    assert converted.regularization == pytest.approx(expected, rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BotorchWarning)
        chosen = vector_valued_gp_from_model(case.model, regularization=0.01)
    assert chosen.regularization == 0.01


def test_appending_observations_equals_the_botorch_model_on_all_data():
    """The O(t^2) update of the converted model = BoTorch's model on all rows, same
    hyperparameters (no transforms, so that they do not depend on the data)."""
    g = torch.Generator().manual_seed(5)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = torch.randn(9, 2, generator=g, dtype=torch.float64)
    first = KroneckerMultiTaskGP(X[:6], Y[:6])
    first.likelihood.task_noises = torch.tensor([0.02, 0.02], dtype=torch.float64)
    first.mean_module.base_means[0].constant.data.zero_()
    first.mean_module.base_means[1].constant.data.zero_()
    converted = vector_valued_gp_from_model(first)
    converted.append_observations(X[6:], Y[6:])
    every = KroneckerMultiTaskGP(X, Y)
    every.load_state_dict(first.state_dict())
    X_test = torch.rand(3, 2, generator=g, dtype=torch.float64)
    np.testing.assert_allclose(
        np64(converted.posterior(X_test).mean), np64(every.posterior(X_test).mean), atol=1e-9
    )


def test_noise_that_one_regularization_cannot_stand_for():
    with pytest.raises(ValueError, match="differs between the training points of task 0"):
        vector_valued_gp_from_model(build_botorch_case("fixed_noise").model)
    rank_one = build_botorch_case("kronecker_rank1").model
    with pytest.raises(ValueError, match="correlates the noise of different tasks"):
        vector_valued_gp_from_model(rank_one)
    assert vector_valued_gp_from_model(rank_one, regularization=0.05).regularization == 0.05
    with pytest.raises(ValueError, match="regularization must be > 0"):
        vector_valued_gp_from_model(rank_one, regularization=0.0)
    X = torch.rand(2, 5, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="must not be batched"):
        vector_valued_gp_from_model(SingleTaskGP(X, X.sin()))
    with pytest.raises(TypeError, match="fitted BoTorch exact GP"):
        vector_valued_gp_from_model("model")
