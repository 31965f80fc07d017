"""Paper 002's test functions and random-action-set environment (Section 7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from botorch_mtucb.problems import KernelBanditEnvironment, RKHSTestFunction, make_kernel


@pytest.mark.parametrize("family, dim", [("rbf", 3), ("matern52", 2), ("matern32", 4)])
def test_sampled_function_has_the_requested_rkhs_norm(family, dim):
    kernel = make_kernel(family, 0.3)
    function = RKHSTestFunction.sample(
        kernel, dim, 10.0, generator=torch.Generator().manual_seed(0)
    )
    Z, a = function.inducing_points, function.coefficients
    assert Z.shape == (20, dim) and ((Z >= 0) & (Z <= 1)).all()
    with torch.no_grad():
        K = kernel(Z, Z).to_dense().numpy()
    assert math.sqrt(a.numpy() @ K @ a.numpy()) == pytest.approx(10.0, rel=1e-10)
    assert function.rkhs_norm == pytest.approx(10.0, rel=1e-10)
    X = torch.rand(7, dim, dtype=torch.float64)
    with torch.no_grad():
        expected = kernel(X, Z).to_dense().numpy() @ a.numpy()
    assert np.allclose(function(X).detach().numpy(), expected)
    assert function(X.reshape(7, 1, dim)).shape == (7, 1)
    again = RKHSTestFunction.sample(kernel, dim, 10.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(again.coefficients, a)


def test_weights_are_standard_normal_before_scaling():
    # w ~ N(0, I) and f = b w^T k(., Z): the direction of the coefficients is that of w
    kernel = make_kernel("rbf", 0.5)
    generator = torch.Generator().manual_seed(3)
    function = RKHSTestFunction.sample(kernel, 3, 10.0, generator=generator)
    generator = torch.Generator().manual_seed(3)
    torch.rand(20, 3, generator=generator, dtype=torch.float64)
    w = torch.randn(20, generator=generator, dtype=torch.float64)
    ratio = function.coefficients / w
    assert torch.allclose(ratio, ratio[0].expand(20)) and ratio[0] > 0


def test_environment_protocol():
    function = RKHSTestFunction.sample(
        make_kernel("matern52", 0.5), 3, 10.0, generator=torch.Generator().manual_seed(1)
    )
    environment = KernelBanditEnvironment(function, noise_std=0.1, num_actions=100)
    context = environment.context(1, torch.Generator().manual_seed(5))
    actions = context["_actions"]
    assert actions.shape == (100, 3) and ((actions >= 0) & (actions <= 1)).all()
    same = environment.context(1, torch.Generator().manual_seed(5))["_actions"]
    assert torch.equal(actions, same)
    with torch.no_grad():
        values = function(actions)
    best = actions[values.argmax()]
    assert environment.regret(best, context) == 0.0
    worst = actions[values.argmin()]
    assert environment.regret(worst, context) == pytest.approx(float(values.max() - values.min()))
    generator = torch.Generator().manual_seed(7)
    noise = torch.cat([environment.observe(best, context, generator) for _ in range(3000)])
    noise = noise - float(values.max())
    assert abs(float(noise.mean())) < 4 * 0.1 / math.sqrt(3000)
    assert float(noise.std()) == pytest.approx(0.1, rel=0.06)


def test_continuous_environment_regret_against_the_maximum():
    function = RKHSTestFunction.sample(
        make_kernel("rbf", 0.5), 2, 10.0, generator=torch.Generator().manual_seed(2)
    )
    environment = KernelBanditEnvironment(function, noise_std=0.1, num_actions=None)
    assert environment.context(1, torch.Generator()) == {}
    x_star, f_star = function.maximum()
    grid = torch.stack(
        torch.meshgrid(*[torch.linspace(0, 1, 101, dtype=torch.float64)] * 2, indexing="ij"), -1
    ).reshape(-1, 2)
    with torch.no_grad():
        assert f_star >= float(function(grid).max()) - 1e-9
    assert environment.regret(x_star, {}) == pytest.approx(0.0, abs=1e-9)
    assert environment.regret(grid[0], {}) == pytest.approx(f_star - float(function(grid[:1])[0]))


def test_bad_input():
    with pytest.raises(ValueError, match="family"):
        make_kernel("periodic", 0.5)
    with pytest.raises(ValueError, match="lengthscale"):
        make_kernel("rbf", 0.0)
    kernel = make_kernel("rbf", 0.5)
    with pytest.raises(ValueError, match="rkhs_norm"):
        RKHSTestFunction.sample(kernel, 2, -1.0)
    with pytest.raises(ValueError, match="dim"):
        RKHSTestFunction.sample(kernel, 0, 1.0)
    function = RKHSTestFunction.sample(kernel, 2, 1.0)
    with pytest.raises(ValueError, match="noise_std"):
        KernelBanditEnvironment(function, noise_std=0.0)
    with pytest.raises(ValueError, match="num_actions"):
        KernelBanditEnvironment(function, num_actions=0)
