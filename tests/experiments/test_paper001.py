"""Paper 001's experiments end to end with tiny sizes (internal options, not --quick)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from botorch_mtucb.experiments.paper001.methods import ACTIVE_METHODS, CMM_METHODS, ONLINE_METHODS
from botorch_mtucb.experiments.registry import run_experiment
from botorch_mtucb.experiments.summary import check_summary
from botorch_mtucb.problems.mhc import default_mhc_path

TINY = {"horizon": 4, "repetitions": 1, "b_grid": (0.1, 1.0)}


def _check_cmm(problem, methods, active):
    """The MT-CMM rows: the run at its best b of the grid and at b = 0, after the others."""
    name = CMM_METHODS[active]
    assert set(problem["cmm_b_sweep"]) == {"0", "0.1", "1"}
    best = problem["cmm_b"]
    assert best in (0.1, 1.0)
    assert problem["cmm_b_sweep"][f"{best:g}"] == min(
        problem["cmm_b_sweep"][key] for key in ("0.1", "1")
    )
    assert list(problem["methods"]) == [*methods, f"{name} b={best:g}", f"{name} b=0"]
    for b in (best, 0.0):
        entry = problem["methods"][f"{name} b={b:g}"]
        assert entry["cumulative_regret_mean"] == pytest.approx(problem["cmm_b_sweep"][f"{b:g}"])


def _three_allele_file(tmp_path):
    """Alleles 2, 3, 4 of the packaged data (a different number of tasks), subsampled."""
    raw = np.load(default_mhc_path())
    keep = np.isin(raw["task"], [2, 3, 4])
    rows = np.flatnonzero(keep)[::7]
    path = tmp_path / "three.npz"
    np.savez(
        path,
        features=raw["features"][rows],
        task=raw["task"][rows] - 2,
        affinity=raw["affinity"][rows],
        alleles=raw["alleles"][2:],
    )
    return path


@pytest.mark.parametrize("kind, methods", [("online", ONLINE_METHODS), ("active", ACTIVE_METHODS)])
@pytest.mark.parametrize("use_data", [False, True])
def test_mhc_experiments(tmp_path, kind, methods, use_data):
    options = dict(TINY)
    if use_data:
        options["data"] = str(_three_allele_file(tmp_path))
    summary = run_experiment(f"001-mhc-{kind}", tmp_path / "out", progress=False, **options)
    check_summary(summary)
    (problem,) = summary["problems"].values()
    _check_cmm(problem, methods, kind == "active")
    assert problem["num_tasks"] == (3 if use_data else 5)
    assert problem["b"] in (0.1, 1.0) and set(problem["b_sweep"]) == {"0.1", "1"}
    assert (
        problem["methods"]["MT-UCB" if kind == "online" else "MT-AL"]["cumulative_regret_mean"] >= 0
    )
    stored = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert stored == summary
    assert (tmp_path / "out" / "curves.csv").exists()
    assert (tmp_path / "out" / "cumulative_regret.png").exists()
    if kind == "online":  # MT-UCB's result is the b sweep's run at the chosen b
        chosen = problem["b_sweep"][f"{problem['b']:g}"]
        assert chosen == pytest.approx(problem["methods"]["MT-UCB"]["cumulative_regret_mean"])
        assert chosen == min(problem["b_sweep"].values())


def test_synthetic_experiments(tmp_path):
    for kind, methods in (("online", ONLINE_METHODS), ("active", ACTIVE_METHODS)):
        summary = run_experiment(
            f"001-synthetic-{kind}",
            tmp_path / kind,
            progress=False,
            configurations=[(3, 0.2)],
            **TINY,
        )
        check_summary(summary)
        (configuration,) = summary["problems"].values()
        assert configuration["num_tasks"] == 3 and configuration["horizon"] == 4
        _check_cmm(configuration, methods, kind == "active")
    without = run_experiment(
        "001-synthetic-online", tmp_path / "plain", progress=False, configurations=[(3, 0.2)],
        cmm="off", **TINY,
    )  # fmt: skip
    (configuration,) = without["problems"].values()
    assert list(configuration["methods"]) == list(ONLINE_METHODS)
    assert "cmm_b" not in configuration
    chosen = run_experiment(
        "001-synthetic-active", tmp_path / "chosen", progress=False, configurations=[(3, 0.2)],
        cmm="chosen", **TINY,
    )  # fmt: skip
    (configuration,) = chosen["problems"].values()
    b = configuration["b"]  # MT-CMM runs at MT-UCB's chosen b and at b = 0 only
    assert configuration["cmm_b"] == b and set(configuration["cmm_b_sweep"]) == {"0", f"{b:g}"}
    assert list(configuration["methods"])[-2:] == [f"MT-CMM-AL b={b:g}", "MT-CMM-AL b=0"]


def test_widths_experiment(tmp_path):
    summary = run_experiment("001-widths", tmp_path, progress=False)
    check_summary(summary)
    assert list(summary["problems"]) == ["noise_free", "unit_noise"]
    assert all(p["new_below_naive_everywhere"] for p in summary["problems"].values())
    # Figure 2: the new width is sqrt(N) smaller than the naive one at both ends.
    free = summary["problems"]["noise_free"]
    assert free["ratio_naive_over_new_at_b_min"] == pytest.approx(math.sqrt(20), rel=0.02)
    assert free["ratio_naive_over_new_at_b_max"] == pytest.approx(math.sqrt(20), rel=0.05)


def test_bad_options(tmp_path):
    with pytest.raises(ValueError, match="takes no option"):
        run_experiment("001-mhc-online", tmp_path, progress=False, horizon=2, bogus=1)
    with pytest.raises(ValueError, match="cmm"):
        run_experiment("001-mhc-online", tmp_path / "c", progress=False, cmm="all", **TINY)
    bad = tmp_path / "bad.npz"
    np.savez(bad, features=np.zeros((2, 3)), task=np.array([0, 0]), alleles=np.array(["a"]))
    with pytest.raises(ValueError, match="lacks the key"):
        run_experiment("001-mhc-active", tmp_path / "o", progress=False, data=str(bad), **TINY)
