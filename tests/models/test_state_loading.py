"""``load_state_dict`` of VectorValuedGP and NystromVectorValuedGP: a loaded model gives
the posterior of the loaded kernel and data (factors rebuilt), whatever the receiving
model's kernel and number of rows; conditioned and subset states are refused."""

from __future__ import annotations

import copy

import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from gpytorch.kernels import RBFKernel

from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP

F64 = torch.float64
B = torch.tensor([[1.0, 0.6, 0.2], [0.6, 1.0, 0.4], [0.2, 0.4, 0.9]], dtype=F64)
MODELS = (VectorValuedGP, NystromVectorValuedGP)


def _data(rows, seed=0, columns=3):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(rows, 2, generator=generator, dtype=F64)
    Y = torch.randn(rows, columns, generator=generator, dtype=F64)
    return X, Y


def _kernel(lengthscale=None):
    kernel = RBFKernel().to(F64)
    if lengthscale is not None:
        kernel.lengthscale = lengthscale
    return kernel


def _build(cls, X, Y, kernel, terms=1, **kwargs):
    kernels = kernel if terms == 1 else [kernel, copy.deepcopy(kernel)]
    covariances = B if terms == 1 else [0.5 * B, torch.eye(3, dtype=F64)]
    if cls is NystromVectorValuedGP:
        kwargs.setdefault("accuracy", 3.0)
    return cls(X, Y, kernels, covariances, 0.05, **kwargs)


@pytest.mark.parametrize("terms", (1, 2), ids=("eigen", "general"))
@pytest.mark.parametrize("cls", MODELS)
def test_loaded_kernel_gives_its_posterior(cls, terms):
    """The issue's case: data kernels from lengthscale 0.3 and the default; after
    loading, the posterior is that of a model built with the loaded parameters."""
    X, Y = _data(8)
    source = _build(cls, X, Y, _kernel(0.3), terms)
    target = _build(cls, X, Y, _kernel(), terms)
    test_X = _data(5, seed=1)[0]
    assert (target.posterior(test_X).mean - source.posterior(test_X).mean).abs().max() > 0.05
    result = target.load_state_dict(source.state_dict())
    assert not result.missing_keys and not result.unexpected_keys
    expected, loaded = source.posterior(test_X), target.posterior(test_X)
    torch.testing.assert_close(loaded.mean, expected.mean, rtol=0, atol=1e-10)
    torch.testing.assert_close(
        loaded.distribution.covariance_matrix,
        expected.distribution.covariance_matrix,
        rtol=0,
        atol=1e-10,
    )
    if cls is VectorValuedGP:
        assert float(target.information_gain()) == pytest.approx(
            float(source.information_gain()), rel=1e-12
        )
    else:  # the dictionary and the history of the draws come with the state
        assert torch.equal(target.dictionary, source.dictionary)
        assert target.num_resamplings == source.num_resamplings
        assert float(target.sketched_log_det_sum) == float(source.sketched_log_det_sum)


@pytest.mark.parametrize("terms", (1, 2), ids=("eigen", "general"))
@pytest.mark.parametrize("cls", MODELS)
def test_grown_state_loads_into_a_smaller_model_and_keeps_growing(cls, terms):
    X, Y = _data(10)
    source = _build(cls, X[:6], Y[:6], _kernel(0.4), terms)
    source.append_observations(X[6:8], Y[6:8])  # grown in place
    target = _build(cls, X[:3], Y[:3], _kernel(), terms)
    D = torch.cat([X, _data(6, seed=3)[0]])  # every row a candidate (the sketch's rule)
    assert target.track_candidates(D) == (cls is VectorValuedGP or terms == 1)
    target.load_state_dict(source.state_dict())
    assert target.train_X.shape == (8, 2) and torch.equal(target.train_Y, source.train_Y)
    assert target.tracks_candidates == (cls is VectorValuedGP or terms == 1)  # tracked again
    test_X = _data(4, seed=2)[0]
    torch.testing.assert_close(
        target.posterior(test_X).mean, source.posterior(test_X).mean, rtol=0, atol=1e-10
    )
    torch.testing.assert_close(
        target.posterior(D.unsqueeze(-2)).variance,
        source.posterior(D.unsqueeze(-2)).variance,
        rtol=0,
        atol=1e-10,
    )
    # both go on from the same state: the same next update (and the same next draw)
    source.append_observations(X[8:], Y[8:])
    target.append_observations(X[8:], Y[8:])
    torch.testing.assert_close(
        target.posterior(test_X).mean, source.posterior(test_X).mean, rtol=0, atol=1e-10
    )
    if cls is NystromVectorValuedGP:
        assert torch.equal(target.dictionary, source.dictionary)


def test_prior_mean_noise_and_task_indexed_data_are_loaded():
    X, Y = _data(7, columns=1)
    tasks = torch.tensor([0, 2, 1, 1, 0, 2, 2])
    source = VectorValuedGP(
        X, Y, _kernel(0.3), B, train_tasks=tasks, prior_mean=[1.0, 0.0, -1.0],
        noise_variances=[0.01, 0.2, 0.05],
    )  # fmt: skip
    target = VectorValuedGP(X[:2], Y[:2], _kernel(), B, 0.1, train_tasks=tasks[:2])
    target.load_state_dict(source.state_dict())
    assert target.regularization == 0.01 and target.has_task_noise
    test_X = _data(3, seed=4)[0]
    torch.testing.assert_close(
        target.posterior(test_X).mean, source.posterior(test_X).mean, rtol=0, atol=1e-10
    )
    torch.testing.assert_close(target.information_gain(), source.information_gain())


def test_strict_false_loads_the_kernel_onto_the_models_own_data():
    X, Y = _data(8)
    target = _build(VectorValuedGP, X, Y, _kernel())
    state = {k: v for k, v in _build(VectorValuedGP, X[:2], Y[:2], _kernel(0.3)).state_dict().items()
             if k.startswith("kernel.")}  # fmt: skip
    result = target.load_state_dict(state, strict=False)
    assert set(result.missing_keys) == {"train_X", "train_Y", "prior_mean", "noise_variances"}
    expected = _build(VectorValuedGP, X, Y, _kernel(0.3))
    test_X = _data(3, seed=4)[0]
    torch.testing.assert_close(
        target.posterior(test_X).mean, expected.posterior(test_X).mean, rtol=0, atol=1e-10
    )
    with pytest.raises(RuntimeError, match="Missing key"):
        _build(VectorValuedGP, X, Y, _kernel()).load_state_dict(state)


def test_inconsistent_or_foreign_states_are_refused_and_leave_the_model_unchanged():
    X, Y = _data(8)
    model = _build(VectorValuedGP, X, Y, _kernel())
    test_X = _data(3, seed=4)[0]
    assert model.track_candidates(test_X)
    before = model.posterior(test_X).mean.clone()
    state = _build(VectorValuedGP, X[:5], Y[:5], _kernel(0.3)).state_dict()
    with pytest.raises(ValueError, match="same number of rows"):
        model.load_state_dict({"train_X": state["train_X"]}, strict=False)
    bad = dict(state, **{"kernel.task_covariances": -state["kernel.task_covariances"]})
    with pytest.raises(ValueError, match="positive semi-definite|PSD|eigenvalue"):
        model.load_state_dict(bad)
    assert model.train_X.shape == (8, 2) and model.tracks_candidates
    assert torch.equal(model.posterior(test_X).mean, before)
    two_tasks = VectorValuedGP(X, Y[:, :2], _kernel(), torch.eye(2, dtype=F64), 0.1)
    with pytest.raises(ValueError, match="1 kernel term\\(s\\) on 2 task\\(s\\)"):
        model.load_state_dict(two_tasks.state_dict())
    indexed = VectorValuedGP(X, Y[:, :1], _kernel(), B, 0.1, train_tasks=torch.zeros(8).long())
    with pytest.raises(ValueError, match="task-indexed data, and this model holds full-vector"):
        model.load_state_dict(indexed.state_dict())
    conditioned = model.condition_on_observations(test_X.expand(2, 3, 2), torch.zeros(2, 3, 3))
    with pytest.raises(UnsupportedError, match="conditioned beyond its own data"):
        model.load_state_dict(conditioned.state_dict())
    with pytest.raises(UnsupportedError, match="subset_output"):
        model.load_state_dict(model.subset_output([0, 2]).state_dict())
    with pytest.raises(UnsupportedError, match="this model is conditioned beyond it"):
        conditioned.load_state_dict(state)
    assert torch.equal(model.posterior(test_X).mean, before)


def test_state_holds_no_factor_and_float32_models_load_float64_states():
    X, Y = _data(6)
    source = _build(VectorValuedGP, X, Y, _kernel(0.3))
    assert set(source.state_dict()) >= {"train_X", "train_Y", "prior_mean", "noise_variances"}
    assert not any(key.startswith("_") for key in source.state_dict())  # no factor
    target = _build(VectorValuedGP, X[:2], Y[:2], _kernel()).to(torch.float32)
    target.load_state_dict(source.state_dict())
    assert target.train_X.dtype == torch.float32
    test_X = _data(3, seed=4)[0]
    torch.testing.assert_close(
        target.posterior(test_X).mean,
        source.posterior(test_X).mean.float(),
        rtol=1e-4,
        atol=1e-4,
    )
