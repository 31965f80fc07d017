"""The ``certified-stopping`` benchmark: the baselines' rules against independent
computations (Makarova et al.'s bound in its original minimization form, Ax's own
strategy on the same trials), the Clopper-Pearson interval against SciPy's, a run's
outcome by hand, and a quick run whose table has the columns and valid probabilities."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

from botorch_mtucb.__main__ import main as package_main
from botorch_mtucb.benchmarks.certified_stopping import HEADER, main
from botorch_mtucb.benchmarks.coverage_report import clopper_pearson
from botorch_mtucb.benchmarks.stopping_baselines import (
    ax_improvement_stop,
    makarova_beta,
    ucb_lcb_regret_bound,
)
from botorch_mtucb.benchmarks.stopping_loop import outcome
from botorch_mtucb.benchmarks.stopping_problems import box_maximum, make_instance


# ------------------------------------------------------------- Makarova et al.
def test_makarova_beta_is_gp_ucb_beta_scaled_by_a_fifth():
    # Srinivas et al. 2010, Theorem 1: 2 log(|D| t^2 pi^2 / (6 delta)); times 1/5
    for size, t, delta in [(256, 1, 0.1), (256, 40, 0.1), (2, 7, 0.01)]:
        expected = 0.2 * 2 * (math.log(size) + 2 * math.log(t) + 2 * math.log(math.pi)
                              - math.log(6) - math.log(delta))  # fmt: skip
        assert makarova_beta(size, t, delta) == pytest.approx(expected, rel=1e-13)
    for bad in [(0, 1, 0.1), (5, 0, 0.1), (5, 1, 0.0), (5, 1, 1.0)]:
        with pytest.raises(ValueError):
            makarova_beta(*bad)


def test_ucb_lcb_bound_equals_the_papers_minimization_form_on_minus_f():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 30))
        mean, std = rng.normal(size=n), rng.random(n)
        evaluated = rng.random(n) < 0.4
        evaluated[rng.integers(n)] = True
        beta = float(rng.random() * 3)
        bound, incumbent = ucb_lcb_regret_bound(
            torch.from_numpy(mean), torch.from_numpy(std), torch.from_numpy(evaluated), beta
        )
        # Makarova et al. for g = -f (minimized): mean -mu, same sigma;
        # r_hat = min_{G_t} ucb_g - min_D lcb_g, incumbent argmin_{G_t} ucb_g (loops)
        ucb_g = [-m + math.sqrt(beta) * s for m, s in zip(mean, std)]
        lcb_g = [-m - math.sqrt(beta) * s for m, s in zip(mean, std)]
        evaluated_ucb = [(ucb_g[i], i) for i in range(n) if evaluated[i]]
        best_ucb, best = min(evaluated_ucb)
        assert bound == pytest.approx(best_ucb - min(lcb_g), abs=1e-12)
        assert incumbent == best
    with pytest.raises(ValueError, match="at least one"):
        ucb_lcb_regret_bound(torch.zeros(3), torch.ones(3), torch.zeros(3, dtype=torch.bool), 1.0)


# ------------------------------------------------------------------------ Ax
def test_ax_improvement_rule_matches_axs_strategy_on_the_same_trials():
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig
    from ax.global_stopping.strategies.improvement import ImprovementGlobalStoppingStrategy

    logging.getLogger("ax").setLevel(logging.ERROR)
    rng = np.random.default_rng(1)
    sequences = [
        rng.normal(size=14),
        np.concatenate([np.linspace(0, 1, 6), np.full(8, 1.0)]),  # a plateau
        np.cumsum(rng.random(12)),  # always improving
        np.array([3.0, 1.0, 2.0, 2.0, 2.0, 2.5, 2.9, 3.0, 3.0, 3.0]),
    ]
    decisions = 0
    for values in sequences:
        for minimize in (False, True):
            client = Client(random_seed=0)
            client.configure_experiment(
                parameters=[
                    RangeParameterConfig(name="x", parameter_type="float", bounds=(0.0, 1.0))
                ]
            )
            client.configure_optimization(objective="-y" if minimize else "y")
            strategy = ImprovementGlobalStoppingStrategy(min_trials=5, window_size=5)
            for n, value in enumerate(values, start=1):
                index = client.attach_trial(parameters={"x": float(n) / 100})
                client.complete_trial(index, raw_data={"y": float(value)})
                expected, _ = strategy.should_stop_optimization(client._experiment)
                # the array rule maximizes: a minimized y is a maximized -y
                signed = -values[:n] if minimize else values[:n]
                assert ax_improvement_stop(signed) == expected, (values[:n], minimize)
                decisions += expected
    assert decisions > 0  # both outcomes occur


# ----------------------------------------------------------- Clopper-Pearson
def test_clopper_pearson_matches_scipys_exact_interval():
    for k, n in [(0, 10), (1, 10), (5, 10), (10, 10), (3, 200), (17, 300)]:
        expected = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        low, high = clopper_pearson(k, n)
        assert low == pytest.approx(expected.low, abs=1e-12)
        assert high == pytest.approx(expected.high, abs=1e-12)


# ------------------------------------------------------- outcomes, problems
def test_outcome_by_hand():
    rounds = [(3, 0.9, 0.5, False), (4, 0.6, 0.2, False), (5, 0.05, 0.15, True),
              (6, 0.01, 0.0, True)]  # fmt: skip
    result = outcome(rounds, epsilon=0.1)
    # first stop at 5 evaluations with regret 0.15 > 0.1; first 0.1-optimal at 6;
    # at 5 the bound 0.05 is below the regret 0.15
    assert (result.stop, result.stop_regret, result.oracle, result.miscovered) == (
        5, 0.15, 6, True,
    )  # fmt: skip
    never = outcome([(3, None, 0.5, False)], epsilon=0.1)
    assert (never.stop, never.oracle, never.miscovered) == (None, None, None)


def test_problem_optima_against_brute_force():
    instance = make_instance("rkhs-box-1d", seed=3)
    grid = torch.linspace(0, 1, 100_001, dtype=torch.float64).unsqueeze(-1)
    assert instance.optimum == pytest.approx(float(instance.f(grid).max()), abs=1e-9)
    assert instance.optimum >= float(instance.f(grid).max()) - 1e-12
    for name in ("branin", "hartmann6"):
        instance = make_instance(name, seed=0)
        assert float(instance.f(instance.domain.points).max()) == pytest.approx(
            instance.optimum, abs=1e-4
        )
    assert box_maximum(lambda X: -((X - 0.3) ** 2).sum(-1), 2) == pytest.approx(0.0, abs=1e-12)


# ------------------------------------------------------------- quick run
def test_quick_run_table_and_rates(tmp_path, capsys):
    output = tmp_path / "stopping.json"
    code = main(["--quick", "--output", str(output)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    header = next(line for line in printed.splitlines() if line.startswith("problem"))
    assert all(column in header for column in HEADER)
    summary = json.loads(output.read_text())
    rules = {row["rule"] for row in summary["rows"]}
    assert rules == {"certified", "makarova", "ax-improvement"}
    problems = {row["problem"] for row in summary["rows"]}
    assert {"rkhs-finite-1d", "rkhs-box-1d", "branin", "known-norm (pooled)"} <= problems
    for row in summary["rows"]:
        assert 0 <= row["premature"] <= row["stopped"] <= row["runs"]
        for count, interval in [
            (row["premature"], row["premature_interval"]),
            (row["miscovered"], row["miscovered_interval"]),
        ]:
            if count is None:
                assert row["rule"] == "ax-improvement" and interval is None
                continue
            rate = count / row["runs"]
            assert 0 <= interval[0] <= rate <= interval[1] <= 1
        if row["stop_quartiles"] is not None:
            q1, median, q3 = row["stop_quartiles"]
            assert 1 <= q1 <= median <= q3 <= summary["settings"]["horizon"]
    assert len(summary["runs"]) == 12
    assert package_main(["benchmark", "--list"]) == 0
    assert "certified-stopping" in capsys.readouterr().out
