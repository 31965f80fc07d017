"""MT-UCB (Algorithm 1 of paper 001) and its Table 1 special cases."""

from __future__ import annotations

import math

import pytest
import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.bandits.confidence_rules import NaiveWidth
from botorch_mtucb.bandits.environments.task_indexed import OnlineMultiTaskEnvironment
from botorch_mtucb.bandits.task_indexed import gob_lin, independent_ucb, mt_ucb, single_ucb
from botorch_mtucb.problems.multitask_synthetic import multitask_synthetic_problem
from botorch_mtucb.utils.domains import BoxDomain


def linear_kernel():
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    return kernel


def _problem():
    return multitask_synthetic_problem(3, 0.4, dim=2, num_actions=40, radius=1.0, seed=3)


def test_mt_ucb_plays_the_argmax_of_eq7_and_tracks_the_width():
    problem = _problem()
    policy = mt_ucb(
        problem.domains(), linear_kernel(), 1.0, problem.rkhs_norm_bound, problem.task_deviation
    )
    regression = policy.rule.regression
    environment = OnlineMultiTaskEnvironment(problem)
    generator = torch.Generator().manual_seed(0)
    for t in range(1, 15):
        context = environment.context(t, generator)
        task = context["task"]
        width = regression.widths(problem.rkhs_norm_bound, problem.task_deviation, 0.01)["new"]
        assert policy.rule.width == pytest.approx(width)
        mean, std = regression.arm_moments(task)
        x = policy.select(context, generator)
        ucb = mean + width * std
        index = int((problem.arms[task] == x).all(-1).nonzero()[0, 0])
        # A maximizer of eq. 7 (ties up to round-off, e.g. under the prior, are drawn
        # at random); a unique maximizer is torch.argmax.
        assert ucb[index] >= ucb.max() - 1e-12 * ucb.abs().max()
        if int((ucb >= ucb.max() - 1e-12 * ucb.abs().max()).sum()) == 1:
            assert index == int(torch.argmax(ucb))
        policy.update(x, environment.observe(x, context, generator), context, generator)
    assert policy.diagnostics()["width"] == pytest.approx(policy.rule.width)
    assert policy.diagnostics()["info_gain_mt"] == regression.info_gain_mt
    assert policy.diagnostics()["info_gain_st"] == regression.info_gain_st


def test_table1_special_cases():
    problem = _problem()
    independent = independent_ucb(problem.domains(), linear_kernel(), 1.0)
    regression = independent.rule.regression
    assert regression.b == 0 and regression.regularization == 1.0
    single = single_ucb(problem.domains(), linear_kernel(), 1.0)
    regression = single.rule.regression
    assert math.isinf(regression.b) and regression.regularization == pytest.approx(1 / 3)
    assert single.rule.width_function.task_deviation == 0.0 and math.isfinite(single.rule.width)
    naive = gob_lin(problem.domains(), linear_kernel(), 2.0, 1.0, 0.3)
    assert isinstance(naive.rule.width_function, NaiveWidth)
    assert naive.rule.regression.regularization == 1.0
    assert naive.name == "MT-UCB-naive"
    # the width is an object of Theorem 1, not a name
    with pytest.raises(TypeError, match="width must be a width of Theorem 1"):
        mt_ucb(problem.domains(), linear_kernel(), 1.0, 1.0, 0.3, width="tight")
    with pytest.raises(ValueError, match=r"task_deviation .* \[0, 2\]"):
        mt_ucb(problem.domains(), linear_kernel(), 1.0, 1.0, 3.0)


def test_mt_ucb_on_a_box_runs_through_the_acquisition():
    bounds = torch.tensor([[-1.0, -1.0], [1.0, 1.0]], dtype=torch.float64)
    domain = BoxDomain(bounds, num_restarts=2, raw_samples=16)
    policy = mt_ucb(domain, linear_kernel(), 1.0, 1.0, 0.2, num_tasks=2)
    generator = torch.Generator().manual_seed(0)
    for t in range(3):
        context = {"task": t % 2}
        x = policy.select(context, generator)
        assert x.shape == (2,) and ((x >= -1) & (x <= 1)).all()
        policy.update(x, torch.tensor([float(x.sum())]), context, generator)
    assert policy.rule.regression.num_observations == 3
