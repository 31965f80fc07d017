"""Widths of paper 000: MT-KB (Theorem 2), against the sum over rounds of
log det(I_n + Gamma_{s-1}(x_s, x_s) / eta) from dense sequential posteriors, and MT-BKB
(Theorem 3) with its dictionary accuracy, against the formulas written out with
``math``/NumPy."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from botorch_models import CASE_NAMES as BOTORCH_CASES
from botorch_models import build_botorch_case, numpy_gain
from cases import CASES, ETA, build_case, tolerances
from gpytorch.kernels import RBFKernel

from botorch_mtucb.confidence import (
    information_gain,
    mt_bkb_accuracy,
    mt_bkb_width,
    mt_kb_width,
    sketch_distortion,
)
from botorch_mtucb.models import (
    NystromVectorValuedGP,
    VectorValuedGP,
)
from botorch_mtucb.utils.linalg import CholeskyJitterWarning


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
            chunk_size=1,  # Algorithm 2's row-by-row replay: prefixes share the draws
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


@pytest.mark.parametrize("eps", (0.0, 1.0, -0.2, 1.5, float("nan")))
def test_eps_outside_the_open_unit_interval(eps):
    model = SimpleNamespace(sketched_log_det_sum=torch.tensor(1.0), regularization=0.1)
    with pytest.raises(ValueError, match=r"eps"):
        mt_bkb_width(model, 1.0, 0.1, 0.1, eps)
    with pytest.raises(ValueError, match=r"eps"):
        mt_bkb_accuracy(eps, 0.1, 100)
    with pytest.raises(ValueError, match=r"eps"):
        sketch_distortion(eps)


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


# ------------------------------------------------------------------ MT-KB
@pytest.mark.parametrize("kind", ("full", "indexed"))
@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("b, sigma, delta", [(1.0, 0.1, 0.1), (0.0, 2.0, 0.01), (3.0, 0.0, 0.5)])
def test_mt_kb_width_matches_theorem_2(name, kind, b, sigma, delta, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    model = case.build()
    width = mt_kb_width(model, rkhs_norm_bound=b, noise_std=sigma, delta=delta)
    assert width.shape == ()
    expected = case.oracle.mt_kb_width(
        _np(case.train_X), _np(case.train_Y), b, sigma, delta, case.tasks_numpy()
    )
    np.testing.assert_allclose(float(width), expected, **tolerances(dtype))


def test_mt_kb_width_without_data_and_growth():
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


def test_mt_kb_width_bad_input():
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


def test_float32_jitter_beyond_the_noise_is_reported_at_the_width():
    """Issue 11 item 4: near-duplicate inputs and lambda = 1e-6 in float32 make GPyTorch add
    jitter 10x lambda; the information gain (and MT-KB's width) are then not the theorem's.
    The package says so in a warning of its own; float64 needs no jitter and stays silent."""
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(300, 1, generator=generator, dtype=torch.float64)
    X = torch.cat([X, X + 1e-4])
    Y = torch.randn(600, 3, generator=generator, dtype=torch.float64)
    B = torch.tensor([[1.0, 0.5, 0.2], [0.5, 1.0, 0.5], [0.2, 0.5, 1.0]], dtype=torch.float64)
    gains = {}
    for dtype in (torch.float64, torch.float32):
        kernel = RBFKernel().to(dtype)
        kernel.lengthscale = 0.2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = VectorValuedGP(X.to(dtype), Y.to(dtype), kernel, B.to(dtype), 1e-6)
            gains[dtype] = float(model.information_gain())
            mt_kb_width(model, rkhs_norm_bound=1.0, noise_std=1e-3, delta=0.05)
        ours = [w for w in caught if issubclass(w.category, CholeskyJitterWarning)]
        if dtype == torch.float64:
            assert not ours
        else:
            assert ours and "use float64" in str(ours[0].message)
    assert gains[torch.float32] > 2 * gains[torch.float64]  # what the warning is about


# ------------------------------------------------- BoTorch models (issue 10, item 2)
@pytest.mark.parametrize("name", BOTORCH_CASES)
@pytest.mark.parametrize("noise_std", (None, 0.3))
def test_mt_kb_width_of_a_botorch_model(name, noise_std, dtype):
    """b + c sqrt(2 log(1/delta) + 2 gamma), gamma from the NumPy K and Sigma, c = 1 for
    the likelihood's own noise and sigma / sqrt(lambda_min(Sigma)) for a given sigma."""
    case = build_botorch_case(name, dtype)
    b, delta = 0.8, 0.05
    width = mt_kb_width(case.model, b, noise_std=noise_std, delta=delta)
    assert width.shape == () and width.dtype == dtype
    if noise_std is None:
        scale = 1.0
    else:
        floor = min(np.linalg.eigvalsh(Sigma).min() for _, Sigma in case.groups)
        scale = noise_std / math.sqrt(floor)
    expected = b + scale * math.sqrt(2 * math.log(1 / delta) + 2 * numpy_gain(case.groups))
    np.testing.assert_allclose(float(width), expected, **tolerances(dtype))


@pytest.mark.parametrize("name", ("kronecker", "two_outputs", "list_own_inputs", "multitask"))
def test_one_noise_level_gives_theorem_2_of_the_converted_model(name):
    """With one noise variance eta the BoTorch route is Theorem 2 with that eta: the same
    width as the VectorValuedGP converted from the model."""
    model = build_botorch_case(name, equal_noise=True).model
    converted = VectorValuedGP.from_model(model)
    for sigma in (None, 0.2):
        ours = mt_kb_width(model, 1.5, sigma, 0.1)
        theirs = mt_kb_width(converted, 1.5, sigma, 0.1)
        assert float(ours) == pytest.approx(float(theirs), rel=1e-9)


def test_mt_kb_width_of_a_batched_model_and_defaults():
    g = torch.Generator().manual_seed(2)
    X = torch.rand(3, 6, 2, generator=g, dtype=torch.float64)
    model = SingleTaskGP(X, torch.randn(3, 6, 2, generator=g, dtype=torch.float64))
    width = mt_kb_width(model, 1.0, delta=0.1)
    assert width.shape == (3,)
    gains = information_gain(model)
    torch.testing.assert_close(width, 1.0 + torch.sqrt(2 * math.log(10) + 2 * gains))
    vector = build_case("icm", torch.float64).build()  # noise_std=None: sigma^2 = eta
    expected = 1.0 + math.sqrt(2 * math.log(10) + 2 * float(vector.information_gain()))
    assert float(mt_kb_width(vector, 1.0, delta=0.1)) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(TypeError, match="^delta must be"):
        mt_kb_width(model, 1.0)
