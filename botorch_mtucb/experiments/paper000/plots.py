"""Paper 000's figures that are more than one curve plot: Figure 1 (a)'s final regret
against the task similarity ``omega``, Figures 2 and 3's one panel per problem, and the
main job's cumulative regret beside each method's difference to a baseline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from botorch_mtucb.experiments.plots import plot_curves, save_figure
from botorch_mtucb.experiments.runs import MethodResult


def plot_regret_against_omega(
    omegas: Sequence[float],
    means: Sequence[float],
    stds: Sequence[float],
    horizon: int,
    path: str | Path,
) -> None:
    """Figure 1 (a): MT-KB's final cumulative regret ``R_C(T)`` (mean +- sd over
    repetitions) against ``omega`` (0: identical tasks, 1: unrelated tasks), saved as a
    PNG at ``path``.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.paper000.plots import plot_regret_against_omega
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "omega.png"
        >>> plot_regret_against_omega([0.0, 1.0], [2.0, 5.0], [0.5, 1.0], 60, path)
        >>> path.exists()
        True
    """
    figure = Figure(figsize=(5.5, 4))
    ax = figure.subplots()
    ax.errorbar(omegas, np.asarray(means), yerr=np.asarray(stds), marker="o", capsize=3)
    ax.set_xlabel("omega (0: identical tasks, 1: unrelated tasks)")
    ax.set_ylabel(f"R_C(T), T = {horizon}")
    ax.set_title("MT-KB under varying inter-task similarity")
    ax.grid(alpha=0.3)
    save_figure(figure, path)


def plot_panels(
    panels: Mapping[str, Mapping[str, MethodResult]],
    path: str | Path,
    curve: str,
    ylabel: str,
    time_average: bool,
    log_y: bool = False,
) -> None:
    """One panel per problem (title -> its methods' results) of ``curve`` (mean +- sd
    bands, divided by ``t`` if ``time_average``), side by side, saved at ``path``.

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.paper000.plots import plot_panels
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("MT-KB", {"cumulative_regret": np.ones((2, 4))})
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "panels.png"
        >>> panels = {"A": {"MT-KB": result}, "B": {"MT-KB": result}}
        >>> plot_panels(panels, path, "cumulative_regret", "R_C(t)", time_average=False)
        >>> path.exists()
        True
    """
    figure = Figure(figsize=(5.5 * len(panels), 4))
    axes = np.atleast_1d(figure.subplots(1, len(panels)))
    for ax, (title, results) in zip(axes, panels.items()):
        plot_curves(ax, results, curve, title, ylabel, time_average=time_average, log_y=log_y)
    save_figure(figure, path)


def plot_regret_against_baseline(
    results: Mapping[str, MethodResult],
    baseline: str,
    path: str | Path,
    title: str,
    ylabel: str,
) -> None:
    """Two panels saved as a PNG at ``path``: the cumulative regret ``R_C(t)`` of every
    method (mean +- standard error over the repetitions), and every other method's
    ``R_C(t)`` minus ``baseline``'s, repetition by repetition (the repetitions share
    their seeds, hence their scalarizations), mean +- standard error: above 0 the method
    has the larger regret.

    Args:
        results: Method name -> result with the curve ``cumulative_regret``, every one
            with the same repetitions.
        baseline: The method subtracted (a key of ``results``).
        path: Where the PNG goes.
        title: The figure's title.
        ylabel: The y axes' label (the regret and its unit).

    Raises:
        KeyError: If ``baseline`` is not in ``results``.

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.paper000.plots import plot_regret_against_baseline
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> results = {name: MethodResult(name, {"cumulative_regret": np.ones((2, 4)) * k})
        ...            for k, name in enumerate(["A", "B"])}
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "regret.png"
        >>> plot_regret_against_baseline(results, "B", path, "demo", "R_C(t)")
        >>> path.exists()
        True
    """
    reference = results[baseline].curves["cumulative_regret"]
    figure = Figure(figsize=(11, 4))
    left, right = figure.subplots(1, 2)
    plot_curves(left, results, "cumulative_regret", "cumulative regret", ylabel, band="se")
    differences = {
        name: MethodResult(
            name, {"cumulative_regret": result.curves["cumulative_regret"] - reference}
        )
        for name, result in results.items()
        if name != baseline
    }
    # The same colour for a method in both panels.
    colors = {line.get_label(): line.get_color() for line in left.get_lines()}
    right.set_prop_cycle(color=[colors[name] for name in differences])
    plot_curves(
        right,
        differences,
        "cumulative_regret",
        f"minus {baseline}'s, paired by repetition",
        f"R_C(t) minus {baseline}'s R_C(t)\n(same unit; above 0: more regret)",
        band="se",
    )
    right.axhline(0.0, color="black", linewidth=0.8)
    figure.suptitle(title)
    save_figure(figure, path)
