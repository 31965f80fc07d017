"""MT-CMM-UCB, MT-DMM-UCB and IT-CMM-UCB on a tiny finite problem: every choice is the
argmax over the grid of the scalarized bound of a ``MultiTaskMartingaleMixtureBound``
built afresh from the recorded rounds (per-task bounds evaluated one candidate at a
time), and the appended bound equals the rebuilt one."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracles import make_rbf
from tiny_problem import TinyProblem

from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
from botorch_mtucb.bandits.scalarized import it_cmm_ucb, mt_cmm_ucb
from botorch_mtucb.confidence.martingale_mixture.emptiness import EmptyConfidenceSetError
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.scalarization import ChebyshevScalarization, LinearScalarization, Scalarization
from botorch_mtucb.utils import BoxDomain, FiniteDomain
from botorch_mtucb.utils.domains import maximize_acquisition

B = torch.tensor([[1.0, 0.6], [0.6, 1.5]], dtype=torch.float64)
RKHS, SIGMA, DELTA = 20.0, 0.1, 0.1
GRID = [0.001, 0.01, 0.1]


def _policy(kind: str, alphas=None, dtype=torch.float64):
    points = TinyProblem().points.to(dtype)
    if kind == "independent":
        return it_cmm_ucb(
            make_rbf([0.25]), torch.diagonal(B), FiniteDomain(points), RKHS, SIGMA, DELTA, alphas
        )
    return mt_cmm_ucb(make_rbf([0.25]), B, FiniteDomain(points), RKHS, SIGMA, DELTA, alphas)


def _fresh_bound(records, task_covariance):
    t = len(records)
    X = torch.tensor([r.x for r in records], dtype=torch.float64).reshape(t, 1)
    Y = torch.tensor([r.y for r in records], dtype=torch.float64).reshape(t, 2)
    return MultiTaskMartingaleMixtureBound(
        X, Y, make_rbf([0.25]), task_covariance, RKHS, SIGMA, DELTA
    )


def _scalarized_values(bound, scalarization, weights, alphas):
    """The bound of ``s(f(x))`` at each grid point, one candidate at a time."""
    reference = TinyProblem().reference_point
    values = []
    for point in TinyProblem().points:
        x = point.reshape(1, 1)
        if scalarization == "linear":
            values.append(float(bound.upper(x, weights=weights, alphas=alphas)[0]))
        else:
            per_task = [float(bound.upper(x, weights=e, alphas=alphas)[0]) for e in torch.eye(2)]
            values.append(min(w * (u - z) for w, u, z in zip(weights, per_task, reference)))
    return np.array(values)


@pytest.mark.parametrize("scalarization", ["linear", "chebyshev"])
@pytest.mark.parametrize("kind, alphas", [("multi", None), ("multi", GRID), ("independent", None)])
def test_each_choice_maximizes_the_rebuilt_bound(scalarization, kind, alphas):
    problem = TinyProblem()
    policy = _policy(kind, alphas)
    records = run_policy(policy, ScalarizedEnvironment(problem, scalarization), 6, seed=0)
    task_covariance = torch.diag(torch.diagonal(B)) if kind == "independent" else B
    points = problem.points[:, 0].numpy()
    for t, record in enumerate(records):
        bound = _fresh_bound(records[:t], task_covariance)
        weights = torch.tensor(record.context["weights"], dtype=torch.float64)
        values = _scalarized_values(bound, scalarization, weights, alphas)
        chosen = int(np.argmin(np.abs(points - record.x[0])))
        assert points[chosen] == record.x[0]
        assert values[chosen] >= values.max() - 1e-9 * max(1.0, abs(values.max())), t
        assert record.regret >= 0
    fresh = _fresh_bound(records, task_covariance)
    assert records[-1].diagnostics["radius_squared"] == pytest.approx(
        float(fresh.radius_squared), rel=1e-12
    )


@pytest.mark.parametrize("alphas", [None, GRID])
def test_appending_equals_rebuilding(alphas):
    problem = TinyProblem()
    policy = _policy("multi", alphas)
    records = run_policy(policy, ScalarizedEnvironment(problem), 8, seed=3)
    fresh = _fresh_bound(records, B)
    assert policy.rule.bound.num_observations == 16
    # the rule's bound reads kernel values from k(D, D) (track_candidates); so does this
    # one (the untracked bound agrees to round-off, which the alpha search can amplify
    # where the minimum sits at the bottom of its range)
    assert fresh.track_candidates(problem.points)
    weights = torch.tensor([[0.3, 0.7], [1.0, 0.0]], dtype=torch.float64)
    for w in (None, weights):
        kept = policy.rule.bound.upper(problem.points, weights=w, alphas=alphas)
        rebuilt = fresh.upper(problem.points, weights=w, alphas=alphas)
        torch.testing.assert_close(kept, rebuilt, rtol=1e-8, atol=1e-10)
        kept = policy.rule.bound.lower(problem.points, weights=w, alphas=alphas)
        torch.testing.assert_close(kept, fresh.lower(problem.points, weights=w, alphas=alphas))


def test_acquisition_values_and_pending_points():
    problem = TinyProblem()
    policy = _policy("multi")
    run_policy(policy, ScalarizedEnvironment(problem), 4, seed=1)
    weights = torch.tensor([0.25, 0.75], dtype=torch.float64)
    candidates = problem.points.unsqueeze(-2)  # 12 x 1 x 1
    linear = policy.rule.acquisition(LinearScalarization(weights))
    torch.testing.assert_close(
        linear(candidates), policy.rule.bound.upper(problem.points, weights=weights), rtol=0, atol=0
    )
    chebyshev = policy.rule.acquisition(ChebyshevScalarization(weights, problem.reference_point))
    expected = (weights * (policy.rule.bound.upper(problem.points) - problem.reference_point)).amin(
        -1
    )
    torch.testing.assert_close(chebyshev(candidates), expected, rtol=0, atol=0)
    pending = problem.points[:2]
    chebyshev.set_X_pending(pending)
    per_task = policy.rule.bound.upper(problem.points, X_pending=pending)
    expected = (weights * (per_task - problem.reference_point)).amin(-1)
    torch.testing.assert_close(chebyshev(candidates), expected, rtol=0, atol=0)
    # one f for both tasks: the linear functional's bound is below w^T (per-task bounds)
    per_task = policy.rule.bound.upper(problem.points)
    assert bool((linear(candidates) <= per_task @ weights + 1e-9).all())
    assert bool((linear(candidates) < per_task @ weights - 1e-6).any())


def test_float32_domain():
    problem = TinyProblem()
    policy = _policy("multi", dtype=torch.float32)
    records = run_policy(policy, ScalarizedEnvironment(problem), 3, seed=0)
    points = problem.points[:, 0].to(torch.float32).tolist()
    assert all(record.x[0] in points for record in records)
    x = policy.select(ScalarizedEnvironment(problem).context(3, torch.Generator()), None)
    assert x.dtype == torch.float32
    values = policy.rule.acquisition(LinearScalarization(torch.ones(2))).forward(
        problem.points.to(torch.float32).unsqueeze(-2)
    )
    assert values.dtype == torch.float32


def test_a_contradicted_norm_bound_raises():
    problem = TinyProblem()
    points = FiniteDomain(problem.points)
    policy = mt_cmm_ucb(make_rbf([0.25]), B, points, 0.05, SIGMA, DELTA)
    with pytest.raises(EmptyConfidenceSetError, match="empty"):
        run_policy(policy, ScalarizedEnvironment(problem), 10, seed=0)


def test_bad_arguments():
    policy = _policy("multi")

    class Product(Scalarization):
        def forward(self, Y):
            return Y.prod(-1)

    weights = torch.tensor([0.5, 0.5], dtype=torch.float64)
    with pytest.raises(TypeError, match="LinearScalarization, a ChebyshevScalarization"):
        policy.rule.acquisition(Product(weights))
    with pytest.raises(ValueError, match="one weight vector of n = 2"):
        policy.rule.acquisition(LinearScalarization(torch.ones(3, dtype=torch.float64)))
    with pytest.raises(ValueError, match="one weight vector of n = 2"):
        policy.rule.acquisition(LinearScalarization(torch.ones(4, 2, dtype=torch.float64)))
    with pytest.raises(ValueError, match="alpha"):
        _policy("multi", alphas=[0.1, -1.0])
    with pytest.raises(ValueError, match="task_variances"):
        it_cmm_ucb(
            make_rbf([0.25]), torch.tensor([1.0, 0.0]), FiniteDomain(TinyProblem().points),
            RKHS, SIGMA,
        )  # fmt: skip
    assert policy.settings() == {
        "rkhs_norm_bound": RKHS,
        "noise_std": SIGMA,
        "delta": DELTA,
        "mixture_scale": 1.0,
        "alphas": None,
    }


@pytest.mark.filterwarnings("ignore::botorch.exceptions.warnings.BadInitialCandidatesWarning")
def test_box_domain_is_reproducible_from_the_seed():
    problem = TinyProblem()
    domain = BoxDomain(
        torch.tensor([[0.0], [1.0]], dtype=torch.float64), num_restarts=2, raw_samples=16
    )
    runs = []
    for global_seed in (0, 1):
        torch.manual_seed(global_seed)
        policy = mt_cmm_ucb(make_rbf([0.25]), B, domain, RKHS, SIGMA)
        runs.append(run_policy(policy, ScalarizedEnvironment(problem), 3, seed=2))
    for a, b in zip(*runs):
        assert a.x == b.x and a.y == b.y
        assert 0.0 <= a.x[0] <= 1.0
    # on the box the maximizer of the bound beats every point of the grid
    acquisition = policy.rule.acquisition(
        ScalarizedEnvironment(problem).context(3, torch.Generator().manual_seed(5))[
            "_scalarization"
        ]
    )
    x, value = maximize_acquisition(acquisition, domain, torch.Generator().manual_seed(0))
    assert float(value) >= float(acquisition(problem.points.unsqueeze(-2)).max()) - 1e-6
