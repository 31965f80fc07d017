"""MT-KB (Algorithm 1 of paper 000) and IT-KB on a tiny finite problem: every choice is
re-derived from the recorded data with the dense NumPy formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from oracles import (
    DenseMultiTaskGP,
    chebyshev_scalarization,
    linear_scalarization,
    make_rbf,
    numpy_kernel,
    ucb,
)
from tiny_problem import TinyProblem

from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
from botorch_mtucb.bandits.scalarized import it_kb, mobo, mt_kb
from botorch_mtucb.utils import BoxDomain, FiniteDomain

B = np.array([[1.0, 0.6], [0.6, 1.5]])
RKHS, SIGMA, DELTA, ETA = 1.0, 0.1, 0.1, 0.1


def _scalarize(kind, weights, reference):
    if kind == "linear":
        return (lambda y: linear_scalarization(weights, y)), float(np.linalg.norm(weights))
    return (lambda y: chebyshev_scalarization(weights, reference, y)), float(np.max(weights))


def _check_choices(records, oracle, width_of, problem, kind):
    """x_t maximizes eq. (2) over the grid given the first t - 1 records."""
    points = problem.points.numpy()
    reference = problem.reference_point.numpy()
    for t, record in enumerate(records):
        X = np.array([r.x for r in records[:t]]).reshape(t, 1)
        Y = np.array([r.y for r in records[:t]]).reshape(t, 2)
        width = width_of(X, Y)
        scalarize, lipschitz = _scalarize(kind, np.array(record.context["weights"]), reference)
        values = []
        for p in points:
            mean, covariance = oracle.posterior(X, Y, p[None])
            values.append(ucb(mean[0], covariance, scalarize, lipschitz, width))
        chosen = int(np.argmin(np.abs(points[:, 0] - record.x[0])))
        assert abs(points[chosen, 0] - record.x[0]) < 1e-12
        assert values[chosen] >= max(values) - 1e-9, (t, values[chosen], max(values))
        assert record.regret >= 0


@pytest.mark.parametrize("kind", ("chebyshev", "linear"))
def test_mt_kb_follows_algorithm_1(kind):
    problem = TinyProblem()
    kernel = make_rbf([0.25])
    policy = mt_kb(kernel, torch.tensor(B), FiniteDomain(problem.points), RKHS, SIGMA, ETA, DELTA)
    records = run_policy(policy, ScalarizedEnvironment(problem, kind), horizon=6, seed=0)
    assert len(records) == 6
    oracle = DenseMultiTaskGP([(numpy_kernel(kernel), B)], ETA)

    def width_of(X, Y):
        return oracle.mt_kb_width(X, Y, RKHS, SIGMA, DELTA)

    _check_choices(records, oracle, width_of, problem, kind)
    X = np.array([r.x for r in records])
    Y = np.array([r.y for r in records])
    last = records[-1].diagnostics
    assert last["width"] == pytest.approx(width_of(X, Y), rel=1e-9)
    assert last["information_gain"] == pytest.approx(oracle.information_gain(X, Y), rel=1e-9)
    # the policy's posterior is the dense posterior of everything it saw
    mean, covariance = oracle.posterior(X, Y, problem.points.numpy())
    posterior = policy.rule.model.posterior(problem.points)
    np.testing.assert_allclose(posterior.mean.numpy(), mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        posterior.distribution.covariance_matrix.numpy(), covariance, rtol=1e-7, atol=1e-9
    )


def test_it_kb_uses_igp_ucb_per_task_with_sqrt_n():
    problem = TinyProblem()
    kernel = make_rbf([0.25])
    variances = np.diag(B)
    policy = it_kb(
        kernel, torch.tensor(variances), FiniteDomain(problem.points), RKHS, SIGMA, ETA, DELTA
    )
    records = run_policy(policy, ScalarizedEnvironment(problem), horizon=5, seed=1)
    k = numpy_kernel(kernel)
    oracle = DenseMultiTaskGP([(k, np.diag(variances))], 1.0 + ETA)

    def width_of(X, Y):
        t = X.shape[0]
        K = k(X, X) if t else np.zeros((0, 0))
        betas = []
        for v in variances:
            gamma = 0.5 * np.linalg.slogdet(np.eye(t) + v * K / (1.0 + ETA))[1] if t else 0.0
            betas.append(RKHS + SIGMA * math.sqrt(2 * gamma + t * ETA + 2 * math.log(1 / DELTA)))
        return math.sqrt(2) * max(betas)

    _check_choices(records, oracle, width_of, problem, "chebyshev")
    X = np.array([r.x for r in records])
    assert records[-1].diagnostics["width"] == pytest.approx(
        width_of(X, np.array([r.y for r in records])), rel=1e-9
    )


@pytest.mark.filterwarnings("ignore::botorch.exceptions.warnings.BadInitialCandidatesWarning")
def test_mt_kb_on_a_box_domain():
    """Reproducible from the run's seed alone, whatever the global RNG state (round 1 has
    a flat acquisition, where BoTorch picks initial conditions at random)."""
    problem = TinyProblem()
    domain = BoxDomain(
        torch.tensor([[0.0], [1.0]], dtype=torch.float64), num_restarts=2, raw_samples=16
    )
    runs = []
    for global_seed in (0, 1):
        torch.manual_seed(global_seed)
        policy = mt_kb(make_rbf([0.25]), torch.tensor(B), domain, RKHS, SIGMA)
        runs.append(run_policy(policy, ScalarizedEnvironment(problem), horizon=2, seed=2))
    first, second = runs
    for a, b in zip(first, second):  # reproducible given the seed
        assert a.x == b.x and a.y == b.y
        assert 0.0 <= a.x[0] <= 1.0 and a.regret >= 0


def test_bad_task_variances():
    with pytest.raises(ValueError, match="task_variances"):
        it_kb(
            make_rbf([0.25]),
            torch.tensor([1.0, 0.0]),
            FiniteDomain(TinyProblem().points),
            RKHS,
            SIGMA,
        )


def _plain(policy):
    """``policy`` with the finite-domain tracking turned off."""
    policy.rule.candidates = None
    return policy


@pytest.mark.parametrize("method", ("MT-KB", "IT-KB", "MOBO"))
def test_tracked_candidates_choose_the_points_of_the_plain_posterior(method):
    """On a finite domain the policies keep the posterior at the domain
    incrementally; the points chosen are those of the plain posterior, the widths equal
    to round-off (a small problem, and 30 rounds of the main job's light sensors)."""
    from botorch_mtucb.experiments.paper000.methods import build_it_kb, build_mt_kb
    from botorch_mtucb.problems import light_sensor_problem

    problem = TinyProblem()
    domain = FiniteDomain(problem.points)

    def build():
        if method == "MT-KB":
            return mt_kb(make_rbf([0.25]), torch.tensor(B), domain, RKHS, SIGMA)
        if method == "IT-KB":
            variances = torch.tensor(np.diag(B))
            return it_kb(make_rbf([0.25]), variances, domain, RKHS, SIGMA)
        return mobo(make_rbf([0.25]), torch.tensor(np.diag(B)), domain, ETA)

    runs = [(build(), _plain(build()), ScalarizedEnvironment(problem), 40)]
    if method != "MOBO":
        sensors = light_sensor_problem()
        builder = build_mt_kb if method == "MT-KB" else build_it_kb
        pair = builder(sensors), _plain(builder(sensors))
        runs.append((*pair, ScalarizedEnvironment(sensors), 30))
    for tracked, plain, environment, horizon in runs:
        first = run_policy(tracked, environment, horizon=horizon, seed=3)
        second = run_policy(plain, environment, horizon=horizon, seed=3)
        assert tracked.rule.model.tracks_candidates and not plain.rule.model.tracks_candidates
        assert [r.x for r in first] == [r.x for r in second]
        assert len({tuple(r.x) for r in first}) > 3  # the runs explore: not a vacuous check
        for a, b in zip(first, second):
            for key, value in a.diagnostics.items():
                assert value == pytest.approx(b.diagnostics[key], rel=1e-10, abs=1e-12)


def test_box_domains_are_not_tracked():
    policy = mt_kb(
        make_rbf([0.25]), torch.tensor(B), BoxDomain(torch.tensor([[0.0], [1.0]])), RKHS, SIGMA
    )
    policy.rule._track()
    assert not policy.rule.model.tracks_candidates
