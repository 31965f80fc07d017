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
