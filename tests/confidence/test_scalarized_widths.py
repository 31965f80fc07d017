"""Widths of paper 000's sketched and independent baselines: MT-BKB (Theorem 3), BKB
(Calandriello et al. 2019, Theorem 1), GP-UCB (Srinivas et al. 2010, Theorem 1) and
Dragonfly's MOBO radius, against the formulas written out with ``math``/NumPy."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from cases import ETA, build_case, tolerances

from botorch_mtucb.confidence import (
    bkb_width,
    dragonfly_ucb_width,
    gp_ucb_width,
    mt_bkb_accuracy,
    mt_bkb_width,
    sketch_distortion,
)
from botorch_mtucb.models import NystromVectorValuedGP


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _theorem_3(b, sigma, delta, eps, eta, log_det_sum):
    rho = (1 + eps) / (1 - eps)
    return b * (1 + 1 / math.sqrt(1 - eps)) + sigma / math.sqrt(eta) * math.sqrt(
        2 * math.log(2 / delta) + rho * log_det_sum
    )


@pytest.mark.parametrize("eps, delta, horizon", [(0.5, 0.1, 200), (0.1, 0.01, 1), (0.9, 0.5, 5000)])
def test_accuracy_is_theorem_3s_q(eps, delta, horizon):
    rho = (1 + eps) / (1 - eps)
    assert sketch_distortion(eps) == pytest.approx(rho, rel=1e-15)
    expected = 6 * rho * math.log(4 * horizon / delta) / eps**2
    assert mt_bkb_accuracy(eps, delta, horizon) == pytest.approx(expected, rel=1e-15)
    assert mt_bkb_accuracy(eps, delta, horizon) >= 1


@pytest.mark.parametrize("b, sigma, delta, eps", [(1.0, 0.1, 0.1, 0.5), (0.0, 2.0, 0.01, 0.2)])
def test_mt_bkb_width_is_theorem_3(b, sigma, delta, eps):
    for log_det_sum in (0.0, 0.37, 12.5):
        model = SimpleNamespace(
            sketched_log_det_sum=torch.tensor(log_det_sum, dtype=torch.float64), regularization=0.3
        )
        width = mt_bkb_width(model, b, sigma, delta, eps)
        assert width.shape == ()
        expected = _theorem_3(b, sigma, delta, eps, 0.3, log_det_sum)
        assert float(width) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("kind", ("full", "indexed"))
def test_mt_bkb_width_sums_the_sketched_variances_at_the_queried_points(kind, dtype):
    """The model's sum is sum_s log det(I + Gamma~_{s-1}(x_s, x_s) / eta), each block
    from the sketch that chose x_s (models built on prefixes share the draws)."""
    case = build_case("icm", dtype, task_indexed=kind == "indexed", num_rows=10, seed=3)
    tasks = case.train_tasks

    def sketch(t):
        return NystromVectorValuedGP(
            case.train_X[:t],
            case.train_Y[:t],
            case.kernels[0],
            case.task_covariances[0],
            ETA,
            train_tasks=None if tasks is None else tasks[:t],
            accuracy=1.0,
            seed=5,
        )

    total = 0.0
    for s in range(10):
        block = _np(sketch(s).posterior(case.train_X[s : s + 1]).distribution.covariance_matrix)
        if tasks is not None:
            i = int(tasks[s])
            block = block[i : i + 1, i : i + 1]
        total += np.linalg.slogdet(np.eye(block.shape[0]) + block / ETA)[1]
    model = sketch(10)
    assert model.dictionary_size < 10
    np.testing.assert_allclose(float(model.sketched_log_det_sum), total, **tolerances(dtype))
    width = mt_bkb_width(model, 1.2, 0.1, 0.1, 0.5)
    np.testing.assert_allclose(
        float(width), _theorem_3(1.2, 0.1, 0.1, 0.5, ETA, total), **tolerances(dtype)
    )


def test_bkb_width_is_calandriello_theorem_1():
    F, xi, delta, eps, lam, kappa2 = 2.0, 0.1, 0.1, 0.5, 0.1, 1.5
    alpha = (1 + eps) / (1 - eps)
    for t, variance_sum in ((0, 0.0), (1, 0.8), (50, 7.5)):
        log_factor = max(math.log(kappa2 * t), 0.0) if t else 0.0
        beta = 2 * xi * math.sqrt(alpha * log_factor * variance_sum + math.log(1 / delta))
        beta += (1 + 1 / math.sqrt(1 - eps)) * math.sqrt(lam) * F
        got = bkb_width(variance_sum, t, F, xi, delta, eps, lam, kappa2)
        assert float(got) == pytest.approx(beta / math.sqrt(lam), rel=1e-12)
    # kappa^2 t < 1: the log factor is clipped at 0 (the width stays well defined)
    small = bkb_width(3.0, 2, F, xi, delta, eps, lam, 0.1)
    assert float(small) == pytest.approx(float(bkb_width(0.0, 0, F, xi, delta, eps, lam, 0.1)))
    # per-task values in one call, and the width grows with the variance sum
    several = bkb_width(torch.tensor([0.5, 2.0]), 30, F, xi, delta, eps, lam, kappa2)
    assert several.shape == (2,) and several[1] > several[0]


def test_gp_ucb_and_dragonfly_widths():
    for t, size, delta in ((1, 101, 0.1), (200, 225, 0.01)):
        expected = math.sqrt(2 * math.log(size * t**2 * math.pi**2 / (6 * delta)))
        assert gp_ucb_width(t, size, delta) == pytest.approx(expected, rel=1e-15)
    assert dragonfly_ucb_width(10, 2) == pytest.approx(math.sqrt(0.4 * math.log(41)), rel=1e-15)
    assert gp_ucb_width(5, 101, 0.1) > gp_ucb_width(4, 101, 0.1)


@pytest.mark.parametrize("eps", (0.0, 1.0, -0.2, 1.5, float("nan")))
def test_eps_outside_the_open_unit_interval(eps):
    model = SimpleNamespace(sketched_log_det_sum=torch.tensor(1.0), regularization=0.1)
    with pytest.raises(ValueError, match=r"eps"):
        mt_bkb_width(model, 1.0, 0.1, 0.1, eps)
    with pytest.raises(ValueError, match=r"eps"):
        mt_bkb_accuracy(eps, 0.1, 100)
    with pytest.raises(ValueError, match=r"eps"):
        bkb_width(1.0, 3, 1.0, 0.1, 0.1, eps, 0.1, 1.0)


def test_bad_input():
    model = SimpleNamespace(sketched_log_det_sum=torch.tensor(1.0), regularization=0.1)
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        mt_bkb_width(model, 1.0, 0.1, 1.0, 0.5)
    with pytest.raises(ValueError, match="rkhs_norm_bound must be >= 0"):
        mt_bkb_width(model, -1.0, 0.1, 0.1, 0.5)
    with pytest.raises(TypeError, match="sketched_log_det_sum"):
        mt_bkb_width(object(), 1.0, 0.1, 0.1, 0.5)
    with pytest.raises(ValueError, match="horizon"):
        mt_bkb_accuracy(0.5, 0.1, 0)
    with pytest.raises(ValueError, match="variance_sum"):
        bkb_width(-1.0, 3, 1.0, 0.1, 0.1, 0.5, 0.1, 1.0)
    with pytest.raises(ValueError, match="regularization"):
        bkb_width(1.0, 3, 1.0, 0.1, 0.1, 0.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="kernel_bound"):
        bkb_width(1.0, 3, 1.0, 0.1, 0.1, 0.5, 0.1, 0.0)
    with pytest.raises(ValueError, match="round_index"):
        gp_ucb_width(0, 10, 0.1)
    with pytest.raises(ValueError, match="domain_size"):
        gp_ucb_width(1, 0, 0.1)
