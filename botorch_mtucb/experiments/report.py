"""Run several methods over repetitions, then write ``summary.json``, curves and plots.

Layout of an output directory::

    runs/<method>/rep<k>.jsonl   one line per round, written as the round ends
    curves.csv                   per method and round: mean and sd over repetitions
    summary.json                 the final numbers per method
    <plot>.png                   mean +- sd bands

Re-running into the same directory resumes unfinished repetitions and reuses
finished ones (see ``botorch_mtucb.bandits.runner``).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm  # text bars everywhere: ipywidgets is not a dependency

from botorch_mtucb.bandits.runner import Environment, Policy, StepRecord, run_policy

# A curve computed from one repetition's records and its environment: T values.
CurveFunction = Callable[[Sequence[StepRecord], Environment], np.ndarray]


@dataclass
class Method:
    """A named method: builds a fresh policy and environment for repetition ``rep``."""

    name: str
    make_policy: Callable[[int], Policy]
    make_environment: Callable[[int], Environment]


@dataclass
class MethodResult:
    """Curves (``repetitions x T``) and per-repetition numbers of one method."""

    name: str
    curves: dict[str, np.ndarray] = field(default_factory=dict)
    seconds_per_step: list[float] = field(default_factory=list)
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)


def cumulative_regret_curve(records: Sequence[StepRecord], environment: Environment) -> np.ndarray:
    """``R_C(t) = sum_{s <= t} r_s``."""
    return np.cumsum([record.regret for record in records])


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


def run_methods(
    methods: Sequence[Method],
    horizon: int,
    repetitions: int,
    output: str | Path,
    seed: int = 0,
    curve_functions: Mapping[str, CurveFunction] | None = None,
    progress: bool = True,
) -> dict[str, MethodResult]:
    """Run every method for ``repetitions`` seeds (``seed + rep``) and collect curves.

    Repetition ``rep`` of every method uses the same seed, hence the same contexts
    and noise. ``curve_functions`` maps a curve name to a function of the records
    (``cumulative_regret`` is always computed).
    """
    output = Path(output)
    curve_functions = {"cumulative_regret": cumulative_regret_curve, **(curve_functions or {})}
    results = {method.name: MethodResult(method.name) for method in methods}
    bar = tqdm(total=len(methods) * repetitions, desc="runs", disable=not progress)
    for rep in range(repetitions):
        for method in methods:
            environment = method.make_environment(rep)
            policy = method.make_policy(rep)
            path = output / "runs" / _safe_name(method.name) / f"rep{rep}.jsonl"
            bar.set_postfix_str(f"{method.name} rep {rep}")
            records = run_policy(
                policy,
                environment,
                horizon,
                seed=seed + rep,
                path=path,
                progress=progress,
                description=f"{method.name} #{rep}",
                replay_finished=False,  # only the records are used below
            )
            result = results[method.name]
            for name, function in curve_functions.items():
                curve = np.asarray(function(records, environment), dtype=float)
                result.curves.setdefault(name, []).append(curve)
            result.seconds_per_step.append(float(np.mean([r.seconds for r in records])))
            keys = records[-1].diagnostics.keys() if records else ()
            for key in keys:
                values = [r.diagnostics.get(key, math.nan) for r in records]
                result.diagnostics.setdefault(key, []).append(np.asarray(values, dtype=float))
            bar.update(1)
    bar.close()
    for result in results.values():
        result.curves = {k: np.stack(v) for k, v in result.curves.items()}
        result.diagnostics = {k: np.stack(v) for k, v in result.diagnostics.items()}
    return results


def write_curves_csv(results: Mapping[str, MethodResult], path: str | Path) -> None:
    """One row per (method, round): mean and sd over repetitions of every curve."""
    path = Path(path)
    names = sorted({name for result in results.values() for name in result.curves})
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["method", "t"] + [f"{n}_{s}" for n in names for s in ("mean", "std")])
        for result in results.values():
            length = max(curve.shape[-1] for curve in result.curves.values())
            for t in range(length):
                row: list[Any] = [result.name, t + 1]
                for name in names:
                    curve = result.curves.get(name)
                    if curve is None or t >= curve.shape[-1]:
                        row += ["", ""]
                    else:
                        row += [f"{curve[:, t].mean():.10g}", f"{curve[:, t].std():.10g}"]
                writer.writerow(row)


def final_statistics(result: MethodResult, curve: str) -> tuple[float, float]:
    """Mean and sd over repetitions of the last value of ``curve``."""
    values = result.curves[curve][:, -1]
    return float(values.mean()), float(values.std())


def write_summary(summary: Mapping[str, Any], path: str | Path) -> None:
    """Write ``summary`` as indented JSON."""
    Path(path).write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")


def format_table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A plain-text table with aligned columns."""
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def plot_curves(
    results: Mapping[str, MethodResult],
    curve: str,
    path: str | Path,
    title: str,
    ylabel: str,
    time_average: bool = False,
    log_y: bool = False,
    ax=None,
) -> None:
    """Mean +- sd bands of ``curve`` for every method (divided by ``t`` if
    ``time_average``), saved as a PNG at ``path`` (unless drawing into ``ax``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    own_figure = ax is None
    if own_figure:
        figure, ax = plt.subplots(figsize=(5.5, 4))
    for result in results.values():
        if curve not in result.curves:
            continue
        values = result.curves[curve]
        t = np.arange(1, values.shape[-1] + 1)
        if time_average:
            values = values / t
        mean, std = values.mean(0), values.std(0)
        (line,) = ax.plot(t, mean, label=result.name)
        ax.fill_between(t, mean - std, mean + std, color=line.get_color(), alpha=0.2)
    ax.set_xlabel("round t")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if log_y:
        ax.set_yscale("log")
    ax.legend()
    ax.grid(alpha=0.3)
    if own_figure:
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        plt.close(figure)
