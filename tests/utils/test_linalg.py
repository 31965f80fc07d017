"""GrowingCholesky: in-place bordered updates equal a Cholesky factorization from scratch;
cholesky_factor reports jitter that is large against the regularization."""

import re
import warnings

import numpy as np
import pytest
import torch
from linear_operator.utils.errors import NotPSDError
from linear_operator.utils.warnings import NumericalWarning

from botorch_mtucb.utils.linalg import CholeskyJitterWarning, GrowingCholesky, cholesky_factor


def random_spd(size, batch=(), dtype=torch.float64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    A = torch.randn(*batch, size, size + 3, generator=generator, dtype=dtype)
    return A @ A.transpose(-1, -2) / size + 0.5 * torch.eye(size, dtype=dtype)


@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize(
    "blocks", [[0, 5, 1, 1, 7], [40, 1, 30], [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]]
)
def test_appends_equal_a_factorization_from_scratch(batch, blocks):
    total = sum(blocks)
    A = random_spd(total, batch)
    factor = GrowingCholesky(A[..., : blocks[0], : blocks[0]])
    start = blocks[0]
    for size in blocks[1:]:
        stop = start + size
        factor.append(A[..., :start, start:stop], A[..., start:stop, start:stop])
        start = stop
        expected = np.linalg.cholesky(A[..., :stop, :stop].numpy())
        np.testing.assert_allclose(factor.factor.numpy(), expected, rtol=1e-10, atol=1e-12)
        assert factor.buffer.shape[-1] >= stop
    # The unused part of the buffer stays the identity with zero off-diagonal blocks.
    capacity = factor.buffer.shape[-1]
    pad = factor.buffer[..., total:, :]
    eye = torch.eye(capacity, dtype=A.dtype)[total:]
    assert torch.equal(pad, eye.expand_as(pad))
    sign, logdet = np.linalg.slogdet(A.numpy())
    np.testing.assert_allclose(factor.half_log_det().numpy(), 0.5 * logdet, rtol=1e-10)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-9), (torch.float32, 1e-3)])
@pytest.mark.parametrize("columns", [1, 3, 20])
def test_solves(dtype, tol, columns):
    A = random_spd(25, (2,), dtype=dtype)
    factor = GrowingCholesky(A[..., :10, :10])
    factor.append(A[..., :10, 10:], A[..., 10:, 10:])
    rhs = torch.randn(2, 25, columns, dtype=dtype)
    L = np.linalg.cholesky(A.double().numpy())
    np.testing.assert_allclose(
        factor.solve(rhs).double().numpy(),
        np.linalg.solve(L, rhs.double().numpy()),
        rtol=tol,
        atol=tol,
    )
    np.testing.assert_allclose(
        factor.solve_spd(rhs).double().numpy(),
        np.linalg.solve(A.double().numpy(), rhs.double().numpy()),
        rtol=tol * 10,
        atol=tol * 10,
    )


def test_empty_start_and_explicit_capacity():
    A = random_spd(6)
    factor = GrowingCholesky(A[:0, :0], capacity=2)
    assert factor.size == 0 and factor.half_log_det() == 0
    factor.append(A[:0, :6], A)
    np.testing.assert_allclose(factor.factor.numpy(), np.linalg.cholesky(A.numpy()), rtol=1e-12)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)], ids=str)
def test_known_factor_rows_equal_a_factorization_from_scratch(dtype, tol, batch):
    # Rows [W, L_S] taken from a dense float64 factor and written one block at a time
    # (through the first growth of the buffer) rebuild that factor exactly.
    A = random_spd(50, batch, seed=3)
    L = torch.linalg.cholesky(A)
    factor = GrowingCholesky(A[..., :4, :4].to(dtype), capacity=5)
    start = 4
    for size in (1, 3, 1, 20, 21):
        stop = start + size
        rows = L[..., start:stop, :stop].to(dtype)
        factor.append_factor_rows(rows[..., :start], rows[..., start:])
        start = stop
        assert factor.size == stop and factor.capacity >= stop
    assert factor.factor.dtype == dtype and factor.factor.shape == (*batch, 50, 50)
    np.testing.assert_allclose(factor.factor.double().numpy(), L.numpy(), rtol=tol, atol=tol)
    rhs = torch.randn(*batch, 50, 2, dtype=torch.float64)
    np.testing.assert_allclose(
        factor.solve(rhs.to(dtype)).double().numpy(),
        torch.linalg.solve_triangular(L, rhs, upper=False).numpy(),
        rtol=100 * tol,
        atol=100 * tol,
    )


def test_append_is_append_factor_rows_with_the_schur_complement():
    A = random_spd(12, (2,), seed=4)
    grown, written = GrowingCholesky(A[..., :5, :5]), GrowingCholesky(A[..., :5, :5])
    lower_left = written.solve(A[..., :5, 5:]).transpose(-1, -2)
    grown.append(A[..., :5, 5:], A[..., 5:, 5:])
    schur = A[..., 5:, 5:] - lower_left @ lower_left.transpose(-1, -2)
    written.append_factor_rows(lower_left, torch.linalg.cholesky(schur))
    np.testing.assert_allclose(written.factor.numpy(), grown.factor.numpy(), rtol=1e-12)


def test_append_factor_rows_checks_shapes_and_grows_geometrically():
    factor = GrowingCholesky(torch.eye(3, dtype=torch.float64), capacity=4)
    with pytest.raises(ValueError, match="lower_left must be"):
        factor.append_factor_rows(torch.zeros(1, 2), torch.ones(1, 1))
    with pytest.raises(ValueError, match="lower_left must be"):
        factor.append_factor_rows(torch.zeros(2, 3), torch.ones(1, 1))
    factor.append_factor_rows(torch.zeros(1, 3), torch.ones(1, 1))
    assert factor.capacity == 4
    factor.append_factor_rows(torch.zeros(1, 4), torch.ones(1, 1))
    assert factor.capacity == 5  # max(5, ceil(1.25 * 4))
    factor.append_factor_rows(torch.zeros(1, 5), torch.ones(1, 1))
    assert factor.capacity == 7  # ceil(1.25 * 5)
    assert torch.equal(factor.factor, torch.eye(6, dtype=torch.float64))


def near_duplicate_gram(dtype, lam, size=60, seed=0):
    """An RBF Gram matrix of pairs of points 1e-4 apart, plus ``lam I``, in ``dtype``."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.rand(size // 2, 1, generator=generator, dtype=torch.float64)
    x = torch.cat([x, x + 1e-4]).to(dtype)
    gram = torch.exp(-0.5 * (x - x.T).square() / 0.2**2)
    return gram + lam * torch.eye(size, dtype=dtype)


def caught_warnings(function):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function()
    return result, caught


def test_float32_jitter_far_above_the_regularization_warns():
    """Issue 11 item 4: in float32, GPyTorch's jitter (1e-6 and up) dwarfs lambda = 1e-8."""
    matrix = near_duplicate_gram(torch.float32, 1e-8)
    assert int(torch.linalg.cholesky_ex(matrix).info) > 0  # the premise: jitter is needed
    factor, caught = caught_warnings(lambda: cholesky_factor(matrix, regularization=1e-8))
    ours = [w for w in caught if issubclass(w.category, CholeskyJitterWarning)]
    assert len(ours) == 1
    message = str(ours[0].message)
    assert "float32 60 x 60" in message and "not the theorems'" in message
    assert "float64" in message
    # The jitter the message reports is the one in the factor (diag(L L^T) - diag(A)),
    # computed here on another float32 round-off path: equal to a relative 25%, since
    # both differ from the jitter GPyTorch added by round-off of order eps * ||A||.
    reported = float(re.search(r"jitter ([0-9.e+-]+)", message).group(1))
    jitter = float((factor.double() @ factor.double().T - matrix.double()).diagonal().max())
    assert reported == pytest.approx(jitter, rel=0.25)
    assert jitter >= 0.9e-6  # GPyTorch's first float32 jitter, 1e-6


def test_no_warning_for_a_positive_definite_matrix_and_the_same_factor():
    matrix = near_duplicate_gram(torch.float64, 1e-2)
    factor, caught = caught_warnings(lambda: cholesky_factor(matrix, regularization=1e-2))
    assert not caught
    np.testing.assert_array_equal(factor.numpy(), torch.linalg.cholesky(matrix).numpy())


def test_small_jitter_keeps_gpytorchs_own_warning_only():
    """A singular matrix whose jitter (1e-8 in float64) is below 1% of lambda = 1e-3."""
    matrix = torch.ones(3, 3, dtype=torch.float64)
    factor, caught = caught_warnings(lambda: cholesky_factor(matrix, regularization=1e-3))
    assert not any(issubclass(w.category, CholeskyJitterWarning) for w in caught)
    assert any(issubclass(w.category, NumericalWarning) for w in caught)
    assert float((factor @ factor.T - matrix).diagonal().max()) < 1e-5


def test_growing_factor_warns_when_an_appended_row_needs_jitter():
    x = torch.cat([torch.arange(10.0), torch.tensor([1e-5])]).reshape(-1, 1)  # 10 ~ 0
    matrix = torch.exp(-0.5 * (x - x.T).square() / 0.2**2) + 1e-8 * torch.eye(11)
    factor = GrowingCholesky(matrix[:10, :10], regularization=1e-8)  # far apart: no jitter
    with pytest.warns(CholeskyJitterWarning, match="float32 11 x 11"):
        factor.append(matrix[:10, 10:], matrix[10:, 10:])  # a near-duplicate of point 0


def test_not_positive_definite_names_dtype_and_fix():
    matrix = -torch.eye(2)
    with pytest.raises(NotPSDError, match=r"float32 2 x 2 matrix .* use float64"):
        cholesky_factor(matrix, regularization=1.0)


@pytest.mark.parametrize("dtype", (torch.float64, torch.float32))
def test_blocks_built_in_place_equal_the_stacked_factorization(dtype):
    """Issue 14, item 3: ``from_blocks`` (one matrix at a time, in the buffer) gives the
    constructor's factor of the stacked matrices, bit for bit, and the same buffer."""
    generator = torch.Generator().manual_seed(4)
    A = torch.randn(7, 7, generator=generator, dtype=torch.float64).to(dtype)
    gram = A @ A.T
    scales = [0.5, 2.0, 3.5]
    stacked = torch.stack([s * gram + 0.1 * torch.eye(7, dtype=dtype) for s in scales])

    def fill(block, g):
        block.copy_(gram).mul_(scales[g]).diagonal().add_(0.1)

    built = GrowingCholesky.from_blocks(fill, 3, 7, gram, regularization=0.1)
    reference = GrowingCholesky(stacked, regularization=0.1)
    assert built.size == 7 and built.buffer.shape == reference.buffer.shape
    assert built.buffer.dtype == dtype
    assert torch.equal(built.buffer, reference.buffer)
    built.append(stacked[:, :7, :1], stacked[:, :1, :1] + 1.0)  # it grows as any factor
    reference.append(stacked[:, :7, :1], stacked[:, :1, :1] + 1.0)
    assert torch.equal(built.factor, reference.factor)
    empty = GrowingCholesky.from_blocks(fill, 3, 0, gram, capacity=4)
    assert empty.size == 0 and torch.equal(empty.buffer, torch.eye(4, dtype=dtype).expand(3, 4, 4))


def test_blocks_built_in_place_report_jitter():
    ones = torch.ones(2, 2)  # singular in float32: jitter far above the regularization
    with pytest.warns(CholeskyJitterWarning, match="jitter"):
        GrowingCholesky.from_blocks(
            lambda block, g: block.copy_(ones).diagonal().add_(1e-8),
            2,
            2,
            ones,
            regularization=1e-8,
        )
