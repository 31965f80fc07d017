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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from botorch_mtucb.benchmarks import (
    botorch_loop,
    certified_stopping,
    coverage,
    icm_posterior,
    mm_bound_rounds,
    mm_bound_vs_cvxpy,
    mt_bkb_scaling,
    multi_task_bound,
    multi_task_scale,
    transfer,
    width_candidates,
)


@dataclass(frozen=True)
class Benchmark:
    """A benchmark of the command line: a one-line description and its entry point
    ``main(argv) -> exit code``.

    Example:
        >>> from botorch_mtucb.benchmarks import BENCHMARKS
        >>> BENCHMARKS["icm-posterior"].description.split(";")[0]
        "VectorValuedGP's ICM eigen route vs a dense solve"
    """

    description: str
    main: Callable[[Sequence[str] | None], int]

    def run(self, argv: Sequence[str]) -> int:
        """Run with the command-line arguments ``argv`` (e.g. ``["--quick"]``).

        Example:
            >>> from botorch_mtucb.benchmarks import Benchmark
            >>> echo = Benchmark("prints its arguments", lambda argv: print(argv) or 0)
            >>> echo.run(("--quick",))  # each benchmark: BENCHMARKS[name].run(["--quick"])
            ['--quick']
            0
        """
        return self.main(list(argv))


BENCHMARKS: dict[str, Benchmark] = {
    "botorch-loop": Benchmark(botorch_loop.DESCRIPTION, botorch_loop.main),
    "certified-stopping": Benchmark(certified_stopping.DESCRIPTION, certified_stopping.main),
    "coverage": Benchmark(coverage.DESCRIPTION, coverage.main),
    "icm-posterior": Benchmark(icm_posterior.DESCRIPTION, icm_posterior.main),
    "mm-bound-rounds": Benchmark(mm_bound_rounds.DESCRIPTION, mm_bound_rounds.main),
    "mm-bound-vs-cvxpy": Benchmark(mm_bound_vs_cvxpy.DESCRIPTION, mm_bound_vs_cvxpy.main),
    "mt-bkb-scaling": Benchmark(mt_bkb_scaling.DESCRIPTION, mt_bkb_scaling.main),
    "multi-task-bound": Benchmark(multi_task_bound.DESCRIPTION, multi_task_bound.main),
    "multi-task-scale": Benchmark(multi_task_scale.DESCRIPTION, multi_task_scale.main),
    "transfer": Benchmark(transfer.DESCRIPTION, transfer.main),
    "width-candidates": Benchmark(width_candidates.DESCRIPTION, width_candidates.main),
}

__all__ = ["BENCHMARKS", "Benchmark"]
