"""Printed tables and CSV files of an experiment's results."""

from __future__ import annotations

import csv

import numpy as np

from botorch_mtucb.experiments.runs import MethodResult
from botorch_mtucb.experiments.tables import (
    combine_curves_csv,
    format_table,
    grid_table,
    method_table,
    write_curves_csv,
)

ENTRY = {"cumulative_regret_mean": 3.0, "cumulative_regret_std": 0.5}


def _result(name="A"):
    curves = {"cumulative_regret": np.array([[1.0, 2.0, 4.0], [1.0, 3.0, 6.0]])}
    return MethodResult(name, curves, seconds_per_step=[0.1, 0.3])


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


def test_combine_curves_csv_labels_each_part(tmp_path):
    parts = {}
    for label, offset in (("rkhs-2", 0.0), ("sine", 10.0)):
        result = MethodResult("A", {"cumulative_regret": np.array([[1.0, 2.0]]) + offset})
        parts[label] = tmp_path / f"{label}.csv"
        write_curves_csv({"A": result}, parts[label])
    combine_curves_csv(parts, tmp_path / "curves.csv", column="panel")
    with (tmp_path / "curves.csv").open() as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["panel", "method", "t", "cumulative_regret_mean", "cumulative_regret_std"]
    assert rows[1:] == [
        ["rkhs-2", "A", "1", "1", "0"],
        ["rkhs-2", "A", "2", "2", "0"],
        ["sine", "A", "1", "11", "0"],
        ["sine", "A", "2", "12", "0"],
    ]
