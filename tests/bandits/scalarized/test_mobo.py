"""MOBO (Paria et al. 2019, UCB with random scalarizations) on a tiny finite problem:
each choice maximizes s_lambda(mu + w_t sigma) of independent dense GPs, with the GP-UCB
radius of Srinivas et al. 2010 (Theorem 1) or the one of Paria et al.'s code."""

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
)
from tiny_problem import TinyProblem

from botorch_mtucb.acquisition import ScalarizedObjectiveUCB
from botorch_mtucb.bandits import DragonflyRadius, ScalarizedEnvironment, run_policy
from botorch_mtucb.bandits.scalarized import mobo
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.scalarization import LinearScalarization
from botorch_mtucb.utils import BoxDomain, FiniteDomain

VARIANCES = np.array([1.0, 1.5])
ETA, DELTA = 0.1, 0.1


def _srinivas(t, size):
    return math.sqrt(2 * math.log(size * t**2 * math.pi**2 / (6 * DELTA)))


@pytest.mark.parametrize("kind", ("chebyshev", "linear"))
@pytest.mark.parametrize("radius", ("srinivas", "dragonfly"))
def test_mobo_maximizes_the_scalarized_objective_ucbs(kind, radius):
    problem = TinyProblem()
    kernel = make_rbf([0.25])
    policy = mobo(
        kernel,
        torch.tensor(VARIANCES),
        FiniteDomain(problem.points),
        ETA,
        DELTA,
        radius=None if radius == "srinivas" else DragonflyRadius(1),
    )
    records = run_policy(policy, ScalarizedEnvironment(problem, kind), horizon=6, seed=2)
    oracle = DenseMultiTaskGP([(numpy_kernel(kernel), np.diag(VARIANCES))], ETA)
    points, reference = problem.points.numpy(), problem.reference_point.numpy()
    for t, record in enumerate(records):
        X = np.array([r.x for r in records[:t]]).reshape(t, 1)
        Y = np.array([r.y for r in records[:t]]).reshape(t, 2)
        width = (
            _srinivas(t + 1, 12) if radius == "srinivas" else math.sqrt(0.2 * math.log(2 * t + 3))
        )
        weights = np.array(record.context["weights"])
        values = []
        for p in points:
            mean, covariance = oracle.posterior(X, Y, p[None])
            upper = mean[0] + width * np.sqrt(np.diag(covariance))
            if kind == "linear":
                values.append(linear_scalarization(weights, upper))
            else:
                values.append(chebyshev_scalarization(weights, reference, upper))
        chosen = int(np.argmin(np.abs(points[:, 0] - record.x[0])))
        assert values[chosen] >= max(values) - 1e-9, (t, values[chosen], max(values))
        assert record.diagnostics["width"] == pytest.approx(
            _srinivas(t + 2, 12) if radius == "srinivas" else math.sqrt(0.2 * math.log(2 * t + 5))
        )


def test_acquisition_values_and_batches():
    problem = TinyProblem()
    kernel = make_rbf([0.25])
    X = problem.points[:4]
    Y = problem.objective(X)
    model = VectorValuedGP(X, Y, kernel, torch.diag(torch.tensor(VARIANCES)), ETA)
    weights = torch.tensor([0.3, 0.7], dtype=torch.float64)
    acquisition = ScalarizedObjectiveUCB(model, LinearScalarization(weights), width=1.7)
    candidates = problem.points.reshape(3, 4, 1, 1)  # batch 3 x 4, q = 1
    values = acquisition(candidates)
    assert values.shape == (3, 4)
    oracle = DenseMultiTaskGP([(numpy_kernel(kernel), np.diag(VARIANCES))], ETA)
    mean, covariance = oracle.posterior(X.numpy(), Y.numpy(), problem.points.numpy())
    upper = mean + 1.7 * np.sqrt(np.diag(covariance)).reshape(12, 2)
    np.testing.assert_allclose(values.reshape(-1).numpy(), upper @ weights.numpy(), rtol=1e-9)


def test_bad_arguments():
    problem = TinyProblem()
    kernel = make_rbf([0.25])
    finite = FiniteDomain(problem.points)
    box = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    # the radius is a width function of the model, not a name
    with pytest.raises(TypeError, match="radius must be a function"):
        mobo(kernel, torch.tensor(VARIANCES), finite, radius="dragonfly")
    with pytest.raises(ValueError, match="domain_size"):
        mobo(kernel, torch.tensor(VARIANCES), box)
    assert mobo(kernel, torch.tensor(VARIANCES), box, domain_size=50).rule.width > 0
    assert mobo(kernel, torch.tensor(VARIANCES), box, radius=DragonflyRadius(1)).rule.width > 0
    with pytest.raises(TypeError, match="FiniteDomain or a BoxDomain"):
        mobo(kernel, torch.tensor(VARIANCES), "box", domain_size=50)
    with pytest.raises(ValueError, match="task_variances"):
        mobo(kernel, torch.tensor([1.0, 0.0]), finite)
    model = VectorValuedGP(
        problem.points[:2], problem.objective(problem.points[:2]), kernel, torch.eye(2), ETA
    )
    with pytest.raises(ValueError, match="width"):
        ScalarizedObjectiveUCB(model, LinearScalarization(torch.ones(2)), width=-1.0)
    with pytest.raises(ValueError, match="weights"):
        ScalarizedObjectiveUCB(model, LinearScalarization(torch.ones(3)), width=1.0)
    with pytest.raises(TypeError, match="Scalarization"):
        ScalarizedObjectiveUCB(model, lambda y: y.sum(-1), width=1.0)
