"""``CertifiedStopping``: the decision is the certificate compared with epsilon (absolute
or relative, computed independently), models and prebuilt bounds, a plain loop that stops
with an epsilon-optimal recommendation, and bad input."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from gpytorch.kernels import RBFKernel

from botorch_mtucb.acquisition import CertifiedStopping
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.certificate import MartingaleMixtureBounds, certify
from botorch_mtucb.utils import BoxDomain, FiniteDomain


def _kernel(lengthscale=0.2):
    kernel = RBFKernel().double()
    kernel.lengthscale = lengthscale
    return kernel


def _known_norm(kernel, norm, seed):
    generator = torch.Generator().manual_seed(seed)
    Z = torch.rand(6, 1, dtype=torch.float64, generator=generator)
    a = torch.randn(6, dtype=torch.float64, generator=generator)
    with torch.no_grad():
        a = a * norm / (a @ kernel(Z).to_dense() @ a).sqrt()
    return lambda X: (kernel(X, Z).to_dense() @ a).detach()


def test_decision_is_the_certificate_against_epsilon():
    kernel = _kernel()
    f = _known_norm(kernel, 2.0, 0)
    X = torch.rand(15, 1, dtype=torch.float64)
    bound = MartingaleMixtureBound(X, f(X).unsqueeze(-1), kernel, 2.0, 0.01, 0.1)
    domain = FiniteDomain(torch.linspace(0, 1, 201, dtype=torch.float64).unsqueeze(-1))
    gap = certify(bound, domain).gap
    assert CertifiedStopping(1.01 * gap).should_stop(bound, domain).stop
    decision = CertifiedStopping(0.99 * gap).should_stop(bound, domain)
    assert not decision.stop and decision.certificate.gap == gap
    assert (
        decision.message.startswith("continue: certified gap") and "guaranteed" in decision.message
    )
    lowers = bound.lower(X).detach()
    spread = float(lowers.max() - lowers.min())  # relative: the range of l_t at the data
    relative = CertifiedStopping(0.5, relative=True).should_stop(bound, domain)
    assert relative.threshold == pytest.approx(0.5 * spread, rel=1e-12)
    assert relative.stop == (gap <= 0.5 * spread)


def test_a_fitted_model_in_user_units_on_a_box():
    X = 10 * torch.rand(12, 1, dtype=torch.float64)
    model = SingleTaskGP(X, 100 + (X / 2).sin(), input_transform=Normalize(1))
    box = BoxDomain(torch.tensor([[0.0], [10.0]], dtype=torch.float64))
    rule = CertifiedStopping(1.0, delta=0.1, rkhs_norm_bound=3.0, noise_std=0.1)
    decision = rule.should_stop(model, box)
    expected = certify(MartingaleMixtureBounds.from_model(model, 3.0, 0.1, delta=0.1), box)
    assert decision.certificate.gap == pytest.approx(expected.gap, rel=1e-12)
    assert not decision.certificate.guaranteed and "practical" in decision.message
    grid = torch.linspace(0, 10, 2001, dtype=torch.float64).unsqueeze(-1)
    bounds = MartingaleMixtureBounds.from_model(model, 3.0, 0.1, delta=0.1)
    assert "tolerance reached" in decision.certificate.method  # refined (no early exit)
    assert expected.optimum_upper >= float(bounds.upper(grid).max())
    fast = CertifiedStopping(1e-3, rkhs_norm_bound=3.0, noise_std=0.1, early_exit=True)
    assert "shown > target_gap" in fast.should_stop(model, box).certificate.method
    assert float(decision.certificate.recommendation) in X.squeeze(-1).tolist()


def test_a_plain_loop_stops_with_an_epsilon_optimal_recommendation():
    """Random points, a known norm and noise: the rule stops, and the recommendation's
    true regret is at most epsilon (the event of the bound holds on this seed)."""
    kernel, epsilon = _kernel(0.25), 0.1
    f = _known_norm(kernel, 1.0, 3)
    generator = torch.Generator().manual_seed(1)
    empty = torch.zeros(0, 1, dtype=torch.float64)
    bound = MartingaleMixtureBound(empty, empty, kernel, 1.0, 0.01, 0.1)
    box = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    rule = CertifiedStopping(epsilon, hyperparameters_fixed=True)
    for _ in range(60):
        x = torch.rand(1, 1, dtype=torch.float64, generator=generator)
        y = f(x) + 0.01 * torch.randn(1, dtype=torch.float64, generator=generator)
        bound.append_observations(x, y.unsqueeze(-1))
        decision = rule.should_stop(bound, box)
        if decision.stop:
            break
    assert decision.stop and bound.num_observations < 60 and decision.certificate.guaranteed
    grid = torch.linspace(0, 1, 2001, dtype=torch.float64).unsqueeze(-1)
    regret = float(f(grid).max() - f(decision.certificate.recommendation[None]))
    assert regret <= decision.certificate.gap <= epsilon


@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.nan, -math.inf])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        CertifiedStopping(epsilon)


def test_bad_arguments():
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        CertifiedStopping("0.1")
    for delta in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="delta must lie in \\(0, 1\\)"):
            CertifiedStopping(0.1, delta=delta)
    rule = CertifiedStopping(0.1)
    domain = FiniteDomain(torch.rand(4, 1, dtype=torch.float64))
    with pytest.raises(TypeError, match="model_or_bound must be a fitted single-output"):
        rule.should_stop("model", domain)
    X = torch.rand(5, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="output"):
        rule.should_stop(SingleTaskGP(X, torch.cat([X, X], -1)), domain)
    with pytest.raises(ValueError, match="recommendation .* outside the box"):
        rule.should_stop(
            SingleTaskGP(X, X), BoxDomain(torch.tensor([[0.0], [1.0]])), torch.tensor([2.0])
        )
