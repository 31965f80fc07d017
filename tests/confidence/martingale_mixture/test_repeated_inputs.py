"""The spectrum through the distinct inputs (repeated inputs, as on a finite domain)
against the t x t eigen-decomposition, and the multi-task bound on repeated inputs
against cvxpy's SOCP of paper 002's eq. (10)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gpytorch.kernels import RBFKernel
from martingale_oracles import socp_bound
from test_multi_task_bound import DELTA, NORM, SIGMA, oracle, se

from botorch_mtucb.confidence import MartingaleMixtureBound, MultiTaskMartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    spectral_data_fit,
    spectral_radius_squared,
)
from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import (
    DistinctInputs,
    input_spectrum,
)
from botorch_mtucb.kernels import UniformSimilarityTaskKernel

B3 = np.array([[1.0, 0.6, 0.1], [0.6, 1.0, 0.3], [0.1, 0.3, 0.7]])


def kernel(lengthscale=0.4):
    k = RBFKernel().to(torch.float64)
    k.lengthscale = lengthscale
    return k


def repeated(t, u, m, seed, d=2):
    generator = torch.Generator().manual_seed(seed)
    points = torch.rand(u, d, generator=generator, dtype=torch.float64)
    X = points[torch.randint(u, (t,), generator=generator)]
    Y = torch.sin(3 * X.sum(-1, keepdim=True) + torch.arange(m)) + SIGMA * torch.randn(
        t, m, generator=generator, dtype=torch.float64
    )
    return points, X, Y


@pytest.mark.parametrize("t, u", [(30, 4), (25, 25), (40, 11)])
def test_input_spectrum_equals_the_t_by_t_decomposition(t, u):
    points, X, Y = repeated(t, u, 2, seed=t + u)
    k = kernel()
    right = torch.linalg.qr(torch.randn(2, 2, dtype=torch.float64))[0]
    spectrum = input_spectrum(lambda A, B: k(A, B).to_dense(), X, Y, right)
    K = k(X, X).to_dense().detach()
    lam, U = torch.linalg.eigh(K)
    full_rotated = U.mT @ Y @ right
    distinct = torch.unique(X, dim=0).shape[0]
    assert spectrum.inputs.shape[0] == distinct
    assert spectrum.eigenvalues.shape[0] == (distinct if distinct == t else distinct + 1)
    # every function of the spectrum the bounds read: sum_i g(lambda_i) z_i z_i^T, and the
    # projections' sums v^T g(Lambda) z and v^T g(Lambda) v at test points
    test_X = torch.cat(
        [
            points[:2],
            torch.rand(3, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64),
        ]
    )
    v_full = k(test_X, X).to_dense().detach() @ U
    v = k(test_X, spectrum.inputs).to_dense().detach() @ spectrum.basis
    lam_full = lam.clamp_min(0.0)
    for alpha in (1e-3, 0.1, 1.0, 10.0):
        g_full, g = 1.0 / (lam_full + alpha), 1.0 / (spectrum.eigenvalues + alpha)
        torch.testing.assert_close(
            (spectrum.rotated**2 * g[:, None]).sum(0),
            (full_rotated**2 * g_full[:, None]).sum(0),
            rtol=1e-10, atol=1e-12,
        )  # fmt: skip
        torch.testing.assert_close(v**2 @ g, v_full**2 @ g_full, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(
            (v * g) @ spectrum.rotated, (v_full * g_full) @ full_rotated, rtol=1e-9, atol=1e-11
        )
    torch.testing.assert_close(  # log det(I + K / s): the radius
        torch.log1p(spectrum.eigenvalues / 0.01).sum(), torch.log1p(lam_full / 0.01).sum()
    )
    assert float((spectrum.rotated**2).sum()) == pytest.approx(float((Y**2).sum()), rel=1e-12)


def test_distinct_inputs_keep_first_appearance_and_counts():
    distinct = DistinctInputs()
    distinct.add(torch.tensor([[1.0, 2.0], [0.0, 0.0]]))
    distinct.add(torch.tensor([[1.0, 2.0], [-0.0, 0.0], [3.0, 1.0]]))
    inputs, inverse, counts = distinct.groups()
    assert inputs.tolist() == [[1.0, 2.0], [0.0, 0.0], [3.0, 1.0]]
    assert inverse.tolist() == [0, 1, 0, 1, 2] and counts.tolist() == [2, 2, 1]
    assert len(distinct) == 5
    X = torch.rand(20, 3, generator=torch.Generator().manual_seed(3)).round(decimals=1)
    ours = DistinctInputs()
    ours.add(X)
    rows, index, _ = ours.groups()
    assert torch.equal(rows[index], X)
    assert rows.shape[0] == torch.unique(X, dim=0).shape[0]


def test_multi_task_bound_on_repeated_inputs_equals_cvxpy():
    points, X, Y = repeated(14, 5, 3, seed=4)
    bound = MultiTaskMartingaleMixtureBound(X, Y, kernel(), torch.as_tensor(B3), NORM, SIGMA, DELTA)
    assert bound.kronecker_route and bound.gram_spectrum.spectral_inputs.shape[0] == 5
    Xn = X.numpy()
    K = np.kron(se(Xn, Xn, 0.4), B3)
    y = Y.numpy().reshape(-1)
    generator = torch.Generator().manual_seed(0)
    test_X = torch.cat([points[:2], torch.rand(4, 2, generator=generator, dtype=torch.float64)])
    functionals = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, -0.3, 0.2]]
    W = torch.as_tensor(np.array(functionals))
    upper, lower = bound.upper(test_X, W).numpy(), bound.lower(test_X, W).numpy()
    for a, x in enumerate(test_X.numpy()):
        for f, w in enumerate(functionals):
            w = np.asarray(w)
            high, low = oracle(K, np.kron(se(x[None], Xn, 0.4)[0], B3 @ w), w @ B3 @ w, y)
            # cvxpy on the singular (n t) x (n t) Gram matrix: about 1e-7 absolute
            assert upper[a, f] == pytest.approx(high, rel=1e-6, abs=5e-7)
            assert lower[a, f] == pytest.approx(low, rel=1e-6, abs=5e-7)


def test_repeated_inputs_route_equals_the_dense_route_and_appends():
    points, X, Y = repeated(40, 6, 3, seed=7)
    B = torch.as_tensor(B3)
    kronecker = MultiTaskMartingaleMixtureBound(X[:10], Y[:10], kernel(), B, NORM, SIGMA, DELTA)
    kronecker.append_observations(X[10:], Y[10:])
    dense = MultiTaskMartingaleMixtureBound(  # two half-terms: the (n t) x (n t) Gram matrix
        X, Y, [kernel(), kernel()], [B / 2, B / 2], NORM, SIGMA, DELTA
    )
    generator = torch.Generator().manual_seed(1)
    test_X = torch.cat([points, torch.rand(4, 2, generator=generator, dtype=torch.float64)])
    w = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    assert float(kronecker.radius_squared) == pytest.approx(float(dense.radius_squared), rel=1e-12)
    for alphas in ([0.01, 0.1, 1.0], 0.05):
        torch.testing.assert_close(
            kronecker.upper(test_X, w, alphas=alphas), dense.upper(test_X, w, alphas=alphas),
            rtol=1e-10, atol=1e-12,
        )  # fmt: skip
    torch.testing.assert_close(
        kronecker.upper(test_X, X_pending=points[:2]), dense.upper(test_X, X_pending=points[:2]),
        rtol=1e-4, atol=1e-6,
    )  # fmt: skip
    # the exact bounds agree as far as the t x t route's null-space round-off allows
    torch.testing.assert_close(kronecker.upper(test_X), dense.upper(test_X), rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(kronecker.lower(test_X), dense.lower(test_X), rtol=1e-4, atol=1e-6)


def test_task_indexed_repeated_pairs_equal_cvxpy_and_the_t_by_t_route():
    generator = torch.Generator().manual_seed(5)
    points = torch.rand(4, 2, generator=generator, dtype=torch.float64)
    which = torch.randint(4, (24,), generator=generator)
    tasks = torch.randint(3, (24,), generator=generator)
    X = points[which]
    Y = torch.sin(3 * X.sum(-1, keepdim=True) + tasks.unsqueeze(-1)) + SIGMA * torch.randn(
        24, 1, generator=generator, dtype=torch.float64
    )
    task_kernel = UniformSimilarityTaskKernel.from_b(num_tasks=3, b=2.0)
    args = (kernel(), task_kernel, NORM, SIGMA, DELTA)
    bound = MultiTaskMartingaleMixtureBound(X[:5], Y[:5], *args, train_tasks=tasks[:5])
    bound.append_observations(X[5:], Y[5:], tasks[5:])
    distinct = torch.unique(torch.stack([which, tasks], -1), dim=0).shape[0]
    assert bound.spectrum().eigenvalues.shape[0] == distinct + 1  # the folded null slot
    Bm = task_kernel.covar_matrix.to_dense().detach().double().numpy()
    Xn, t = X.numpy(), tasks.numpy()
    K = se(Xn, Xn, 0.4) * Bm[t][:, t]
    y = Y.numpy()[:, 0]
    test_X = torch.cat([points[:2], torch.rand(2, 2, generator=generator, dtype=torch.float64)])
    functionals = [[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]]
    W = torch.as_tensor(np.array(functionals))
    upper, lower = bound.upper(test_X, W).numpy(), bound.lower(test_X, W).numpy()
    for a, x in enumerate(test_X.numpy()):
        for f, w in enumerate(functionals):
            w = np.asarray(w)
            high, low = oracle(K, se(x[None], Xn, 0.4)[0] * (w @ Bm)[t], w @ Bm @ w, y)
            assert upper[a, f] == pytest.approx(high, rel=1e-6, abs=5e-7)
            assert lower[a, f] == pytest.approx(low, rel=1e-6, abs=5e-7)
    # the grid bounds (moderate alphas) equal those of the t x t spectrum to round-off
    gram = bound.kernel.observation_covariance(bound.train_X, bound.train_tasks,
                                               bound.train_X, bound.train_tasks)  # fmt: skip
    full = GramSpectrum.from_gram(gram, bound.train_Y)
    for alpha in (0.01, 0.3):
        alpha = torch.tensor(alpha, dtype=torch.float64)
        torch.testing.assert_close(
            spectral_data_fit(bound.spectrum(), alpha), spectral_data_fit(full, alpha)
        )
    torch.testing.assert_close(
        bound.radius_squared,
        spectral_radius_squared(full, SIGMA, 1.0, DELTA),
        rtol=1e-12, atol=0.0,
    )  # fmt: skip


def test_single_task_bound_folds_repeated_inputs():
    points, X, Y = repeated(30, 6, 1, seed=9)
    k = kernel()
    bound = MartingaleMixtureBound(X[:4], Y[:4], k, NORM, SIGMA, DELTA)
    bound.append_observations(X[4:], Y[4:])
    assert bound.spectrum().eigenvectors is None  # folded: 6 distinct inputs + the null
    assert bound.spectrum().eigenvalues.shape[0] == torch.unique(X, dim=0).shape[0] + 1
    whole = MartingaleMixtureBound(X, Y, k, NORM, SIGMA, DELTA)
    generator = torch.Generator().manual_seed(4)
    test_X = torch.cat([points[:2], torch.rand(3, 2, generator=generator, dtype=torch.float64)])
    torch.testing.assert_close(bound.upper(test_X), whole.upper(test_X), rtol=1e-6, atol=1e-8)
    K, y = se(X.numpy(), X.numpy(), 0.4), Y.numpy()[:, 0]
    radius = float(bound.radius_squared) ** 0.5
    upper, lower = bound.upper(test_X).numpy(), bound.lower(test_X).numpy()
    for i, x in enumerate(test_X.numpy()):
        kx = se(x[None], X.numpy(), 0.4)[0]
        high = socp_bound(K, kx, 1.0, y, radius, NORM, tolerance=1e-12)
        low = socp_bound(K, kx, 1.0, y, radius, NORM, False, tolerance=1e-12)
        # at a repeated input the best alpha sits at the search floor (~1e-10 lambda_max),
        # where float64's eigenvalue round-off (~t eps lambda_max) limits every route (this
        # one, the t x t one, cvxpy's) to about 1e-5 relative; elsewhere 1e-6
        rel = 1e-5 if i < 2 else 1e-6
        assert upper[i] == pytest.approx(high, rel=rel, abs=5e-7)
        assert lower[i] == pytest.approx(low, rel=rel, abs=5e-7)
    query = test_X.clone().requires_grad_(True)
    bound.upper(query).sum().backward()
    assert torch.isfinite(query.grad).all()
    distinct = MartingaleMixtureBound(points, Y[:6], k, NORM, SIGMA, DELTA)
    assert distinct.spectrum().eigenvectors is not None  # no repeats: the t x t route
