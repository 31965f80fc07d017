"""Posterior moments of BoTorch multi-output models (``posterior_moments``): the
KroneckerMultiTaskGP workaround against a dense Kronecker NumPy posterior, output
selection, and ``ScalarizedPosteriorTransform`` (Ax's minimization) in the UCBs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.acquisition.objective import (
    ExpectationPosteriorTransform,
    ScalarizedPosteriorTransform,
)
from botorch.exceptions import UnsupportedError
from botorch.fit import fit_gpytorch_mll
from botorch.models import KroneckerMultiTaskGP, MultiTaskGP
from botorch.models.transforms import Normalize, Standardize
from botorch.optim import optimize_acqf_discrete
from cases import tolerances
from gpytorch.mlls import ExactMarginalLogLikelihood
from multi_output_models import MODELS, build_model, objective

from botorch_mtucb.acquisition import (
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedLCB,
    TaskConditionedUCB,
)
from botorch_mtucb.acquisition.posterior_moments import (
    check_posterior_transform,
    model_posterior,
    posterior_mean_and_covariance,
    task_mean_and_variance,
)

pytestmark = pytest.mark.filterwarnings("ignore::botorch.exceptions.warnings.InputDataWarning")


def _data(dtype, n=8, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=generator, dtype=torch.float64).to(dtype)
    return X, objective(X)


def test_kronecker_posterior_matches_dense_numpy(dtype):
    """Fitted, with Normalize and Standardize: the full task covariance (BoTorch's own
    posterior keeps only its diagonal) against kron(K, B) + noise in NumPy."""
    X, Y = _data(dtype, n=10)
    model = KroneckerMultiTaskGP(
        3.0 * X, 5.0 * Y + 1.0, input_transform=Normalize(2), outcome_transform=Standardize(2)
    )
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    model.eval()
    x = torch.rand(4, 1, 2, generator=torch.Generator().manual_seed(1)).to(dtype) * 3.0
    mean, covariance = posterior_mean_and_covariance(model, x)
    with torch.no_grad():
        train_X = model.train_inputs[0]  # normalized (eval mode)
        test_X = model.transform_inputs(x[:, 0])
        data_kernel = model.covar_module.data_covar_module
        K = data_kernel(train_X).to_dense().double().numpy()
        k = data_kernel(test_X, train_X).to_dense().double().numpy()
        kxx = data_kernel(test_X, diag=True).double().numpy()
        B = model.covar_module.task_covar_module.covar_matrix.to_dense().double().numpy()
        noise = model.likelihood._shaped_noise_covar(torch.Size([10, 2])).to_dense()
        targets = model.train_targets.double().numpy().reshape(-1)  # standardized, interleaved
        scale = model.outcome_transform.stdvs.double().numpy().reshape(-1)
        shift = model.outcome_transform.means.double().numpy().reshape(-1)
    gram = np.kron(K, B) + noise.double().numpy()
    prior_mean = model.mean_module(train_X).detach().double().numpy().reshape(-1)
    for a in range(4):
        cross = np.kron(k[a : a + 1], B)  # 2 x 20
        post_mean = cross @ np.linalg.solve(gram, targets - prior_mean) + prior_mean[:2]
        post_cov = kxx[a] * B - cross @ np.linalg.solve(gram, cross.T)
        tol = tolerances(dtype)
        np.testing.assert_allclose(
            mean[a].detach().double().numpy(), post_mean * scale + shift, **tol
        )
        expected = post_cov * np.outer(scale, scale)
        np.testing.assert_allclose(covariance[a].detach().double().numpy(), expected, **tol)
        assert abs(expected[0, 1]) > 1e-3 * abs(expected[0, 0])  # cross-task terms matter


@pytest.mark.parametrize("batch", (1, 2, 4, 7))
def test_kronecker_gradients_for_every_batch_size(batch):
    """BoTorch's KroneckerMultiTaskGP.posterior(X).mean fails in backward for batches of
    b != n candidates (linear_operator's Matmul backward); the exact route does not,
    and its gradient matches finite differences."""
    X, Y = _data(torch.float64)
    model = build_model("KroneckerMultiTaskGP", X, Y)
    x = torch.rand(batch, 1, 2, dtype=torch.float64, requires_grad=True)

    def value(points):
        mean, covariance = posterior_mean_and_covariance(model, points)
        return mean.sum(-1) + covariance.sum((-1, -2))

    assert torch.autograd.gradcheck(value, (x,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_task_moments_select_an_output_of_every_model(name, dtype):
    """Output ``task`` of the posterior over all outputs (a batched SingleTaskGP fails
    in BoTorch for one output index)."""
    X, Y = _data(dtype)
    model = build_model(name, X, Y)
    x = torch.rand(5, 1, 2, dtype=dtype)
    mean, covariance = posterior_mean_and_covariance(model, x)
    for task in range(2):
        task_mean, variance = task_mean_and_variance(model, x, task)
        assert task_mean.shape == variance.shape == (5,)
        torch.testing.assert_close(task_mean, mean[:, task], **tolerances(dtype))
        torch.testing.assert_close(variance, covariance[:, task, task], **tolerances(dtype))


def test_multitask_gp_task_is_an_output_index_not_a_task_value():
    """With output_tasks=[2, 0], task 0 is the output of task value 2."""
    X, Y = _data(torch.float64)
    rows = torch.cat([torch.cat([X, X.new_full((8, 1), float(v))], -1) for v in range(3)])
    values = torch.cat([Y[:, :1], Y[:, 1:], Y[:, :1] - Y[:, 1:]])
    model = MultiTaskGP(rows, values, task_feature=-1, output_tasks=[2, 0]).eval()
    x = torch.rand(3, 1, 2, dtype=torch.float64)
    mean, _ = task_mean_and_variance(model, x, 0)
    expected = model.posterior(torch.cat([x, x.new_full((3, 1, 1), 2.0)], -1)).mean
    torch.testing.assert_close(mean, expected.reshape(3))


def test_check_posterior_transform():
    weights = torch.tensor([1.0, -2.0])
    assert check_posterior_transform(None, 2) is None
    transform = ScalarizedPosteriorTransform(weights)
    assert check_posterior_transform(transform, 2) is transform
    with pytest.raises(ValueError, match="posterior_transform must have 1 weights"):
        check_posterior_transform(transform, 1)
    with pytest.raises(UnsupportedError, match="must be a ScalarizedPosteriorTransform"):
        check_posterior_transform(ExpectationPosteriorTransform(n_w=2), 2)
    with pytest.raises(TypeError, match="posterior_transform must be None or a botorch"):
        check_posterior_transform(lambda posterior: posterior, 2)


@pytest.mark.parametrize("name", MODELS)
def test_scalarized_posterior_transform_composes_with_the_ucbs(name, dtype):
    """T(y) = w^T y + c first: s(T(mu)) + L width sqrt(w^T Gamma w); for one task,
    w mu + c +- width |w| sigma."""
    X, Y = _data(dtype)
    model = build_model(name, X, Y)
    x = torch.rand(6, 1, 2, generator=torch.Generator().manual_seed(4)).to(dtype)
    mean, covariance = (t.detach().double() for t in posterior_mean_and_covariance(model, x))
    w = torch.tensor([0.7, -1.3], dtype=torch.float64)
    transform = ScalarizedPosteriorTransform(w.to(dtype), offset=0.5)
    ucb_mean = mean @ w + 0.5
    ucb_std = torch.einsum("i,bij,j->b", w, covariance, w).sqrt()
    tol = tolerances(dtype)
    for cls in (ScalarizedMultiTaskUCB, ScalarizedObjectiveUCB):
        values = cls(model, None, 2.0, posterior_transform=transform)(x).double()
        torch.testing.assert_close(values, ucb_mean + 2.0 * ucb_std, **tol)
        weighted = cls(model, torch.tensor([3.0]), 2.0, posterior_transform=transform)(x)
        torch.testing.assert_close(weighted.double(), 3.0 * values, **tol)
    minimize = ScalarizedPosteriorTransform(-torch.ones(1, dtype=dtype))
    task_std = covariance[:, 1, 1].sqrt()
    ucb = TaskConditionedUCB(model, 1, 2.0, posterior_transform=minimize)(x).double()
    lcb = TaskConditionedLCB(model, 1, 2.0, posterior_transform=minimize)(x).double()
    torch.testing.assert_close(ucb, -mean[:, 1] + 2.0 * task_std, **tol)
    torch.testing.assert_close(lcb, -mean[:, 1] - 2.0 * task_std, **tol)


def test_minimization_is_never_maximized_the_wrong_way():
    """Ax's minimization (weights=-1): with width 0 the chosen arm is the one of the
    smallest posterior mean, for every acquisition."""
    X, Y = _data(torch.float64)
    model = build_model("SingleTaskGP", X, Y)
    choices = torch.rand(50, 2, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    mean = model.posterior(choices.unsqueeze(-2)).mean.detach().squeeze(-2)  # 50 x 2
    w = torch.tensor([0.5, 0.5], dtype=torch.float64)
    acquisitions = {
        "sum": ScalarizedMultiTaskUCB(model, None, 0.0, ScalarizedPosteriorTransform(-w)),
        "objective": ScalarizedObjectiveUCB(model, None, 0.0, ScalarizedPosteriorTransform(-w)),
        "task": TaskConditionedUCB(model, 1, 0.0, ScalarizedPosteriorTransform(-w[:1] * 2)),
    }
    for key, acqf in acquisitions.items():
        best, _ = optimize_acqf_discrete(acqf, q=1, choices=choices)
        target = mean[:, 1] if key == "task" else mean @ w
        assert torch.equal(best[0], choices[target.argmin()]), key


def test_transform_errors_name_what_is_accepted():
    X, Y = _data(torch.float64)
    model = build_model("VectorValuedGP", X, Y)
    transform = ScalarizedPosteriorTransform(torch.ones(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="scalarization has 2 weights but the posterior_transform"):
        ScalarizedMultiTaskUCB(model, torch.ones(2), 1.0, posterior_transform=transform)
    with pytest.raises(ValueError, match="posterior_transform must have 2 weights"):
        ScalarizedObjectiveUCB(model, None, 1.0, ScalarizedPosteriorTransform(torch.ones(3)))
    with pytest.raises(ValueError, match="must have 1 weights .*the task's one output"):
        TaskConditionedUCB(model, 0, 1.0, posterior_transform=transform)
    with pytest.raises(TypeError, match="scalarization must be a botorch_mtucb Scalarization"):
        ScalarizedMultiTaskUCB(model, None, 1.0)
    with pytest.raises(UnsupportedError, match="ScalarizedPosteriorTransform"):
        TaskConditionedUCB(model, 0, 1.0, posterior_transform=ExpectationPosteriorTransform(2))
    assert model_posterior(model, X[:2].unsqueeze(-2), transform).mean.shape == (2, 1, 1)
