"""GrowingCholesky: in-place bordered updates equal a Cholesky factorization from scratch."""

import numpy as np
import pytest
import torch

from botorch_mtucb.utils.linalg import GrowingCholesky


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
