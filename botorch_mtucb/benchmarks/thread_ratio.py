"""What a second torch thread costs: one function timed with 1 and 2 torch threads, on
the machine as it is ("idle") and with another core kept busy ("busy").

Every BLAS call and every torch operation above torch's grain size opens a thread team;
with two threads, each team waits for its second thread at a barrier, and that thread
then spins before it sleeps. When the other core is busy (another process, another
user) the second thread must wait for a time slice there, so a computation made of many
small operations can run several times slower with 2 threads than with 1. The package
never changes a user's thread setting; its hot paths are made of few operations instead,
and ``thread_ratios`` measures the result: the ratio of the median wall-clock seconds
with ``threads[1]`` threads to those with ``threads[0]``, idle and busy, each run of
each thread count alternating in the same process (the same load for both). The busy
case starts one busy-loop Python process for its measurements and always ends it (on
errors too; an orphaned loop ends itself when its parent is gone).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.utils.threads import pinned_threads

# The busy loop: says it runs, then spins until killed or orphaned (its parent gone).
_BUSY_LOOP = (
    "import os, sys\n"
    "parent = int(sys.argv[1])\n"
    "print('ready', flush=True)\n"
    "count = 0\n"
    "while True:\n"
    "    count += 1\n"
    "    if count % 1000000 == 0 and os.getppid() != parent:\n"
    "        break\n"
)


@contextlib.contextmanager
def busy_core() -> Iterator[subprocess.Popen]:
    """Keep one core busy for the block: a Python busy loop in a child process, started
    (and running) when the block starts and killed when it ends, however it ends.

    Yields:
        The busy-loop process.

    Example:
        >>> from botorch_mtucb.benchmarks.thread_ratio import busy_core
        >>> with busy_core() as process:
        ...     running = process.poll() is None
        >>> running, process.poll() is not None  # ended with the block
        (True, True)
    """
    process = subprocess.Popen(
        [sys.executable, "-c", _BUSY_LOOP, str(os.getpid())],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        process.stdout.readline()  # "ready": the loop runs
        yield process
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def _seconds(function: Callable[[], Any], threads: int) -> tuple[float, float]:
    """Wall-clock and process CPU seconds of one call with ``threads`` torch threads."""
    with pinned_threads(threads):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        return time.perf_counter() - wall, time.process_time() - cpu


def _measure(function: Callable[[], Any], threads: Sequence[int], repeats: int) -> dict[str, Any]:
    """Median wall-clock and CPU seconds per thread count, the runs alternating."""
    runs: dict[int, list[tuple[float, float]]] = {n: [] for n in threads}
    for _ in range(repeats):
        for n in threads:
            runs[n].append(_seconds(function, n))
    seconds = {n: statistics.median(wall for wall, _ in runs[n]) for n in threads}
    cpu = {n: statistics.median(used for _, used in runs[n]) for n in threads}
    first, second = threads[0], threads[-1]
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "ratio": seconds[second] / seconds[first],
        "cpu_ratio": cpu[second] / cpu[first] if cpu[first] > 0 else float("nan"),
    }


def thread_ratios(
    function: Callable[[], Any],
    threads: Sequence[int] = (1, 2),
    repeats: int = 5,
    busy: bool = True,
    warmup: int = 1,
) -> dict[str, Any]:
    """Time ``function()`` with each number of torch ``threads``, idle and with another
    core busy (``busy_core``); the caller's thread setting is restored after.

    The ratio is ``median wall seconds with threads[-1] / median with threads[0]``
    (``cpu_ratio``: the same with the process's CPU seconds, which count a spinning
    thread's time too); the runs of the thread counts alternate, ``repeats`` each, after
    ``warmup`` untimed calls per count.

    Args:
        function: What to time (no arguments; its result is dropped).
        threads: Torch thread counts, each ``>= 1`` (the first is the baseline).
        repeats: Timed runs per thread count and case, ``>= 1``.
        busy: Also measure with another core busy.
        warmup: Untimed calls per thread count before each case.

    Returns:
        ``{"threads": threads, "idle": case, "busy": case}`` (``"busy"`` only with
        ``busy``), each case ``{"seconds": {n: s}, "cpu_seconds": {n: s}, "ratio": r,
        "cpu_ratio": r}``.

    Raises:
        ValueError: For ``repeats < 1``, ``warmup < 0``, or fewer than two thread
            counts or one below 1.

    Example:
        >>> from botorch_mtucb.benchmarks.thread_ratio import thread_ratios
        >>> result = thread_ratios(lambda: sum(range(1000)), repeats=1)
        >>> sorted(result), sorted(result["idle"]["seconds"]), result["busy"]["ratio"] > 0
        (['busy', 'idle', 'threads'], [1, 2], True)
    """
    threads = tuple(int(n) for n in threads)
    if len(threads) < 2 or min(threads) < 1:
        raise ValueError(f"threads must be at least two counts >= 1, got {threads}")
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats} and {warmup}")

    def case() -> dict[str, Any]:
        for _ in range(warmup):
            for n in threads:
                _seconds(function, n)
        return _measure(function, threads, repeats)

    result: dict[str, Any] = {"threads": threads, "idle": case()}
    if busy:
        with busy_core():
            result["busy"] = case()
    return result


def thread_ratio_table(rows: Sequence[tuple[str, dict[str, Any]]], label: str = "") -> str:
    """The table of ``thread_ratios`` results, one row per ``(label, result)`` (``label``:
    the first column's header): the median seconds with each thread count and the
    ratio, idle and busy (``-``: not measured).

    Example:
        >>> from botorch_mtucb.benchmarks.thread_ratio import thread_ratio_table
        >>> case = {"seconds": {1: 0.1, 2: 0.12}, "ratio": 1.2}
        >>> table = thread_ratio_table([("t = 10", {"threads": (1, 2), "idle": case})])
        >>> table.splitlines()[-1].split()
        ['t', '=', '10', '0.1', '0.12', '1.20', '-', '-', '-']
    """
    if not rows:
        return ""
    first, second = rows[0][1]["threads"][0], rows[0][1]["threads"][-1]

    def cells(result: dict[str, Any], name: str) -> list[str]:
        found = result.get(name)
        if found is None:
            return ["-", "-", "-"]
        seconds = found["seconds"]
        return [f"{seconds[first]:.3g}", f"{seconds[second]:.3g}", f"{found['ratio']:.2f}"]

    header = [label]
    for name in ("idle", "busy"):
        header += [f"{name} {first} thr s", f"{name} {second} thr s", f"{name} {second}/{first}"]
    table = [[label, *cells(result, "idle"), *cells(result, "busy")] for label, result in rows]
    return format_table(table, header)
