"""The multi-task scale benchmark: its quick mode through the main entry, its problem
and its routes' shared kernel (checked against BoTorch's own MultiTaskGP)."""

from __future__ import annotations

import json

import pytest
import torch

from botorch_mtucb.__main__ import main as package_main
from botorch_mtucb.benchmarks.multi_task_scale import (
    NOISE_VARIANCE,
    ROUTES,
    build_route,
    scale_problem,
    scale_table,
)


def test_quick_mode_runs_every_route(tmp_path, capsys):
    assert (
        package_main(["benchmark", "multi-task-scale", "--quick", "--output", str(tmp_path)]) == 0
    )
    summary = json.loads((tmp_path / "multi_task_scale.json").read_text())
    assert summary["threads"] == 1
    measured = [(r["size"], r["route"]) for r in summary["results"] if not r["skipped"]]
    assert measured == [(size, route) for size in (200, 400) for route in ROUTES]
    assert all(r["seconds_per_iteration"] > 0 for r in summary["results"])
    assert "BoTorch/route" in capsys.readouterr().out


def test_problem_is_an_icm_sample_with_the_stated_noise():
    problem = scale_problem(1000)
    X, tasks, Y = problem["X"], problem["tasks"], problem["Y"]
    assert X.min() >= 0 and X.max() <= 1 and set(tasks.tolist()) == set(range(10))
    residual = Y.squeeze(-1) - problem["objective"](X, tasks)
    assert abs(residual.var().item() - NOISE_VARIANCE) < 0.1 * NOISE_VARIANCE


@pytest.mark.parametrize("size", [8, 60])  # 8 rows: some of the 10 tasks unobserved
def test_routes_share_botorchs_posterior(size):
    problem = scale_problem(size)
    X = torch.rand(5, 1, 4, dtype=torch.float64)
    reference = build_route("botorch", problem).posterior(X)
    posterior = build_route("exact", problem).posterior(X, output_indices=[0])
    assert torch.allclose(posterior.mean, reference.mean, atol=1e-8)
    assert torch.allclose(posterior.variance, reference.variance, atol=1e-8)


def test_table_ratio_and_skips():
    entry = {"build_seconds": 1.0, "build_cpu_seconds": 1.0, "peak_bytes": 2**30, "skipped": None}
    results = [  # the ratio is of CPU seconds (1.0 / 0.25), not wall-clock (1.0 / 0.5)
        {"size": 5, "route": "nystrom", "seconds_per_iteration": 0.5, **entry}
        | {"cpu_seconds_per_iteration": 0.25},
        {"size": 5, "route": "botorch", "seconds_per_iteration": 1.0, **entry}
        | {"cpu_seconds_per_iteration": 1.0},
        {"size": 9, "route": "botorch", "skipped": "over 1 s"},
    ]
    table = scale_table(results)
    assert "4.0" in table and "2.0" not in table and "skipped: over 1 s" in table


@pytest.mark.parametrize("route", ["unknown"])
def test_build_route_rejects_unknown_route(route):
    with pytest.raises(ValueError, match="route must be one of"):
        build_route(route, scale_problem(5))
