"""Paper 000's figures that are more than one curve plot: Figure 1 (a)'s final regret
against the task similarity ``omega``, and Figures 2 and 3's one panel per problem."""

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
