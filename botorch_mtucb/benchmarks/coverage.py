r"""Coverage of every confidence bound of the package, measured on known ground truths.

For each bound of ``coverage_bounds.CASES`` (MT-KB, MT-BKB, paper 001's five widths, the
exact / grid / analytic martingale mixtures, AY-GP-UCB and IGP-UCB) and each of ``R``
runs: a ground truth ``f`` of exactly known RKHS norm ``B`` (``coverage_truths``: a
kernel expansion on 20 centres rescaled to norm ``B``), ``N = 40`` candidate points
uniform in ``[0, 1]``, an RBF kernel of lengthscale 0.2 and Gaussian noise of the
``sigma`` given to the bound (independent across tasks). Per family:

* paper 000: ``n = 3`` tasks, ``Gamma = k K_task(1)`` (uniform similarity, ``omega =
  1/2``), ``||f||_Gamma = B`` in the vector-valued RKHS; ``eta = 0.1``, MT-BKB's
  ``eps = 0.5`` and Theorem 3's ``q`` for ``T``; a linear scalarization drawn each round;
* paper 001: ``N = 3`` tasks ``f_i = g + 0.3 h_i`` with ``max_i ||f_i|| = B`` and the
  exact ``epsilon`` of eq. 5 given to the widths; ``b = 1``, ``lambda = (N + b) / (N +
  bN)``; the revealed task drawn uniformly each round;
* paper 002: one task, ``||f|| = B``; the methods' parameters of ``confidence_rule``
  (``c = 1``, DMM's grid, ``eta = 2 / T`` for IGP-UCB); two more rows observe it
  without noise and tell the exact and analytic bounds the ``sigma`` that
  ``measurement_noise_std`` gives a deterministic evaluation (``noise_level``).

Each round the bound's own UCB is maximized over the candidates (ties at random),
``y = f(x) + noise`` is observed and the package's policy or rule updates itself. After
``t = 0, 1, ..., T`` observations the theorem's inequality is checked at every candidate
(and task, ``coverage_bounds``); a run *violates* if it fails once (runs stop there).

Per bound the table gives the number of runs ``R``, the runs with a violation, their
fraction with its Clopper-Pearson 95% interval, the theorem's failure probability
``delta``, and the *slack*: per run the smallest margin ``1 - d / h`` over rounds and
checked points (``h``: the band's half-width or the ball's radius, ``d``: the distance
of ``f`` from its centre; ``1``: ``f`` at the centre, ``0``: on the edge, ``< 0``:
outside), its median and minimum over the runs. A valid bound has a violation rate
``<= delta``: the lower end of its interval must not exceed ``delta``. Control rows run
one bound per family told ``B / 4`` to the end (an empty confidence set ends a run) and
must show violations, which proves that the check can fail; ``t viol.`` gives the
medians of their first and last violated rounds.

Torch threads are pinned (``--threads``, default 1, printed) in each of ``--workers``
processes (default: the available CPUs); the numbers depend on neither (each run draws
from generators seeded by ``(seed, run, round, stream)``). The rows and settings are
written to a JSON file and a CSV file (``--output``). The command exits with 1 if a
bound's rate exceeds ``delta`` beyond its interval or a control shows no violation.

Usage::

    python -m botorch_mtucb benchmark coverage             # R = 200, T = 100, delta = 0.5
    python -m botorch_mtucb benchmark coverage --quick     # R = 20, T = 20 (seconds)
    python -m botorch_mtucb benchmark coverage --bounds "MT-CMM (000)" "MT-CMM (001)"
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import gpytorch
import torch

from botorch_mtucb.benchmarks.coverage_bounds import (
    CASES,
    CONTROL_FACTOR,
    CONTROLS,
    BoundCase,
    RunSetup,
)
from botorch_mtucb.benchmarks.coverage_report import (
    SLACK_DEFINITION,
    RowResult,
    RunOutcome,
    summarize,
    table,
    write_outputs,
)
from botorch_mtucb.benchmarks.coverage_truths import sample_expansion, sample_related_tasks
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.confidence import EmptyConfidenceSetError, task_kernel_matrix
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.problems import make_kernel
from botorch_mtucb.utils import argmax_random_ties
from botorch_mtucb.utils.random import (
    ENVIRONMENT_STREAM,
    POLICY_STREAM,
    round_generator,
    stream_seed,
)
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = "violation rates of every confidence bound on ground truths of known RKHS norm"
DTYPE = torch.float64
NUM_CANDIDATES = 40
LENGTHSCALE = 0.2  # RBF kernel on [0, 1] (paper 000's synthetic problems)
NUM_TASKS = 3
TASK_SIMILARITY_B = 1.0  # paper 000's Gamma = k K_task(1): uniform similarity, omega = 1/2
DEVIATION_SCALE = 0.3  # paper 001's tasks f_i = g + 0.3 h_i
RUN_STREAM, TRUTH_STREAM = 2, 3


def run_seed(seed: int, run: int) -> int:
    """The seed of run ``run`` (``stream_seed(seed, run, 2)``), shared by every bound.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage import run_seed
        >>> run_seed(0, 1) == run_seed(0, 1) != run_seed(0, 2)
        True
    """
    return stream_seed(seed, run, RUN_STREAM)


def run_setup(family: str, rkhs_norm: float, noise_std: float, horizon: int, seed: int):
    """The ground truth and candidates of one run of ``family`` (``"000"``, ``"001"``,
    ``"002"``), drawn from ``seed`` (the same for every bound of the family).

    Raises:
        ValueError: For an unknown family.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage import run_setup
        >>> setup = run_setup("000", 1.0, 0.1, 10, seed=0)
        >>> round(setup.truth.rkhs_norm, 12), setup.values.shape
        (1.0, torch.Size([40, 3]))
    """
    generator = round_generator(seed, 0, TRUTH_STREAM)
    kernel = make_kernel("rbf", LENGTHSCALE)
    candidates = torch.rand(NUM_CANDIDATES, 1, generator=generator, dtype=DTYPE)
    if family == "000":
        task_covariance = task_kernel_matrix(NUM_TASKS, TASK_SIMILARITY_B)
        truth = sample_expansion(kernel, 1, rkhs_norm, task_covariance, generator)
    elif family == "001":
        truth = sample_related_tasks(kernel, 1, NUM_TASKS, rkhs_norm, DEVIATION_SCALE, generator)
    elif family == "002":
        truth = sample_expansion(kernel, 1, rkhs_norm, torch.eye(1, dtype=DTYPE), generator)
    else:
        raise ValueError(f"family must be '000', '001' or '002', got {family!r}")
    return RunSetup(kernel, candidates, truth, noise_std, horizon)


def play(tracker, horizon: int, noise_std: float, seed: int, stop: bool = True) -> RunOutcome:
    r"""Run ``tracker`` for ``horizon`` rounds, checking its bound after ``t = 0..T``
    observations; with ``stop``, stop at the first violation (an empty confidence set
    always ends the run: it is a violation and the bound cannot be evaluated).

    Round ``t``'s context and noise come from ``round_generator(seed, t, 0)``, the
    tie-breaks and the policy's draws from ``round_generator(seed, t, 1)``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage import play, run_setup
        >>> from botorch_mtucb.benchmarks.coverage_bounds import KernelUCBTracker
        >>> tracker = KernelUCBTracker(run_setup("002", 1.0, 0.1, 5, 0), "AMM-UCB", 1.0, 0.5)
        >>> outcome = play(tracker, horizon=5, noise_std=0.1, seed=0)
        >>> outcome.violated, 0 < outcome.slack < 1
        (False, True)
    """
    slack, first, last = math.inf, None, None
    for t in range(horizon + 1):
        environment = round_generator(seed, t, ENVIRONMENT_STREAM)
        try:
            ucb, margin = tracker.evaluate(environment)
        except EmptyConfidenceSetError:
            return RunOutcome(-math.inf, t if first is None else first, t, empty_set=True)
        worst = float(margin.min())
        slack = min(slack, worst)
        if worst < 0:
            first, last = t if first is None else first, t
            if stop:
                break
        if t == horizon:
            break
        policy = round_generator(seed, t, POLICY_STREAM)
        index = argmax_random_ties(ucb.detach(), policy)
        noise = noise_std * torch.randn(
            tracker.observation_size, generator=environment, dtype=DTYPE
        )
        tracker.update(index, noise, policy)
    return RunOutcome(slack, first, last)


@dataclass(frozen=True)
class Settings:
    """What every run of the benchmark shares.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage import Settings
        >>> Settings(runs=20, horizon=20, delta=0.5, rkhs_norm=1.0, noise_std=0.1, seed=0).runs
        20
    """

    runs: int
    horizon: int
    delta: float
    rkhs_norm: float
    noise_std: float
    seed: int


def run_once(case: BoundCase, factor: float, run: int, settings: Settings) -> RunOutcome:
    """Run ``run`` of ``case`` told ``factor * B``; a control (``factor != 1``) is played
    to the end, a bound told ``B`` stops at its first violation.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage import Settings, run_once
        >>> from botorch_mtucb.benchmarks.coverage_bounds import CASES
        >>> settings = Settings(runs=1, horizon=3, delta=0.5, rkhs_norm=1.0, noise_std=0.1, seed=0)
        >>> run_once(CASES[0], 1.0, 0, settings).violated
        False
    """
    seed = run_seed(settings.seed, run)
    setup = run_setup(case.family, settings.rkhs_norm, settings.noise_std, settings.horizon, seed)
    # Dense kernel matrices at once: the same values without LazyEvaluatedKernelTensor's
    # overhead, which dominates these small problems.
    with gpytorch.settings.lazily_evaluate_kernels(False):
        tracker = case.make(setup, factor * settings.rkhs_norm, case.delta_argument(settings.delta))
        return play(tracker, settings.horizon, settings.noise_std, seed, stop=factor == 1.0)


def _run_by_name(name: str, factor: float, run: int, settings: Settings) -> RunOutcome:
    case = next(case for case in CASES if case.name == name)
    return run_once(case, factor, run, settings)


def _initialize_worker(threads: int) -> None:
    if threads > 0:
        torch.set_num_threads(threads)


def rows_to_run(names: Sequence[str] | None = None) -> list[tuple[BoundCase, float]]:
    """Every bound told ``B``, then the controls told ``B / 4`` (only the bounds
    ``names``, and their controls, if given).

    Example:
        >>> from botorch_mtucb.benchmarks.coverage import rows_to_run
        >>> [(case.name, factor) for case, factor in rows_to_run()][-1]
        ('IGP-UCB', 0.25)
    """
    cases = [case for case in CASES if names is None or case.name in names]
    rows = [(case, 1.0) for case in cases]
    return rows + [(case, CONTROL_FACTOR) for case in cases if case.name in CONTROLS]


def measure(
    settings: Settings, workers: int = 1, threads: int = 1, names: Sequence[str] | None = None
) -> list[RowResult]:
    """Every row of ``rows_to_run(names)`` over ``settings.runs`` runs, in ``workers`` processes
    of ``threads`` torch threads each (``workers = 1``: in this process); prints one line
    per row as it ends.

    Example:
        >>> from botorch_mtucb.benchmarks.coverage import Settings, measure
        >>> settings = Settings(runs=2, horizon=2, delta=0.5, rkhs_norm=1.0, noise_std=0.1, seed=0)
        >>> rows = measure(settings)  # doctest: +ELLIPSIS
          MT-KB: 0/2 violations (... s)
        ...
        >>> len(rows)
        23
    """
    executor = None
    if workers > 1:
        executor = ProcessPoolExecutor(workers, initializer=_initialize_worker, initargs=(threads,))
    results = []
    try:
        for case, factor in rows_to_run(names):
            start = time.perf_counter()
            runs = range(settings.runs)
            if executor is None:
                outcomes = [run_once(case, factor, run, settings) for run in runs]
            else:
                n, chunk = settings.runs, max(1, settings.runs // (4 * workers))
                arguments = ([case.name] * n, [factor] * n, runs, [settings] * n)
                outcomes = list(executor.map(_run_by_name, *arguments, chunksize=chunk))
            seconds = time.perf_counter() - start
            row = summarize(case.name, case.source, factor, settings.delta, outcomes, seconds)
            results.append(row)
            print(
                f"  {row.label}: {row.violations}/{row.runs} violations ({seconds:.1f} s)",
                flush=True,
            )
    finally:
        if executor is not None:
            executor.shutdown()
    return results


def available_cpus() -> int:
    """CPUs this process may run on (its affinity; ``os.cpu_count()`` elsewhere).

    Example:
        >>> from botorch_mtucb.benchmarks.coverage import available_cpus
        >>> available_cpus() >= 1
        True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _parser():
    parser = benchmark_parser("coverage", DESCRIPTION, "R = 20 runs, T = 20 rounds (seconds)")
    parser.add_argument("--runs", type=positive_int, default=200, help="R (default: %(default)s)")
    parser.add_argument(
        "--horizon", type=positive_int, default=100, help="T (default: %(default)s)"
    )
    parser.add_argument(
        "--delta",
        type=float,
        default=0.5,
        help="the theorems' failure probability (default: %(default)s)",
    )
    parser.add_argument(
        "--rkhs-norm",
        type=float,
        default=1.0,
        help="B, the ground truths' norm (default: %(default)s)",
    )
    parser.add_argument(
        "--noise-std",
        type=float,
        default=0.1,
        help="sigma of the Gaussian noise (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=available_cpus(),
        help="processes (default: the available CPUs, %(default)s)",
    )
    parser.add_argument(
        "--bounds",
        nargs="+",
        choices=[case.name for case in CASES],
        metavar="NAME",
        help="only these bounds (and their B/4 controls); default: all",
    )
    parser.add_argument(
        "--output",
        default="results/coverage.json",
        help="JSON file; the CSV goes next to it (default: %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; 0 if every bound's rate is
    compatible with ``delta`` and every control shows violations, else 1.

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.benchmarks.coverage import main
        >>> main(["--quick", "--output", tempfile.mkdtemp() + "/c.json"])  # doctest: +SKIP
        coverage: R = 20 runs, T = 20, delta = 0.5, ...
        0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 < args.delta < 1:
        parser.error(f"--delta must lie in (0, 1), got {args.delta}")
    for name in ("rkhs_norm", "noise_std"):
        if not 0 < getattr(args, name) < math.inf:
            parser.error(f"--{name.replace('_', '-')} must be > 0, got {getattr(args, name)}")
    runs, horizon = (20, 20) if args.quick else (args.runs, args.horizon)
    settings = Settings(runs, horizon, args.delta, args.rkhs_norm, args.noise_std, args.seed)
    start = time.perf_counter()
    with pinned_threads(args.threads) as threads:
        print(
            f"coverage: R = {runs} runs, T = {horizon}, delta = {args.delta:g}, B = "
            f"{args.rkhs_norm:g}, sigma = {args.noise_std:g}, {NUM_CANDIDATES} candidates in "
            f"[0, 1], RBF l = {LENGTHSCALE}; {threads} torch thread(s) x {args.workers} "
            "worker(s)",
            flush=True,
        )
        results = measure(settings, args.workers, threads, args.bounds)
    seconds = time.perf_counter() - start
    print()
    print(table(results))
    print(SLACK_DEFINITION)
    valid = all(row.valid for row in results if not row.control)
    controls = all(row.violations for row in results if row.control)
    print(
        f"every bound's rate <= delta within its interval: {'yes' if valid else 'NO'}; "
        f"every control (B/4) shows violations: {'yes' if controls else 'NO'}; "
        f"wall time {seconds:.0f} s"
    )
    output = Path(args.output)
    extras = {
        "threads": threads,
        "workers": args.workers,
        "seconds": seconds,
        "num_candidates": NUM_CANDIDATES,
        "lengthscale": LENGTHSCALE,
    }
    write_outputs(results, {**asdict(settings), **extras}, output)
    print(f"numbers written to {output} and {output.with_suffix('.csv')}")
    return 0 if valid and controls else 1
