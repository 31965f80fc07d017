"""FixedTaskCovarianceKernel: k(i, j) = B_ij for a fixed PSD B (ICM, paper 000, Sec. 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gpytorch.kernels import MultitaskKernel, RBFKernel
from oracles import numpy_kernel, random_psd

from botorch_mtucb.kernels import FixedTaskCovarianceKernel
from botorch_mtucb.kernels.task_checks import check_task_covariance


def _np(tensor) -> np.ndarray:
    if not isinstance(tensor, torch.Tensor):
        tensor = tensor.to_dense()
    return tensor.detach().to(torch.float64).numpy()


def test_covar_matrix_and_index_inputs(dtype):
    B = random_psd(3, 2, np.random.default_rng(0))  # rank deficient: PSD, not PD
    kernel = FixedTaskCovarianceKernel(torch.tensor(B, dtype=dtype))
    assert kernel.num_tasks == 3
    assert list(kernel.parameters()) == []
    np.testing.assert_allclose(_np(kernel.covar_matrix), B, rtol=1e-6)
    i1, i2 = torch.tensor([[2], [0]]), torch.tensor([[1], [2], [2]])
    np.testing.assert_allclose(_np(kernel(i1, i2)), B[np.ix_([2, 0], [1, 2, 2])], rtol=1e-6)
    # buffers follow .to()
    assert kernel.to(torch.float64).covar_matrix.dtype == torch.float64


def test_batched_covariance():
    rng = np.random.default_rng(1)
    B = np.stack([random_psd(2, 2, rng) for _ in range(3)])
    kernel = FixedTaskCovarianceKernel(torch.tensor(B))
    assert kernel.batch_shape == (3,)
    values = _np(kernel(torch.tensor([[0], [1]]), torch.tensor([[1]])))
    np.testing.assert_allclose(values, B[:, :, 1:2], rtol=1e-12)


def test_inside_multitask_kernel():
    B = random_psd(2, 2, np.random.default_rng(2))
    kernel = MultitaskKernel(RBFKernel(), num_tasks=2).double()
    kernel.task_covar_module = FixedTaskCovarianceKernel(torch.tensor(B))
    X = torch.linspace(0, 1, 3, dtype=torch.float64).unsqueeze(-1)
    K = numpy_kernel(kernel.data_covar_module)(_np(X), _np(X))
    np.testing.assert_allclose(_np(kernel(X, X)), np.kron(K, B), rtol=1e-12)


def test_validate_symmetrizes_within_tolerance():
    B = torch.tensor([[1.0, 0.5], [0.5 + 1e-9, 1.0]], dtype=torch.float64)
    sym = check_task_covariance(B)
    assert torch.equal(sym, sym.T)


@pytest.mark.parametrize(
    "B, error, match",
    [
        (torch.tensor([[1.0, 2.0], [2.0, 1.0]]), ValueError, "positive semi-definite"),
        (torch.tensor([[1.0, 0.3], [0.0, 1.0]]), ValueError, "symmetric"),
        (torch.ones(2, 3), ValueError, "square"),
        (torch.tensor([[1.0, float("nan")], [float("nan"), 1.0]]), ValueError, "finite"),
        ([[1.0, 0.0], [0.0, 1.0]], TypeError, "torch.Tensor"),
    ],
)
def test_bad_task_covariance(B, error, match):
    with pytest.raises(error, match=f"task_covariance must.*{match}|task_covariance.*{match}"):
        FixedTaskCovarianceKernel(B)


def test_wrong_size():
    with pytest.raises(ValueError, match="B must be 3 x 3"):
        check_task_covariance(torch.eye(2), num_tasks=3, name="B")


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 2, 2)])
def test_empty_task_covariance(shape, dtype):
    with pytest.raises(ValueError, match=r"^task_covariance must be n x n with n >= 1"):
        FixedTaskCovarianceKernel(torch.zeros(*shape, dtype=dtype))
    with pytest.raises(ValueError, match=r"^B must be n x n with n >= 1"):
        check_task_covariance(torch.zeros(*shape, dtype=dtype), name="B")


def test_non_real_task_covariance():
    for B in (torch.eye(2, dtype=torch.bool), torch.eye(2, dtype=torch.complex128)):
        with pytest.raises(TypeError, match="^task_covariance must be a real tensor"):
            FixedTaskCovarianceKernel(B)
