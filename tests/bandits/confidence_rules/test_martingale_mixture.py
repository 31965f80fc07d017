"""The single-task martingale-mixture rule (paper 002's CMM / DMM / AMM): the acquisition
values are ``MartingaleMixtureBound.upper`` at the rule's alphas, kept up to date under
updates (against a bound built afresh), with its diagnostics. The multi-task rules are
tested with their methods (``tests/bandits/scalarized/test_mt_cmm_ucb.py``,
``tests/bandits/task_indexed/test_mt_cmm.py``)."""

from __future__ import annotations

import pytest
import torch
from rule_cases import ALPHAS, DELTA, SIGMA, B, C, _data, _empty_bound, _empty_model, _feed

from botorch_mtucb.acquisition import MartingaleMixtureUCB
from botorch_mtucb.bandits import (
    ConfidenceRule,
    MartingaleMixtureRule,
)
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.problems import make_kernel


@pytest.mark.parametrize("kind", list(ALPHAS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_martingale_mixture_rule_is_the_bound_at_its_alphas(kind, dtype):
    kernel, X, Y, test_X = _data()
    rule = MartingaleMixtureRule(_empty_bound(kernel), ALPHAS[kind])
    assert isinstance(rule, ConfidenceRule)
    _feed(rule, X, Y)
    acquisition = rule.acquisition()
    assert isinstance(acquisition, MartingaleMixtureUCB)
    with torch.no_grad():
        values = acquisition(test_X.to(dtype).unsqueeze(-2))
    # the same numbers as the bound the rule holds (its own arithmetic) ...
    expected = rule.bound.upper(test_X.to(dtype), ALPHAS[kind])
    assert values.dtype == dtype and torch.equal(values, expected.to(dtype))
    # ... and as a bound built afresh on all the data (up to round-off of the updates)
    fresh = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=C)
    fresh_values = fresh.upper(test_X, ALPHAS[kind])
    tolerance = 1e-4 if dtype == torch.float32 else 1e-8
    assert torch.allclose(values.double(), fresh_values, rtol=tolerance, atol=tolerance)
    assert rule.diagnostics() == {"radius_squared": pytest.approx(float(fresh.radius_squared))}
    assert rule.bound.num_observations == len(X)


def test_martingale_mixture_rule_rejects_other_objects():
    with pytest.raises(TypeError, match="MartingaleMixtureBound"):
        MartingaleMixtureRule(_empty_model(make_kernel("rbf", 0.5), 0.1))
