"""RegularizedGramCache: the Gram matrix of paper 002's bounds and the Cholesky factors of
K_t + alpha I for fixed alphas (Appendix E.2), against dense NumPy solves and log-dets."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from martingale_oracles import gram, instance

from botorch_mtucb.confidence.martingale_mixture.gram_cache import RegularizedGramCache


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
