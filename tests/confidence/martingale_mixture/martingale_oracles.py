"""Shared instances and dense oracles of paper 002's formulas for the martingale-mixture
tests: a NumPy transcription of eq. (8), Cor. 4.3 and eq. (12), and cvxpy's SOCP of
eq. (10)."""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
import torch
from gpytorch.kernels import MaternKernel, RBFKernel

B, SIGMA, DELTA = 10.0, 0.1, 0.01
DTYPES = (torch.float64, torch.float32)


def make_kernel(name: str, lengthscale: float):
    kernel = RBFKernel() if name == "rbf" else MaternKernel(nu={"m32": 1.5, "m52": 2.5}[name])
    kernel = kernel.to(torch.float64)
    kernel.lengthscale = lengthscale
    kernel.requires_grad_(False)
    return kernel


def gram(kernel, X1, X2) -> np.ndarray:
    with torch.no_grad():
        return kernel(X1.double(), X2.double()).to_dense().numpy()


def instance(name="rbf", t=40, d=3, lengthscale=0.3, seed=0, norm=B, noise=SIGMA):
    """``t`` noisy observations of an RKHS function with ``||f||_H = norm``."""
    generator = torch.Generator().manual_seed(seed)
    kernel = make_kernel(name, lengthscale)
    Z = torch.rand(15, d, generator=generator, dtype=torch.float64)
    w = torch.randn(15, generator=generator, dtype=torch.float64)
    w = w * norm / math.sqrt(w @ torch.as_tensor(gram(kernel, Z, Z)) @ w)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    f = torch.as_tensor(gram(kernel, X, Z)) @ w
    Y = (f + noise * torch.randn(t, generator=generator, dtype=torch.float64)).unsqueeze(-1)
    test_X = torch.rand(6, d, generator=generator, dtype=torch.float64)
    return kernel, X, Y, test_X


# ---------------------------------------------------------------- dense oracles
def dense_radius_squared(K, y, sigma, c, delta) -> float:
    """Eq. (8) of paper 002, transcribed."""
    M = np.eye(len(y)) + c * K / sigma**2
    return float(
        y @ np.linalg.solve(M, y)
        + sigma**2 * np.linalg.slogdet(M)[1]
        + 2 * sigma**2 * math.log(1 / delta)
    )


def dense_radius_tilde_squared(K, y, radius_sq, norm, alpha) -> float:
    """Cor. 4.3: R^2 + alpha B^2 - y^T y + y^T Phi (V + alpha I)^{-1} Phi^T y, with
    Phi (V + alpha I)^{-1} Phi^T = K (K + alpha I)^{-1} (push-through identity)."""
    t = len(y)
    return float(
        radius_sq + alpha * norm**2 - y @ y + y @ K @ np.linalg.solve(K + alpha * np.eye(t), y)
    )


def dense_dual_objective(K, kx, kxx, y, radius_sq, norm, alpha, sign=1.0) -> float:
    """The objective of eq. (12) (``sign=-1``: the mirrored lower bound)."""
    A = np.linalg.inv(K + alpha * np.eye(len(y)))
    mu = kx @ A @ y
    rho = math.sqrt(max(kxx - kx @ A @ kx, 0.0))
    rt = math.sqrt(max(dense_radius_tilde_squared(K, y, radius_sq, norm, alpha), 0.0))
    return mu + sign * rt / math.sqrt(alpha) * rho


def socp_bound(K, kx, kxx, y, radius, norm, upper=True, tolerance=None) -> float:
    """Eq. (10) of paper 002 with cvxpy: max / min k_{t+1}(x)^T w s.t. the two cones
    (``tolerance``: Clarabel's gap and feasibility tolerances, default its own 1e-8)."""
    t = len(y)
    full = np.block([[K, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
    eigenvalues, eigenvectors = np.linalg.eigh(full)
    root = np.sqrt(np.clip(eigenvalues, 0, None))[:, None] * eigenvectors.T  # L^T L = K_{t+1}
    w = cp.Variable(t + 1)
    objective = np.append(kx, kxx) @ w
    constraints = [cp.norm(full[:t, :] @ w - y) <= radius, cp.norm(root @ w) <= norm]
    sense = cp.Maximize(objective) if upper else cp.Minimize(objective)
    options = {}
    if tolerance is not None:
        options = {"tol_gap_abs": tolerance, "tol_gap_rel": tolerance, "tol_feas": tolerance}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "may be inaccurate" at tight tolerances
        return cp.Problem(sense, constraints).solve(solver=cp.CLARABEL, **options)


def socp_bound_features(K, kx, kxx, y, radius, norm, upper=True, tolerance=1e-12) -> float:
    """Eq. (10) of paper 002 with cvxpy in feature coordinates: ``f = F theta`` on the
    ``t + 1`` points with ``F F^T = K_{t+1}`` (``||f||_H = ||theta||`` on the span of the
    kernel functions), max / min ``f(x)`` s.t. ``||F_t theta - y|| <= radius``, ``||theta||
    <= norm``. The same problem as ``socp_bound``, but well posed when ``K_t`` is
    singular to round-off (near-repeated inputs), where the coefficient form is not."""
    t = len(y)
    full = np.block([[K, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
    eigenvalues, eigenvectors = np.linalg.eigh(full)
    features = eigenvectors * np.sqrt(np.clip(eigenvalues, 0, None))  # rows: the points
    theta = cp.Variable(t + 1)
    objective = features[t] @ theta
    constraints = [cp.norm(features[:t] @ theta - y) <= radius, cp.norm(theta) <= norm]
    sense = cp.Maximize(objective) if upper else cp.Minimize(objective)
    options = {"tol_gap_abs": tolerance, "tol_gap_rel": tolerance, "tol_feas": tolerance}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return cp.Problem(sense, constraints).solve(solver=cp.CLARABEL, **options)


# ---------------------------------------------------------------- spectrum objects
def assert_spectrum_matches_gram(spectra, bound, K, y, X, W, representer, alphas) -> None:
    """A bound's spectrum object (``spectra``) against the dense Gram matrix ``K`` (``M x
    M``) of its scalar observations ``y`` (``M``): every sum over the spectrum that the
    bounds read equals its dense formula, ``R_t^2`` of eq. (8), ``alpha y^T (K + alpha
    I)^{-1} y`` and, for the representers ``k_L`` (``N x F x M``) of the functionals
    ``W`` at ``X``, ``k_L^T (K + alpha I)^{-1} y`` and ``k_L^T (K + alpha I)^{-1} k_L``."""
    spectrum = spectra.spectrum(bound)
    z, lam = spectrum.rotated_y.numpy(), spectrum.eigenvalues.numpy()
    expected = dense_radius_squared(K, y, bound.noise_std, bound.mixture_scale, bound.delta)
    assert float(spectra.radius_squared(bound)) == pytest.approx(expected, rel=1e-9)
    projected = spectra.projection(bound, X, W).detach().numpy()  # N x F x r
    for alpha in alphas:
        inverse = np.linalg.inv(K + alpha * np.eye(len(y)))
        fit = float(spectra.data_fit(bound, torch.tensor([alpha], dtype=torch.float64))[0])
        assert fit == pytest.approx(alpha * y @ inverse @ y, rel=1e-9)
        mean = (projected * z / (lam + alpha)).sum(-1)
        explained = (projected**2 / (lam + alpha)).sum(-1)
        np.testing.assert_allclose(mean, representer @ inverse @ y, rtol=1e-9, atol=1e-11)
        dense = np.einsum("nfm,mk,nfk->nf", representer, inverse, representer)
        np.testing.assert_allclose(explained, dense, rtol=1e-9, atol=1e-11)
