"""What the benchmarks that store one JSON file per run share: reading the settings a run
file records, and running jobs in order on ``workers`` processes, the queued ones dropped
on Ctrl-C or a failure (the files written so far are kept: the same command resumes)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any


def stored_settings(path: Path) -> dict | None:
    """The ``settings`` recorded in the run file at ``path`` (``None``: no readable file).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.stored_runs import stored_settings
        >>> stored_settings(pathlib.Path(tempfile.mkdtemp()) / "none.json") is None
        True
    """
    try:
        settings = json.loads(path.read_text()).get("settings")
    except (OSError, ValueError, AttributeError):
        return None
    return settings if isinstance(settings, dict) else None


def results_in_order(
    job: Callable[..., Any], arguments: Sequence[tuple], workers: int = 1
) -> Iterator[Any]:
    """``job(*a)`` for each ``a`` of ``arguments``, yielded in that order: in this process
    for ``workers == 1``, else on a pool of ``workers`` processes whose queued jobs are
    cancelled if the caller is interrupted or a job raises (the exception propagates).

    ``job`` must be picklable (a module-level function) when ``workers > 1``.

    Example:
        >>> from botorch_mtucb.benchmarks.stored_runs import results_in_order
        >>> list(results_in_order(pow, [(2, 3), (3, 2)]))
        [8, 9]
    """
    if workers == 1:
        for argument in arguments:
            yield job(*argument)
        return
    pool = ProcessPoolExecutor(workers)
    try:
        futures = [pool.submit(job, *argument) for argument in arguments]
        for future in futures:
            yield future.result()
    except BaseException:  # Ctrl-C or a failure: drop the queued jobs, keep the written
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def report_run(run: Any, seconds: str = "s/iteration") -> Any:
    """Print one line for a finished run (its problem, method, seed, final regret or
    ``FAILED``, and ``seconds_per_iteration`` in the unit ``seconds``); return ``run``.

    Example:
        >>> from types import SimpleNamespace
        >>> from botorch_mtucb.benchmarks.stored_runs import report_run
        >>> run = SimpleNamespace(problem="branin", method="random", seed=0, regret=[0.5],
        ...                       error=None, seconds_per_iteration=0.01)
        >>> _ = report_run(run)
        branin random seed 0: regret 0.5, 0.01 s/iteration
    """
    status = "FAILED" if run.error else f"regret {run.regret[-1]:.4g}"
    print(
        f"{run.problem} {run.method} seed {run.seed}: {status}, "
        f"{run.seconds_per_iteration:.2f} {seconds}",
        flush=True,
    )
    return run


def output_directory(parser: argparse.ArgumentParser, output: str) -> Path:
    """``output`` as a directory, created if needed (``parser.error`` if it cannot be).

    Example:
        >>> import argparse, pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.stored_runs import output_directory
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs"
        >>> output_directory(argparse.ArgumentParser(), str(path)).is_dir()
        True
    """
    path = Path(output)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        parser.error(f"--output {path}: cannot create the directory ({error})")
    return path


def interrupted(output: Path) -> int:
    """After Ctrl-C: say how many run files ``output`` keeps and that the same command
    resumes (on standard error); the exit code 130.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.stored_runs import interrupted
        >>> interrupted(pathlib.Path(tempfile.mkdtemp()))
        130
    """
    written = len(list(output.glob("*.json")))
    print(
        f"\ninterrupted: {written} run file(s) in {output}; the same command resumes",
        file=sys.stderr,
    )
    return 130


def report_failures(runs: Sequence[Any]) -> int:
    """Print the traceback of every run that raised (standard error); 1 if one did, else 0.

    Example:
        >>> from types import SimpleNamespace
        >>> from botorch_mtucb.benchmarks.stored_runs import report_failures
        >>> report_failures([SimpleNamespace(error=None)])
        0
    """
    failed = [run for run in runs if run.error]
    for run in failed:
        print(f"\n{run.problem} {run.method} seed {run.seed} raised:\n{run.error}", file=sys.stderr)
    return 1 if failed else 0


def stored_and_missing(
    paths: Sequence[Path], load: Callable[[Path], Any], settings: dict, fresh: bool = False
) -> tuple[list[Any], list[int]]:
    """The complete runs already stored at ``paths`` (``load(path)``, ``None`` for a run
    to do; all to do if ``fresh``) and the positions of the runs to do; prints how many
    are reused.

    Raises:
        ValueError: If a file holds a run of other ``settings`` and not ``fresh``: another
            experiment's runs are never overwritten without being told.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.stored_runs import stored_and_missing
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> stored_and_missing([folder / "a.json"], lambda path: None, {"iterations": 3})
        ([], [0])
    """
    runs, missing, other = [], [], []
    for position, path in enumerate(paths):
        stored = None if fresh else load(path)
        if stored is not None:
            runs.append(stored)
            continue
        recorded = stored_settings(path)
        if not fresh and recorded not in (None, settings):
            other.append(recorded)
        missing.append(position)
    if other:
        folder = Path(paths[0]).parent
        raise ValueError(
            f"{folder} holds {len(other)} run(s) of other settings (e.g. {other[0]}, these "
            f"are {settings}): give another --output, or --fresh to replace them"
        )
    if runs:
        folder = Path(paths[0]).parent
        print(f"{len(runs)} run(s) already in {folder} (--fresh recomputes them)", flush=True)
    return runs, missing
