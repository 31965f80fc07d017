"""The certificate on finite domains equals a brute-force ``max_x u_t(x) - l_t(x_hat)``
computed independently (every point at once, no chunks) for the single-task,
multi-task and MT-KB bounds, and covers the true regret of a known-norm function."""

from __future__ import annotations

import pytest
import torch
from certificate_cases import known_norm_function, noisy_bound, rbf

from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound, mt_kb_width
from botorch_mtucb.confidence.certificate import (
    MartingaleMixtureBounds,
    MTKBBounds,
    MultiTaskMartingaleMixtureBounds,
    certify,
)
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils import FiniteDomain


def _setup(dtype, d=2, n=12):
    generator = torch.Generator().manual_seed(3)
    kernel = rbf(0.3)
    f = known_norm_function(kernel, d, 2.0, generator)
    points = torch.rand(300, d, dtype=torch.float64, generator=generator)
    X = points[:n]
    bound = noisy_bound(f, kernel, X, 2.0, 0.05, 0.1, generator)
    return f, bound, FiniteDomain(points.to(dtype)), X


@pytest.mark.parametrize("alphas", [None, [1e-3, 1e-2, 1e-1], 0.01])
def test_gap_equals_brute_force(dtype, alphas):
    f, bound, domain, X = _setup(dtype)
    bounds = MartingaleMixtureBounds(bound, alphas=alphas)
    certificate = certify(bounds, domain, chunk_size=7)
    points = domain.points.double()
    upper = bound.upper(points, alphas=alphas).detach()
    lower = bound.lower(points, alphas=alphas).detach()
    lower_X = bound.lower(X, alphas=alphas).detach()
    best = int(lower_X.argmax())  # default: the evaluated point with the largest l_t
    expected_gap = float(upper.max() - lower_X[best])
    tol = 1e-10 if dtype == torch.float64 else 1e-5 * max(1.0, abs(expected_gap))
    assert abs(certificate.gap - expected_gap) <= tol
    torch.testing.assert_close(certificate.recommendation.double(), X[best].to(dtype).double())
    assert certificate.optimum_upper == pytest.approx(float(upper.max()), abs=tol)
    optimum_lower = max(float(lower.max()), float(lower_X.max()))
    assert certificate.optimum_lower == pytest.approx(optimum_lower, abs=tol)
    kept = upper >= certificate.optimum_lower
    assert certificate.num_candidates == int(kept.sum())
    assert certificate.guaranteed
    # a user's recommendation
    x_hat = domain.points[17]
    certificate = certify(bounds, domain, recommendation=x_hat)
    expected_gap = float(upper.max() - bound.lower(x_hat.double()[None], alphas=alphas))
    assert abs(certificate.gap - expected_gap) <= tol
    # the certificate covers the true regret (here the event holds)
    values = f(points)
    assert certificate.gap >= float(values.max() - f(x_hat[None].double()))


def test_multi_task_and_mt_kb_bounds_equal_brute_force():
    generator = torch.Generator().manual_seed(5)
    kernel = rbf(0.3)
    points = torch.rand(200, 1, dtype=torch.float64, generator=generator)
    X = points[:10]
    Y = torch.cat([(5 * X).sin(), (5 * X).cos()], -1)
    task_covariance = torch.tensor([[1.0, 0.4], [0.4, 1.0]], dtype=torch.float64)
    w = torch.tensor([0.3, 0.7], dtype=torch.float64)
    bound = MultiTaskMartingaleMixtureBound(X, Y, kernel, task_covariance, 4.0, 0.1, 0.1)
    domain = FiniteDomain(points)
    certificate = certify(MultiTaskMartingaleMixtureBounds(bound, weights=w), domain)
    upper = bound.upper(points, weights=w).detach()
    lower_X = bound.lower(X, weights=w).detach()
    assert abs(certificate.gap - float(upper.max() - lower_X.max())) <= 1e-10

    model = VectorValuedGP(X, Y, kernel, task_covariance, 0.01)
    bounds = MTKBBounds(model, 4.0, noise_std=0.1, delta=0.1, task=1)
    certificate = certify(bounds, domain)
    width = float(mt_kb_width(model, 4.0, 0.1, 0.1))
    posterior = model.posterior(points)  # the model's own posterior, task 1
    mean = posterior.mean[..., 1]
    std = posterior.variance[..., 1].sqrt()
    X_posterior = model.posterior(X)
    lower_X = X_posterior.mean[..., 1] - width * X_posterior.variance[..., 1].sqrt()
    expected = float((mean + width * std).max() - lower_X.max())
    assert abs(certificate.gap - expected) <= 1e-9
    assert "MT-KB" in certificate.assumptions


def test_practical_label_when_b_is_chosen_from_the_data():
    generator = torch.Generator().manual_seed(1)
    X = torch.rand(10, 1, dtype=torch.float64, generator=generator)
    from botorch_mtucb.confidence import MartingaleMixtureBound

    bound = MartingaleMixtureBound(X, X.sin(), rbf(), None, 0.1, 0.1)
    certificate = certify(bound, FiniteDomain(X))
    assert not certificate.guaranteed
    text = str(certificate)
    assert "PRACTICAL, NOT GUARANTEED" in text and "chosen from the data" in text
    assert f"{certificate.gap:.6g}" in text


def test_too_large_a_domain_is_refused_before_any_work():
    _, bound, _, _ = _setup(torch.float64)
    domain = FiniteDomain(torch.rand(50, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="max_points = 20.*BoxDomain"):
        certify(bound, domain, max_points=20)
