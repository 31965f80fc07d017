"""Benchmark the exact multi-task posterior of ``VectorValuedGP``.

Two measurements, each taken in the same run (ratios only make sense on one machine
under one load):

1. **ICM eigen route vs a dense solve** (paper 000, Section 3.3 and Appendix A). With a
   single ICM kernel ``Gamma = k B`` and full-vector data the model splits the
   ``(n t) x (n t)`` system ``(G_t + eta I)`` into one ``t x t`` system per distinct
   eigenvalue of ``B``. We time building the posterior and predicting the mean and the
   full ``n x n`` task covariance at ``q`` candidates, against

   * a dense transcription of eq. (1) in torch: ``G_t = K_t kron B``, Cholesky of
     ``G_t + eta I``, ``mu(x) = G_t(x)^T alpha``,
     ``Gamma_t(x, x) = k(x, x) B - V^T V`` with ``V = L^{-1} G_t(x)``;
   * the model's own general route on the same data given task-indexed (``train_tasks``),
     which factorizes the ``(n t) x (n t)`` Gram matrix of the scalar observations.

   ``B`` is a random PSD matrix with distinct eigenvalues, the worst case for the eigen
   route (one ``t x t`` factor per task; a uniform-similarity ``B`` needs only two).

2. **Incremental update vs a rebuild** at ``N`` rows: ``append_observations`` of one row
   onto a model with ``N - 1`` rows (Cholesky extension, ``O(N^2)``) against building the
   model from all ``N`` rows (``O(N^3)``), for the ICM route (``n`` tasks, full-vector
   rows) and the general route (``N`` task-indexed scalar observations).

Each timing is the median of ``--repeats`` runs of ``time.perf_counter``, single-threaded
by default (``--threads``): on a loaded machine, OpenMP threads that wait for each other
make small factorizations many times slower and the ratios meaningless. The script
prints the largest absolute differences between the routes (they must be ``<= 1e-6``)
and the speed-ups; the targets of issue 2 are ``>= 20x`` for the eigen route against the
dense solve at ``n = 20, t = 200`` and ``>= 10x`` for the incremental update at
``N = 2000``.

Usage::

    python benchmarks/icm_posterior.py            # full run (a few minutes on 2 cores)
    python benchmarks/icm_posterior.py --quick    # smaller sizes, seconds
    python benchmarks/icm_posterior.py --threads 0  # torch's default thread count
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from gpytorch.kernels import RBFKernel
from torch import Tensor

from botorch_mtucb.models import VectorValuedGP

DTYPE = torch.float64
NOISE_VARIANCE = 0.1  # eta, the papers' regularization
LENGTHSCALE = 0.2
INPUT_DIM = 2
EIGEN_TARGET = 20.0
INCREMENTAL_TARGET = 10.0
TOLERANCE = 1e-6


# ----------------------------------------------------------------------------- helpers
def median_time(
    function: Callable[[Any], Any],
    repeats: int,
    setup: Callable[[], Any] | None = None,
) -> tuple[float, Any]:
    """Median wall time (s) of ``function(setup())`` over ``repeats`` runs; setup untimed.

    Returns the median and the last result.
    """
    times, result = [], None
    for _ in range(repeats):
        argument = setup() if setup is not None else None
        start = time.perf_counter()
        result = function(argument)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def make_kernel() -> RBFKernel:
    """A fixed unit-variance SE kernel of lengthscale ``LENGTHSCALE``."""
    kernel = RBFKernel().to(DTYPE)
    kernel.lengthscale = LENGTHSCALE
    kernel.raw_lengthscale.requires_grad_(False)
    return kernel


def random_task_covariance(num_tasks: int, generator: torch.Generator) -> Tensor:
    """``B = A A^T / n`` with ``A_ij ~ N(0, 1)``: PSD with distinct eigenvalues (a.s.)."""
    A = torch.randn(num_tasks, num_tasks, generator=generator, dtype=DTYPE)
    return A @ A.T / num_tasks


def model_mean_and_covariance(model: VectorValuedGP, test_X: Tensor) -> tuple[Tensor, Tensor]:
    """Mean ``q x n`` and task covariance ``q x n x n`` at each of the ``q`` candidates."""
    posterior = model.posterior(test_X.unsqueeze(-2))  # a batch of q single points
    mean = posterior.mean.squeeze(-2)
    covariance = posterior.distribution.covariance_matrix  # q x n x n
    return mean, covariance


def dense_mean_and_covariance(
    kernel: RBFKernel, B: Tensor, train_X: Tensor, train_Y: Tensor, test_X: Tensor
) -> tuple[Tensor, Tensor]:
    """Paper 000, eq. (1) with dense ``(n t) x (n t)`` matrices.

    Rows of the stacked data are ``(s, i) -> s n + i`` (``Y_t = [y_1; ...; y_t]``), so
    ``G_t = K_t kron B`` and ``G_t(x) = k_t(x) kron B``.
    """
    n, q = B.shape[-1], test_X.shape[0]
    gram = torch.kron(kernel(train_X, train_X).to_dense(), B)  # (t n) x (t n)
    gram.diagonal().add_(NOISE_VARIANCE)
    chol = torch.linalg.cholesky(gram)
    alpha = torch.cholesky_solve(train_Y.reshape(-1, 1), chol)  # (t n) x 1
    cross = torch.kron(kernel(test_X, train_X).to_dense(), B)  # (q n) x (t n)
    mean = (cross @ alpha).reshape(q, n)
    solved = torch.linalg.solve_triangular(chol, cross.T, upper=False)  # (t n) x (q n)
    solved = solved.reshape(-1, q, n)
    prior = kernel(test_X, test_X, diag=True)[:, None, None] * B  # q x n x n
    covariance = prior - torch.einsum("mai,maj->aij", solved, solved)
    return mean, covariance


def max_difference(first: tuple[Tensor, Tensor], second: tuple[Tensor, Tensor]) -> float:
    """The largest absolute difference over the means and the covariances."""
    return max(float((a - b).abs().max()) for a, b in zip(first, second))


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    """A plain fixed-width table."""
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(f"\n{title}\n{line}\n{'-' * len(line)}")
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))


# ------------------------------------------------------------------ 1. eigen vs dense
def benchmark_eigen_route(
    num_tasks: int, num_points: int, num_candidates: int, repeats: int, seed: int
) -> dict[str, float]:
    """Time the three routes at ``n = num_tasks``, ``t = num_points``."""
    generator = torch.Generator().manual_seed(seed)
    kernel = make_kernel()
    B = random_task_covariance(num_tasks, generator)
    train_X = torch.rand(num_points, INPUT_DIM, generator=generator, dtype=DTYPE)
    train_Y = torch.randn(num_points, num_tasks, generator=generator, dtype=DTYPE)
    test_X = torch.rand(num_candidates, INPUT_DIM, generator=generator, dtype=DTYPE)
    # The same data as N = n t task-indexed scalar observations (forces the general route).
    obs_X = train_X.repeat_interleave(num_tasks, dim=0)
    obs_tasks = torch.arange(num_tasks).repeat(num_points)
    obs_Y = train_Y.reshape(-1, 1)

    def eigen(_: Any) -> tuple[Tensor, Tensor]:
        model = VectorValuedGP(train_X, train_Y, kernel, B, NOISE_VARIANCE)
        assert model.uses_eigen_route
        return model_mean_and_covariance(model, test_X)

    def general(_: Any) -> tuple[Tensor, Tensor]:
        model = VectorValuedGP(obs_X, obs_Y, kernel, B, NOISE_VARIANCE, train_tasks=obs_tasks)
        assert not model.uses_eigen_route
        return model_mean_and_covariance(model, test_X)

    def dense(_: Any) -> tuple[Tensor, Tensor]:
        return dense_mean_and_covariance(kernel, B, train_X, train_Y, test_X)

    with torch.no_grad():
        eigen(None)  # warm-up (first-call overheads)
        eigen_time, eigen_result = median_time(eigen, repeats)
        general_time, general_result = median_time(general, repeats)
        dense_time, dense_result = median_time(dense, repeats)
    return {
        "eigen_time": eigen_time,
        "general_time": general_time,
        "dense_time": dense_time,
        "diff_dense": max_difference(eigen_result, dense_result),
        "diff_general": max_difference(eigen_result, general_result),
    }


# ------------------------------------------------------------ 2. incremental vs rebuild
def benchmark_incremental(
    num_rows: int, num_tasks: int, repeats: int, seed: int, task_indexed: bool
) -> dict[str, float]:
    """Append one row to a model with ``num_rows - 1`` rows vs build from ``num_rows``."""
    generator = torch.Generator().manual_seed(seed)
    kernel = make_kernel()
    B = random_task_covariance(num_tasks, generator)
    X = torch.rand(num_rows, INPUT_DIM, generator=generator, dtype=DTYPE)
    test_X = torch.rand(50, INPUT_DIM, generator=generator, dtype=DTYPE)
    if task_indexed:
        Y = torch.randn(num_rows, 1, generator=generator, dtype=DTYPE)
        tasks = torch.randint(num_tasks, (num_rows,), generator=generator)
        old_tasks, new_tasks = tasks[:-1], tasks[-1:]
    else:
        Y = torch.randn(num_rows, num_tasks, generator=generator, dtype=DTYPE)
        tasks = old_tasks = new_tasks = None

    with torch.no_grad():
        base = VectorValuedGP(X[:-1], Y[:-1], kernel, B, NOISE_VARIANCE, train_tasks=old_tasks)
        assert base.uses_eigen_route != task_indexed

        def append(model: VectorValuedGP) -> VectorValuedGP:
            return model.append_observations(X[-1:], Y[-1:], train_tasks=new_tasks)

        def condition(_: Any) -> VectorValuedGP:
            return base.condition_on_observations(X[-1:], Y[-1:], train_tasks=new_tasks)

        def rebuild(_: Any) -> VectorValuedGP:
            return VectorValuedGP(X, Y, kernel, B, NOISE_VARIANCE, train_tasks=tasks)

        append(copy.deepcopy(base))  # warm-up
        append_time, appended = median_time(append, repeats, setup=lambda: copy.deepcopy(base))
        condition_time, _ = median_time(condition, repeats)
        rebuild_time, rebuilt = median_time(rebuild, repeats)
        difference = max_difference(
            model_mean_and_covariance(appended, test_X),
            model_mean_and_covariance(rebuilt, test_X),
        )
    return {
        "append_time": append_time,
        "condition_time": condition_time,
        "rebuild_time": rebuild_time,
        "difference": difference,
    }


# ------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (seconds)")
    parser.add_argument("--repeats", type=int, default=None, help="timings per median")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: reproducible on shared machines; 0: torch's default)",
    )
    args = parser.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    repeats = args.repeats or (3 if args.quick else 5)
    num_tasks, num_candidates = 20, 100
    point_counts = (50, 200) if args.quick else (200, 500)
    num_rows = 500 if args.quick else 2000
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, float64, "
        f"eta = {NOISE_VARIANCE}, SE lengthscale {LENGTHSCALE}, d = {INPUT_DIM}, "
        f"median of {repeats} runs"
    )
    failures = []

    rows = []
    for t in point_counts:
        # The dense and general routes cost O((n t)^3): fewer repeats at t = 500.
        result = benchmark_eigen_route(
            num_tasks, t, num_candidates, repeats if t <= 200 else min(repeats, 3), args.seed
        )
        dense_speedup = result["dense_time"] / result["eigen_time"]
        general_speedup = result["general_time"] / result["eigen_time"]
        rows.append(
            [
                f"{num_tasks}",
                f"{t}",
                f"{num_tasks * t}",
                f"{result['eigen_time'] * 1e3:.1f}",
                f"{result['dense_time'] * 1e3:.1f}",
                f"{result['general_time'] * 1e3:.1f}",
                f"{dense_speedup:.1f}x",
                f"{general_speedup:.1f}x",
                f"{result['diff_dense']:.1e}",
                f"{result['diff_general']:.1e}",
            ]
        )
        if max(result["diff_dense"], result["diff_general"]) > TOLERANCE:
            failures.append(f"eigen route differs by more than {TOLERANCE} at t = {t}")
        if t == 200 and dense_speedup < EIGEN_TARGET:
            failures.append(f"eigen route only {dense_speedup:.1f}x faster than dense at t = 200")
    print_table(
        f"1. ICM posterior (build + mean and n x n covariance at {num_candidates} candidates), ms",
        [
            "n",
            "t",
            "nt",
            "eigen",
            "dense",
            "general",
            "dense/eigen",
            "general/eigen",
            "|diff| dense",
            "|diff| general",
        ],
        rows,
    )

    rows = []
    for label, task_indexed, tasks in (
        (f"ICM, full-vector (n = 3, {num_rows} x 3 values)", False, 3),
        (f"general, task-indexed ({num_rows} scalars, n = 3)", True, 3),
    ):
        result = benchmark_incremental(num_rows, tasks, repeats, args.seed, task_indexed)
        speedup = result["rebuild_time"] / result["append_time"]
        rows.append(
            [
                label,
                f"{num_rows}",
                f"{result['append_time'] * 1e3:.2f}",
                f"{result['condition_time'] * 1e3:.2f}",
                f"{result['rebuild_time'] * 1e3:.2f}",
                f"{speedup:.1f}x",
                f"{result['rebuild_time'] / result['condition_time']:.1f}x",
                f"{result['difference']:.1e}",
            ]
        )
        if result["difference"] > TOLERANCE:
            failures.append(f"incremental posterior differs by more than {TOLERANCE} ({label})")
        if not args.quick and speedup < INCREMENTAL_TARGET:
            failures.append(f"incremental update only {speedup:.1f}x faster ({label})")
    print_table(
        "2. One new row onto N - 1 rows vs a rebuild from N rows, ms",
        [
            "route",
            "N",
            "append",
            "condition_on_obs (copy)",
            "rebuild",
            "rebuild/append",
            "rebuild/condition",
            "|diff|",
        ],
        rows,
    )
    print(
        f"\ntargets: dense/eigen >= {EIGEN_TARGET:.0f}x at n = 20, t = 200; "
        f"rebuild/append >= {INCREMENTAL_TARGET:.0f}x at N = 2000; |diff| <= {TOLERANCE:.0e}"
    )
    for failure in failures:
        print(f"FAILED: {failure}")
    print("all targets met" if not failures else f"{len(failures)} target(s) missed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
