"""Per-step cost of MT-BKB against MT-KB as ``t`` grows (paper 000, Sections 3.2-3.3).

The 20-task RKHS problem of paper 000 (Figure 1 c): 101 points of [0, 1], SE kernel of
lengthscale 0.2, ``B = A^T A`` with 20 distinct eigenvalues. For each ``t`` in
``--steps`` both policies are given the same ``t - 1`` observations (points drawn
uniformly from the domain, noisy values of ``f``) and one round is timed: ``select``
(the scalarized UCB over the 101 candidates, as the policies run it) plus ``update``
(MT-KB: one Cholesky extension of each of the 20 ``t x t`` factors and the width of
Theorem 2; MT-BKB: redrawing the dictionary, rebuilding the sketch, Theorem 3's width).

* MT-BKB's model is built from the ``t - 1`` rows (``NystromVectorValuedGP``'s default,
  adaptive chunks of draws), with Theorem 3's ``q`` for ``T = max(steps)``, ``eps =
  0.5``, ``delta = 0.1`` unless ``--accuracy`` is given. Its round is the median of
  ``--repeats`` runs on copies.
* Building from data (issue 14): the seconds to build each model from the ``t - 1``
  rows, timed in this process one after the other: the exact ``VectorValuedGP``,
  ``NystromVectorValuedGP`` with its default schedule (adaptive chunks) and with
  ``chunk_size=1`` (Algorithm 2 replayed row by row; for ``t <= --replay-max-t``,
  ``--quick``: ``t <= 250``), with their ratios to the exact build; and the peak
  memory of each build, measured in a fresh Python process per build
  (``peak_build_bytes``: the process's peak resident set size ``VmHWM``, reset just
  before the build, minus its resident size then: it sees torch's CPU allocations,
  which ``tracemalloc`` does not). ``--quick`` measures the memory at its largest
  ``t`` only (each process costs seconds of imports); ``--no-memory`` skips it.
* Both rounds are the steady state of a run on the finite domain: the models'
  tracking of the 101 candidates (``track_candidates``, issue 14) is set up before the
  timed round, as after a run's first round. ``--plain`` also times both rounds on the
  plain route (no tracking: the cost before issue 14's candidate tracking), in the
  same run, and prints the speedups.
* MT-KB keeps 20 Cholesky factors of size ``t x t`` (``160 t^2`` bytes in float64, in
  buffers of capacity ``t + 32`` built group by group in place; about ``200 t^2``
  bytes at the peak, ``mt_kb_peak_bytes``). A ``t`` whose estimated peak memory exceeds 80% of the available
  memory (``--memory-fraction``) is skipped (an out-of-memory kill could hit other
  processes); MT-KB's cost there is extrapolated
  from a least-squares fit ``c t^p`` on the measured ``t >= 1000`` and reported as
  such. Its round is timed once (it is seconds long at large ``t``).

Everything runs on one torch thread by default (``--threads``; the number is printed):
the two methods are timed in the same run under the same load, so their ratio is what
is comparable across machines. The plot (``--output``) shows the cost per step against
``t`` and the dictionary size; a JSON file with the numbers is written next to it.

Usage::

    python -m botorch_mtucb benchmark mt-bkb-scaling            # t up to 5000 (10-20 min)
    python -m botorch_mtucb benchmark mt-bkb-scaling --quick    # t up to 500, seconds
"""

from __future__ import annotations

import copy
import json
import math
import resource
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib.ticker
import numpy as np
import torch
from matplotlib.figure import Figure

from botorch_mtucb.bandits import ScalarizedEnvironment
from botorch_mtucb.bandits.scalarized import mt_bkb, mt_kb
from botorch_mtucb.benchmarks.timing import benchmark_parser, median_seconds
from botorch_mtucb.confidence import mt_bkb_accuracy
from botorch_mtucb.experiments.report import format_table, pinned_threads, save_figure
from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.problems import MultiTaskProblem, rkhs_problem
from botorch_mtucb.utils.checks import positive_int
from botorch_mtucb.utils.linalg import HEADROOM

DESCRIPTION = "per-step cost of MT-BKB against MT-KB as t grows (20-task RKHS problem)"
EPS, DELTA = 0.5, 0.1
TARGET = (
    10.0  # issue 14, item 3: aim for MT-BKB's step at least 10x cheaper than MT-KB's at t = 5000
)


NUM_TASKS = 20
QUICK_REPLAY_MAX_T = 250  # --quick: the chunk_size=1 build is seconds long at t = 500


def available_memory() -> float:
    """Bytes of memory available (``MemAvailable`` of ``/proc/meminfo``; inf elsewhere).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import available_memory
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


def mt_kb_peak_bytes(t: int, num_factors: int) -> float:
    """MT-KB's estimated peak memory in bytes, float64: the factors' buffers
    (``num_factors`` blocks of capacity ``t + HEADROOM``, built one group at a time in
    place by ``GrowingCholesky.from_blocks``) plus five ``t x t`` matrices (the Gram
    matrix, one group's matrix being factorized, the kernel's intermediates). An
    estimate, not a bound: measured in fresh processes (issue 14, 20 factors), 97-104
    MiB for the build at ``t = 700`` (estimate 100.5 MiB) and 0.405 GiB at ``t = 1500``
    (estimate 0.434 GiB).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import mt_kb_peak_bytes
        >>> round(mt_kb_peak_bytes(1000, 20) / 2**30, 4)  # GiB
        0.196
    """
    return (num_factors * (t + HEADROOM) ** 2 + 5 * t**2) * 8


def data(problem: MultiTaskProblem, size: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``size`` points drawn uniformly from the domain (``size x d``) and noisy values of
    ``f`` (``size x n``).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import data
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


def _policy_arguments(problem: MultiTaskProblem) -> tuple[Any, ...]:
    """MT-KB's and MT-BKB's first arguments, as paper 000 runs them: kernel, task
    covariance, domain, norm bound, noise level, regularization and ``delta``."""
    return (
        problem.make_data_kernel(),
        problem.task_covariance,
        problem.domain,
        problem.rkhs_norm_bound,
        problem.noise_std,
        problem.regularization,
        DELTA,
    )


def _use_model(policy: Any, model: Any, problem: MultiTaskProblem, track: bool) -> None:
    """Put ``model`` (built on the first ``t - 1`` rows) into ``policy``'s width rule, its
    width recomputed; with ``track``, the one-off setup of the finite domain's tracking
    before the timed round, else the plain route."""
    rule = policy.rule
    rule.model, rule.width = model, rule.width_function(model)
    if track:
        model.track_candidates(problem.domain.points)
    rule.candidates = None  # set up here (or not at all): the rule does not ask again


def time_round(policy: Any, environment: ScalarizedEnvironment, t: int, x, y, repeats: int):
    """Median seconds of round ``t`` on copies of ``policy``: ``select`` (the UCB over the
    candidates) + ``update`` with ``(x, y)``; returns them and the last copy.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.bandits.scalarized import mt_kb
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import data, time_round
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> X, Y = data(problem, 2)
        >>> policy = mt_kb(problem.make_data_kernel(), problem.task_covariance, problem.domain,
        ...                problem.rkhs_norm_bound, problem.noise_std, problem.regularization)
        >>> seconds, played = time_round(policy, ScalarizedEnvironment(problem), 1, X[0], Y[0], 1)
        >>> played.rule.model.train_X.shape[0]
        1
    """
    context = environment.context(t, torch.Generator().manual_seed(t))

    def fresh() -> tuple[Any, torch.Generator]:
        return copy.deepcopy(policy), torch.Generator().manual_seed(10_000 + t)

    def play(state: tuple[Any, torch.Generator]) -> Any:
        played, generator = state
        played.select(context, generator)
        played.update(x, y, context, generator)
        return played

    return median_seconds(play, repeats, setup=fresh)


def measure_mt_bkb(
    problem: MultiTaskProblem,
    environment: ScalarizedEnvironment,
    X: torch.Tensor,
    Y: torch.Tensor,
    t: int,
    accuracy: float,
    repeats: int,
    track: bool = True,
) -> dict[str, Any]:
    """MT-BKB's round ``t`` after the ``t - 1`` rows of ``X, Y`` (its model built as MT-BKB
    would have built it): median seconds per step over ``repeats`` copies, dictionary
    size, embedding dimension and the seconds to build the model.

    The steady state of a run: the finite domain's tracking
    (``NystromVectorValuedGP.track_candidates``) is set up before the timed round, as
    after the first round of a run; ``track=False`` times the plain route.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import data, measure_mt_bkb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> X, Y = data(problem, 10)
        >>> entry = measure_mt_bkb(problem, ScalarizedEnvironment(problem), X, Y, 10, 20.0, 1)
        >>> 1 <= entry["dictionary_size"] <= 10
        True
    """
    policy = mt_bkb(*_policy_arguments(problem), EPS, accuracy=accuracy)

    def build(_: Any) -> NystromVectorValuedGP:
        return NystromVectorValuedGP(
            X[: t - 1],
            Y[: t - 1],
            problem.make_data_kernel(),
            problem.task_covariance,
            problem.regularization,
            accuracy=accuracy,
        )

    build_seconds, model = median_seconds(build, 1)
    _use_model(policy, model, problem, track)
    seconds, played = time_round(policy, environment, t, X[t - 1], Y[t - 1], repeats)
    return {
        "seconds_per_step": seconds,
        "dictionary_size": int(played.rule.model.dictionary_size),
        "embedding_dimension": played.rule.model.embedding_dimension,
        "build_seconds": build_seconds,
        "tracked": played.rule.model.tracks_candidates,
    }


def measure_mt_kb(
    problem: MultiTaskProblem,
    environment: ScalarizedEnvironment,
    X: torch.Tensor,
    Y: torch.Tensor,
    t: int,
    track: bool = True,
) -> dict[str, float]:
    """MT-KB's round ``t`` after the ``t - 1`` rows of ``X, Y``, timed once (seconds long
    at large ``t``), and the seconds to build its model.

    The steady state of a run: the finite domain's tracking
    (``VectorValuedGP.track_candidates``, ``O(r t^2 N)`` once) is set up before the
    timed round, as after the first round of a run; ``track=False`` times the plain
    route.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import data, measure_mt_kb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> X, Y = data(problem, 10)
        >>> sorted(measure_mt_kb(problem, ScalarizedEnvironment(problem), X, Y, 10))
        ['build_seconds', 'seconds_per_step', 'tracked']
    """
    policy = mt_kb(*_policy_arguments(problem))

    def build(_: Any) -> VectorValuedGP:
        return VectorValuedGP(
            X[: t - 1],
            Y[: t - 1],
            problem.make_data_kernel(),
            problem.task_covariance,
            problem.regularization,
        )

    build_seconds, model = median_seconds(build, 1)
    _use_model(policy, model, problem, track)
    context = environment.context(t, torch.Generator().manual_seed(t))
    generator = torch.Generator().manual_seed(10_000 + t)

    def play(_: Any) -> None:  # on the policy itself: a copy would double the memory
        policy.select(context, generator)
        policy.update(X[t - 1], Y[t - 1], context, generator)

    seconds, _ = median_seconds(play, 1)
    tracked = policy.rule.model.tracks_candidates
    return {"seconds_per_step": seconds, "build_seconds": build_seconds, "tracked": tracked}


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
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import build_model, data
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
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import data, measure_builds
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
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import peak_bytes_of
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
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import child_peak_build_bytes
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
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import peak_build_bytes
        >>> peak = peak_build_bytes(["exact"], 20, 20, 10.0, 1)
        >>> peak["exact"] >= 0
        True
    """
    code = (
        "import sys\n"
        "from botorch_mtucb.benchmarks.mt_bkb_scaling import child_peak_build_bytes\n"
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


def fit_power_law(ts: Sequence[float], costs: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``cost = c t^p`` in log-log; returns ``(c, p)``.

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import fit_power_law
        >>> c, p = fit_power_law([10, 100], [2.0, 200.0])
        >>> round(c, 6), round(p, 6)
        (0.02, 2.0)
    """
    slope, intercept = np.polyfit(np.log(ts), np.log(costs), 1)
    return float(math.exp(intercept)), float(slope)


def plot(
    results: Sequence[dict[str, Any]], path: str | Path, fit: tuple[float, float] | None
) -> None:
    """Per-step cost against ``t`` (MT-KB measured and fitted, MT-BKB) and MT-BKB's
    dictionary size, on log-log axes, saved as a PNG at ``path``.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import plot
        >>> results = [{"t": t, "mt_kb": {"seconds_per_step": 0.01 * t},
        ...             "mt_bkb": {"seconds_per_step": 0.01, "dictionary_size": t}} for t in (10, 20)]
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "scaling.png"
        >>> plot(results, path, fit=(0.01, 1.0))
        >>> path.exists()
        True
    """
    ts = [r["t"] for r in results]
    figure = Figure(figsize=(11, 4))
    left, right = figure.subplots(1, 2)
    measured = [(r["t"], r["mt_kb"]["seconds_per_step"]) for r in results if r["mt_kb"]]
    if measured:
        left.plot(*zip(*measured), "o-", label="MT-KB (measured)")
    if fit is not None:
        grid = np.geomspace(min(ts), max(ts), 50)
        left.plot(
            grid,
            fit[0] * grid ** fit[1],
            "--",
            color="C0",
            alpha=0.6,
            label=f"MT-KB fit ~ t^{fit[1]:.2f}",
        )
    left.plot(ts, [r["mt_bkb"]["seconds_per_step"] for r in results], "s-", label="MT-BKB")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("round t")
    left.set_ylabel("seconds per step (select + update)")
    left.set_title("Per-step cost, 20-task RKHS problem")
    left.grid(alpha=0.3, which="both")
    left.legend()
    right.plot(
        ts,
        [r["mt_bkb"]["dictionary_size"] for r in results],
        "s-",
        color="C1",
        label="dictionary size m_t",
    )
    right.plot(ts, ts, ":", color="gray", label="t (every point)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("round t")
    right.set_ylabel("points")
    right.set_title("MT-BKB's dictionary")
    right.grid(alpha=0.3, which="both")
    right.legend()
    for ax in (left, right):  # label the measured t (minor labels would overlap)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(ts, [str(t) for t in ts])
    right.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    right.set_yticks(ts, [str(t) for t in ts])
    save_figure(figure, path)


def _measure(
    steps,
    accuracy,
    repeats,
    memory_fraction,
    replay_max_t=math.inf,
    memory="none",
    threads=1,
    plain=False,
) -> list[dict[str, Any]]:
    problem = rkhs_problem(NUM_TASKS, seed=0)
    environment = ScalarizedEnvironment(problem)
    X, Y = data(problem, max(steps))
    results = []
    for t in steps:
        entry = {
            "t": t,
            "mt_bkb": measure_mt_bkb(problem, environment, X, Y, t, accuracy, repeats),
        }
        if plain:
            entry["mt_bkb_plain"] = measure_mt_bkb(
                problem, environment, X, Y, t, accuracy, repeats, track=False
            )
        builds = measure_builds(
            problem, X[: t - 1], Y[: t - 1], accuracy, t <= replay_max_t, 3 if t <= 500 else 1
        )
        entry["build_seconds"] = builds
        entry["build_peak_bytes"] = None
        if memory == "all" or (memory == "last" and t == steps[-1]):
            kinds = [kind for kind in BUILDS if builds[kind] is not None]
            entry["build_peak_bytes"] = peak_build_bytes(kinds, t, X.shape[0], accuracy, threads)
        print(
            f"t = {t:5d}: build from data "
            + ", ".join(
                f"{kind} {seconds:.3f} s" for kind, seconds in builds.items() if seconds is not None
            ),
            flush=True,
        )
        need, free = mt_kb_peak_bytes(t, NUM_TASKS), available_memory()
        if need < memory_fraction * free:
            entry["mt_kb"] = measure_mt_kb(problem, environment, X, Y, t)
            if plain:
                entry["mt_kb_plain"] = measure_mt_kb(problem, environment, X, Y, t, track=False)
        else:
            entry["mt_kb"] = None
            print(
                f"t = {t}: MT-KB skipped (needs ~{need / 2**30:.1f} GiB, "
                f"{free / 2**30:.1f} GiB available)"
            )
        results.append(entry)
        kb, bkb = entry["mt_kb"], entry["mt_bkb"]
        print(
            f"t = {t:5d}: MT-BKB {bkb['seconds_per_step'] * 1e3:9.1f} ms "
            f"(m = {bkb['dictionary_size']}, r = {bkb['embedding_dimension']}), MT-KB "
            + (
                f"{kb['seconds_per_step'] * 1e3:9.1f} ms (build {kb['build_seconds']:.1f} s)"
                if kb
                else "not measured"
            ),
            flush=True,
        )
    return results


def _ratios(results: list[dict[str, Any]]) -> tuple[float, float] | None:
    """Fit MT-KB's cost, then set each entry's ratio KB / BKB (measured or extrapolated)."""
    measured = [r for r in results if r["mt_kb"] and r["t"] >= 1000] or [
        r for r in results if r["mt_kb"]
    ]
    fit = None
    if len(measured) >= 2:
        fit = fit_power_law(
            [r["t"] for r in measured], [r["mt_kb"]["seconds_per_step"] for r in measured]
        )
    for r in results:
        if r["mt_kb"]:
            kb, kind = r["mt_kb"]["seconds_per_step"], "measured"
        elif fit is not None:
            kb, kind = fit[0] * r["t"] ** fit[1], "extrapolated"
        else:
            kb, kind = math.nan, "none"
        r["mt_kb_seconds"], r["ratio"], r["ratio_kind"] = (
            kb,
            kb / r["mt_bkb"]["seconds_per_step"],
            kind,
        )
    return fit


def plain_table(results: Sequence[dict[str, Any]]) -> str:
    """Seconds per step with the candidate tracking (the default) and on the plain
    route (``--plain``), their speedups, and the KB / BKB ratio of each route
    (``-``: not measured).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import plain_table
        >>> step = lambda s: {"seconds_per_step": s}
        >>> entry = {"t": 10, "mt_kb": step(0.5), "mt_kb_plain": step(1.0),
        ...          "mt_bkb": step(0.01), "mt_bkb_plain": step(0.04)}
        >>> table = plain_table([entry])
        >>> "4.0x" in table and "50.0" in table and "25.0" in table
        True
    """

    def cost(entry: dict[str, Any], key: str) -> float | None:
        value = entry.get(key)
        return None if value is None else value["seconds_per_step"]

    def text(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    def ratio(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a / b

    rows = []
    for r in results:
        kb, kb0 = cost(r, "mt_kb"), cost(r, "mt_kb_plain")
        bkb, bkb0 = cost(r, "mt_bkb"), cost(r, "mt_bkb_plain")
        rows.append(
            [
                str(r["t"]),
                text(kb0, ".4f"),
                text(kb, ".4f"),
                text(ratio(kb0, kb), ".1f") + "x",
                text(bkb0, ".4f"),
                text(bkb, ".4f"),
                text(ratio(bkb0, bkb), ".1f") + "x",
                text(ratio(kb0, bkb0), ".1f"),
                text(ratio(kb, bkb), ".1f"),
            ]
        )
    header = [
        "t",
        "MT-KB plain",
        "MT-KB tracked",
        "speedup",
        "MT-BKB plain",
        "MT-BKB tracked",
        "speedup",
        "KB/BKB plain",
        "KB/BKB tracked",
    ]
    return (
        "Seconds per step, plain route (no candidate tracking) against tracked (the "
        "default), measured in this run\n" + format_table(rows, header)
    )


def build_table(results: Sequence[dict[str, Any]], threads: int) -> str:
    """The building-from-data table: seconds of each build and their ratio to the exact
    build of the same run (``(0.25x)``: a quarter of the exact build's time, ``(4x)``:
    four times it), and each build's peak memory (MiB; ``-`` not measured).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import build_table
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; returns 0. Writes the plot
    (``--output``) and a JSON file of the numbers next to it.

    Example:
        >>> import tempfile
        >>> main(["--quick", "--output", tempfile.mkdtemp() + "/s.png"])  # doctest: +SKIP
        20-task RKHS problem, q = ..., 1 thread(s)
        ...
        0
    """
    parser = benchmark_parser("mt-bkb-scaling", DESCRIPTION, "t in {100, 250, 500} (seconds)")
    parser.add_argument(
        "--steps", type=positive_int, nargs="+", default=[250, 500, 1000, 2000, 3000, 4000, 5000]
    )
    parser.add_argument("--accuracy", type=float, default=None, help="q (default: Theorem 3)")
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--output", default="results/mt_bkb_scaling.png")
    parser.add_argument(
        "--replay-max-t",
        type=positive_int,
        default=2000,
        help="time the chunk_size=1 build (Algorithm 2 row by row) only for t up to this "
        "(default: %(default)s; --quick: 250)",
    )
    parser.add_argument(
        "--no-memory",
        action="store_true",
        help="skip the peak memory of the builds (a fresh Python process per build)",
    )
    parser.add_argument(
        "--memory-fraction",
        type=float,
        default=0.8,
        help="measure MT-KB only if its estimated peak memory is below this fraction of "
        "the available memory (default: %(default)s)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="also time both rounds without the candidate tracking (the plain route)",
    )
    args = parser.parse_args(argv)
    steps = [100, 250, 500] if args.quick else sorted(args.steps)
    accuracy = args.accuracy or mt_bkb_accuracy(EPS, DELTA, max(steps))
    with pinned_threads(args.threads) as threads:
        print(f"{NUM_TASKS}-task RKHS problem, q = {accuracy:.1f}, {threads} thread(s)")
        memory = "none" if args.no_memory else ("last" if args.quick else "all")
        replay_max_t = QUICK_REPLAY_MAX_T if args.quick else args.replay_max_t
        results = _measure(
            steps,
            accuracy,
            args.repeats,
            args.memory_fraction,
            replay_max_t,
            memory,
            threads,
            args.plain,
        )
    fit = _ratios(results)
    rows = [
        [
            f"{r['t']}",
            f"{r['mt_kb_seconds']:.4f}",
            f"{r['mt_bkb']['seconds_per_step']:.4f}",
            f"{r['ratio']:.1f}",
            r["ratio_kind"],
            f"{r['mt_bkb']['dictionary_size']} ({r['mt_bkb']['dictionary_size'] / r['t']:.1%})",
        ]
        for r in results
    ]
    header = ["t", "MT-KB s/step", "MT-BKB s/step", "ratio KB/BKB", "(MT-KB)", "dictionary"]
    print()
    print(format_table(rows, header))
    if fit is not None:
        print(f"MT-KB fit on measured t: {fit[0]:.3g} * t^{fit[1]:.2f} s")
    last = results[-1]
    comparison = (
        f"{last['ratio']:.1f}x cheaper" if last["ratio"] >= 1.0
        else f"{1.0 / last['ratio']:.1f}x dearer"
    )  # fmt: skip
    print(
        f"at t = {last['t']}: MT-BKB's step is {comparison} than MT-KB's "
        f"({last['ratio_kind']}; target >= {TARGET:g}x cheaper: "
        f"{'met' if last['ratio'] >= TARGET else 'not met at this t'})"
    )
    if args.plain:
        print()
        print(plain_table(results))
    print()
    print(build_table(results, threads))
    output = Path(args.output)
    if output.suffix.lower() != ".png":
        output = output.with_name(output.name + ".png")
    plot(results, output, fit)
    summary = {
        "accuracy": accuracy,
        "threads": threads,
        "results": results,
        "mt_kb_fit": fit,
        "memory_method": MEMORY_METHOD,
    }
    output.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"plot and numbers written to {output} and {output.with_suffix('.json')}")
    return 0
