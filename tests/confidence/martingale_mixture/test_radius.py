"""The radii of paper 002: eq. (8), Cor. 4.3 with Lemma C.1 and Lemma C.2, against a dense
NumPy transcription."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from martingale_oracles import (
    DELTA,
    DTYPES,
    SIGMA,
    B,
    dense_radius_squared,
    dense_radius_tilde_squared,
    gram,
    instance,
    make_kernel,
)

from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    radius_squared,
    radius_tilde_squared,
    spectral_data_fit,
    spectral_radius_squared,
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("c", [1.0, 0.2])
def test_radius_squared_equals_eq8(dtype, c):
    kernel, X, Y, _ = instance("m52", t=50)
    bound = MartingaleMixtureBound(X.to(dtype), Y.to(dtype), kernel, B, SIGMA, DELTA, c)
    K = gram(kernel, X.to(dtype), X.to(dtype))
    expected = dense_radius_squared(K, Y.to(dtype).double().numpy()[:, 0], SIGMA, c, DELTA)
    assert bound.radius_squared.dtype == torch.float64
    assert float(bound.radius_squared) == pytest.approx(expected, rel=1e-10)


def test_radius_without_data_is_the_confidence_term():
    kernel = make_kernel("rbf", 0.5)
    bound = MartingaleMixtureBound(torch.zeros(0, 2), torch.zeros(0, 1), kernel, B, SIGMA, DELTA)
    assert float(bound.radius_squared) == pytest.approx(2 * SIGMA**2 * math.log(1 / DELTA))


@pytest.mark.parametrize("alpha", [1e-3, 0.01, 0.5, 20.0])
def test_radius_tilde_squared_matches_cor_4_3(alpha):
    kernel, X, Y, _ = instance("rbf", t=40)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.5)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    expected = dense_radius_tilde_squared(K, y, float(bound.radius_squared), B, alpha)
    assert float(bound.radius_tilde_squared(alpha)) == pytest.approx(expected, rel=1e-9)
    both = bound.radius_tilde_squared(torch.tensor([alpha, 2 * alpha]))
    assert both.shape == (2,)


def test_radius_tilde_at_sigma2_over_c_is_lemma_c2():
    kernel, X, Y, _ = instance("m32", t=30)
    c = 0.3
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
    K = gram(kernel, X, X)
    logdet = np.linalg.slogdet(np.eye(30) + c * K / SIGMA**2)[1]
    expected = SIGMA**2 * logdet + SIGMA**2 * B**2 / c + 2 * SIGMA**2 * math.log(1 / DELTA)
    assert float(bound.radius_tilde_squared(SIGMA**2 / c)) == pytest.approx(expected, rel=1e-9)


def test_spectral_radius_squared_is_eq8_at_any_noise_level():
    kernel, X, Y, _ = instance("m52", t=30)
    c = 0.4
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    spectrum = bound.spectrum()
    at_sigma = spectral_radius_squared(spectrum, SIGMA, c, DELTA)
    assert float(at_sigma) == pytest.approx(float(bound.radius_squared), rel=1e-11)
    for noise in (0.03, 0.5, 4.0):
        expected = dense_radius_squared(K, y, noise, c, DELTA)
        value = spectral_radius_squared(spectrum, noise, c, DELTA)
        assert float(value) == pytest.approx(expected, rel=1e-10)


def test_radius_squared_from_its_data_terms():
    fit, log_det = torch.tensor(0.7), torch.tensor(2.5)
    expected = 0.7 + SIGMA**2 * 2.5 + 2 * SIGMA**2 * math.log(1 / DELTA)
    assert float(radius_squared(fit, log_det, SIGMA, DELTA)) == pytest.approx(expected)


def test_spectral_data_fit_and_radius_tilde_are_cor_4_3():
    kernel, X, Y, _ = instance("rbf", t=25, seed=2)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    alphas = torch.tensor([[1e-3, 0.1], [1.0, 30.0]], dtype=torch.float64)
    fit = spectral_data_fit(bound.spectrum(), alphas)
    assert fit.shape == (2, 2)
    R2 = float(bound.radius_squared)
    value = radius_tilde_squared(bound.radius_squared, B, alphas, fit)
    for alpha, got_fit, got in zip(alphas.reshape(-1), fit.reshape(-1), value.reshape(-1)):
        a = float(alpha)
        expected_fit = a * y @ np.linalg.solve(K + a * np.eye(25), y)
        assert float(got_fit) == pytest.approx(expected_fit, rel=1e-9)
        expected = dense_radius_tilde_squared(K, y, R2, B, a)
        assert float(got) == pytest.approx(expected, rel=1e-9)


def test_gram_spectrum_reconstructs_the_gram_matrix():
    kernel, X, Y, _ = instance("m32", t=20)
    K = torch.as_tensor(gram(kernel, X, X))
    spectrum = GramSpectrum.from_gram(K, Y.reshape(-1))
    lam, U, z = spectrum
    assert (lam >= 0).all()
    assert torch.allclose(U @ torch.diag(lam) @ U.T, K, atol=1e-12)
    assert torch.allclose(U @ z, Y.reshape(-1), atol=1e-12)
    empty = GramSpectrum.from_gram(K[:0, :0], Y[:0, 0])
    assert empty.eigenvalues.shape == (0,) and empty.eigenvectors.shape == (0, 0)
