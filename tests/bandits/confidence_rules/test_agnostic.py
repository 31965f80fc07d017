"""Paper 001's rules on the agnostic regression: each width of Theorem 1 is its entry of
``multitask_widths`` for the regression's statistics, the rule's choice and gain are eq.
7's, and posterior sampling's gain is the sampled improvement over the arms observed."""

from __future__ import annotations

import math

import pytest
import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.bandits import (
    AgnosticMultiTaskRegression,
    AgnosticWidthRule,
    DataDependentLargeBWidth,
    ImprovedWidth,
    LargeBWidth,
    NaiveWidth,
    PosteriorSamplingRule,
    SmallBWidth,
)
from botorch_mtucb.confidence import multitask_widths
from botorch_mtucb.utils import FiniteDomain

B, EPS, DELTA, SIGMA = 1.0, 0.3, 0.05, 0.2


def _regression(seed=0, observations=8):
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    g = torch.Generator().manual_seed(seed)
    arms = [torch.randn(6, 2, generator=g, dtype=torch.float64) for _ in range(3)]
    regression = AgnosticMultiTaskRegression([FiniteDomain(a) for a in arms], kernel, 0.7)
    for s in range(observations):
        task = s % 3
        regression.update(task, arms[task][s % 6], float(torch.randn(1, generator=g)))
    return regression, arms


@pytest.mark.parametrize(
    "width, key",
    [(ImprovedWidth, "new"), (NaiveWidth, "naive"), (SmallBWidth, "small_b"),
     (LargeBWidth, "large_b"), (DataDependentLargeBWidth, "large_b_data_dependent")],
)  # fmt: skip
def test_each_width_is_its_entry_of_theorem_1(width, key):
    regression, _ = _regression()
    expected = multitask_widths(
        3, 0.7, B, EPS, regression.regularization, DELTA, regression.info_gain_mt,
        regression.info_gain_st, regression.num_observations, noise_std=SIGMA,
        effective_dimension=regression.effective_dimension,
        kernel_trace=regression.kernel_trace,
    )[key]  # fmt: skip
    assert width(B, EPS, DELTA, SIGMA)(regression) == float(expected)


def test_the_rule_plays_eq_7_and_recomputes_its_width():
    regression, arms = _regression(observations=5)
    rule = AgnosticWidthRule(regression, ImprovedWidth(B, EPS, DELTA, SIGMA))
    width = rule.width
    mean, std = regression.arm_moments(1)
    choice = rule.task_argmax(1, None)
    index = int(torch.argmax(mean + width * std))
    assert torch.equal(choice.x, arms[1][index])
    assert choice.upper == pytest.approx(float(mean[index] + width * std[index]), rel=1e-12)
    assert choice.gain == pytest.approx(float(width * std[index]), rel=1e-12)
    assert rule.max_lower(1, None) == pytest.approx(float((mean - width * std).max()))
    rule.observe(1, arms[1][index], 0.4)
    assert rule.width == ImprovedWidth(B, EPS, DELTA, SIGMA)(regression) != width
    with pytest.raises(TypeError, match="width must be a width of Theorem 1"):
        AgnosticWidthRule(regression, "new")


def test_posterior_sampling_gain_is_the_sampled_improvement():
    regression, arms = _regression(observations=0)
    rule = PosteriorSamplingRule(regression, ImprovedWidth(B, EPS, DELTA, SIGMA))
    assert rule.task_argmax(0, torch.Generator().manual_seed(0)).gain == math.inf
    rule.observe(0, arms[0][2], 0.5)
    rule.observe(0, arms[0][4], -0.5)
    choice = rule.task_argmax(0, torch.Generator().manual_seed(1))
    sample = regression.sample(0, torch.Generator().manual_seed(1))  # the same draw
    index = int(torch.argmax(sample))
    assert torch.equal(choice.x, arms[0][index]) and choice.upper == float(sample[index])
    assert choice.gain == float(sample[index]) - float(sample[[2, 4]].max())
