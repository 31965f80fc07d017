"""``load_state_dict`` of VectorValuedGP and NystromVectorValuedGP: a loaded model gives
the posterior of the loaded kernel and data (factors rebuilt), whatever the receiving
model's kernel and number of rows; conditioned and subset states are refused."""

from __future__ import annotations

import copy

import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from gpytorch.kernels import MaternKernel, RBFKernel
from torch.nn import ModuleList

from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.scalarization import LinearScalarization

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


@pytest.mark.parametrize("cls", MODELS)
def test_a_model_loaded_as_a_submodule_gets_the_posterior_of_its_state(cls):
    """Inside an nn.ModuleList and inside an acquisition that holds it: the posterior of
    the loaded kernel and data (a grown state with more rows too), not the old one."""
    X, Y = _data(10)
    source = _build(cls, X, Y, _kernel(0.3))
    target = _build(cls, X[:4], 5.0 * Y[:4], _kernel())
    test_X = _data(5, seed=1)[0]
    ModuleList([target]).load_state_dict(ModuleList([source]).state_dict())
    assert target.train_X.shape == (10, 2) and torch.equal(target.train_Y, source.train_Y)
    torch.testing.assert_close(
        target.posterior(test_X).mean, source.posterior(test_X).mean, rtol=0, atol=1e-10
    )
    scalarization = LinearScalarization(torch.tensor([0.2, 0.5, 0.3], dtype=F64))
    expected = ScalarizedMultiTaskUCB(source, scalarization, 1.0)
    acqf = ScalarizedMultiTaskUCB(_build(cls, X[:3], Y[:3], _kernel()), scalarization, 1.0)
    acqf.load_state_dict(expected.state_dict())
    torch.testing.assert_close(
        acqf(test_X.unsqueeze(-2)), expected(test_X.unsqueeze(-2)), rtol=0, atol=1e-10
    )


def test_a_nested_load_that_fails_leaves_the_model_as_it_was():
    X, Y = _data(8)
    model = _build(VectorValuedGP, X, Y, _kernel())
    test_X = _data(3, seed=4)[0]
    before = model.posterior(test_X).mean.clone()
    state = ModuleList([_build(VectorValuedGP, X[:5], Y[:5], _kernel(0.3))]).state_dict()
    bad = dict(state, **{"0.kernel.task_covariances": -state["0.kernel.task_covariances"]})
    with pytest.raises(ValueError, match=r"0\.kernel\.task_covariances\[0\].*semi-definite"):
        ModuleList([model]).load_state_dict(bad)
    assert torch.equal(model.posterior(test_X).mean, before)
    # the data loaded, then the kernel's lengthscale did not (torch's size mismatch)
    ard = _build(VectorValuedGP, X[:5], Y[:5], RBFKernel(ard_num_dims=2).to(F64))
    with pytest.raises(RuntimeError, match="size mismatch for 0.kernel.kernels.0"):
        ModuleList([model]).load_state_dict(ModuleList([ard]).state_dict())
    assert model.train_X.shape == (8, 2)
    assert torch.equal(model.posterior(test_X).mean, before)


def test_strict_false_loads_a_kernel_only_state_into_task_indexed_data():
    X, Y = _data(7, columns=1)
    tasks = torch.tensor([0, 2, 1, 1, 0, 2, 2])
    target = VectorValuedGP(X, Y, _kernel(), B, 0.1, train_tasks=tasks)
    source = VectorValuedGP(X[:3], Y[:3], _kernel(0.3), B, 0.1, train_tasks=tasks[:3])
    state = {k: v for k, v in source.state_dict().items() if k.startswith("kernel.")}
    result = target.load_state_dict(state, strict=False)
    assert set(result.missing_keys) == {
        "train_X", "train_Y", "train_tasks", "prior_mean", "noise_variances"
    }  # fmt: skip
    expected = VectorValuedGP(X, Y, _kernel(0.3), B, 0.1, train_tasks=tasks)
    test_X = _data(3, seed=4)[0]
    torch.testing.assert_close(
        target.posterior(test_X).mean, expected.posterior(test_X).mean, rtol=0, atol=1e-10
    )
    full = {k: v for k, v in _build(VectorValuedGP, X, Y.repeat(1, 3), _kernel()).state_dict().items()
            if k in ("train_X", "train_Y")}  # fmt: skip
    with pytest.raises(ValueError, match="full-vector data, and this model holds task-indexed"):
        target.load_state_dict(full, strict=False)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("cls", MODELS)
def test_a_non_finite_kernel_hyperparameter_is_named_and_refused(cls, value):
    X, Y = _data(8)
    model = _build(cls, X, Y, _kernel())
    test_X = _data(3, seed=4)[0]
    before = model.posterior(test_X).mean.clone()
    key = "kernel.kernels.0.raw_lengthscale"
    state = dict(_build(cls, X[:5], Y[:5], _kernel(0.3)).state_dict())
    state[key] = torch.full_like(state[key], value)
    with pytest.raises(ValueError, match=r"state_dict's kernel\.kernels\.0\.raw_lengthscale holds"):
        model.load_state_dict(state)
    assert model.train_X.shape == (8, 2)
    assert torch.equal(model.posterior(test_X).mean, before)


def test_a_state_of_other_kernel_classes_is_refused():
    """A state dict holds no class: the kernels' classes (and Matern's nu) are stored
    as the kernel's extra state and compared; a state saved without them loads."""
    X, Y = _data(8)
    test_X = _data(3, seed=4)[0]
    matern = _build(VectorValuedGP, X[:5], Y[:5], MaternKernel(nu=2.5).to(F64))
    before = matern.posterior(test_X).mean.clone()
    rbf = _build(VectorValuedGP, X, Y, _kernel(0.3))
    with pytest.raises(ValueError, match=r"0=RBFKernel where this one has 0=MaternKernel\(nu=2.5"):
        matern.load_state_dict(rbf.state_dict())
    with pytest.raises(ValueError, match=r"0=MaternKernel\(nu=1.5\) where this one has"):
        matern.load_state_dict(_build(VectorValuedGP, X, Y, MaternKernel(nu=1.5)).state_dict())
    with pytest.raises(ValueError, match="other classes"):  # also as a submodule
        ModuleList([matern]).load_state_dict(ModuleList([rbf]).state_dict())
    assert matern.train_X.shape == (5, 2)
    assert torch.equal(matern.posterior(test_X).mean, before)
    source = MaternKernel(nu=2.5).to(F64)
    source.lengthscale = 0.3
    grown = _build(VectorValuedGP, X, Y, source)
    old = {k: v for k, v in grown.state_dict().items() if k != "kernel._extra_state"}
    matern.load_state_dict(old)  # saved before the classes were stored
    torch.testing.assert_close(
        matern.posterior(test_X).mean, grown.posterior(test_X).mean, rtol=0, atol=1e-10
    )


def test_a_refused_load_with_assign_leaves_the_callers_tensors_intact():
    """assign=True puts the state's tensors in the model: undoing a refused load must
    put the model's own back, not copy the old values into the caller's tensors."""
    X, Y = _data(8)
    model = _build(VectorValuedGP, X[:3], Y[:3], _kernel())
    test_X = _data(3, seed=4)[0]
    before = model.posterior(test_X).mean.clone()
    state = dict(_build(VectorValuedGP, X, Y, _kernel(0.3)).state_dict())
    state["train_Y"] = state["train_Y"][:5].clone()
    saved = {key: value.clone() for key, value in state.items() if torch.is_tensor(value)}
    with pytest.raises(ValueError, match="same number of rows"):
        model.load_state_dict(state, assign=True)
    assert all(torch.equal(state[key], value) for key, value in saved.items())
    assert torch.equal(model.posterior(test_X).mean, before)
