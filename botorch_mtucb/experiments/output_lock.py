"""One run at a time in an output directory: a lock held for the whole run.

Two processes writing the same run files would interleave their rounds.
``locked_output(directory)`` therefore takes an operating-system lock (``filelock``:
``flock`` on Unix, ``LockFileEx`` on Windows) on ``directory/.lock`` for the block, at once
or not at all: another process gets ``OutputLockedError`` without waiting, naming the
directory and the holder, which records itself in ``directory/.lock-holder.json`` (pid,
host, start time, command line). The lock is the truth, the record only a description: the
lock ends with its process however that ends (a kill included), and a record left behind
by a killed process is replaced by the next holder.

The package takes it in one place, ``run_directory.RunDirectory.locked``. Within one
thread the lock is re-entrant (``run_experiment`` holds it, and the ``run_methods`` it
calls takes it again); another thread of the same process is refused, as another
process is. A directory this process cannot write to is read without a lock:
nothing can be written there, so nothing of another run can be mixed up (a run that needs
to write fails with an error naming the file).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import socket
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from botorch_mtucb.utils.files import write_atomically

LOCK_FILE = ".lock"
HOLDER_FILE = ".lock-holder.json"
_READ_ONLY_ERRNOS = (errno.EACCES, errno.EPERM, errno.EROFS)
_ENDED = "; that process has ended, so one it started holds the lock"
_held = threading.local()  # this thread's locks: resolved directory -> [lock, depth]


class OutputLockedError(RuntimeError):
    """Another process (or thread) holds the lock on an output directory.

    Attributes:
        directory: The directory.
        holder: What the holder recorded about itself (``pid``, ``host``, ``started``,
            ``command``), or ``None`` if nothing readable.

    Example:
        >>> from botorch_mtucb.experiments.output_lock import OutputLockedError
        >>> holder = {"pid": 41, "host": "node1", "started": "2026-01-01T10:00:00+00:00",
        ...           "command": "python -m botorch_mtucb run"}
        >>> print(OutputLockedError("results/run", holder))  # doctest: +NORMALIZE_WHITESPACE
        results/run is in use by another run (pid 41 on node1, started
        2026-01-01T10:00:00+00:00: python -m botorch_mtucb run); two runs in one directory
        would mix their rounds: wait for it to end, or use another output directory
    """

    def __init__(self, directory: str | Path, holder: dict[str, Any] | None) -> None:
        self.directory = Path(directory)
        self.holder = holder
        super().__init__(
            f"{directory} is in use by another run ({describe_holder(holder)}); two runs in "
            "one directory would mix their rounds: wait for it to end, or use another "
            "output directory"
        )


def _alive(pid: int) -> bool:
    if os.name != "posix":  # os.kill would end the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, but belongs to someone else
    return True


def describe_holder(holder: dict[str, Any] | None) -> str:
    """The holder of a lock in words: ``pid P on HOST, started TIME: COMMAND``.

    Args:
        holder: What ``read_holder`` returned.

    Example:
        >>> from botorch_mtucb.experiments.output_lock import describe_holder
        >>> describe_holder(None)
        'holder unknown: it has not recorded itself (yet)'
    """
    if holder is None:
        return "holder unknown: it has not recorded itself (yet)"
    pid, host = holder.get("pid"), holder.get("host")
    text = f"pid {pid} on {host}, started {holder.get('started')}: {holder.get('command')}"
    if host == socket.gethostname() and isinstance(pid, int) and not _alive(pid):
        text += _ENDED
    return text


def read_holder(directory: str | Path) -> dict[str, Any] | None:
    """What the holder of ``directory``'s lock recorded about itself, or ``None``.

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.output_lock import locked_output, read_holder
        >>> directory = tempfile.mkdtemp()
        >>> with locked_output(directory):
        ...     sorted(read_holder(directory))
        ['command', 'host', 'pid', 'started']
        >>> read_holder(directory) is None
        True
    """
    try:
        holder = json.loads((Path(directory) / HOLDER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def _current_holder(directory: Path, patience: float = 0.5) -> dict[str, Any] | None:
    """The holder's record; a holder that has just taken the lock writes it a moment
    later, so a missing or ended one is read again for up to ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while True:
        holder = read_holder(directory)
        fresh = holder is not None and not describe_holder(holder).endswith(_ENDED)
        if fresh or time.monotonic() > deadline:
            return holder
        time.sleep(0.02)


def _acquire(directory: Path) -> FileLock | None:
    """The lock on ``directory`` (``None`` for a directory this process cannot write)."""
    lock = FileLock(str(directory / LOCK_FILE), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise OutputLockedError(directory, _current_holder(directory)) from None
    except OSError as error:
        if error.errno in _READ_ONLY_ERRNOS and not os.access(directory, os.W_OK):
            return None
        raise
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": shlex.join(getattr(sys, "orig_argv", sys.argv)),
    }
    holder = directory / HOLDER_FILE
    with contextlib.suppress(OSError):  # the record only describes; the lock is held
        holder.unlink(missing_ok=True)  # a killed holder's record must not stay
        write_atomically(holder, (json.dumps(record) + "\n").encode())
    return lock


@contextlib.contextmanager
def locked_output(directory: str | Path) -> Iterator[Path]:
    """Hold the lock on ``directory`` (created if need be) for the block.

    Args:
        directory: An experiment's output directory.

    Yields:
        ``directory`` as a ``Path``.

    Raises:
        OutputLockedError: At once, if another process or thread holds it.
        OSError: If ``directory`` cannot be created or its lock file opened.

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.output_lock import locked_output
        >>> directory = tempfile.mkdtemp()
        >>> with locked_output(directory):
        ...     with locked_output(directory):  # re-entrant in one thread
        ...         print("running")
        running
    """
    directory = Path(directory)
    held: dict[Path, list[Any]] = _held.__dict__.setdefault("locks", {})
    key = directory.resolve()
    if key in held:
        held[key][1] += 1
        try:
            yield directory
        finally:
            held[key][1] -= 1
        return
    directory.mkdir(parents=True, exist_ok=True)
    lock = _acquire(directory)
    held[key] = [lock, 1]
    try:
        yield directory
    finally:
        del held[key]
        if lock is not None:
            with contextlib.suppress(OSError):
                (directory / HOLDER_FILE).unlink(missing_ok=True)  # before the lock ends
            lock.release()
