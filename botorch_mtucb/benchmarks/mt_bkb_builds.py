"""The building-from-data part of the ``mt-bkb-scaling`` benchmark and its memory
measurements.

The benchmark's data (``data``: points drawn uniformly from the 20-task RKHS problem's
domain, noisy values of ``f``) and the three builds it times from the ``t - 1`` rows
(``BUILDS``): the exact ``VectorValuedGP``, ``NystromVectorValuedGP`` with its default
schedule (adaptive chunks) and with ``chunk_size=1`` (Algorithm 2 replayed row by row).
Each build's seconds are the median of ``timeit`` runs in this process, one build after
the other (``measure_builds``); its peak memory is measured in a fresh Python process per
build (``peak_build_bytes``: the process's peak resident set size ``VmHWM``, reset just
before the build, minus its resident size then: it sees torch's CPU allocations, which
``tracemalloc`` does not). ``build_table`` prints both, with the ratios to the exact
build of the same run. ``build_thread_ratios`` times the sketch's build (default
schedule) with 1 and 2 torch threads, idle and with another core busy
(``thread_ratio.thread_ratios``), and ``thread_table`` prints the ratios.
"""

from __future__ import annotations

import math
import resource
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from botorch_mtucb.benchmarks.thread_ratio import thread_ratio_table, thread_ratios
from botorch_mtucb.benchmarks.timing import median_seconds
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.problems import MultiTaskProblem, rkhs_problem

NUM_TASKS = 20  # the 20-task RKHS problem of paper 000, Figure 1 (c)


def data(problem: MultiTaskProblem, size: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``size`` points drawn uniformly from the domain (``size x d``) and noisy values of
    ``f`` (``size x n``).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import data
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> X, Y = data(rkhs_problem(2, seed=0), 5)
        >>> tuple(X.shape), tuple(Y.shape)
        ((5, 1), (5, 2))
    """
    generator = torch.Generator().manual_seed(seed)
    points = problem.domain.points
    X = points[torch.randint(0, points.shape[0], (size,), generator=generator)]
    noise = torch.randn(size, problem.num_tasks, generator=generator, dtype=X.dtype)
    return X, problem.objective(X) + problem.noise_std * noise


def available_memory() -> float:
    """Bytes of memory available (``MemAvailable`` of ``/proc/meminfo``; inf elsewhere).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import available_memory
        >>> available_memory() > 0
        True
    """
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return float(line.split()[1]) * 1024
    except OSError:
        pass
    return math.inf


BUILDS = ("exact", "nystrom", "replay")
BUILD_LABELS = {
    "exact": "VectorValuedGP",
    "nystrom": "Nystrom (adaptive, default)",
    "replay": "Nystrom chunk_size=1",
}
MEMORY_METHOD = (
    "peak RSS (VmHWM) of a fresh Python process per build, reset just before the build, "
    "minus the RSS then"
)


def build_model(kind: str, problem: MultiTaskProblem, X, Y, accuracy: float) -> Any:
    """Build one of ``BUILDS`` from the rows ``X, Y``: ``"exact"`` (``VectorValuedGP``),
    ``"nystrom"`` (``NystromVectorValuedGP``, default schedule) or ``"replay"``
    (``chunk_size=1``, Algorithm 2 row by row).

    Raises:
        ValueError: For another ``kind``.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import build_model, data
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> X, Y = data(problem, 30)
        >>> build_model("replay", problem, X, Y, 20.0).num_resamplings
        30
    """
    arguments = (X, Y, problem.make_data_kernel(), problem.task_covariance)
    if kind == "exact":
        return VectorValuedGP(*arguments, problem.regularization)
    if kind not in BUILDS:
        raise ValueError(f"kind must be one of {BUILDS}, got {kind!r}")
    chunk_size = 1 if kind == "replay" else "adaptive"
    return NystromVectorValuedGP(
        *arguments, problem.regularization, accuracy=accuracy, chunk_size=chunk_size
    )


def measure_builds(
    problem: MultiTaskProblem, X, Y, accuracy: float, replay: bool, repeats: int = 1
) -> dict[str, float | None]:
    """Median seconds (``repeats`` runs; one for ``"replay"``, the slow one) to build each
    model of ``BUILDS`` from the rows ``X, Y``, one after the other in this process;
    ``"replay"`` is ``None`` unless ``replay``.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import data, measure_builds
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> X, Y = data(problem, 30)
        >>> seconds = measure_builds(problem, X, Y, 20.0, replay=False)
        >>> sorted(seconds), seconds["replay"]
        (['exact', 'nystrom', 'replay'], None)
    """
    seconds: dict[str, float | None] = {}
    for kind in BUILDS:
        if kind == "replay" and not replay:
            seconds[kind] = None
            continue
        seconds[kind], _ = median_seconds(
            lambda _, kind=kind: build_model(kind, problem, X, Y, accuracy),
            1 if kind == "replay" else repeats,
        )
    return seconds


def _memory_status() -> dict[str, int] | None:
    """``VmRSS`` and ``VmHWM`` of this process in bytes (``None`` without ``/proc``)."""
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return None
    found = {}
    for line in lines:
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found if len(found) == 2 else None


def _max_rss_bytes() -> int:
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def peak_bytes_of(function: Callable[[], Any]) -> int:
    """The peak memory ``function()`` adds to this process, in bytes: ``VmHWM`` (peak
    resident set size, which sees torch's CPU allocations) reset through
    ``/proc/self/clear_refs`` just before the call, minus ``VmRSS`` then. Without
    ``/proc`` (or where the reset is refused), the growth of ``ru_maxrss``, which
    misses a call that stays below the process's earlier peak: run it in a fresh
    process (``peak_build_bytes``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import peak_bytes_of
        >>> peak = peak_bytes_of(lambda: torch.ones(2**24, dtype=torch.float64).sum())
        >>> peak >= 0  # about 128 MiB in a fresh process (the allocator may reuse pages)
        True
    """
    reset = False
    try:
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
        reset = _memory_status() is not None
    except OSError:
        pass
    baseline = _memory_status()["VmRSS"] if reset else _max_rss_bytes()
    result = function()
    peak = _memory_status()["VmHWM"] if reset else _max_rss_bytes()
    del result
    return max(peak - baseline, 0)


def child_peak_build_bytes(kind: str, t: int, size: int, accuracy: float, threads: int) -> int:
    """In the process that measures: ``peak_bytes_of`` building ``kind`` from the first
    ``t - 1`` of ``size`` rows of the benchmark's data (``threads`` torch threads).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import child_peak_build_bytes
        >>> child_peak_build_bytes("exact", 20, 20, 10.0, 1) >= 0
        True
    """
    if threads > 0:
        torch.set_num_threads(threads)
    problem = rkhs_problem(NUM_TASKS, seed=0)
    X, Y = data(problem, size)
    X, Y = X[: t - 1].clone(), Y[: t - 1].clone()
    return peak_bytes_of(lambda: build_model(kind, problem, X, Y, accuracy))


def peak_build_bytes(
    kinds: Sequence[str], t: int, size: int, accuracy: float, threads: int
) -> dict[str, int | None]:
    """Peak memory of each build in ``kinds``, each in a fresh Python process
    (``child_peak_build_bytes``); the processes run side by side (memory is per
    process; nothing is timed there). A process that fails gives ``None``.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import peak_build_bytes
        >>> peak = peak_build_bytes(["exact"], 20, 20, 10.0, 1)
        >>> peak["exact"] >= 0
        True
    """
    code = (
        "import sys\n"
        "from botorch_mtucb.benchmarks.mt_bkb_builds import child_peak_build_bytes\n"
        "print(child_peak_build_bytes(sys.argv[1], *map(int, sys.argv[2:4]), "
        "float(sys.argv[4]), int(sys.argv[5])))"
    )
    processes = {
        kind: subprocess.Popen(
            [sys.executable, "-c", code, kind, str(t), str(size), repr(accuracy), str(threads)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind in kinds
    }
    peaks: dict[str, int | None] = {}
    for kind, process in processes.items():
        out, err = process.communicate()
        if process.returncode == 0:
            peaks[kind] = int(out.strip().splitlines()[-1])
        else:
            print(f"peak memory of {kind} at t = {t} not measured: {err.strip()[-300:]}")
            peaks[kind] = None
    return peaks


def build_table(results: Sequence[dict[str, Any]], threads: int) -> str:
    """The building-from-data table: seconds of each build and their ratio to the exact
    build of the same run (``(0.25x)``: a quarter of the exact build's time, ``(4x)``:
    four times it), and each build's peak memory (MiB; ``-`` not measured).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import build_table
        >>> seconds = {"exact": 1.0, "nystrom": 0.25, "replay": None}
        >>> peak = {"exact": 2**20, "nystrom": 2**21}
        >>> table = build_table([{"t": 10, "build_seconds": seconds, "build_peak_bytes": peak}], 1)
        >>> "0.25 (0.25x)" in table and "2.0" in table
        True
    """

    def seconds(entry: dict[str, Any], kind: str) -> str:
        value, exact = entry["build_seconds"][kind], entry["build_seconds"]["exact"]
        if value is None:
            return "-"
        return f"{value:.3g}" if kind == "exact" else f"{value:.3g} ({value / exact:.2g}x)"

    def mebibytes(entry: dict[str, Any], kind: str) -> str:
        peak = (entry.get("build_peak_bytes") or {}).get(kind)
        return "-" if peak is None else f"{peak / 2**20:.1f}"

    rows = [
        [str(r["t"])]
        + [seconds(r, kind) for kind in BUILDS]
        + [mebibytes(r, kind) for kind in BUILDS]
        for r in results
    ]
    header = ["t"] + [f"{BUILD_LABELS[k]} s" for k in BUILDS] + [f"{k} MiB" for k in BUILDS]
    return (
        f"Building from the t - 1 rows ({threads} thread(s), one after the other in this "
        f"process; (Nx): N times the exact build's time in this run; peak memory: {MEMORY_METHOD})\n"
        + format_table(rows, header)
    )


THREAD_STEPS = (1000, 2000)  # t of the threads measurement (--quick: QUICK_THREAD_STEPS)
QUICK_THREAD_STEPS = (250,)
THREAD_GOAL = 1.5  # 2 threads should cost at most this many times 1 thread's seconds


def build_thread_ratios(
    problem: MultiTaskProblem, X, Y, steps: Sequence[int], accuracy: float, repeats: int = 5
) -> list[tuple[int, dict[str, Any]]]:
    """``thread_ratios`` of the sketch's build (``build_model("nystrom", ...)``) from the
    first ``t - 1`` rows, for each ``t`` of ``steps``: ``(t, result)`` pairs.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import build_thread_ratios, data
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> X, Y = data(problem, 20)
        >>> [(t, result["idle"]["ratio"] > 0) for t, result in
        ...  build_thread_ratios(problem, X, Y, [20], 5.0, repeats=1)]
        [(20, True)]
    """

    def build(t: int) -> Callable[[], Any]:
        return lambda: build_model("nystrom", problem, X[: t - 1], Y[: t - 1], accuracy)

    return [(t, thread_ratios(build(t), repeats=repeats)) for t in steps]


def thread_table(rows: Sequence[tuple[int, dict[str, Any]]]) -> str:
    """The threads table of ``build_thread_ratios``: median wall seconds of the sketch's
    build with 1 and 2 torch threads and their ratio, idle and with another core busy.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import thread_table
        >>> case = {"seconds": {1: 0.1, 2: 0.11}, "ratio": 1.1}
        >>> table = thread_table([(1000, {"threads": (1, 2), "idle": case, "busy": case})])
        >>> table.splitlines()[-1].split()
        ['1000', '0.1', '0.11', '1.10', '0.1', '0.11', '1.10']
    """
    ratios = [case["ratio"] for _, result in rows for case in (result["idle"], result.get("busy"))
              if case is not None]  # fmt: skip
    verdict = "met" if ratios and max(ratios) <= THREAD_GOAL else "not met in this run"
    labelled = [(str(t), result) for t, result in rows]
    return (
        "Threads: building the sketch (Nystrom, default schedule) from t - 1 rows with 2 "
        "torch threads vs 1 (median wall seconds, runs alternating), idle and with another "
        f"core kept busy by a busy-loop process; goal 2/1 <= {THREAD_GOAL:g}: {verdict}\n"
        + thread_ratio_table(labelled, "t")
    )
