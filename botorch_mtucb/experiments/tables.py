"""Tables and CSV files of an experiment's results: the printed tables (plain text,
columns two spaces apart; methods as rows, or methods by problems as in paper 002's
Table 1) and ``curves.csv`` (mean and sd over repetitions of every curve, per method and
round), each CSV file replaced in one step (``run_directory.write_result_file``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from botorch_mtucb.experiments.run_directory import write_result_file
from botorch_mtucb.experiments.runs import MethodResult


def format_table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """A plain-text table with left-aligned columns two spaces apart.

    Example:
        >>> from botorch_mtucb.experiments.tables import format_table
        >>> print(format_table([["MT-KB", "8.2"]], ["method", "R_C(T)"]))  # doctest: +NORMALIZE_WHITESPACE
        method  R_C(T)
        ------  ------
        MT-KB   8.2
    """
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def method_table(
    methods: Mapping[str, Mapping[str, Any]],
    columns: Mapping[str, Callable[[Mapping[str, Any]], str]],
) -> str:
    """One row per method of a problem's ``methods``: ``columns`` maps a header to the
    function that formats a method's entry.

    Example:
        >>> from botorch_mtucb.experiments.tables import method_table
        >>> methods = {"MT-KB": {"cumulative_regret_mean": 8.24}}
        >>> columns = {"R_C(T)": lambda e: f"{e['cumulative_regret_mean']:.1f}"}
        >>> print(method_table(methods, columns))  # doctest: +NORMALIZE_WHITESPACE
        method  R_C(T)
        ------  ------
        MT-KB   8.2
    """
    rows = [[name] + [cell(entry) for cell in columns.values()] for name, entry in methods.items()]
    return format_table(rows, ["method", *columns])


def grid_table(
    problems: Mapping[str, Mapping[str, Any]],
    cell: Callable[[Mapping[str, Any], str], str | None],
    methods: Sequence[str] | None = None,
) -> str:
    """Methods as rows, problems as columns (the layout of paper 002's Table 1).

    Args:
        problems: A summary's ``problems``.
        cell: ``(problem entry, method) -> text``, or ``None`` (printed ``-``).
        methods: The rows (default: every method of ``problems``, in order of appearance).

    Example:
        >>> from botorch_mtucb.experiments.tables import grid_table
        >>> problems = {"RBF": {"methods": {"A": {"cumulative_regret_mean": 3.0}}}}
        >>> def mean(problem, method):
        ...     entry = problem["methods"].get(method)
        ...     return None if entry is None else f"{entry['cumulative_regret_mean']:.1f}"
        >>> print(grid_table(problems, mean, methods=["A", "B"]))  # doctest: +NORMALIZE_WHITESPACE
        method  RBF
        ------  ---
        A       3.0
        B       -
    """
    if methods is None:
        methods = list(
            dict.fromkeys(m for problem in problems.values() for m in problem["methods"])
        )
    rows = []
    for method in methods:
        texts = [cell(problem, method) for problem in problems.values()]
        rows.append([method] + ["-" if text is None else text for text in texts])
    return format_table(rows, ["method", *problems])


# ------------------------------------------------------------------------- CSV
def _csv_bytes(rows: Iterator[Sequence[Any]]) -> bytes:
    text = io.StringIO(newline="")
    csv.writer(text).writerows(rows)
    return text.getvalue().encode()


def write_curves_csv(results: Mapping[str, MethodResult], path: str | Path) -> None:
    """One row per (method, round ``t``): mean and sd over repetitions of every curve.

    Columns: ``method``, ``t`` (1-based), then ``<curve>_mean`` and ``<curve>_std`` for
    every curve name (sorted); a curve a method lacks, or shorter than ``t``, is empty.

    Raises:
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.tables import write_curves_csv
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "curves.csv"
        >>> curves = {"cumulative_regret": np.array([[1.0, 2.0], [3.0, 4.0]])}
        >>> write_curves_csv({"A": MethodResult("A", curves)}, path)
        >>> path.read_text().splitlines()
        ['method,t,cumulative_regret_mean,cumulative_regret_std', 'A,1,2,1', 'A,2,3,1']
    """
    names = sorted({name for result in results.values() for name in result.curves})

    def rows() -> Iterator[list[Any]]:
        yield ["method", "t"] + [f"{n}_{s}" for n in names for s in ("mean", "std")]
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
                yield row

    write_result_file(path, _csv_bytes(rows()))


def combine_curves_csv(parts: Mapping[str, str | Path], path: str | Path, column: str) -> None:
    """Concatenate CSV files with the same header into ``path``, with a first column
    ``column`` holding each part's label.

    Raises:
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.tables import combine_curves_csv
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.csv").write_text("t,y\\n1,2\\n")
        >>> _ = (folder / "b.csv").write_text("t,y\\n1,5\\n")
        >>> parts = {"a": folder / "a.csv", "b": folder / "b.csv"}
        >>> combine_curves_csv(parts, folder / "all.csv", "panel")
        >>> (folder / "all.csv").read_text().splitlines()
        ['panel,t,y', 'a,1,2', 'b,1,5']
    """

    def rows() -> Iterator[list[Any]]:
        for index, (label, part) in enumerate(parts.items()):
            with Path(part).open(newline="") as source:
                lines = list(csv.reader(source))
            if index == 0:
                yield [column, *lines[0]]
            yield from ([label, *row] for row in lines[1:])

    write_result_file(path, _csv_bytes(rows()))
