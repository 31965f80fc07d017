r"""The drop-in acquisitions in BoTorch's canonical loop, against BoTorch's own.

For each test function (Branin and Hartmann-6 of ``botorch.test_functions``, negated
so that the loop maximizes), each seed and each method, the loop a BoTorch user runs:

1. ``2 (d + 1)`` scrambled Sobol points (``draw_sobol_samples``, seeded by the seed,
   the same for every method), noise-free evaluations;
2. ``T`` iterations of: ``SingleTaskGP(X, Y, input_transform=Normalize(d))`` (its
   default ``Standardize`` outcome transform, learned noise), ``fit_gpytorch_mll``,
   the acquisition, ``optimize_acqf(q=1, num_restarts=8, raw_samples=256)``, one
   evaluation.

Methods (``METHODS``): ``MM-UCB`` (``MartingaleMixtureUCB(gp, delta=0.01)``, the B
chosen from the data), ``IGP-UCB`` (``IGPUCB(gp, delta=0.01)``, the same B rule),
BoTorch's ``UpperConfidenceBound(gp, beta=0.2)`` and ``qLogNoisyExpectedImprovement(gp,
X_baseline=X)``, and random search (uniform points after the same Sobol design, no
model). The simple regret after ``t`` iterations is ``f* - max_{s <= t} f(x_s)`` over
all evaluated points (initial design included; ``f*`` the function's optimum). The
table gives, per method, the median and quartiles of the final simple regret over the
seeds and the median seconds per iteration (fit, acquisition and optimization; random
search: drawing a point), with its ratio to ``UCB(beta=0.2)`` measured in the same run.
A figure shows the median regret curves with their quartile bands.

One JSON file per (problem, method, seed) is written atomically to ``--output`` as soon
as the run ends, and a rerun skips the runs already written (resume after an
interruption); ``--fresh`` recomputes them. Torch threads are pinned (``--threads``,
default 1) in each of ``--workers`` processes (default 1).

Usage::

    python -m botorch_mtucb benchmark botorch-loop            # 10 seeds, 30 iterations
    python -m botorch_mtucb benchmark botorch-loop --quick    # 2 seeds, 3 iterations
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from botorch.acquisition import UpperConfidenceBound, qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from botorch.optim import optimize_acqf
from botorch.test_functions import Branin, Hartmann
from botorch.test_functions.synthetic import SyntheticTestFunction
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.mlls import ExactMarginalLogLikelihood
from matplotlib.figure import Figure

from botorch_mtucb.acquisition import IGPUCB, MartingaleMixtureUCB
from botorch_mtucb.benchmarks.coverage import available_cpus
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.experiments.plots import save_figure
from botorch_mtucb.utils.files import write_atomically
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "MartingaleMixtureUCB / IGPUCB vs BoTorch's UCB(beta=0.2), qLogNEI and random search "
    "in the canonical SingleTaskGP loop (Branin, Hartmann-6): final regret and s/iteration"
)
DELTA = 0.01
UCB_BETA = 0.2
BASELINE = "UCB(beta=0.2)"
PROBLEMS: dict[str, Callable[[], SyntheticTestFunction]] = {
    "branin": lambda: Branin(negate=True),
    "hartmann6": lambda: Hartmann(dim=6, negate=True),
}


def _mm_ucb(gp: SingleTaskGP, X: torch.Tensor):
    return MartingaleMixtureUCB(gp, delta=DELTA)


def _igp_ucb(gp: SingleTaskGP, X: torch.Tensor):
    return IGPUCB(gp, delta=DELTA)


def _ucb(gp: SingleTaskGP, X: torch.Tensor):
    return UpperConfidenceBound(gp, beta=UCB_BETA)


def _qlognei(gp: SingleTaskGP, X: torch.Tensor):
    return qLogNoisyExpectedImprovement(gp, X_baseline=X)


METHODS: dict[str, Callable | None] = {
    "MM-UCB": _mm_ucb,
    "IGP-UCB": _igp_ucb,
    BASELINE: _ucb,
    "qLogNEI": _qlognei,
    "random": None,
}


@dataclass(frozen=True)
class LoopSettings:
    """What a run depends on (its file records them; a mismatch reruns it).

    Attributes:
        iterations: ``T``, iterations after the initial design.
        num_restarts: ``optimize_acqf``'s restarts.
        raw_samples: ``optimize_acqf``'s raw samples.

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopSettings
        >>> LoopSettings(iterations=30)
        LoopSettings(iterations=30, num_restarts=8, raw_samples=256)
    """

    iterations: int
    num_restarts: int = 8
    raw_samples: int = 256


@dataclass
class LoopRun:
    """One (problem, method, seed) run.

    Attributes:
        problem, method, seed: What ran.
        regret: Simple regret after ``0, 1, ..., T`` iterations (``T + 1`` floats).
        seconds_per_iteration: Median wall time of one iteration.
        error: The traceback if the run raised (then ``regret`` stops there).
        settings: ``asdict(LoopSettings)``.

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopRun
        >>> LoopRun("branin", "random", 0, [1.0, 0.5], 0.01, None, {}).regret[-1]
        0.5
    """

    problem: str
    method: str
    seed: int
    regret: list[float]
    seconds_per_iteration: float
    error: str | None
    settings: dict


def run_loop(problem: str, method: str, seed: int, settings: LoopSettings) -> LoopRun:
    """One run of the loop of the module docstring (float64, noise-free).

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopSettings, run_loop
        >>> run = run_loop("branin", "random", 0, LoopSettings(iterations=2))
        >>> len(run.regret), run.regret[0] >= run.regret[-1] >= 0, run.error
        (3, True, None)
    """
    function = PROBLEMS[problem]().to(torch.float64)
    bounds = function.bounds
    d = bounds.shape[-1]
    X = draw_sobol_samples(bounds, n=2 * (d + 1), q=1, seed=seed).squeeze(-2)
    Y = function(X).unsqueeze(-1)
    optimum = float(function.optimal_value)
    regret = [optimum - float(Y.max())]
    generator = torch.Generator().manual_seed(10_000 + seed)
    torch.manual_seed(seed)  # optimize_acqf's raw samples, qLogNEI's base samples
    seconds, error = [], None
    for _ in range(settings.iterations):
        start = time.perf_counter()
        try:
            x = _next_point(function, METHODS[method], X, Y, settings, generator)
        except Exception:  # recorded, reported in the table, the other runs go on
            error = traceback.format_exc()
            break
        y = function(x).unsqueeze(-1)
        seconds.append(time.perf_counter() - start)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
        regret.append(optimum - float(Y.max()))
    spent = statistics.median(seconds) if seconds else float("nan")
    return LoopRun(problem, method, seed, regret, spent, error, asdict(settings))


def _next_point(function, make_acqf, X, Y, settings: LoopSettings, generator) -> torch.Tensor:
    bounds = function.bounds
    if make_acqf is None:  # random search
        u = torch.rand(1, bounds.shape[-1], generator=generator, dtype=torch.float64)
        return bounds[0] + (bounds[1] - bounds[0]) * u
    gp = SingleTaskGP(X, Y, input_transform=Normalize(bounds.shape[-1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fitting and optimizer chatter
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        acqf = make_acqf(gp, X)
        x, _ = optimize_acqf(
            acqf, bounds, q=1, num_restarts=settings.num_restarts, raw_samples=settings.raw_samples
        )
    return x.detach()


def _run_file(output: Path, problem: str, method: str, seed: int) -> Path:
    safe = method.replace("(", "-").replace(")", "").replace("=", "").replace(".", "")
    return output / f"{problem}__{safe}__seed{seed}.json"


def load_run(path: Path, settings: LoopSettings) -> LoopRun | None:
    """The run stored at ``path``, or ``None`` if absent, unreadable or of other settings
    (then it is run again).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopSettings, load_run
        >>> load_run(pathlib.Path(tempfile.mkdtemp()) / "none.json", LoopSettings(3)) is None
        True
    """
    try:
        data = json.loads(path.read_text())
        run = LoopRun(**data)
    except (OSError, ValueError, TypeError):
        return None
    return run if run.settings == asdict(settings) else None


def _run_and_store(problem, method, seed, settings, output, threads) -> LoopRun:
    with pinned_threads(threads):
        run = run_loop(problem, method, seed, settings)
    path = _run_file(output, problem, method, seed)
    write_atomically(path, (json.dumps(asdict(run), indent=1) + "\n").encode())
    return run


def measure(
    problems: Sequence[str],
    methods: Sequence[str],
    seeds: Sequence[int],
    settings: LoopSettings,
    output: Path,
    workers: int = 1,
    threads: int = 1,
    fresh: bool = False,
) -> list[LoopRun]:
    """Every (problem, method, seed) run, reusing those already in ``output`` unless
    ``fresh``; prints one line per finished run.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopSettings, measure
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> runs = measure(["branin"], ["random"], [0], LoopSettings(1), out)  # doctest: +ELLIPSIS
        branin random seed 0: regret ...
        >>> [p.name for p in out.iterdir()]
        ['branin__random__seed0.json']
    """
    output.mkdir(parents=True, exist_ok=True)
    runs, todo = [], []
    for problem in problems:
        for method in methods:
            for seed in seeds:
                stored = (
                    None if fresh else load_run(_run_file(output, problem, method, seed), settings)
                )
                if stored is not None:
                    runs.append(stored)
                else:
                    todo.append((problem, method, seed))
    if runs:
        print(f"{len(runs)} run(s) already in {output} (--fresh recomputes them)", flush=True)
    arguments = [(p, m, s, settings, output, threads) for p, m, s in todo]
    if workers == 1:
        finished = (_run_and_store(*a) for a in arguments)
        for run in finished:
            runs.append(_report(run))
    else:
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(_run_and_store, *a) for a in arguments]
            for future in futures:
                runs.append(_report(future.result()))
    return runs


def _report(run: LoopRun) -> LoopRun:
    status = "FAILED" if run.error else f"regret {run.regret[-1]:.4g}"
    print(
        f"{run.problem} {run.method} seed {run.seed}: {status}, "
        f"{run.seconds_per_iteration:.2f} s/iteration",
        flush=True,
    )
    return run


def table(runs: Sequence[LoopRun], problems: Sequence[str], methods: Sequence[str]) -> str:
    """Median and quartiles of the final simple regret and median s/iteration per
    (problem, method), with the time ratio to ``UCB(beta=0.2)``.

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopRun, table
        >>> runs = [LoopRun("branin", "random", s, [1.0, r], 0.01, None, {}) for s, r in
        ...         enumerate([0.1, 0.2, 0.3])]
        >>> print(table(runs, ["branin"], ["random"]).splitlines()[2])
        branin     random         0.2000   [0.1500, 0.2500]   3/3        0.010          -
    """
    lines = [
        f"{'problem':10s} {'method':14s} {'median':>8s}   {'quartiles':^18s}   {'runs':8s} "
        f"{'s/iter':>8s} {'vs UCB':>10s}",
        "-" * 88,
    ]
    for problem in problems:
        baseline = _median_seconds(runs, problem, BASELINE)
        for method in methods:
            chosen = [r for r in runs if r.problem == problem and r.method == method]
            complete = [r for r in chosen if r.error is None]
            if not complete:
                lines.append(f"{problem:10s} {method:14s} {'no complete run':>8s}")
                continue
            finals = [r.regret[-1] for r in complete]
            low, mid, high = _quartiles(finals)
            seconds = _median_seconds(runs, problem, method)
            ratio = (
                "-"
                if baseline is None or method == BASELINE or baseline == 0
                else (f"{seconds / baseline:.2f}x")
            )
            lines.append(
                f"{problem:10s} {method:14s} {mid:8.4f}   [{low:.4f}, {high:.4f}]   "
                f"{len(complete)}/{len(chosen):<6d} {seconds:8.3f} {ratio:>10s}"
            )
    return "\n".join(lines)


def _quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    tensor = torch.tensor(values, dtype=torch.float64)
    q = torch.quantile(tensor, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    return float(q[0]), float(q[1]), float(q[2])


def _median_seconds(runs: Sequence[LoopRun], problem: str, method: str) -> float | None:
    values = [
        r.seconds_per_iteration
        for r in runs
        if r.problem == problem and r.method == method and r.error is None
    ]
    return statistics.median(values) if values else None


def plot(runs: Sequence[LoopRun], problems: Sequence[str], methods: Sequence[str], path: Path):
    """Median simple regret (log scale) against the iteration, quartile bands, one panel
    per problem, drawn on a ``matplotlib`` ``Figure`` (no ``pyplot`` state, the backend
    left alone) and saved to ``path`` (PNG).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopRun, plot
        >>> runs = [LoopRun("branin", "random", 0, [1.0, 0.5], 0.01, None, {})]
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "loop.png"
        >>> plot(runs, ["branin"], ["random"], path); path.exists()
        True
    """
    figure = Figure(figsize=(5.5 * len(problems), 4))
    axes = figure.subplots(1, len(problems), squeeze=False)
    for axis, problem in zip(axes[0], problems):
        for method in methods:
            curves = [
                r.regret
                for r in runs
                if r.problem == problem and r.method == method and not r.error
            ]
            if not curves:
                continue
            values = torch.tensor(curves, dtype=torch.float64).clamp_min(1e-8)
            q = torch.quantile(values, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64), dim=0)
            steps = range(values.shape[1])
            axis.plot(steps, q[1], label=method)
            axis.fill_between(steps, q[0], q[2], alpha=0.15)
        axis.set_yscale("log")
        axis.set_title(f"{problem} ({len(curves)} seeds)")
        axis.set_xlabel("iteration")
        axis.set_ylabel("simple regret")
        axis.legend(fontsize=8)
    save_figure(figure, path, dpi=110)


def _parser():
    parser = benchmark_parser("botorch-loop", DESCRIPTION, "2 seeds, 3 iterations (a minute)")
    parser.add_argument("--seeds", type=positive_int, default=10, help="(default: %(default)s)")
    parser.add_argument(
        "--iterations", type=positive_int, default=30, help="T (default: %(default)s)"
    )
    parser.add_argument(
        "--problems",
        nargs="+",
        choices=sorted(PROBLEMS),
        default=list(PROBLEMS),
        help="(default: all)",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        default=list(METHODS),
        help="(default: all)",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help=f"processes (default 1; this machine has {available_cpus()} CPUs)",
    )
    parser.add_argument(
        "--output", default="results/botorch-loop", help="directory (default: %(default)s)"
    )
    parser.add_argument("--fresh", action="store_true", help="recompute the stored runs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; 0 if every run completed,
    1 if one raised (its traceback is in its file and printed).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.benchmarks.botorch_loop import main
        >>> main(["--quick", "--output", tempfile.mkdtemp()])  # doctest: +SKIP
        botorch-loop: 2 seed(s) x 3 iteration(s), ...
        0
    """
    args = _parser().parse_args(argv)
    seeds, iterations = (2, 3) if args.quick else (args.seeds, args.iterations)
    settings = LoopSettings(iterations)
    output = Path(args.output)
    start = time.perf_counter()
    with pinned_threads(args.threads) as threads:
        print(
            f"botorch-loop: {seeds} seed(s) x {iterations} iteration(s), "
            f"{', '.join(args.problems)}; optimize_acqf(num_restarts={settings.num_restarts}, "
            f"raw_samples={settings.raw_samples}); {threads} torch thread(s) x "
            f"{args.workers} worker(s)",
            flush=True,
        )
        runs = measure(
            args.problems,
            args.methods,
            range(seeds),
            settings,
            output,
            args.workers,
            threads,
            args.fresh,
        )
    print()
    print("final simple regret after the last iteration (median, quartiles over seeds);")
    print(f"s/iter: median wall time of one iteration; vs UCB: ratio to {BASELINE}")
    print(table(runs, args.problems, args.methods))
    figure = output / "regret.png"
    plot(runs, args.problems, args.methods, figure)
    failed = [r for r in runs if r.error]
    for run in failed:
        print(f"\n{run.problem} {run.method} seed {run.seed} raised:\n{run.error}", file=sys.stderr)
    print(f"\nwall time {time.perf_counter() - start:.0f} s; runs in {output}, figure {figure}")
    return 1 if failed else 0
