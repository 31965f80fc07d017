"""UniformSimilarityTaskKernel: B = omega I + (1 - omega) 11^T / n (paper 000, Sec. 2)."""

from __future__ import annotations

import math
import unittest
from unittest import mock

import numpy as np
import pytest
import scipy.linalg
import torch
from gpytorch.kernels import MultitaskKernel, RBFKernel
from linear_operator.operators import KroneckerProductLinearOperator
from linear_operator.test.linear_operator_test_case import LinearOperatorTestCase
from oracles import numpy_kernel, uniform_similarity

from botorch_mtucb.kernels import UniformSimilarityLinearOperator, UniformSimilarityTaskKernel
from botorch_mtucb.kernels.uniform_similarity import helmert_basis


def _np(tensor) -> np.ndarray:
    if not isinstance(tensor, torch.Tensor):
        tensor = tensor.to_dense()
    return tensor.detach().to(torch.float64).numpy()


def _tol(dtype):
    return (
        {"rtol": 1e-12, "atol": 1e-12} if dtype == torch.float64 else {"rtol": 1e-6, "atol": 1e-6}
    )


@pytest.mark.parametrize("omega", (0.0, 0.3, 1.0))
@pytest.mark.parametrize("n", (1, 2, 4))
def test_covar_matrix_and_eigenvalues(n, omega, dtype):
    kernel = UniformSimilarityTaskKernel(n).to(dtype)
    kernel.omega = omega  # set after the cast so that float64 holds omega exactly
    B = kernel.covar_matrix
    assert B.shape == (n, n) and B.dtype == dtype
    assert float(kernel.omega.detach()) == pytest.approx(omega, rel=1e-7)
    if omega in (0.0, 1.0):
        assert float(kernel.omega.detach()) == omega  # the end points are exact
    np.testing.assert_allclose(_np(B), uniform_similarity(n, omega), **_tol(dtype))
    eigenvalues = np.linalg.eigvalsh(_np(B))
    expected = np.sort(np.array([1.0] + [omega] * (n - 1)))
    np.testing.assert_allclose(eigenvalues, expected, rtol=1e-6, atol=1e-6)
    # 1 / sqrt(n) is the eigenvector of eigenvalue 1
    ones = np.ones(n) / math.sqrt(n)
    np.testing.assert_allclose(_np(B) @ ones, ones, rtol=1e-6)


@pytest.mark.parametrize("b", (0.0, 0.5, 3.0, math.inf))
def test_from_b(b):
    kernel = UniformSimilarityTaskKernel.from_b(3, b)
    expected = 0.0 if math.isinf(b) else 1.0 / (1.0 + b)
    assert float(kernel.omega.detach()) == pytest.approx(expected, rel=1e-6, abs=0)
    if b == 0:
        assert float(kernel.omega.detach()) == 1.0
        np.testing.assert_array_equal(_np(kernel.covar_matrix), np.eye(3))
    if math.isinf(b):
        assert float(kernel.omega.detach()) == 0.0


def test_batch_shape(dtype):
    omega = torch.tensor([[0.1, 0.5, 0.9], [0.0, 1.0, 0.25]], dtype=dtype)
    kernel = UniformSimilarityTaskKernel(3, batch_shape=torch.Size([2, 3])).to(dtype)
    kernel.omega = omega
    B = kernel.covar_matrix
    assert B.shape == (2, 3, 3, 3)
    for index in np.ndindex(2, 3):
        np.testing.assert_allclose(
            _np(B[index]), uniform_similarity(3, float(omega[index])), **_tol(dtype)
        )
    i1 = torch.tensor([[0], [2]])
    i2 = torch.tensor([[1], [2], [0]])
    values = _np(kernel(i1, i2).to_dense())
    assert values.shape == (2, 3, 2, 3)
    for index in np.ndindex(2, 3):
        expected = uniform_similarity(3, float(omega[index]))[np.ix_([0, 2], [1, 2, 0])]
        np.testing.assert_allclose(values[index], expected, **_tol(dtype))


def test_index_inputs_and_omega_setter():
    kernel = UniformSimilarityTaskKernel(4).double()
    kernel.omega = 0.6
    i1 = torch.tensor([[0], [3], [1]])
    i2 = torch.tensor([[3], [3]])
    np.testing.assert_allclose(
        _np(kernel(i1, i2)), uniform_similarity(4, 0.6)[np.ix_([0, 3, 1], [3, 3])], rtol=1e-12
    )
    kernel.omega = 0.2
    np.testing.assert_allclose(_np(kernel.covar_matrix), uniform_similarity(4, 0.2), rtol=1e-12)


def test_inside_gpytorch_multitask_kernel(dtype):
    n, omega = 3, 0.35
    kernel = MultitaskKernel(RBFKernel(), num_tasks=n).to(dtype)
    kernel.data_covar_module.lengthscale = torch.tensor(0.4, dtype=dtype)
    kernel.task_covar_module = UniformSimilarityTaskKernel(n).to(dtype)
    kernel.task_covar_module.omega = omega
    X = torch.rand(4, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    X = X.to(dtype)
    K = numpy_kernel(kernel.data_covar_module)(_np(X), _np(X))
    # MultitaskKernel is (q n) x (q n), interleaved: kron(K, B)
    expected = np.kron(K, uniform_similarity(n, omega))
    np.testing.assert_allclose(_np(kernel(X, X)), expected, **_tol(dtype))


def test_task_factor_of_product_kernel_with_index_inputs(dtype):
    n, omega = 3, 0.7
    data = RBFKernel(active_dims=[0, 1], ard_num_dims=2).to(dtype)
    data.lengthscale = torch.tensor([0.3, 0.6], dtype=dtype)
    task_kernel = UniformSimilarityTaskKernel(n, active_dims=[2]).to(dtype)
    task_kernel.omega = omega
    product = data * task_kernel
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(5, 2, generator=generator, dtype=torch.float64)
    tasks = torch.tensor([0, 2, 1, 2, 0])
    X = torch.cat([x, tasks.unsqueeze(-1).double()], dim=-1).to(dtype)
    K = numpy_kernel(data)(_np(X[:, :2]), _np(X[:, :2]))
    B = uniform_similarity(n, omega)
    expected = K * B[np.ix_(tasks.numpy(), tasks.numpy())]
    np.testing.assert_allclose(_np(product(X, X)), expected, **_tol(dtype))


@pytest.mark.parametrize("omega", (-0.1, 1.5, float("nan"), float("inf")))
def test_bad_omega(omega):
    with pytest.raises(ValueError, match="omega must lie in \\[0, 1\\]"):
        UniformSimilarityTaskKernel(3, omega)
    kernel = UniformSimilarityTaskKernel(3, 0.5)
    with pytest.raises(ValueError, match="omega"):
        kernel.omega = omega


@pytest.mark.parametrize("b", (-1.0, float("nan")))
def test_bad_b(b):
    with pytest.raises(ValueError, match="b must be >= 0"):
        UniformSimilarityTaskKernel.from_b(3, b)


def test_bad_num_tasks():
    with pytest.raises(ValueError, match="num_tasks must be >= 1"):
        UniformSimilarityTaskKernel(0, 0.5)
    with pytest.raises(TypeError, match="num_tasks must be an int"):
        UniformSimilarityTaskKernel(2.0, 0.5)


@pytest.mark.parametrize("b", ("1", "abc", b"1", None, True, 1 + 2j, torch.tensor(True)))
def test_non_real_b(b):
    """Strings (even "1"), None, booleans and complex numbers are rejected, naming b."""
    with pytest.raises(TypeError, match=r"^b must be a real number"):
        UniformSimilarityTaskKernel.from_b(3, b)


def test_real_types_of_b(dtype):
    """NumPy scalars, ints and 0-d tensors give omega = 1 / (1 + b) (paper 001, Sec. 3)."""
    for b in (np.float64(1.5), torch.tensor(1.5, dtype=dtype), 3, torch.tensor([1.5])):
        kernel = UniformSimilarityTaskKernel.from_b(3, b, dtype=dtype)
        expected = 1.0 / (1.0 + float(b))
        assert kernel.omega.dtype == dtype
        np.testing.assert_allclose(_np(kernel.omega), expected, **_tol(dtype))
    assert float(UniformSimilarityTaskKernel.from_b(3, math.inf, dtype=dtype).omega) == 0.0


@pytest.mark.parametrize("omega", ("0.5", None, True, 0.5j, torch.tensor(True)))
def test_non_real_omega(omega):
    with pytest.raises(TypeError, match=r"^omega must be a real number"):
        UniformSimilarityTaskKernel(3, omega)
    kernel = UniformSimilarityTaskKernel(3, 0.5)
    with pytest.raises(TypeError, match=r"^omega must be a real number"):
        kernel.omega = omega


@pytest.mark.parametrize("num_tasks", ("3", None, True, 3.0, 3 + 0j))
def test_non_int_num_tasks(num_tasks):
    with pytest.raises(TypeError, match=r"^num_tasks must be an int"):
        UniformSimilarityTaskKernel(num_tasks, 0.5)
    with pytest.raises(TypeError, match=r"^num_tasks must be an int"):
        UniformSimilarityTaskKernel.from_b(num_tasks, 1.0)
    assert UniformSimilarityTaskKernel(np.int64(3), 0.5).num_tasks == 3


def _no_eigh(*args, **kwargs):
    raise AssertionError("torch.linalg.eigh was called")


@pytest.mark.parametrize("n", (1, 3, 6))
def test_covar_matrix_is_a_structured_operator_with_the_same_entries(n, dtype):
    """covar_matrix is the closed-form operator; densified it holds exactly the bits of
    omega * I + (1 - omega) * full(1 / n), the dense B the kernel always built."""
    kernel = UniformSimilarityTaskKernel(n, batch_shape=torch.Size([4]), dtype=dtype)
    kernel.omega = torch.tensor([0.0, 0.37, 0.8123456789, 1.0], dtype=dtype)
    B = kernel.covar_matrix
    assert isinstance(B, UniformSimilarityLinearOperator) and B.shape == (4, n, n)
    omega = kernel.omega.detach()[:, None, None]
    eye = torch.eye(n, dtype=dtype)
    dense = omega * eye + (1.0 - omega) * torch.full_like(eye, 1.0 / n)
    assert torch.equal(B.to_dense().detach(), dense)
    assert torch.equal(kernel._eval_covar_matrix().detach(), dense)
    assert torch.equal(B.diagonal(dim1=-1, dim2=-2).detach(), dense.diagonal(dim1=-2, dim2=-1))
    rows, cols = torch.tensor([0, n - 1, 0]), torch.tensor([0, 0, n - 1])
    assert torch.equal(B[2, rows, cols].detach(), dense[2, rows, cols])
    for index in range(4):
        expected = uniform_similarity(n, float(omega[index]))
        np.testing.assert_allclose(_np(B[index]), expected, **_tol(dtype))


@pytest.mark.parametrize("n", (1, 2, 5))
@pytest.mark.parametrize("batch", ((), (2, 3)), ids=str)
def test_closed_form_products_and_eigen_system(n, batch, dtype):
    """B v, eigenvalues (omega, ..., omega, 1) and orthonormal eigenvectors (the Helmert
    basis, 1 / sqrt(n) last) without torch.linalg.eigh, also inside a Kronecker product."""
    generator = torch.Generator().manual_seed(0)
    omega = torch.rand(batch, generator=generator, dtype=torch.float64).to(dtype)
    B = UniformSimilarityLinearOperator(omega, n)
    dense = np.stack([uniform_similarity(n, float(w)) for w in omega.reshape(-1)])
    dense = dense.reshape(*batch, n, n)
    V = torch.randn(*batch, n, 2, generator=generator, dtype=torch.float64).to(dtype)
    np.testing.assert_allclose(_np(B @ V), dense @ _np(V), **_tol(dtype))
    if not batch:
        np.testing.assert_allclose(_np(B @ V[:, 0]), dense @ _np(V[:, 0]), **_tol(dtype))
    with mock.patch("torch.linalg.eigh", new=_no_eigh):
        eigenvalues, eigenvectors = B.eigh()
        kron_values, kron_vectors = KroneckerProductLinearOperator(B, B).eigh()
    expected = torch.cat([omega.unsqueeze(-1).expand(*batch, n - 1), torch.ones(*batch, 1)], -1)
    assert torch.equal(eigenvalues, expected.to(dtype))
    U = _np(eigenvectors)
    np.testing.assert_allclose(np.swapaxes(U, -1, -2) @ U, np.broadcast_to(np.eye(n), U.shape),
                               **_tol(dtype))  # fmt: skip
    np.testing.assert_allclose(U * _np(eigenvalues)[..., None, :] @ np.swapaxes(U, -1, -2),
                               dense, **_tol(dtype))  # fmt: skip
    np.testing.assert_allclose(U[..., -1], np.full((*batch, n), 1 / math.sqrt(n)), **_tol(dtype))
    W = _np(kron_vectors)
    kron = np.einsum("...ij,...kl->...ikjl", dense, dense).reshape(*batch, n * n, n * n)
    np.testing.assert_allclose(W * _np(kron_values)[..., None, :] @ np.swapaxes(W, -1, -2),
                               kron, **_tol(dtype))  # fmt: skip


@pytest.mark.parametrize("n", (1, 2, 4, 7))
def test_helmert_basis_against_scipy(n, dtype):
    """Columns: SciPy's Helmert rows 1..n-1, then its first row 1 / sqrt(n)."""
    H = helmert_basis(n, dtype=dtype)
    assert H.dtype == dtype and H.shape == (n, n)
    rows = scipy.linalg.helmert(n, full=True)
    expected = np.concatenate([rows[1:], rows[:1]]).T
    np.testing.assert_allclose(_np(H), expected, **_tol(dtype))


def test_operator_bad_input():
    with pytest.raises(TypeError, match="omega must be a floating tensor"):
        UniformSimilarityLinearOperator(0.5, 3)
    with pytest.raises(TypeError, match="omega must be a floating tensor"):
        UniformSimilarityLinearOperator(torch.tensor(1), 3)
    with pytest.raises(ValueError, match="num_tasks must be >= 1"):
        UniformSimilarityLinearOperator(torch.tensor(0.5), 0)
    with pytest.raises(TypeError, match="num_tasks must be an int"):
        UniformSimilarityLinearOperator(torch.tensor(0.5), 2.0)


class TestUniformSimilarityLinearOperator(LinearOperatorTestCase, unittest.TestCase):
    """linear_operator's own checks of a LinearOperator against its dense matrix
    (products, indexing, batch operations, solves, log-determinants, roots, gradients)."""

    seed = 0
    should_call_cg = False  # n is small: Cholesky, as for any small operator
    should_call_lanczos = False
    should_call_lanczos_diagonalization = False  # the closed form

    def create_linear_op(self) -> UniformSimilarityLinearOperator:
        omega = torch.tensor([[0.2, 0.5, 0.9], [0.35, 0.6, 0.75]], requires_grad=True)
        return UniformSimilarityLinearOperator(omega, 5)

    def evaluate_linear_op(self, linear_op: UniformSimilarityLinearOperator) -> torch.Tensor:
        omega, n = linear_op.omega[..., None, None], linear_op.num_tasks
        return omega * torch.eye(n) + (1.0 - omega) * torch.ones(n, n) / n

    def test_eigh(self) -> None:
        """(linear_operator's test_eigh compares eigenvectors whenever eigh's rounded
        eigenvalues differ, which they do for the repeated eigenvalue omega.)"""
        linear_op = self.create_linear_op()
        evaluated = self.evaluate_linear_op(linear_op)
        eigenvalues, eigenvectors = torch.linalg.eigh(linear_op)
        U = eigenvectors.to_dense()
        self.assertAllClose(eigenvalues, torch.linalg.eigvalsh(evaluated), rtol=1e-5, atol=1e-6)
        self.assertAllClose(U * eigenvalues.unsqueeze(-2) @ U.mT, evaluated, rtol=1e-5, atol=1e-6)
        eigenvalues.sum().backward()  # d/d omega of (n - 1) omega + 1
        self.assertAllClose(linear_op.omega.grad, torch.full((2, 3), 4.0))


class TestUnbatchedUniformSimilarityLinearOperator(TestUniformSimilarityLinearOperator):
    def create_linear_op(self) -> UniformSimilarityLinearOperator:
        return UniformSimilarityLinearOperator(torch.tensor(0.3, requires_grad=True), 4)

    def test_eigh(self) -> None:
        linear_op = self.create_linear_op()
        eigenvalues, eigenvectors = torch.linalg.eigh(linear_op)
        U = eigenvectors.to_dense()
        evaluated = self.evaluate_linear_op(linear_op)
        self.assertAllClose(U * eigenvalues @ U.mT, evaluated, rtol=1e-5, atol=1e-6)
        self.assertAllClose(eigenvalues, torch.tensor([0.3, 0.3, 0.3, 1.0]))
