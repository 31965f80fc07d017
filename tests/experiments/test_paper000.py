"""Paper 000's experiments end to end with tiny horizons (``horizon`` / ``repetitions``
options, not ``--quick``): summary keys and method names, curves and plots."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from botorch_mtucb.experiments.paper000.experiments import SIMILARITY_OMEGAS
from botorch_mtucb.experiments.paper000.methods import METHOD_BUILDERS
from botorch_mtucb.experiments.registry import load_experiments, run_experiment
from botorch_mtucb.experiments.report import check_summary
from botorch_mtucb.problems import similarity_problem

TINY = {"horizon": 3, "repetitions": 1}
FIVE = ["MT-KB", "MT-BKB", "IT-KB", "IT-BKB", "MOBO"]
ENTRY_KEYS = {
    "cumulative_regret_mean",
    "cumulative_regret_std",
    "bayes_regret_mean",
    "bayes_regret_std",
    "seconds_per_step",
}
SKETCHED = {"MT-BKB", "IT-BKB"}


LABELS = {
    "000-rkhs-2": "rkhs-2",
    "000-rkhs-20": "rkhs-20",
    "000-sine": "sine",
    "000-branin": "branin",
    "000-sensor": "sensor",
}


def _check_methods(summary, label, names):
    """The one schema, then problem ``label``'s methods: ``names``, with their keys."""
    check_summary(summary)
    methods = summary["problems"][label]["methods"]
    assert list(methods) == names
    for name, entry in methods.items():
        assert ENTRY_KEYS <= set(entry), name
        assert entry["cumulative_regret_mean"] >= 0 and entry["bayes_regret_mean"] >= 0
        if name in SKETCHED:
            assert 1 <= entry["final_dictionary_size"] <= summary["settings"]["horizon"]
        else:
            assert "final_dictionary_size" not in entry


def _check_curves(path, names, rows_per_method):
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["method"] for row in rows] == [n for n in names for _ in range(rows_per_method)]
    assert {"cumulative_regret_mean", "cumulative_regret_std", "bayes_regret_mean"} <= set(rows[0])


def test_method_names_and_registry():
    assert list(METHOD_BUILDERS) == FIVE
    names = set(load_experiments())
    expected = {"000-rkhs-2", "000-rkhs-20", "000-sine", "000-branin", "000-sensor"}
    assert expected | {"000-similarity", "000-linear", "000-bayes-regret", "sensor-main"} <= names


@pytest.mark.parametrize(
    "name", ["000-rkhs-2", "000-rkhs-20", "000-sine", "000-branin", "000-sensor"]
)
def test_figure_1_experiments(tmp_path, name):
    summary = run_experiment(name, tmp_path, progress=False, **TINY)
    assert summary["experiment"] == name and summary["settings"]["horizon"] == 3
    assert summary["settings"]["scalarization"] == "chebyshev"
    assert list(summary["problems"]) == [LABELS[name]]
    _check_methods(summary, LABELS[name], FIVE)
    stored = json.loads((tmp_path / "summary.json").read_text())
    assert stored == summary
    _check_curves(tmp_path / "curves.csv", FIVE, 3)
    for png in ("average_cumulative_regret.png", "bayes_regret.png"):
        assert (tmp_path / png).stat().st_size > 1000


def test_main_job_runs_mt_kb_and_it_kb_only(tmp_path):
    summary = run_experiment("sensor-main", tmp_path, progress=False, **TINY)
    _check_methods(summary, "sensor", ["MT-KB", "IT-KB"])


@pytest.mark.parametrize(
    "name, scalarization", [("000-linear", "linear"), ("000-bayes-regret", "chebyshev")]
)
def test_two_panel_experiments(tmp_path, name, scalarization):
    summary = run_experiment(name, tmp_path, progress=False, **TINY)
    assert summary["experiment"] == name
    assert summary["settings"]["scalarization"] == scalarization
    assert list(summary["problems"]) == ["rkhs-2", "sine"]
    for panel in summary["problems"]:
        _check_methods(summary, panel, FIVE)
        # each panel also has a summary of its own, in the same schema
        panel_summary = json.loads((tmp_path / panel / "summary.json").read_text())
        _check_methods(panel_summary, panel, FIVE)
        assert panel_summary["settings"]["scalarization"] == scalarization
        assert panel_summary["problems"][panel] == summary["problems"][panel]
    stored = json.loads((tmp_path / "summary.json").read_text())
    assert list(stored["problems"]) == ["rkhs-2", "sine"]
    with (tmp_path / "curves.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["panel"] for row in rows] == ["rkhs-2"] * 15 + ["sine"] * 15
    figure = tmp_path / f"{name.removeprefix('000-')}.png"
    assert figure.stat().st_size > 1000


def test_similarity_experiment(tmp_path):
    summary = run_experiment("000-similarity", tmp_path, progress=False, **TINY)
    names = [f"MT-KB (omega={w:g})" for w in SIMILARITY_OMEGAS]
    _check_methods(summary, "similarity", names)
    assert summary["problems"]["similarity"]["omegas"] == list(SIMILARITY_OMEGAS)
    _check_curves(tmp_path / "curves.csv", names, 3)
    for png in ("average_cumulative_regret.png", "regret_against_omega.png"):
        assert (tmp_path / png).stat().st_size > 1000


def test_similarity_problem_is_an_rkhs_function_of_its_kernel():
    """omega = 0: identical tasks; every omega: f = sum_i k(., x_i) B_omega c_i with the
    same centres and coefficients (recovered by least squares on the kernel's span)."""
    same = similarity_problem(0.0, seed=1)
    values = same.objective(same.regret_points).numpy()
    np.testing.assert_allclose(values, values[:, :1].repeat(values.shape[1], 1), atol=1e-12)
    a, b = similarity_problem(0.3, seed=1), similarity_problem(0.9, seed=1)
    Fa = a.objective(a.regret_points).numpy()
    Fb = b.objective(b.regret_points).numpy()
    Ba, Bb = a.task_covariance.numpy(), b.task_covariance.numpy()
    # F_omega = K C B_omega: F_a B_a^{-1} = F_b B_b^{-1}
    np.testing.assert_allclose(Fa @ np.linalg.inv(Ba), Fb @ np.linalg.inv(Bb), atol=1e-9)
    assert a.rkhs_norm_bound == pytest.approx(np.linalg.norm(Fa, axis=1).max(), rel=1e-12)
    with pytest.raises(ValueError, match="omega"):
        similarity_problem(1.5)


def test_unknown_option(tmp_path):
    with pytest.raises(ValueError, match="takes no option"):
        run_experiment("000-linear", tmp_path, progress=False, data="x.npz")
