"""Reading fitted BoTorch multi-output GPs: the prior and noise covariances of their
training observations against dense NumPy formulas built from the hyperparameters, and
the sum-of-separable-kernels reading (on the user's inputs) against the same formulas."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models import KroneckerMultiTaskGP, ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.models.model import ModelList
from botorch.models.transforms.input import InputPerturbation, Normalize
from botorch_models import CASE_NAMES, build_botorch_case, normalize, np64
from cases import tolerances
from gpytorch.kernels import LinearKernel, RBFKernel
from linear_operator.operators import LinearOperator, MatmulLinearOperator, RootLinearOperator
from oracles import se_kernel

from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.models.botorch_readers import (
    ModelInputKernel,
    read_multi_output_model,
    training_covariances,
)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_training_covariances_match_numpy(name, dtype):
    case = build_botorch_case(name, dtype)
    groups = training_covariances(case.model)
    assert len(groups) == len(case.groups)
    for group, (K, Sigma) in zip(groups, case.groups):
        assert group.kernel_matrix.dtype == dtype and not group.kernel_matrix.requires_grad
        np.testing.assert_allclose(np64(group.kernel_matrix), K, **tolerances(dtype))
        np.testing.assert_allclose(np64(group.noise_covariance), Sigma, **tolerances(dtype))
    assert case.model.training  # the mode is left as it was


def test_batched_models_keep_their_batch_shape(dtype):
    """A batch of 3 two-output SingleTaskGPs and a batch of 2 KroneckerMultiTaskGPs."""
    g = torch.Generator().manual_seed(3)
    X = torch.rand(3, 6, 2, generator=g, dtype=torch.float64).to(dtype)
    Y = torch.randn(3, 6, 2, generator=g, dtype=torch.float64).to(dtype)
    model = SingleTaskGP(X, Y)
    model.covar_module.lengthscale = torch.rand(3, 2, 1, 2, generator=g, dtype=torch.float64) + 0.2
    groups = training_covariances(model)
    assert [tuple(grp.kernel_matrix.shape) for grp in groups] == [(3, 6, 6)] * 2
    ell = np64(model.covar_module.lengthscale)
    for i, group in enumerate(groups):
        for b in range(3):
            K = se_kernel(ell[b, i, 0])(np64(X[b]), np64(X[b]))
            np.testing.assert_allclose(np64(group.kernel_matrix[b]), K, **tolerances(dtype))
    kron = KroneckerMultiTaskGP(X[:2], Y[:2])  # BoTorch cannot evaluate it (upstream)
    with pytest.raises(UnsupportedError, match="one KroneckerMultiTaskGP per batch element"):
        training_covariances(kron)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_read_multi_output_model_reproduces_the_kernel_on_user_inputs(name, dtype):
    """sum_j k_j(x_a, x_b) B_j[i_a, i_b], evaluated on the inputs the user passed, is the
    NumPy prior covariance of the training observations (block-diagonal over groups, in
    VectorValuedGP's order)."""
    case = build_botorch_case(name, dtype)
    data = read_multi_output_model(case.model)
    assert data.num_tasks == case.num_tasks
    tasks = data.observation_tasks
    obs_X = (
        data.train_X
        if data.train_tasks is not None
        else data.train_X.repeat_interleave(data.num_tasks, 0)
    )
    with torch.no_grad():
        K = sum(
            kernel(obs_X).to_dense() * B[tasks][:, tasks]
            for kernel, B in zip(data.data_kernels, data.task_covariances)
        )
    expected = _in_vector_valued_order(case, data)
    np.testing.assert_allclose(np64(K), expected, **tolerances(dtype))
    assert data.train_Y.shape[0] == data.train_X.shape[0]
    assert case.model.training


def _in_vector_valued_order(case, data) -> np.ndarray:
    """The NumPy groups' K, block-diagonal, reordered as ``data`` orders observations."""
    blocks = [K for K, _ in case.groups]
    full = np.zeros((sum(b.shape[0] for b in blocks),) * 2)
    start = 0
    for b in blocks:
        full[start : start + b.shape[0], start : start + b.shape[0]] = b
        start += b.shape[0]
    if data.train_tasks is not None or len(blocks) == 1:
        return full
    # full-vector data of independent single-output groups: point a, task i at a n + i
    n, rows = len(blocks), data.train_X.shape[0]
    order = np.array([i * rows + a for a in range(rows) for i in range(n)])
    return full[np.ix_(order, order)]


def test_structure_of_each_model():
    single = read_multi_output_model(build_botorch_case("two_outputs").model)
    assert single.train_tasks is None and tuple(single.train_Y.shape) == (8, 2)
    assert single.task_covariances.tolist() == [[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]]
    kron = build_botorch_case("kronecker").model
    data = read_multi_output_model(kron)
    assert len(data.data_kernels) == 1 and data.train_tasks is None
    B = np64(kron.covar_module.task_covar_module.covar_matrix.to_dense())
    np.testing.assert_allclose(np64(data.task_covariances[0]), B, rtol=1e-12)
    np.testing.assert_allclose(np64(data.train_Y), np64(kron.train_targets), rtol=1e-12)
    multi = read_multi_output_model(build_botorch_case("multitask").model)
    assert multi.train_tasks.tolist() == [0, 1, 2, 0, 1, 2, 1, 1]
    assert tuple(multi.train_X.shape) == (8, 2)  # the task column removed
    own = read_multi_output_model(build_botorch_case("list_own_inputs").model)
    assert own.train_tasks.tolist() == [0] * 8 + [1] * 5
    assert not read_multi_output_model(
        build_botorch_case("kronecker_rank1").model
    ).noise_is_diagonal


def test_the_prior_mean_is_read():
    case = build_botorch_case("two_outputs")
    case.model.mean_module.constant.data = torch.tensor([0.5, -1.5], dtype=torch.float64)
    data = read_multi_output_model(case.model)
    assert data.prior_mean.tolist() == [0.5, -1.5] * 8


def test_model_input_kernel_applies_the_transform_and_stays_in_eval_mode():
    case = build_botorch_case("single")
    data = read_multi_output_model(case.model)
    (kernel,) = data.data_kernels
    assert isinstance(kernel, ModelInputKernel)
    kernel.train()
    assert not kernel.input_transform.training
    X = data.train_X
    ell = np64(case.model.covar_module.lengthscale).reshape(-1)
    Z = normalize(np64(X))
    with torch.no_grad():
        np.testing.assert_allclose(np64(kernel(X).to_dense()), se_kernel(ell)(Z, Z), rtol=1e-12)
        np.testing.assert_allclose(np64(kernel(X, diag=True)), np.ones(8), rtol=1e-12)


def test_model_input_kernel_keeps_the_base_kernels_structure(dtype):
    """forward returns the base kernel's LinearOperator (a low-rank LinearKernel stays a
    RootLinearOperator / MatmulLinearOperator), not a densified matrix; its entries are
    k(T(x), T(x')) computed densely."""
    transform = Normalize(2, bounds=torch.tensor([[0.0, 0.0], [2.0, 4.0]], dtype=dtype)).eval()
    base = LinearKernel().to(dtype)
    base.variance = 1.0
    kernel = ModelInputKernel(base, transform)
    X1 = torch.rand(5, 2, dtype=torch.float64).to(dtype)
    X2 = torch.rand(3, 2, dtype=torch.float64).to(dtype)
    tol = {"rtol": 1e-12} if dtype == torch.float64 else {"rtol": 1e-5}
    for x2 in (X1, X2):
        with torch.no_grad():
            operator = kernel(X1, x2).evaluate_kernel()
            direct = kernel.forward(X1, x2)
            expected = np64(transform(X1)) @ np64(transform(x2)).T  # variance 1
            assert isinstance(direct, LinearOperator)
            assert isinstance(operator, (RootLinearOperator, MatmulLinearOperator))
            np.testing.assert_allclose(np64(operator.to_dense()), expected, **tol)
            np.testing.assert_allclose(np64(direct.to_dense()), expected, **tol)


def test_models_that_cannot_be_read():
    X = torch.rand(6, 2, dtype=torch.float64)
    Y = X.sum(-1, keepdim=True)
    with pytest.raises(TypeError, match="fitted BoTorch exact GP.*got object"):
        training_covariances(object())
    vector = VectorValuedGP(X, torch.cat([Y, Y], -1), RBFKernel(), torch.eye(2), 0.1)
    with pytest.raises(TypeError, match="got VectorValuedGP"):
        read_multi_output_model(vector)
    with pytest.raises(TypeError, match="got VectorValuedGP"):
        training_covariances(ModelList(SingleTaskGP(X, Y), vector))
    with pytest.raises(ValueError, match="must not be batched"):
        read_multi_output_model(SingleTaskGP(X.expand(2, 6, 2), Y.expand(2, 6, 1)))
    with pytest.raises(ValueError, match="must not be batched"):
        read_multi_output_model(
            ModelListGP(SingleTaskGP(X, Y), SingleTaskGP(X.expand(2, 6, 2), Y.expand(2, 6, 1)))
        )
    perturbed = SingleTaskGP(X, Y, input_transform=InputPerturbation(torch.zeros(3, 2)))
    with pytest.raises(ValueError, match="several points"):
        read_multi_output_model(perturbed)
    train_only = SingleTaskGP(X, Y, input_transform=Normalize(2, transform_on_eval=False))
    with pytest.raises(TypeError, match="maps training and test points alike"):
        read_multi_output_model(train_only)
    Xt = torch.cat([X, torch.tensor([[0.0], [1.0]]).repeat(3, 1).double()], -1)
    sees_tasks = MultiTaskGP(Xt, Y, task_feature=-1, covar_module=RBFKernel(active_dims=[0, 2]))
    with pytest.raises(ValueError, match="must not see the task column"):
        read_multi_output_model(sees_tasks)
