"""``python -m botorch_mtucb benchmark``: the list, each benchmark's ``--quick`` run, and
the message when cvxpy (a test-only dependency) is missing."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
import torch

from botorch_mtucb.__main__ import main
from botorch_mtucb.benchmarks import BENCHMARKS

NAMES = [
    "botorch-loop",
    "certified-stopping",
    "coverage",
    "icm-posterior",
    "mm-bound-rounds",
    "mm-bound-vs-cvxpy",
    "mt-bkb-scaling",
    "multi-task-bound",
    "multi-task-scale",
    "transfer",
    "width-candidates",
]


def test_list_names_every_benchmark_with_a_description():
    completed = subprocess.run(
        [sys.executable, "-m", "botorch_mtucb", "benchmark", "--list"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = completed.stdout.splitlines()
    assert [line.split()[0] for line in lines] == NAMES
    for line in lines:
        name, description = line.split(maxsplit=1)
        assert description == BENCHMARKS[name].description and "\n" not in description


def test_each_description_is_its_modules():
    # The catalogue names each benchmark's module without importing it; the description
    # shown by --list is the one the module gives itself.
    for name, benchmark in BENCHMARKS.items():
        module = importlib.import_module(benchmark.module)
        assert benchmark.description == module.DESCRIPTION, name
        assert callable(module.main), name


def test_unknown_benchmark_is_refused(capsys):
    assert main(["benchmark", "no-such-benchmark"]) == 2
    assert "no-such-benchmark" in capsys.readouterr().err


def test_icm_posterior_quick(capsys):
    threads = torch.get_num_threads()
    code = main(["benchmark", "icm-posterior", "--quick"])
    out = capsys.readouterr().out
    assert torch.get_num_threads() == threads  # the caller's setting is restored
    assert "1 thread(s)" in out and "dense/eigen" in out and "rebuild/append" in out
    # Only a speed target may be missed on a loaded machine, never the agreement.
    assert "differs by more than" not in out
    assert code == (0 if "all targets measured in this run met" in out else 1)


def test_mm_bound_vs_cvxpy_quick(capsys):
    pytest.importorskip("cvxpy")
    assert main(["benchmark", "mm-bound-vs-cvxpy", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "1 torch thread(s)" in out and "ratio" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("100 ")]
    assert len(rows) == 1 and float(rows[0][6]) < 1e-4  # max relative difference


def test_mm_bound_vs_cvxpy_without_cvxpy(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cvxpy", None)  # `import cvxpy` raises ImportError
    assert main(["benchmark", "mm-bound-vs-cvxpy", "--quick"]) == 1
    captured = capsys.readouterr()
    assert "pip install cvxpy" in captured.err and "Traceback" not in captured.err


def test_mt_bkb_scaling_quick(tmp_path, capsys):
    output = tmp_path / "scaling.png"
    assert main(["benchmark", "mt-bkb-scaling", "--quick", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "1 thread(s)" in out
    # The goal is said in words: what is compared, where, and that it is this machine's.
    goal = [line for line in out.splitlines() if line.startswith("goal: ")]
    assert len(goal) == 1 and "at least 10x faster than MT-KB's at t = 5000" in goal[0]
    assert "timed on this machine" in goal[0]
    assert output.stat().st_size > 1000
    numbers = json.loads(output.with_suffix(".json").read_text())
    assert [r["t"] for r in numbers["results"]] == [100, 250, 500]
    assert all(r["ratio"] > 0 for r in numbers["results"]) and numbers["threads"] == 1
