"""``python -m botorch_mtucb benchmark multi-task-bound``: the quick run prints its table,
the routes it times agree, the growth summary reads the ratios."""

from __future__ import annotations

import copy
import re

import pytest
import torch

from botorch_mtucb.__main__ import main
from botorch_mtucb.acquisition import ScalarizedMartingaleMixtureUCB
from botorch_mtucb.benchmarks.multi_task_bound import (
    growth_summary,
    icm_data,
    make_kernel,
    step_seconds,
)
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.scalarization import ChebyshevScalarization


def test_quick_run_prints_the_table(capsys):
    threads = torch.get_num_threads()
    assert main(["benchmark", "multi-task-bound", "--quick"]) == 0
    out = capsys.readouterr().out
    assert torch.get_num_threads() == threads  # the caller's setting is restored
    assert "t = 50, 1 torch thread(s), load" in out
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("n  M = n t"))
    # one token per column: drop the "(n x2.5)" beside the ratio to the previous n
    rows = [re.sub(r" \(n x[0-9.]+\)", "", line).split() for line in lines[header + 2 : header + 4]]
    assert [row[:2] for row in rows] == [["2", "100"], ["5", "250"]]
    # step, its append, the dense step and its append, the linear step
    assert all(min(float(row[i]) for i in (2, 3, 6, 7, 9)) > 0 for row in rows)
    assert all(float(row[3]) < float(row[2]) for row in rows)  # the append is part of it
    assert "(n x2.5)" in lines[header + 3]
    assert "single-task CMM step" in out
    assert "Chebyshev step: cost grows" in out and "linear step: cost grows" in out


def test_the_dense_and_kronecker_routes_give_the_same_step():
    """The two timed multi-task routes compute the same Chebyshev UCB (else the ratio
    would compare different work)."""
    data = icm_data(3, 15, seed=1)
    X, Y, B = data["X"], data["Y"], data["B"]
    arguments = (5.0, 0.1, 0.01)
    kronecker = MultiTaskMartingaleMixtureBound(X, Y, make_kernel(), B, *arguments)
    dense = MultiTaskMartingaleMixtureBound(
        X, Y, [make_kernel(), make_kernel()], [B / 2, B / 2], *arguments
    )
    assert kronecker.kronecker_route and not dense.kronecker_route
    scalarization = ChebyshevScalarization(torch.full((3,), 1 / 3, dtype=B.dtype), Y.min(0).values)
    candidates = data["candidates"][:, None]
    values = [
        ScalarizedMartingaleMixtureUCB(copy.deepcopy(b), scalarization)(candidates)
        for b in (kronecker, dense)
    ]
    torch.testing.assert_close(values[0], values[1], rtol=1e-6, atol=1e-8)


def test_step_seconds_refuses_an_unknown_route():
    with pytest.raises(ValueError, match="route must be"):
        step_seconds(icm_data(2, 5, seed=0), "cholesky", 1)


def test_growth_summary():
    rows = [{"n": 2, "kronecker": 1.0}, {"n": 4, "kronecker": 2.0}, {"n": 8, "kronecker": 4.0}]
    assert growth_summary(rows) == (
        "cost grows at most linearly in n (slope of log time vs log n: 1.00; largest step "
        "x2.00 for n x2.0)"
    )
    rows[2]["kronecker"] = 16.0  # x8 for n x2: slope 2
    assert growth_summary(rows).startswith("cost grows faster than linearly in n (slope")
    assert "largest step x8.00 for n x2.0" in growth_summary(rows)
    rows[2]["kronecker"] = 4.4  # x2.2 for n x2: slope 1.07, beyond the tolerance
    assert growth_summary(rows).startswith("cost grows faster than linearly")
    rows[2]["kronecker"] = 4.1  # x2.05 for n x2: slope 1.02, within it
    assert growth_summary(rows).startswith("cost grows at most linearly")
    assert growth_summary(rows[:1]) == "one n only: no growth measured"
