"""Paper 001's Figure 2 (``001-widths``): the widths of Theorem 1 against ``b``, in the
noise-free limit and with unit noise; no bandit runs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from botorch_mtucb.confidence import multitask_regularization, multitask_widths
from botorch_mtucb.experiments.paper001.methods import DELTA
from botorch_mtucb.experiments.paper001.plots import WIDTH_NAMES, plot_widths
from botorch_mtucb.experiments.registry import experiment_options, register
from botorch_mtucb.experiments.run_directory import RunDirectory
from botorch_mtucb.experiments.summary import build_summary, problem_summary, write_summary

WIDTH_PANELS = {"noise_free": 1e-9, "unit_noise": 1.0}  # panel -> noise_std


@register("001-widths", "paper 001 Fig. 2: naive, small-b, large-b and new widths against b")
def widths_figure(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options
) -> dict:
    """Figure 2: ``B = 1``, ``epsilon = 0.4``, ``N = 20``, ``t = 4``, ``gamma = 0`` and
    ``lambda = (N + b) / (N + bN)``, for ``b`` on a log grid from 1e-3 to 1e4.

    Two panels (two problems of ``summary.json``, without methods): the noise-free limit
    (``noise_std -> 0``: only the bias parts of the widths remain, in units of ``B``),
    where the ``sqrt(N)`` gains at both ends are exact, and unit noise with
    ``delta = 0.01`` (the ``ln(1/delta)`` terms added). Writes ``widths.csv`` and
    ``widths.png``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper001.widths import widths_figure
        >>> summary = widths_figure(Path(tempfile.mkdtemp()))  # doctest: +ELLIPSIS
        paper 001, Figure 2: widths for N = 20, b in [0.001, 10000]
        ...
        >>> summary["problems"]["noise_free"]["new_below_naive_everywhere"]
        True
    """
    num_tasks = int(experiment_options("001-widths", options, {"num_tasks": 20})["num_tasks"])
    directory = RunDirectory(output)
    directory.path.mkdir(parents=True, exist_ok=True)
    grid = np.logspace(-3, 4, 141)
    curves: dict[str, dict[str, list[float]]] = {}
    for panel, noise_std in WIDTH_PANELS.items():
        curves[panel] = {name: [] for name in WIDTH_NAMES}
        for b in grid:
            widths = multitask_widths(
                num_tasks,
                float(b),
                1.0,
                0.4,
                multitask_regularization(num_tasks, float(b)),
                DELTA,
                0.0,
                0.0,
                4,
                noise_std=noise_std,
            )
            for name in WIDTH_NAMES:
                curves[panel][name].append(float(widths[name]))
    with directory.csv_file("widths").open("w") as handle:
        columns = [f"{panel}_{name}" for panel in WIDTH_PANELS for name in WIDTH_NAMES]
        handle.write("b," + ",".join(columns) + "\n")
        for k, b in enumerate(grid):
            values = [curves[panel][name][k] for panel in WIDTH_PANELS for name in WIDTH_NAMES]
            handle.write(f"{b:.6g}," + ",".join(f"{v:.6g}" for v in values) + "\n")
    plot_widths(grid, curves, num_tasks, directory.plot_file("widths"))
    problems = {
        panel: problem_summary(
            {},
            noise_std=noise_std,
            ratio_naive_over_new_at_b_min=curves[panel]["naive"][0] / curves[panel]["new"][0],
            ratio_naive_over_new_at_b_max=curves[panel]["naive"][-1] / curves[panel]["new"][-1],
            new_below_naive_everywhere=all(
                new <= naive * (1 + 1e-12)
                for new, naive in zip(curves[panel]["new"], curves[panel]["naive"])
            ),
        )
        for panel, noise_std in WIDTH_PANELS.items()
    }
    settings = {
        "num_tasks": num_tasks,
        "b_min": float(grid[0]),
        "b_max": float(grid[-1]),
        "sqrt_num_tasks": math.sqrt(num_tasks),
        "rkhs_norm_bound": 1.0,
        "task_deviation": 0.4,
        "t": 4,
        "delta": DELTA,
    }
    summary = build_summary("001-widths", settings, problems)
    write_summary(summary, directory.summary_file)
    free = problems["noise_free"]
    everywhere = all(problem["new_below_naive_everywhere"] for problem in problems.values())
    print(f"paper 001, Figure 2: widths for N = {num_tasks}, b in [{grid[0]:g}, {grid[-1]:g}]")
    print(
        "naive / new in the noise-free limit: "
        f"{free['ratio_naive_over_new_at_b_min']:.3f} at b = {grid[0]:g}, "
        f"{free['ratio_naive_over_new_at_b_max']:.3f} at b = {grid[-1]:g} "
        f"(sqrt(N) = {math.sqrt(num_tasks):.3f}); new <= naive everywhere: {everywhere}"
    )
    return summary
