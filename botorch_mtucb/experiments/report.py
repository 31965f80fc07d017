"""What every experiment reports: ``summary.json``, ``curves.csv``, tables and plots, and
the two guards every experiment runs under (one torch thread, known options only).

Every experiment, single- or multi-problem, writes ``summary.json`` in one schema::

    {
      "experiment": "000-rkhs-20",
      "settings": {"horizon": 60, "repetitions": 3, "quick": true, ...},
      "problems": {
        "rkhs-20": {
          "methods": {
            "MT-KB": {"cumulative_regret_mean": 8.24, "cumulative_regret_std": 2.85, ...},
            ...
          },
          ...
        }
      }
    }

* ``settings``: what holds for the whole run (horizon, repetitions, ``quick``, delta,
  the machine, ...).
* ``problems``: one entry per problem or configuration, by label (a single-problem
  experiment has one label). Each holds ``methods`` and the problem's own numbers (the
  swept ``b`` of paper 001, the kernel of a paper-002 configuration, the paper's values).
* ``methods``: per method, the final cumulative regret ``R_C(T)``, mean and standard
  deviation over the repetitions (``cumulative_regret_mean``, ``cumulative_regret_std``),
  then the method's own numbers (``seconds_per_step``, ``bayes_regret_mean``, ...).
  ``methods`` is empty for an experiment that runs no bandit (``001-widths``).

``build_summary`` builds it, ``check_summary`` checks it (the tests call it on every
experiment), ``write_summary`` writes it.

Every file written here replaces the previous one in one step (``write_atomically``): a
reader never sees half a summary. Inside ``collect_unwritten_files`` (``run_experiment``
runs every experiment in it) a file that cannot be written (a read-only output directory)
is listed instead of raising: what it holds is recomputed from the run files on the next
run, and the results are printed all the same.
"""

from __future__ import annotations

import contextlib
import contextvars
import csv
import io
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from botorch_mtucb.bandits.run_file import write_atomically
from botorch_mtucb.experiments.runs import MethodResult

SUMMARY_KEYS = ("experiment", "settings", "problems")
REGRET_KEYS = ("cumulative_regret_mean", "cumulative_regret_std")
# The files that could not be written, inside ``collect_unwritten_files`` (else None).
_UNWRITTEN: ContextVar[list[tuple[Path, OSError]] | None] = ContextVar("unwritten", default=None)


# ------------------------------------------------------------------ writing files
class UnwrittenFilesWarning(UserWarning):
    """Result files (summary, CSV, plots) could not be written, e.g. into a read-only
    output directory; the results were computed from complete run files and printed.

    Example:
        >>> from botorch_mtucb.experiments.report import UnwrittenFilesWarning
        >>> issubclass(UnwrittenFilesWarning, UserWarning)
        True
    """


@contextlib.contextmanager
def collect_unwritten_files() -> Iterator[list[tuple[Path, OSError]]]:
    """Within the block, a file of this module's writers (summary, CSV, plot) that cannot
    be written is appended to the yielded list as ``(path, error)`` instead of raising.

    Its content is computed from the run files, so nothing is lost: the results are
    printed all the same, and the file is written on a later run.

    Yields:
        The list of ``(path, OSError)``, in the order of the attempts.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.report import collect_unwritten_files, write_summary
        >>> from botorch_mtucb.experiments.report import build_summary, problem_summary
        >>> summary = build_summary("x", {}, {"p": problem_summary({})})
        >>> missing = pathlib.Path(tempfile.mkdtemp()) / "no-such-folder" / "summary.json"
        >>> with collect_unwritten_files() as unwritten:
        ...     write_summary(summary, missing)
        >>> [(path.name, type(error).__name__) for path, error in unwritten]
        [('summary.json', 'FileNotFoundError')]
    """
    unwritten: list[tuple[Path, OSError]] = []
    token = _UNWRITTEN.set(unwritten)
    try:
        yield unwritten
    finally:
        _UNWRITTEN.reset(token)


def _write_file(path: str | Path, data: bytes, make_folders: bool = False) -> None:
    path = Path(path)
    try:
        if make_folders:
            path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data)
    except OSError as error:
        unwritten = _UNWRITTEN.get()
        if unwritten is None:
            raise
        unwritten.append((path, error))


def _csv_bytes(rows: Iterator[Sequence[Any]]) -> bytes:
    text = io.StringIO(newline="")
    csv.writer(text).writerows(rows)
    return text.getvalue().encode()


# ---------------------------------------------------------------- summary schema
def final_statistics(result: MethodResult, curve: str) -> tuple[float, float]:
    """Mean and standard deviation over repetitions of the last value of ``curve``.

    Raises:
        KeyError: If ``result`` has no curve ``curve``.

    Example:
        >>> import numpy as np
        >>> from botorch_mtucb.experiments.report import final_statistics
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("A", {"cumulative_regret": np.array([[1.0, 2.0], [1.0, 4.0]])})
        >>> final_statistics(result, "cumulative_regret")
        (3.0, 1.0)
    """
    values = result.curves[curve][:, -1]
    return float(values.mean()), float(values.std())


def method_summary(result: MethodResult, **extras: Any) -> dict[str, Any]:
    """One method's entry: ``R_C(T)`` mean and sd, mean seconds per step, then ``extras``.

    Example:
        >>> import numpy as np
        >>> from botorch_mtucb.experiments.report import method_summary
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("A", {"cumulative_regret": np.array([[1.0], [3.0]])}, [0.5, 1.5])
        >>> method_summary(result, final_dictionary_size=4.0)
        {'cumulative_regret_mean': 2.0, 'cumulative_regret_std': 1.0, 'seconds_per_step': 1.0, 'final_dictionary_size': 4.0}
    """
    mean, std = final_statistics(result, "cumulative_regret")
    return {
        "cumulative_regret_mean": mean,
        "cumulative_regret_std": std,
        "seconds_per_step": float(np.mean(result.seconds_per_step)),
        **extras,
    }


def problem_summary(methods: Mapping[str, Mapping[str, Any]], **extras: Any) -> dict[str, Any]:
    """One problem's entry: ``{"methods": methods, **extras}``.

    Example:
        >>> from botorch_mtucb.experiments.report import problem_summary
        >>> problem_summary({}, b=0.01)
        {'methods': {}, 'b': 0.01}
    """
    return {"methods": dict(methods), **extras}


def _json_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"summary values must be JSON numbers, strings or lists; got {type(value)}")


def build_summary(
    experiment: str, settings: Mapping[str, Any], problems: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The ``summary.json`` content of an experiment, in the one schema (module docstring).

    Tensors and NumPy values become lists and numbers, tuples become lists, so the
    returned dict equals what ``json.loads`` reads back from the file.

    Args:
        experiment: The experiment's registered name.
        settings: What holds for the whole run.
        problems: Label -> ``problem_summary(...)``.

    Raises:
        ValueError: If the result does not follow the schema (``check_summary``).
        TypeError: If a value cannot be written as JSON.

    Example:
        >>> from botorch_mtucb.experiments.report import build_summary, problem_summary
        >>> entry = {"cumulative_regret_mean": 8.2, "cumulative_regret_std": 2.8}
        >>> summary = build_summary(
        ...     "000-rkhs-20", {"horizon": 60}, {"rkhs-20": problem_summary({"MT-KB": entry})})
        >>> summary["problems"]["rkhs-20"]["methods"]["MT-KB"]["cumulative_regret_mean"]
        8.2
    """
    summary = {"experiment": experiment, "settings": dict(settings), "problems": dict(problems)}
    summary = json.loads(json.dumps(summary, default=_json_value))
    check_summary(summary)
    return summary


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_summary(summary: Mapping[str, Any]) -> None:
    """Check that ``summary`` follows the one schema (module docstring).

    Raises:
        ValueError: Naming the first key that is missing or of the wrong kind: the
            top-level keys must be exactly ``experiment`` (a non-empty string),
            ``settings`` (a mapping) and ``problems`` (a non-empty mapping); every
            problem holds ``methods``, and every method ``cumulative_regret_mean``
            (finite) and ``cumulative_regret_std`` (finite, ``>= 0``).

    Example:
        >>> from botorch_mtucb.experiments.report import check_summary
        >>> check_summary({"experiment": "x", "settings": {}, "problems": {"p": {}}})
        Traceback (most recent call last):
        ...
        ValueError: summary['problems']['p'] has no 'methods'
    """
    if not isinstance(summary, Mapping) or set(summary) != set(SUMMARY_KEYS):
        keys = sorted(summary) if isinstance(summary, Mapping) else type(summary).__name__
        raise ValueError(f"a summary has exactly the keys {list(SUMMARY_KEYS)}, got {keys}")
    if not isinstance(summary["experiment"], str) or not summary["experiment"]:
        raise ValueError(
            f"summary['experiment'] must name the experiment, got {summary['experiment']!r}"
        )
    if not isinstance(summary["settings"], Mapping):
        raise ValueError("summary['settings'] must be a mapping")
    problems = summary["problems"]
    if not isinstance(problems, Mapping) or not problems:
        raise ValueError("summary['problems'] must be a non-empty mapping label -> problem")
    for label, problem in problems.items():
        where = f"summary['problems'][{label!r}]"
        if not isinstance(problem, Mapping) or "methods" not in problem:
            raise ValueError(f"{where} has no 'methods'")
        if not isinstance(problem["methods"], Mapping):
            raise ValueError(f"{where}['methods'] must be a mapping method -> numbers")
        for method, entry in problem["methods"].items():
            for key in REGRET_KEYS:
                value = entry.get(key) if isinstance(entry, Mapping) else None
                if not _is_number(value) or not math.isfinite(value):
                    raise ValueError(
                        f"{where}['methods'][{method!r}][{key!r}] must be a finite number, "
                        f"got {value!r}"
                    )
            if entry["cumulative_regret_std"] < 0:
                raise ValueError(
                    f"{where}['methods'][{method!r}] has a negative standard deviation"
                )


def write_summary(summary: Mapping[str, Any], path: str | Path) -> None:
    """Check ``summary`` (``check_summary``) and write it to ``path`` as indented JSON.

    Raises:
        ValueError: If ``summary`` does not follow the schema.
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.report import (
        ...     build_summary, problem_summary, write_summary)
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "summary.json"
        >>> write_summary(build_summary("x", {}, {"p": problem_summary({})}), path)
        >>> path.read_text().startswith('{\\n  "experiment": "x"')
        True
    """
    check_summary(summary)
    _write_file(path, (json.dumps(summary, indent=2, sort_keys=False) + "\n").encode())


# ------------------------------------------------------------------------- CSV
def write_curves_csv(results: Mapping[str, MethodResult], path: str | Path) -> None:
    """One row per (method, round ``t``): mean and sd over repetitions of every curve.

    Columns: ``method``, ``t`` (1-based), then ``<curve>_mean`` and ``<curve>_std`` for
    every curve name (sorted); a curve a method lacks, or shorter than ``t``, is empty.

    Raises:
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.report import write_curves_csv
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

    _write_file(path, _csv_bytes(rows()))


def combine_curves_csv(parts: Mapping[str, str | Path], path: str | Path, column: str) -> None:
    """Concatenate CSV files with the same header into ``path``, with a first column
    ``column`` holding each part's label.

    Raises:
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.report import combine_curves_csv
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

    _write_file(path, _csv_bytes(rows()))


# ---------------------------------------------------------------------- tables
def format_table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """A plain-text table with left-aligned columns two spaces apart.

    Example:
        >>> from botorch_mtucb.experiments.report import format_table
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
        >>> from botorch_mtucb.experiments.report import method_table
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
        >>> from botorch_mtucb.experiments.report import grid_table
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


# ----------------------------------------------------------------------- plots
def plot_curves(
    ax: Axes,
    results: Mapping[str, MethodResult],
    curve: str,
    title: str,
    ylabel: str,
    time_average: bool = False,
    log_y: bool = False,
) -> None:
    """Draw the mean +- sd band of ``curve`` over rounds ``t`` for every method on ``ax``
    (divided by ``t`` if ``time_average``); methods without ``curve`` are skipped.

    Example:
        >>> import numpy as np
        >>> from matplotlib.figure import Figure
        >>> from botorch_mtucb.experiments.report import plot_curves
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> ax = Figure().subplots()
        >>> result = MethodResult("A", {"cumulative_regret": np.ones((2, 5))})
        >>> plot_curves(ax, {"A": result}, "cumulative_regret", "title", "R_C(t)")
        >>> [line.get_label() for line in ax.get_lines()]
        ['A']
    """
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


def save_figure(figure: Figure, path: str | Path, dpi: int = 120) -> None:
    """Lay ``figure`` out tightly and save it as a PNG at ``path`` (folders created).

    Raises:
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import pathlib, tempfile
        >>> from matplotlib.figure import Figure
        >>> from botorch_mtucb.experiments.report import save_figure
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
    _write_file(path, image.getvalue(), make_folders=True)


def save_curves_plot(
    results: Mapping[str, MethodResult],
    curve: str,
    path: str | Path,
    title: str,
    ylabel: str,
    time_average: bool = False,
) -> None:
    """``plot_curves`` on a figure of its own, saved as a PNG at ``path``.

    Example:
        >>> import numpy as np, pathlib, tempfile
        >>> from botorch_mtucb.experiments.report import save_curves_plot
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("A", {"cumulative_regret": np.ones((2, 5))})
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "regret.png"
        >>> save_curves_plot({"A": result}, "cumulative_regret", path, "title", "R_C(t)")
        >>> path.exists()
        True
    """
    figure = Figure(figsize=(5.5, 4))
    plot_curves(figure.subplots(), results, curve, title, ylabel, time_average)
    save_figure(figure, path)


# ---------------------------------------------------------------------- guards
_run_threads: contextvars.ContextVar[int] = contextvars.ContextVar(
    "botorch_mtucb_run_threads", default=1
)


@contextlib.contextmanager
def run_threads(threads: int) -> Iterator[int]:
    """Within the block, the experiments run on ``threads`` torch threads
    (``pinned_threads()``; ``--threads``, default 1).

    Example:
        >>> from botorch_mtucb.experiments.report import pinned_threads, run_threads
        >>> with run_threads(2), pinned_threads() as threads:
        ...     threads
        2
    """
    token = _run_threads.set(threads)
    try:
        yield threads
    finally:
        _run_threads.reset(token)


def current_run_threads() -> int:
    """The torch threads of the enclosing ``run_threads`` block (1 outside any).

    Example:
        >>> from botorch_mtucb.experiments.report import current_run_threads
        >>> current_run_threads()
        1
    """
    return _run_threads.get()


@contextlib.contextmanager
def pinned_threads(threads: int | None = None) -> Iterator[int]:
    """Run the block with ``threads`` torch threads and restore the caller's number after.

    Small factorizations and vector operations are faster on one thread, and timings
    on a shared machine are only comparable without threads waiting for each other.

    Args:
        threads: Torch threads inside the block; ``<= 0`` keeps the current number;
            ``None``: the run's number (``run_threads``, default 1).

    Yields:
        The number of torch threads inside the block.

    Example:
        >>> import torch
        >>> from botorch_mtucb.experiments.report import pinned_threads
        >>> before = torch.get_num_threads()
        >>> with pinned_threads(1) as threads:
        ...     threads, torch.get_num_threads()
        (1, 1)
        >>> torch.get_num_threads() == before
        True
    """
    if threads is None:
        threads = current_run_threads()
    previous = torch.get_num_threads()
    if threads > 0:
        torch.set_num_threads(threads)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(previous)


def experiment_options(
    experiment: str, options: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """The options an experiment accepts, with ``defaults`` where absent or ``None``.

    Args:
        experiment: The experiment's name (for the error message).
        options: What the caller passed (``--data``, or sizes that tests shrink).
        defaults: Option name -> default value: the options the experiment accepts.

    Raises:
        ValueError: If ``options`` holds a name that is not in ``defaults``.

    Example:
        >>> from botorch_mtucb.experiments.report import experiment_options
        >>> experiment_options("000-sine", {"horizon": 3}, {"horizon": 200, "repetitions": 10})
        {'horizon': 3, 'repetitions': 10}
        >>> experiment_options("000-sine", {"data": "x.npz"}, {"horizon": 200})
        Traceback (most recent call last):
        ...
        ValueError: experiment '000-sine' takes no option(s) ['data'] (its options, keyword
        arguments of run_experiment: ['horizon'])
    """
    unknown = set(options) - set(defaults)
    if unknown:
        raise ValueError(
            f"experiment {experiment!r} takes no option(s) {sorted(unknown)} (its options, "
            f"keyword arguments of run_experiment: {sorted(defaults)})"
        )
    return {
        key: default if options.get(key) is None else options[key]
        for key, default in defaults.items()
    }
