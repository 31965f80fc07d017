r"""Transfer from source tasks in BoTorch's loop: multi-task BO against single-task BO and
BoTorch's ``MultiTaskGP`` on real related, loosely related and anti-correlated tasks.

For each problem (``transfer_problems``: SVM hyperparameters on five scikit-learn data
sets, MHC-I binding affinities), each seed and each method (``transfer_methods``):

1. the sources' data: ``source_observations`` arms of each source task drawn uniformly
   without repeats, observed with the problem's noise; and ``INITIAL_DESIGN`` target arms
   drawn uniformly: the same for every method of a seed;
2. the method picks the next target arm among those not yet evaluated, which is observed,
   until ``--evaluations`` target evaluations (default 40).

The models' hyperparameters are fitted on the initial data (once per problem and seed,
shared by the methods: the data are the same then) and refitted, warm-started from the
last fit, when the target has ``REFIT_AT`` evaluations; in between, each iteration
rebuilds the model on the data so far with the last fitted hyperparameters.

**Regret.** After ``k`` target evaluations, ``f*_0 - max_{s <= k} f_0(x_s)``: the best
evaluated noise-free target value (``f*_0`` the target's best arm). The table gives its
median and quartiles over the seeds after 10, 20 and 40 evaluations, and the ratio of the
mean regret (over the seeds and the three checkpoints) to single-task BO's
(``ST-qLogNEI``), with the median CPU seconds per iteration. The figure shows the median
regret curves with quartile bands.

The issue's aims, printed under the table: at least 30% lower regret than single-task
BO when the sources are related (``*-related``), never more than 5% higher otherwise.

One JSON file per (problem, method, seed) is written atomically to ``--output`` as soon as
its run ends; a rerun skips the runs already written (resume); ``--fresh`` recomputes
them. Torch threads are pinned (``--threads``, default 1) in each of ``--workers``
processes.

Usage::

    python -m botorch_mtucb benchmark transfer            # 10 seeds, 40 evaluations
    python -m botorch_mtucb benchmark transfer --quick    # 1 seed, 5 evaluations, hpo-related
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from botorch_mtucb.benchmarks.botorch_loop_report import plot, quartiles
from botorch_mtucb.benchmarks.coverage import available_cpus
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.benchmarks.transfer_methods import (
    METHODS,
    TransferState,
    fit_multi_task_gp,
    fit_single_task_gp,
)
from botorch_mtucb.benchmarks.transfer_problems import TRANSFER_PROBLEMS
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.utils.files import write_atomically
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "transfer from source tasks: single-task BO, BoTorch's MultiTaskGP and the package's "
    "multi-task routes on real related and anti-correlated tasks (regret at 10/20/40)"
)
BASELINE = "ST-qLogNEI"
INITIAL_DESIGN = 2  # target arms drawn uniformly before the first choice
CHECKPOINTS = (5, 10, 20, 40)  # target evaluations at which the regret is reported
REFIT_AT = (10, 20, 30)  # target evaluations at which the hyperparameters are refitted


@dataclass(frozen=True)
class TransferSettings:
    """What a run depends on (its file records them; a mismatch reruns it).

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import TransferSettings
        >>> TransferSettings(evaluations=40).checkpoints()
        [10, 20, 40]
    """

    evaluations: int
    initial_design: int = INITIAL_DESIGN
    refit_at: tuple[int, ...] = REFIT_AT

    def checkpoints(self) -> list[int]:
        """The reported numbers of evaluations: ``CHECKPOINTS`` up to ``evaluations``,
        and ``evaluations``."""
        kept = [k for k in CHECKPOINTS if k < self.evaluations]
        return [*kept, self.evaluations]


@dataclass
class TransferRun:
    """One (problem, method, seed) run.

    Attributes:
        regret: The simple regret after ``1, ..., evaluations`` target evaluations.
        seconds_per_iteration: Median CPU seconds of one choice (fit included).
        error: The traceback if the run raised (``regret`` then stops there).
        settings: ``asdict(TransferSettings)`` (lists for tuples).
        evaluated: The target arms evaluated, in order (indices into the target's arms).

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import TransferRun
        >>> TransferRun("hpo-related", "random", 0, [0.5, 0.1], 0.0, None, {}, [3, 7]).regret[-1]
        0.1
    """

    problem: str
    method: str
    seed: int
    regret: list[float]
    seconds_per_iteration: float
    error: str | None
    settings: dict
    evaluated: list[int]


def _settings_record(settings: TransferSettings) -> dict:
    return json.loads(json.dumps(asdict(settings)))  # tuples as lists, as a file holds them


@dataclass
class TargetOracle:
    """The target's noise-free values and its observation noise (what methods do not see).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.transfer import TargetOracle
        >>> oracle = TargetOracle(torch.tensor([0.2, 0.9]), 0.0, torch.Generator())
        >>> oracle.regret(0), float(oracle.observe(1))
        (0.7, 0.9)
    """

    values: torch.Tensor
    noise_std: float
    noise: torch.Generator

    def regret(self, index: int) -> float:
        """``f*_0 - f_0(arm index)``."""
        return float(self.values.max() - self.values[index])

    def observe(self, index: int) -> torch.Tensor:
        """``f_0(arm index)`` plus Gaussian noise (a 0-d float64 tensor)."""
        return self.values[index].to(torch.float64) + self.noise_std * torch.randn(
            (), generator=self.noise, dtype=torch.float64
        )

    def copy(self) -> TargetOracle:
        """The same values, and a noise stream at the same point."""
        noise = torch.Generator()
        noise.set_state(self.noise.get_state())
        return TargetOracle(self.values, self.noise_std, noise)


def initial_state(
    problem_name: str, seed: int, settings: TransferSettings
) -> tuple[TransferState, TargetOracle]:
    """The sources' data and the initial target design of ``seed`` (module docstring).

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import TransferSettings, initial_state
        >>> state, oracle = initial_state("hpo-negated", 0, TransferSettings(40))
        >>> len(state.evaluated), tuple(state.source_X.shape), state.num_tasks
        (2, (60, 2), 3)
    """
    spec = TRANSFER_PROBLEMS[problem_name]
    problem = spec.build()
    draws = torch.Generator().manual_seed(seed)
    noise = torch.Generator().manual_seed(30_000 + seed)
    arms = [a.to(torch.float64) for a in problem.arms]
    values = [v.to(torch.float64) for v in problem.values]
    source_X, source_Y, source_tasks = [], [], []
    for task in range(1, problem.num_tasks):
        size = min(spec.source_observations, arms[task].shape[0])
        index = torch.randperm(arms[task].shape[0], generator=draws)[:size]
        observed = values[task][index] + problem.noise_std * torch.randn(
            size, generator=noise, dtype=torch.float64
        )
        source_X.append(arms[task][index])
        source_Y.append(observed.unsqueeze(-1))
        source_tasks.append(torch.full((size,), task, dtype=torch.long))
    start = torch.randperm(arms[0].shape[0], generator=draws)[: settings.initial_design].tolist()
    state = TransferState(
        arms[0], [], arms[0].new_zeros(0, 1), torch.cat(source_X), torch.cat(source_Y),
        torch.cat(source_tasks), problem.num_tasks, arms, torch.Generator().manual_seed(seed),
    )  # fmt: skip
    state.budget = settings.evaluations
    oracle = TargetOracle(values[0], problem.noise_std, noise)
    for index in start:
        _evaluate(state, oracle, index)
    return state, oracle


def _evaluate(state: TransferState, oracle: TargetOracle, index: int) -> None:
    state.evaluated.append(int(index))
    state.target_Y = torch.cat([state.target_Y, oracle.observe(index).reshape(1, 1)])


def _copy(state: TransferState) -> TransferState:
    """A fresh copy for one method: the same data, random stream and first fits."""
    return TransferState(
        state.arms, list(state.evaluated), state.target_Y.clone(), state.source_X,
        state.source_Y, state.source_tasks, state.num_tasks, state.source_domains,
        torch.Generator().manual_seed(state.generator.initial_seed()), dict(state.fitted),
        budget=state.budget,
    )  # fmt: skip


def run_method(
    state: TransferState,
    oracle: TargetOracle,
    problem: str,
    method: str,
    seed: int,
    settings: TransferSettings,
) -> TransferRun:
    """One method from the initial ``state`` (copies of ``state`` and ``oracle`` are used)
    to ``settings.evaluations`` target evaluations.

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import (TransferSettings, initial_state,
        ...     run_method)
        >>> settings = TransferSettings(evaluations=4)
        >>> state, oracle = initial_state("hpo-related", 0, settings)
        >>> run = run_method(state, oracle, "hpo-related", "random", 0, settings)
        >>> len(run.regret), run.error, run.regret == sorted(run.regret, reverse=True)
        (4, None, True)
    """
    state, oracle = _copy(state), oracle.copy()
    regret = []
    for index in state.evaluated:
        regret.append(min([*regret, oracle.regret(index)]))
    choose, seconds, error = METHODS[method](), [], None
    while len(state.evaluated) < settings.evaluations:
        state.refit = len(state.evaluated) in settings.refit_at
        try:
            start = time.process_time()
            index = choose(state)
            seconds.append(time.process_time() - start)
        except Exception:  # recorded and reported; the other runs go on
            error = traceback.format_exc()
            break
        _evaluate(state, oracle, index)
        regret.append(min(regret[-1], oracle.regret(index)))
    spent = statistics.median(seconds) if seconds else float("nan")
    record = _settings_record(settings)
    return TransferRun(problem, method, seed, regret, spent, error, record, list(state.evaluated))


_NEEDS_FIT = {"ST-qLogNEI": ("single",), "random": ()}  # the others: the MultiTaskGP


def run_group(
    problem: str, seed: int, methods: Sequence[str], settings: TransferSettings, output: Path
) -> list[TransferRun]:
    """The ``methods`` on one problem and seed, from one initial state whose first fits
    they share; each run's file is written as soon as it ends."""
    state, oracle = initial_state(problem, seed, settings)
    kinds = {kind for method in methods for kind in _NEEDS_FIT.get(method, ("multi",))}
    state.refit = True
    if "single" in kinds:
        fit_single_task_gp(state)
    if "multi" in kinds:
        fit_multi_task_gp(state)
    runs = []
    for method in methods:
        run = run_method(state, oracle, problem, method, seed, settings)
        path = run_file(output, problem, method, seed)
        write_atomically(path, (json.dumps(asdict(run), indent=1) + "\n").encode())
        runs.append(run)
    return runs


def run_file(output: Path, problem: str, method: str, seed: int) -> Path:
    """``output / "{problem}__{method}__seed{seed}.json"``."""
    return output / f"{problem}__{method}__seed{seed}.json"


def load_run(path: Path, settings: TransferSettings) -> TransferRun | None:
    """The complete run at ``path``, or ``None`` if absent, unreadable, malformed, failed
    (it is tried again) or of other settings.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.transfer import TransferSettings, load_run
        >>> load_run(pathlib.Path(tempfile.mkdtemp()) / "none.json", TransferSettings(4))
    """
    try:
        run = TransferRun(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if run.settings != _settings_record(settings) or run.error is not None:
        return None
    regret = run.regret
    numbers = isinstance(regret, list) and all(
        isinstance(value, (int, float)) and not isinstance(value, bool) for value in regret
    )
    if not numbers or len(regret) != settings.evaluations:
        return None
    if not isinstance(run.evaluated, list) or len(run.evaluated) != settings.evaluations:
        return None
    if not isinstance(run.seconds_per_iteration, (int, float)):
        return None
    return run


def _group_and_store(problem, seed, methods, settings, output, threads) -> list[TransferRun]:
    with pinned_threads(threads):
        return run_group(problem, seed, methods, settings, output)


def measure(
    problems: Sequence[str],
    methods: Sequence[str],
    seeds: Sequence[int],
    settings: TransferSettings,
    output: Path,
    workers: int = 1,
    threads: int = 1,
    fresh: bool = False,
) -> list[TransferRun]:
    """Every (problem, method, seed) run, reusing those in ``output`` unless ``fresh``.

    Raises:
        ValueError: If ``output`` holds runs of other settings and not ``fresh``.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.transfer import TransferSettings, measure
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> runs = measure(["hpo-related"], ["random"], [0], TransferSettings(3), out)
        ... # doctest: +ELLIPSIS
        hpo-related random seed 0: regret ...
        >>> [p.name for p in out.iterdir()]
        ['hpo-related__random__seed0.json']
    """
    output.mkdir(parents=True, exist_ok=True)
    runs, groups, other = [], [], []
    for seed in seeds:  # seed by seed: an interrupted run leaves comparable sets
        for problem in problems:
            todo = []
            for method in methods:
                path = run_file(output, problem, method, seed)
                stored = None if fresh else load_run(path, settings)
                if stored is not None:
                    runs.append(stored)
                    continue
                recorded = stored_settings(path)
                if not fresh and recorded not in (None, _settings_record(settings)):
                    other.append(recorded)
                todo.append(method)
            if todo:
                groups.append((problem, seed, todo))
    if other:  # never overwrite another experiment's runs without being told
        raise ValueError(
            f"{output} holds {len(other)} run(s) of other settings (e.g. {other[0]}, these "
            f"are {_settings_record(settings)}): give another --output, or --fresh"
        )
    if runs:
        print(f"{len(runs)} run(s) already in {output} (--fresh recomputes them)", flush=True)
    arguments = [(p, s, m, settings, output, threads) for p, s, m in groups]
    if workers == 1:
        for group in (_group_and_store(*a) for a in arguments):
            runs.extend(_report(run) for run in group)
        return runs
    pool = ProcessPoolExecutor(workers)
    try:
        futures = [pool.submit(_group_and_store, *a) for a in arguments]
        for future in futures:
            runs.extend(_report(run) for run in future.result())
    except BaseException:  # Ctrl-C or a failure: drop the queued groups, keep the written
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return runs


def stored_settings(path: Path) -> dict | None:
    """The ``settings`` in the run file at ``path`` (``None``: no readable file)."""
    try:
        settings = json.loads(path.read_text()).get("settings")
    except (OSError, ValueError, AttributeError):
        return None
    return settings if isinstance(settings, dict) else None


def _report(run: TransferRun) -> TransferRun:
    status = "FAILED" if run.error else f"regret {run.regret[-1]:.4g}"
    print(
        f"{run.problem} {run.method} seed {run.seed}: {status}, "
        f"{run.seconds_per_iteration:.2f} CPU s/iteration",
        flush=True,
    )
    return run


def table(
    runs: Sequence[TransferRun],
    problems: Sequence[str],
    methods: Sequence[str],
    settings: TransferSettings,
) -> str:
    """Median [quartiles] regret at each checkpoint, the mean-regret ratio to ``BASELINE``
    and the median CPU seconds per iteration, one row per (problem, method).

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import TransferRun, TransferSettings, table
        >>> runs = [TransferRun("hpo-related", m, 0, [0.4, 0.2], 0.1, None, {}, [0, 1])
        ...         for m in ("random", "ST-qLogNEI")]
        >>> print(table(runs, ["hpo-related"], ["random", "ST-qLogNEI"], TransferSettings(2)))
        ... # doctest: +ELLIPSIS
        problem ...
    """
    checkpoints = settings.checkpoints()
    header = ["problem", "method", *(f"regret@{k}" for k in checkpoints), "vs ST", "s/iter", "runs"]
    rows = []
    for problem in problems:
        baseline = _mean_regret(runs, problem, BASELINE, checkpoints)
        for method in methods:
            done = [r for r in runs if r.problem == problem and r.method == method and not r.error]
            if not done:
                continue
            cells = []
            for k in checkpoints:
                low, mid, high = quartiles([r.regret[k - 1] for r in done])
                cells.append(f"{mid:.3g} [{low:.3g}, {high:.3g}]")
            mean = _mean_regret(runs, problem, method, checkpoints)
            ratio = "-" if not baseline else f"{mean / baseline:.2f}"
            seconds = statistics.median(r.seconds_per_iteration for r in done)
            rows.append([problem, method, *cells, ratio, f"{seconds:.2f}", str(len(done))])
    return format_table(rows, header)


def _mean_regret(runs, problem: str, method: str, checkpoints: Sequence[int]) -> float | None:
    values = [
        r.regret[k - 1]
        for r in runs
        if r.problem == problem and r.method == method and not r.error
        for k in checkpoints
    ]
    return statistics.fmean(values) if values else None


def aims(runs: Sequence[TransferRun], problems: Sequence[str], settings: TransferSettings) -> str:
    """One line per (problem, multi-task method): its mean-regret ratio to single-task BO
    against the aim (``<= 0.70`` for ``*-related`` problems, ``<= 1.05`` otherwise)."""
    lines = []
    checkpoints = settings.checkpoints()
    for problem in problems:
        baseline = _mean_regret(runs, problem, BASELINE, checkpoints)
        limit = 0.70 if problem.endswith("-related") else 1.05
        for method in sorted({r.method for r in runs if r.problem == problem}):
            mean = _mean_regret(runs, problem, method, checkpoints)
            if method in (BASELINE, "random") or mean is None or not baseline:
                continue
            ratio = mean / baseline
            verdict = "met" if ratio <= limit else "missed"
            lines.append(f"{problem:22s} {method:14s} {ratio:5.2f} (aim <= {limit:.2f}): {verdict}")
    return "\n".join(lines)


def _parser():
    parser = benchmark_parser("transfer", DESCRIPTION, "1 seed, 5 evaluations, hpo-related")
    parser.add_argument("--seeds", type=positive_int, default=10, help="(default: %(default)s)")
    parser.add_argument(
        "--evaluations",
        type=positive_int,
        default=40,
        help="target evaluations per run, the initial design included (default: %(default)s)",
    )
    parser.add_argument(
        "--problems", nargs="+", choices=sorted(TRANSFER_PROBLEMS), default=list(TRANSFER_PROBLEMS)
    )
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help=f"processes (default 1; this machine has {available_cpus()} CPUs)",
    )
    parser.add_argument("--output", default="results/transfer", help="(default: %(default)s)")
    parser.add_argument("--fresh", action="store_true", help="recompute the stored runs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; 0 if every run completed,
    1 if one raised (its traceback is printed), 130 if interrupted (the runs written so
    far are kept; the same command resumes)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.quick:
        seeds, evaluations, problems = 1, 5, ["hpo-related"]
    else:
        seeds, evaluations, problems = args.seeds, args.evaluations, args.problems
    if evaluations <= INITIAL_DESIGN:
        parser.error(f"--evaluations must exceed the initial design ({INITIAL_DESIGN})")
    settings = TransferSettings(evaluations)
    output = Path(args.output)
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        parser.error(f"--output {output}: cannot create the directory ({error})")
    start = time.perf_counter()
    with pinned_threads(args.threads) as threads:
        print(
            f"transfer: {seeds} seed(s) x {evaluations} target evaluations, "
            f"{', '.join(problems)}; {threads} torch thread(s) x {args.workers} worker(s)",
            flush=True,
        )
        try:
            runs = measure(
                problems, args.methods, range(seeds), settings, output, args.workers, threads,
                args.fresh,
            )  # fmt: skip
        except ValueError as error:
            parser.error(str(error))
        except KeyboardInterrupt:
            written = len(list(output.glob("*.json")))
            print(f"\ninterrupted: {written} run file(s) in {output}; the same command resumes",
                  file=sys.stderr)  # fmt: skip
            return 130
    print()
    print("simple regret f*_0 - max f_0(evaluated) after k target evaluations: median "
          "[quartiles] over seeds;")  # fmt: skip
    print(f"vs ST: mean regret over seeds and checkpoints / {BASELINE}'s; s/iter: median CPU s")
    print(table(runs, problems, args.methods, settings))
    print()
    print(aims(runs, problems, settings))
    figure = output / "regret.png"
    plot(runs, problems, args.methods, figure, xlabel="target evaluations", first=1)
    failed = [r for r in runs if r.error]
    for run in failed:
        print(f"\n{run.problem} {run.method} seed {run.seed} raised:\n{run.error}", file=sys.stderr)
    print(f"\nwall time {time.perf_counter() - start:.0f} s; runs in {output}, figure {figure}")
    return 1 if failed else 0
