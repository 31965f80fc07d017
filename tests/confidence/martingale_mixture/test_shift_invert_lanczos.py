"""Gauss quadrature by shift-and-invert Lanczos against dense solves (NumPy)."""

import numpy as np
import pytest
import torch

from botorch_mtucb.confidence.martingale_mixture import shift_invert_lanczos as sil
from botorch_mtucb.utils import GrowingCholesky


def _kernel_matrix(t: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.random((t, 2))
    squared = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-squared / (2 * 0.3**2))  # RBF: a fast-decaying spectrum


@pytest.mark.parametrize("t", [7, 60])
@pytest.mark.parametrize("ratio", [0.6, 1.0, 1.7])  # alpha / alpha_g within a node's bracket
def test_gauss_rule_and_bilinear_match_dense_solves(t, ratio):
    K, alpha_g = _kernel_matrix(t, t), 0.05
    rng = np.random.default_rng(1)
    k, y = rng.standard_normal((t, 3)), rng.standard_normal(t)
    factor = GrowingCholesky(torch.tensor(K + alpha_g * np.eye(t)))
    u = factor.solve(torch.tensor(k))
    u_y = factor.solve(torch.tensor(y).unsqueeze(-1))
    steps = min(t, 12)
    candidates = sil.shift_invert_lanczos(factor, u, steps)
    shared = sil.shift_invert_lanczos(factor, u_y, steps)
    ritz_u, ritz_y = sil.ritz_system(candidates), sil.ritz_system(shared)
    delta = torch.full((3,), (ratio - 1.0) * alpha_g, dtype=torch.float64)
    dense = np.linalg.inv(K + ratio * alpha_g * np.eye(t))
    quadratic = sil.gauss_rule(ritz_u, candidates.start_norm, delta).numpy()
    np.testing.assert_allclose(quadratic, np.einsum("ti,ts,si->i", k, dense, k), rtol=1e-10)
    coefficients = sil.bilinear_coefficients(candidates, ritz_u, shared, ritz_y, u)
    cross = sil.bilinear(coefficients, ritz_u, ritz_y, delta).numpy()
    scale = np.sqrt(np.einsum("ti,ts,si->i", k, dense, k) * (y @ dense @ y))
    np.testing.assert_allclose(cross, k.T @ dense @ y, atol=1e-10 * scale.max())
    # several alphas per column (N x G) give the values at each
    grid = delta.unsqueeze(-1).expand(3, 2)
    np.testing.assert_allclose(sil.gauss_rule(ritz_u, candidates.start_norm, grid)[:, 1], quadratic)


def test_the_two_sided_bilinear_form_beats_the_one_sided():
    t, alpha_g = 80, 0.01
    K = _kernel_matrix(t, 3)
    rng = np.random.default_rng(2)
    k, y = rng.standard_normal((t, 1)), rng.standard_normal(t)
    factor = GrowingCholesky(torch.tensor(K + alpha_g * np.eye(t)))
    u, u_y = factor.solve(torch.tensor(k)), factor.solve(torch.tensor(y).unsqueeze(-1))
    exact = float(k[:, 0] @ np.linalg.solve(K + 2.5 * alpha_g * np.eye(t), y))
    candidates, shared = (
        sil.shift_invert_lanczos(factor, u, 3),
        sil.shift_invert_lanczos(factor, u_y, 3),
    )
    ritz_u, ritz_y = sil.ritz_system(candidates), sil.ritz_system(shared)
    coefficients = sil.bilinear_coefficients(candidates, ritz_u, shared, ritz_y, u)
    delta = torch.tensor([1.5 * alpha_g], dtype=torch.float64)
    two_sided = float(sil.bilinear(coefficients, ritz_u, ritz_y, delta)[0])
    one_sided = float(coefficients.direct[0] @ (1.0 / (1.0 + delta * ritz_y.theta[0])))
    assert abs(two_sided - exact) < 0.1 * abs(one_sided - exact)


def test_continuing_equals_one_run_and_breakdown_is_exact():
    t = 30
    K = torch.tensor(_kernel_matrix(t, 4) + 0.1 * np.eye(t))
    factor = GrowingCholesky(K)
    start = torch.randn(t, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    once = sil.shift_invert_lanczos(factor, start, 6)
    twice = sil.shift_invert_lanczos(factor, start, 2)
    twice = sil.shift_invert_lanczos(factor, start, 4, previous=twice)
    torch.testing.assert_close(once.diagonal, twice.diagonal)
    torch.testing.assert_close(once.off_diagonal, twice.off_diagonal)
    # u = L^{-1} v for an eigenvector v of K is one of M's: one step is exact, the rest zero
    _, vectors = torch.linalg.eigh(K)
    u = factor.solve(vectors[:, :1])
    basis = sil.shift_invert_lanczos(factor, u, 4)
    assert float(basis.off_diagonal[0, 0]) == 0.0 and float(basis.vectors[0, 1:].abs().max()) == 0.0
    ritz = sil.ritz_system(basis)
    rule = sil.gauss_rule(ritz, basis.start_norm, torch.tensor([0.3], dtype=torch.float64))
    v = vectors[:, 0]
    dense = v @ torch.linalg.solve(
        K + 0.3 * torch.eye(t, dtype=torch.float64), v
    )  # k^T (K + a I)^-1 k
    torch.testing.assert_close(rule[0], dense)
