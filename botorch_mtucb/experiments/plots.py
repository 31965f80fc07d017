"""Plots of an experiment's results, drawn on a ``matplotlib.figure.Figure`` (no
``pyplot`` state, no backend switched): a curve's mean over the repetitions with a band
of +- one standard deviation or one standard error (named in the legend), and a figure
saved as a PNG in one step (``run_directory.write_result_file``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from botorch_mtucb.experiments.run_directory import write_result_file
from botorch_mtucb.experiments.runs import MethodResult

_BAND_NAMES = {"sd": "sd", "se": "standard error"}


def plot_curves(
    ax: Axes,
    results: Mapping[str, MethodResult],
    curve: str,
    title: str,
    ylabel: str,
    time_average: bool = False,
    log_y: bool = False,
    band: str = "sd",
) -> None:
    """Draw the mean of ``curve`` over the repetitions against the round ``t`` for every
    method on ``ax`` (divided by ``t`` if ``time_average``), with a band of +- one
    ``band``: ``"sd"``, the standard deviation over the repetitions (the spread of one
    run; paper 000's figures), or ``"se"``, the standard error of the mean (``sd /
    sqrt(r)`` with ``r - 1`` degrees of freedom for ``r`` repetitions; what tells two
    methods' means apart). The legend's title names the band and ``r``; methods without
    ``curve`` are skipped.

    Raises:
        ValueError: If ``band`` is neither ``"sd"`` nor ``"se"``.

    Example:
        >>> import numpy as np
        >>> from matplotlib.figure import Figure
        >>> from botorch_mtucb.experiments.plots import plot_curves
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> ax = Figure().subplots()
        >>> result = MethodResult("A", {"cumulative_regret": np.ones((2, 5))})
        >>> plot_curves(ax, {"A": result}, "cumulative_regret", "title", "R_C(t)")
        >>> [line.get_label() for line in ax.get_lines()]
        ['A']
        >>> ax.get_legend().get_title().get_text()
        'mean +- sd over 2 repetitions'
    """
    if band not in _BAND_NAMES:
        raise ValueError(f"band must be 'sd' or 'se', got {band!r}")
    repetitions = set()
    for result in results.values():
        if curve not in result.curves:
            continue
        values = result.curves[curve]
        t = np.arange(1, values.shape[-1] + 1)
        if time_average:
            values = values / t
        count = values.shape[0]
        repetitions.add(count)
        mean = values.mean(0)
        if band == "sd":
            spread = values.std(0)
        else:
            spread = values.std(0, ddof=1) / np.sqrt(count) if count > 1 else np.zeros_like(mean)
        (line,) = ax.plot(t, mean, label=result.name)
        ax.fill_between(t, mean - spread, mean + spread, color=line.get_color(), alpha=0.2)
    ax.set_xlabel("round t")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if log_y:
        ax.set_yscale("log")
    over = f"{repetitions.pop()} repetitions" if len(repetitions) == 1 else "the repetitions"
    ax.legend(title=f"mean +- {_BAND_NAMES[band]} over {over}")
    ax.grid(alpha=0.3)


def save_figure(figure: Figure, path: str | Path, dpi: int = 120) -> None:
    """Lay ``figure`` out tightly and save it as a PNG at ``path`` (folders created).

    Raises:
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import pathlib, tempfile
        >>> from matplotlib.figure import Figure
        >>> from botorch_mtucb.experiments.plots import save_figure
        >>> figure = Figure(figsize=(3, 2))
        >>> _ = figure.subplots().plot([0, 1], [1, 0])
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "line.png"
        >>> save_figure(figure, path)
        >>> path.stat().st_size > 0
        True
    """
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=dpi)
    write_result_file(path, image.getvalue(), make_folders=True)


def save_curves_plot(
    results: Mapping[str, MethodResult],
    curve: str,
    path: str | Path,
    title: str,
    ylabel: str,
    time_average: bool = False,
    band: str = "sd",
) -> None:
    """``plot_curves`` on a figure of its own, saved as a PNG at ``path``.

    Raises:
        ValueError: If ``band`` is neither ``"sd"`` nor ``"se"``.

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.plots import save_curves_plot
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("A", {"cumulative_regret": np.ones((2, 5))})
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "regret.png"
        >>> save_curves_plot({"A": result}, "cumulative_regret", path, "title", "R_C(t)")
        >>> path.exists()
        True
    """
    figure = Figure(figsize=(5.5, 4))
    plot_curves(figure.subplots(), results, curve, title, ylabel, time_average, band=band)
    save_figure(figure, path)
