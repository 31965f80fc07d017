"""The empty-set test of paper 002 (Lemma 4.2) and EmptyConfidenceSetError: thresholds
checked against cvxpy's least squares over the ball, and brentq against the bisections
it replaced."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
import torch
from martingale_oracles import (
    DELTA,
    SIGMA,
    B,
    dense_radius_squared,
    gram,
    instance,
)

from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.emptiness import (
    THRESHOLD_RTOL,
    contradicts,
    min_radius_tilde_squared,
    smallest_passing,
)
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    spectral_radius_squared,
)


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


# ------------------------------------------------- brentq vs the former bisections
def bisection_min_radius_tilde_squared(spectrum, norm, radius_sq, base_alpha):
    """The former 80-step bisection on the derivative of R~^2 in log alpha (oracle)."""
    lam, z2 = spectrum.eigenvalues, spectrum.rotated_y**2
    scale = max(float(lam.max()), base_alpha)
    low = torch.tensor(math.log(1e-16 * scale), dtype=torch.float64)
    high = torch.tensor(math.log(1e16 * scale), dtype=torch.float64)
    for _ in range(80):
        middle = 0.5 * (low + high)
        if norm**2 - (z2 * lam / (lam + middle.exp()) ** 2).sum() < 0:
            low = middle
        else:
            high = middle
    alpha = torch.stack([low.exp(), high.exp()])
    values = radius_sq + alpha * norm**2 - (alpha[:, None] / (lam + alpha[:, None]) * z2).sum(-1)
    return float(values.min())


def bisection_smallest_passing(predicate, start):
    """The former doubling + 60-step log-space bisection (oracle)."""
    low, high = start, start
    while not predicate(high):
        low, high = high, 2.0 * high
        if high > 1e12 * start:
            return math.inf
    for _ in range(60):
        middle = math.sqrt(low * high)
        if predicate(middle):
            high = middle
        else:
            low = middle
    return high


@pytest.mark.parametrize("seed, norm", [(5, 40.0), (6, 10.0), (7, 3.0)])
def test_brentq_agrees_with_the_former_bisections(seed, norm):
    kernel, X, Y, _ = instance("rbf", t=30, seed=seed, norm=norm)
    bound = MartingaleMixtureBound(X, Y, kernel, 10 * norm, SIGMA, DELTA)
    spectrum, radius_sq = bound.spectrum(), bound.radius_squared
    for trial_norm in (0.1, 1.0, norm, 10 * norm):
        ours = min_radius_tilde_squared(spectrum, trial_norm, radius_sq, bound.base_alpha)
        oracle = bisection_min_radius_tilde_squared(
            spectrum, trial_norm, radius_sq, bound.base_alpha
        )
        assert ours == pytest.approx(oracle, rel=1e-12, abs=1e-12 * float(radius_sq))

    def norm_margin(value):
        return min_radius_tilde_squared(spectrum, value, radius_sq, bound.base_alpha)

    def noise_margin(value):
        radius = spectral_radius_squared(spectrum, value, 1.0, DELTA)
        return min_radius_tilde_squared(spectrum, 0.1, radius, bound.base_alpha)

    for margin, start in ((norm_margin, 0.1), (noise_margin, 0.01)):
        ours = smallest_passing(margin, start)
        oracle = bisection_smallest_passing(lambda v, m=margin: m(v) >= 0, start)
        assert ours == pytest.approx(oracle, rel=10 * THRESHOLD_RTOL)
        assert margin(ours * (1 + 1e-9)) >= 0 > margin(ours * (1 - 1e-9))


def test_smallest_passing_edge_cases():
    assert smallest_passing(lambda v: 1.0, 3.0) == 3.0  # the start passes
    assert smallest_passing(lambda v: -1.0, 1.0) == math.inf  # nothing up to 1e12 x start
    assert smallest_passing(lambda v: v - 5.0, 1.0) == pytest.approx(5.0, rel=1e-12)


def test_min_radius_tilde_without_data_and_at_the_ends_of_the_range():
    empty = GramSpectrum.from_gram(
        torch.zeros(0, 0, dtype=torch.float64), torch.zeros(0, dtype=torch.float64)
    )
    assert min_radius_tilde_squared(empty, 1.0, torch.tensor(2.0), 0.01) == 2.0
    # y = 0: R~^2 = R^2 + alpha B^2 increases, its minimum is at the left end (~R^2)
    flat = GramSpectrum.from_gram(
        torch.eye(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    )
    assert min_radius_tilde_squared(flat, 1.0, torch.tensor(2.0), 0.01) == pytest.approx(2.0)


def test_contradicts_is_relative_to_the_radius():
    assert contradicts(-1e-3, 1.0) and not contradicts(-1e-11, 1.0)
    assert not contradicts(0.0, 1.0) and not contradicts(-1e-9, 1e2)


def test_message_is_kept_word_for_word():
    kernel, X, Y, _ = instance("rbf", t=30, seed=5, norm=40.0)
    with pytest.raises(EmptyConfidenceSetError) as info:
        MartingaleMixtureBound(X, Y, kernel, 1.0, SIGMA, DELTA)
    message = str(info.value)
    radius = math.sqrt(dense_radius_squared(gram(kernel, X, X), Y.numpy()[:, 0], SIGMA, 1.0, DELTA))
    norm = float(message.split("rkhs_norm_bound >= ")[1].split(" ")[0])
    noise = float(message.split("noise_std >= ")[1].split(" ")[0])
    expected = (
        "the martingale-mixture confidence set (paper 002, Lemma 4.2) is empty: no "
        "function with RKHS norm <= rkhs_norm_bound = 1 fits the 30 observations within "
        f"the radius R_t = {radius:.6g} implied by noise_std = 0.1 and delta = 0.01. The "
        "data contradict the assumed norm bound at this noise level: the set is non-empty "
        f"only for rkhs_norm_bound >= {norm:.6g} (with noise_std = 0.1) or for noise_std >= "
        f"{noise:.6g} (with rkhs_norm_bound = 1). Increase rkhs_norm_bound or noise_std, or "
        "check the data and the kernel."
    )
    assert message == expected
