"""SumOfSeparableKernels: Gamma(x, x') = sum_j k_j(x, x') B_j (paper 000, Section 2)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from cases import ETA, NUM_TASKS, build_case, tolerances
from gpytorch.distributions import MultitaskMultivariateNormal
from gpytorch.kernels import MaternKernel, MultitaskKernel, RBFKernel
from gpytorch.likelihoods import MultitaskGaussianLikelihood
from gpytorch.means import MultitaskMean, ZeroMean
from gpytorch.models import ExactGP
from linear_operator.operators import (
    KroneckerProductLinearOperator,
    LinearOperator,
    SumLinearOperator,
)
from oracles import DenseMultiTaskGP, make_rbf, numpy_kernel

from botorch_mtucb.kernels import SumOfSeparableKernels, UniformSimilarityTaskKernel


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _kernel(case) -> SumOfSeparableKernels:
    return SumOfSeparableKernels(case.kernels, case.task_covariances)


@pytest.mark.parametrize("name", ("icm", "uniform_0.4", "sum", "independent"))
@pytest.mark.parametrize("batch", ((), (2,)), ids=str)
def test_covariances_match_numpy(name, batch, dtype):
    case = build_case(name, dtype)
    kernel = _kernel(case)
    assert kernel.num_tasks == NUM_TASKS
    assert kernel.num_terms == len(case.kernels)
    generator = torch.Generator().manual_seed(0)
    X1 = torch.rand(*batch, 3, 2, generator=generator, dtype=torch.float64).to(dtype)
    X2 = torch.rand(*batch, 4, 2, generator=generator, dtype=torch.float64).to(dtype)
    tasks1, tasks2 = torch.tensor([2, 0, 2]), torch.tensor([1, 1, 0, 2])
    tol = tolerances(dtype)
    full = kernel.full_covariance(X1, X2)
    observation = kernel.observation_covariance(X1, tasks1, X2, tasks2)
    block = kernel.task_block_covariance(X1, X2, tasks2)
    diagonal = kernel.diagonal_blocks(X1)
    assert full.shape == (*batch, 3, NUM_TASKS, 4, NUM_TASKS)
    assert observation.shape == (*batch, 3, 4)
    assert block.shape == (*batch, 3, NUM_TASKS, 4)
    assert diagonal.shape == (*batch, 3, NUM_TASKS, NUM_TASKS)
    for index in np.ndindex(*batch):
        x1, x2 = _np(X1[index]), _np(X2[index])
        gamma = case.oracle.gamma(x1, x2)  # 3 x n x 4 x n
        np.testing.assert_allclose(_np(full[index]), gamma, **tol)
        np.testing.assert_allclose(
            _np(observation[index]),
            case.oracle.observation_gram(x1, tasks1.numpy(), x2, tasks2.numpy()),
            **tol,
        )
        np.testing.assert_allclose(
            _np(block[index]), gamma[:, :, np.arange(4), tasks2.numpy()], **tol
        )
        self_gamma = case.oracle.gamma(x1, x1)
        np.testing.assert_allclose(
            _np(diagonal[index]), np.stack([self_gamma[a, :, a] for a in range(3)]), **tol
        )


def test_task_kernel_module_is_evaluated():
    task_kernel = UniformSimilarityTaskKernel(3, omega=0.25).double()
    kernel = SumOfSeparableKernels(make_rbf([0.5]), task_kernel)
    expected = 0.25 * np.eye(3) + 0.75 / 3
    np.testing.assert_allclose(_np(kernel.task_covariances[0]), expected, rtol=1e-12)


def test_bad_input():
    rbf = make_rbf([0.5])
    with pytest.raises(ValueError, match="task_covariance\\[0\\] must be positive"):
        SumOfSeparableKernels(rbf, -torch.eye(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="batched task kernels"):
        SumOfSeparableKernels(
            rbf, UniformSimilarityTaskKernel(2, torch.tensor([0.2, 0.3]), torch.Size([2]))
        )
    with pytest.raises(ValueError, match="non-empty"):
        SumOfSeparableKernels([], [])
    with pytest.raises(TypeError, match="data_kernel\\[1\\]"):
        SumOfSeparableKernels([rbf, "k"], [torch.eye(2), torch.eye(2)])
    with pytest.raises(TypeError, match="data_kernel"):
        SumOfSeparableKernels(3, torch.eye(2))
    with pytest.raises(TypeError, match="task_covariance"):
        SumOfSeparableKernels(rbf, 3.0)


def test_state_holds_the_data_kernels_classes():
    """An RBF state has a Matern kernel's parameter names: the classes are the extra
    state and a state of others is refused; a state saved without them loads."""
    B = torch.eye(2)
    rbf = SumOfSeparableKernels([RBFKernel(), RBFKernel()], [B, B])
    state = rbf.state_dict()
    assert state["_extra_state"] == {
        "data_kernels": [".=ModuleList"] + [
            entry
            for j in (0, 1)
            for entry in (f"{j}=RBFKernel", f"{j}.raw_lengthscale_constraint=Positive",
                          f"{j}.raw_lengthscale_constraint._transform=Softplus")
        ]
    }  # fmt: skip
    matern = SumOfSeparableKernels([RBFKernel(), MaternKernel()], [B, B])
    with pytest.raises(ValueError, match=r"1=RBFKernel where this one has 1=MaternKernel"):
        matern.load_state_dict(state)
    old = {k: v for k, v in state.items() if k != "_extra_state"}
    target = SumOfSeparableKernels([RBFKernel(), RBFKernel()], [2.0 * B, B])
    assert not target.load_state_dict(old).missing_keys
    assert torch.equal(target.task_covariances, rbf.task_covariances)


class _MultitaskExactGP(ExactGP):
    """The textbook GPyTorch multitask ``ExactGP``: zero mean, ``covar_module`` on all
    tasks at once, a ``MultitaskMultivariateNormal``."""

    def __init__(self, train_X, train_Y, likelihood, covar_module) -> None:
        super().__init__(train_X, train_Y, likelihood)
        self.mean_module = MultitaskMean(ZeroMean(), num_tasks=train_Y.shape[-1])
        self.covar_module = covar_module

    def forward(self, X):
        return MultitaskMultivariateNormal(self.mean_module(X), self.covar_module(X))


def _exact_gp_posterior(case, covar_module, X):
    likelihood = MultitaskGaussianLikelihood(num_tasks=NUM_TASKS, rank=0, has_task_noise=False).to(
        case.dtype
    )
    likelihood.noise = ETA
    model = _MultitaskExactGP(case.train_X, case.train_Y, likelihood, covar_module).to(case.dtype)
    model.eval()
    with torch.no_grad():
        posterior = model(X)
        return posterior.mean, posterior.covariance_matrix


@pytest.mark.parametrize("name", ("icm", "uniform_0.4", "sum", "independent"))
@pytest.mark.parametrize("batch", ((), (2,)), ids=str)
def test_forward_is_a_sum_of_kronecker_products(name, batch, dtype):
    """kernel(X1, X2) = sum_j k_j(X1, X2) (x) B_j, row a n + i, as GPyTorch's multitask
    kernels lay it out; diag=True gives its diagonal."""
    case = build_case(name, dtype)
    kernel = _kernel(case)
    generator = torch.Generator().manual_seed(0)
    X1 = torch.rand(*batch, 3, 2, generator=generator, dtype=torch.float64).to(dtype)
    X2 = torch.rand(*batch, 4, 2, generator=generator, dtype=torch.float64).to(dtype)
    lazy = kernel(X1, X2)
    assert lazy.shape == (*batch, 3 * NUM_TASKS, 4 * NUM_TASKS)
    assert kernel.num_outputs_per_input(X1, X2) == NUM_TASKS
    operator = lazy.evaluate_kernel()
    terms = operator.linear_ops if len(case.kernels) > 1 else (operator,)
    assert isinstance(operator, SumLinearOperator if len(case.kernels) > 1 else LinearOperator)
    assert len(terms) == len(case.kernels)
    assert all(isinstance(term, KroneckerProductLinearOperator) for term in terms)
    tol = tolerances(dtype)
    for index in np.ndindex(*batch):
        gamma = case.oracle.gamma(_np(X1[index]), _np(X2[index]))  # 3 x n x 4 x n
        dense = _np(operator.to_dense()[index])
        np.testing.assert_allclose(dense, gamma.reshape(3 * NUM_TASKS, 4 * NUM_TASKS), **tol)
        self_gamma = case.oracle.gamma(_np(X1[index]), _np(X1[index])).reshape(9, 9)
        diagonal = kernel(X1, diag=True)[index]
        np.testing.assert_allclose(_np(diagonal), np.diag(self_gamma), **tol)
    with pytest.raises(RuntimeError, match="last_dim_is_batch"):
        kernel.forward(X1, X2, last_dim_is_batch=True)


def test_exact_gp_matches_multitask_kernel_with_an_index_kernel(dtype):
    """One term in a GPyTorch ExactGP: the posterior of MultitaskKernel(k, n) whose
    IndexKernel holds B = F F^T + diag(v), and of the dense oracle."""
    case = build_case("icm", dtype)
    index_kernel = MultitaskKernel(copy.deepcopy(case.kernels[0]), NUM_TASKS, rank=NUM_TASKS)
    index_kernel = index_kernel.to(dtype)
    rng = np.random.default_rng(1)
    task_kernel = index_kernel.task_covar_module
    task_kernel.covar_factor.data = torch.tensor(rng.normal(size=(3, 3)), dtype=dtype)
    task_kernel.var = torch.tensor([0.1, 0.2, 0.3], dtype=dtype)
    B = task_kernel.covar_matrix.to_dense().detach()
    ours = SumOfSeparableKernels(case.kernels[0], B)
    X = torch.rand(4, 2, dtype=torch.float64).to(dtype)
    mean, covariance = _exact_gp_posterior(case, ours, X)
    expected_mean, expected_covariance = _exact_gp_posterior(case, index_kernel, X)
    tol = tolerances(dtype)
    np.testing.assert_allclose(_np(mean), _np(expected_mean), **tol)
    np.testing.assert_allclose(_np(covariance), _np(expected_covariance), **tol)
    oracle = DenseMultiTaskGP([(numpy_kernel(case.kernels[0]), _np(B))], ETA)
    oracle_mean, oracle_covariance = oracle.posterior(_np(case.train_X), _np(case.train_Y), _np(X))
    np.testing.assert_allclose(_np(mean), oracle_mean, **tol)
    np.testing.assert_allclose(_np(covariance), oracle_covariance, **tol)


@pytest.mark.parametrize("name", ("sum", "independent", "uniform_0"))
def test_exact_gp_matches_vector_valued_gp(name, dtype):
    """Sums of separable kernels in a GPyTorch ExactGP: the posterior of the package's
    VectorValuedGP with the same kernel and noise, and of the dense oracle."""
    case = build_case(name, dtype)
    X = torch.rand(2, 4, 2, dtype=torch.float64).to(dtype)  # a batch of 2 x 4 points
    mean, covariance = _exact_gp_posterior(case, _kernel(case), X)
    expected = case.build().posterior(X).mvn
    tol = tolerances(dtype)
    np.testing.assert_allclose(_np(mean), _np(expected.mean), **tol)
    np.testing.assert_allclose(_np(covariance), _np(expected.covariance_matrix), **tol)
    for b in range(2):
        oracle_mean, oracle_covariance = case.oracle.posterior(
            _np(case.train_X), _np(case.train_Y), _np(X[b])
        )
        np.testing.assert_allclose(_np(mean[b]), oracle_mean, **tol)
        np.testing.assert_allclose(_np(covariance[b]), oracle_covariance, **tol)


def test_task_covariance_as_a_linear_operator():
    """A task kernel's structured covar_matrix is accepted as it is, and stored as the
    same dense matrix as the module gives."""
    task_kernel = UniformSimilarityTaskKernel(3, omega=0.25, dtype=torch.float64)
    from_module = SumOfSeparableKernels(make_rbf([0.5]), task_kernel)
    from_operator = SumOfSeparableKernels(make_rbf([0.5]), task_kernel.covar_matrix)
    assert isinstance(task_kernel.covar_matrix, LinearOperator)
    assert torch.equal(from_module.task_covariances, from_operator.task_covariances)
