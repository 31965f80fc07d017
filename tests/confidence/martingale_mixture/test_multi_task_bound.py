"""The multi-task martingale-mixture bound (issue 12) against cvxpy's SOCP of paper 002's
eq. (10) on the product kernel over X x [n], built in NumPy: ICM full-vector data (the
Kronecker route), K_task(b) task-indexed data, a sum of two separable kernels; linear
functionals, per-task bounds, grid / analytic variants, updates and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gpytorch.kernels import MaternKernel, RBFKernel
from martingale_oracles import (
    dense_dual_objective,
    dense_radius_squared,
    socp_bound,
    socp_bound_features,
)

from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.kernels import UniformSimilarityTaskKernel

NORM, SIGMA, DELTA = 10.0, 0.1, 0.01
ICM_B = np.array([[1.0, 0.7, 0.2], [0.7, 1.0, 0.4], [0.2, 0.4, 0.8]])


def rbf(lengthscale):
    kernel = RBFKernel().to(torch.float64)
    kernel.lengthscale = lengthscale
    return kernel


def se(X1, X2, lengthscale):
    d = ((X1[:, None, :] - X2[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * d / lengthscale**2)


def matern52(X1, X2, lengthscale):
    r = np.sqrt(((X1[:, None, :] - X2[None, :, :]) ** 2).sum(-1)) / lengthscale
    return (1 + math.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-math.sqrt(5) * r)


def data(t, n, seed=0, d=2):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    Y = torch.sin(4 * X.sum(-1, keepdim=True) + torch.arange(n)) + SIGMA * torch.randn(
        t, n, generator=generator, dtype=torch.float64
    )
    test_X = torch.rand(4, d, generator=generator, dtype=torch.float64)
    return X, Y, test_X


def oracle(K, kx, kxx, y):
    radius = math.sqrt(dense_radius_squared(K, y, SIGMA, 1.0, DELTA))
    return (
        socp_bound(K, kx, kxx, y, radius, NORM, tolerance=1e-12),
        socp_bound(K, kx, kxx, y, radius, NORM, False, tolerance=1e-12),
    )


def assert_matches_socp(bound, test_X, functionals, K, representer, prior, y):
    """representer(x, w) -> the data vector of Gamma(., x) w; prior(x, w) -> w^T Gamma w."""
    W = torch.as_tensor(np.array(functionals))
    upper = bound.upper(test_X, weights=W).numpy()
    lower = bound.lower(test_X, weights=W).numpy()
    for a, x in enumerate(test_X.numpy()):
        for f, w in enumerate(functionals):
            high, low = oracle(K, representer(x, w), prior(x, w), y)
            assert upper[a, f] == pytest.approx(high, rel=1e-6, abs=1e-7)
            assert lower[a, f] == pytest.approx(low, rel=1e-6, abs=1e-7)


FUNCTIONALS = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, -0.3, 0.2]]


def test_icm_full_vector_kronecker_route_equals_cvxpy():
    X, Y, test_X = data(12, 3)
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, rbf(0.4), torch.as_tensor(ICM_B), NORM, SIGMA, DELTA
    )
    assert bound.kronecker_route and bound.num_observations == 36
    Xn = X.numpy()
    K = np.kron(se(Xn, Xn, 0.4), ICM_B)  # observation (s, i) at row s n + i
    y = Y.numpy().reshape(-1)

    def representer(x, w):
        return np.kron(se(x[None], Xn, 0.4)[0], ICM_B @ np.asarray(w))

    def prior(x, w):
        return float(np.asarray(w) @ ICM_B @ np.asarray(w))

    assert_matches_socp(bound, test_X, FUNCTIONALS, K, representer, prior, y)
    per_task = bound.upper(test_X)  # weights=None: e_i
    assert per_task.shape == (4, 3)
    np.testing.assert_allclose(per_task, bound.upper(test_X, torch.eye(3, dtype=torch.float64)))


def test_k_task_b_task_indexed_equals_cvxpy():
    X, Y, test_X = data(15, 1, seed=1)
    tasks = torch.tensor([0, 1, 2] * 5)
    task_kernel = UniformSimilarityTaskKernel.from_b(num_tasks=3, b=2.0)
    Bm = task_kernel.covar_matrix.to_dense().detach().double().numpy()
    omega = 1.0 / 3.0  # K_task(b) = omega I + (1 - omega) 11^T / n, omega = 1 / (1 + b)
    np.testing.assert_allclose(Bm, omega * np.eye(3) + (1 - omega) / 3, atol=1e-12)
    kernel = MaternKernel(nu=2.5).to(torch.float64)
    kernel.lengthscale = 0.5
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, kernel, task_kernel, NORM, SIGMA, DELTA, train_tasks=tasks
    )
    assert not bound.kronecker_route and bound.num_observations == 15
    Xn, t = X.numpy(), tasks.numpy()
    K = matern52(Xn, Xn, 0.5) * Bm[t][:, t]

    def representer(x, w):
        return matern52(x[None], Xn, 0.5)[0] * (np.asarray(w) @ Bm)[t]

    def prior(x, w):
        return float(np.asarray(w) @ Bm @ np.asarray(w))

    assert_matches_socp(bound, test_X, FUNCTIONALS, K, representer, prior, Y.numpy()[:, 0])


def test_sum_of_two_separable_kernels_equals_cvxpy():
    X, Y, test_X = data(8, 2, seed=2)
    B1 = np.array([[1.0, 0.9], [0.9, 1.0]])
    B2 = np.array([[0.3, -0.1], [-0.1, 0.5]])
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, [rbf(0.3), rbf(1.0)], [torch.as_tensor(B1), torch.as_tensor(B2)], NORM, SIGMA,
        DELTA,
    )  # fmt: skip
    assert not bound.kronecker_route
    Xn = X.numpy()
    K = np.kron(se(Xn, Xn, 0.3), B1) + np.kron(se(Xn, Xn, 1.0), B2)

    def representer(x, w):
        w = np.asarray(w)
        return np.kron(se(x[None], Xn, 0.3)[0], B1 @ w) + np.kron(se(x[None], Xn, 1.0)[0], B2 @ w)

    def prior(x, w):
        w = np.asarray(w)
        return float(w @ (B1 + B2) @ w)

    functionals = [[1.0, 0.0], [0.0, 1.0], [0.7, 0.3]]
    assert_matches_socp(bound, test_X, functionals, K, representer, prior, Y.numpy().reshape(-1))


def test_kronecker_route_equals_dense_route_and_grid_variants_order():
    X, Y, test_X = data(20, 3, seed=3)
    B = torch.as_tensor(ICM_B)
    fast = MultiTaskMartingaleMixtureBound(X, Y, rbf(0.4), B, NORM, SIGMA, DELTA)
    dense = MultiTaskMartingaleMixtureBound(
        X, Y, [rbf(0.4), rbf(0.4)], [B / 2, B / 2], NORM, SIGMA, DELTA
    )  # the same kernel as two terms: the dense route
    W = torch.tensor(FUNCTIONALS, dtype=torch.float64)
    np.testing.assert_allclose(fast.upper(test_X, W), dense.upper(test_X, W), rtol=1e-8)
    np.testing.assert_allclose(fast.lower(test_X, W), dense.lower(test_X, W), rtol=1e-8)
    assert float(fast.radius_squared) == pytest.approx(float(dense.radius_squared), rel=1e-10)
    s = SIGMA**2
    exact = fast.upper(test_X, W)
    grid = fast.upper(test_X, W, alphas=[s / 10, s, 10 * s])
    # the Kronecker route's matrix-product grid equals the dense route's dual, per alpha
    for alphas in ([s / 10, s, 10 * s], s):
        for method in ("upper", "lower"):
            np.testing.assert_allclose(
                getattr(fast, method)(test_X, W, alphas=alphas),
                getattr(dense, method)(test_X, W, alphas=alphas),
                rtol=1e-9,
            )
    analytic = fast.upper(test_X, W, alphas=s)
    assert (exact <= grid + 1e-9).all() and (grid <= analytic + 1e-9).all()
    # the analytic bound is eq. (12) at alpha = sigma^2, transcribed
    Xn = X.numpy()
    K = np.kron(se(Xn, Xn, 0.4), ICM_B)
    radius_sq = dense_radius_squared(K, Y.numpy().reshape(-1), SIGMA, 1.0, DELTA)
    x, w = test_X[0].numpy(), np.array(FUNCTIONALS[2])
    kx = np.kron(se(x[None], Xn, 0.4)[0], ICM_B @ w)
    expected = dense_dual_objective(K, kx, w @ ICM_B @ w, Y.numpy().reshape(-1), radius_sq, NORM, s)
    assert float(analytic[0, 2]) == pytest.approx(expected, rel=1e-7)  # dense inverse: 1e-8
    # lower(w) = -upper(-w)
    np.testing.assert_allclose(fast.lower(test_X, W), -fast.upper(test_X, -W), rtol=1e-10)


def test_one_task_is_the_single_task_bound():
    X, Y, test_X = data(15, 1, seed=4)
    one = MultiTaskMartingaleMixtureBound(
        X, Y, rbf(0.3), torch.ones(1, 1, dtype=torch.float64), NORM, SIGMA, DELTA
    )
    single = MartingaleMixtureBound(X, Y, rbf(0.3), NORM, SIGMA, DELTA)
    np.testing.assert_allclose(one.upper(test_X)[:, 0], single.upper(test_X), rtol=1e-8)
    np.testing.assert_allclose(one.lower(test_X)[:, 0], single.lower(test_X), rtol=1e-8)


@pytest.mark.parametrize("task_indexed", [False, True])
def test_appending_equals_building_at_once(task_indexed):
    X, Y, test_X = data(14, 3 if not task_indexed else 1, seed=5)
    B = torch.as_tensor(ICM_B)
    tasks = torch.arange(14) % 3 if task_indexed else None

    def build(rows):
        return MultiTaskMartingaleMixtureBound(
            X[:rows], Y[:rows], rbf(0.4), B, NORM, SIGMA, DELTA,
            train_tasks=None if tasks is None else tasks[:rows],
        )  # fmt: skip

    grown = build(5)
    grown.append_observations(X[5:], Y[5:], train_tasks=None if tasks is None else tasks[5:])
    np.testing.assert_allclose(grown.upper(test_X), build(14).upper(test_X), rtol=1e-9)


def test_append_observations_takes_train_tasks_as_the_constructor():
    X, Y, test_X = data(6, 1, seed=5)
    tasks = torch.tensor([0, 1, 2, 0, 1, 2])
    B = torch.as_tensor(ICM_B)
    grown = MultiTaskMartingaleMixtureBound(
        X[:3], Y[:3], rbf(0.4), B, NORM, SIGMA, DELTA, train_tasks=tasks[:3]
    )
    grown.append_observations(X[3:], Y[3:], train_tasks=tasks[3:])
    whole = MultiTaskMartingaleMixtureBound(
        X, Y, rbf(0.4), B, NORM, SIGMA, DELTA, train_tasks=tasks
    )
    np.testing.assert_allclose(grown.upper(test_X), whole.upper(test_X), rtol=1e-9)
    with pytest.raises(TypeError, match="tasks"):
        grown.append_observations(X[:1], Y[:1], tasks=tasks[:1])  # the old name is gone
    with pytest.raises(ValueError, match="pass train_tasks"):
        grown.append_observations(X[:1], Y[:1])
    with pytest.raises(ValueError, match="train_tasks must"):
        grown.append_observations(X[:1], Y[:1], train_tasks=torch.tensor([3]))


def near_repeated_icm(num_inputs, seed, noise=1e-4):
    """Each input twice, 1e-9 apart (the Gram matrix has eigenvalues at round-off), three
    tasks of B = UniformSimilarityTaskKernel(3, omega=0.5), noise 1e-4."""
    generator = torch.Generator().manual_seed(seed)
    base = torch.rand(num_inputs, 1, generator=generator, dtype=torch.float64)
    X = torch.cat([base, base + 1e-9])
    f = 0.8 * torch.sin(6 * X)
    Y = torch.cat([f, 0.5 * f, -f], -1)
    Y = Y + noise * torch.randn(2 * num_inputs, 3, generator=generator, dtype=torch.float64)
    task_kernel = UniformSimilarityTaskKernel(3, omega=0.5)
    kronecker = MultiTaskMartingaleMixtureBound(X, Y, rbf(0.3), task_kernel, 10.0, noise, 0.1)
    B = task_kernel.covar_matrix.to_dense().detach().to(torch.float64)
    dense = MultiTaskMartingaleMixtureBound(
        X, Y, [rbf(0.3), rbf(0.3)], [B / 2, B / 2], 10.0, noise, 0.1
    )  # the same kernel as two terms: the dense route
    return X, Y, B, kronecker, dense, generator


def test_near_repeated_inputs_and_small_noise_give_finite_exact_bounds():
    # The case: the exact bound's search reaches alpha ~ 1e-10 next to
    # eigenvalues at round-off, where the Kronecker route's power series overflowed
    # (inf * 0 = NaN in 8 of 1,200 values, no error). Against the dense route (another
    # eigen-decomposition): the bound is sensitive to the eigenvalues' round-off at
    # alpha ~ 1e-12 lambda_max (the radii of the two routes differ by ~4e-8 relative).
    X, Y, _, kronecker, dense, generator = near_repeated_icm(60, seed=3)
    assert kronecker.kronecker_route and not dense.kronecker_route
    candidates = torch.rand(200, 1, generator=generator, dtype=torch.float64)
    for method in ("upper", "lower"):
        fast = getattr(kronecker, method)(candidates)
        assert torch.isfinite(fast).all()
        np.testing.assert_allclose(fast, getattr(dense, method)(candidates), rtol=2e-6, atol=1e-7)
    upper, lower = kronecker.upper(candidates), kronecker.lower(candidates)
    assert (lower < upper).all()


def test_near_repeated_inputs_equal_cvxpy():
    # A small case of the same kind (NaN at x = 0.225 before the fix); cvxpy in feature
    # coordinates, which stay well posed when K_t is singular to round-off.
    X, Y, B, kronecker, dense, _ = near_repeated_icm(4, seed=1)
    test_X = torch.linspace(0, 1, 41, dtype=torch.float64).unsqueeze(-1)
    upper, lower = kronecker.upper(test_X), kronecker.lower(test_X)
    assert torch.isfinite(upper).all() and torch.isfinite(lower).all()
    np.testing.assert_allclose(upper, dense.upper(test_X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(lower, dense.lower(test_X), rtol=1e-7, atol=1e-8)
    Xn, Bn = X.numpy(), B.numpy()
    K = np.kron(se(Xn, Xn, 0.3), Bn)
    y = Y.numpy().reshape(-1)
    radius = math.sqrt(dense_radius_squared(K, y, 1e-4, 1.0, 0.1))
    assert radius == pytest.approx(math.sqrt(float(kronecker.radius_squared)), rel=1e-8)
    for a in range(1, 41, 4):  # x = 0.025, 0.125, 0.225, ...
        k = se(test_X[a : a + 1].numpy(), Xn, 0.3)[0]
        for i in range(3):
            kx = np.kron(k, Bn[:, i])
            high = socp_bound_features(K, kx, Bn[i, i], y, radius, 10.0)
            low = socp_bound_features(K, kx, Bn[i, i], y, radius, 10.0, upper=False)
            assert float(upper[a, i]) == pytest.approx(high, rel=1e-5, abs=1e-6)
            assert float(lower[a, i]) == pytest.approx(low, rel=1e-5, abs=1e-6)


def test_gradients_dtypes_batches_and_pending_points():
    X, Y, test_X = data(10, 3, seed=6)
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, rbf(0.4), torch.as_tensor(ICM_B), NORM, SIGMA, DELTA
    )
    w = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    query = test_X.clone().requires_grad_(True)
    bound.upper(query, w).sum().backward()
    assert query.grad is not None and torch.isfinite(query.grad).all()
    assert bound.upper(test_X.float(), w.float()).dtype == torch.float32
    assert bound.upper(test_X.reshape(2, 2, 2), w).shape == (2, 2)
    pending = test_X[:1]
    with_pending = bound.upper(test_X, w, X_pending=pending)
    assert (with_pending <= bound.upper(test_X, w) + 1e-9).all()
    assert with_pending[0] < bound.upper(test_X, w)[0] - 1e-6  # the pending point shrinks
    dense = MultiTaskMartingaleMixtureBound(
        X, Y, [rbf(0.4)] * 2, [torch.as_tensor(ICM_B) / 2] * 2, NORM, SIGMA, DELTA
    )
    np.testing.assert_allclose(dense.upper(test_X, w, X_pending=pending), with_pending, rtol=1e-8)


def test_empty_set_and_bad_input():
    X, Y, _ = data(20, 3, seed=7)
    with pytest.raises(EmptyConfidenceSetError, match="multi-task"):
        MultiTaskMartingaleMixtureBound(
            X, 100 * Y, rbf(0.4), torch.as_tensor(ICM_B), 0.1, 0.01, DELTA
        )
    B = torch.as_tensor(ICM_B)
    with pytest.raises(ValueError, match="n = 3 columns"):
        MultiTaskMartingaleMixtureBound(X, Y[:, :2], rbf(0.4), B, NORM, SIGMA, DELTA)
    with pytest.raises(ValueError, match="t x 1"):
        MultiTaskMartingaleMixtureBound(
            X, Y, rbf(0.4), B, NORM, SIGMA, DELTA, train_tasks=torch.zeros(20)
        )
    with pytest.raises(ValueError, match="tasks"):
        MultiTaskMartingaleMixtureBound(
            X, Y[:, :1], rbf(0.4), B, NORM, SIGMA, DELTA, train_tasks=torch.full((20,), 3)
        )
    bound = MultiTaskMartingaleMixtureBound(X, Y, rbf(0.4), B, NORM, SIGMA, DELTA)
    with pytest.raises(ValueError, match="weights must be n = 3"):
        bound.upper(X, torch.ones(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN"):
        bound.upper(X, torch.tensor([1.0, float("nan"), 0.0], dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN"):
        bound.append_observations(X[:1], torch.full((1, 3), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="rkhs_norm_bound"):
        MultiTaskMartingaleMixtureBound(X, Y, rbf(0.4), B, -1.0, SIGMA, DELTA)
    empty = MultiTaskMartingaleMixtureBound(X[:0], Y[:0], rbf(0.4), B, NORM, SIGMA, DELTA)
    prior = empty.upper(X[:2], torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64))
    np.testing.assert_allclose(prior, NORM * math.sqrt(ICM_B[0, 0]))  # B sqrt(w^T Gamma w)


def test_to_moves_but_keeps_float64():
    X, Y, test_X = data(6, 3, seed=8)
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, rbf(0.4), torch.as_tensor(ICM_B), NORM, SIGMA, DELTA
    )
    before = bound.upper(test_X)
    bound.to(torch.float32)
    assert bound.train_Y.dtype == torch.float64 and bound.train_tasks.dtype == torch.long
    torch.testing.assert_close(bound.upper(test_X), before)


def test_bad_pending_points_and_weights_are_named():
    X, Y, test_X = data(6, 3)
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, rbf(0.4), torch.as_tensor(ICM_B), NORM, SIGMA, DELTA
    )
    with pytest.raises(ValueError, match=r"X_pending must have shape m x 2"):
        bound.upper(test_X, X_pending=torch.ones(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"X_pending must be finite \(no NaN or inf\)"):
        bound.upper(test_X, X_pending=torch.full((2, 2), float("nan"), dtype=torch.float64))
    with pytest.raises(TypeError, match="weights must be None, a tensor or a sequence"):
        bound.upper(test_X, weights="abc")


@pytest.mark.parametrize("terms", [1, 2])  # Kronecker and dense routes
def test_a_grid_of_more_than_max_alphas_is_refused(terms):
    X, Y, test_X = data(6, 2)
    B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
    bound = MultiTaskMartingaleMixtureBound(
        X, Y, [rbf(0.3)] * terms, [B / terms] * terms, NORM, SIGMA, DELTA
    )
    for call in (bound.upper, bound.lower):
        with pytest.raises(ValueError, match="alphas must hold at most MAX_ALPHAS = 100 .*got 101"):
            call(test_X, alphas=torch.logspace(-4, 2, 101))
    with pytest.raises(ValueError, match="at most MAX_ALPHAS = 100 .*got 1000000"):
        bound.radius_tilde_squared(torch.ones(10**6))
    assert bound.upper(test_X, alphas=torch.logspace(-4, 2, 100)).shape == (4, 2)
