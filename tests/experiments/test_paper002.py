"""Paper 002's experiments end to end on a tiny horizon, and their parameter mapping."""

from __future__ import annotations

import csv
import json
import math

import pytest

from botorch_mtucb.experiments.paper002 import configs, methods
from botorch_mtucb.experiments.registry import load_experiments, run_experiment
from botorch_mtucb.experiments.summary import check_summary


def test_registered_experiments():
    experiments = load_experiments()
    for name in ("002-table1", "002-d2", "002-d4", "002-loose", "002-time"):
        assert name in experiments


def test_parameter_mapping_of_section_7():
    config = configs.BanditConfig("matern32", 0.2, dim=3)
    horizon = 1000
    c = horizon ** (-3 / (2 * 3 + 2 * 1.5))
    amm = methods.make_policy("AMM-UCB", config, horizon).rule
    assert amm.bound.mixture_scale == pytest.approx(c)
    assert amm.alphas.tolist() == pytest.approx([0.01 / c])
    dmm = methods.make_policy("DMM-UCB", config, horizon).rule
    assert dmm.alphas.tolist() == pytest.approx([m * 0.01 / c for m in (0.1, 0.3, 1, 3, 10)])
    ay = methods.make_policy("AY-GP-UCB", config, horizon).rule
    ay_lambda = 0.01 * horizon ** (3 / 9)  # sigma^2 T^{d/(2d+2nu)}
    assert ay.width_function.regularization == pytest.approx(ay_lambda)
    assert float(ay.model.regularization) == pytest.approx(ay_lambda)
    igp = methods.make_policy("IGP-UCB", config, horizon).rule
    assert igp.width_function.eta == pytest.approx(2 / horizon)
    assert float(igp.model.regularization) == pytest.approx(1.002)
    rbf = methods.make_policy("CMM-UCB", configs.BanditConfig("rbf", 0.5), horizon).rule
    assert rbf.bound.mixture_scale == 1.0 and rbf.bound.rkhs_norm_bound == 10.0
    assert rbf.bound.noise_std == 0.1 and rbf.bound.delta == 0.01
    loose = {(c.assumed_noise, c.assumed_norm) for c in configs.LOOSE_CONFIGS}
    assert loose == {(0.1, 10.0), (0.1, 20.0), (0.2, 10.0), (0.2, 20.0)}
    assert [(c.family, c.lengthscale) for c in configs.table_configs(3)] == [
        ("rbf", 0.5), ("rbf", 0.2), ("matern52", 0.5), ("matern52", 0.2),
        ("matern32", 0.5), ("matern32", 0.2),
    ]  # fmt: skip


def test_table1_end_to_end_and_resume(tmp_path, capsys):
    options = dict(horizon=12, repetitions=2, config_indices=[2])
    summary = run_experiment("002-table1", tmp_path, quick=True, progress=False, **options)
    printed = capsys.readouterr().out
    check_summary(summary)
    (label,) = summary["problems"]
    assert label == "Matern 5/2 l=0.5"
    entries = summary["problems"][label]["methods"]
    assert list(entries) == ["CMM-UCB", "DMM-UCB", "AMM-UCB", "AY-GP-UCB", "IGP-UCB", "Random"]
    for entry in entries.values():
        assert entry["cumulative_regret_mean"] >= 0 and math.isfinite(
            entry["cumulative_regret_std"]
        )
    assert summary["problems"][label]["paper_cumulative_regret"]["DMM-UCB"] == [129.5, 45.6]
    assert summary["settings"]["horizon"] == 12 and summary["settings"]["repetitions"] == 2
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    assert (tmp_path / "cumulative_regret.png").stat().st_size > 0
    assert (tmp_path / "seconds_per_step.png").stat().st_size > 0
    with (tmp_path / "matern52-l0.5-d3-T12" / "curves.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6 * 12
    assert "Paper 002, Table 1" in printed and "129.5 +- 45.6" in printed  # DMM, Matern 5/2
    # rerunning reads the finished runs back: same numbers
    again = run_experiment("002-table1", tmp_path, quick=True, progress=False, **options)
    for label, entry in again["problems"].items():
        for method, numbers in entry["methods"].items():
            old = summary["problems"][label]["methods"][method]
            assert numbers["cumulative_regret_mean"] == old["cumulative_regret_mean"]
            assert numbers["cumulative_regret_std"] == old["cumulative_regret_std"]
    # another horizon (other c and eta) gets its own runs instead of resuming these
    run_experiment("002-table1", tmp_path, quick=True, progress=False, **{**options, "horizon": 14})
    assert (tmp_path / "matern52-l0.5-d3-T14" / "runs" / "CMM-UCB" / "rep0.jsonl").exists()


def test_time_and_loose_experiments_run(tmp_path):
    summary = run_experiment(
        "002-time", tmp_path / "time", quick=True, progress=False, horizon=5, repetitions=1,
        methods=["DMM-UCB", "AMM-UCB"],
    )  # fmt: skip
    check_summary(summary)
    entry = next(iter(summary["problems"].values()))["methods"]
    assert set(entry) == {"DMM-UCB", "AMM-UCB"} and entry["DMM-UCB"]["seconds_per_step"] > 0
    loose = run_experiment(
        "002-loose", tmp_path / "loose", quick=True, progress=False, horizon=4, repetitions=1,
        methods=["AMM-UCB"], config_indices=[3],
    )  # fmt: skip
    check_summary(loose)
    (label,) = loose["problems"]
    assert loose["problems"][label]["assumed_noise"] == 0.2
    assert loose["problems"][label]["assumed_norm"] == 20.0


def test_bad_options(tmp_path):
    with pytest.raises(ValueError, match="takes no option"):
        run_experiment("002-d2", tmp_path, quick=True, progress=False, data="x.npz")
    with pytest.raises(ValueError, match="unknown method"):
        run_experiment("002-d4", tmp_path, quick=True, progress=False, methods=["UCB"], horizon=2)
