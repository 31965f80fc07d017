"""GP-BUCB pending points (Desautels et al. 2014): ``check_X_pending``,
``condition_on_pending`` against dense NumPy posteriors, and ``set_X_pending`` on the
package's acquisitions."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
import torch
from botorch.exceptions import BotorchWarning, UnsupportedError
from botorch.models import SingleTaskGP
from botorch.models.deterministic import GenericDeterministicModel
from botorch.models.transforms import Normalize
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from cases import tolerances
from gpytorch.kernels import RBFKernel
from multi_output_models import (
    MODELS,
    TASK_INDEXED,
    build_model,
    model_task,
    objective,
    pending_oracle,
)

from botorch_mtucb.acquisition import (
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedLCB,
    TaskConditionedUCB,
)
from botorch_mtucb.acquisition.pending import condition_on_pending
from botorch_mtucb.acquisition.posterior_moments import model_posterior
from botorch_mtucb.models import NystromVectorValuedGP
from botorch_mtucb.utils.checks import check_X_pending

pytestmark = pytest.mark.filterwarnings("ignore::botorch.exceptions.warnings.InputDataWarning")

CONDITIONED = (*MODELS, "SingleTaskGP-fixed-noise", "VectorValuedGP-indexed")


def _data(dtype, n=7, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=generator, dtype=torch.float64).to(dtype)
    return X, objective(X)


def test_check_X_pending_accepts_and_refuses():
    assert check_X_pending(None, 2) is None
    X = torch.rand(3, 2, dtype=torch.float64)
    assert check_X_pending(X, 2) is not None and check_X_pending(torch.zeros(0, 2), 2).shape == (
        0,
        2,
    )
    with pytest.warns(BotorchWarning, match="require a gradient"):
        checked = check_X_pending(X.clone().requires_grad_(True), 2)
    assert not checked.requires_grad
    bad_shapes = [torch.rand(3, 1, 2), torch.rand(2), torch.rand(3, 4)]
    for bad in bad_shapes:
        shape = re.escape(str(tuple(bad.shape)))
        with pytest.raises(
            ValueError, match=rf"^X_pending must have shape m x 2 .*got shape {shape}"
        ):
            check_X_pending(bad, 2)
    with pytest.raises(ValueError, match="X_pending must be finite"):
        check_X_pending(torch.tensor([[0.1, float("nan")]]), 2)
    with pytest.raises(ValueError, match="X_pending must be finite"):
        check_X_pending(torch.tensor([[0.1, float("inf")]]), None)
    with pytest.raises(TypeError, match="X_pending must be None or a torch.Tensor of shape m x 2"):
        check_X_pending([[0.1, 0.2]], 2)
    with pytest.raises(TypeError, match="X_pending must be a real floating-point tensor"):
        check_X_pending(torch.ones(2, 2, dtype=torch.long), 2)
    with pytest.raises(TypeError, match="X_pending must be float32 or float64"):
        check_X_pending(torch.ones(2, 2, dtype=torch.float16), 2)


def _rbf(A: np.ndarray, B: np.ndarray, lengthscale: np.ndarray) -> np.ndarray:
    difference = (A[:, None, :] - B[None, :, :]) / lengthscale
    return np.exp(-0.5 * (difference**2).sum(-1))


def test_single_task_gp_matches_dense_numpy_posterior(dtype):
    """A default SingleTaskGP (Standardize, Normalize) with pending points: the variance
    is the dense GP posterior on train + pending in the standardized space, times the
    outcome variance; the mean is unchanged."""
    X, Y = _data(dtype)
    X, Y = 3.0 * X - 1.0, 10.0 * Y[:, :1] + 4.0  # transforms have work to do
    model = SingleTaskGP(X, Y, input_transform=Normalize(2)).eval()
    model.covar_module.lengthscale = torch.tensor([[0.3, 0.5]], dtype=dtype)
    X_pending = torch.tensor([[0.2, -0.5], [1.5, 1.0], [0.9, 0.0]], dtype=dtype)
    x = torch.rand(6, 1, 2, generator=torch.Generator().manual_seed(3)).to(dtype) * 3 - 1
    conditioned = condition_on_pending(model, X_pending)
    with torch.no_grad():
        before, after = model.posterior(x), conditioned.posterior(x)

    def unit(A):  # Normalize fitted on X: bounds are its min and max
        lower, upper = X.min(0).values.double().numpy(), X.max(0).values.double().numpy()
        return (A.double().numpy() - lower) / (upper - lower)

    lengthscale = model.covar_module.lengthscale.detach().double().numpy()[0]
    noise = float(model.likelihood.noise)
    std = float(Y.double().std())
    Z = np.concatenate([unit(X), unit(X_pending)])
    K = _rbf(Z, Z, lengthscale) + noise * np.eye(len(Z))
    k = _rbf(unit(x[:, 0]), Z, lengthscale)
    expected = std**2 * (1.0 - np.einsum("ij,ji->i", k, np.linalg.solve(K, k.T)))
    tol = tolerances(dtype)
    np.testing.assert_allclose(after.variance.reshape(-1).double().numpy(), expected, **tol)
    torch.testing.assert_close(after.mean, before.mean, **tol)
    assert (after.variance < before.variance).all()


@pytest.mark.parametrize("name", CONDITIONED)
def test_conditioned_posterior_matches_numpy_conditioning(name, dtype):
    """Every model kind: the conditioned covariance at x equals the joint posterior
    over [X_pending; x] conditioned on the pending rows in NumPy; the mean is unchanged."""
    X, Y = _data(dtype)
    model = build_model(name, X, Y)
    X_pending = torch.rand(3, 2, generator=torch.Generator().manual_seed(5)).to(dtype)
    x = torch.tensor([[0.4, 0.6]], dtype=dtype)
    tol = tolerances(dtype)
    for task in (None, 1):
        oracle_task = task if name in TASK_INDEXED else None
        mean, covariance = pending_oracle(model, x, X_pending, oracle_task)
        conditioned = condition_on_pending(model, X_pending, task)
        with torch.no_grad():
            posterior = model_posterior(conditioned, x.unsqueeze(0))
        got = posterior.distribution.covariance_matrix[0].double().numpy()
        np.testing.assert_allclose(posterior.mean[0, 0].double().numpy(), mean, **tol)
        if task is None or name in TASK_INDEXED:
            np.testing.assert_allclose(got, covariance, **tol)
        else:  # ModelListGP conditions only the sub-model of `task`: its entry
            np.testing.assert_allclose(got[task, task], covariance[task, task], **tol)


def test_batched_models_and_identity_cases():
    X, Y = _data(torch.float64)
    model = build_model("SingleTaskGP-batched", X, Y)
    X_pending = torch.rand(2, 2, dtype=torch.float64)
    conditioned = condition_on_pending(model, X_pending)
    x = torch.rand(4, 3, 1, 2, dtype=torch.float64)  # 4 candidates x 3 models
    with torch.no_grad():
        before, after = model.posterior(x), conditioned.posterior(x)
    torch.testing.assert_close(after.mean, before.mean)
    assert (after.variance < before.variance).all()
    assert condition_on_pending(model, None) is model
    assert condition_on_pending(model, X_pending[:0]) is model


def test_condition_on_pending_errors():
    X, Y = _data(torch.float64)
    model = build_model("SingleTaskGP", X, Y)
    with pytest.raises(TypeError, match="model must be a BoTorch Model"):
        condition_on_pending(object(), X[:2])
    with pytest.raises(ValueError, match=r"task must lie in \[0, 1\], got 2"):
        condition_on_pending(model, X[:2], task=2)
    deterministic = GenericDeterministicModel(lambda X: X.sum(-1, keepdim=True))
    with pytest.raises(UnsupportedError, match="GenericDeterministicModel cannot be conditioned"):
        condition_on_pending(deterministic, X[:2])
    with pytest.raises(ValueError, match="X_pending must have shape m x d"):
        condition_on_pending(model, X[:2].unsqueeze(0))


def _acquisitions(model, X_pending=None):
    weights = torch.tensor([0.4, 0.6], dtype=X_pending.dtype if X_pending is not None else None)
    return {
        "ScalarizedMultiTaskUCB": ScalarizedMultiTaskUCB(model, weights, 1.5, X_pending=X_pending),
        "ScalarizedObjectiveUCB": ScalarizedObjectiveUCB(model, weights, 1.5, X_pending=X_pending),
        "TaskConditionedUCB": TaskConditionedUCB(model, 1, 1.5, X_pending=X_pending),
        "TaskConditionedLCB": TaskConditionedLCB(model, 1, 1.5, X_pending=X_pending),
    }


@pytest.mark.parametrize("name", ("VectorValuedGP", "KroneckerMultiTaskGP", "MultiTaskGP"))
def test_acquisitions_use_the_original_mean_and_the_conditioned_std(name, dtype):
    X, Y = _data(dtype)
    model = build_model(name, X, Y)
    X_pending = torch.rand(2, 2, generator=torch.Generator().manual_seed(1)).to(dtype)
    x = torch.tensor([[0.3, 0.8]], dtype=dtype)
    mean, covariance = pending_oracle(model, x, X_pending, model_task(name))
    weights = np.array([0.4, 0.6])
    std = np.sqrt(np.diag(covariance))
    expected = {
        "ScalarizedMultiTaskUCB": weights @ mean
        + np.linalg.norm(weights) * 1.5 * np.sqrt(np.linalg.eigvalsh(covariance)[-1]),
        "ScalarizedObjectiveUCB": weights @ (mean + 1.5 * std),
        "TaskConditionedUCB": mean[1] + 1.5 * std[1],
        "TaskConditionedLCB": mean[1] - 1.5 * std[1],
    }
    tol = tolerances(dtype)
    for key, acqf in _acquisitions(model, X_pending).items():
        if key.startswith("Scalarized") and name in TASK_INDEXED:
            continue  # the oracle hallucinated task 1 only
        value = acqf(x.unsqueeze(0)).detach().double().numpy()
        np.testing.assert_allclose(value, [expected[key]], **tol, err_msg=key)
        assert acqf.X_pending.shape == (2, 2)
        acqf.set_X_pending(None)
        assert acqf.X_pending is None and acqf.pending_model is None


def test_set_X_pending_validates_and_is_never_ignored():
    X, Y = _data(torch.float64)
    model = build_model("VectorValuedGP", X, Y)
    for key, acqf in _acquisitions(model).items():
        x = torch.tensor([[[0.5, 0.5]]], dtype=torch.float64)
        before = acqf(x)
        acqf.set_X_pending(x[0])
        after = acqf(x)
        assert (after < before if key != "TaskConditionedLCB" else after > before).all(), key
        with pytest.raises(
            ValueError, match=r"X_pending must have shape m x 2 .*got shape \(1, 1, 2\)"
        ):
            acqf.set_X_pending(x)
        with pytest.raises(ValueError, match="X_pending must be finite"):
            acqf.set_X_pending(torch.full((1, 2), float("nan"), dtype=torch.float64))
        with pytest.raises(ValueError, match="X_pending must have shape m x 2"):
            type(acqf)(
                model, *([1] if key.startswith("Task") else [torch.ones(2)]), 1.0, X_pending=X[None]
            )


@pytest.mark.parametrize("name", ("SingleTaskGP", "VectorValuedGP"))
def test_sequential_batches_are_distinct_and_restore_X_pending(name):
    X, Y = _data(torch.float64)
    model = build_model(name, X, Y)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    choices = torch.rand(30, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for key, acqf in _acquisitions(model).items():
        if key == "TaskConditionedLCB":
            continue  # a lower bound rises at pending points: no diversity to test
        torch.manual_seed(0)
        batch, _ = optimize_acqf(acqf, bounds, q=3, num_restarts=2, raw_samples=16, sequential=True)
        discrete, _ = optimize_acqf_discrete(acqf, q=3, choices=choices)
        for points in (batch, discrete):
            assert points.shape == (3, 2)
            assert torch.pdist(points).min() > 1e-3, key
        assert acqf.X_pending is None and acqf.pending_model is None
        greedy, _ = optimize_acqf_discrete(acqf, q=1, choices=choices)
        torch.testing.assert_close(discrete[:1], greedy)  # the first point is the q = 1 one
        with pytest.raises(UnsupportedError, match="q = 1 is required.*sequential=True"):
            optimize_acqf(acqf, bounds, q=2, num_restarts=1, raw_samples=4)


def test_nystrom_model_is_conditioned_and_left_unchanged():
    """NystromVectorValuedGP: the sketched posterior with the pending points added
    (a new sketch, so the mean is kept from the original model by the acquisitions)."""
    X, Y = _data(torch.float64, n=12)
    kernel = RBFKernel()
    kernel.lengthscale = 0.4
    covariance = torch.tensor([[1.0, 0.6], [0.6, 0.8]], dtype=torch.float64)
    model = NystromVectorValuedGP(X, Y, kernel, covariance, 0.05, seed=0)
    state = copy.deepcopy(model.state_dict())
    X_pending = torch.rand(2, 2, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    conditioned = condition_on_pending(model, X_pending)
    assert conditioned.train_X.shape[0] == 14 and model.train_X.shape[0] == 12
    for key, value in model.state_dict().items():  # tensors, and the kernel's classes
        assert torch.equal(value, state[key]) if torch.is_tensor(value) else value == state[key]
    x = X_pending.unsqueeze(-2)
    with torch.no_grad():
        before, after = model.posterior(x), conditioned.posterior(x)
    assert (after.variance < before.variance).all()
    acqf = ScalarizedMultiTaskUCB(model, torch.tensor([0.5, 0.5]), 1.0, X_pending=X_pending)
    mean = before.mean.squeeze(-2) @ torch.tensor([0.5, 0.5], dtype=torch.float64)
    assert (acqf(x) - mean > 0).all()  # the original mean plus a positive width term
