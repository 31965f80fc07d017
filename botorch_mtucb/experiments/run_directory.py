"""An experiment's output directory: where each of its files goes, and its lock.

``RunDirectory`` spells the layout once; every experiment, ``run_methods``, the parallel
executor and ``run_experiment`` ask it for their paths::

    experiment.json             the run's settings (``claim``: a run with others is refused)
    summary.json                the results in the one schema (``summary``)
    curves.csv                  mean and sd of every curve per method and round (``tables``)
    <name>.png                  the plots (``plots``)
    runs/<method>/rep<k>.jsonl  one line per round, written as the round ends
    <sub-directory>/            the same layout for a panel, a configuration, a b sweep
    .lock, .lock-holder.json    the lock of the run using it (``output_lock``)

Whoever writes into a directory holds its lock (``locked``, re-entrant in a thread): one
run at a time, or two runs would interleave their rounds.

Result files (summary, CSV, plots) are written by ``write_result_file``, which replaces a
file in one step (``utils.files.write_atomically``): a reader never sees half a summary.
Inside ``collect_unwritten_files`` (``run_experiment`` runs every experiment in it) a
file that cannot be written (a read-only output directory) is listed instead of raising:
what it holds is recomputed from the run files on the next run, and the results are
printed all the same.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from botorch_mtucb.experiments.output_lock import HOLDER_FILE, LOCK_FILE, locked_output
from botorch_mtucb.utils.files import write_atomically

SETTINGS_FILE = "experiment.json"
SUMMARY_FILE = "summary.json"
CURVES_NAME = "curves"
RUNS_FOLDER = "runs"
RUN_FILE_SUFFIX = ".jsonl"
# The files that could not be written, inside ``collect_unwritten_files`` (else None).
_UNWRITTEN: ContextVar[list[tuple[Path, OSError]] | None] = ContextVar("unwritten", default=None)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


class RunDirectory(os.PathLike):
    """An experiment's output directory (module docstring): its files' paths and its lock.

    Args:
        path: The directory (a ``str``, a ``Path`` or a ``RunDirectory``); it need not
            exist. ``os.fspath`` and ``Path(...)`` give it back.

    Example:
        >>> from botorch_mtucb.experiments.run_directory import RunDirectory
        >>> directory = RunDirectory("results/000-sine")
        >>> directory.summary_file.as_posix(), directory.curves_file.name
        ('results/000-sine/summary.json', 'curves.csv')
        >>> directory.run_file("MT-CMM-UCB b=0.01", 2).as_posix()
        'results/000-sine/runs/MT-CMM-UCB_b_0.01/rep2.jsonl'
        >>> directory.sub("b_sweep").plot_file("cumulative_regret").as_posix()
        'results/000-sine/b_sweep/cumulative_regret.png'
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"RunDirectory({str(self.path)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunDirectory) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    # ---------------------------------------------------------------- the layout
    @property
    def settings_file(self) -> Path:
        """``experiment.json``: the settings of the run the directory holds."""
        return self.path / SETTINGS_FILE

    @property
    def summary_file(self) -> Path:
        """``summary.json``: the results in the one schema (``summary``)."""
        return self.path / SUMMARY_FILE

    @property
    def curves_file(self) -> Path:
        """``curves.csv``: mean and sd of every curve per method and round."""
        return self.csv_file(CURVES_NAME)

    def csv_file(self, name: str) -> Path:
        """The CSV file ``<name>.csv``.

        Example:
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> RunDirectory("out").csv_file("widths").as_posix()
            'out/widths.csv'
        """
        return self.path / f"{name}.csv"

    def plot_file(self, name: str) -> Path:
        """The plot ``<name>.png``.

        Example:
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> RunDirectory("out").plot_file("widths").as_posix()
            'out/widths.png'
        """
        return self.path / f"{name}.png"

    def curve_plot_file(self, curve: str, time_average: bool = False) -> Path:
        """The plot of ``curve`` against ``t`` (``average_<curve>.png`` for ``curve / t``).

        Example:
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> RunDirectory("out").curve_plot_file("cumulative_regret", True).name
            'average_cumulative_regret.png'
        """
        return self.plot_file(f"average_{curve}" if time_average else curve)

    def run_file(self, method: str, rep: int) -> Path:
        """The run file of repetition ``rep`` of ``method``: ``runs/<method>/rep<rep>.jsonl``
        (characters of ``method`` other than letters, digits and ``_.+-`` replaced by ``_``).

        Example:
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> RunDirectory("out").run_file("MT-KB (omega=0.2)", 0).as_posix()
            'out/runs/MT-KB__omega_0.2_/rep0.jsonl'
        """
        return self.path / RUNS_FOLDER / _safe_name(method) / f"rep{rep}{RUN_FILE_SUFFIX}"

    def sub(self, name: str) -> RunDirectory:
        """The sub-directory ``name`` (a panel, a configuration, a b sweep), same layout.

        Example:
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> RunDirectory("out").sub("rkhs-2").summary_file.as_posix()
            'out/rkhs-2/summary.json'
        """
        return RunDirectory(self.path / name)

    @property
    def lock_files(self) -> tuple[Path, Path]:
        """The lock's files: the holder's record and the lock file (``output_lock``)."""
        return self.path / HOLDER_FILE, self.path / LOCK_FILE

    def has_runs(self) -> bool:
        """Whether the directory holds a run file (at any depth).

        Example:
            >>> import tempfile
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> RunDirectory(tempfile.mkdtemp()).has_runs()
            False
        """
        return any(self.path.rglob(f"*{RUN_FILE_SUFFIX}"))

    # ------------------------------------------------------------ the lock
    @contextlib.contextmanager
    def locked(self) -> Iterator[RunDirectory]:
        """Hold the directory's lock (created if need be) for the block: the one way the
        package takes it (``output_lock.locked_output``; re-entrant in a thread).

        Yields:
            The directory.

        Raises:
            OutputLockedError: At once, if another process or thread holds it.
            OSError: If the directory cannot be created or its lock file opened.

        Example:
            >>> import tempfile
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> directory = RunDirectory(tempfile.mkdtemp())
            >>> with directory.locked(), directory.locked():  # re-entrant
            ...     print("running")
            running
        """
        with locked_output(self.path):
            yield self

    def remove_lock_files(self) -> None:
        """Remove the lock's files (call only when no run can use the directory any more:
        ``run_experiment`` does so for a directory it created and leaves empty).

        Example:
            >>> import tempfile
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> directory = RunDirectory(tempfile.mkdtemp())
            >>> with directory.locked():
            ...     pass
            >>> directory.remove_lock_files()
            >>> list(directory.path.iterdir())
            []
        """
        for path in self.lock_files:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

    # ------------------------------------------------------------ the claim
    def make(self) -> None:
        """Create the directory (and its parents), or check that it is one.

        Raises:
            ValueError: If it exists and is not a directory, or cannot be created.

        Example:
            >>> import pathlib, tempfile
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> directory = RunDirectory(pathlib.Path(tempfile.mkdtemp()) / "a" / "b")
            >>> directory.make()
            >>> directory.path.is_dir()
            True
        """
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"--output {self.path} exists and is not a directory")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"cannot create the output directory {self.path}: {error}") from error

    def claim(self, settings: dict[str, Any]) -> bool:
        """Check that the directory holds a run with ``settings``, or none yet (then record
        ``settings`` in ``experiment.json``).

        Returns:
            Whether the settings file was written now (a new run directory).

        Raises:
            ValueError: If it holds results of a run with other settings (resuming those
                would mix two runs), or run files without a settings file.

        Example:
            >>> import tempfile
            >>> from botorch_mtucb.experiments.run_directory import RunDirectory
            >>> directory = RunDirectory(tempfile.mkdtemp())
            >>> directory.claim({"experiment": "000-sine"}), directory.claim({"experiment": "000-sine"})
            (True, False)
            >>> directory.claim({"experiment": "000-rkhs-2"})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            ValueError: ... holds results of another run ({'experiment': '000-sine'}); ...
        """
        path = self.settings_file
        if path.exists():
            try:
                stored = json.loads(path.read_text())
            except (ValueError, OSError) as error:
                raise ValueError(
                    f"cannot read {path} ({error}); it records the settings of the run in "
                    f"{self.path}: restore it, or use another --output"
                ) from error
            if stored != settings:
                raise ValueError(
                    f"{self.path} holds results of another run ({stored}); this run is "
                    f"{settings}. Use another --output or delete that directory."
                )
            return False
        if self.has_runs():
            raise ValueError(
                f"{self.path} holds runs of unknown settings (no {SETTINGS_FILE}); use "
                "another --output or delete that directory"
            )
        path.write_text(json.dumps(settings, indent=2) + "\n")
        return True


# ------------------------------------------------------------------ result files
class UnwrittenFilesWarning(UserWarning):
    """Result files (summary, CSV, plots) could not be written, e.g. into a read-only
    output directory; the results were computed from complete run files and printed.

    Example:
        >>> from botorch_mtucb.experiments.run_directory import UnwrittenFilesWarning
        >>> issubclass(UnwrittenFilesWarning, UserWarning)
        True
    """


@contextlib.contextmanager
def collect_unwritten_files() -> Iterator[list[tuple[Path, OSError]]]:
    """Within the block, a result file that ``write_result_file`` cannot write (summary,
    CSV, plot) is appended to the yielded list as ``(path, error)`` instead of raising.

    Its content is computed from the run files, so nothing is lost: the results are
    printed all the same, and the file is written on a later run.

    Yields:
        The list of ``(path, OSError)``, in the order of the attempts.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.run_directory import (
        ...     collect_unwritten_files, write_result_file)
        >>> missing = pathlib.Path(tempfile.mkdtemp()) / "no-such-folder" / "summary.json"
        >>> with collect_unwritten_files() as unwritten:
        ...     write_result_file(missing, b"{}")
        >>> [(path.name, type(error).__name__) for path, error in unwritten]
        [('summary.json', 'FileNotFoundError')]
    """
    unwritten: list[tuple[Path, OSError]] = []
    token = _UNWRITTEN.set(unwritten)
    try:
        yield unwritten
    finally:
        _UNWRITTEN.reset(token)


def write_result_file(path: str | Path, data: bytes, make_folders: bool = False) -> None:
    """Replace the result file ``path`` by ``data`` in one step (``write_atomically``),
    creating its folders first if ``make_folders``.

    Raises:
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.run_directory import write_result_file
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "plots" / "a.png"
        >>> write_result_file(path, b"PNG", make_folders=True)
        >>> path.read_bytes()
        b'PNG'
    """
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


def remove_result_file(path: str | Path) -> None:
    """Remove the result file ``path`` if it exists: a plot that an older version of an
    experiment drew into the same directory and the current one no longer draws.

    Raises:
        OSError: If the file exists and cannot be removed (inside
            ``collect_unwritten_files`` it is listed instead, as a file not updated).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.run_directory import remove_result_file
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "bayes_regret.png"
        >>> _ = path.write_bytes(b"PNG")
        >>> remove_result_file(path); remove_result_file(path)  # a missing file is fine
        >>> path.exists()
        False
    """
    path = Path(path)
    if not path.exists():
        return
    try:
        path.unlink()
    except OSError as error:
        unwritten = _UNWRITTEN.get()
        if unwritten is None:
            raise
        unwritten.append((path, error))
