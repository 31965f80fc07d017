"""AgnosticMultiTaskRegression: finite (incremental) and box (VectorValuedGP) paths, and
Proposition 2 of paper 001 (b = 0: independent regressions; b = inf: one pooled one)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.bandits.confidence_rules.regression import AgnosticMultiTaskRegression
from botorch_mtucb.bandits.task_indexed import independent_ucb, mt_ucb
from botorch_mtucb.confidence import (
    multitask_information_gain,
    multitask_widths,
    single_task_information_gains,
    task_effective_dimensions,
)
from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain
from botorch_mtucb.utils.random import argmax_random_ties


def linear_kernel():
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    return kernel


def _data(seed=0, N=3, t=12):
    generator = torch.Generator().manual_seed(seed)
    arms = [torch.rand(8, 2, generator=generator, dtype=torch.float64) for _ in range(N)]
    plan = [(s % N, int(torch.randint(8, (1,), generator=generator))) for s in range(t)]
    ys = torch.randn(t, generator=generator, dtype=torch.float64)
    return arms, plan, ys


@pytest.mark.parametrize("b", [0.0, 0.7, math.inf])
def test_finite_and_box_paths_agree_and_widths_use_the_helpers(b):
    arms, plan, ys = _data()
    N = len(arms)
    finite = AgnosticMultiTaskRegression([FiniteDomain(a) for a in arms], linear_kernel(), b)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    box = AgnosticMultiTaskRegression(BoxDomain(bounds), linear_kernel(), b, num_tasks=N)
    for (task, arm), y in zip(plan, ys):
        finite.update(task, arms[task][arm], y)
        box.update(task, arms[task][arm], y)
    for task in range(N):
        for x in arms[task][:3]:
            assert finite.mean_std_at(task, x) == pytest.approx(box.mean_std_at(task, x), abs=1e-9)
    X = torch.stack([arms[i][j] for i, j in plan])
    tasks = torch.tensor([i for i, _ in plan])
    lam = finite.regularization
    gain = multitask_information_gain(X, tasks, linear_kernel(), N, b, lam)
    assert finite.info_gain_mt == pytest.approx(float(gain), rel=1e-9)
    assert box.info_gain_mt == pytest.approx(float(gain), rel=1e-9)
    st = single_task_information_gains(X, tasks, linear_kernel(), N, lam)
    assert finite.info_gain_st == pytest.approx(float(st.max()), rel=1e-9)
    dims = task_effective_dimensions(X, tasks, linear_kernel(), N, b, lam)
    assert finite.effective_dimension == pytest.approx(float(dims.sum()), rel=1e-9, abs=1e-12)
    eps = 0.0 if math.isinf(b) else 0.4
    widths = finite.widths(1.0, eps, 0.05)
    trace = float(X.square().sum())  # sum_s k(x_s, x_s) of the linear kernel
    assert finite.kernel_trace == pytest.approx(trace, rel=1e-12)
    want = multitask_widths(
        N,
        b,
        1.0,
        eps,
        lam,
        0.05,
        gain,
        st.max(),
        len(plan),
        effective_dimension=dims.sum(),
        kernel_trace=trace,
    )
    for key in want:
        assert widths[key] == pytest.approx(float(want[key]), rel=1e-9)


def test_proposition2_limits():
    """b = 0: per-task KRR with lambda; b = inf: pooled KRR with lambda N (mean), and
    sigma(b = inf) = sigma_pooled / sqrt(N) when lambda = 1 / N."""
    arms, plan, ys = _data(1)
    N = len(arms)
    independent = AgnosticMultiTaskRegression([FiniteDomain(a) for a in arms], linear_kernel(), 0.0)
    single = AgnosticMultiTaskRegression([FiniteDomain(a) for a in arms], linear_kernel(), math.inf)
    assert single.regularization == pytest.approx(1 / N)
    for (task, arm), y in zip(plan, ys):
        independent.update(task, arms[task][arm], y)
        single.update(task, arms[task][arm], y)
    X = torch.stack([arms[i][j] for i, j in plan]).numpy()
    T = np.array([i for i, _ in plan])
    y = ys.numpy()
    for task in range(N):
        Xa = arms[task].numpy()
        Xi, yi = X[T == task], y[T == task]
        w = np.linalg.solve(Xi.T @ Xi + 1.0 * np.eye(2), Xi.T @ yi)  # lambda = 1 at b = 0
        mean, _ = independent.arm_moments(task)
        np.testing.assert_allclose(mean.numpy(), Xa @ w, atol=1e-10)
        w_pool = np.linalg.solve(X.T @ X + np.eye(2), X.T @ y)  # lambda N = 1
        mean, std = single.arm_moments(task)
        np.testing.assert_allclose(mean.numpy(), Xa @ w_pool, atol=1e-10)
        cov = np.linalg.inv(X.T @ X + np.eye(2))  # pooled posterior covariance, lambda = 1
        var_pool = np.einsum("ad,de,ae->a", Xa, cov, Xa)
        np.testing.assert_allclose((std**2).numpy(), var_pool / N, atol=1e-10)


def test_bad_input():
    arms, _, _ = _data()
    with pytest.raises(ValueError, match="b must be >= 0"):
        AgnosticMultiTaskRegression([FiniteDomain(a) for a in arms], linear_kernel(), -1.0)
    with pytest.raises(ValueError, match="num_tasks is required"):
        AgnosticMultiTaskRegression(FiniteDomain(arms[0]), linear_kernel(), 1.0)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="all FiniteDomain or all BoxDomain"):
        AgnosticMultiTaskRegression(
            [FiniteDomain(arms[0]), BoxDomain(bounds)], linear_kernel(), 1.0
        )
    regression = AgnosticMultiTaskRegression([FiniteDomain(a) for a in arms], linear_kernel(), 1.0)
    with pytest.raises(ValueError, match="width must be finite"):
        regression.ucb_maximizer(0, math.inf)
    with pytest.raises(ValueError, match="not one of the arms"):
        regression.update(0, torch.tensor([5.0, 5.0]), 1.0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_argmax_random_ties(dtype):
    eps = torch.finfo(dtype).eps
    # 1 and 2 tie up to round-off (a few ulps); 4 is 100 x the tolerance below: no tie.
    values = torch.tensor([1.0, 3.0, 3.0 * (1 + 4 * eps), 2.0, 3.0 * (1 - 1e5 * eps)], dtype=dtype)
    picks = [argmax_random_ties(values, torch.Generator().manual_seed(seed)) for seed in range(400)]
    counts = np.bincount(picks, minlength=5)
    assert counts[[0, 3, 4]].sum() == 0
    assert 150 < counts[1] < 250 and counts[1] + counts[2] == 400  # uniform: 200 +- 2.5 sd
    assert argmax_random_ties(values) == 1  # no generator: the first tie
    assert argmax_random_ties(values, rtol=0.0) == int(torch.argmax(values))
    # A unique maximum: torch.argmax, and the generator is left untouched.
    generator = torch.Generator().manual_seed(5)
    state = generator.get_state()
    unique = torch.tensor([0.5, -1.0, 0.7, 0.69], dtype=dtype)
    assert argmax_random_ties(unique, generator) == 2
    assert torch.equal(generator.get_state(), state)
    # All zero (a zero width under the prior): every entry ties.
    zeros = torch.zeros(6, dtype=dtype)
    picks = {argmax_random_ties(zeros, torch.Generator().manual_seed(s)) for s in range(100)}
    assert picks == set(range(6))
    infinite = torch.tensor([1.0, math.inf, 2.0, math.inf], dtype=dtype)
    picks = {argmax_random_ties(infinite, torch.Generator().manual_seed(s)) for s in range(50)}
    assert picks == {1, 3}
    # A -inf entry does not widen the tolerance around a finite maximum.
    minus_inf = torch.tensor([-math.inf, 2.0, 1.0, 2.0 * (1 - 1e5 * eps)], dtype=dtype)
    assert argmax_random_ties(minus_inf, torch.Generator().manual_seed(0)) == 1
    with pytest.raises(ValueError, match="non-empty 1-d"):
        argmax_random_ties(torch.zeros(2, 2, dtype=dtype))
    with pytest.raises(ValueError, match="non-empty 1-d"):
        argmax_random_ties(torch.zeros(0, dtype=dtype))
    with pytest.raises(ValueError, match="NaN"):
        argmax_random_ties(torch.tensor([1.0, math.nan], dtype=dtype))
    with pytest.raises(ValueError, match="rtol"):
        argmax_random_ties(values, rtol=-1.0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_prior_ties_are_broken_at_random_not_by_round_off(dtype):
    """Under the prior of a task (no data on it, b = 0) every arm of unit norm has the
    same UCB; the pick must be uniform over the arms, not the arm whose ||x||^2
    happens to round highest (the same arm in every repetition, which biased
    Independent on the MHC data). With b > 0, data on another task breaks the tie
    and the pick no longer depends on the generator."""
    generator = torch.Generator().manual_seed(0)
    arms = torch.randn(3, 12, 45, generator=generator, dtype=torch.float64)
    arms = (arms / arms.norm(dim=-1, keepdim=True)).to(dtype)
    norms = arms.double().square().sum(-1)
    assert not torch.all(norms == norms[:, :1])  # round-off makes the norms differ
    kernel = linear_kernel().to(dtype)
    domains = [FiniteDomain(a) for a in arms]
    independent = independent_ucb(domains, kernel, 5.0, noise_std=0.01)
    picks = []
    for seed in range(600):
        x = independent.select({"task": 1}, torch.Generator().manual_seed(seed))
        picks.append(int((arms[1] == x).all(-1).nonzero()[0, 0]))
    counts = np.bincount(picks, minlength=12)
    assert counts.min() >= 25 and counts.max() <= 75  # uniform: 50 +- 6.8 sd
    shared = mt_ucb(domains, kernel, 1.0, 5.0, 0.3, noise_std=0.01)
    shared.update(arms[0][3], torch.tensor([2.0], dtype=dtype), {"task": 0}, generator)
    mean, std = shared.rule.regression.arm_moments(1)
    best = int(torch.argmax(mean.double() + shared.rule.width * std.double()))
    for seed in range(20):
        x = shared.select({"task": 1}, torch.Generator().manual_seed(seed))
        assert torch.equal(x, arms[1][best])
