"""Files replaced in one step: a reader sees the old file or the new one, never a part.

``write_atomically`` writes a temporary file in the same directory, syncs it to disk and
renames it over the target, so a failure (a full disk, an interruption, a killed process)
leaves the target as it was. The run files of ``bandits``, the result files and lock
records of ``experiments`` and the stored runs of ``benchmarks`` are written with it.
``write_all`` and ``reraise_naming`` are its two pieces that an appending writer (a run
file) shares: every byte written through an unbuffered handle, and an ``OSError`` that
names the file the user knows rather than a temporary one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Any, NoReturn


def reraise_naming(error: OSError, path: str | Path) -> NoReturn:
    """Raise ``error`` again, of the same type, with ``path`` as its file name.

    An error without an ``errno`` is raised as it is.

    Raises:
        OSError: Always: ``error``'s type, errno and message, naming ``path``.

    Example:
        >>> from botorch_mtucb.utils.files import reraise_naming
        >>> try:
        ...     open("/no/such/folder/.x.tmp")
        ... except OSError as error:
        ...     try:
        ...         reraise_naming(error, "/no/such/folder/x")
        ...     except FileNotFoundError as named:
        ...         print(named.filename)
        /no/such/folder/x
    """
    if error.errno is None:
        raise error
    raise type(error)(error.errno, error.strerror, str(path)) from error


def write_all(handle: Any, data: bytes) -> None:
    """Write every byte of ``data`` to ``handle`` (an unbuffered write may write a part).

    Example:
        >>> import io
        >>> from botorch_mtucb.utils.files import write_all
        >>> handle = io.BytesIO()
        >>> write_all(handle, b"abc")
        >>> handle.getvalue()
        b'abc'
    """
    view = memoryview(data)
    while view:
        view = view[handle.write(view) :]


def _sync_directory(directory: Path) -> None:
    """Flush a rename in ``directory`` to disk, where the platform allows it."""
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def write_atomically(path: str | Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` by a file holding ``data``, in one step.

    ``data`` goes to a temporary file in the same directory, which is synced to disk
    (``fsync``) and renamed over ``path`` (``os.replace``): a reader sees the old file or
    the new one, never a part of it, and a failure (a full disk, an interruption) leaves
    ``path`` as it was.

    Args:
        path: The file to write (its directory must exist).
        data: Its new content.
        mode: Its permission bits (default: ``0o666`` less the umask, as ``open`` gives).

    Raises:
        OSError: If the file cannot be written (naming ``path``); ``path`` is unchanged.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.utils.files import write_atomically
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
        >>> write_atomically(path, b"first\\n")
        >>> write_atomically(path, b"second\\n")
        >>> path.read_text(), sorted(p.name for p in path.parent.iterdir())
        ('second\\n', ['notes.txt'])
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:
        reraise_naming(error, path)
    try:
        with open(descriptor, "wb", buffering=0) as handle:
            write_all(handle, data)
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            reraise_naming(error, path)
        raise
    _sync_directory(path.parent)
