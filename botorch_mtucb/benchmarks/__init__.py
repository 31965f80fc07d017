"""Benchmarks: ``python -m botorch_mtucb benchmark NAME [--quick]``.

The timing benchmarks measure our code against a baseline in the same run (a dense
solve, a rebuild, MT-KB, cvxpy) and print the ratios, so a user can measure them on
their own machine; ``coverage`` measures how often every confidence bound of the package
misses ground truths of known RKHS norm; ``botorch-loop`` runs the package's
acquisitions in BoTorch's canonical loop against BoTorch's own; ``multi-task-bound``
measures the multi-task martingale-mixture bound's step in the number of tasks;
``multi-task-scale`` times a 10-task loop on up to 20,000 task-indexed observations
(exact, sketched, BoTorch's ``MultiTaskGP``);
``certified-stopping`` compares the certified stopping rule with the baselines' rules;
``width-candidates`` measures candidate ways of tightening the martingale-mixture bound
in BoTorch's loop and keeps only those that narrow it; ``mm-bound-rounds`` times the
exact bound's round as the data grow; ``transfer`` measures multi-task BO
with source tasks against single-task BO and BoTorch's ``MultiTaskGP`` on real tasks.
``python -m botorch_mtucb benchmark --list`` lists them.

The catalogue ``BENCHMARKS`` holds each benchmark's name, description and module; a
benchmark's module (and BoTorch with it) is imported only when the benchmark runs, so
listing them and the command line's ``--help`` start at once. Each description is the
``DESCRIPTION`` of its module, repeated here.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Benchmark:
    """A benchmark of the command line: a one-line description and the module whose
    ``main(argv) -> exit code`` runs it, imported when it runs.

    Example:
        >>> from botorch_mtucb.benchmarks import BENCHMARKS
        >>> BENCHMARKS["icm-posterior"].description.split(";")[0]
        "VectorValuedGP's ICM eigen route vs a dense solve"
        >>> BENCHMARKS["icm-posterior"].module
        'botorch_mtucb.benchmarks.icm_posterior'
    """

    description: str
    module: str

    def run(self, argv: Sequence[str]) -> int:
        """Import the module and run its ``main`` with the command-line arguments
        ``argv`` (e.g. ``["--quick"]``); returns the exit code.

        Raises:
            ModuleNotFoundError: If ``module`` cannot be imported.

        Example:
            >>> import sys, types
            >>> from botorch_mtucb.benchmarks import Benchmark
            >>> stand_in = types.ModuleType("echo_benchmark")  # a benchmark's module
            >>> stand_in.main = lambda argv: print(argv) or 0
            >>> sys.modules["echo_benchmark"] = stand_in
            >>> echo = Benchmark("prints its arguments", "echo_benchmark")
            >>> echo.run(("--quick",))  # each benchmark: BENCHMARKS[name].run(["--quick"])
            ['--quick']
            0
            >>> del sys.modules["echo_benchmark"]
        """
        return importlib.import_module(self.module).main(list(argv))


def _benchmark(description: str, module: str) -> Benchmark:
    return Benchmark(description, f"botorch_mtucb.benchmarks.{module}")


BENCHMARKS: dict[str, Benchmark] = {
    "botorch-loop": _benchmark(
        "MartingaleMixtureUCB / IGPUCB vs BoTorch's UCB(beta=0.2, 2.0), qLogNEI and random "
        "search in the canonical SingleTaskGP loop (Branin, Hartmann-6, Levy-4; noise-free and "
        "noisy): final regret, s/iteration and where the bound's width comes from",
        "botorch_loop",
    ),
    "certified-stopping": _benchmark(
        "the certified stopping rule vs Makarova et al.'s UCB-LCB rule and Ax's improvement "
        "rule under MM-UCB, qLogNEI, UCB and random search: premature stops, miscoverage, "
        "evaluations to stop",
        "certified_stopping",
    ),
    "coverage": _benchmark(
        "violation rates of every confidence bound on ground truths of known RKHS norm",
        "coverage",
    ),
    "icm-posterior": _benchmark(
        "VectorValuedGP's ICM eigen route vs a dense solve; incremental update vs rebuild",
        "icm_posterior",
    ),
    "mm-bound-rounds": _benchmark(
        "the exact martingale-mixture bound's round in t: the package's route vs the eigen "
        "route, one eigh and SingleTaskGP's posterior; fitted exponent; 2 vs 1 threads",
        "mm_bound_rounds",
    ),
    "mm-bound-vs-cvxpy": _benchmark(
        "the exact martingale-mixture bound in torch vs cvxpy's SOCP (needs cvxpy)",
        "mm_bound_vs_cvxpy",
    ),
    "mt-bkb-scaling": _benchmark(
        "per-step cost of MT-BKB against MT-KB as t grows (20-task RKHS problem)",
        "mt_bkb_scaling",
    ),
    "multi-task-bound": _benchmark(
        "MultiTaskMartingaleMixtureBound's step (append + Chebyshev UCB at 100 points) in n, "
        "vs single-task CMM and the dense route",
        "multi_task_bound",
    ),
    "multi-task-scale": _benchmark(
        "10-task loop with up to 20,000 task-indexed observations: exact, Nystrom sketch "
        "and BoTorch's MultiTaskGP (time and peak memory)",
        "multi_task_scale",
    ),
    "transfer": _benchmark(
        "transfer from source tasks: single-task BO, BoTorch's MultiTaskGP and the package's "
        "multi-task routes on real related and anti-correlated tasks (regret at 10/20/40)",
        "transfer",
    ),
    "width-candidates": _benchmark(
        "candidate tightenings of the martingale-mixture bound (c-grid union, intersection "
        "over time, B choices) in BoTorch's loop: width in GP posterior sds vs measured sigma",
        "width_candidates",
    ),
}

__all__ = ["BENCHMARKS", "Benchmark"]
