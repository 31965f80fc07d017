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
* Building from data (``mt_bkb_builds``): the seconds to build each model
  from the ``t - 1`` rows, timed in this process one after the other: the exact
  ``VectorValuedGP``, ``NystromVectorValuedGP`` with its default schedule (adaptive
  chunks) and with ``chunk_size=1`` (Algorithm 2 replayed row by row; for ``t <=
  --replay-max-t``, ``--quick``: ``t <= 250``), with their ratios to the exact build;
  and the peak memory of each build, measured in a fresh Python process per build.
  ``--quick`` measures the memory at its largest ``t`` only (each process costs seconds
  of imports); ``--no-memory`` skips it.
* Threads (``mt_bkb_builds.build_thread_ratios``): the sketch's build (default
  schedule) from the ``t - 1`` rows, ``t`` in ``--thread-steps`` (``--quick``: 250),
  timed with 2 torch threads and with 1, the runs alternating, on the machine as it is
  and with another core kept busy by a busy-loop process (``thread_ratio``); the table
  gives the median wall seconds and the ratio 2 / 1 (the aim: at most 1.5).
* Both rounds are the steady state of a run on the finite domain: the models'
  tracking of the 101 candidates (``track_candidates``) is set up before the
  timed round, as after a run's first round. ``--plain`` also times both rounds on the
  plain route (no tracking: the cost without the candidate tracking), in the
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
is comparable across machines. The plot (``--output``; ``mt_bkb_scaling_report``) shows
the cost per step against ``t`` and the dictionary size; a JSON file with the numbers is
written next to it.

Why this module is long: one benchmark, its measurement of both policies' rounds and
builds from the same data, and its command line; the report (table, plot) lives in
``mt_bkb_scaling_report``.

Usage::

    python -m botorch_mtucb benchmark mt-bkb-scaling            # t up to 5000 (10-20 min)
    python -m botorch_mtucb benchmark mt-bkb-scaling --quick    # t up to 500, seconds
"""

from __future__ import annotations

import copy
import json
import math
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits import ScalarizedEnvironment
from botorch_mtucb.bandits.scalarized import mt_bkb, mt_kb
from botorch_mtucb.benchmarks.mt_bkb_builds import (
    BUILDS,
    MEMORY_METHOD,
    NUM_TASKS,
    QUICK_THREAD_STEPS,
    THREAD_STEPS,
    available_memory,
    build_table,
    build_thread_ratios,
    data,
    measure_builds,
    peak_build_bytes,
    thread_table,
)
from botorch_mtucb.benchmarks.mt_bkb_scaling_report import add_ratios, plain_table, plot
from botorch_mtucb.benchmarks.timing import benchmark_parser, median_seconds
from botorch_mtucb.confidence import mt_bkb_accuracy
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.problems import MultiTaskProblem, rkhs_problem
from botorch_mtucb.utils.linalg import HEADROOM
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = "per-step cost of MT-BKB against MT-KB as t grows (20-task RKHS problem)"
EPS, DELTA = 0.5, 0.1
TARGET = 10.0  # the aim: MT-BKB's step at least 10x cheaper than MT-KB's at t = 5000
TARGET_T = 5000

QUICK_REPLAY_MAX_T = 250  # --quick: the chunk_size=1 build is seconds long at t = 500


def mt_kb_peak_bytes(t: int, num_factors: int) -> float:
    """MT-KB's estimated peak memory in bytes, float64: the factors' buffers
    (``num_factors`` blocks of capacity ``t + HEADROOM``, built one group at a time in
    place by ``GrowingCholesky.from_blocks``) plus five ``t x t`` matrices (the Gram
    matrix, one group's matrix being factorized, the kernel's intermediates). An
    estimate, not a bound: measured in fresh processes (20 factors), 97-104
    MiB for the build at ``t = 700`` (estimate 100.5 MiB) and 0.405 GiB at ``t = 1500``
    (estimate 0.434 GiB).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import mt_kb_peak_bytes
        >>> round(mt_kb_peak_bytes(1000, 20) / 2**30, 4)  # GiB
        0.196
    """
    return (num_factors * (t + HEADROOM) ** 2 + 5 * t**2) * 8


def goal_message(t: int, ratio: float, ratio_kind: str) -> str:
    """The closing lines: how much faster MT-BKB's round (``select`` plus ``update``) was
    than MT-KB's at the largest ``t`` of the run, and whether that meets the goal the
    sketch is for (``TARGET`` times faster at ``t = TARGET_T``), in plain words: a goal,
    timed on this machine in this run, not a guarantee.

    Args:
        t: The largest ``t`` of the run.
        ratio: MT-KB's seconds per round over MT-BKB's at ``t`` (NaN: MT-KB not timed).
        ratio_kind: ``"measured"``, ``"extrapolated"`` or ``"none"`` (``add_ratios``).

    Example:
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import goal_message
        >>> print(goal_message(500, 1.3, "measured"))
        at t = 500: MT-BKB's round (select + update) is 1.3x faster than MT-KB's (measured)
        goal: MT-BKB's round at least 10x faster than MT-KB's at t = 5000 (what the sketch is for; timed on this machine in this run): not reached at t = 500 (MT-KB's round slows down faster as t grows; the full run, without --quick, goes to t = 5000)
    """
    if math.isnan(ratio):
        return f"at t = {t}: MT-KB's round was neither timed nor extrapolated: no comparison"
    comparison = f"{ratio:.1f}x faster" if ratio >= 1.0 else f"{1.0 / ratio:.1f}x slower"
    first = (
        f"at t = {t}: MT-BKB's round (select + update) is {comparison} than MT-KB's ({ratio_kind})"
    )
    goal = (
        f"goal: MT-BKB's round at least {TARGET:g}x faster than MT-KB's at t = {TARGET_T} "
        "(what the sketch is for; timed on this machine in this run): "
    )
    if ratio >= TARGET:
        goal += f"reached at t = {t}"
    elif t < TARGET_T:
        goal += (
            f"not reached at t = {t} (MT-KB's round slows down faster as t grows; the full "
            f"run, without --quick, goes to t = {TARGET_T})"
        )
    else:
        goal += f"not reached on this machine at t = {t}"
    return f"{first}\n{goal}"


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
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import data
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import time_round
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

    last: list[Any] = []  # the copy played last

    def fresh() -> tuple[Any, torch.Generator]:
        # Untimed: the previous copy is let go first. A run holds one policy; a copy kept
        # alive through the next timed round made MT-KB's update several times slower.
        last.clear()
        return copy.deepcopy(policy), torch.Generator().manual_seed(10_000 + t)

    def play(state: tuple[Any, torch.Generator]) -> None:
        played, generator = state
        played.select(context, generator)
        played.update(x, y, context, generator)
        last.append(played)

    seconds, _ = median_seconds(play, repeats, setup=fresh)
    return seconds, last[0]


def time_rounds_in_place(
    policy: Any, environment: ScalarizedEnvironment, X: Tensor, Y: Tensor, t: int, repeats: int
) -> float:
    """Median seconds of the rounds ``t, ..., t + repeats - 1`` played on ``policy``
    itself, as a run plays them: ``select`` + ``update`` with row ``s - 1`` of ``X, Y`` in
    round ``s`` (``X`` needs ``t + repeats - 1`` rows).

    Raises:
        ValueError: If ``X`` has fewer than ``t + repeats - 1`` rows or ``repeats < 1``.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.bandits.scalarized import mt_kb
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import data
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import time_rounds_in_place
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> X, Y = data(problem, 3)
        >>> policy = mt_kb(problem.make_data_kernel(), problem.task_covariance, problem.domain,
        ...                problem.rkhs_norm_bound, problem.noise_std, problem.regularization)
        >>> seconds = time_rounds_in_place(policy, ScalarizedEnvironment(problem), X, Y, 1, 3)
        >>> policy.rule.model.train_X.shape[0]
        3
    """
    if repeats < 1 or X.shape[0] < t + repeats - 1:
        raise ValueError(
            f"repeats must be >= 1 and X must have t + repeats - 1 = {t + repeats - 1} rows, "
            f"got repeats = {repeats} and {X.shape[0]} rows"
        )
    times = []
    for s in range(t, t + repeats):
        context = environment.context(s, torch.Generator().manual_seed(s))
        generator = torch.Generator().manual_seed(10_000 + s)
        start = time.perf_counter()
        policy.select(context, generator)
        policy.update(X[s - 1], Y[s - 1], context, generator)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_mt_bkb(
    problem: MultiTaskProblem,
    environment: ScalarizedEnvironment,
    X: torch.Tensor,
    Y: torch.Tensor,
    t: int,
    accuracy: float,
    repeats: int,
    track: bool = True,
    in_place: bool = False,
) -> dict[str, Any]:
    """MT-BKB's round ``t`` after the ``t - 1`` rows of ``X, Y`` (its model built as MT-BKB
    would have built it): median seconds per step over ``repeats`` copies, dictionary
    size, embedding dimension and the seconds to build the model.

    The steady state of a run: the finite domain's tracking
    (``NystromVectorValuedGP.track_candidates``) is set up before the timed round, as
    after the first round of a run; ``track=False`` times the plain route. ``in_place``:
    the median of the rounds ``t, ..., t + repeats - 1`` played on the policy itself
    (``time_rounds_in_place``; ``X`` needs ``t + repeats - 1`` rows), not on copies.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import data
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import measure_mt_bkb
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
    if in_place:
        seconds, played = time_rounds_in_place(policy, environment, X, Y, t, repeats), policy
    else:
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
    repeats: int = 1,
) -> dict[str, float]:
    """MT-KB's round ``t`` after the ``t - 1`` rows of ``X, Y`` and the seconds to build
    its model, timed on the policy itself (a copy would double the memory of its ``t x t``
    factors): round ``t`` once, or the median of ``repeats`` successive rounds
    (``time_rounds_in_place``; ``X`` needs ``t + repeats - 1`` rows).

    The steady state of a run: the finite domain's tracking
    (``VectorValuedGP.track_candidates``, ``O(r t^2 N)`` once) is set up before the
    timed round, as after the first round of a run; ``track=False`` times the plain
    route.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.benchmarks.mt_bkb_builds import data
        >>> from botorch_mtucb.benchmarks.mt_bkb_scaling import measure_mt_kb
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
    if repeats > 1:
        seconds = time_rounds_in_place(policy, environment, X, Y, t, repeats)
        tracked = policy.rule.model.tracks_candidates
        return {"seconds_per_step": seconds, "build_seconds": build_seconds, "tracked": tracked}
    context = environment.context(t, torch.Generator().manual_seed(t))
    generator = torch.Generator().manual_seed(10_000 + t)

    def play(_: Any) -> None:  # on the policy itself: a copy would double the memory
        policy.select(context, generator)
        policy.update(X[t - 1], Y[t - 1], context, generator)

    seconds, _ = median_seconds(play, 1)
    tracked = policy.rule.model.tracks_candidates
    return {"seconds_per_step": seconds, "build_seconds": build_seconds, "tracked": tracked}


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
    parser.add_argument(
        "--thread-steps",
        type=positive_int,
        nargs="*",
        default=list(THREAD_STEPS),
        help="t at which the sketch's build is timed with 2 torch threads vs 1, idle and "
        "with another core busy (default: %(default)s; --quick: "
        f"{list(QUICK_THREAD_STEPS)}; none: skip)",
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
        thread_steps = list(QUICK_THREAD_STEPS) if args.quick else sorted(args.thread_steps)
        problem = rkhs_problem(NUM_TASKS, seed=0)
        X, Y = data(problem, max([*steps, *thread_steps]))
        ratios = build_thread_ratios(
            problem, X, Y, thread_steps, accuracy, repeats=3 if args.quick else 5
        )
    fit = add_ratios(results)
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
    print(goal_message(last["t"], last["ratio"], last["ratio_kind"]))
    if args.plain:
        print()
        print(plain_table(results))
    print()
    print(build_table(results, threads))
    if ratios:
        print()
        print(thread_table(ratios))
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
        "thread_ratios": [{"t": t, **result} for t, result in ratios],
    }
    output.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"plot and numbers written to {output} and {output.with_suffix('.json')}")
    return 0
