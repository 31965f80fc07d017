"""The ``mt-bkb-scaling`` benchmark's report: MT-KB's cost fitted as ``c t^p`` (to
extrapolate where it was not measured), the ratios KB / BKB per ``t``, the table of the
plain route against the tracked one, and the plot of the cost per step and the
dictionary size against ``t``, drawn on a ``matplotlib`` ``Figure``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from botorch_mtucb.experiments.plots import save_figure
from botorch_mtucb.experiments.tables import format_table


def fit_power_law(ts: Sequence[float], costs: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``cost = c t^p`` in log-log; returns ``(c, p)``.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling_report import fit_power_law
        >>> c, p = fit_power_law([10, 100], [2.0, 200.0])
        >>> round(c, 6), round(p, 6)
        (0.02, 2.0)
    """
    slope, intercept = np.polyfit(np.log(ts), np.log(costs), 1)
    return float(math.exp(intercept)), float(slope)


def plot(
    results: Sequence[dict[str, Any]], path: str | Path, fit: tuple[float, float] | None
) -> None:
    """Per-step cost against ``t`` (MT-KB measured and fitted, MT-BKB) and MT-BKB's
    dictionary size, on log-log axes, saved as a PNG at ``path``.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling_report import plot
        >>> results = [{"t": t, "mt_kb": {"seconds_per_step": 0.01 * t},
        ...             "mt_bkb": {"seconds_per_step": 0.01, "dictionary_size": t}} for t in (10, 20)]
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "scaling.png"
        >>> plot(results, path, fit=(0.01, 1.0))
        >>> path.exists()
        True
    """
    ts = [r["t"] for r in results]
    figure = Figure(figsize=(11, 4))
    left, right = figure.subplots(1, 2)
    measured = [(r["t"], r["mt_kb"]["seconds_per_step"]) for r in results if r["mt_kb"]]
    if measured:
        left.plot(*zip(*measured), "o-", label="MT-KB (measured)")
    if fit is not None:
        grid = np.geomspace(min(ts), max(ts), 50)
        left.plot(
            grid,
            fit[0] * grid ** fit[1],
            "--",
            color="C0",
            alpha=0.6,
            label=f"MT-KB fit ~ t^{fit[1]:.2f}",
        )
    left.plot(ts, [r["mt_bkb"]["seconds_per_step"] for r in results], "s-", label="MT-BKB")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("round t")
    left.set_ylabel("seconds per step (select + update)")
    left.set_title("Per-step cost, 20-task RKHS problem")
    left.grid(alpha=0.3, which="both")
    left.legend()
    right.plot(
        ts,
        [r["mt_bkb"]["dictionary_size"] for r in results],
        "s-",
        color="C1",
        label="dictionary size m_t",
    )
    right.plot(ts, ts, ":", color="gray", label="t (every point)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("round t")
    right.set_ylabel("points")
    right.set_title("MT-BKB's dictionary")
    right.grid(alpha=0.3, which="both")
    right.legend()
    for ax in (left, right):  # label the measured t (minor labels would overlap)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(ts, [str(t) for t in ts])
    right.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    right.set_yticks(ts, [str(t) for t in ts])
    save_figure(figure, path)


def add_ratios(results: list[dict[str, Any]]) -> tuple[float, float] | None:
    """Fit MT-KB's cost on the measured ``t >= 1000`` (all measured ``t`` if fewer than
    two), then set each entry's ``mt_kb_seconds``, ``ratio`` (KB / BKB) and
    ``ratio_kind`` (``"measured"``, ``"extrapolated"`` or ``"none"``).

    Returns:
        The fit ``(c, p)`` of ``fit_power_law``, or ``None`` with fewer than two measured.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling_report import add_ratios
        >>> results = [{"t": t, "mt_kb": {"seconds_per_step": 0.001 * t},
        ...             "mt_bkb": {"seconds_per_step": 0.01}} for t in (10, 20)]
        >>> results.append({"t": 40, "mt_kb": None, "mt_bkb": {"seconds_per_step": 0.01}})
        >>> c, p = add_ratios(results)
        >>> round(p, 6), round(results[2]["ratio"], 6), results[2]["ratio_kind"]
        (1.0, 4.0, 'extrapolated')
    """
    measured = [r for r in results if r["mt_kb"] and r["t"] >= 1000] or [
        r for r in results if r["mt_kb"]
    ]
    fit = None
    if len(measured) >= 2:
        fit = fit_power_law(
            [r["t"] for r in measured], [r["mt_kb"]["seconds_per_step"] for r in measured]
        )
    for r in results:
        if r["mt_kb"]:
            kb, kind = r["mt_kb"]["seconds_per_step"], "measured"
        elif fit is not None:
            kb, kind = fit[0] * r["t"] ** fit[1], "extrapolated"
        else:
            kb, kind = math.nan, "none"
        r["mt_kb_seconds"], r["ratio"], r["ratio_kind"] = (
            kb,
            kb / r["mt_bkb"]["seconds_per_step"],
            kind,
        )
    return fit


def plain_table(results: Sequence[dict[str, Any]]) -> str:
    """Seconds per step with the candidate tracking (the default) and on the plain
    route (``--plain``), their speedups, and the KB / BKB ratio of each route
    (``-``: not measured).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling_report import plain_table
        >>> step = lambda s: {"seconds_per_step": s}
        >>> entry = {"t": 10, "mt_kb": step(0.5), "mt_kb_plain": step(1.0),
        ...          "mt_bkb": step(0.01), "mt_bkb_plain": step(0.04)}
        >>> table = plain_table([entry])
        >>> "4.0x" in table and "50.0" in table and "25.0" in table
        True
    """

    def cost(entry: dict[str, Any], key: str) -> float | None:
        value = entry.get(key)
        return None if value is None else value["seconds_per_step"]

    def text(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    def ratio(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a / b

    rows = []
    for r in results:
        kb, kb0 = cost(r, "mt_kb"), cost(r, "mt_kb_plain")
        bkb, bkb0 = cost(r, "mt_bkb"), cost(r, "mt_bkb_plain")
        rows.append(
            [
                str(r["t"]),
                text(kb0, ".4f"),
                text(kb, ".4f"),
                text(ratio(kb0, kb), ".1f") + "x",
                text(bkb0, ".4f"),
                text(bkb, ".4f"),
                text(ratio(bkb0, bkb), ".1f") + "x",
                text(ratio(kb0, bkb0), ".1f"),
                text(ratio(kb, bkb), ".1f"),
            ]
        )
    header = [
        "t",
        "MT-KB plain",
        "MT-KB tracked",
        "speedup",
        "MT-BKB plain",
        "MT-BKB tracked",
        "speedup",
        "KB/BKB plain",
        "KB/BKB tracked",
    ]
    return (
        "Seconds per step, plain route (no candidate tracking) against tracked (the "
        "default), measured in this run\n" + format_table(rows, header)
    )
