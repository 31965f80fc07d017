"""MT-KB's width beta_t of Theorem 2 (paper 000), against the SUM over rounds of
log det(I_n + Gamma_{s-1}(x_s, x_s) / eta) computed from dense sequential posteriors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from cases import CASES, build_case, tolerances

from botorch_mtucb.confidence import mt_kb_width


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


@pytest.mark.parametrize("kind", ("full", "indexed"))
@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("b, sigma, delta", [(1.0, 0.1, 0.1), (0.0, 2.0, 0.01), (3.0, 0.0, 0.5)])
def test_width_matches_theorem_2(name, kind, b, sigma, delta, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    model = case.build()
    width = mt_kb_width(model, rkhs_norm_bound=b, noise_std=sigma, delta=delta)
    assert width.shape == ()
    expected = case.oracle.mt_kb_width(
        _np(case.train_X), _np(case.train_Y), b, sigma, delta, case.tasks_numpy()
    )
    np.testing.assert_allclose(float(width), expected, **tolerances(dtype))


def test_width_without_data_and_growth():
    """t = 0: b + sigma / sqrt(eta) sqrt(2 log(1/delta)); the width grows with data."""
    case = build_case("icm", torch.float64, num_rows=6)
    b, sigma, delta = 0.7, 0.3, 0.05
    prior = case.build(X=case.train_X[:0], Y=case.train_Y[:0])
    expected = b + sigma / math.sqrt(0.1) * math.sqrt(2 * math.log(1 / delta))
    assert float(mt_kb_width(prior, b, sigma, delta)) == pytest.approx(expected, rel=1e-12)
    widths = []
    for t in range(1, 7):
        prior.append_observations(case.train_X[t - 1 : t], case.train_Y[t - 1 : t])
        widths.append(float(mt_kb_width(prior, b, sigma, delta)))
        oracle = case.oracle.mt_kb_width(
            _np(case.train_X[:t]), _np(case.train_Y[:t]), b, sigma, delta
        )
        assert widths[-1] == pytest.approx(oracle, rel=1e-9)
    assert all(w2 > w1 for w1, w2 in zip(widths, widths[1:]))


def test_bad_input():
    model = build_case("icm", torch.float64).build()
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        mt_kb_width(model, 1.0, 0.1, 0.0)
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        mt_kb_width(model, 1.0, 0.1, 1.0)
    with pytest.raises(ValueError, match="rkhs_norm_bound must be >= 0"):
        mt_kb_width(model, -1.0, 0.1, 0.1)
    with pytest.raises(ValueError, match="noise_std must be >= 0"):
        mt_kb_width(model, 1.0, -0.1, 0.1)
    with pytest.raises(ValueError, match="noise_std must be finite"):
        mt_kb_width(model, 1.0, float("inf"), 0.1)
    with pytest.raises(TypeError, match="model must provide information_gain"):
        mt_kb_width(object(), 1.0, 0.1, 0.1)
