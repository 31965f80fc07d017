r"""The drop-in acquisitions in BoTorch's canonical loop, against BoTorch's own.

For each problem (``loop_problems``: Branin, Hartmann-6 and Levy-4 of
``botorch.test_functions``, negated so that the loop maximizes, noise-free and with
Gaussian observation noise), each seed and each method, the loop a BoTorch user runs:

1. ``2 (d + 1)`` scrambled Sobol points (``draw_sobol_samples``, seeded by the seed,
   the same for every method), observed with the problem's noise;
2. ``T`` iterations of: ``SingleTaskGP(X, Y, input_transform=Normalize(d))`` (its
   default ``Standardize`` outcome transform, learned noise), ``fit_gpytorch_mll``,
   the acquisition, ``optimize_acqf(q=1, num_restarts=8, raw_samples=256)``, one
   observation.

Methods (``METHODS``), all with ``delta = 0.01`` where they have one:

* ``MM-UCB-fitted``: ``MartingaleMixtureUCB(gp)``, the exact bound with the
  likelihood's fitted noise and ``B`` chosen from the data (the drop-in's defaults);
* ``MM-UCB``: ``MartingaleMixtureUCB(gp, measurement_noise_std=s)``, the same bound with
  the noise level the user states (the problem's noise, or the precision ``1e-6`` of a
  noise-free evaluation; ``confidence.martingale_mixture.noise_level``);
* ``IGP-UCB``: ``IGPUCB(gp)`` (the same ``B`` rule);
* BoTorch's ``UpperConfidenceBound(gp, beta=0.2)`` and ``(beta=2.0)``,
  ``qLogNoisyExpectedImprovement(gp, X_baseline=X)``, and random search (uniform
  points after the same design).

**Regret.** After ``t`` iterations the loop recommends the evaluated point of largest
posterior mean (the GP fitted on the ``t`` observations; for random search too); the
simple regret is ``f* - f(x_rec)`` on the noise-free function (``f*`` its optimum). The
table gives, per problem and method, the median and quartiles of the final simple
regret over the seeds and the median seconds per iteration (fit, acquisition and
optimization; random search: drawing a point), with its ratio to ``UCB(beta=0.2)``
measured in the same run. A figure shows the median regret curves with quartile bands.

**Width decomposition.** For the martingale-mixture methods, every iteration records,
at the chosen point, the terms of the radius (``width_terms``) of the exact, grid
(DMM) and analytic (AMM) bounds and the width in GP posterior standard deviations,
``(u_t(x) - mu_gp(x)) / sd_gp(x)`` (UCB(beta=0.2) has 0.45); a second table gives
their medians over the seeds at the first, middle and last iteration.

One JSON file per (problem, method, seed) is written atomically to ``--output`` as soon
as the run ends, and a rerun skips the runs already written (resume after an
interruption); ``--fresh`` recomputes them. Torch threads are pinned (``--threads``,
default 1) in each of ``--workers`` processes (default 1).

Usage::

    python -m botorch_mtucb benchmark botorch-loop            # 10 seeds, 50 iterations
    python -m botorch_mtucb benchmark botorch-loop --quick    # 2 seeds, 3 iterations
"""

from __future__ import annotations

import json
import math
import statistics
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from botorch.acquisition import UpperConfidenceBound, qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from botorch.optim import optimize_acqf
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.mlls import ExactMarginalLogLikelihood

from botorch_mtucb.acquisition import IGPUCB, MartingaleMixtureUCB
from botorch_mtucb.benchmarks.botorch_loop_report import BASELINE, decomposition_table, plot, table
from botorch_mtucb.benchmarks.coverage import available_cpus
from botorch_mtucb.benchmarks.loop_problems import PROBLEMS, LoopProblem
from botorch_mtucb.benchmarks.stored_runs import (
    interrupted,
    output_directory,
    report_failures,
    report_run,
    results_in_order,
    stored_and_missing,
)
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.confidence.martingale_mixture.width_terms import width_decomposition
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.utils.files import write_atomically
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "MartingaleMixtureUCB / IGPUCB vs BoTorch's UCB(beta=0.2, 2.0), qLogNEI and random "
    "search in the canonical SingleTaskGP loop (Branin, Hartmann-6, Levy-4; noise-free and "
    "noisy): final regret, s/iteration and where the bound's width comes from"
)
DELTA = 0.01
BOUND_KINDS = {"exact": None, "grid": "DMM", "analytic": "AMM"}


def _mm_ucb_fitted(gp: SingleTaskGP, X, problem: LoopProblem):
    return MartingaleMixtureUCB(gp, delta=DELTA)


def _mm_ucb(gp: SingleTaskGP, X, problem: LoopProblem):
    return MartingaleMixtureUCB(
        gp, delta=DELTA, measurement_noise_std=problem.measurement_noise_std
    )


def _igp_ucb(gp: SingleTaskGP, X, problem: LoopProblem):
    return IGPUCB(gp, delta=DELTA)


def _ucb(beta: float):
    def make(gp: SingleTaskGP, X, problem: LoopProblem):
        return UpperConfidenceBound(gp, beta=beta)

    return make


def _qlognei(gp: SingleTaskGP, X, problem: LoopProblem):
    return qLogNoisyExpectedImprovement(gp, X_baseline=X)


METHODS: dict[str, Callable | None] = {
    "MM-UCB": _mm_ucb,
    "MM-UCB-fitted": _mm_ucb_fitted,
    "IGP-UCB": _igp_ucb,
    BASELINE: _ucb(0.2),
    "UCB(beta=2.0)": _ucb(2.0),
    "qLogNEI": _qlognei,
    "random": None,
}
DECOMPOSED = ("MM-UCB", "MM-UCB-fitted")  # the methods whose width is decomposed


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
        regret: Simple regret of the recommendation after ``0, 1, ..., T`` iterations
            (``T + 1`` floats).
        seconds_per_iteration: Median wall time of one iteration.
        error: The traceback if the run raised (then ``regret`` stops there).
        settings: ``asdict(LoopSettings)``.
        decomposition: Per iteration, ``{kind: WidthDecomposition.summary()}`` for the
            ``BOUND_KINDS`` at the chosen point, with ``gp_multiplier`` (the exact
            bound's width in GP posterior standard deviations); empty for the other
            methods.

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
    decomposition: list[dict] = field(default_factory=list)


def run_loop(problem: str, method: str, seed: int, settings: LoopSettings) -> LoopRun:
    """One run of the loop of the module docstring (float64).

    Example:
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopSettings, run_loop
        >>> run = run_loop("branin", "random", 0, LoopSettings(iterations=2))
        >>> len(run.regret), min(run.regret) >= 0, run.error
        (3, True, None)
    """
    spec = PROBLEMS[problem]
    function = spec.function()
    bounds = function.bounds
    d = bounds.shape[-1]
    noise = torch.Generator().manual_seed(20_000 + seed)  # observation noise
    X = draw_sobol_samples(bounds, n=2 * (d + 1), q=1, seed=seed).squeeze(-2)
    Y = spec.observe(function, X, noise)
    optimum = float(function.optimal_value)
    generator = torch.Generator().manual_seed(10_000 + seed)
    torch.manual_seed(seed)  # optimize_acqf's raw samples, qLogNEI's base samples
    make_acqf = METHODS[method]
    regret, seconds, records, error = [], [], [], None
    for iteration in range(settings.iterations + 1):
        try:
            start = time.perf_counter()
            gp = _fit(X, Y, d)
            fitted = time.perf_counter() - start
            regret.append(optimum - float(function(_recommend(gp, X)).squeeze()))
            if iteration == settings.iterations:
                break
            start = time.perf_counter()
            if make_acqf is None:  # random search: the fit above only recommends
                u = torch.rand(1, d, generator=generator, dtype=torch.float64)
                x, fitted = bounds[0] + (bounds[1] - bounds[0]) * u, 0.0
            else:
                acqf = make_acqf(gp, X, spec)
                x = _optimize(acqf, bounds, settings)
            seconds.append(fitted + time.perf_counter() - start)
            if method in DECOMPOSED:
                records.append(_decompose(acqf, gp, x))
        except Exception:  # recorded, reported in the table, the other runs go on
            error = traceback.format_exc()
            break
        X, Y = torch.cat([X, x]), torch.cat([Y, spec.observe(function, x, noise)])
    spent = statistics.median(seconds) if seconds else float("nan")
    return LoopRun(problem, method, seed, regret, spent, error, asdict(settings), records)


def _fit(X, Y, d: int) -> SingleTaskGP:
    gp = SingleTaskGP(X, Y, input_transform=Normalize(d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fitting chatter
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    return gp


def _recommend(gp: SingleTaskGP, X) -> torch.Tensor:
    """The evaluated point of largest posterior mean (``1 x d``)."""
    with torch.no_grad():
        mean = gp.posterior(X).mean.squeeze(-1)
    return X[int(mean.argmax())].unsqueeze(0)


def _optimize(acqf, bounds, settings: LoopSettings) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # optimizer chatter
        x, _ = optimize_acqf(
            acqf, bounds, q=1, num_restarts=settings.num_restarts, raw_samples=settings.raw_samples
        )
    return x.detach()


def _decompose(acqf: MartingaleMixtureUCB, gp: SingleTaskGP, x) -> dict:
    """The width terms of the three bounds at ``x`` and the exact bound's width in GP
    posterior standard deviations."""
    with torch.no_grad():
        posterior = gp.posterior(x)
        mean, sd = float(posterior.mean), math.sqrt(float(posterior.variance))
        upper = float(acqf.bound.upper(x, alphas=None))
    record = {}
    for kind, alphas in BOUND_KINDS.items():
        resolved = None if alphas is None else MartingaleMixtureUCB(acqf.bound, alphas=alphas)
        grid = None if resolved is None else resolved.alphas
        record[kind] = width_decomposition(acqf.bound, x, grid).summary()
    record["exact"]["gp_multiplier"] = (upper - mean) / sd if sd > 0 else float("inf")
    return record


def _run_file(output: Path, problem: str, method: str, seed: int) -> Path:
    safe = method.replace("(", "-").replace(")", "").replace("=", "").replace(".", "")
    return output / f"{problem}__{safe}__seed{seed}.json"


def load_run(path: Path, settings: LoopSettings) -> LoopRun | None:
    """The complete run stored at ``path``, or ``None`` if absent, unreadable, malformed
    (a regret that is not ``T + 1`` numbers, records that are not a list), one that raised
    (it is tried again) or of other settings (``stored_settings`` tells them apart).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.botorch_loop import LoopSettings, load_run
        >>> load_run(pathlib.Path(tempfile.mkdtemp()) / "none.json", LoopSettings(3)) is None
        True
    """
    try:
        run = LoopRun(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if run.settings != asdict(settings) or run.error is not None:
        return None
    regret, records = run.regret, run.decomposition
    numbers = isinstance(regret, list) and all(
        isinstance(value, (int, float)) and not isinstance(value, bool) for value in regret
    )
    if not numbers or len(regret) != settings.iterations + 1:
        return None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return None
    if not isinstance(run.seconds_per_iteration, (int, float)):
        return None
    return run


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
    # seed by seed: an interrupted run leaves comparable sets
    keys = [(p, m, s) for s in seeds for p in problems for m in methods]
    paths = [_run_file(output, *key) for key in keys]
    runs, missing = stored_and_missing(paths, lambda path: load_run(path, settings),
                                       asdict(settings), fresh)  # fmt: skip
    todo = [keys[i] for i in missing]
    arguments = [(p, m, s, settings, output, threads) for p, m, s in todo]
    runs.extend(report_run(run) for run in results_in_order(_run_and_store, arguments, workers))
    return runs


def _parser():
    parser = benchmark_parser("botorch-loop", DESCRIPTION, "2 seeds, 3 iterations (a minute)")
    parser.add_argument(
        "--seeds", type=positive_int, default=10, help="(default: %(default)s; --quick: 2)"
    )
    parser.add_argument(
        "--iterations", type=positive_int, default=50, help="T (default: %(default)s; --quick: 3)"
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
    1 if one raised (its traceback is in its file and printed), 130 if interrupted
    (Ctrl-C: the runs written so far are kept, the same command resumes).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.benchmarks.botorch_loop import main
        >>> main(["--quick", "--output", tempfile.mkdtemp()])  # doctest: +SKIP
        botorch-loop: 2 seed(s) x 3 iteration(s), ...
        0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    seeds, iterations = (2, 3) if args.quick else (args.seeds, args.iterations)
    settings = LoopSettings(iterations)
    output = output_directory(parser, args.output)
    start = time.perf_counter()
    with pinned_threads(args.threads) as threads:
        print(
            f"botorch-loop: {seeds} seed(s) x {iterations} iteration(s), "
            f"{', '.join(args.problems)}; optimize_acqf(num_restarts={settings.num_restarts}, "
            f"raw_samples={settings.raw_samples}); {threads} torch thread(s) x "
            f"{args.workers} worker(s)",
            flush=True,
        )
        try:
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
        except ValueError as error:  # runs of other settings in --output
            parser.error(str(error))
        except KeyboardInterrupt:
            return interrupted(output)
    print()
    print("final simple regret after the last iteration (median, quartiles over seeds);")
    print(f"s/iter: median wall time of one iteration; vs UCB: its ratio to {BASELINE}'s s/iter")
    print(table(runs, args.problems, args.methods))
    decomposed = [m for m in args.methods if m in DECOMPOSED]
    if decomposed:
        print()
        print(decomposition_table(runs, args.problems, decomposed))
    figure = output / "regret.png"
    plot(runs, args.problems, args.methods, figure)
    failed = report_failures(runs)
    print(f"\nwall time {time.perf_counter() - start:.0f} s; runs in {output}, figure {figure}")
    return failed
