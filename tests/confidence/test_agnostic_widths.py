"""Widths and regularization of paper 001 (Theorems 1-2) against a NumPy transcription."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.confidence.agnostic_widths import (
    WIDTH_RULES,
    multitask_regularization,
    multitask_widths,
    theorem2_kernel_parameter,
)
from botorch_mtucb.confidence.information_gain import task_effective_dimensions


def reference_widths(N, b, B, eps, lam, delta, g_mt, g_st, t, sigma=1.0, S=None):
    """Theorem 1 of paper 001 (and eqs. 24, 26), transcribed independently."""
    B = B / sigma
    var_mt = lam ** (-0.5) * np.sqrt(2 * (g_mt + np.log(1 / delta)))
    naive = B * np.sqrt(N * (1 + b * eps**2)) + var_mt
    small = B * (1 + b * eps) * np.sqrt((1 + b * N) / (1 + b)) + lam ** (-0.5) * np.sqrt(
        2 * (1 + b * N) * (g_st + np.log(N / delta))
    )
    large = (
        B
        * np.sqrt(
            (1 + b * eps) ** 2 / (1 + b)
            + 2 * b * N / (1 + b)
            + 2 * b * (1 + b * eps) ** 2 / (N * lam**2 * (1 + b) ** 3) * t**2
        )
        + var_mt
    )
    out = {"naive": sigma * naive, "small_b": sigma * small, "large_b": sigma * large}
    if S is not None:
        D = N * B / (lam * (1 + b)) + B * (1 + b * eps) / (lam * (1 + b)) * S  # eq. 26
        bias = np.sqrt(B**2 * (1 + b * eps) ** 2 / (1 + b) + lam**2 * b * (1 + b) / N * D**2)
        out["large_b_data_dependent"] = sigma * (bias + var_mt)
    return out


def test_regularization_matches_theorem2():
    rng = np.random.default_rng(0)
    for _ in range(50):
        N, b = int(rng.integers(1, 30)), float(rng.exponential(5.0))
        K = np.eye(N) / (1 + b) + b / (1 + b) * np.ones((N, N)) / N
        assert multitask_regularization(N, b) == pytest.approx((N + b) / (N + b * N), rel=1e-14)
        assert multitask_regularization(N, b) == pytest.approx(K[0, 0], rel=1e-12)
    assert multitask_regularization(4, 0.0) == 1.0
    assert multitask_regularization(4, math.inf) == 0.25


@pytest.mark.parametrize("with_s", [False, True])
def test_widths_match_transcription_over_random_parameters(with_s):
    rng = np.random.default_rng(1)
    for _ in range(200):
        N = int(rng.integers(1, 25))
        b = float(rng.choice([0.0, rng.exponential(0.3), rng.exponential(30.0)]))
        lo, hi = 1 / (1 + b), 1.0
        lam = float(rng.uniform(max(lo, multitask_regularization(N, b)), hi))
        eps, B = float(rng.uniform(0, 2)), float(rng.uniform(0, 10))
        delta, t = float(rng.uniform(1e-4, 0.9)), int(rng.integers(0, 500))
        g_mt, g_st = float(rng.uniform(0, 200)), float(rng.uniform(0, 50))
        sigma = float(rng.uniform(0.01, 3))
        S = float(rng.uniform(0, 100)) if with_s else None
        got = multitask_widths(N, b, B, eps, lam, delta, g_mt, g_st, t, sigma, S)
        want = reference_widths(N, b, B, eps, lam, delta, g_mt, g_st, t, sigma, S)
        for key, value in want.items():
            assert float(got[key]) == pytest.approx(value, rel=1e-11), key
        assert float(got["new"]) == pytest.approx(min(want.values()), rel=1e-12)
        assert float(got["new"]) <= min(want["naive"], want["small_b"], want["large_b"]) * (
            1 + 1e-12
        )


def test_data_dependent_below_data_independent_for_bounded_kernel():
    """With k(x, x) <= 1, S <= t / (lambda (1 + b)), so eq. 26 is tighter than eq. 27."""
    torch.manual_seed(0)
    X = torch.randn(40, 3, dtype=torch.float64)
    X = X / X.norm(dim=-1, keepdim=True)
    tasks = torch.randint(0, 4, (40,))
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    for b in [0.1, 1.0, 10.0, 100.0]:
        lam = multitask_regularization(4, b)
        S = task_effective_dimensions(X, tasks, kernel, 4, b, lam).sum()
        assert float(S) <= 40 / (lam * (1 + b))
        widths = multitask_widths(4, b, 2.0, 0.5, lam, 0.05, 3.0, 1.0, 40, effective_dimension=S)
        assert float(widths["large_b_data_dependent"]) <= float(widths["large_b"]) + 1e-12


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_widths_broadcast_and_dtype(dtype):
    g_mt = torch.rand(3, 1, dtype=dtype) * 10
    g_st = torch.rand(4, dtype=dtype) * 5
    widths = multitask_widths(5, 2.0, 1.0, 0.3, 0.6, 0.1, g_mt, g_st, 7)
    for value in widths.values():
        assert value.shape == (3, 4)
        assert value.dtype == torch.float64
    for i in range(3):
        for j in range(4):
            want = reference_widths(
                5, 2.0, 1.0, 0.3, 0.6, 0.1, float(g_mt[i, 0]), float(g_st[j]), 7
            )
            for key in want:
                tol = 1e-6 if dtype == torch.float32 else 1e-12
                assert float(widths[key][i, j]) == pytest.approx(want[key], rel=tol)


def test_infinite_b_limits():
    N, B, lam, delta, g = 5, 1.3, 0.2, 0.05, 4.0
    at_inf = multitask_widths(N, math.inf, B, 0.0, lam, delta, g, 1.0, 10, effective_dimension=2.0)
    # eps = 0: the naive width is sqrt(N) times single-task IGP-UCB with lambda = 1/N = 0.2
    want = B * math.sqrt(N) + lam**-0.5 * math.sqrt(2 * (g + math.log(1 / delta)))
    assert float(at_inf["naive"]) == pytest.approx(want, rel=1e-12)
    assert float(at_inf["new"]) == pytest.approx(want, rel=1e-12)
    assert math.isinf(float(at_inf["small_b"]))
    big = multitask_widths(N, 1e12, B, 0.0, lam, delta, g, 1.0, 10, effective_dimension=0.0)
    for key in ("naive", "large_b", "large_b_data_dependent"):
        assert float(big[key]) == pytest.approx(float(at_inf[key]), rel=1e-5), key
    positive = multitask_widths(N, math.inf, B, 0.2, lam, delta, g, 1.0, 10)
    assert math.isinf(float(positive["new"]))


def test_bad_input():
    args = dict(
        num_tasks=3,
        b=1.0,
        rkhs_norm_bound=1.0,
        task_deviation=0.5,
        regularization=4 / 6,
        delta=0.1,
        info_gain_mt=1.0,
        info_gain_st=1.0,
        t=3,
    )
    with pytest.raises(ValueError, match="b must be >= 0"):
        multitask_widths(**{**args, "b": -0.1})
    with pytest.raises(ValueError, match=r"task_deviation .* \[0, 2\]"):
        multitask_widths(**{**args, "task_deviation": 2.5})
    with pytest.raises(ValueError, match=r"regularization must lie in \[1 / \(1 \+ b\), 1\]"):
        multitask_widths(**{**args, "regularization": 0.4})
    with pytest.raises(ValueError, match="regularization"):
        multitask_widths(**{**args, "regularization": 1.5})
    with pytest.raises(ValueError, match="delta"):
        multitask_widths(**{**args, "delta": 1.0})
    with pytest.raises(ValueError, match="noise_std"):
        multitask_widths(**{**args, "noise_std": 0.0})
    with pytest.raises(ValueError, match="info_gain_mt"):
        multitask_widths(**{**args, "info_gain_mt": -1.0})
    with pytest.raises(TypeError, match="num_tasks"):
        multitask_widths(**{**args, "num_tasks": 2.5})
    with pytest.warns(UserWarning, match=r"below \(N \+ b\) / \(N \+ bN\)"):
        multitask_widths(
            **{**args, "regularization": 0.55}
        )  # in [1 / (1 + b), (N + b) / (N + bN)) = [0.5, 0.667)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        multitask_widths(**args)  # lambda = (N + b) / (N + bN) exactly: no warning
    with pytest.raises(ValueError, match="b must be >= 0"):
        multitask_regularization(3, -1.0)


def test_theorem2_kernel_parameter():
    assert theorem2_kernel_parameter(10, 0.5, 5) == pytest.approx(10 / 0.25)
    assert theorem2_kernel_parameter(4, 0.01, 100) == pytest.approx(1e4)  # 0.01 <= 4^-1/4 / 10
    assert theorem2_kernel_parameter(4, 0.5, 100) == 0.0
    assert math.isinf(theorem2_kernel_parameter(4, 0.0, 100))
    with pytest.raises(ValueError):
        theorem2_kernel_parameter(4, 3.0, 10)


def test_width_rules_are_the_keys_of_the_widths():
    widths = multitask_widths(3, 1.0, 1.0, 0.2, 2 / 3, 0.1, 1.0, 1.0, 5, effective_dimension=1.0)
    assert set(WIDTH_RULES) == set(widths)
    assert WIDTH_RULES[0] == "new"  # the default rule of paper 001's bandits


def _unbounded_kernel_statistics(N=5, b=1e4, t=50, norm=10.0, seed=0):
    """Paper 001's synthetic setting: actions of norm 10, so k_X(x, x) = 100."""
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(t, 4, dtype=torch.float64, generator=generator)
    X = norm * X / X.norm(dim=-1, keepdim=True)
    tasks = torch.arange(t) % N
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    lam = multitask_regularization(N, b)
    S = float(task_effective_dimensions(X, tasks, kernel, N, b, lam).sum())
    trace = float(X.square().sum())  # sum_s k(x_s, x_s), by hand
    return N, b, lam, S, trace


def test_large_b_without_trace_is_invalid_for_an_unbounded_kernel():
    """Issue 11 item 5: with k(x, x) = 100, eq. 27 with ``t`` falls far below the valid
    eqs. 24 + 26 width (N = 5, b = 1e4, eps = 0.05, t = 50); with the trace it does not."""
    N, b, lam, S, trace = _unbounded_kernel_statistics()
    args = (N, b, 1.0, 0.05, lam, 0.05, 3.0, 1.0, 50)
    assumed = multitask_widths(*args, effective_dimension=S)  # t: assumes k(x, x) <= 1
    valid = multitask_widths(*args, effective_dimension=S, kernel_trace=trace)
    assert trace == pytest.approx(100 * 50)
    assert float(assumed["large_b"]) < float(assumed["large_b_data_dependent"]) / 10
    assert float(valid["large_b"]) >= float(valid["large_b_data_dependent"])
    assert float(valid["new"]) >= float(assumed["new"])
    want = reference_widths(N, b, 1.0, 0.05, lam, 0.05, 3.0, 1.0, trace, S=S)  # t -> Tr
    for key in want:
        assert float(valid[key]) == pytest.approx(want[key], rel=1e-12)


@pytest.mark.parametrize("norm", [0.3, 1.0, 10.0])
def test_large_b_with_trace_never_below_data_dependent(norm):
    """eq. 26's S <= Tr / (lambda (1 + b)) and (a + c)^2 <= 2 a^2 + 2 c^2: eq. 27 with the
    trace bounds the data-dependent width from above, for any kernel scale."""
    for b in [0.1, 3.0, 1e2, 1e4]:
        N, b, lam, S, trace = _unbounded_kernel_statistics(b=b, norm=norm, seed=int(b))
        widths = multitask_widths(
            N, b, 2.0, 0.3, lam, 0.1, 1.0, 1.0, 50, effective_dimension=S, kernel_trace=trace
        )
        assert float(widths["large_b"]) >= float(widths["large_b_data_dependent"]) * (1 - 1e-12)


def test_regression_passes_its_kernel_trace():
    """The bandits' regression feeds eq. 27 the trace of the data it has seen."""
    from botorch_mtucb.bandits import AgnosticMultiTaskRegression
    from botorch_mtucb.utils import FiniteDomain

    arms = FiniteDomain(10 * torch.eye(3, dtype=torch.float64))  # k(x, x) = 100
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    regression = AgnosticMultiTaskRegression(arms, kernel, b=1e4, num_tasks=2)
    for k in range(6):
        regression.update(k % 2, arms.points[k % 3], 0.1 * k)
    assert regression.kernel_trace == pytest.approx(600.0)
    widths = regression.widths(1.0, 0.05, 0.05)
    N, b, lam = 2, 1e4, regression.regularization
    want = reference_widths(
        N,
        b,
        1.0,
        0.05,
        lam,
        0.05,
        regression.info_gain_mt,
        regression.info_gain_st,
        600.0,
        S=regression.effective_dimension,
    )
    for key in want:
        assert widths[key] == pytest.approx(want[key], rel=1e-10)


def test_t_must_be_an_int():
    with pytest.raises(TypeError, match="t must be an int"):
        multitask_widths(3, 1.0, 1.0, 0.2, 2 / 3, 0.1, 1.0, 1.0, 2.5)
    with pytest.raises(ValueError, match="kernel_trace"):
        multitask_widths(3, 1.0, 1.0, 0.2, 2 / 3, 0.1, 1.0, 1.0, 2, kernel_trace=-1.0)
