"""Paper 002's named methods: the covariance scale c, and the rule each name builds with
the paper's parameter mapping (alphas, regularization, eta)."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_mtucb.bandits import (
    KERNEL_UCB_METHODS,
    AYGPUCBWidth,
    IGPUCBWidth,
    MartingaleMixtureRule,
    WidthRule,
    confidence_rule,
    default_mixture_scale,
)
from botorch_mtucb.problems import make_kernel

B, SIGMA, DELTA = 10.0, 0.1, 0.01


def test_default_mixture_scale():
    assert default_mixture_scale(math.inf, 3, 1000) == 1.0
    assert default_mixture_scale(2.5, 3, 1000) == pytest.approx(1000 ** (-3 / 11))
    assert default_mixture_scale(1.5, 2, 500) == pytest.approx(500 ** (-2 / 7))
    with pytest.raises(ValueError, match="nu"):
        default_mixture_scale(0.0, 3, 10)
    with pytest.raises(ValueError, match="horizon"):
        default_mixture_scale(2.5, 3, 0)


def test_each_method_gets_the_papers_parameters():
    kernel = make_kernel("matern52", 0.4)
    c, eta = default_mixture_scale(2.5, 3, 100), 0.02
    base = SIGMA**2 / c
    rules = {m: confidence_rule(m, kernel, 3, B, SIGMA, DELTA, c, eta) for m in KERNEL_UCB_METHODS}
    assert KERNEL_UCB_METHODS == ("CMM-UCB", "DMM-UCB", "AMM-UCB", "AY-GP-UCB", "IGP-UCB")
    for method in ("CMM-UCB", "DMM-UCB", "AMM-UCB"):
        rule = rules[method]
        assert isinstance(rule, MartingaleMixtureRule)
        assert rule.bound.num_observations == 0 and rule.bound.train_X.shape == (0, 3)
        assert rule.bound.mixture_scale == c and rule.bound.rkhs_norm_bound == B
        assert rule.bound.noise_std == SIGMA and rule.bound.delta == DELTA
    assert rules["CMM-UCB"].alphas is None
    expected_grid = torch.tensor(
        [m * base for m in (0.1, 0.3, 1.0, 3.0, 10.0)], dtype=torch.float64
    )
    assert torch.equal(rules["DMM-UCB"].alphas, expected_grid)
    assert torch.equal(rules["AMM-UCB"].alphas, torch.tensor([base], dtype=torch.float64))
    ay, igp = rules["AY-GP-UCB"], rules["IGP-UCB"]
    assert isinstance(ay, WidthRule) and isinstance(igp, WidthRule)
    assert ay.width_function == AYGPUCBWidth(B, SIGMA, DELTA, regularization=base)
    assert igp.width_function == IGPUCBWidth(B, SIGMA, DELTA, eta=eta)
    assert float(ay.model.regularization) == pytest.approx(base, rel=1e-15)
    assert float(igp.model.regularization) == pytest.approx(1 + eta, rel=1e-15)
    # on no data the widths are the prior's: B + sigma / sqrt(lambda) sqrt(2 log(1/delta))
    log_term = 2 * math.log(1 / DELTA)
    assert float(ay.width) == pytest.approx(B + SIGMA / math.sqrt(base) * math.sqrt(log_term))
    assert float(igp.width) == pytest.approx(B + SIGMA * math.sqrt(log_term))
    custom = confidence_rule("DMM-UCB", kernel, 3, mixture_scale=c, dmm_grid=(1.0, 2.0))
    assert torch.equal(custom.alphas, torch.tensor([base, 2 * base], dtype=torch.float64))


def test_bad_input():
    kernel = make_kernel("rbf", 0.5)
    with pytest.raises(ValueError, match="method must be one of"):
        confidence_rule("GP-UCB", kernel, 2)
    with pytest.raises(ValueError, match="method must be one of"):
        confidence_rule("DMM", kernel, 2)  # the short codes are gone: the paper's names
    with pytest.raises(ValueError, match="eta"):
        confidence_rule("IGP-UCB", kernel, 2)
    with pytest.raises(ValueError, match="eta"):
        confidence_rule("IGP-UCB", kernel, 2, eta=0.0)
    with pytest.raises(ValueError, match="mixture_scale"):
        confidence_rule("DMM-UCB", kernel, 2, mixture_scale=0.0)
    with pytest.raises(ValueError, match="rkhs_norm_bound"):
        confidence_rule("AY-GP-UCB", kernel, 2, rkhs_norm_bound=-1.0)
    with pytest.raises(ValueError, match="noise_std"):
        confidence_rule("CMM-UCB", kernel, 2, noise_std=0.0)
    with pytest.raises(ValueError, match="dim"):
        confidence_rule("AMM-UCB", kernel, 0)
    with pytest.raises(TypeError, match="dim"):
        confidence_rule("AMM-UCB", kernel, 2.0)
    with pytest.raises(ValueError, match="delta"):
        confidence_rule("AMM-UCB", kernel, 2, delta=1.5)
