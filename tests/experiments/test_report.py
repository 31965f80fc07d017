"""The report module: the summary schema (builder and checker), CSV, tables, plots,
thread pinning and option checks."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
import torch

from botorch_mtucb.experiments.report import (
    build_summary,
    check_summary,
    experiment_options,
    final_statistics,
    format_table,
    grid_table,
    method_summary,
    method_table,
    pinned_threads,
    problem_summary,
    save_curves_plot,
    write_curves_csv,
    write_summary,
)
from botorch_mtucb.experiments.runs import MethodResult

ENTRY = {"cumulative_regret_mean": 3.0, "cumulative_regret_std": 0.5}


def _result(name="A"):
    curves = {"cumulative_regret": np.array([[1.0, 2.0, 4.0], [1.0, 3.0, 6.0]])}
    return MethodResult(name, curves, seconds_per_step=[0.1, 0.3])


def test_method_summary_is_the_final_regret_over_repetitions():
    entry = method_summary(_result(), extra=1.0)
    assert entry == {
        "cumulative_regret_mean": 5.0,
        "cumulative_regret_std": 1.0,
        "seconds_per_step": pytest.approx(0.2),
        "extra": 1.0,
    }
    assert final_statistics(_result(), "cumulative_regret") == (5.0, 1.0)


def test_build_summary_is_what_json_reads_back(tmp_path):
    problem = problem_summary(
        {"A": method_summary(_result())},
        tensor=torch.tensor([1.0, 2.0]),
        array=np.arange(2),
        pair=(1, 2),
        number=np.float64(0.5),
    )
    summary = build_summary("demo", {"horizon": 3, "grid": (0.1, 1.0)}, {"p": problem})
    assert list(summary) == ["experiment", "settings", "problems"]
    assert summary["problems"]["p"]["tensor"] == [1.0, 2.0]
    assert summary["problems"]["p"]["pair"] == [1, 2]
    write_summary(summary, tmp_path / "summary.json")
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    with pytest.raises(TypeError, match="JSON"):
        build_summary("demo", {"x": object()}, {"p": problem_summary({})})


@pytest.mark.parametrize(
    "summary, message",
    [
        ([], "exactly the keys"),
        ({"experiment": "x", "settings": {}}, "exactly the keys"),
        ({"experiment": "x", "settings": {}, "problems": {}, "methods": {}}, "exactly the keys"),
        ({"experiment": "", "settings": {}, "problems": {"p": {"methods": {}}}}, "name the"),
        ({"experiment": "x", "settings": [], "problems": {"p": {"methods": {}}}}, "settings"),
        ({"experiment": "x", "settings": {}, "problems": {}}, "non-empty"),
        ({"experiment": "x", "settings": {}, "problems": {"p": {}}}, "has no 'methods'"),
        ({"experiment": "x", "settings": {}, "problems": {"p": {"methods": []}}}, "mapping"),
        (
            {"experiment": "x", "settings": {}, "problems": {"p": {"methods": {"A": {}}}}},
            "cumulative_regret_mean",
        ),
        (
            {
                "experiment": "x",
                "settings": {},
                "problems": {"p": {"methods": {"A": {**ENTRY, "cumulative_regret_std": True}}}},
            },
            "cumulative_regret_std",
        ),
        (
            {
                "experiment": "x",
                "settings": {},
                "problems": {
                    "p": {"methods": {"A": {**ENTRY, "cumulative_regret_mean": math.nan}}}
                },
            },
            "finite",
        ),
        (
            {
                "experiment": "x",
                "settings": {},
                "problems": {"p": {"methods": {"A": {**ENTRY, "cumulative_regret_std": -1.0}}}},
            },
            "negative",
        ),
    ],
)
def test_check_summary_names_what_is_wrong(summary, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        check_summary(summary)
    with pytest.raises(ValueError, match=message):
        write_summary(summary, tmp_path / "summary.json")
    assert not (tmp_path / "summary.json").exists()


def test_check_summary_accepts_the_schema():
    check_summary({"experiment": "x", "settings": {}, "problems": {"p": {"methods": {}}}})
    check_summary(
        {"experiment": "x", "settings": {"T": 1}, "problems": {"p": {"methods": {"A": ENTRY}}}}
    )


def test_curves_csv_holds_mean_and_std_per_round(tmp_path):
    results = {"A": _result("A"), "B": _result("B")}
    write_curves_csv(results, tmp_path / "curves.csv")
    with (tmp_path / "curves.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["method"], r["t"]) for r in rows] == [(m, str(t)) for m in "AB" for t in (1, 2, 3)]
    assert float(rows[2]["cumulative_regret_mean"]) == 5.0
    assert float(rows[2]["cumulative_regret_std"]) == 1.0


def test_tables():
    text = format_table([["MT-KB", "8.2"], ["IT", "10.25"]], ["method", "R"])
    assert text.splitlines() == ["method  R    ", "------  -----", "MT-KB   8.2  ", "IT      10.25"]
    methods = {"A": ENTRY}
    assert method_table(methods, {"mean": lambda e: f"{e['cumulative_regret_mean']:.1f}"}) == (
        format_table([["A", "3.0"]], ["method", "mean"])
    )
    problems = {"p": {"methods": {"A": ENTRY}}, "q": {"methods": {"B": ENTRY}}}

    def cell(problem, method):
        return "x" if method in problem["methods"] else None

    assert grid_table(problems, cell) == format_table(
        [["A", "x", "-"], ["B", "-", "x"]], ["method", "p", "q"]
    )


def test_curves_plot_uses_no_pyplot_state(tmp_path):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    save_curves_plot({"A": _result()}, "cumulative_regret", tmp_path / "a.png", "t", "R")
    assert (tmp_path / "a.png").stat().st_size > 1000
    assert plt.get_fignums() == before


def test_pinned_threads_restores_the_callers_setting():
    original = torch.get_num_threads()
    torch.set_num_threads(2)  # the caller's setting, other than the pinned one
    try:
        with pinned_threads(1) as threads:
            assert threads == torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pinned_threads(0) as threads:  # <= 0: keep the caller's number
            assert threads == 2
        with pytest.raises(RuntimeError), pinned_threads(1):
            raise RuntimeError
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(original)


def test_experiment_options():
    defaults = {"horizon": 200, "repetitions": 10}
    assert experiment_options("x", {}, defaults) == defaults
    assert experiment_options("x", {"horizon": None, "repetitions": 2}, defaults) == {
        "horizon": 200,
        "repetitions": 2,
    }
    with pytest.raises(ValueError, match=r"experiment 'x' takes no option\(s\) \['data'\]"):
        experiment_options("x", {"data": "f.npz"}, defaults)
