r"""When to stop: the package's certified stopping rule against the baselines' rules.

For each problem of ``stopping_problems.PROBLEMS``, each acquisition and each seed, one
BO run: ``d + 1`` points drawn uniformly (the same for every acquisition of a seed), then
until ``T`` evaluations the acquisition's choice, observed with Gaussian noise. After
every evaluation ``t >= d + 1`` three stopping rules read the same data:

* ``certified`` (the package's): ``CertifiedStopping(epsilon)``; its certificate
  ``max_x u_t(x) - l_t(x_hat)`` bounds the simple regret of ``x_hat`` (the evaluated
  point with the largest lower bound). On the known-norm problems the bound is paper
  002's exact martingale mixture with the true ``B``, ``sigma`` and kernel (``delta``):
  the guarantee holds, for every round at once and whatever chose the points. On the
  standard problems it is built from the fitted GP with ``B`` chosen from the data
  (practical, not guaranteed).
* ``makarova``: Makarova et al. 2022's UCB-LCB bound with their ``beta_t``
  (``stopping_baselines``), threshold ``epsilon``; recommendation: their incumbent.
* ``ax-improvement``: Ax's improvement-based global stopping strategy (defaults
  ``window_size = 5``, ``improvement_bar = 0.1``; ``min_trials = 5``); recommendation:
  the best observed point.

Acquisitions (``ACQUISITIONS``): ``MM-UCB`` (``MartingaleMixtureUCB``: the known-B bound
on the known-norm problems, ``MartingaleMixtureUCB(gp, delta)`` on the others),
``qLogNEI``, ``UCB(beta=0.2)`` and ``random``, maximized over the finite domain (boxes:
512 uniform points drawn each round). The GP is BoTorch's ``SingleTaskGP``: on the
known-norm problems with the true kernel and noise (nothing fitted), on the others fitted
each round (``fit_gpytorch_mll``, ``Standardize``).

Per (problem, acquisition, rule), over the runs: how often the rule stopped with true
simple regret ``> epsilon`` (premature; a run that never stops is not premature), how
often its bound was below the true regret of its recommendation at some round
(miscoverage; ``-`` for Ax's rule, which has no bound), each with a Clopper-Pearson 95%
interval, and the evaluations until it stopped (runs that stopped) and until the oracle
stop (the first round whose recommendation was ``epsilon``-optimal): median and
quartiles. Pooled rows gather the known-norm problems. The check: on the known-norm
problems the certified rule's premature-stop and miscoverage rates are ``<= delta``
within their intervals (exit code 1 otherwise).

Runs go to ``--workers`` processes of ``--threads`` torch threads each; the numbers
depend on neither (every draw comes from generators seeded by ``(seed, round, stream)``).
The rows, the runs and the settings are written atomically to ``--output`` (JSON).

Usage::

    python -m botorch_mtucb benchmark certified-stopping --workers 2
    python -m botorch_mtucb benchmark certified-stopping --quick
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from botorch_mtucb.benchmarks.coverage import available_cpus
from botorch_mtucb.benchmarks.coverage_report import clopper_pearson
from botorch_mtucb.benchmarks.stopping_loop import ACQUISITIONS, RULES, RunResult, run_once
from botorch_mtucb.benchmarks.stopping_problems import PROBLEMS
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.utils.files import write_atomically
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "the certified stopping rule vs Makarova et al.'s UCB-LCB rule and Ax's improvement "
    "rule under MM-UCB, qLogNEI, UCB and random search: premature stops, miscoverage, "
    "evaluations to stop"
)
QUICK_PROBLEMS = ("rkhs-finite-1d", "rkhs-box-1d", "branin")
KNOWN_NORM = "known-norm (pooled)"


@dataclass(frozen=True)
class Row:
    """One row of the table (see the module docstring).

    Example:
        >>> from botorch_mtucb.benchmarks.certified_stopping import summarize
        >>> from botorch_mtucb.benchmarks.stopping_loop import RuleOutcome
        >>> outcome = RuleOutcome(stop=8, stop_regret=0.5, oracle=6, miscovered=False)
        >>> row = summarize("p", "known B", "random", "certified", [outcome], 0.3)
        >>> row.premature, row.stopped, row.stop_quartiles
        (1, 1, (8.0, 8.0, 8.0))
    """

    problem: str
    assumptions: str
    acquisition: str
    rule: str
    runs: int
    stopped: int
    premature: int
    premature_interval: tuple[float, float]
    miscovered: int | None
    miscovered_interval: tuple[float, float] | None
    stop_quartiles: tuple[float, float, float] | None
    oracle_quartiles: tuple[float, float, float] | None
    oracle_reached: int


def _quartiles(values: Sequence[float]) -> tuple[float, float, float] | None:
    if not values:
        return None
    q = torch.quantile(
        torch.tensor(values, dtype=torch.float64),
        torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64),
    )
    return float(q[0]), float(q[1]), float(q[2])


def summarize(problem, assumptions, acquisition, rule, outcomes, epsilon) -> Row:
    """The ``Row`` of a rule's outcomes (``stopping_loop.RuleOutcome``) over runs;
    ``epsilon`` is the problem's, a premature stop has regret ``> epsilon``.

    Example:
        >>> from botorch_mtucb.benchmarks.certified_stopping import summarize
        >>> from botorch_mtucb.benchmarks.stopping_loop import RuleOutcome
        >>> outcomes = [RuleOutcome(5, 0.2, 5, False), RuleOutcome(None, None, 9, True)]
        >>> row = summarize("p", "known B", "random", "certified", outcomes, 0.1)
        >>> row.stopped, row.premature, row.miscovered, row.oracle_quartiles
        (1, 1, 1, (6.0, 7.0, 8.0))
    """
    stopped = [o for o in outcomes if o.stop is not None]
    premature = sum(o.stop_regret > epsilon for o in stopped)
    has_bound = all(o.miscovered is not None for o in outcomes)
    miscovered = sum(bool(o.miscovered) for o in outcomes) if has_bound else None
    reached = [o.oracle for o in outcomes if o.oracle is not None]
    return Row(
        problem,
        assumptions,
        acquisition,
        rule,
        len(outcomes),
        len(stopped),
        premature,
        clopper_pearson(premature, len(outcomes)),
        miscovered,
        None if miscovered is None else clopper_pearson(miscovered, len(outcomes)),
        _quartiles([o.stop for o in stopped]),
        _quartiles(reached),
        len(reached),
    )


def rows(results: Sequence[RunResult]) -> list[Row]:
    """Per (problem, acquisition, rule), then the known-norm problems pooled per
    (acquisition, rule) and over all acquisitions per rule.

    Example:
        >>> from botorch_mtucb.benchmarks.certified_stopping import rows
        >>> from botorch_mtucb.benchmarks.stopping_loop import RuleOutcome, RunResult
        >>> o = RuleOutcome(5, 0.0, 5, False)
        >>> run = RunResult("rkhs-finite-1d", "random", 0, dict.fromkeys(
        ...     ["certified", "makarova", "ax-improvement"], o))
        >>> [(r.problem, r.acquisition) for r in rows([run])][::3]
        [('rkhs-finite-1d', 'random'), ('known-norm (pooled)', 'random'), ('known-norm (pooled)', 'all')]
    """
    table = []
    problems = list(dict.fromkeys(r.problem for r in results))
    acquisitions = list(dict.fromkeys(r.acquisition for r in results))
    for problem in problems:
        spec = PROBLEMS[problem]
        label = "known B" if spec.known_norm else "practical"
        for acquisition in acquisitions:
            chosen = [r for r in results if r.problem == problem and r.acquisition == acquisition]
            for rule in RULES:
                outcomes = [r.outcomes[rule] for r in chosen]
                if outcomes:
                    table.append(
                        summarize(problem, label, acquisition, rule, outcomes, spec.epsilon)
                    )
    known = [r for r in results if PROBLEMS[r.problem].known_norm]
    epsilon = {r.problem: PROBLEMS[r.problem].epsilon for r in known}
    if len(set(epsilon.values())) == 1 and known:
        (shared,) = set(epsilon.values())
        for acquisition in [*acquisitions, "all"]:
            chosen = [r for r in known if acquisition in ("all", r.acquisition)]
            for rule in RULES:
                outcomes = [r.outcomes[rule] for r in chosen]
                table.append(summarize(KNOWN_NORM, "known B", acquisition, rule, outcomes, shared))
    return table


def _rate(count: int | None, runs: int, interval) -> str:
    if count is None:
        return "-"
    return f"{count}/{runs} = {count / runs:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _spread(quartiles) -> str:
    if quartiles is None:
        return "-"
    return f"{quartiles[1]:g} [{quartiles[0]:g}, {quartiles[2]:g}]"


HEADER = [
    "problem", "theory", "acquisition", "rule", "stopped", "premature (95% CI)",
    "miscoverage (95% CI)", "evals to stop", "oracle",
]  # fmt: skip


def format_rows(table: Sequence[Row]) -> str:
    """The printed table: rates as ``k/R = rate [CI]``, evaluations as ``median [q1,
    q3]``.

    Example:
        >>> from botorch_mtucb.benchmarks.certified_stopping import format_rows, summarize
        >>> from botorch_mtucb.benchmarks.stopping_loop import RuleOutcome
        >>> row = summarize("p", "known B", "random", "certified", [RuleOutcome(5, 0.0, 4, False)], 0.1)
        >>> print(format_rows([row]).splitlines()[2])  # doctest: +NORMALIZE_WHITESPACE
        p  known B  random  certified  1/1  0/1 = 0.000 [0.000, 0.975]  0/1 = 0.000 [0.000, 0.975]  5 [5, 5]  4 [4, 4] (1)
    """
    lines = [
        [
            row.problem,
            row.assumptions,
            row.acquisition,
            row.rule,
            f"{row.stopped}/{row.runs}",
            _rate(row.premature, row.runs, row.premature_interval),
            _rate(row.miscovered, row.runs, row.miscovered_interval),
            _spread(row.stop_quartiles),
            _spread(row.oracle_quartiles) + f" ({row.oracle_reached})",
        ]
        for row in table
    ]
    return format_table(lines, HEADER)


def check(table: Sequence[Row], delta: float) -> bool:
    """Whether every certified row with the theory's assumptions has premature-stop
    and miscoverage rates ``<= delta`` within their intervals (lower ends).

    Example:
        >>> from botorch_mtucb.benchmarks.certified_stopping import check, summarize
        >>> from botorch_mtucb.benchmarks.stopping_loop import RuleOutcome
        >>> bad = summarize("p", "known B", "random", "certified",
        ...                 [RuleOutcome(5, 0.5, None, True)] * 20, 0.1)
        >>> check([bad], delta=0.1)
        False
    """
    chosen = [r for r in table if r.rule == "certified" and r.assumptions == "known B"]
    return all(
        r.premature_interval[0] <= delta and r.miscovered_interval[0] <= delta for r in chosen
    )


def _initialize_worker(threads: int) -> None:
    if threads > 0:
        torch.set_num_threads(threads)


def measure(tasks, settings, workers: int, threads: int) -> list[RunResult]:
    """``stopping_loop.run_once`` for each ``(problem, acquisition, seed)`` of ``tasks``,
    in ``workers`` processes (1: in this one).

    Example:
        >>> from botorch_mtucb.benchmarks.certified_stopping import Settings, measure
        >>> settings = Settings(seeds=1, practical_seeds=1, horizon=3, delta=0.1, seed=0)
        >>> [r.acquisition for r in measure([("rkhs-finite-1d", "random", 0)], settings, 1, 1)]
        ['random']
    """
    arguments = [(p, a, s, settings.horizon, settings.delta) for p, a, s in tasks]
    if workers == 1:
        return [run_once(*a) for a in arguments]
    with ProcessPoolExecutor(workers, initializer=_initialize_worker, initargs=(threads,)) as pool:
        futures = [pool.submit(run_once, *a) for a in arguments]
        return [future.result() for future in futures]


@dataclass(frozen=True)
class Settings:
    """The run's settings (written to the JSON file).

    Example:
        >>> from botorch_mtucb.benchmarks.certified_stopping import Settings
        >>> Settings(seeds=1, practical_seeds=1, horizon=5, delta=0.1, seed=0).horizon
        5
    """

    seeds: int
    practical_seeds: int
    horizon: int
    delta: float
    seed: int


def _parser():
    parser = benchmark_parser(
        "certified-stopping", DESCRIPTION, "3 problems, 1 seed, T = 8 (seconds)"
    )
    parser.add_argument(
        "--seeds", type=positive_int, default=15, help="per known-norm problem and acquisition"
    )
    parser.add_argument(
        "--practical-seeds", type=positive_int, default=4, help="per standard problem"
    )
    parser.add_argument("--horizon", type=positive_int, default=40, help="T (evaluations)")
    parser.add_argument("--delta", type=float, default=0.1, help="(default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    parser.add_argument(
        "--problems", nargs="+", choices=list(PROBLEMS), default=list(PROBLEMS), metavar="NAME"
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help=f"processes (default 1; this machine has {available_cpus()} CPUs)",
    )
    parser.add_argument("--output", default="results/certified-stopping.json", help="JSON file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; 0 if the certified rule's
    rates on the known-norm problems are ``<= delta`` within their intervals, else 1.

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.benchmarks.certified_stopping import main
        >>> main(["--quick", "--output", tempfile.mkdtemp() + "/s.json"])  # doctest: +SKIP
        certified-stopping: ...
        0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 < args.delta < 1:
        parser.error(f"--delta must lie in (0, 1), got {args.delta}")
    if args.quick:
        settings = Settings(1, 1, 8, args.delta, args.seed)
        problems = list(QUICK_PROBLEMS)
    else:
        settings = Settings(args.seeds, args.practical_seeds, args.horizon, args.delta, args.seed)
        problems = args.problems
    tasks = [
        (problem, acquisition, args.seed + seed)
        for problem in problems
        for seed in range(
            settings.seeds if PROBLEMS[problem].known_norm else settings.practical_seeds
        )
        for acquisition in ACQUISITIONS
    ]
    start, cpu = time.perf_counter(), time.process_time()
    with pinned_threads(args.threads) as threads:
        print(
            f"certified-stopping: {len(tasks)} runs ({', '.join(problems)}), T = "
            f"{settings.horizon}, delta = {settings.delta:g}; {threads} torch thread(s) x "
            f"{args.workers} worker(s)",
            flush=True,
        )
        results = measure(tasks, settings, args.workers, threads)
    seconds = time.perf_counter() - start
    cpu_seconds = (
        time.process_time() - cpu + sum(r.cpu_seconds for r in results) * (args.workers > 1)
    )
    table = rows(results)
    print()
    print(format_rows(table))
    valid = check(table, settings.delta)
    print(
        "premature: stopped with true simple regret > epsilon; miscoverage: the rule's bound "
        "below the true regret of its recommendation at some round; evals: median [q1, q3] "
        "over the runs that stopped / reached an epsilon-optimal recommendation (count).\n"
        "epsilon per problem: "
        + ", ".join(f"{p} {PROBLEMS[p].epsilon:g}" for p in problems)
        + f"\ncertified rule, known B: rates <= delta = {settings.delta:g} within their "
        f"intervals: {'yes' if valid else 'NO'}; wall time {seconds:.0f} s, CPU time "
        f"{cpu_seconds:.0f} s"
    )
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    summary = {
        "settings": {**asdict(settings), "problems": problems, "threads": threads,
                     "workers": args.workers, "seconds": seconds, "cpu_seconds": cpu_seconds,
                     "epsilon": {p: PROBLEMS[p].epsilon for p in problems}},
        "rows": [asdict(row) for row in table],
        "runs": [asdict(result) for result in results],
    }  # fmt: skip
    write_atomically(output, (json.dumps(summary, indent=1) + "\n").encode())
    print(f"numbers written to {output}")
    return 0 if valid else 1
