"""ScalarizedEnvironment: paper 000's scalarized regret and Bayes regret (Section 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracles import chebyshev_scalarization, linear_scalarization
from tiny_problem import TinyProblem

from botorch_mtucb.bandits import ScalarizedEnvironment
from botorch_mtucb.scalarization import sample_chebyshev_weights, sample_linear_weights


def _values(kind, weights, reference, Y):
    if kind == "linear":
        return linear_scalarization(weights, Y)
    return chebyshev_scalarization(weights, reference, Y)


@pytest.mark.parametrize("kind", ("chebyshev", "linear"))
def test_regret_is_nonnegative_and_zero_at_the_optimum(kind):
    problem = TinyProblem()
    environment = ScalarizedEnvironment(problem, kind, num_bayes_weights=8)
    F = problem.objective(problem.points).numpy()
    reference = problem.reference_point.numpy()
    for t in range(1, 6):
        context = environment.context(t, torch.Generator().manual_seed(t))
        weights = context["weights"].numpy()
        np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-12)
        values = _values(kind, weights, reference, F)
        regrets = [environment.regret(p, context) for p in problem.points]
        np.testing.assert_allclose(regrets, values.max() - values, rtol=1e-10, atol=1e-12)
        assert min(regrets) == 0.0
        assert regrets[int(np.argmax(values))] == 0.0
        assert all(r >= 0 for r in regrets)
    # a point off the grid that beats every grid point still has regret 0, never < 0
    between = torch.tensor([0.5 * (problem.points[5, 0] + problem.points[6, 0])])
    assert environment.regret(between, context) >= 0


@pytest.mark.parametrize("kind", ("chebyshev", "linear"))
def test_bayes_regret_curve_matches_brute_force(kind):
    problem = TinyProblem()
    environment = ScalarizedEnvironment(problem, kind, num_bayes_weights=64, bayes_seed=9)
    sampler = sample_chebyshev_weights if kind == "chebyshev" else sample_linear_weights
    weights = sampler(2, torch.Size([64]), generator=torch.Generator().manual_seed(9))
    torch.testing.assert_close(environment.bayes_weights, weights, rtol=0, atol=0)
    weights = weights.numpy()
    F = problem.objective(problem.points).numpy()
    reference = problem.reference_point.numpy()
    rng = np.random.default_rng(0)
    queried = rng.integers(0, len(F), size=8)
    curve = environment.bayes_regret_curve(problem.points[queried]).numpy()
    expected = []
    for t in range(1, 9):
        gaps = []
        for w in weights:
            values = _values(kind, w, reference, F)
            gaps.append(values.max() - values[queried[:t]].max())
        expected.append(np.mean(gaps))
    np.testing.assert_allclose(curve, expected, rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(curve) <= 1e-15)
    assert np.all(curve >= 0)
    full = environment.bayes_regret_curve(problem.points).numpy()
    assert full[-1] == pytest.approx(0.0, abs=1e-12)  # every point queried


def test_observe_is_noisy_objective():
    problem = TinyProblem(noise_std=0.1)
    environment = ScalarizedEnvironment(problem)
    x = problem.points[3]
    y = environment.observe(x, {}, torch.Generator().manual_seed(0))
    noise = torch.randn(2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    torch.testing.assert_close(y, problem.objective(x.reshape(1, -1))[0] + 0.1 * noise)


def test_bad_input():
    with pytest.raises(ValueError, match="scalarization must be one of"):
        ScalarizedEnvironment(TinyProblem(), "product")
    with pytest.raises(ValueError, match="num_bayes_weights must be >= 1"):
        ScalarizedEnvironment(TinyProblem(), num_bayes_weights=0)
