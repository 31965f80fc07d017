"""``benchmark botorch-loop``: the loop's regret against a recomputation, every method
in a short run, files written as runs end, resume, and the table's statistics."""

from __future__ import annotations

import json

import pytest
import torch
from botorch.test_functions import Branin
from botorch.utils.sampling import draw_sobol_samples

from botorch_mtucb.__main__ import main
from botorch_mtucb.benchmarks.botorch_loop import (
    METHODS,
    LoopRun,
    LoopSettings,
    load_run,
    measure,
    plot,
    run_loop,
    table,
)

SHORT = LoopSettings(iterations=2, num_restarts=2, raw_samples=16)


def test_random_search_regret_is_recomputed_by_hand():
    """Sobol design of 2 (d + 1) points, then uniform points of the seeded generator;
    the regret is f* - the running maximum, f* = -0.397887 for the negated Branin."""
    run = run_loop("branin", "random", 3, LoopSettings(iterations=4))
    function = Branin(negate=True).to(torch.float64)
    X = draw_sobol_samples(function.bounds, n=6, q=1, seed=3).squeeze(-2)
    u = torch.rand(4, 2, generator=torch.Generator().manual_seed(10_003), dtype=torch.float64)
    X = torch.cat([X, function.bounds[0] + (function.bounds[1] - function.bounds[0]) * u])
    values = function(X)
    expected = [-0.397887 - float(values[: 6 + t].max()) for t in range(5)]
    assert run.regret == pytest.approx(expected, abs=1e-5)
    assert run.error is None


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_runs_and_the_regret_never_grows(method):
    run = run_loop("branin", method, 0, SHORT)
    assert run.error is None, run.error
    assert len(run.regret) == 3
    assert all(a >= b >= 0 for a, b in zip(run.regret, run.regret[1:]))


def test_runs_are_stored_and_resumed(tmp_path, capsys):
    runs = measure(["branin"], ["random", "MM-UCB"], [0, 1], SHORT, tmp_path)
    assert len(runs) == 4 and len(list(tmp_path.glob("*.json"))) == 4
    stored = {(r.method, r.seed): r.regret for r in runs}
    again = measure(["branin"], ["random", "MM-UCB"], [0, 1], SHORT, tmp_path)
    assert "4 run(s) already in" in capsys.readouterr().out
    assert {(r.method, r.seed): r.regret for r in again} == stored
    path = next(tmp_path.glob("branin__random__seed0.json"))
    assert load_run(path, LoopSettings(iterations=3)) is None  # other settings: rerun
    path.write_text("{ not json")  # a damaged file is run again, not trusted
    assert load_run(path, SHORT) is None
    measure(["branin"], ["random"], [0], SHORT, tmp_path)
    assert json.loads(path.read_text())["regret"] == stored[("random", 0)]


def test_table_quartiles_and_failed_runs():
    runs = [
        LoopRun("branin", "random", s, [1.0, r], 0.1, None, {}) for s, r in enumerate([1, 2, 3, 4])
    ]
    runs += [LoopRun("branin", "UCB(beta=0.2)", 0, [1.0, 0.5], 0.05, None, {})]
    runs += [LoopRun("branin", "MM-UCB", 0, [1.0], float("nan"), "Traceback ...", {})]
    lines = table(runs, ["branin"], ["random", "UCB(beta=0.2)", "MM-UCB"]).splitlines()
    # torch.quantile (linear interpolation) of 1, 2, 3, 4: 1.75, 2.5, 3.25
    assert "2.5000   [1.7500, 3.2500]   4/4" in lines[2] and lines[2].endswith("2.00x")
    assert "no complete run" in lines[4]


def test_command_line_quick_subset(tmp_path, capsys):
    code = main(
        [
            "benchmark",
            "botorch-loop",
            "--quick",
            "--problems",
            "branin",
            "--methods",
            "random",
            "UCB(beta=0.2)",
            "--output",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "2 seed(s) x 3 iteration(s)" in out and "UCB(beta=0.2)" in out
    assert (tmp_path / "regret.png").exists()
    with pytest.raises(SystemExit):
        main(["benchmark", "botorch-loop", "--seeds", "0"])


def test_plot_leaves_the_users_backend_and_pyplot_alone(tmp_path):
    # A notebook user's backend must not be switched by library code (it was set to Agg).
    import matplotlib
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    matplotlib.use("pdf")
    try:
        figures = plt.get_fignums()
        runs = [LoopRun("branin", "random", s, [1.0, 0.5, 0.1], 0.01, None, {}) for s in (0, 1)]
        plot(runs, ["branin"], ["random"], tmp_path / "regret.png")
        assert (tmp_path / "regret.png").read_bytes()[:4] == b"\x89PNG"
        assert matplotlib.get_backend() == "pdf"
        assert plt.get_fignums() == figures
    finally:
        matplotlib.use(before)
