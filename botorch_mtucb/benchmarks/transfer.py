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
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from botorch_mtucb.benchmarks.botorch_loop_report import plot
from botorch_mtucb.benchmarks.coverage import available_cpus
from botorch_mtucb.benchmarks.stored_runs import (
    interrupted,
    output_directory,
    report_failures,
    report_run,
    results_in_order,
    stored_and_missing,
)
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.benchmarks.transfer_methods import (
    METHODS,
    TransferState,
    fit_multi_task_gp,
    fit_single_task_gp,
)
from botorch_mtucb.benchmarks.transfer_problems import (
    INITIAL_DESIGN,
    TRANSFER_PROBLEMS,
    TargetOracle,
    copy_state,
    evaluate,
    initial_state,
)
from botorch_mtucb.benchmarks.transfer_report import BASELINE, aims, table
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.utils.files import write_atomically
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "transfer from source tasks: single-task BO, BoTorch's MultiTaskGP and the package's "
    "multi-task routes on real related and anti-correlated tasks (regret at 10/20/40)"
)
CHECKPOINTS = (5, 10, 20, 40)  # target evaluations at which the regret is reported
REFIT_AT = (10, 20, 30)  # target evaluations at which the hyperparameters are refitted


@dataclass(frozen=True)
class TransferSettings:
    """What a run depends on (its file records them; a mismatch reruns it).

    Example:
        >>> from botorch_mtucb.benchmarks.transfer import TransferSettings
        >>> TransferSettings(evaluations=40).checkpoints()
        [5, 10, 20, 40]
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
        >>> from botorch_mtucb.benchmarks.transfer import TransferSettings, run_method
        >>> from botorch_mtucb.benchmarks.transfer_problems import initial_state
        >>> settings = TransferSettings(evaluations=4)
        >>> state, oracle = initial_state("hpo-related", 0, 4)
        >>> run = run_method(state, oracle, "hpo-related", "random", 0, settings)
        >>> len(run.regret), run.error, run.regret == sorted(run.regret, reverse=True)
        (4, None, True)
    """
    state, oracle = copy_state(state), oracle.copy()
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
        evaluate(state, oracle, index)
        regret.append(min(regret[-1], oracle.regret(index)))
    spent = statistics.median(seconds) if seconds else float("nan")
    record = _settings_record(settings)
    return TransferRun(problem, method, seed, regret, spent, error, record, list(state.evaluated))


# the model kinds whose first fit each method uses
_NEEDS_FIT = {"ST-qLogNEI": ("single",), "random": (), "MTGP-qLogNEI": ("multi",)}


def run_group(
    problem: str, seed: int, methods: Sequence[str], settings: TransferSettings, output: Path
) -> list[TransferRun]:
    """The ``methods`` on one problem and seed, from one initial state whose first fits
    they share; each run's file is written as soon as it ends.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.transfer import TransferSettings, run_group
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> [run.method for run in run_group("hpo-loose", 0, ["random"], TransferSettings(3), out)]
        ['random']
    """
    state, oracle = initial_state(problem, seed, settings.evaluations, settings.initial_design)
    kinds = {kind for method in methods for kind in _NEEDS_FIT.get(method, ("signed",))}
    state.refit = True
    if "single" in kinds:
        fit_single_task_gp(state)
    if "multi" in kinds:
        fit_multi_task_gp(state)
    if "signed" in kinds:
        fit_multi_task_gp(state, signed=True)
    runs = []
    for method in methods:
        run = run_method(state, oracle, problem, method, seed, settings)
        path = run_file(output, problem, method, seed)
        write_atomically(path, (json.dumps(asdict(run), indent=1) + "\n").encode())
        runs.append(run)
    return runs


def run_file(output: Path, problem: str, method: str, seed: int) -> Path:
    """``output / "{problem}__{method}__seed{seed}.json"``.

    Example:
        >>> from pathlib import Path
        >>> from botorch_mtucb.benchmarks.transfer import run_file
        >>> run_file(Path("out"), "hpo-related", "MT-KB", 3).name
        'hpo-related__MT-KB__seed3.json'
    """
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
    # seed by seed: an interrupted run leaves comparable sets
    keys = [(p, s, m) for s in seeds for p in problems for m in methods]
    paths = [run_file(output, p, m, s) for p, s, m in keys]
    runs, missing = stored_and_missing(paths, lambda path: load_run(path, settings),
                                       _settings_record(settings), fresh)  # fmt: skip
    groups: dict[tuple[str, int], list[str]] = {}
    for p, s, m in (keys[i] for i in missing):  # one group per problem and seed
        groups.setdefault((p, s), []).append(m)
    arguments = [(p, s, m, settings, output, threads) for (p, s), m in groups.items()]
    for group in results_in_order(_group_and_store, arguments, workers):
        runs.extend(report_run(run, "CPU s/iteration") for run in group)
    return runs


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
    far are kept; the same command resumes).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.benchmarks.transfer import main
        >>> main(["--quick", "--output", tempfile.mkdtemp()])  # doctest: +SKIP
        transfer: 1 seed(s) x 5 target evaluations, hpo-related; ...
        0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.quick:
        seeds, evaluations, problems = 1, 5, ["hpo-related"]
    else:
        seeds, evaluations, problems = args.seeds, args.evaluations, args.problems
    if evaluations <= INITIAL_DESIGN:
        parser.error(f"--evaluations must exceed the initial design ({INITIAL_DESIGN})")
    settings = TransferSettings(evaluations)
    output = output_directory(parser, args.output)
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
            return interrupted(output)
    print()
    print("simple regret f*_0 - max f_0(evaluated) after k target evaluations: median "
          "[quartiles] over seeds;")  # fmt: skip
    print(f"vs ST: mean regret over seeds and checkpoints / {BASELINE}'s; s/iter: median CPU s")
    print(table(runs, problems, args.methods, settings))
    print()
    print(aims(runs, problems, settings))
    figure = output / "regret.png"
    plot(runs, problems, args.methods, figure, xlabel="target evaluations", first=1)
    failed = report_failures(runs)
    print(f"\nwall time {time.perf_counter() - start:.0f} s; runs in {output}, figure {figure}")
    return failed
