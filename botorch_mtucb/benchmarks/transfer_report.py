"""The tables of the ``transfer`` benchmark: regret at the checkpoints against single-task
BO, and the issue's aims (``transfer`` documents the runs)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from botorch_mtucb.benchmarks.botorch_loop_report import quartiles
from botorch_mtucb.experiments.tables import format_table

BASELINE = "ST-qLogNEI"


def table(
    runs: Sequence,
    problems: Sequence[str],
    methods: Sequence[str],
    settings,
) -> str:
    """Median [quartiles] regret at each checkpoint, the mean-regret ratio to ``BASELINE``
    and the median CPU seconds per iteration, one row per (problem, method).

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import TransferRun, TransferSettings
        >>> from botorch_mtucb.benchmarks.transfer_report import table
        >>> runs = [TransferRun("hpo-related", m, 0, [0.4, 0.2], 0.1, None, {}, [0, 1])
        ...         for m in ("random", "ST-qLogNEI")]
        >>> print(table(runs, ["hpo-related"], ["random", "ST-qLogNEI"], TransferSettings(2)))
        ... # doctest: +ELLIPSIS
        problem ...
    """
    checkpoints = settings.checkpoints()
    header = ["problem", "method", *(f"regret@{k}" for k in checkpoints), "vs ST", "s/iter", "runs"]
    rows = []
    for problem in problems:
        baseline = _mean_regret(runs, problem, BASELINE, checkpoints)
        for method in methods:
            done = [r for r in runs if r.problem == problem and r.method == method and not r.error]
            if not done:
                continue
            cells = []
            for k in checkpoints:
                low, mid, high = quartiles([r.regret[k - 1] for r in done])
                cells.append(f"{mid:.3g} [{low:.3g}, {high:.3g}]")
            mean = _mean_regret(runs, problem, method, checkpoints)
            ratio = "-" if not baseline else f"{mean / baseline:.2f}"
            seconds = statistics.median(r.seconds_per_iteration for r in done)
            rows.append([problem, method, *cells, ratio, f"{seconds:.2f}", str(len(done))])
    return format_table(rows, header)


def _mean_regret(runs, problem: str, method: str, checkpoints: Sequence[int]) -> float | None:
    values = [
        r.regret[k - 1]
        for r in runs
        if r.problem == problem and r.method == method and not r.error
        for k in checkpoints
    ]
    return statistics.fmean(values) if values else None


def aims(runs: Sequence, problems: Sequence[str], settings) -> str:
    """One line per (problem, multi-task method): its mean-regret ratio to single-task BO
    against the aim (``<= 0.70`` for ``*-related`` problems, ``<= 1.05`` otherwise).

    ``runs`` are ``transfer.TransferRun``; ``settings`` a ``transfer.TransferSettings``.

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import TransferRun, TransferSettings
        >>> from botorch_mtucb.benchmarks.transfer_report import aims
        >>> runs = [TransferRun("hpo-negated", m, 0, [0.4, r], 0.1, None, {}, [0, 1])
        ...         for m, r in (("ST-qLogNEI", 0.2), ("TC-UCB", 0.2))]
        >>> print(aims(runs, ["hpo-negated"], TransferSettings(2)))  # mean of 0.2 / 0.2
        hpo-negated            TC-UCB                1.00 (aim <= 1.05): met
    """
    lines = []
    checkpoints = settings.checkpoints()
    for problem in problems:
        baseline = _mean_regret(runs, problem, BASELINE, checkpoints)
        limit = 0.70 if problem.endswith("-related") else 1.05
        for method in sorted({r.method for r in runs if r.problem == problem}):
            mean = _mean_regret(runs, problem, method, checkpoints)
            if method in (BASELINE, "random") or mean is None or not baseline:
                continue
            ratio = mean / baseline
            verdict = "met" if ratio <= limit else "missed"
            lines.append(f"{problem:22s} {method:20s} {ratio:5.2f} (aim <= {limit:.2f}): {verdict}")
    return "\n".join(lines)
