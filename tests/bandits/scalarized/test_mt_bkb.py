"""MT-BKB (Algorithm 2 of paper 000) and IT-BKB on a tiny finite problem: with every
inclusion probability 1 the sketch is the exact posterior, so every choice and width is
re-derived from the recorded data with the dense NumPy formulas; with a genuine
sketch, the recorded widths and dictionaries follow the model's and runs resume."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from oracles import DenseMultiTaskGP, make_rbf, numpy_kernel
from test_mt_kb import _check_choices
from tiny_problem import TinyProblem

from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
from botorch_mtucb.bandits.scalarized import it_bkb, mt_bkb
from botorch_mtucb.confidence import mt_bkb_accuracy
from botorch_mtucb.utils import FiniteDomain

B = np.array([[1.0, 0.6], [0.6, 1.5]])
RKHS, SIGMA, DELTA, ETA, EPS = 1.0, 0.1, 0.1, 0.1, 0.5
EVERYTHING = 1e12


def _theorem_3_width(oracle, X, Y):
    rho = (1 + EPS) / (1 - EPS)
    log_dets = oracle.sequential_log_det_sum(X, Y)  # Gamma~_{s-1} = Gamma_{s-1} when p = 1
    return RKHS * (1 + 1 / math.sqrt(1 - EPS)) + SIGMA / math.sqrt(ETA) * math.sqrt(
        2 * math.log(2 / DELTA) + rho * log_dets
    )


@pytest.mark.parametrize("kind", ("chebyshev", "linear"))
def test_mt_bkb_follows_algorithm_2(kind):
    problem = TinyProblem()
    kernel = make_rbf([0.25])
    policy = mt_bkb(
        kernel,
        torch.tensor(B),
        FiniteDomain(problem.points),
        RKHS,
        SIGMA,
        ETA,
        DELTA,
        EPS,
        accuracy=EVERYTHING,
    )
    records = run_policy(policy, ScalarizedEnvironment(problem, kind), horizon=6, seed=0)
    oracle = DenseMultiTaskGP([(numpy_kernel(kernel), B)], ETA)
    _check_choices(records, oracle, lambda X, Y: _theorem_3_width(oracle, X, Y), problem, kind)
    X = np.array([r.x for r in records])
    Y = np.array([r.y for r in records])
    last = records[-1].diagnostics
    assert last["width"] == pytest.approx(_theorem_3_width(oracle, X, Y), rel=1e-9)
    assert last["dictionary_size"] == 6


def test_mt_bkb_with_a_genuine_sketch_is_reproducible_and_resumes(tmp_path):
    problem = TinyProblem(num_points=30)
    kernel = make_rbf([0.15])

    def make():
        return mt_bkb(
            kernel, torch.tensor(B), FiniteDomain(problem.points), RKHS, SIGMA, accuracy=1.0
        )

    environment = ScalarizedEnvironment(problem)
    first = run_policy(make(), environment, horizon=12, seed=3)
    sizes = [r.diagnostics["dictionary_size"] for r in first]
    assert all(1 <= m <= t + 1 for t, m in enumerate(sizes)) and sizes[-1] < 12
    # the width recorded is Theorem 3's with the model's own sum of log-dets
    rho = (1 + EPS) / (1 - EPS)
    log_dets = first[-1].diagnostics["log_det_sum"]
    expected = RKHS * (1 + 1 / math.sqrt(1 - EPS)) + SIGMA / math.sqrt(ETA) * math.sqrt(
        2 * math.log(2 / DELTA) + rho * log_dets
    )
    assert first[-1].diagnostics["width"] == pytest.approx(expected, rel=1e-12)
    # same seed: same run; an interrupted run resumes to the same rounds
    again = run_policy(make(), environment, horizon=12, seed=3)
    assert [r.x for r in again] == [r.x for r in first]
    path = tmp_path / "run.jsonl"
    run_policy(make(), environment, horizon=5, seed=3, path=path)
    resumed = run_policy(make(), environment, horizon=12, seed=3, path=path)
    assert [r.x for r in resumed] == [r.x for r in first]
    assert [r.diagnostics for r in resumed[5:]] == [r.diagnostics for r in first[5:]]


def test_default_accuracy_is_theorem_3s_q():
    problem = TinyProblem()
    policy = mt_bkb(
        make_rbf([0.25]), torch.tensor(B), FiniteDomain(problem.points), RKHS, SIGMA, horizon=50
    )
    assert policy.settings()["accuracy"] == pytest.approx(mt_bkb_accuracy(EPS, DELTA, 50))
    assert policy.rule.model.accuracy == pytest.approx(policy.settings()["accuracy"])


def test_it_bkb_uses_bkb_per_task_with_sqrt_n():
    problem = TinyProblem()
    kernel = make_rbf([0.25])
    variances = np.diag(B)
    policy = it_bkb(
        kernel,
        torch.tensor(variances),
        FiniteDomain(problem.points),
        RKHS,
        SIGMA,
        ETA,
        DELTA,
        EPS,
        accuracy=EVERYTHING,
    )
    records = run_policy(policy, ScalarizedEnvironment(problem), horizon=5, seed=1)
    oracle = DenseMultiTaskGP([(numpy_kernel(kernel), np.diag(variances))], ETA)
    alpha = (1 + EPS) / (1 - EPS)

    def width_of(X, Y):
        t = X.shape[0]
        widths = []
        for i, v in enumerate(variances):
            # sum_s sigma~_t^2(x_s) / lambda with the *current* posterior of task i
            total = 0.0
            for s in range(t):
                _, cov = oracle.posterior(X, Y, X[s : s + 1])
                total += cov[i, i] / ETA
            log_factor = max(math.log(v * t), 0.0) if t else 0.0
            beta = 2 * SIGMA * math.sqrt(alpha * log_factor * total + math.log(1 / DELTA))
            beta += (1 + 1 / math.sqrt(1 - EPS)) * math.sqrt(ETA) * RKHS
            widths.append(beta / math.sqrt(ETA))
        return math.sqrt(2) * max(widths)

    _check_choices(records, oracle, width_of, problem, "chebyshev")
    X = np.array([r.x for r in records])
    Y = np.array([r.y for r in records])
    assert records[-1].diagnostics["width"] == pytest.approx(width_of(X, Y), rel=1e-9)


def test_it_bkb_sketch_uses_q_bar_over_lambda():
    problem = TinyProblem()
    policy = it_bkb(
        make_rbf([0.25]),
        torch.tensor([1.0, 2.0]),
        FiniteDomain(problem.points),
        RKHS,
        SIGMA,
        regularization=0.2,
        accuracy=3.0,
    )
    assert policy.rule.model.accuracy == pytest.approx(3.0 / 0.2)
    assert policy.rule.width_function.kernel_bounds.tolist() == pytest.approx([1.0, 2.0])
    assert policy.settings() == {"accuracy": 3.0}


def test_bad_arguments():
    problem = TinyProblem()
    domain = FiniteDomain(problem.points)
    kernel = make_rbf([0.25])
    with pytest.raises(ValueError, match="eps"):
        mt_bkb(kernel, torch.tensor(B), domain, 1.0, 0.1, eps=1.0)
    with pytest.raises(ValueError, match="accuracy"):
        mt_bkb(kernel, torch.tensor(B), domain, 1.0, 0.1, accuracy=0.5)
    with pytest.raises(ValueError, match="horizon"):
        mt_bkb(kernel, torch.tensor(B), domain, 1.0, 0.1)
    with pytest.raises(ValueError, match="task_variances"):
        it_bkb(kernel, torch.tensor([1.0, -1.0]), domain, 1.0, 0.1, horizon=10)
    with pytest.raises(ValueError, match="eps"):
        it_bkb(kernel, torch.tensor([1.0, 1.0]), domain, 1.0, 0.1, eps=0.0, horizon=10)


@pytest.mark.parametrize("accuracy", (True, "5"))
@pytest.mark.parametrize("policy", (mt_bkb, it_bkb))
def test_accuracy_must_be_a_number(policy, accuracy):
    # accuracy=True used to be read as q = 1.0 (and "5" as 5.0).
    problem = TinyProblem()
    covariance = torch.tensor(B) if policy is mt_bkb else torch.tensor(np.diag(B))
    with pytest.raises(TypeError, match=rf"accuracy must be a real number .*got {accuracy!r}"):
        policy(
            make_rbf([0.25]), covariance, FiniteDomain(problem.points), 1.0, 0.1, accuracy=accuracy
        )
