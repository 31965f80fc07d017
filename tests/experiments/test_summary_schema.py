"""Every registered experiment writes ``summary.json`` in the one schema
(``botorch_mtucb.experiments.summary``), run at the smallest sizes its options allow."""

from __future__ import annotations

import json

import pytest

from botorch_mtucb.experiments.registry import load_experiments, run_experiment
from botorch_mtucb.experiments.summary import check_summary

SCALARIZED = {"horizon": 2, "repetitions": 1}
TASK_INDEXED = {"horizon": 2, "repetitions": 1, "b_grid": (0.1,)}
KERNEL_UCB = {"horizon": 2, "repetitions": 1, "methods": ["AMM-UCB", "Random"]}
# Experiment -> the options that make it tiny (every registered experiment is listed).
TINY_OPTIONS = {
    "sensor-main": SCALARIZED,
    "000-rkhs-2": SCALARIZED,
    "000-rkhs-20": SCALARIZED,
    "000-sine": SCALARIZED,
    "000-branin": SCALARIZED,
    "000-sensor": SCALARIZED,
    "000-similarity": SCALARIZED,
    "000-linear": SCALARIZED,
    "000-bayes-regret": SCALARIZED,
    "001-widths": {"num_tasks": 4},
    "001-synthetic-online": {**TASK_INDEXED, "configurations": [(3, 0.2)]},
    "001-synthetic-active": {**TASK_INDEXED, "configurations": [(3, 0.2)]},
    "001-mhc-online": TASK_INDEXED,
    "001-mhc-active": TASK_INDEXED,
    "002-table1": {**KERNEL_UCB, "config_indices": [0, 5]},
    "002-d2": {**KERNEL_UCB, "config_indices": [1]},
    "002-d4": {**KERNEL_UCB, "config_indices": [2]},
    "002-loose": {**KERNEL_UCB, "config_indices": [3]},
    "002-time": {"horizon": 2, "repetitions": 1, "methods": ["DMM-UCB"]},
}


def test_every_experiment_is_checked():
    assert set(TINY_OPTIONS) == set(load_experiments())


@pytest.mark.parametrize("name", sorted(TINY_OPTIONS))
def test_summary_follows_the_one_schema(tmp_path, name, capsys):
    summary = run_experiment(name, tmp_path, quick=True, progress=False, **TINY_OPTIONS[name])
    stored = json.loads((tmp_path / "summary.json").read_text())
    check_summary(stored)
    assert stored == summary and stored["experiment"] == name
    if name != "001-widths":  # the one experiment that runs no bandit
        for problem in stored["problems"].values():
            assert problem["methods"], name
            for entry in problem["methods"].values():
                assert entry["seconds_per_step"] > 0
