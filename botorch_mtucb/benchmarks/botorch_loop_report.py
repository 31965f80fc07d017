r"""The tables and figure of ``benchmark botorch-loop`` (``botorch_loop``): final simple
regret and seconds per iteration per (problem, method), the width decomposition of the
martingale-mixture bounds, and the regret curves."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from matplotlib.figure import Figure

from botorch_mtucb.experiments.plots import save_figure

if TYPE_CHECKING:  # the run records of botorch_loop, which imports this module
    from botorch_mtucb.benchmarks.botorch_loop import LoopRun

BASELINE = "UCB(beta=0.2)"
SHARES = ("norm_share", "log_det_share", "confidence_share", "data_fit_share")


def table(runs: Sequence[LoopRun], problems: Sequence[str], methods: Sequence[str]) -> str:
    """Median and quartiles of the final simple regret and median s/iteration per
    (problem, method), with the time ratio to ``UCB(beta=0.2)``.

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopRun, table
        >>> runs = [LoopRun("branin", "random", s, [1.0, r], 0.01, None, {}) for s, r in
        ...         enumerate([0.1, 0.2, 0.3])]
        >>> print(table(runs, ["branin"], ["random"]).splitlines()[2])
        branin          random           0.2000   [0.1500, 0.2500]   3/3         0.010          -
    """
    lines = [
        f"{'problem':15s} {'method':14s} {'median':>8s}   {'quartiles':^18s}   {'runs':8s} "
        f"{'s/iter':>8s} {'vs UCB':>10s}",
        "-" * 93,
    ]
    for problem in problems:
        baseline = _median_seconds(runs, problem, BASELINE)
        for method in methods:
            chosen = [r for r in runs if r.problem == problem and r.method == method]
            complete = [r for r in chosen if r.error is None]
            if not complete:
                lines.append(f"{problem:15s} {method:14s} {'no complete run':>8s}")
                continue
            finals = [r.regret[-1] for r in complete]
            low, mid, high = quartiles(finals)
            seconds = _median_seconds(runs, problem, method)
            ratio = (
                "-"
                if baseline is None or method == BASELINE or baseline == 0
                else (f"{seconds / baseline:.2f}x")
            )
            lines.append(
                f"{problem:15s} {method:14s} {mid:8.4f}   [{low:.4f}, {high:.4f}]   "
                f"{len(complete)}/{len(chosen):<6d} {seconds:8.3f} {ratio:>10s}"
            )
    return "\n".join(lines)


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """The first quartile, median and third quartile of ``values`` (linear interpolation).

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop_report import quartiles
        >>> quartiles([0.0, 1.0, 2.0, 3.0, 4.0])
        (1.0, 2.0, 3.0)
    """
    tensor = torch.tensor(values, dtype=torch.float64)
    q = torch.quantile(tensor, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    return float(q[0]), float(q[1]), float(q[2])


def _median_seconds(runs: Sequence[LoopRun], problem: str, method: str) -> float | None:
    values = [
        r.seconds_per_iteration
        for r in runs
        if r.problem == problem and r.method == method and r.error is None
    ]
    return statistics.median(values) if values else None


def plot(
    runs: Sequence[LoopRun],
    problems: Sequence[str],
    methods: Sequence[str],
    path: Path,
    xlabel: str = "iteration",
    first: int = 0,
):
    """Median simple regret (log scale) against the iteration (``xlabel``; the first
    regret at ``first``), quartile bands, one panel per problem (three a row), drawn on a ``matplotlib`` ``Figure`` (no ``pyplot`` state, the backend
    left alone) and saved to ``path`` (PNG).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopRun, plot
        >>> runs = [LoopRun("branin", "random", 0, [1.0, 0.5], 0.01, None, {})]
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "loop.png"
        >>> plot(runs, ["branin"], ["random"], path); path.exists()
        True
    """
    columns = min(3, len(problems))
    rows = -(-len(problems) // columns)  # three panels a row
    figure = Figure(figsize=(5.5 * columns, 4 * rows))
    axes = figure.subplots(rows, columns, squeeze=False).reshape(-1)
    for axis in axes[len(problems) :]:
        axis.set_visible(False)
    for axis, problem in zip(axes, problems):
        for method in methods:
            curves = [
                r.regret
                for r in runs
                if r.problem == problem and r.method == method and not r.error
            ]
            if not curves:
                continue
            values = torch.tensor(curves, dtype=torch.float64).clamp_min(1e-8)
            q = torch.quantile(values, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64), dim=0)
            steps = range(first, first + values.shape[1])
            axis.plot(steps, q[1], label=method)
            axis.fill_between(steps, q[0], q[2], alpha=0.15)
        axis.set_yscale("log")
        axis.set_title(f"{problem} ({len(curves)} seeds)")
        axis.set_xlabel(xlabel)
        axis.set_ylabel("simple regret")
        axis.legend(fontsize=8)
    save_figure(figure, path, dpi=110)


def decomposition_table(runs, problems: Sequence[str], methods: Sequence[str]) -> str:
    r"""Medians over the seeds of the width terms (``width_terms``) at the chosen point,
    at the first, middle and last iteration, per problem, method and bound (exact, grid,
    analytic): ``sqrt(R~^2 / alpha)`` (the multiplier of ``rho_alpha``), the shares of
    ``R~_alpha^2`` (norm ``alpha B^2``, log-det, ``2 sigma^2 ln(1/delta)``, data fit),
    ``B``, ``sigma`` and ``c``, and for the exact bound its width in GP posterior standard
    deviations (``x sd``). The shares sum to 1; where the set is nearly one function
    (exact data, a stated precision, ``B`` from the data) ``R~^2`` is tiny and the norm
    and data-fit terms cancel (large shares of opposite signs). At the analytic bound's
    ``alpha = sigma^2 / c`` the data-fit term is 0.

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopRun
        >>> from botorch_mtucb.benchmarks.botorch_loop_report import decomposition_table
        >>> terms = {"norm_share": 0.5, "log_det_share": 0.3, "confidence_share": 0.1,
        ...          "data_fit_share": 0.1, "beta_sqrt": 4.0, "rkhs_norm_bound": 3.0,
        ...          "noise_std": 0.01, "mixture_scale": 1.0}
        >>> record = {k: dict(terms) for k in ("exact", "grid", "analytic")}
        >>> record["exact"]["gp_multiplier"] = 9.0
        >>> run = LoopRun("branin", "MM-UCB", 0, [1.0, 0.5], 0.1, None, {}, [record])
        >>> print(decomposition_table([run], ["branin"], ["MM-UCB"]).splitlines()[3])
        branin          MM-UCB          exact         1     4.00    9.00     0.50     0.30     0.10     0.10   3.00  0.0100  1.00
    """
    lines = [
        "width of the martingale-mixture bounds at the chosen point, medians over seeds: "
        "sqrt(R~^2/alpha) multiplies rho_alpha(x); x sd = (u - mu_gp) / sd_gp "
        "(UCB(beta=0.2): 0.45); shares of R~^2",
        f"{'problem':15s} {'method':15s} {'bound':9s} {'iter':>5s} {'beta^.5':>8s} "
        f"{'x sd':>7s} {'norm':>8s} {'ldet':>8s} {'conf':>8s} {'fit':>8s} {'B':>6s} "
        f"{'sigma':>7s} {'c':>5s}",
        "-" * 122,
    ]
    for problem in problems:
        for method in methods:
            chosen = [
                r.decomposition
                for r in runs
                if r.problem == problem and r.method == method and r.decomposition
            ]
            if not chosen:
                continue
            length = min(len(records) for records in chosen)
            for kind in ("exact", "grid", "analytic"):
                for index in sorted({0, (length - 1) // 2, length - 1}):
                    rows = [records[index][kind] for records in chosen]

                    def median(key, rows=rows):
                        return statistics.median(row.get(key, float("nan")) for row in rows)

                    sd = f"{median('gp_multiplier'):7.2f}" if kind == "exact" else f"{'':7s}"
                    shares = "".join(f" {median(key):8.2f}" for key in SHARES)
                    lines.append(
                        f"{problem:15s} {method:15s} {kind:9s} {index + 1:5d} "
                        f"{median('beta_sqrt'):8.2f} {sd}{shares} {median('rkhs_norm_bound'):6.2f} "
                        f"{median('noise_std'):7.4f} {median('mixture_scale'):5.2f}"
                    )
    return "\n".join(lines)
