"""KernelUCB (paper 002, Algorithm 1): each of paper 002's methods plays the argmax of its
own bound, with the paper's parameter mapping; a short run; the argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.acquisition import UpperConfidenceBound

from botorch_mtucb.bandits import (
    KernelUCB,
    RandomPolicy,
    confidence_rule,
    default_mixture_scale,
    run_policy,
)
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.problems import KernelBanditEnvironment, RKHSTestFunction, make_kernel
from botorch_mtucb.utils import BoxDomain

B, SIGMA, DELTA = 10.0, 0.1, 0.01


def observed(kernel, t=25, d=2, seed=0):
    generator = torch.Generator().manual_seed(seed)
    function = RKHSTestFunction.sample(kernel, d, B, generator=generator)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        Y = function(X).unsqueeze(-1) + SIGMA * torch.randn(
            t, 1, generator=generator, dtype=torch.float64
        )
    actions = torch.rand(50, d, generator=generator, dtype=torch.float64)
    return X, Y, actions


def dense_ucb(kernel, X, Y, actions, regularization, width) -> np.ndarray:
    """mu_lambda + width * rho_lambda, transcribed (eqs. (2)-(3) of paper 002)."""
    with torch.no_grad():
        K = kernel(X, X).to_dense().numpy()
        kx = kernel(X, actions).to_dense().numpy()
    A = np.linalg.inv(K + regularization * np.eye(len(K)))
    mean = kx.T @ A @ Y.numpy()[:, 0]
    var = 1.0 - np.einsum("tn,ts,sn->n", kx, A, kx)
    return mean + width * np.sqrt(np.clip(var, 1e-12, None))


@pytest.mark.parametrize("method", ["CMM-UCB", "DMM-UCB", "AMM-UCB", "AY-GP-UCB", "IGP-UCB"])
def test_selects_the_argmax_of_its_bound(method):
    kernel = make_kernel("matern52", 0.4)
    X, Y, actions = observed(kernel)
    c, eta, horizon = default_mixture_scale(2.5, 2, 100), 2 / 100, 100
    rule = confidence_rule(method, kernel, 2, B, SIGMA, DELTA, mixture_scale=c, eta=eta)
    policy = KernelUCB(rule, name=method)
    for x, y in zip(X, Y):
        policy.update(x, y, {}, torch.Generator())
    chosen = policy.select({"_actions": actions}, torch.Generator().manual_seed(0))
    base = SIGMA**2 / c
    if method in ("CMM-UCB", "DMM-UCB", "AMM-UCB"):
        grid = [m * base for m in (0.1, 0.3, 1, 3, 10)]
        alphas = {"CMM-UCB": None, "DMM-UCB": grid, "AMM-UCB": base}[method]
        fresh = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, mixture_scale=c)
        values = fresh.upper(actions, alphas).numpy()
        radius_squared = float(fresh.radius_squared)
        assert policy.diagnostics() == {"radius_squared": pytest.approx(radius_squared)}
    else:
        regularization = 1 + eta if method == "IGP-UCB" else base
        with torch.no_grad():
            K = kernel(X, X).to_dense().numpy()
        logdet = np.linalg.slogdet(np.eye(len(K)) + K / regularization)[1]
        if method == "IGP-UCB":
            width = B + SIGMA * math.sqrt(logdet + len(K) * eta + 2 * math.log(1 / DELTA))
        else:
            width = B + SIGMA / math.sqrt(regularization) * math.sqrt(
                logdet + 2 * math.log(1 / DELTA)
            )
        assert float(policy.rule.width) == pytest.approx(width, rel=1e-9)
        assert policy.diagnostics() == {"width": pytest.approx(width, rel=1e-9)}
        values = dense_ucb(kernel, X, Y, actions, regularization, width)
    assert torch.equal(chosen, actions[int(np.argmax(values))])
    assert policy.name == method
    assert KernelUCB(rule).name == "KernelUCB"
    assert horizon == 100


def test_short_run_beats_random():
    kernel = make_kernel("rbf", 0.5)
    function = RKHSTestFunction.sample(kernel, 2, B, generator=torch.Generator().manual_seed(4))
    environment = KernelBanditEnvironment(function, SIGMA, num_actions=30)
    regrets = {}
    dmm = KernelUCB(confidence_rule("DMM-UCB", kernel, 2, B, SIGMA, DELTA), name="DMM-UCB")
    for policy in (dmm, RandomPolicy()):
        records = run_policy(policy, environment, horizon=40, seed=0)
        assert all(record.regret >= 0 for record in records)
        regrets[policy.name] = sum(record.regret for record in records)
    assert regrets["DMM-UCB"] < 0.5 * regrets["Random"]


def test_continuous_domain():
    kernel = make_kernel("rbf", 0.4)
    X, Y, _ = observed(kernel, t=10)
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64), num_restarts=2,
                    raw_samples=32)  # fmt: skip
    policy = KernelUCB(confidence_rule("CMM-UCB", kernel, 2, B, SIGMA, DELTA), domain=box)
    for x, y in zip(X, Y):
        policy.update(x, y, {}, torch.Generator())
    x = policy.select({}, torch.Generator().manual_seed(1))
    assert x.shape == (2,) and ((x >= 0) & (x <= 1)).all()
    grid = torch.rand(500, 2, dtype=torch.float64)
    bound = policy.rule.bound
    assert float(bound.upper(x.unsqueeze(0))[0]) >= float(bound.upper(grid).max()) - 1e-6


def test_bad_input():
    kernel = make_kernel("rbf", 0.5)
    with pytest.raises(TypeError, match="rule must have"):
        KernelUCB("DMM-UCB")
    policy = KernelUCB(confidence_rule("AMM-UCB", kernel, 2))
    with pytest.raises(ValueError, match="_actions"):
        policy.select({}, torch.Generator())
    with pytest.raises(TypeError, match="FiniteDomain or BoxDomain"):
        KernelUCB(confidence_rule("AMM-UCB", kernel, 2), domain="box").select({}, torch.Generator())


def test_any_object_with_the_three_methods_drives_kernel_ucb():
    class CountingRule:
        """A user's rule: BoTorch's UCB with a fixed width on our GP."""

        def __init__(self, model):
            self.model, self.updates = model, 0

        def acquisition(self):
            return UpperConfidenceBound(self.model, beta=4.0)

        def update(self, X, Y):
            self.model.append_observations(X, Y)
            self.updates += 1

        def diagnostics(self):
            return {"updates": float(self.updates)}

    kernel = make_kernel("matern52", 0.4)
    X, Y, test_X = observed(kernel, t=5)
    empty = torch.zeros(0, 2, dtype=torch.float64)
    model = VectorValuedGP(empty, empty[:, :1], kernel, torch.ones(1, 1, dtype=torch.float64), 0.1)
    policy = KernelUCB(CountingRule(model), name="fixed-width")
    for x, y in zip(X, Y):
        policy.update(x, y, {}, torch.Generator())
    chosen = policy.select({"_actions": test_X}, torch.Generator().manual_seed(0))
    with torch.no_grad():
        values = policy.rule.acquisition()(test_X.unsqueeze(-2))
    assert torch.equal(chosen, test_X[int(values.argmax())])
    assert policy.diagnostics() == {"updates": 5.0}
    assert policy.settings() is None  # nothing for the run file's header
