"""information_gain = 1/2 log det(I + K / eta) and its chain rule (paper 000, Sec. 4 and
Lemma 4): checked against NumPy's slogdet and sequential posterior variances."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import CASES, build_case, tolerances
from oracles import se_kernel

from botorch_mtucb.confidence import information_gain, information_gain_increment


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _kernel_matrices(batch, t, rng):
    X = rng.uniform(size=(*batch, t, 2))
    k = se_kernel([0.3, 0.4], outputscale=1.7)
    K = np.zeros((*batch, t, t))
    for index in np.ndindex(*batch):
        K[index] = k(X[index], X[index])
    return K


@pytest.mark.parametrize("batch", ((), (3,), (2, 2)), ids=str)
@pytest.mark.parametrize("t", (0, 1, 6))
def test_information_gain_matches_slogdet(batch, t, dtype):
    eta = 0.3
    K = _kernel_matrices(batch, t, np.random.default_rng(t))
    value = information_gain(torch.tensor(K, dtype=dtype), eta)
    assert value.shape == batch and value.dtype == dtype
    expected = 0.5 * np.linalg.slogdet(np.eye(t) + K / eta)[1] if t else np.zeros(batch)
    np.testing.assert_allclose(_np(value), expected, **tolerances(dtype))


def test_information_gain_of_a_singular_matrix():
    """A rank-one K (repeated point) is PSD but singular: still exact."""
    K = np.ones((4, 4))
    value = information_gain(torch.tensor(K), 0.1)
    assert float(value) == pytest.approx(0.5 * np.log(1 + 4 / 0.1), rel=1e-12)


def test_increments_sum_to_information_gain(dtype):
    """Chain rule: sum_s 1/2 log(1 + sigma_{s-1}^2(x_s) / eta) = 1/2 log det(I + K / eta),
    with sigma_{s-1}^2 the posterior variance from the first s - 1 points (NumPy)."""
    eta = 0.2
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(7, 2))
    K = se_kernel([0.3, 0.5])(X, X)
    variances = [K[0, 0]]
    for s in range(1, 7):
        A = K[:s, :s] + eta * np.eye(s)
        variances.append(K[s, s] - K[s, :s] @ np.linalg.solve(A, K[:s, s]))
    increments = information_gain_increment(torch.tensor(variances, dtype=dtype), eta)
    assert increments.shape == (7,)
    np.testing.assert_allclose(
        _np(increments), 0.5 * np.log1p(np.array(variances) / eta), **tolerances(dtype)
    )
    expected = 0.5 * np.linalg.slogdet(np.eye(7) + K / eta)[1]
    np.testing.assert_allclose(float(increments.sum()), expected, **tolerances(dtype))
    np.testing.assert_allclose(
        float(information_gain(torch.tensor(K, dtype=dtype), eta)), expected, **tolerances(dtype)
    )


def test_increment_clips_negative_round_off():
    value = information_gain_increment(torch.tensor([-1e-12, 0.0]), 0.1)
    assert torch.equal(value, torch.zeros(2))


@pytest.mark.parametrize("kind", ("full", "indexed"))
@pytest.mark.parametrize("name", CASES)
def test_model_information_gain_and_lemma_4(name, kind):
    """VectorValuedGP.information_gain() = 1/2 log det(I + G_t / eta) (dense G_t)
    = 1/2 sum_s log det(I + Gamma_{s-1}(x_s, x_s) / eta) (Lemma 4 of 000, sequentially)."""
    case = build_case(name, torch.float64, task_indexed=kind == "indexed")
    model = case.build()
    X, Y, tasks = _np(case.train_X), _np(case.train_Y), case.tasks_numpy()
    dense = case.oracle.information_gain(X, Y, tasks)
    sequential = 0.5 * case.oracle.sequential_log_det_sum(X, Y, tasks)
    np.testing.assert_allclose(dense, sequential, rtol=1e-10)
    np.testing.assert_allclose(float(model.information_gain()), dense, rtol=1e-9, atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="regularization must be > 0"):
        information_gain(torch.eye(2), 0.0)
    with pytest.raises(ValueError, match="regularization must be > 0"):
        information_gain_increment(torch.ones(2), -1.0)
    with pytest.raises(ValueError, match="kernel_matrix must be"):
        information_gain(torch.ones(2, 3), 0.1)
    with pytest.raises(ValueError, match="regularization must be finite"):
        information_gain(torch.eye(2), float("nan"))
