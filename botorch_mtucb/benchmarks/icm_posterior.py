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

Each timing is the median of ``--repeats`` runs (``timeit``), on one torch thread by
default (``--threads``; the number is printed): on a loaded machine, OpenMP threads that
wait for each other make small factorizations many times slower and the ratios
meaningless. The benchmark prints the largest absolute differences between the routes
(they must be ``<= 1e-6``) and the speed-ups; the targets are ``>= 20x`` for the eigen
route against the dense solve at ``n = 20, t = 200`` and ``>= 10x`` for the incremental
update at ``N = 2000``. It exits with 1 if a target is missed.

Usage::

    python -m botorch_mtucb benchmark icm-posterior            # a few minutes on 2 cores
    python -m botorch_mtucb benchmark icm-posterior --quick    # smaller sizes, seconds
    python -m botorch_mtucb benchmark icm-posterior --threads 0  # torch's thread count
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from gpytorch.kernels import RBFKernel
from torch import Tensor

from botorch_mtucb.benchmarks.timing import benchmark_parser, median_seconds
from botorch_mtucb.experiments.cli_types import nonnegative_int, positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = "VectorValuedGP's ICM eigen route vs a dense solve; incremental update vs rebuild"

DTYPE = torch.float64
REGULARIZATION = 0.1  # eta, the papers' regularization
LENGTHSCALE = 0.2
INPUT_DIM = 2
EIGEN_TARGET = 20.0
INCREMENTAL_TARGET = 10.0
TOLERANCE = 1e-6
NUM_CANDIDATES = 100
EIGEN_HEADER = [
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
]
INCREMENTAL_HEADER = [
    "route",
    "N",
    "append",
    "condition_on_obs (copy)",
    "rebuild",
    "rebuild/append",
    "rebuild/condition",
    "|diff|",
]


# ----------------------------------------------------------------------------- helpers
def make_kernel() -> RBFKernel:
    """A fixed unit-variance SE kernel of lengthscale ``LENGTHSCALE`` in float64.

    Example:
        >>> from botorch_mtucb.benchmarks.icm_posterior import make_kernel
        >>> round(float(make_kernel().lengthscale), 6)
        0.2
    """
    kernel = RBFKernel().to(DTYPE)
    kernel.lengthscale = LENGTHSCALE
    kernel.raw_lengthscale.requires_grad_(False)
    return kernel


def random_task_covariance(num_tasks: int, generator: torch.Generator) -> Tensor:
    """``B = A A^T / n`` with ``A_ij ~ N(0, 1)``: ``n x n``, PSD with distinct
    eigenvalues (almost surely).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.icm_posterior import random_task_covariance
        >>> B = random_task_covariance(3, torch.Generator().manual_seed(0))
        >>> B.shape, bool(torch.linalg.eigvalsh(B).min() >= 0)
        (torch.Size([3, 3]), True)
    """
    A = torch.randn(num_tasks, num_tasks, generator=generator, dtype=DTYPE)
    return A @ A.T / num_tasks


def model_mean_and_covariance(model: VectorValuedGP, test_X: Tensor) -> tuple[Tensor, Tensor]:
    """Mean ``q x n`` and task covariance ``q x n x n`` at each of the ``q x d`` candidates.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.icm_posterior import (
        ...     DTYPE, INPUT_DIM, REGULARIZATION, make_kernel, model_mean_and_covariance)
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> X = torch.rand(4, INPUT_DIM, dtype=DTYPE)
        >>> model = VectorValuedGP(X, torch.randn(4, 2, dtype=DTYPE), make_kernel(),
        ...                        torch.eye(2, dtype=DTYPE), REGULARIZATION)
        >>> [tuple(t.shape) for t in model_mean_and_covariance(model, X[:3])]
        [(3, 2), (3, 2, 2)]
    """
    posterior = model.posterior(test_X.unsqueeze(-2))  # a batch of q single points
    mean = posterior.mean.squeeze(-2)
    covariance = posterior.distribution.covariance_matrix  # q x n x n
    return mean, covariance


def dense_mean_and_covariance(
    kernel: RBFKernel, B: Tensor, train_X: Tensor, train_Y: Tensor, test_X: Tensor
) -> tuple[Tensor, Tensor]:
    """Paper 000, eq. (1) with dense ``(n t) x (n t)`` matrices.

    Rows of the stacked data are ``(s, i) -> s n + i`` (``Y_t = [y_1; ...; y_t]``), so
    ``G_t = K_t kron B`` and ``G_t(x) = k_t(x) kron B``. Inputs ``t x d`` and ``q x d``,
    outputs ``t x n``; returns the mean ``q x n`` and task covariances ``q x n x n``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.icm_posterior import (
        ...     DTYPE, INPUT_DIM, REGULARIZATION, dense_mean_and_covariance, make_kernel,
        ...     max_difference, model_mean_and_covariance)
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> X = torch.rand(4, INPUT_DIM, dtype=DTYPE)
        >>> Y, B = torch.randn(4, 2, dtype=DTYPE), torch.eye(2, dtype=DTYPE)
        >>> dense = dense_mean_and_covariance(make_kernel(), B, X, Y, X[:3])
        >>> model = VectorValuedGP(X, Y, make_kernel(), B, REGULARIZATION)
        >>> max_difference(dense, model_mean_and_covariance(model, X[:3])) < 1e-10
        True
    """
    n, q = B.shape[-1], test_X.shape[0]
    gram = torch.kron(kernel(train_X, train_X).to_dense(), B)  # (t n) x (t n)
    gram.diagonal().add_(REGULARIZATION)
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
    """The largest absolute difference over the means and the covariances.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.icm_posterior import max_difference
        >>> max_difference((torch.zeros(2), torch.ones(2)), (torch.ones(2), torch.ones(2)))
        1.0
    """
    return max(float((a - b).abs().max()) for a, b in zip(first, second))


# ------------------------------------------------------------------ 1. eigen vs dense
def benchmark_eigen_route(
    num_tasks: int, num_points: int, num_candidates: int, repeats: int, seed: int
) -> dict[str, float]:
    """Time the three routes (eigen, general, dense) at ``n = num_tasks``, ``t =
    num_points``: seconds (median of ``repeats``) and their largest differences.

    Example:
        >>> from botorch_mtucb.benchmarks.icm_posterior import benchmark_eigen_route
        >>> result = benchmark_eigen_route(3, 10, 5, repeats=1, seed=0)
        >>> result["diff_dense"] < 1e-10, sorted(result)[:2]
        (True, ['dense_time', 'diff_dense'])
    """
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
        model = VectorValuedGP(train_X, train_Y, kernel, B, REGULARIZATION)
        assert model.uses_eigen_route
        return model_mean_and_covariance(model, test_X)

    def general(_: Any) -> tuple[Tensor, Tensor]:
        model = VectorValuedGP(obs_X, obs_Y, kernel, B, REGULARIZATION, train_tasks=obs_tasks)
        assert not model.uses_eigen_route
        return model_mean_and_covariance(model, test_X)

    def dense(_: Any) -> tuple[Tensor, Tensor]:
        return dense_mean_and_covariance(kernel, B, train_X, train_Y, test_X)

    with torch.no_grad():
        eigen(None)  # warm-up (first-call overheads)
        eigen_time, eigen_result = median_seconds(eigen, repeats)
        general_time, general_result = median_seconds(general, repeats)
        dense_time, dense_result = median_seconds(dense, repeats)
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
    """Append one row to a model with ``num_rows - 1`` rows vs build from ``num_rows``:
    seconds (median of ``repeats``) of ``append_observations``,
    ``condition_on_observations`` (a copy) and a rebuild, and their largest difference.

    Example:
        >>> from botorch_mtucb.benchmarks.icm_posterior import benchmark_incremental
        >>> result = benchmark_incremental(20, 3, repeats=1, seed=0, task_indexed=True)
        >>> result["difference"] < 1e-10
        True
    """
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
        base = VectorValuedGP(X[:-1], Y[:-1], kernel, B, REGULARIZATION, train_tasks=old_tasks)
        assert base.uses_eigen_route != task_indexed

        def append(model: VectorValuedGP) -> VectorValuedGP:
            return model.append_observations(X[-1:], Y[-1:], train_tasks=new_tasks)

        def condition(_: Any) -> VectorValuedGP:
            return base.condition_on_observations(X[-1:], Y[-1:], train_tasks=new_tasks)

        def rebuild(_: Any) -> VectorValuedGP:
            return VectorValuedGP(X, Y, kernel, B, REGULARIZATION, train_tasks=tasks)

        append(copy.deepcopy(base))  # warm-up
        append_time, appended = median_seconds(append, repeats, setup=lambda: copy.deepcopy(base))
        condition_time, _ = median_seconds(condition, repeats)
        rebuild_time, rebuilt = median_seconds(rebuild, repeats)
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
def _eigen_rows(
    num_tasks: int, point_counts: Sequence[int], repeats: int, seed: int, failures: list[str]
) -> list[list[str]]:
    rows = []
    for t in point_counts:
        # The dense and general routes cost O((n t)^3): fewer repeats at t = 500.
        result = benchmark_eigen_route(
            num_tasks, t, NUM_CANDIDATES, repeats if t <= 200 else min(repeats, 3), seed
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
    return rows


def _incremental_rows(
    num_rows: int, repeats: int, seed: int, check_target: bool, failures: list[str]
) -> list[list[str]]:
    rows = []
    for label, task_indexed in (
        (f"ICM, full-vector (n = 3, {num_rows} x 3 values)", False),
        (f"general, task-indexed ({num_rows} scalars, n = 3)", True),
    ):
        result = benchmark_incremental(num_rows, 3, repeats, seed, task_indexed)
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
        if check_target and speedup < INCREMENTAL_TARGET:
            failures.append(f"incremental update only {speedup:.1f}x faster ({label})")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; returns 0 if every target
    is met, 1 otherwise.

    ``--quick``: one timing per median, ``t in {50, 200}`` and ``N = 500`` (the
    ``N = 2000`` target is not checked); full: medians of 5, ``t in {200, 500}`` and
    ``N = 2000``.

    Example:
        >>> main(["--quick"])  # doctest: +SKIP
        torch 2..., 1 thread(s), float64, eta = 0.1, SE lengthscale 0.2, d = 2, median of 1 runs
        ...
        0
    """
    parser = benchmark_parser(
        "icm-posterior", DESCRIPTION, "one timing each, t in {50, 200}, N = 500 (seconds)"
    )
    parser.add_argument("--repeats", type=positive_int, default=None, help="timings per median")
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 5)
    point_counts = (50, 200) if args.quick else (200, 500)
    num_rows = 500 if args.quick else 2000
    failures: list[str] = []
    with pinned_threads(args.threads) as threads:
        print(
            f"torch {torch.__version__}, {threads} thread(s), float64, "
            f"eta = {REGULARIZATION}, SE lengthscale {LENGTHSCALE}, d = {INPUT_DIM}, "
            f"median of {repeats} runs"
        )
        eigen_rows = _eigen_rows(20, point_counts, repeats, args.seed, failures)
        print(
            f"\n1. ICM posterior (build + mean and n x n covariance at {NUM_CANDIDATES} "
            "candidates), ms"
        )
        print(format_table(eigen_rows, EIGEN_HEADER))
        incremental_rows = _incremental_rows(num_rows, repeats, args.seed, not args.quick, failures)
        print("\n2. One new row onto N - 1 rows vs a rebuild from N rows, ms")
        print(format_table(incremental_rows, INCREMENTAL_HEADER))
    print(
        f"\ntargets: dense/eigen >= {EIGEN_TARGET:.0f}x at n = 20, t = 200; "
        f"rebuild/append >= {INCREMENTAL_TARGET:.0f}x at N = 2000; |diff| <= {TOLERANCE:.0e}"
    )
    for failure in failures:
        print(f"FAILED: {failure}")
    print(
        (
            "all targets measured in this run met"
            if not failures
            else f"{len(failures)} target(s) missed"
        )
        + (" (--quick measures N = 500 only)" if args.quick else "")
    )
    return 1 if failures else 0
