"""eigen_groups: the task covariance's eigen-system, repeated eigenvalues grouped
(paper 000, Section 3.3), from ``torch.linalg.eigh`` or an operator's closed form."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
import torch
from oracles import uniform_similarity

from botorch_mtucb.kernels import UniformSimilarityLinearOperator, UniformSimilarityTaskKernel
from botorch_mtucb.models.base import eigen_groups


def _no_eigh(*args, **kwargs):
    raise AssertionError("torch.linalg.eigh was called")


@pytest.mark.parametrize("omega", (0.0, 0.4, 1.0))
@pytest.mark.parametrize("n", (1, 4))
def test_closed_form_for_the_uniform_similarity_operator(n, omega, dtype):
    """The operator's eigen-system without eigh: xi = (omega, ..., omega, 1) exactly (zero
    for omega = 0), one group per distinct value, U B U^T = B as NumPy builds it; the
    dense route finds the same values and groups."""
    B = UniformSimilarityTaskKernel(n, omega, dtype=dtype).covar_matrix.detach()
    with mock.patch("torch.linalg.eigh", new=_no_eigh):
        xi, U, group_of, group_xi = eigen_groups(B)
    expected_xi = torch.tensor([omega] * (n - 1) + [1.0], dtype=dtype)
    assert torch.equal(xi, expected_xi)
    distinct = sorted({v for v in expected_xi.tolist() if v > 0})
    assert torch.equal(group_xi, torch.tensor(distinct, dtype=dtype))
    assert group_of.tolist() == [distinct.index(v) if v > 0 else 0 for v in expected_xi.tolist()]
    dense = uniform_similarity(n, float(B.omega))
    U64 = U.double().numpy()
    tol = {"rtol": 1e-12, "atol": 1e-12} if dtype == torch.float64 else {"atol": 1e-6}
    np.testing.assert_allclose(U64 @ np.diag(xi.double().numpy()) @ U64.T, dense, **tol)
    np.testing.assert_allclose(U64.T @ U64, np.eye(n), **tol)
    xi_dense, _, group_of_dense, group_xi_dense = eigen_groups(B.to_dense())
    np.testing.assert_allclose(xi_dense.double().numpy(), expected_xi.double().numpy(), **tol)
    assert group_of_dense.tolist() == group_of.tolist()
    np.testing.assert_allclose(group_xi_dense.double().numpy(), distinct, **tol)


def test_operator_in_half_precision_is_refused():
    B = UniformSimilarityLinearOperator(torch.tensor(0.5, dtype=torch.float16), 3)
    with pytest.raises(TypeError, match="task_covariance must be float32 or float64"):
        eigen_groups(B)
