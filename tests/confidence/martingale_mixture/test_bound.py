"""MartingaleMixtureBound against paper 002's formulas: a dense NumPy transcription of
eq. (8), Cor. 4.3, eq. (12) and Cor. 4.6, and cvxpy's SOCP of eq. (10)."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Standardize
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel

from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound

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


def socp_bound(K, kx, kxx, y, radius, norm, upper=True) -> float:
    """Eq. (10) of paper 002 with cvxpy: max / min k_{t+1}(x)^T w s.t. the two cones."""
    t = len(y)
    full = np.block([[K, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
    eigenvalues, eigenvectors = np.linalg.eigh(full)
    root = np.sqrt(np.clip(eigenvalues, 0, None))[:, None] * eigenvectors.T  # L^T L = K_{t+1}
    w = cp.Variable(t + 1)
    objective = np.append(kx, kxx) @ w
    constraints = [cp.norm(full[:t, :] @ w - y) <= radius, cp.norm(root @ w) <= norm]
    sense = cp.Maximize(objective) if upper else cp.Minimize(objective)
    return cp.Problem(sense, constraints).solve(solver=cp.CLARABEL)


# ----------------------------------------------------------------------- radius
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


# ------------------------------------------------------------- exact vs cvxpy
@pytest.mark.parametrize(
    "name, t, lengthscale, c",
    [("rbf", 120, 0.3, 1.0), ("m52", 80, 0.5, 0.2), ("m32", 120, 0.2, 0.15), ("rbf", 5, 0.5, 1.0)],
)
def test_exact_bounds_equal_socp_eq10(name, t, lengthscale, c):
    kernel, X, Y, test_X = instance(name, t=t, lengthscale=lengthscale, seed=t)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
    upper, lower = bound.upper(test_X[:3]), bound.lower(test_X[:3])
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    radius = math.sqrt(float(bound.radius_squared))
    for i in range(3):
        kx = gram(kernel, X, test_X[i : i + 1])[:, 0]
        kxx = float(gram(kernel, test_X[i : i + 1], test_X[i : i + 1])[0, 0])
        socp_upper = socp_bound(K, kx, kxx, y, radius, B, upper=True)
        socp_lower = socp_bound(K, kx, kxx, y, radius, B, upper=False)
        scale = max(abs(socp_upper), abs(socp_lower), 1.0)
        assert abs(float(upper[i]) - socp_upper) <= 1e-4 * scale
        assert abs(float(lower[i]) - socp_lower) <= 1e-4 * scale
        assert lower[i] < upper[i]


def test_exact_bound_is_the_minimum_over_a_dense_alpha_grid():
    kernel, X, Y, test_X = instance("m52", t=60, seed=3)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.3)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    R2 = float(bound.radius_squared)
    alphas = np.logspace(-7, 5, 1500)
    for i in range(3):
        kx = gram(kernel, X, test_X[i : i + 1])[:, 0]
        for sign, method in ((1.0, bound.upper), (-1.0, bound.lower)):
            values = [dense_dual_objective(K, kx, 1.0, y, R2, B, a, sign) for a in alphas]
            brute = min(values) if sign > 0 else max(values)
            ours = float(method(test_X[i : i + 1])[0])
            assert sign * ours <= sign * brute + 1e-9  # at least as tight as the grid
            assert abs(ours - brute) <= 1e-4 * max(abs(brute), 1.0)  # and not far off
            star = float(bound.optimal_alpha(test_X[i : i + 1], upper=sign > 0)[0])
            at_star = dense_dual_objective(K, kx, 1.0, y, R2, B, star, sign)
            assert at_star == pytest.approx(ours, rel=1e-8, abs=1e-9)


# --------------------------------------------------------- grid and analytic
@pytest.mark.parametrize("dtype", DTYPES)
def test_grid_and_analytic_match_dense_formula(dtype):
    kernel, X, Y, test_X = instance("rbf", t=45, seed=1)
    c = 0.5
    bound = MartingaleMixtureBound(X.to(dtype), Y.to(dtype), kernel, B, SIGMA, DELTA, c)
    base = SIGMA**2 / c
    grid = [0.1 * base, 0.3 * base, base, 3 * base, 10 * base]
    X64, Y64 = X.to(dtype).double(), Y.to(dtype).double()
    K, y = gram(kernel, X64, X64), Y64.numpy()[:, 0]
    R2 = dense_radius_squared(K, y, SIGMA, c, DELTA)
    tol = 1e-9 if dtype == torch.float64 else 2e-5
    upper_grid = bound.upper(test_X.to(dtype), alphas=grid)
    lower_grid = bound.lower(test_X.to(dtype), alphas=grid)
    analytic = bound.upper(test_X.to(dtype), alphas=base)
    assert upper_grid.dtype == dtype and analytic.dtype == dtype
    for i in range(test_X.shape[0]):
        kx = gram(kernel, X64, test_X[i : i + 1].to(dtype))[:, 0]
        ups = [dense_dual_objective(K, kx, 1.0, y, R2, B, a, 1.0) for a in grid]
        lows = [dense_dual_objective(K, kx, 1.0, y, R2, B, a, -1.0) for a in grid]
        assert float(upper_grid[i]) == pytest.approx(min(ups), rel=tol, abs=tol)
        assert float(lower_grid[i]) == pytest.approx(max(lows), rel=tol, abs=tol)
        assert float(analytic[i]) == pytest.approx(ups[2], rel=tol, abs=tol)


@pytest.mark.parametrize("name", ["rbf", "m52", "m32"])
def test_exact_tighter_than_grid_tighter_than_analytic(name):
    kernel, X, Y, test_X = instance(name, t=100, seed=7, lengthscale=0.4)
    c = 0.2 if name != "rbf" else 1.0
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
    base = SIGMA**2 / c
    grid = [0.1 * base, 0.3 * base, base, 3 * base, 10 * base]
    exact_u, grid_u, analytic_u = (bound.upper(test_X, a) for a in (None, grid, base))
    exact_l, grid_l, analytic_l = (bound.lower(test_X, a) for a in (None, grid, base))
    assert (exact_u <= grid_u + 1e-10).all() and (grid_u <= analytic_u + 1e-12).all()
    assert (exact_l >= grid_l - 1e-10).all() and (grid_l >= analytic_l - 1e-12).all()
    assert (exact_u < analytic_u).any()


def test_without_data_the_bounds_are_the_prior_ball():
    kernel = ScaleKernel(make_kernel("rbf", 0.4)).to(torch.float64)
    kernel.outputscale = 2.0
    bound = MartingaleMixtureBound(torch.zeros(0, 2), torch.zeros(0, 1), kernel, B, SIGMA, DELTA)
    X = torch.rand(4, 2, dtype=torch.float64)
    assert torch.allclose(bound.upper(X), torch.full((4,), B * math.sqrt(2.0), dtype=torch.float64))
    assert torch.allclose(bound.lower(X), -bound.upper(X))
    alpha = 0.05  # Cor. 4.6 with t = 0: sqrt(R^2 / alpha + B^2) sqrt(k(x, x))
    R2 = 2 * SIGMA**2 * math.log(1 / DELTA)
    expected = math.sqrt(R2 / alpha + B**2) * math.sqrt(2.0)
    assert torch.allclose(bound.upper(X, alpha), torch.full((4,), expected, dtype=torch.float64))


@pytest.mark.parametrize("shape", [(7,), (2, 3), (2, 1, 4)])
def test_batch_shapes(shape):
    kernel, X, Y, _ = instance("m52", t=20, d=2)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    test_X = torch.rand(*shape, 2, dtype=torch.float64)
    flat = test_X.reshape(-1, 2)
    for alphas in (None, [0.01, 0.1], 0.01):
        values = bound.upper(test_X, alphas)
        assert values.shape == shape
        assert torch.allclose(values.reshape(-1), bound.upper(flat, alphas), rtol=1e-12)
        assert bound.lower(test_X, alphas).shape == shape


def test_float32_inputs():
    kernel, X, Y, test_X = instance("rbf", t=30)
    b64 = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    b32 = MartingaleMixtureBound(X.float(), Y.float(), kernel, B, SIGMA, DELTA)
    value = b32.upper(test_X.float())
    assert value.dtype == torch.float32
    assert torch.allclose(value.double(), b64.upper(test_X), rtol=1e-4, atol=1e-4)


# -------------------------------------------------------------------- gradients
@pytest.mark.parametrize("alphas", [None, [0.003, 0.01, 0.03], 0.01])
def test_gradients_match_finite_differences(alphas):
    kernel, X, Y, test_X = instance("m52", t=40, seed=2)
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    x = test_X[:3].clone().requires_grad_(True)
    for method in (bound.upper, bound.lower):
        (gradient,) = torch.autograd.grad(method(x, alphas).sum(), x)
        eps = 1e-6
        for j in range(x.shape[-1]):
            step = torch.zeros_like(x)
            step[:, j] = eps
            with torch.no_grad():
                numeric = (method(x + step, alphas) - method(x - step, alphas)) / (2 * eps)
            assert torch.allclose(gradient[:, j], numeric, rtol=1e-4, atol=1e-5)


# -------------------------------------------------------------- recursive updates
def test_recursive_updates_equal_a_fresh_bound():
    kernel, X, Y, test_X = instance("m52", t=150, seed=4)
    grid = [0.003, 0.01, 0.1]
    bound = MartingaleMixtureBound(X[:10], Y[:10], kernel, B, SIGMA, DELTA, mixture_scale=0.4)
    bound.upper(test_X, alphas=grid)  # caches the grid's inverses
    for i in range(10, 150, 7):
        bound.append_observations(X[i : i + 7], Y[i : i + 7])
    fresh = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.4)
    assert bound.num_observations == 150
    assert float(bound.radius_squared) == pytest.approx(float(fresh.radius_squared), rel=1e-10)
    K = gram(kernel, X, X)
    for alpha in grid:
        index = bound._cache_index(alpha)
        expected = np.linalg.inv(K + alpha * np.eye(150))
        assert np.allclose(bound._cache_inverse[index].numpy(), expected, rtol=1e-7, atol=1e-7)
        logdet = np.linalg.slogdet(np.eye(150) + K / alpha)[1]
        assert float(bound._cache_logdet[index]) == pytest.approx(logdet, rel=1e-10)
    for alphas in (None, grid, 0.01):
        assert torch.allclose(bound.upper(test_X, alphas), fresh.upper(test_X, alphas), rtol=1e-8)
        assert torch.allclose(bound.lower(test_X, alphas), fresh.lower(test_X, alphas), rtol=1e-8)


def test_append_from_empty():
    kernel, X, Y, test_X = instance("rbf", t=12, d=2)
    bound = MartingaleMixtureBound(X[:0], Y[:0], kernel, B, SIGMA, DELTA)
    for i in range(12):
        bound.append_observations(X[i : i + 1], Y[i : i + 1])
    fresh = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA)
    assert torch.allclose(bound.upper(test_X, 0.01), fresh.upper(test_X, 0.01), rtol=1e-10)
    assert torch.allclose(bound.upper(test_X), fresh.upper(test_X), rtol=1e-8)


# ------------------------------------------------------------------ empty set
def test_empty_confidence_set_raises_with_the_contradicted_assumption():
    kernel, X, Y, test_X = instance("rbf", t=30, seed=5, norm=40.0)
    with pytest.raises(EmptyConfidenceSetError, match="rkhs_norm_bound") as info:
        MartingaleMixtureBound(X, Y, kernel, 1.0, SIGMA, DELTA)
    assert isinstance(info.value, ValueError)
    assert "noise_std" in str(info.value)
    # the reported thresholds are where the set becomes non-empty
    message = str(info.value)
    smallest_norm = float(message.split("rkhs_norm_bound >= ")[1].split(" ")[0])
    smallest_noise = float(message.split("noise_std >= ")[1].split(" ")[0])
    MartingaleMixtureBound(X, Y, kernel, smallest_norm * 1.001, SIGMA, DELTA)
    MartingaleMixtureBound(X, Y, kernel, 1.0, smallest_noise * 1.001, DELTA)
    with pytest.raises(EmptyConfidenceSetError):
        MartingaleMixtureBound(X, Y, kernel, smallest_norm * 0.999, SIGMA, DELTA)
    # independent check: the least-squares residual over the ball exceeds R_t
    bound = MartingaleMixtureBound(X, Y, kernel, smallest_norm * 1.001, SIGMA, DELTA)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    R2 = dense_radius_squared(K, y, SIGMA, 1.0, DELTA)
    eigenvalues, eigenvectors = np.linalg.eigh(K)
    root = np.sqrt(np.clip(eigenvalues, 0, None))[:, None] * eigenvectors.T
    w = cp.Variable(30)
    for norm, feasible in ((1.0, False), (smallest_norm * 1.01, True)):
        problem = cp.Problem(cp.Minimize(cp.sum_squares(K @ w - y)), [cp.norm(root @ w) <= norm])
        assert (problem.solve(solver=cp.CLARABEL) <= R2) == feasible
    assert bound.upper(test_X).isfinite().all()


def test_empty_set_detected_after_appends():
    kernel, X, Y, test_X = instance("m52", t=20, seed=6)
    bound = MartingaleMixtureBound(X[:5], Y[:5], kernel, B, SIGMA, DELTA)
    bound.upper(test_X, alphas=0.01)
    bound.append_observations(X[5:], 100.0 * Y[5:])  # contradicts ||f|| <= 10
    # R~_alpha^2 < 0 at alpha = 1: that grid's dual is unbounded below
    assert float(bound.radius_tilde_squared(1.0)) < 0
    with pytest.raises(EmptyConfidenceSetError):
        bound.upper(test_X, alphas=[0.01, 1.0])
    with pytest.raises(EmptyConfidenceSetError):
        bound.lower(test_X)
    with pytest.raises(EmptyConfidenceSetError):
        bound.check_nonempty()
    # at alpha = sigma^2 / c, R~^2 > 0 always (Lemma C.2): the analytic bound of the
    # larger set F~_t stays finite (documented), only the exact check sees the empty F_t
    assert float(bound.radius_tilde_squared(0.01)) > 0
    assert bound.upper(test_X, alphas=0.01).isfinite().all()


# ------------------------------------------------------------------ from_model
def test_from_model_uses_the_raw_data_and_kernel():
    kernel, X, Y, test_X = instance("m52", t=25, d=2)
    model = SingleTaskGP(X, Y, covar_module=kernel, outcome_transform=None)
    model.likelihood.noise = 0.02
    bound = MartingaleMixtureBound.from_model(model, B, SIGMA, DELTA, mixture_scale=0.5)
    direct = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.5)
    assert torch.allclose(bound.upper(test_X), direct.upper(test_X), rtol=1e-12)
    from_noise = MartingaleMixtureBound.from_model(model, B, None, DELTA)
    assert from_noise.noise_std == pytest.approx(math.sqrt(0.02), rel=1e-6)


def test_from_model_refuses_transforms():
    kernel, X, Y, _ = instance("rbf", t=10, d=2)
    model = SingleTaskGP(X, Y, covar_module=kernel, outcome_transform=Standardize(m=1))
    with pytest.raises(ValueError, match="outcome transform"):
        MartingaleMixtureBound.from_model(model, B, SIGMA, DELTA)
    with pytest.raises(TypeError, match="exact GP"):
        MartingaleMixtureBound.from_model(object(), B, SIGMA, DELTA)


# ------------------------------------------------------------------ bad input
def test_bad_input():
    kernel, X, Y, test_X = instance("rbf", t=10, d=3)
    good = dict(kernel=kernel, rkhs_norm_bound=B, noise_std=SIGMA, delta=DELTA)
    cases = [
        (dict(mixture_scale=0.0), ValueError, "mixture_scale"),
        (dict(mixture_scale=-1.0), ValueError, "mixture_scale"),
        (dict(rkhs_norm_bound=0.0), ValueError, "rkhs_norm_bound"),
        (dict(noise_std=-0.1), ValueError, "noise_std"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(noise_std=float("nan")), ValueError, "noise_std"),
        (dict(kernel="rbf"), TypeError, "kernel"),
    ]
    for change, error, match in cases:
        with pytest.raises(error, match=match):
            MartingaleMixtureBound(X, Y, **{**good, **change})
    for bad_Y in (Y[:, 0], torch.cat([Y, Y], -1), Y[:5]):
        with pytest.raises(ValueError, match="train_Y must be t x 1"):
            MartingaleMixtureBound(X, bad_Y, **good)
    nan_Y = Y.clone()
    nan_Y[0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        MartingaleMixtureBound(X, nan_Y, **good)
    bound = MartingaleMixtureBound(X, Y, **good)
    for alphas in (0.0, -1.0, [0.1, float("inf")], float("nan"), []):
        with pytest.raises(ValueError, match="alphas"):
            bound.upper(test_X, alphas=alphas)
    with pytest.raises(ValueError, match="batch x 3"):
        bound.upper(torch.rand(4, 2))
    with pytest.raises(ValueError, match="NaN"):
        bound.lower(torch.full((1, 3), float("nan")))
    with pytest.raises(ValueError, match="Y must be m x 1"):
        bound.append_observations(test_X[:2], torch.zeros(2))


# ----------------------------------------------------------------------- speed
def test_exact_bound_matches_cvxpy_at_t_300():
    # The speed-up over cvxpy is measured by benchmarks/mm_bound_vs_cvxpy.py (not a
    # timed unit test); here only the agreement at the benchmark's size.
    kernel, X, Y, test_X = instance("m52", t=300, seed=8, lengthscale=0.5)
    candidates = torch.rand(100, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=0.2)
    ours = bound.upper(candidates)
    K, y = gram(kernel, X, X), Y.numpy()[:, 0]
    radius = math.sqrt(float(bound.radius_squared))
    for i in range(2):
        kx = gram(kernel, X, candidates[i : i + 1])[:, 0]
        value = socp_bound(K, kx, 1.0, y, radius, B)
        assert abs(value - float(ours[i])) <= 1e-4 * max(abs(value), 1.0)


def test_gradient_without_data_is_zero_not_an_error():
    kernel = make_kernel("rbf", 0.3)
    bound = MartingaleMixtureBound(torch.zeros(0, 2), torch.zeros(0, 1), kernel, B, SIGMA, DELTA)
    x = torch.rand(3, 2, dtype=torch.float64, requires_grad=True)
    for alphas in (None, 0.01):
        (gradient,) = torch.autograd.grad(bound.upper(x, alphas).sum(), x)
        assert torch.equal(gradient, torch.zeros_like(x))
