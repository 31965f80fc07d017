"""Torch threads pinned for a block of work, the caller's setting restored after.

Small factorizations and vector operations are faster on one thread, and timings on a
shared machine are only comparable without threads waiting for each other. The command
line's ``--threads N`` sets the number for a whole run (``run_threads``); the experiments
and benchmarks pin it around their work (``pinned_threads``), and torch's own setting is
the caller's again once the block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import torch

_run_threads: contextvars.ContextVar[int] = contextvars.ContextVar(
    "botorch_mtucb_run_threads", default=1
)


@contextlib.contextmanager
def run_threads(threads: int) -> Iterator[int]:
    """Within the block, ``pinned_threads()`` pins ``threads`` torch threads (the run's
    ``--threads``; 1 outside any block).

    Args:
        threads: The run's torch threads.

    Yields:
        ``threads``.

    Example:
        >>> from botorch_mtucb.utils.threads import pinned_threads, run_threads
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
        >>> from botorch_mtucb.utils.threads import current_run_threads
        >>> current_run_threads()
        1
    """
    return _run_threads.get()


@contextlib.contextmanager
def pinned_threads(threads: int | None = None) -> Iterator[int]:
    """Run the block with ``threads`` torch threads and restore the caller's number after.

    Args:
        threads: Torch threads inside the block; ``<= 0`` keeps the current number;
            ``None``: the run's number (``run_threads``, default 1).

    Yields:
        The number of torch threads inside the block.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.threads import pinned_threads
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
