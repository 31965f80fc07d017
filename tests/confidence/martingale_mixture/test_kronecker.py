"""The Kronecker route of the multi-task bounds: ``KroneckerSpectralDual`` against the
dual on the materialized ``(N F) x (n t)`` projections, and ``KroneckerSpectrum`` against
the dense ``(n t) x (n t)`` Gram matrix ``K_t (x) B``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from martingale_oracles import (
    DELTA,
    SIGMA,
    assert_spectrum_matches_gram,
    gram,
    instance,
    make_kernel,
)
from test_spectra import ALPHAS, NORM, TASKS, inputs

from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.alpha_search import GRID_PER_DECADE
from botorch_mtucb.confidence.martingale_mixture.kronecker import (
    KroneckerSpectralDual,
    KroneckerSpectrum,
)
from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_kronecker_dual_equals_the_materialized_dual(sign):
    generator = torch.Generator().manual_seed(3)
    t, n, N, F = 30, 4, 5, 3
    kernel, X, Y, _ = instance("rbf", t=t, seed=2)
    K = torch.as_tensor(gram(kernel, X, X))
    A = torch.randn(n, n, generator=generator, dtype=torch.float64)
    task_covariance = A @ A.T / n + 0.1 * torch.eye(n, dtype=torch.float64)
    lam, U_K = torch.linalg.eigh(K)
    mu, U_B = torch.linalg.eigh(task_covariance)
    lam, mu = lam.clamp_min(0.0), mu.clamp_min(0.0)
    Ys = torch.randn(t, n, generator=generator, dtype=torch.float64)
    rotated = (U_K.mT @ Ys @ U_B).reshape(-1)
    eigenvalues = (lam[:, None] * mu).reshape(-1)
    spectrum = GramSpectrum(eigenvalues, None, rotated)
    radius_sq = torch.tensor(float((Ys**2).sum()) + 2.0, dtype=torch.float64)
    p = torch.randn(N, t, generator=generator, dtype=torch.float64) * 0.3
    q = torch.randn(F, n, generator=generator, dtype=torch.float64)
    prior = torch.full((N, F), 10.0, dtype=torch.float64)
    dual = KroneckerSpectralDual(spectrum, radius_sq, 8.0, sign, p, q, lam, mu, prior)
    dense = dual.dense()
    alphas = torch.logspace(-4, 2, 7, dtype=torch.float64)
    torch.testing.assert_close(
        dual.grid_values(alphas), dense.grid_values(alphas), rtol=1e-12, atol=1e-12
    )
    alpha, value = dual.minimize(0.01)
    reference_alpha, reference = dense.minimize(0.01)
    torch.testing.assert_close(value, reference, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(dual(alpha), dense(alpha), rtol=1e-11, atol=1e-12)
    # the series hold anywhere within a grid step of the centres (each pair's best grid alpha)
    step = math.log(10.0) / GRID_PER_DECADE
    for fraction in (-1.0, -0.5, 0.5, 1.0):
        shifted = dual._centers * math.exp(fraction * step)
        torch.testing.assert_close(dual(shifted), dense(shifted), rtol=1e-11, atol=1e-12)
        for ours, theirs in zip(dual.log_derivatives(shifted), dense.log_derivatives(shifted)):
            torch.testing.assert_close(ours, theirs, rtol=1e-9, atol=1e-11)
    p.requires_grad_(True)
    dual = KroneckerSpectralDual(spectrum, radius_sq, 8.0, sign, p, q, lam, mu, prior)
    with torch.no_grad():
        alpha, _ = dual.minimize(0.01)
    dual(alpha).sum().backward()
    p_dense = p.detach().clone().requires_grad_(True)
    KroneckerSpectralDual(spectrum, radius_sq, 8.0, sign, p_dense, q, lam, mu, prior).dense()(
        alpha
    ).sum().backward()
    torch.testing.assert_close(p.grad, p_dense.grad, rtol=1e-9, atol=1e-11)
    with pytest.raises(RuntimeError, match="minimize first"):
        KroneckerSpectralDual(spectrum, radius_sq, 8.0, sign, p, q, lam, mu, prior)(alpha)


@pytest.mark.parametrize("center", [1e-11, 1e-30])
def test_kronecker_series_stay_finite_next_to_zero_eigenvalues(center):
    # Eigenvalues at round-off (clipped to 0) and a tiny alpha: (lambda mu + alpha)^-k
    # overflows float64 for k = SERIES_TERMS (1e-11^-32 = 1e352); the scaled series do not.
    generator = torch.Generator().manual_seed(4)
    t, n, N, F = 6, 2, 3, 2
    lam = torch.tensor([0.0, 0.0, 1e-15, 0.3, 1.0, 4.0], dtype=torch.float64)
    mu = torch.tensor([0.5, 1.0], dtype=torch.float64)
    rotated = torch.randn(t * n, generator=generator, dtype=torch.float64) * 1e-3
    spectrum = GramSpectrum((lam[:, None] * mu).reshape(-1), None, rotated)
    p = torch.randn(N, t, generator=generator, dtype=torch.float64)
    q = torch.randn(F, n, generator=generator, dtype=torch.float64)
    prior = torch.full((N, F), 10.0, dtype=torch.float64)
    radius_sq = torch.tensor(1e-4, dtype=torch.float64)
    dual = KroneckerSpectralDual(spectrum, radius_sq, 8.0, 1.0, p, q, lam, mu, prior)
    dense = dual.dense()
    dual.prepare_refinement(torch.full((N * F,), math.log(center), dtype=torch.float64))
    step = math.log(10.0) / GRID_PER_DECADE
    for fraction in (-1.0, 0.0, 0.5, 1.0):
        alpha = torch.full((N * F,), center * math.exp(fraction * step), dtype=torch.float64)
        ours = dual(alpha)
        assert torch.isfinite(ours).all()
        torch.testing.assert_close(ours, dense(alpha), rtol=1e-11, atol=0.0)
        for mine, theirs in zip(dual.log_derivatives(alpha), dense.log_derivatives(alpha)):
            assert torch.isfinite(mine).all()
            torch.testing.assert_close(
                mine, theirs, rtol=1e-9, atol=1e-12 * float(theirs.abs().max())
            )


@pytest.mark.parametrize("repeated", [False, True])
def test_kronecker_spectrum_matches_the_dense_gram_matrix(repeated):
    kernel, B = make_kernel("m52", 0.5), torch.as_tensor(TASKS)
    X = inputs(12, repeated, seed=2)
    Y = torch.sin(2 * X.sum(-1, keepdim=True) + torch.arange(3.0)) + SIGMA * torch.randn(12, 3)
    bound = MultiTaskMartingaleMixtureBound(X[:7], Y[:7], kernel, B, NORM, SIGMA, DELTA)
    bound.append_observations(X[7:], Y[7:])
    spectra = bound.gram_spectrum
    assert isinstance(spectra, KroneckerSpectrum) and bound.kronecker_route
    assert spectra.spectrum(bound).eigenvectors is None  # u_a (x) v_j never formed
    assert spectra.spectral_inputs.shape[0] == (5 if repeated else 12)
    test_X, W = torch.rand(4, 2, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64)
    K = np.kron(gram(kernel, X, X), TASKS)  # observation (s, i) at row s n + i
    y = Y.double().numpy().reshape(-1)
    representer = gram(kernel, test_X, X)[:, None, :, None] * (W.numpy() @ TASKS)[None, :, None]
    representer = representer.reshape(4, 2, -1)
    assert_spectrum_matches_gram(spectra, bound, K, y, test_X, W, representer, ALPHAS)
    # pending points: all tasks at them, through the spectra of K_P and B
    P = torch.rand(2, 2, dtype=torch.float64)
    squared, eigenvalues = spectra.pending_variance(bound, test_X, W, bound._pending_inputs(P))
    both = torch.cat([X, P])
    K_P = np.kron(gram(kernel, both, both), TASKS)
    k_P = gram(kernel, test_X, both)[:, None, :, None] * (W.numpy() @ TASKS)[None, :, None]
    k_P = k_P.reshape(4, 2, -1)
    for alpha in ALPHAS:
        explained = (squared.numpy() / (eigenvalues.numpy() + alpha)).sum(-1)
        inverse = np.linalg.inv(K_P + alpha * np.eye(K_P.shape[0]))
        dense = np.einsum("nfm,mk,nfk->nf", k_P, inverse, k_P)
        np.testing.assert_allclose(explained, dense, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_tracked_candidates_read_the_kernel_values_from_their_gram_matrix(dtype):
    kernel, B = make_kernel("m52", 0.5), torch.as_tensor(TASKS)
    generator = torch.Generator().manual_seed(5)
    D = torch.rand(9, 2, generator=generator, dtype=torch.float64).to(dtype)
    X = D[torch.tensor([0, 3, 3, 7, 0, 5])]  # the data at candidates, with repeats
    Y = torch.sin(3 * X.double().sum(-1, keepdim=True) + torch.arange(3.0))
    bound = MultiTaskMartingaleMixtureBound(X, Y, kernel, B, NORM, SIGMA, DELTA)
    assert bound.track_candidates(D) and bound.track_candidates(D)  # the second: a no-op
    spectra, D64 = bound.gram_spectrum, D.double()
    # the lookup: k(D, D) in float64, the kernel's own values at D
    expected = make_kernel("m52", 0.5)(D64, D64).to_dense().detach()
    torch.testing.assert_close(spectra.candidate_gram, expected, rtol=1e-12, atol=1e-14)
    # away from the data: at a data point the minimum over alpha can sit at the bottom
    # of the search range, where round-off in k is amplified
    index = torch.tensor([8, 2, 1, 6])
    values = bound.candidate_upper(index)
    assert values.dtype == torch.float64 and values.shape == (4, 3)
    torch.testing.assert_close(values, bound.upper(D64[index]), rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(bound.candidate_upper()[index], values, rtol=1e-9, atol=1e-12)
    w = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    grid = torch.tensor([1e-3, 1e-2, 1e-1], dtype=torch.float64)
    torch.testing.assert_close(
        bound.candidate_upper(index, w, grid),
        bound.upper(D64[index], w, alphas=grid),
        rtol=1e-9,
        atol=1e-12,
    )
    with pytest.raises(ValueError, match="points must have shape batch x 2"):
        bound.track_candidates(D[:, :1])
    with pytest.raises(RuntimeError, match="track_candidates"):
        MultiTaskMartingaleMixtureBound(X, Y, kernel, B, NORM, SIGMA, DELTA).candidate_upper()
