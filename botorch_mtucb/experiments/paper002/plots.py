"""Paper 002's figures: cumulative regret per configuration (Figures 2, 5-7) and the
wall-clock time per step (Figure 4)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from botorch_mtucb.experiments.plots import plot_curves, save_figure
from botorch_mtucb.experiments.runs import MethodResult


def plot_grid(
    results: Mapping[str, Mapping[str, MethodResult]], path: str | Path, title: str
) -> None:
    """One panel of cumulative regret per configuration (label -> its methods'
    results), on a grid of at most three columns (two for four panels), saved at ``path``.

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.paper002.plots import plot_grid
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("DMM-UCB", {"cumulative_regret": np.ones((2, 4))})
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "grid.png"
        >>> plot_grid({"RBF l=0.5": {"DMM-UCB": result}}, path, "demo")
        >>> path.exists()
        True
    """
    count = len(results)
    columns = min(count, 2 if count == 4 else 3)
    rows = math.ceil(count / columns)
    figure = Figure(figsize=(5 * columns, 3.8 * rows))
    axes = figure.subplots(rows, columns, squeeze=False)
    for ax, (label, config_results) in zip(axes.flat, results.items()):
        plot_curves(ax, config_results, "cumulative_regret", label, "cumulative regret")
    for ax in list(axes.flat)[count:]:
        ax.set_visible(False)
    figure.suptitle(title)
    save_figure(figure, path, dpi=110)


def plot_seconds(
    results: Mapping[str, Mapping[str, MethodResult]], path: str | Path, title: str
) -> None:
    """Figure 4 style: seconds per step of each method of the first configuration
    (curve ``"seconds"``), as measured, zoomed (ignoring CMM-UCB and the first five
    rounds' one-off costs) and on a log scale, saved at ``path``.

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.paper002.plots import plot_seconds
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("AMM-UCB", {"seconds": np.full((2, 8), 0.01)})
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "seconds.png"
        >>> plot_seconds({"RBF l=0.5": {"AMM-UCB": result}}, path, "demo")
        >>> path.exists()
        True
    """
    label, config_results = next(iter(results.items()))
    figure = Figure(figsize=(15, 3.8))
    axes = figure.subplots(1, 3)
    for ax in axes:
        for result in config_results.values():
            values = result.curves["seconds"].mean(0)
            ax.plot(np.arange(1, values.size + 1), values, label=result.name)
        ax.set_xlabel("round t")
        ax.set_ylabel("seconds per step")
        ax.grid(alpha=0.3)
    cheap = [
        r.curves["seconds"].mean(0)[5:].max()
        for m, r in config_results.items()
        if m != "CMM-UCB" and r.curves["seconds"].shape[-1] > 5
    ]
    if cheap:
        axes[1].set_ylim(0, 1.1 * max(cheap))
    axes[2].set_yscale("log")
    axes[0].legend()
    axes[0].set_title(f"{label}: time per step")
    axes[1].set_title("zoomed")
    axes[2].set_title("log scale")
    figure.suptitle(title)
    save_figure(figure, path, dpi=110)
