"""Read-only directories for the tests, for every user.

``chmod a-w`` does not stop root (the tests may run as root), so ``read_only(directory)``
also installs an audit hook (``sys.addaudithook``, once per process) that refuses, with
``PermissionError(EACCES)`` as the kernel would, every opening for writing, rename, link,
removal, creation or truncation of a path inside the watched directories, and makes
``os.access(path, os.W_OK)`` false there. Every attempt is also recorded, so a test can
check that nothing even tried to write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

_WATCHED: list[str] = []
ATTEMPTS: list[tuple[str, str]] = []  # (event, path) of every refused attempt
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_ONE_PATH = {"os.remove", "os.rmdir", "os.mkdir", "os.truncate", "os.chmod", "os.utime"}
_TWO_PATHS = {"os.rename", "os.link", "os.symlink"}
_installed = False
_access = os.access


def _inside(path: object) -> bool:
    if isinstance(path, int) or path is None:  # a descriptor: opened earlier
        return False
    name = os.path.abspath(os.fsdecode(path))
    return any(name == d or name.startswith(d + os.sep) for d in _WATCHED)


def _hook(event: str, args: tuple) -> None:
    if not _WATCHED:
        return
    if event == "open":
        targets = [args[0]] if args[2] & _WRITE_FLAGS else []
    elif event in _ONE_PATH:
        targets = [args[0]]
    elif event in _TWO_PATHS:
        targets = list(args[:2])
    else:
        return
    for target in targets:
        if _inside(target):
            ATTEMPTS.append((event, os.fsdecode(target)))
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(target))


def _no_write_access(path, mode, *args, **kwargs):
    if mode & os.W_OK and _inside(path):
        return False
    return _access(path, mode, *args, **kwargs)


def chmod_tree(directory: Path, remove: bool) -> None:
    """Remove the write bits of ``directory`` and everything in it, or give them back
    (to the owner)."""
    write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    for path in [directory, *directory.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~write if remove else mode | stat.S_IWUSR)


@contextlib.contextmanager
def read_only(directory: str | Path) -> Iterator[list[tuple[str, str]]]:
    """Within the block, nothing inside ``directory`` can be written (module docstring);
    yields the live list of the attempts refused (``(event, path)``)."""
    global _installed
    directory = Path(directory).resolve()
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    chmod_tree(directory, remove=True)  # what stops a user who is not root
    ATTEMPTS.clear()
    _WATCHED.append(str(directory))
    os.access = _no_write_access
    try:
        yield ATTEMPTS
    finally:
        _WATCHED.remove(str(directory))
        os.access = _access
        chmod_tree(directory, remove=False)


def protect_and_run_cli(directory: str, argv: list[str]) -> None:
    """``python -m botorch_mtucb ARGV`` with ``directory`` read-only (for a subprocess:
    the hook stays installed until the process ends)."""
    import runpy

    context = read_only(directory)
    context.__enter__()
    sys.argv = ["botorch_mtucb", *argv]
    runpy.run_module("botorch_mtucb", run_name="__main__", alter_sys=True)
