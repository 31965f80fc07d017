"""Paper 001's Figure 2: the widths of Theorem 1 against ``b``, one panel per noise level."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from matplotlib.figure import Figure

from botorch_mtucb.experiments.plots import save_figure

# The widths of ``botorch_mtucb.confidence.multitask_widths`` drawn in Figure 2.
WIDTH_NAMES = ("naive", "small_b", "large_b", "new")


def plot_widths(
    grid: Sequence[float],
    curves: Mapping[str, Mapping[str, Sequence[float]]],
    num_tasks: int,
    path: str | Path,
) -> None:
    """Draw each panel's widths (``WIDTH_NAMES``) against ``b`` on log-log axes, side by
    side, and save the figure as a PNG at ``path``.

    Args:
        grid: The ``b`` values.
        curves: Panel (e.g. ``"noise_free"``) -> width name -> one width per ``b``.
        num_tasks: ``N``, for the titles.
        path: Where to save the figure.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.paper001.plots import WIDTH_NAMES, plot_widths
        >>> curves = {"unit_noise": {name: [2.0, 1.0] for name in WIDTH_NAMES}}
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "widths.png"
        >>> plot_widths([0.1, 1.0], curves, 20, path)
        >>> path.exists()
        True
    """
    figure = Figure(figsize=(5 * len(curves), 4))
    axes = figure.subplots(1, len(curves), squeeze=False)[0]
    for ax, (panel, widths) in zip(axes, curves.items()):
        for name, style in zip(WIDTH_NAMES, ["-", "--", ":", "-"]):
            ax.plot(
                grid,
                widths[name],
                style,
                label=name,
                lw=3 if name == "new" else 1.5,
                alpha=0.6 if name == "new" else 1.0,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("b")
        ax.set_ylabel("width")
        ax.set_title(f"{panel.replace('_', ' ')}: B=1, eps=0.4, N={num_tasks}, t=4")
        ax.legend()
        ax.grid(alpha=0.3)
    save_figure(figure, path)
