"""RegularizedGramCache: the Gram matrix of paper 002's bounds and the Cholesky factors of
K_t + alpha I for fixed alphas (Appendix E.2), against dense NumPy solves and log-dets."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from martingale_oracles import gram, instance

from botorch_mtucb.confidence.martingale_mixture import gram_cache
from botorch_mtucb.confidence.martingale_mixture.gram_cache import (
    RegularizedGramCache,
    check_alpha_grid,
)


def test_bordered_factors_match_dense_formulas():
    kernel, X, Y, test_X = instance("m52", t=40, seed=11)
    K = gram(kernel, X, X)
    y = Y.reshape(-1)
    cache = RegularizedGramCache(torch.as_tensor(K[:5, :5]).clone())
    first = cache.ensure(torch.tensor([0.01, 0.1], dtype=torch.float64))
    assert first.tolist() == [0, 1]
    for t in range(5, 40):
        cache.append(torch.as_tensor(K[t, :t]), torch.tensor(K[t, t]))
        if t == 20:  # an alpha added later is factorized from the current K_t
            cache.ensure(torch.tensor([1.0, 0.1], dtype=torch.float64))
    assert cache.size == 40
    assert torch.allclose(cache.gram, torch.as_tensor(K), rtol=0, atol=1e-15)
    assert cache.alphas.tolist() == [0.01, 0.1, 1.0]
    assert cache.index(0.1).tolist() == [1]
    index = torch.arange(3)
    cross = torch.as_tensor(gram(kernel, test_X, X))  # N x t
    explained = cache.explained_variance(index, cross)  # N x m
    weights, fit, log_det = cache.weights(y, index), cache.data_fit(y, index), cache.log_det(index)
    for i, alpha in enumerate(cache.alphas.tolist()):
        A = K + alpha * np.eye(40)
        np.testing.assert_allclose(weights[i].numpy(), np.linalg.solve(A, y.numpy()), rtol=1e-8)
        assert float(fit[i]) == pytest.approx(alpha * y.numpy() @ np.linalg.solve(A, y.numpy()))
        expected = np.einsum("nt,nt->n", cross.numpy(), np.linalg.solve(A, cross.numpy().T).T)
        np.testing.assert_allclose(explained[:, i].numpy(), expected, rtol=1e-9, atol=1e-12)
        expected_log_det = np.linalg.slogdet(np.eye(40) + K / alpha)[1]
        assert float(log_det[i]) == pytest.approx(expected_log_det, rel=1e-11)


def test_cache_from_empty_and_gradients_through_the_solve():
    kernel, X, _, test_X = instance("rbf", t=6, d=2)
    K = gram(kernel, X, X)
    cache = RegularizedGramCache(torch.zeros(0, 0, dtype=torch.float64))
    index = cache.ensure(torch.tensor([0.05], dtype=torch.float64))
    assert cache.log_det(index).tolist() == [0.0]
    for t in range(6):
        cache.append(torch.as_tensor(K[t, :t]), torch.tensor(K[t, t]))
    cross = torch.as_tensor(gram(kernel, test_X[:2], X)).requires_grad_(True)
    (gradient,) = torch.autograd.grad(cache.explained_variance(index, cross).sum(), cross)
    expected = 2 * np.linalg.solve(K + 0.05 * np.eye(6), cross.detach().numpy().T).T
    np.testing.assert_allclose(gradient.numpy(), expected, rtol=1e-8)


def test_alpha_grids_are_bounded_before_any_factor_is_computed(monkeypatch):
    """At most MAX_ALPHAS alphas per call (counted before any tensor is built from them)
    and at most MAX_FACTOR_ENTRIES entries of factors for one call (count * t^2); the
    factors of earlier grids are dropped (keeping the first) when a new grid or a new
    row would take the cache past that, and factorized again, exactly, when asked for."""
    with pytest.raises(ValueError, match="at most MAX_ALPHAS = 100 values per call, got 101"):
        check_alpha_grid(torch.logspace(-3, 1, 101))
    with pytest.raises(ValueError, match="got 1000000"):
        check_alpha_grid([0.1] * 10**6)
    assert check_alpha_grid(np.full(100, 0.5)).shape == (100,)
    kernel, X, Y, _ = instance("rbf", t=8, seed=2)
    K = gram(kernel, X, X)
    y = Y.reshape(-1)
    monkeypatch.setattr(gram_cache, "MAX_FACTOR_ENTRIES", 2 * 7**2)  # two factors at t = 7
    cache = RegularizedGramCache(torch.as_tensor(K[:7, :7]).clone())
    cache.ensure(torch.tensor([0.01], dtype=torch.float64))  # the first: always kept
    cache.ensure(torch.tensor([0.1, 1.0], dtype=torch.float64))
    with pytest.raises(ValueError, match=r"alphas holds 3 value\(s\) .*t = 7.* more than"):
        cache.ensure(torch.tensor([0.1, 1.0, 3.0, 0.01], dtype=torch.float64))
    assert cache.alphas.tolist() == [0.01, 0.1, 1.0]  # nothing computed for the refused grid
    index = cache.ensure(torch.tensor([3.0, 1.0], dtype=torch.float64))  # 0.1 dropped
    assert cache.alphas.tolist() == [0.01, 1.0, 3.0] and len(cache.factors) == 3
    cache.append(torch.as_tensor(K[7, :7]), torch.tensor(K[7, 7]))  # 2 * 8^2 > 2 * 7^2
    assert cache.alphas.tolist() == [0.01] and cache.size == 8
    index = cache.ensure(torch.tensor([3.0, 0.01], dtype=torch.float64))
    for i, alpha in zip(index.tolist(), [3.0, 0.01]):
        expected = np.linalg.solve(K + alpha * np.eye(8), y.numpy())
        np.testing.assert_allclose(cache.weights(y, torch.tensor([i]))[0].numpy(), expected,
                                   rtol=1e-9)  # fmt: skip
