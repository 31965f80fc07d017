"""The building-from-data part of the mt_bkb_scaling benchmark (issue 14): the builds it
times, the peak-memory measurement (it must see torch's allocations) and its table."""

from __future__ import annotations

import subprocess
import sys

import pytest

from botorch_mtucb.benchmarks.mt_bkb_builds import (
    BUILDS,
    build_model,
    build_table,
    data,
    measure_builds,
    peak_build_bytes,
)
from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.problems import rkhs_problem


def test_peak_bytes_of_sees_torch_allocations():
    """A 256 MiB torch tensor (freed before the call returns) is seen; a call that
    allocates nothing is not charged for the process's earlier peak. In a fresh
    process, as the benchmark measures (in a long test process, pages freed by earlier
    tests can be reused without the resident set growing)."""
    code = (
        "import torch\n"
        "from botorch_mtucb.benchmarks.mt_bkb_builds import peak_bytes_of\n"
        "size = 2**25\n"
        "def allocate():\n"
        "    values = torch.ones(size, dtype=torch.float64)\n"
        "    return float(values.sum())\n"
        "print(peak_bytes_of(allocate), peak_bytes_of(lambda: None))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    peak, nothing = (int(value) for value in result.stdout.split())
    size = 2**25  # float64: 256 MiB
    assert 0.95 * 8 * size <= peak <= 1.5 * 8 * size, peak / 2**20
    assert nothing < 16 * 2**20  # the earlier peak is reset


def test_builds_are_the_three_models():
    problem = rkhs_problem(2, seed=0)
    X, Y = data(problem, 40)
    exact = build_model("exact", problem, X, Y, 5.0)
    adaptive = build_model("nystrom", problem, X, Y, 5.0)
    replay = build_model("replay", problem, X, Y, 5.0)
    assert type(exact) is VectorValuedGP and isinstance(adaptive, NystromVectorValuedGP)
    assert replay.num_resamplings == 40 and adaptive.num_resamplings < 40
    assert adaptive.chunk_size == "adaptive" and replay.chunk_size == 1
    with pytest.raises(ValueError, match="kind must be one of"):
        build_model("other", problem, X, Y, 5.0)
    seconds = measure_builds(problem, X, Y, 5.0, replay=True)
    assert set(seconds) == set(BUILDS) and all(value > 0 for value in seconds.values())


def test_peak_build_bytes_in_fresh_processes():
    """At t = 300 (20 tasks, the full dictionary of q = 1e4) the exact build holds t x t
    matrices, the sketch m x m ones with m the distinct points (101): less memory."""
    peaks = peak_build_bytes(["exact", "nystrom"], 300, 300, 1e4, 1)
    assert peaks["exact"] > 300**2 * 8  # at least one t x t float64 matrix
    assert 0 < peaks["nystrom"] < peaks["exact"], peaks


def test_build_table_ratios_and_missing_values():
    results = [
        {
            "t": 100,
            "build_seconds": {"exact": 2.0, "nystrom": 0.5, "replay": 8.0},
            "build_peak_bytes": {"exact": 3 * 2**20, "nystrom": 2**19, "replay": None},
        },
        {
            "t": 200,
            "build_seconds": {"exact": 4.0, "nystrom": 1.0, "replay": None},
            "build_peak_bytes": None,
        },
    ]
    table = build_table(results, 1).splitlines()
    assert "1 thread(s)" in table[0] and "VmHWM" in table[0]
    first, second = table[-2].split(), table[-1].split()
    assert first == ["100", "2", "0.5", "(0.25x)", "8", "(4x)", "3.0", "0.5", "-"]
    assert second == ["200", "4", "1", "(0.25x)", "-", "-", "-", "-"]
