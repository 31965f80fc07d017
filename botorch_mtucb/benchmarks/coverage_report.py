r"""The ``coverage`` benchmark's statistics and report: one run's outcome, the
Clopper-Pearson interval of a violation rate, a row per bound, the printed table and the
JSON / CSV files.

The slack of a run is its smallest margin ``1 - d / h`` over rounds and checked points
(``h``: the half-width of the band or the radius of the ball, ``d``: the distance of
``f`` from its centre): ``1`` with ``f`` at the centre, ``0`` on an edge, negative
outside (``-inf`` for an empty confidence set).
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scipy.stats import beta as beta_distribution

from botorch_mtucb.experiments.tables import format_table

LEVEL = 0.95

SLACK_DEFINITION = (
    "slack = min over rounds t = 0..T and checked points of 1 - d/h (h: half-width of "
    "the band or radius of the ball, d: distance of f from its centre; 0 on the edge, "
    "< 0 outside; -inf: an empty confidence set); median and minimum over runs.\n"
    "t viol. = medians over the violated runs of the first and the last violated round "
    "(0: the prior, before any observation).\n"
    "delta = the failure probability each bound is run at; paper 001's widths are called "
    "with delta / 2 (Theorem 1 holds with probability 1 - 2 delta).\n"
    "check: 'yes' if the rate is <= delta within its interval; control rows (told B/4) "
    "must show violations, proof that the check can fail."
)


@dataclass(frozen=True)
class RunOutcome:
    """One run of one bound: whether ``f`` left the band, the run's slack (smallest
    margin), the first and last rounds ``t`` (observations seen) where it was outside and
    whether the run ended on an empty confidence set.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage_report import RunOutcome
        >>> RunOutcome(slack=0.4).violated
        False
    """

    slack: float
    first_violation: int | None = None
    last_violation: int | None = None
    empty_set: bool = False

    @property
    def violated(self) -> bool:
        """Whether ``f`` was outside the band at some round and point."""
        return self.first_violation is not None


def clopper_pearson(successes: int, trials: int, level: float = LEVEL) -> tuple[float, float]:
    r"""The Clopper-Pearson (exact binomial) interval of a proportion.

    ``[Beta_{a/2}(k, n - k + 1), Beta_{1 - a/2}(k + 1, n - k)]`` with ``a = 1 - level``
    (lower end 0 for ``k = 0``, upper end 1 for ``k = n``).

    Raises:
        ValueError: Unless ``0 <= successes <= trials`` and ``trials >= 1``.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage_report import clopper_pearson
        >>> [round(x, 4) for x in clopper_pearson(0, 10)]  # 1 - 0.025^(1/10)
        [0.0, 0.3085]
    """
    if not (trials >= 1 and 0 <= successes <= trials):
        raise ValueError(
            f"need 0 <= successes <= trials and trials >= 1, got {successes}, {trials}"
        )
    alpha = 1.0 - level
    lower = (
        0.0
        if successes == 0
        else beta_distribution.ppf(alpha / 2, successes, trials - successes + 1)
    )
    upper = (
        1.0
        if successes == trials
        else beta_distribution.ppf(1 - alpha / 2, successes + 1, trials - successes)
    )
    return float(lower), float(upper)


@dataclass(frozen=True)
class RowResult:
    """One row of the table: a bound told ``norm_factor * B``, its runs' violations,
    their rate with its Clopper-Pearson interval, the slack's median and minimum, the
    medians of the first and last violated rounds, and the wall time.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage_report import RunOutcome, summarize
        >>> row = summarize("MT-KB", "000 Thm 1-2", 1.0, 0.5, [RunOutcome(0.3)] * 4, 1.0)
        >>> row.violations, round(row.interval[1], 4), row.valid
        (0, 0.6024, True)
    """

    name: str
    source: str
    norm_factor: float
    delta: float
    runs: int
    violations: int
    rate: float
    interval: tuple[float, float]
    slack_median: float
    slack_min: float
    first_violation_median: float | None
    last_violation_median: float | None
    empty_sets: int
    seconds: float

    @property
    def control(self) -> bool:
        """Whether the bound was told ``B / 4`` (a control)."""
        return self.norm_factor != 1.0

    @property
    def label(self) -> str:
        """The bound's name, with ``told B/4`` for a control."""
        return f"{self.name} told B/4" if self.control else self.name

    @property
    def valid(self) -> bool:
        """Whether the rate is compatible with ``<= delta`` (the interval's lower end)."""
        return self.interval[0] <= self.delta


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(
    name: str,
    source: str,
    factor: float,
    delta: float,
    outcomes: Sequence[RunOutcome],
    seconds: float,
) -> RowResult:
    """The row of ``outcomes`` (see ``RowResult``).

    Example:
        >>> from botorch_mtucb.benchmarks.coverage_report import RunOutcome, summarize
        >>> outcomes = [RunOutcome(-0.5, 0, 3), RunOutcome(0.2)]
        >>> row = summarize("CMM", "002", 0.25, 0.5, outcomes, 1.0)
        >>> row.violations, row.rate, row.slack_median, row.last_violation_median
        (1, 0.5, -0.15, 3)
    """
    violated = [outcome for outcome in outcomes if outcome.violated]
    slacks = [outcome.slack for outcome in outcomes]
    return RowResult(
        name,
        source,
        factor,
        delta,
        len(outcomes),
        len(violated),
        len(violated) / len(outcomes),
        clopper_pearson(len(violated), len(outcomes)),
        statistics.median(slacks),
        min(slacks),
        _median([o.first_violation for o in violated]),
        _median([o.last_violation for o in violated]),
        sum(outcome.empty_set for outcome in outcomes),
        seconds,
    )


def _verdict(row: RowResult) -> str:
    if row.control:
        return "fails, as it must" if row.violations else "NO VIOLATION"
    return "yes" if row.valid else "NO"


def _rounds(row: RowResult) -> str:
    if row.first_violation_median is None:
        return "-"
    return f"{row.first_violation_median:g}-{row.last_violation_median:g}"


TABLE_HEADER = [
    "bound",
    "source",
    "told",
    "R",
    "viol.",
    "rate",
    "95% CI",
    "delta",
    "slack med",
    "slack min",
    "t viol.",
    "check",
]


def table(results: Sequence[RowResult]) -> str:
    """The printed table of ``results``; ``t viol.`` gives the medians of the first and
    last rounds with a violation (controls are played to the end).

    Example:
        >>> from botorch_mtucb.benchmarks.coverage_report import RunOutcome, summarize, table
        >>> row = summarize("MT-KB", "000 Thm 1-2", 1.0, 0.5, [RunOutcome(0.3)] * 4, 1.0)
        >>> print(table([row]).splitlines()[2])  # doctest: +NORMALIZE_WHITESPACE
        MT-KB  000 Thm 1-2  B  4  0  0.000  [0.000, 0.602]  0.5  0.300  0.300  -  yes
    """
    lines = [
        [
            row.name,
            row.source,
            "B/4" if row.control else "B",
            row.runs,
            row.violations,
            f"{row.rate:.3f}",
            f"[{row.interval[0]:.3f}, {row.interval[1]:.3f}]",
            f"{row.delta:g}",
            f"{row.slack_median:.3f}",
            f"{row.slack_min:.3f}",
            _rounds(row),
            _verdict(row),
        ]
        for row in results
    ]
    return format_table(lines, TABLE_HEADER)


def write_outputs(
    results: Sequence[RowResult], settings: Mapping[str, Any], path: str | Path
) -> None:
    """``path`` (JSON: settings, the slack's definition and the rows) and ``path`` with
    ``.csv`` (one line per row).

    Example:
        >>> import json, pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.coverage_report import (
        ...     RunOutcome, summarize, write_outputs)
        >>> row = summarize("MT-KB", "000 Thm 1-2", 1.0, 0.5, [RunOutcome(0.3)] * 4, 1.0)
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "coverage.json"
        >>> write_outputs([row], {"runs": 4, "delta": 0.5}, path)
        >>> json.loads(path.read_text())["rows"][0]["violations"]
        0
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{**asdict(row), "interval": list(row.interval)} for row in results]
    summary = {"settings": dict(settings), "slack": SLACK_DEFINITION, "rows": rows}
    path.write_text(json.dumps(summary, indent=2) + "\n")
    with path.with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
