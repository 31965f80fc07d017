"""``benchmark botorch-loop``: the loop's regret against a recomputation, every method
in a short run, files written as runs end, resume, and the table's statistics."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import pytest
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from botorch.test_functions import Branin
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.mlls import ExactMarginalLogLikelihood

from botorch_mtucb.__main__ import main
from botorch_mtucb.benchmarks.botorch_loop import (
    DECOMPOSED,
    METHODS,
    LoopRun,
    LoopSettings,
    load_run,
    measure,
    plot,
    run_loop,
    table,
)
from botorch_mtucb.benchmarks.botorch_loop_report import decomposition_table
from botorch_mtucb.benchmarks.loop_problems import MEASUREMENT_PRECISION, PROBLEMS

SHORT = LoopSettings(iterations=2, num_restarts=2, raw_samples=16)


def test_random_search_regret_is_recomputed_by_hand():
    """Sobol design of 2 (d + 1) points, then uniform points of the seeded generator; after
    t iterations the recommendation is the evaluated point of largest posterior mean of a
    SingleTaskGP fitted here, and the regret is f* - f(recommendation), f* = -0.397887."""
    run = run_loop("branin", "random", 3, LoopSettings(iterations=3))
    function = Branin(negate=True).to(torch.float64)
    X = draw_sobol_samples(function.bounds, n=6, q=1, seed=3).squeeze(-2)
    u = torch.rand(3, 2, generator=torch.Generator().manual_seed(10_003), dtype=torch.float64)
    X = torch.cat([X, function.bounds[0] + (function.bounds[1] - function.bounds[0]) * u])
    expected = []
    for t in range(4):
        seen = X[: 6 + t]
        gp = SingleTaskGP(seen, function(seen).unsqueeze(-1), input_transform=Normalize(2))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        with torch.no_grad():
            best = seen[gp.posterior(seen).mean.squeeze(-1).argmax()]
        expected.append(-0.397887 - float(function(best.unsqueeze(0))))
    assert run.regret == pytest.approx(expected, abs=1e-5)
    assert run.error is None


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_runs(method):
    run = run_loop("branin-noisy", method, 0, SHORT)
    assert run.error is None, run.error
    assert len(run.regret) == 3 and min(run.regret) >= 0
    if method in DECOMPOSED:  # the three bounds' terms at each chosen point
        assert len(run.decomposition) == 2
        for record in run.decomposition:
            assert set(record) == {"exact", "grid", "analytic"}
            shares = [record["exact"][f"{name}_share"] for name in ("norm", "log_det")]
            assert all(math.isfinite(v) for v in shares) and record["exact"]["gp_multiplier"] > 0
    else:
        assert run.decomposition == []


def test_noisy_problems_observe_seeded_noise():
    problem = PROBLEMS["branin-noisy"]
    function = problem.function()
    X = torch.rand(4000, 2, dtype=torch.float64) * 5.0
    noise = problem.observe(function, X, torch.Generator().manual_seed(1)) - function(X)[:, None]
    assert float(noise.std()) == pytest.approx(5.0, rel=0.05)
    again = problem.observe(function, X, torch.Generator().manual_seed(1)) - function(X)[:, None]
    assert torch.equal(noise, again)
    assert torch.equal(PROBLEMS["branin"].observe(function, X, None), function(X)[:, None])
    assert PROBLEMS["hartmann6-noisy"].measurement_noise_std == 0.04
    assert PROBLEMS["levy4"].measurement_noise_std == MEASUREMENT_PRECISION


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


def test_decomposition_table_takes_medians_over_seeds():
    def record(beta, norm_share):
        terms = {
            "norm_share": norm_share, "log_det_share": 0.5, "confidence_share": 0.1,
            "data_fit_share": 0.4 - norm_share, "beta_sqrt": beta, "rkhs_norm_bound": 2.0,
            "noise_std": 0.01, "mixture_scale": 1.0,
        }  # fmt: skip
        return {kind: dict(terms, gp_multiplier=2 * beta) for kind in ("exact", "grid", "analytic")}

    runs = [
        LoopRun("branin", "MM-UCB", s, [1.0], 0.1, None, {}, [record(b, 0.1 * b)] * 3)
        for s, b in enumerate([1.0, 2.0, 4.0])
    ]
    lines = decomposition_table(runs, ["branin"], ["MM-UCB"]).splitlines()
    exact = [line for line in lines if " exact " in line]
    assert [line.split()[3] for line in exact] == ["1", "2", "3"]  # first, middle, last
    assert exact[0].split()[4:7] == ["2.00", "4.00", "0.20"]  # medians of beta, x sd, share


def test_runs_of_other_settings_are_never_overwritten(tmp_path):
    measure(["branin"], ["random"], [0], SHORT, tmp_path)
    path = tmp_path / "branin__random__seed0.json"
    before = path.read_text()
    other = LoopSettings(iterations=1, num_restarts=2, raw_samples=16)
    with pytest.raises(ValueError, match="1 run\\(s\\) of other settings.*--fresh"):
        measure(["branin"], ["random"], [0], other, tmp_path)
    assert path.read_text() == before
    measure(["branin"], ["random"], [0], other, tmp_path, fresh=True)  # told to replace
    assert json.loads(path.read_text())["settings"]["iterations"] == 1


@pytest.mark.parametrize(
    "change",
    [{"regret": []}, {"regret": [1.0]}, {"regret": ["a", "b", "c"]}, {"decomposition": {}},
     {"error": "Traceback ..."}],
    ids=["empty", "short", "strings", "records", "raised"],
)  # fmt: skip
def test_malformed_or_failed_runs_are_run_again(tmp_path, change):
    (run,) = measure(["branin"], ["random"], [0], SHORT, tmp_path)
    path = tmp_path / "branin__random__seed0.json"
    path.write_text(json.dumps(asdict(run) | change))
    assert load_run(path, SHORT) is None
    (again,) = measure(["branin"], ["random"], [0], SHORT, tmp_path)
    assert again.regret == run.regret and load_run(path, SHORT) is not None
