"""Width rules: ``mu + width rho`` with the width formula computed independently (paper
002's AY-GP-UCB and IGP-UCB), kept up to date under updates, with its diagnostics. The
width functions of paper 000 are tested with their methods (``tests/bandits/scalarized``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from rule_cases import DELTA, SIGMA, B, C, _data, _empty_model, _feed

from botorch_mtucb.bandits import (
    AYGPUCBWidth,
    ConfidenceRule,
    IGPUCBWidth,
    WidthRule,
)
from botorch_mtucb.confidence import ay_gp_ucb_width, igp_ucb_width


def _dense_posterior(kernel, X, Y, test_X, regularization):
    with torch.no_grad():
        K = kernel(X, X).to_dense().numpy()
        k = kernel(X, test_X).to_dense().numpy()
        prior = kernel(test_X, test_X, diag=True).numpy()
    inverse = np.linalg.inv(K + regularization * np.eye(len(K)))
    mean = k.T @ inverse @ Y.numpy()[:, 0]
    variance = prior - np.einsum("tn,ts,sn->n", k, inverse, k)
    logdet = np.linalg.slogdet(np.eye(len(K)) + K / regularization)[1]
    return mean, np.sqrt(np.clip(variance, 0.0, None)), logdet


@pytest.mark.parametrize("width_name", ["AY-GP-UCB", "IGP-UCB"])
def test_width_rule_is_mean_plus_width_times_std(width_name):
    kernel, X, Y, test_X = _data()
    eta, log_term = 0.05, 2 * math.log(1 / DELTA)
    if width_name == "AY-GP-UCB":
        regularization = SIGMA**2 / C
        width_function = AYGPUCBWidth(B, SIGMA, DELTA, regularization)
    else:
        regularization = 1.0 + eta
        width_function = IGPUCBWidth(B, SIGMA, DELTA, eta)
    rule = WidthRule(_empty_model(kernel, regularization), width_function)
    assert isinstance(rule, ConfidenceRule)
    _feed(rule, X, Y)
    mean, std, logdet = _dense_posterior(kernel, X, Y, test_X, regularization)
    if width_name == "AY-GP-UCB":  # Abbasi-Yadkori 2012, Theorem 3.11
        width = B + SIGMA / math.sqrt(regularization) * math.sqrt(logdet + log_term)
    else:  # Chowdhury & Gopalan 2017, Theorem 2
        width = B + SIGMA * math.sqrt(logdet + len(X) * eta + log_term)
    assert float(rule.width) == pytest.approx(width, rel=1e-9)
    assert rule.diagnostics() == {"width": pytest.approx(width, rel=1e-9)}
    acquisition = rule.acquisition()
    assert isinstance(acquisition, UpperConfidenceBound)
    with torch.no_grad():
        values = acquisition(test_X.unsqueeze(-2)).numpy()
    np.testing.assert_allclose(values, mean + width * std, rtol=1e-7, atol=1e-7)


def test_width_rule_matches_the_width_functions_of_the_confidence_layer():
    # The rule's arithmetic is the policy's of old: UpperConfidenceBound with beta =
    # width^2, the width from the model's information gain and number of observations.
    kernel, X, Y, test_X = _data(t=12)
    eta = 0.05
    for width_function, regularization in (
        (AYGPUCBWidth(B, SIGMA, DELTA, SIGMA**2 / C), SIGMA**2 / C),
        (IGPUCBWidth(B, SIGMA, DELTA, eta), 1.0 + eta),
    ):
        rule = WidthRule(_empty_model(kernel, regularization), width_function)
        _feed(rule, X, Y)
        gamma = rule.model.information_gain().detach()
        if isinstance(width_function, AYGPUCBWidth):
            width = ay_gp_ucb_width(gamma, B, SIGMA, DELTA, regularization)
        else:
            width = igp_ucb_width(gamma, len(X), B, SIGMA, DELTA, eta)
        assert torch.equal(rule.width, width)
        with torch.no_grad():
            values = rule.acquisition()(test_X.unsqueeze(-2))
            expected = UpperConfidenceBound(rule.model, beta=width**2)(test_X.unsqueeze(-2))
        assert torch.equal(values, expected)
