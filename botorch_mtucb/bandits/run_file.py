"""The run file of one bandit run: JSON lines read back with checks, appended to as rounds
end, and repaired without ever losing a finished round.

Format: the first line is ``{"header": {...}}`` (what identifies the run: the policy's
name, the seed, its settings), then one ``StepRecord`` per round, in order: the ``k``-th
record is round ``t = k``. Blank lines are ignored.

Reading (``RunFile.read``) opens nothing for writing and checks the file:

* a last line cut short (no newline at its end, not a round): the normal trace of an
  interruption; that round is redone, silently;
* a line that is not a round followed by others (the file was damaged): the rounds before
  it are kept, the rest is recomputed, with a ``RunFileWarning`` naming the file, the line
  and the rounds recomputed; the damaged file is kept as ``<name>.damaged``;
* round numbers other than ``1, 2, ...`` (a round stored twice, a round missing, from two
  runs writing at once or an edit), a first line that is not a header, or the header of
  another run: ``ValueError`` naming the file (and the line): no guess may change a result.

Writing (``RunFile.appending``) never truncates: a sound file is appended to; one that
needs a repair is rewritten (header and kept rounds) into a temporary file of the same
directory, synced to disk and renamed over the original in one step
(``botorch_mtucb.utils.files.write_atomically``), so a failure (a full disk) leaves the
original as it was.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import math
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NoReturn

from botorch_mtucb.utils.files import reraise_naming, write_all, write_atomically


@dataclass
class StepRecord:
    """One round: what was chosen, observed and lost, and how long it took (seconds).

    Attributes:
        t: The round, ``1 .. T``.
        x: The action as JSON: the ``d`` floats of a point ``x_t``, or a structured
            action's ``to_json()`` (e.g. ``{"task": 2, "recommendations": [[...], ...]}``).
        y: The observation's floats.
        regret: The instantaneous regret (``>= 0``).
        seconds: Wall-clock time of ``select`` + ``observe`` + ``update``.
        context: The round's context without its ``_``-keys (weights, task, ...).
        diagnostics: The policy's ``diagnostics()`` after the update.

    Example:
        >>> from botorch_mtucb.bandits import StepRecord
        >>> record = StepRecord(t=1, x=[0.5], y=[1.2], regret=0.3, seconds=0.01)
        >>> record.x, record.regret
        ([0.5], 0.3)
    """

    t: int
    x: Any
    y: list[float]
    regret: float
    seconds: float
    context: dict[str, Any] = field(default_factory=dict)
    diagnostics: dict[str, Any] = field(default_factory=dict)


_RECORD_FIELDS = tuple(f.name for f in fields(StepRecord))


class RunFileWarning(UserWarning):
    """A run file held a line that is not a round, before others: the rounds from there on
    are recomputed, and the damaged file is kept next to it (``<name>.damaged``).

    Example:
        >>> import warnings
        >>> from botorch_mtucb.bandits.run_file import RunFileWarning
        >>> issubclass(RunFileWarning, UserWarning)
        True
    """


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_finite_number(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value)


def _finite_numbers(value: Any) -> bool:
    """A (nested) list of finite numbers, a structured action (a dict), or None."""
    if isinstance(value, list):
        return all(_finite_numbers(item) for item in value)
    return value is None or isinstance(value, dict | str) or _is_finite_number(value)


def _shape(value: Any) -> Any:
    """The nesting lengths of a list (what the rounds' ``x`` and ``y`` must share)."""
    if isinstance(value, list):
        return (len(value), _shape(value[0]) if value else None)
    return type(value).__name__


def _parse_record(line: bytes) -> tuple[StepRecord | None, str]:
    """The round on ``line``, or ``None`` and why it is not one."""
    try:
        value = json.loads(line)
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        return None, f"not JSON: {error}"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not a round"
    try:
        record = StepRecord(**value)
    except TypeError as error:
        return None, f"not a round: {error}"
    if isinstance(record.t, bool) or not isinstance(record.t, int):
        return None, f"its round t = {record.t!r} is not an integer"
    if not (_is_finite_number(record.regret) and _is_number(record.seconds)):
        return None, "its regret or seconds is not a (finite) number"
    if not isinstance(record.y, list) or not _finite_numbers(record.y):
        return None, "its observation y is not a list of finite numbers"
    if not _finite_numbers(record.x):
        return None, "its action x holds a value that is not a finite number"
    return record, ""


def _line(value: Any) -> bytes:
    return (json.dumps(value) + "\n").encode()


def _record_json(record: StepRecord) -> dict[str, Any]:
    """The record's fields in order (``dataclasses.asdict`` without its deep copy: the
    line is written at once)."""
    return {name: getattr(record, name) for name in _RECORD_FIELDS}


class RunFile:
    """One run's file of rounds (format and checks: module docstring): read back,
    appended to, repaired without losing a finished round.

    Args:
        path: The JSON-lines file; it need not exist (nor its directory).
        header: What identifies the run (``run_policy``: the policy's name, the seed and
            its settings); a file with another header is refused.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.bandits import StepRecord
        >>> from botorch_mtucb.bandits.run_file import RunFile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "rep0.jsonl"
        >>> run_file = RunFile(path, {"policy": "demo", "seed": 0})
        >>> run_file.read()
        []
        >>> with run_file.appending(horizon=2):
        ...     run_file.append(StepRecord(1, [0.5], [1.0], regret=0.2, seconds=0.01))
        >>> [record.t for record in RunFile(path, {"policy": "demo", "seed": 0}).read()]
        [1]
    """

    def __init__(self, path: str | Path, header: dict[str, Any]) -> None:
        self.path = Path(path)
        self.header = header
        self._reset()

    def _reset(self) -> None:
        self._records: list[StepRecord] = []
        self._has_header = False
        self._needs_newline = False  # the last line is complete but lacks its newline
        self._repair: str | None = None  # "torn" or "damaged": rewrite before appending
        self._damage: tuple[int, str, int] = (0, "", 0)  # line, reason, lines after it
        self._handle: Any = None
        self._was_read = False

    def _fail(self, number: int, problem: str) -> NoReturn:
        raise ValueError(
            f"{self.path}, line {number}: {problem}. The file cannot be trusted: move it "
            "away (its run is then recomputed) or restore it from a copy."
        )

    @property
    def damaged(self) -> bool:
        """Whether the last ``read`` found a line that is not a round before the last one
        (appending then keeps a ``.damaged`` copy and warns; module docstring).

        Example:
            >>> import pathlib, tempfile
            >>> from botorch_mtucb.bandits.run_file import RunFile
            >>> run_file = RunFile(pathlib.Path(tempfile.mkdtemp()) / "rep0.jsonl", {})
            >>> _ = run_file.read()
            >>> run_file.damaged
            False
        """
        return self._repair == "damaged"

    def read(self) -> list[StepRecord]:
        """The file's rounds, in order (``[]`` if there is no file); writes nothing.

        Returns:
            The records of rounds ``1 .. k`` before any damage (a cut-short last line or
            a line that is not a round: see the module docstring).

        Raises:
            ValueError: If the first line is not a header, the header is another run's,
                or a round number is not the next one (a round stored twice or missing),
                naming the file and the line.
            OSError: If the file exists but cannot be read.

        Example:
            >>> import pathlib, tempfile
            >>> from botorch_mtucb.bandits.run_file import RunFile
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "rep0.jsonl"
            >>> round_ = '{"t": 1, "x": [0.5], "y": [1.0], "regret": 0.2, "seconds": 0.1}'
            >>> _ = path.write_text('{"header": {"seed": 0}}\\n' + round_ + "\\n" + round_ + "\\n")
            >>> RunFile(path, {"seed": 0}).read()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            ValueError: .../rep0.jsonl, line 3: round 1 where round 2 belongs (round 1 is stored twice). ...
        """
        self._reset()
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self._was_read = True
            return []
        self._was_read = True
        physical = data.split(b"\n")
        lines = [(n, line) for n, line in enumerate(physical, 1) if line.strip()]
        if not lines:
            return []
        # A last line without its newline is where an interrupted write stopped.
        cut_short = lines[-1][0] == len(physical)  # (the last piece follows the last newline)
        number, line = lines[0]
        try:
            stored = json.loads(line)
        except ValueError as error:
            stored, reason = None, f"not JSON: {error}"
        else:
            reason = "no 'header' key"
        if not (isinstance(stored, dict) and "header" in stored):
            if cut_short and len(lines) == 1:  # interrupted while writing the header
                self._repair = "torn"
                return []
            self._fail(number, f"the first line is not a run file's header ({reason})")
        if stored["header"] != self.header:
            raise ValueError(
                f"{self.path} was written by a different run ({stored['header']}); expected "
                f"{self.header}. Use another output directory or delete the file to start "
                "afresh."
            )
        self._has_header = True
        for index, (number, line) in enumerate(lines[1:], 2):
            record, reason = _parse_record(line)
            if record is not None and self._records:
                first = self._records[0]
                if (_shape(record.x), _shape(record.y)) != (_shape(first.x), _shape(first.y)):
                    record, reason = None, "its x or y has another shape than round 1's"
            if record is None:
                if cut_short and index == len(lines):
                    self._repair = "torn"
                else:
                    self._repair = "damaged"
                    self._damage = (number, reason, len(lines) - index)
                return list(self._records)
            expected = len(self._records) + 1
            if record.t != expected:
                why = (
                    f"round {record.t} is stored twice"
                    if record.t < expected
                    else f"round {expected} is missing"
                )
                self._fail(number, f"round {record.t} where round {expected} belongs ({why})")
            self._records.append(record)
        self._needs_newline = bool(data) and not data.endswith(b"\n")
        return list(self._records)

    @contextlib.contextmanager
    def appending(self, horizon: int) -> Iterator[RunFile]:
        """Within the block, ``append`` writes rounds after those ``read`` returned.

        The file is created (with its header) if need be, repaired first if ``read``
        found damage (module docstring), then opened to append; nothing written before
        is truncated.

        Args:
            horizon: The last round of the run (for the warning naming the rounds that a
                repair recomputes).

        Raises:
            OSError: If the file cannot be written (naming it); every round finished
                before stays in it.

        Example:
            >>> import pathlib, tempfile
            >>> from botorch_mtucb.bandits import StepRecord
            >>> from botorch_mtucb.bandits.run_file import RunFile
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "rep0.jsonl"
            >>> run_file = RunFile(path, {"seed": 0})
            >>> with run_file.appending(horizon=1):
            ...     run_file.append(StepRecord(1, [0.5], [1.0], regret=0.2, seconds=0.01))
            >>> len(path.read_text().splitlines())
            2
        """
        if not self._was_read:
            self.read()  # never append to a file whose rounds were not checked
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._repair is not None:
                self._rewrite(horizon)
            self._handle = open(self.path, "ab", buffering=0)  # noqa: SIM115
        except OSError as error:
            reraise_naming(error, self.path)
        try:
            newline = b"\n" if self._needs_newline else b""
            if not self._has_header:
                self._write(newline + _line({"header": self.header}))
                self._has_header = True
            elif newline:
                self._write(newline)
            self._needs_newline = False
            yield self
        finally:
            handle, self._handle = self._handle, None
            handle.close()

    def append(self, record: StepRecord) -> None:
        """Write ``record``, the next round, as a line (inside ``appending``).

        Raises:
            ValueError: If ``record.t`` is not the next round.
            RuntimeError: Outside ``appending``.
            OSError: If the line cannot be written (naming the file).

        Example:
            >>> import pathlib, tempfile
            >>> from botorch_mtucb.bandits import StepRecord
            >>> from botorch_mtucb.bandits.run_file import RunFile
            >>> run_file = RunFile(pathlib.Path(tempfile.mkdtemp()) / "rep0.jsonl", {})
            >>> with run_file.appending(horizon=3):
            ...     run_file.append(StepRecord(2, [0.5], [1.0], regret=0.2, seconds=0.01))
            Traceback (most recent call last):
            ...
            ValueError: round 2 cannot follow round 0 in the run file
        """
        if self._handle is None:
            raise RuntimeError("RunFile.append writes inside `with run_file.appending(...)`")
        if record.t != len(self._records) + 1:
            raise ValueError(
                f"round {record.t} cannot follow round {len(self._records)} in the run file"
            )
        self._write(_line(_record_json(record)))
        self._records.append(record)

    def _write(self, data: bytes) -> None:
        try:
            write_all(self._handle, data)
        except OSError as error:
            reraise_naming(error, self.path)

    def _rewrite(self, horizon: int) -> None:
        """Replace the file by its header and the rounds ``read`` kept, atomically."""
        data = _line({"header": self.header}) + b"".join(
            _line(_record_json(record)) for record in self._records
        )
        damaged = self._keep_damaged_copy() if self._repair == "damaged" else None
        try:
            write_atomically(self.path, data, mode=self.path.stat().st_mode & 0o7777)
        except BaseException:
            if damaged is not None:
                with contextlib.suppress(OSError):
                    damaged.unlink()
            raise
        self._has_header, self._needs_newline, self._repair = True, False, None
        if damaged is not None:
            number, reason, after = self._damage
            first = len(self._records) + 1
            rounds = f"round {first}" if first >= horizon else f"rounds {first}-{horizon}"
            warnings.warn(
                f"{self.path}, line {number} is not a round ({reason}); it and the "
                f"{after} line(s) after it are set aside and {rounds} recomputed (the "
                f"damaged file is kept as {damaged})",
                RunFileWarning,
                stacklevel=4,
            )

    def _keep_damaged_copy(self) -> Path:
        """Keep the file as it is under a new name (a hard link, or a copy where the file
        system has none): ``<name>.damaged``, ``<name>.damaged-2``, ..."""
        for index in itertools.count(1):
            suffix = ".damaged" if index == 1 else f".damaged-{index}"
            copy = self.path.with_name(self.path.name + suffix)
            try:
                os.link(self.path, copy)
            except FileExistsError:
                continue
            except OSError as error:
                if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                    raise
                try:
                    with open(copy, "xb") as handle:
                        handle.write(self.path.read_bytes())
                except FileExistsError:
                    continue
            return copy
        raise AssertionError("unreachable")  # pragma: no cover
