"""The spectrum objects of the martingale-mixture bounds (``spectra``: the one-task Gram
cache and the dense multi-task Gram matrix, with repeated inputs folded or not) against
the dense Gram matrix of the scalar observations: the radius of eq. (8), the data fit and
the projections that the dual of eq. (12) reads; pending points (GP-BUCB) likewise."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from martingale_oracles import DELTA, SIGMA, assert_spectrum_matches_gram, gram, make_kernel

from botorch_mtucb.confidence import MartingaleMixtureBound, MultiTaskMartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.gram_cache_spectrum import GramCacheSpectrum
from botorch_mtucb.confidence.martingale_mixture.spectra import (
    DenseSpectrum,
    functional_prior_variance,
)

NORM = 8.0
ALPHAS = (1e-3, SIGMA**2, 0.3)
TASKS = np.array([[1.0, 0.6, 0.1], [0.6, 1.0, 0.3], [0.1, 0.3, 0.7]])


def inputs(t, repeated, seed=0, d=2):
    """``t`` inputs, drawn from 5 points when ``repeated`` (a finite domain)."""
    generator = torch.Generator().manual_seed(seed)
    if not repeated:
        return torch.rand(t, d, generator=generator, dtype=torch.float64)
    points = torch.rand(5, d, generator=generator, dtype=torch.float64)
    return points[torch.randint(5, (t,), generator=generator)]


@pytest.mark.parametrize("repeated", [False, True])
def test_gram_cache_spectrum_matches_the_dense_gram_matrix(repeated):
    kernel = make_kernel("m52", 0.4)
    X = inputs(14, repeated)
    Y = torch.sin(3 * X.sum(-1, keepdim=True)) + SIGMA * torch.randn(14, 1, dtype=torch.float64)
    bound = MartingaleMixtureBound(X[:9], Y[:9], kernel, NORM, SIGMA, DELTA, mixture_scale=0.5)
    bound.append_observations(X[9:], Y[9:])  # bordered factors
    spectra = bound.gram_spectrum
    assert isinstance(spectra, GramCacheSpectrum) and spectra.FACTORED_GRID
    assert (spectra.spectrum(bound).eigenvectors is None) == repeated
    test_X = torch.rand(4, 2, dtype=torch.float64)
    K = gram(kernel, X, X)
    representer = gram(kernel, test_X, X)[:, None, :]  # N x 1 x t
    y = Y.numpy()[:, 0]
    assert_spectrum_matches_gram(spectra, bound, K, y, test_X, None, representer, ALPHAS)
    assert spectra.largest_prior_variance(bound) == pytest.approx(float(np.diag(K).max()))
    # pending points: the spectrum of the training plus pending inputs
    P = torch.rand(3, 2, dtype=torch.float64)
    pending = bound._pending_inputs(P)
    squared, eigenvalues = spectra.pending_variance(bound, test_X, None, pending)
    both = torch.cat([X, P])
    K_P, k_P = gram(kernel, both, both), gram(kernel, test_X, both)
    for alpha in ALPHAS:
        explained = (squared.numpy()[:, 0] / (eigenvalues.numpy() + alpha)).sum(-1)
        dense = np.einsum("nm,mk,nk->n", k_P, np.linalg.inv(K_P + alpha * np.eye(17)), k_P)
        np.testing.assert_allclose(explained, dense, rtol=1e-9, atol=1e-12)


def multi_task(full_vector, repeated, seed=1):
    """A bound with two separable terms ``k_1 B / 2 + k_2 B / 2`` (full vectors) or one
    (task-indexed data), its dense Gram matrix and observations, and representers."""
    kernels = [make_kernel("rbf", 0.4), make_kernel("m32", 0.7)]
    B = torch.as_tensor(TASKS)
    X = inputs(10, repeated, seed)
    test_X, W = torch.rand(4, 2, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64)
    if full_vector:
        Y = torch.sin(2 * X.sum(-1, keepdim=True) + torch.arange(3.0))
        bound = MultiTaskMartingaleMixtureBound(X, Y, kernels, [B / 2, B / 2], NORM, SIGMA, DELTA)
        K = sum(np.kron(gram(k, X, X), TASKS / 2) for k in kernels)
        cross = sum(
            gram(k, test_X, X)[:, None, :, None] * (W.numpy() @ TASKS / 2)[None, :, None, :]
            for k in kernels
        )  # N x F x t x n
        return bound, K, Y.numpy().reshape(-1), test_X, W, cross.reshape(4, 2, -1)
    tasks = torch.arange(10) % 3
    Y = torch.sin(2 * X.sum(-1, keepdim=True) + tasks[:, None])
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, kernels[0], B, NORM, SIGMA, DELTA, train_tasks=tasks
    )
    k, i = gram(kernels[0], X, X), tasks.numpy()
    K = k * TASKS[i][:, i]
    cross = gram(kernels[0], test_X, X)[:, None, :] * (W.numpy() @ TASKS)[:, i][None]
    return bound, K, Y.numpy()[:, 0], test_X, W, cross


@pytest.mark.parametrize("repeated", [False, True])
@pytest.mark.parametrize("full_vector", [True, False])
def test_dense_spectrum_matches_the_dense_gram_matrix(full_vector, repeated):
    bound, K, y, test_X, W, representer = multi_task(full_vector, repeated)
    spectra = bound.gram_spectrum
    assert isinstance(spectra, DenseSpectrum) and not bound.kronecker_route
    assert (spectra.spectrum(bound).eigenvectors is None) == repeated
    assert_spectrum_matches_gram(spectra, bound, K, y, test_X, W, representer, ALPHAS)
    prior = functional_prior_variance(bound, test_X, W)
    expected = np.einsum("fi,ij,fj->f", W.numpy(), TASKS, W.numpy())  # k(x, x) = 1: w^T B w
    np.testing.assert_allclose(prior.numpy(), np.tile(expected, (4, 1)), rtol=1e-12)


def test_dense_spectrum_pending_points_are_all_tasks_at_them():
    bound, K, y, test_X, W, _ = multi_task(True, False)
    kernels = [bound.kernel.kernels[0], bound.kernel.kernels[1]]
    P = torch.rand(2, 2, dtype=torch.float64)
    squared, eigenvalues = bound.gram_spectrum.pending_variance(
        bound, test_X, W, bound._pending_inputs(P)
    )
    both = torch.cat([bound.train_X[::3], P])
    K_P = sum(np.kron(gram(k, both, both), TASKS / 2) for k in kernels)
    k_P = sum(
        gram(k, test_X, both)[:, None, :, None] * (W.numpy() @ TASKS / 2)[None, :, None, :]
        for k in kernels
    ).reshape(4, 2, -1)
    for alpha in ALPHAS:
        explained = (squared.numpy() / (eigenvalues.numpy() + alpha)).sum(-1)
        inverse = np.linalg.inv(K_P + alpha * np.eye(K_P.shape[0]))
        dense = np.einsum("nfm,mk,nfk->nf", k_P, inverse, k_P)
        np.testing.assert_allclose(explained, dense, rtol=1e-9, atol=1e-12)
