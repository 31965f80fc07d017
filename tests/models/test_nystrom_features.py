"""The adaptive ICM build on features of the distinct rows (``models.nystrom_features``):
the same chunks, draws and sketch as the build on the rows (``_add_adaptive_chunk``),
to round-off, with prior means and per-task noise; the factor and the small products."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import build_case
from gpytorch.kernels import RBFKernel
from nystrom_cases import _moments, _np, _test_points

from botorch_mtucb.models import NystromVectorValuedGP, nystrom_build
from botorch_mtucb.models.nystrom_features import (
    FEATURE_RTOL,
    pivoted_features,
    small_product,
)


def _builds(monkeypatch, *args, **kwargs):
    """The model built on features and the same model built on the rows."""
    calls = []
    original = nystrom_build.pivoted_features

    def counting(*a, **k):
        calls.append(1)
        return original(*a, **k)

    monkeypatch.setattr(nystrom_build, "pivoted_features", counting)
    features = NystromVectorValuedGP(*args, **kwargs)
    assert calls, "the build did not take the features route"
    monkeypatch.setattr(nystrom_build, "pivoted_features", lambda *a, **k: None)
    rows = NystromVectorValuedGP(*args, **kwargs)
    return features, rows


def _assert_same_sketch(features, rows, test_X):
    """The same draws and, to round-off, the same sketch. The pseudo-inverse root keeps
    eigenvalues of G~ down to PSEUDO_INVERSE_RTOL = 1e-10 of the largest, whose
    directions either route knows only to about 1e-16 / 1e-10 (round-off, or the
    factor's 1e-14, over the eigen-gap): variances agree to about 1e-8 relative and
    covariances to 1e-9 absolute (the dense transcriptions of the other tests: 1e-6)."""
    assert torch.equal(features.dictionary, rows.dictionary)
    assert features.num_resamplings == rows.num_resamplings
    tol = {"rtol": 1e-7, "atol": 1e-9}
    np.testing.assert_allclose(
        _np(features.inclusion_probabilities), _np(rows.inclusion_probabilities), **tol
    )
    np.testing.assert_allclose(
        float(features.sketched_log_det_sum), float(rows.sketched_log_det_sum), **tol
    )
    np.testing.assert_allclose(_np(features._unit_norms), _np(rows._unit_norms), **tol)
    np.testing.assert_allclose(_np(features.train_variances), _np(rows.train_variances), **tol)
    for ours, theirs in zip(_moments(features, test_X), _moments(rows, test_X)):
        np.testing.assert_allclose(ours, theirs, **tol)


@pytest.mark.parametrize("noise", [False, True])
def test_features_route_is_the_rows_build_on_a_finite_domain(noise, monkeypatch):
    """Rows drawn from 12 points (repeats: the dictionary holds copies), the factor exact
    (12 columns): the same chunks and draws, and the same sketch, as the build on the
    rows; with a prior mean and per-task noise, the whitened sketch."""
    case = build_case("icm", torch.float64, num_rows=12, seed=3)
    index = torch.randint(0, 12, (150,), generator=torch.Generator().manual_seed(1))
    X, Y = case.train_X[index], case.train_Y[index] + 0.1 * torch.randn(150, 3, dtype=torch.float64)
    options = {"accuracy": 5.0, "seed": 2}
    if noise:
        options.update(prior_mean=[1.0, -0.5, 0.0], noise_variances=[0.05, 0.2, 0.1])
    else:
        options["regularization"] = 0.1
    features, rows = _builds(
        monkeypatch, X, Y, case.kernels[0], case.task_covariances[0], **options
    )
    assert torch.unique(X[features.dictionary], dim=0).shape[0] < features.dictionary_size
    _assert_same_sketch(features, rows, torch.cat([_test_points(torch.float64), X[:3]]))


def test_features_route_with_a_truncated_factor(monkeypatch):
    """Continuous 1-d rows and a smooth kernel: the factor has fewer columns than the
    rows, the kernel on the rows is F F^T to FEATURE_RTOL, and the sketch is the rows'
    build to round-off; past FEATURE_MAX_RANK the rows' route is taken."""
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(120, 1, generator=generator, dtype=torch.float64)
    Y = torch.cat([torch.sin(6 * X), torch.cos(4 * X)], -1) + 0.1 * torch.randn(
        120, 2, generator=generator, dtype=torch.float64
    )
    kernel = RBFKernel().double()
    kernel.lengthscale = 0.3
    B = torch.tensor([[1.0, 0.6], [0.6, 2.0]], dtype=torch.float64)
    with torch.no_grad():
        K = kernel(X, X).to_dense()
    F = pivoted_features(lambda j: K[:, j], K.diagonal())
    assert 3 < F.shape[1] < 30  # FEATURE_MAX_RANK = 3 below: abandoned
    assert float((F @ F.T - K).abs().max()) <= 2 * FEATURE_RTOL
    features, rows = _builds(monkeypatch, X, Y, kernel, B, 0.1, accuracy=3.0, seed=1)
    test_X = torch.rand(5, 1, generator=generator, dtype=torch.float64)
    _assert_same_sketch(features, rows, test_X)
    monkeypatch.setattr(nystrom_build, "pivoted_features", pivoted_features)
    monkeypatch.setattr(nystrom_build, "FEATURE_MAX_RANK", 3)  # abandoned: the rows' route
    fallback = NystromVectorValuedGP(X, Y, kernel, B, 0.1, accuracy=3.0, seed=1)
    _assert_same_sketch(fallback, rows, test_X)


def test_features_route_evaluates_columns_beyond_the_gram_size(monkeypatch):
    """Past FEATURE_GRAM_POINTS distinct rows the factor's columns are evaluated one by
    one (and the rows checked in blocks): the same sketch; rows that overflow the
    kernel are refused either way."""
    generator = torch.Generator().manual_seed(2)
    X = torch.rand(60, 1, generator=generator, dtype=torch.float64)
    Y = torch.randn(60, 2, generator=generator, dtype=torch.float64)
    kernel, B = RBFKernel().double(), torch.tensor([[1.0, 0.3], [0.3, 0.5]], dtype=torch.float64)
    whole = NystromVectorValuedGP(X, Y, kernel, B, 0.1, accuracy=3.0)
    monkeypatch.setattr(nystrom_build, "FEATURE_GRAM_POINTS", 10)
    features, rows = _builds(monkeypatch, X, Y, kernel, B, 0.1, accuracy=3.0)
    _assert_same_sketch(features, rows, X[:4])
    _assert_same_sketch(whole, rows, X[:4])
    for gram_points in (10, 1000):
        monkeypatch.setattr(nystrom_build, "FEATURE_GRAM_POINTS", gram_points)
        with pytest.raises(ValueError, match="^train_X is outside the range where the kernel"):
            NystromVectorValuedGP(1e300 * X, Y, kernel, B, 0.1)


@pytest.mark.parametrize("name, kind", [("icm", "float32"), ("sum", "full"), ("icm", "indexed")])
def test_other_builds_take_the_rows_route(name, kind, monkeypatch):
    """float32, sums of separable kernels and task-indexed data build on the rows."""
    dtype = torch.float32 if kind == "float32" else torch.float64
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=10, seed=1)
    monkeypatch.setattr(nystrom_build, "pivoted_features", None)  # would fail if called
    kernels = case.kernels[0] if len(case.kernels) == 1 else case.kernels
    covariances = case.task_covariances
    model = NystromVectorValuedGP(
        case.train_X,
        case.train_Y,
        kernels,
        covariances[0] if len(covariances) == 1 else covariances,
        0.1,
        train_tasks=case.train_tasks,
    )
    assert model.dictionary_size >= 1


def test_pivoted_features_exact_truncated_and_abandoned():
    points = torch.linspace(0, 1, 40, dtype=torch.float64).unsqueeze(-1)
    with torch.no_grad():
        K = RBFKernel().double()(points, points).to_dense()

    def column(j):
        return K[:, j]

    exact = pivoted_features(column, K.diagonal(), rtol=0.0, max_rank=40)
    assert exact.shape == (40, 40) or float((exact @ exact.T - K).abs().max()) < 1e-12
    truncated = pivoted_features(column, K.diagonal(), rtol=1e-6)
    assert truncated.shape[1] < 20
    assert float((truncated @ truncated.T - K).abs().max()) <= 1e-6
    assert pivoted_features(column, K.diagonal(), max_rank=3) is None  # needs more
    zero = torch.zeros(5, 5, dtype=torch.float64)
    assert pivoted_features(lambda j: zero[:, j], zero.diagonal()) is None


@pytest.mark.parametrize("shape", [(3, 4, 5), (101, 20, 16), (300, 20, 16), (5000, 20, 16)])
def test_small_product_is_the_matrix_product(shape):
    k, l, n = shape
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(k, l, generator=generator, dtype=torch.float64)
    b = torch.randn(l, n, generator=generator, dtype=torch.float64)
    torch.testing.assert_close(small_product(a, b), a @ b, rtol=1e-12, atol=1e-12)
