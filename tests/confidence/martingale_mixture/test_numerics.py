"""Numerics of MartingaleMixtureBound at small noise and at the edges of float64
(issue 11, items 1-3): appending rows one by one against building in one go, the order
exact <= grid <= analytic at alpha = sigma^2 = 1e-8, and overflowing or integer inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from martingale_oracles import DELTA, B, gram, make_kernel

from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.alpha_search import search_range


def small_noise_instance(noise, near_duplicates, t=30, d=1, seed=0, num_test=50, lengthscale=0.3):
    """``t`` observations of an RBF-RKHS function with ``||f||_H = B``,
    uniform on ``[0, 1]^d`` or, with ``near_duplicates``, the second half within ``1e-6``
    of the first; returns the kernel, the data, test points and ``f`` at them."""
    generator = torch.Generator().manual_seed(seed)
    kernel = make_kernel("rbf", lengthscale)
    Z = torch.rand(15, d, generator=generator, dtype=torch.float64)
    w = torch.randn(15, generator=generator, dtype=torch.float64)
    w = w * B / math.sqrt(w @ torch.as_tensor(gram(kernel, Z, Z)) @ w)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    if near_duplicates:
        half = t // 2
        jitter = 1e-6 * torch.rand(t - half, d, generator=generator, dtype=torch.float64)
        X[half:] = X[: t - half] + jitter
    Y = torch.as_tensor(gram(kernel, X, Z)) @ w
    Y = (Y + noise * torch.randn(t, generator=generator, dtype=torch.float64)).unsqueeze(-1)
    test_X = torch.rand(num_test, d, generator=generator, dtype=torch.float64)
    return kernel, X, Y, test_X, torch.as_tensor(gram(kernel, test_X, Z)) @ w


def alpha_choices(noise):
    """The ``alphas`` of the exact, grid and analytic bounds (``c = 1``)."""
    alpha = noise**2
    return {"exact": None, "grid": [alpha, 10 * alpha, 100 * alpha], "analytic": alpha}


def one_go_and_appended(kernel, X, Y, noise):
    """The bound built on all rows at once, and one grown from the first row by appending
    the others one at a time (with the grid's factors cached before the appends)."""
    whole = MartingaleMixtureBound(X, Y, kernel, B, noise, DELTA)
    grown = MartingaleMixtureBound(X[:1], Y[:1], kernel, B, noise, DELTA)
    grown.upper(X[:1], alphas=alpha_choices(noise)["grid"])
    for i in range(1, X.shape[0]):
        grown.append_observations(X[i : i + 1], Y[i : i + 1])
    return whole, grown


def normwise(value, reference):
    """``max |value - reference| / max |reference|`` (the bounds cross 0, so pointwise
    relative errors would compare round-off with 0)."""
    return float((value - reference).abs().max() / reference.abs().max())


def bound_errors(whole, grown, test_X, noise, kinds):
    """Normwise differences of ``upper`` and ``lower`` of each kind, after checking that
    every value is finite."""
    choices = alpha_choices(noise)
    errors = {}
    for kind in kinds:
        for side in ("upper", "lower"):
            reference = getattr(whole, side)(test_X, choices[kind])
            value = getattr(grown, side)(test_X, choices[kind])
            assert torch.isfinite(value).all() and torch.isfinite(reference).all()
            errors[f"{side} {kind}"] = normwise(value, reference)
    return errors


# ------------------------------------------------- item 1: appending at small noise
@pytest.mark.parametrize(
    "noise, near_duplicates, d",
    [
        (1e-2, False, 1),
        (1e-3, False, 1),
        (1e-3, True, 1),
        (1e-4, False, 1),
        (1e-4, True, 1),
        (1e-4, True, 2),
        (1e-6, False, 2),
    ],
)
def test_appending_rows_one_by_one_matches_building_in_one_go(noise, near_duplicates, d):
    """R_t^2 and every bound after 29 single-row appends agree with the bound built in
    one go to 1e-8 (R_t^2 relative, the bounds normwise), and nothing is NaN (the
    recursive inverse of App. E.2 gave R_t^2 = 3e10, then NaN, at noise 1e-4)."""
    kernel, X, Y, test_X, _ = small_noise_instance(noise, near_duplicates, d=d)
    whole, grown = one_go_and_appended(kernel, X, Y, noise)
    radius, reference = float(grown.radius_squared), float(whole.radius_squared)
    assert math.isfinite(radius) and abs(radius - reference) <= 1e-8 * reference
    errors = bound_errors(whole, grown, test_X, noise, ("exact", "grid", "analytic"))
    assert max(errors.values()) <= 1e-8, errors


def high_precision_bounds(bound, test_X, alphas, digits=40):
    """R_t^2 and the upper bound ``min_{alpha in alphas}`` of eq. (12) from the bound's
    own float64 Gram matrix, in ``digits``-digit arithmetic (mpmath): the exact answers
    that a float64 computation on that Gram matrix approximates."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(digits):
        t, gram_matrix = (
            bound.num_observations,
            mpmath.matrix(bound.gram_spectrum.cache.gram.tolist()),
        )
        y = [mpmath.mpf(v) for v in bound.train_Y.reshape(-1).tolist()]

        def forward(factor, rhs):  # L^{-1} rhs for a lower triangular L
            solution = []
            for i in range(t):
                partial = sum(factor[i, j] * solution[j] for j in range(i))
                solution.append((rhs[i] - partial) / factor[i, i])
            return solution

        def whitened(alpha):  # L_alpha and L_alpha^{-1} y, with L_alpha L_alpha^T = K + alpha I
            factor = mpmath.cholesky(gram_matrix + alpha * mpmath.eye(t))
            return factor, forward(factor, y)

        s, sigma2 = mpmath.mpf(bound.base_alpha), mpmath.mpf(bound.noise_std) ** 2
        factor, whitened_y = whitened(s)
        log_det = 2 * sum(mpmath.log(factor[i, i]) for i in range(t)) - t * mpmath.log(s)
        radius_sq = s * sum(v**2 for v in whitened_y) + sigma2 * log_det
        radius_sq += 2 * sigma2 * mpmath.log(1 / mpmath.mpf(DELTA))
        prior, cross = bound.gram_spectrum.prior_terms(bound, test_X)
        upper = [mpmath.inf] * len(prior)
        for alpha in map(mpmath.mpf, alphas):
            factor, whitened_y = whitened(alpha)
            fit = alpha * sum(v**2 for v in whitened_y)
            scale = mpmath.sqrt((radius_sq + alpha * mpmath.mpf(B) ** 2 - fit) / alpha)
            for n, (row, kxx) in enumerate(zip(cross.tolist(), prior.tolist())):
                whitened_k = forward(factor, list(map(mpmath.mpf, row)))  # L^{-1} k_t(x)
                mean = sum(a * b for a, b in zip(whitened_k, whitened_y))
                variance = kxx - sum(v**2 for v in whitened_k)
                upper[n] = min(upper[n], mean + scale * mpmath.sqrt(max(variance, 0)))
        return float(radius_sq), torch.tensor([float(u) for u in upper], dtype=torch.float64)


@pytest.mark.parametrize(
    "noise, near_duplicates, d", [(1e-5, True, 1), (1e-6, False, 1), (1e-6, True, 2)]
)
def test_appending_at_tiny_noise_is_as_accurate_as_building_in_one_go(noise, near_duplicates, d):
    """Down to noise 1e-6 every value stays finite and the exact bounds still agree with
    the one-go bound to 1e-8 normwise. R_t^2 and the grid and analytic bounds (alphas
    near ``sigma^2 = 1e-12``), though, are ill-conditioned there: the two Gram matrices
    differ by GPyTorch's round-off (about 1e-16), and the exact answers on them (40
    digits) differ by up to ~1e-5, more than any float64 computation can resolve. So
    the test is that appending loses no more than 10x the accuracy of building in one
    go, or of that intrinsic change, whichever is larger."""
    kernel, X, Y, test_X, _ = small_noise_instance(noise, near_duplicates, d=d, num_test=10)
    whole, grown = one_go_and_appended(kernel, X, Y, noise)
    errors = bound_errors(whole, grown, test_X, noise, ("exact",))
    assert max(errors.values()) <= 1e-8, errors
    for kind in ("grid", "analytic"):
        alphas = alpha_choices(noise)[kind]
        grid = alphas if isinstance(alphas, list) else [alphas]
        radius = {}, {}, {}  # computed, exact answer on the bound's own Gram matrix, error
        upper = {}, {}, {}
        for name, bound in (("whole", whole), ("grown", grown)):
            radius[1][name], upper[1][name] = high_precision_bounds(bound, test_X, grid)
            radius[0][name] = float(bound.radius_squared)
            upper[0][name] = bound.upper(test_X, alphas=alphas)
            radius[2][name] = abs(radius[0][name] - radius[1][name]) / radius[1][name]
            upper[2][name] = normwise(upper[0][name], upper[1][name])
        intrinsic_radius = abs(radius[1]["grown"] - radius[1]["whole"]) / radius[1]["whole"]
        intrinsic_upper = normwise(upper[1]["grown"], upper[1]["whole"])
        for error, intrinsic in ((radius[2], intrinsic_radius), (upper[2], intrinsic_upper)):
            assert math.isfinite(error["grown"]) and math.isfinite(error["whole"])
            assert error["grown"] <= 10 * max(error["whole"], intrinsic, 1e-12), (
                kind, error, intrinsic,
            )  # fmt: skip


# ------------------------------------------ item 2: alpha = sigma^2 = 1e-8, 250 points
def test_exact_grid_analytic_order_at_alpha_1e_minus_8():
    """At noise 1e-4 (``alpha = sigma^2 / c = 1e-8``, ten decades below ``lambda_max``),
    200 observations, an assumed norm 5% above the true one, on 250 test points:

    * the posterior variances ``k(x, x) - ||L_alpha^{-1} k_t(x)||^2`` that the analytic
      bound reads come from Cholesky solves and are non-negative everywhere (the former
      cached inverse gave negative ones);
    * with DMM's grid ``{0.1, 0.3, 1, 3, 10} sigma^2``, which contains the analytic
      alpha, ``upper(X)`` (exact: min over alpha > 0 of eq. (12)) ``<= upper(X, grid)``
      (min over the grid) ``<= upper(X, sigma^2)`` (analytic: the grid's alpha
      ``sigma^2`` alone), and the mirror image for ``lower``. Exactly true in exact
      arithmetic; the tolerances are the round-off of the two routes (spectrum vs
      Cholesky factor: 1e-8 of the bounds' scale) and of one matrix product of another
      width (grid vs analytic, same factor: 1e-10). Before, the exact search started at
      ``1e-10 lambda_max > sigma^2``, and the exact bound exceeded the analytic one at
      most points;
    * the analytic band covers the true ``f`` at every point.
    """
    noise = 1e-4
    kernel, X, Y, test_X, f = small_noise_instance(
        noise, False, t=200, num_test=250, lengthscale=0.7
    )
    bound = MartingaleMixtureBound(X, Y, kernel, 1.05 * B, noise, DELTA)
    alpha = noise**2
    assert alpha < 1e-10 * float(bound.spectrum().eigenvalues.max())  # the former floor
    prior, cross = bound.gram_spectrum.prior_terms(bound, test_X)
    explained = bound.gram_spectrum.cache.explained_variance(
        bound.gram_spectrum.cache.index(alpha), cross
    )[:, 0]
    assert ((prior - explained) >= 0).all()
    grid = [m * alpha for m in (0.1, 0.3, 1.0, 3.0, 10.0)]
    exact_u, grid_u, analytic_u = (bound.upper(test_X, a) for a in (None, grid, alpha))
    exact_l, grid_l, analytic_l = (bound.lower(test_X, a) for a in (None, grid, alpha))
    scale = float(torch.cat([analytic_u, analytic_l]).abs().max())
    assert (exact_u <= grid_u + 1e-8 * scale).all() and (grid_u <= analytic_u + 1e-10 * scale).all()
    assert (exact_l >= grid_l - 1e-8 * scale).all() and (grid_l >= analytic_l - 1e-10 * scale).all()
    assert (exact_u < analytic_u).float().mean() > 0.9  # the exact bound is the tighter one
    assert ((analytic_l <= f) & (f <= analytic_u)).all()


def test_search_range_holds_sigma2_over_c_when_the_noise_is_tiny():
    eigenvalues = torch.tensor([1e-3, 50.0], dtype=torch.float64)
    assert search_range(eigenvalues, 1e-8)[0] == pytest.approx(1e-10)  # 1e-2 sigma^2 / c
    assert search_range(eigenvalues, 1e-30)[0] == pytest.approx(5e-11)  # 1e-12 lambda_max
    assert search_range(eigenvalues, 0.01)[0] == pytest.approx(5e-9)  # as before


# ------------------------------------------------ item 3: overflow and integer inputs
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_overflowing_observations_raise_a_value_error_naming_them(dtype):
    kernel, X, Y, test_X, _ = small_noise_instance(0.1, False, t=10)
    X, Y = X.to(dtype), Y.to(dtype)
    if dtype == torch.float64:
        with pytest.raises(ValueError, match="train_Y is too large for float64"):
            MartingaleMixtureBound(X, 1e300 * Y, kernel, B, 0.1, DELTA)
    else:  # float32 data cannot overflow the float64 sums: the bound is finite
        big = MartingaleMixtureBound(X, 1e30 * Y, kernel, 1e32, 1e29, DELTA)
        assert torch.isfinite(big.upper(test_X.float(), 1e58)).all()
    bound = MartingaleMixtureBound(X, Y, kernel, B, 0.1, DELTA)
    before = bound.upper(test_X)
    with pytest.raises(ValueError, match="Y is too large for float64"):
        bound.append_observations(test_X[:1], torch.full((1, 1), 1e300, dtype=torch.float64))
    assert bound.num_observations == 10 and torch.equal(bound.upper(test_X), before)


def test_a_radius_that_overflows_raises_instead_of_nan_bounds():
    """``sum y^2`` is finite (1e305) but ``||L^{-1} y||^2 <= y^T y / alpha`` at alpha =
    1e-8 is not: R~^2 would be inf - inf = NaN, which passed the emptiness test."""
    kernel, X, Y, _, _ = small_noise_instance(0.1, False, t=10)
    huge = 1e152 * torch.randn(10, 1, generator=torch.Generator().manual_seed(0)).double()
    with pytest.raises(ValueError, match=r"radius R_t\^2 of paper 002's eq. \(8\) is inf"):
        MartingaleMixtureBound(X, huge, kernel, 1e154, 1e-4, DELTA)


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(rkhs_norm_bound=1e200), r"rkhs_norm_bound\*\*2 = inf overflows"),
        (dict(noise_std=1e200), r"noise_std\*\*2 = inf overflows"),
        (dict(noise_std=1e-200), r"noise_std\*\*2 = 0 underflows"),
        (dict(mixture_scale=1e-320), r"noise_std\*\*2 / mixture_scale = inf overflows"),
    ],
)
def test_scalars_whose_squares_leave_float64_raise(change, match):
    kernel, X, Y, _, _ = small_noise_instance(0.1, False, t=10)
    arguments = dict(rkhs_norm_bound=B, noise_std=0.1, delta=DELTA, mixture_scale=1.0)
    with pytest.raises(ValueError, match=match):
        MartingaleMixtureBound(X, Y, kernel, **{**arguments, **change})


def test_integer_points_give_float64_bounds_like_float_points():
    kernel, X, Y, _, _ = small_noise_instance(0.1, False, t=10)
    bound = MartingaleMixtureBound(7 * X, Y, kernel, 100 * B, 0.1, DELTA)
    points = torch.tensor([[1], [0], [3]])
    for alphas in (None, [0.003, 0.03], 0.01):
        for side in (bound.upper, bound.lower):
            value = side(points, alphas)
            assert value.dtype == torch.float64
            assert torch.equal(value, side(points.double(), alphas))
    assert bound.upper(points.float()).dtype == torch.float32
    for bad in (points.bool(), points.to(torch.complex64)):
        with pytest.raises(TypeError, match="X must be a real"):
            bound.upper(bad)


def test_inputs_at_which_the_kernel_overflows_raise_instead_of_nan():
    """``1e300 * X``: finite inputs whose squared distances overflow the kernel (GPyTorch
    gave a NanError in the constructor and NaN bounds at query points)."""
    kernel, X, Y, test_X, _ = small_noise_instance(0.1, False, t=10)
    with pytest.raises(ValueError, match="train_X is outside the range where the kernel"):
        MartingaleMixtureBound(1e300 * X, Y, kernel, B, 0.1, DELTA)
    bound = MartingaleMixtureBound(X, Y, kernel, B, 0.1, DELTA)
    before = bound.upper(test_X)
    for alphas in (None, [0.01, 0.1], 0.01):
        with pytest.raises(ValueError, match="X is outside the range where the kernel"):
            bound.upper(1e300 * test_X, alphas)
    with pytest.raises(ValueError, match="X is outside the range where the kernel"):
        bound.append_observations(1e300 * test_X[:2], Y[:2])
    assert bound.num_observations == 10 and torch.equal(bound.upper(test_X), before)


@pytest.mark.parametrize("alphas", [None, [1e-3, 1e-2], 1e-2])
@pytest.mark.parametrize("which", ["single", "kronecker", "dense"])
def test_a_non_finite_bound_raises_instead_of_returning_nan(monkeypatch, which, alphas):
    # The last line of defence: whatever numerical failure happens inside the routes
    # (simulated here by a NaN in the dual or in the posterior std), no NaN comes out.
    from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
    from botorch_mtucb.confidence.martingale_mixture import (
        alpha_search,
        factored_dual,
        gram_cache_spectrum,
        kronecker,
        spectra,
    )

    kernel, X, Y, test_X, _ = small_noise_instance(0.1, False, t=8, num_test=4)
    if which == "single":
        built = MartingaleMixtureBound(X, Y, kernel, B, 0.1, DELTA)
    else:
        terms = 1 if which == "kronecker" else 2
        built = MultiTaskMartingaleMixtureBound(
            X, Y, [kernel] * terms, [torch.ones(1, 1, dtype=torch.float64) / terms] * terms,
            B, 0.1, DELTA,
        )  # fmt: skip
    assert torch.isfinite(built.upper(test_X, alphas=alphas)).all()

    original = alpha_search.posterior_std

    def nan_std(prior_variance, explained_variance):  # one NaN in every call
        std = original(prior_variance, explained_variance)
        if isinstance(std, np.ndarray):  # the alpha search on NumPy arrays (CPU)
            std = std.copy()
            std.reshape(-1)[1] = np.nan
            return std
        std = std.clone(memory_format=torch.contiguous_format)
        std.view(-1)[1] = torch.nan
        return std

    for module in (alpha_search, kronecker, spectra, gram_cache_spectrum, factored_dual):
        monkeypatch.setattr(module, "posterior_std", nan_std)
    for method in ("upper", "lower"):
        with pytest.raises(FloatingPointError, match=f"{method} bound is not finite at"):
            getattr(built, method)(test_X, alphas=alphas)
