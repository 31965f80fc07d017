"""The exact martingale-mixture bound (paper 002, eq. (10)) in torch vs cvxpy's SOCP.

For t = 100, 300, 1000 observations of an RKHS function (Matern 5/2, lengthscale 0.5,
d = 3, ||f|| = 10, sigma = 0.1, delta = 0.01, c = 0.2), the upper bound at 100
candidates is computed by ``MartingaleMixtureBound`` (one eigen-decomposition of K_t
and a 1-D search per candidate, eq. (12)) and, on a subset of the candidates, by cvxpy
solving the SOCP of eq. (10) as in Appendix E.1 of paper 002; cvxpy's time is scaled to
100 candidates. Prints the time ratio and the largest disagreement, measured in this
run (both sides on one thread by default).

cvxpy is a test dependency (``pip install cvxpy``, or the ``test`` extra); without it
the benchmark says so and exits with 1.

Usage::

    python -m botorch_mtucb benchmark mm-bound-vs-cvxpy [--sizes 100 300 1000] [--subset 10 5 2]
    python -m botorch_mtucb benchmark mm-bound-vs-cvxpy --quick    # t = 100, 2 cvxpy solves
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from botorch_mtucb.benchmarks.timing import benchmark_parser, median_seconds
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.experiments.cli_types import nonnegative_int, positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.problems import RKHSTestFunction, make_kernel
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = "the exact martingale-mixture bound in torch vs cvxpy's SOCP (needs cvxpy)"
B, SIGMA, DELTA, C = 10.0, 0.1, 0.01, 0.2
NUM_CANDIDATES = 100
MISSING_CVXPY = (
    "mm-bound-vs-cvxpy compares against cvxpy, a test-only dependency that is not "
    "installed: pip install cvxpy (or pip install 'botorch-mtucb[test]')"
)


def socp_upper(K: np.ndarray, kx: np.ndarray, kxx: float, y: np.ndarray, radius: float) -> float:
    """Eq. (10) of paper 002: ``max k_{t+1}(x)^T w`` subject to
    ``||K_{t,t+1} w - y|| <= R_t`` and ``||L_{t+1} w|| <= B``, solved by cvxpy with
    Clarabel. ``K`` is ``t x t``, ``kx`` and ``y`` have ``t`` entries.

    Raises:
        ImportError: If cvxpy is not installed.

    Example:
        >>> import numpy as np
        >>> from botorch_mtucb.benchmarks.mm_bound_vs_cvxpy import socp_upper
        >>> K = np.array([[1.0]])
        >>> round(float(socp_upper(K, np.array([0.5]), 1.0, np.array([0.2]), 1.0)), 3)
        9.198
    """
    import cvxpy as cp  # a test-only dependency

    t = len(y)
    full = np.block([[K, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
    # Appendix E.1: right Cholesky factor of K_{t+1} plus a small multiple of I
    root = np.linalg.cholesky(full + 1e-9 * np.eye(t + 1)).T
    w = cp.Variable(t + 1)
    problem = cp.Problem(
        cp.Maximize(np.append(kx, kxx) @ w),
        [cp.norm(full[:t, :] @ w - y) <= radius, cp.norm(root @ w) <= B],
    )
    return problem.solve(solver=cp.CLARABEL)


def problem(size: int, seed: int) -> tuple[Any, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The kernel, ``size`` inputs (``size x 3``), noisy values (``size x 1``) and the
    100 candidates of the benchmark (seeded).

    Example:
        >>> from botorch_mtucb.benchmarks.mm_bound_vs_cvxpy import problem
        >>> kernel, X, Y, candidates = problem(5, 0)
        >>> X.shape, Y.shape, candidates.shape
        (torch.Size([5, 3]), torch.Size([5, 1]), torch.Size([100, 3]))
    """
    generator = torch.Generator().manual_seed(seed)
    kernel = make_kernel("matern52", 0.5)
    function = RKHSTestFunction.sample(kernel, 3, B, generator=generator)
    X = torch.rand(size, 3, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        Y = function(X).unsqueeze(-1)
    Y = Y + SIGMA * torch.randn(size, 1, generator=generator, dtype=torch.float64)
    candidates = torch.rand(NUM_CANDIDATES, 3, generator=generator, dtype=torch.float64)
    return kernel, X, Y, candidates


def run(size: int, subset: int, seed: int) -> dict[str, float]:
    """Time the bound at ``size`` observations on 100 candidates (first call, a second
    call, the 5-point DMM grid) and cvxpy on ``subset`` of them (scaled to 100); seconds,
    their ratio and the largest relative disagreement.

    Raises:
        ImportError: If cvxpy is not installed.

    Example:
        >>> from botorch_mtucb.benchmarks.mm_bound_vs_cvxpy import run
        >>> row = run(20, 1, 0)
        >>> row["t"], row["max_rel_diff"] < 1e-4
        (20, True)
    """
    kernel, X, Y, candidates = problem(size, seed)
    MartingaleMixtureBound(X[:5], Y[:5], kernel, B, SIGMA, DELTA, C).upper(candidates)  # warm-up

    def first_call(_: Any) -> tuple[MartingaleMixtureBound, torch.Tensor]:
        bound = MartingaleMixtureBound(X, Y, kernel, B, SIGMA, DELTA, C)
        return bound, bound.upper(candidates)

    ours_seconds, (bound, ours) = median_seconds(first_call, 1)
    search_seconds, _ = median_seconds(lambda _: bound.upper(candidates), 1)
    alphas = [m * SIGMA**2 / C for m in (0.1, 0.3, 1.0, 3.0, 10.0)]
    grid_seconds, _ = median_seconds(lambda _: bound.upper(candidates, alphas=alphas), 1)

    with torch.no_grad():
        K = kernel(X, X).to_dense().numpy()
        cross = kernel(X, candidates[:subset]).to_dense().numpy()
    y = Y.numpy()[:, 0]
    radius = math.sqrt(float(bound.radius_squared))
    cvxpy_seconds, reference = median_seconds(
        lambda _: [socp_upper(K, cross[:, i], 1.0, y, radius) for i in range(subset)], 1
    )
    cvxpy_seconds *= NUM_CANDIDATES / subset
    reference = np.asarray(reference)
    ours_subset = ours[:subset].numpy()
    disagreement = np.abs(ours_subset - reference) / np.maximum(np.abs(reference), 1.0)
    return {
        "t": size,
        "ours_s": ours_seconds,
        "search_s": search_seconds,
        "grid_s": grid_seconds,
        "cvxpy_s": cvxpy_seconds,
        "ratio": cvxpy_seconds / ours_seconds,
        "max_rel_diff": float(disagreement.max()),
        "ours_minus_cvxpy": float(np.max(ours_subset - reference)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; returns the exit code
    (1 without cvxpy).

    Example:
        >>> main(["--quick"])  # doctest: +SKIP
        exact upper bound at 100 candidates, 1 torch thread(s): torch (eq. 12) vs cvxpy SOCP (eq. 10)
        ...
        0
    """
    parser = benchmark_parser("mm-bound-vs-cvxpy", DESCRIPTION, "t = 100 only, 2 cvxpy solves")
    parser.add_argument("--sizes", type=positive_int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--subset", type=positive_int, nargs="+", default=[10, 5, 2],
                        help="cvxpy candidates per size (scaled to 100)")  # fmt: skip
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    args = parser.parse_args(argv)
    try:
        import cvxpy  # noqa: F401  (a test-only dependency)
    except ImportError:
        print(f"error: {MISSING_CVXPY}", file=sys.stderr)
        return 1
    sizes, subsets = ([100], [2]) if args.quick else (args.sizes, args.subset)
    subsets = (subsets + [subsets[-1]] * len(sizes))[: len(sizes)]
    rows = []
    # One thread for torch, as for cvxpy's Clarabel: the matrices are small and extra
    # threads only contend on a busy machine.
    with pinned_threads(args.threads) as threads:
        print(
            f"exact upper bound at {NUM_CANDIDATES} candidates, {threads} torch thread(s): "
            "torch (eq. 12) vs cvxpy SOCP (eq. 10)"
        )
        for size, subset in zip(sizes, subsets):
            row = run(size, subset, args.seed)
            rows.append(
                [
                    f"{row['t']}",
                    f"{row['ours_s']:.4f}",
                    f"{row['search_s']:.4f}",
                    f"{row['grid_s']:.4f}",
                    f"{row['cvxpy_s']:.2f}",
                    f"{row['ratio']:.0f}",
                    f"{row['max_rel_diff']:.2e}",
                    f"{row['ours_minus_cvxpy']:.2e}",
                ]
            )
    header = ["t", "torch [s]", "search [s]", "DMM [s]", "cvxpy [s]", "ratio"]
    print(format_table(rows, [*header, "max rel diff", "max(ours-cvxpy)"]))
    print("torch: eigen-decomposition + 1-D searches (first call); search: a second call "
          "(the decomposition cached); DMM: the 5-point grid bound (first call: factors "
          "K_t + alpha I for its five alphas); cvxpy: scaled from the "
          "subset; ratio = cvxpy / torch.")  # fmt: skip
    print("The exact bound's round as the data grow (append, then the bound): benchmark "
          "mm-bound-rounds.")  # fmt: skip
    return 0
