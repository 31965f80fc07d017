r"""The per-step cost of ``MultiTaskMartingaleMixtureBound`` in the number of tasks ``n``.

One step of a multi-task bandit with the exact (CMM) bound: ``append_observations`` of one
full-vector observation, then the Chebyshev scalarized UCB at 100 candidates (the exact
per-task bounds ``u_t(x, i)`` at every candidate, then ``min_i w_i (u_t(x, i) - z_i)``;
``ScalarizedMartingaleMixtureUCB``). Measured for full-vector ICM data (``Gamma = k B``,
SE kernel, ``B`` a random PSD matrix of full rank) at ``t = 200`` and ``n = 2, 5, 10,
20``, on the Kronecker route (the spectrum of ``K_t (x) B`` from those of ``K_t`` and
``B``: ``O(t^3 + n^3)`` per step; each 1-D dual of eq. (12) by ``KroneckerSpectralDual``:
a shared grid of ``alpha`` by matrix products, ``O(t n + n F)`` per candidate and
``alpha`` for ``F`` functionals, then Newton steps on power series of the same sums
around each bound's best grid ``alpha``, so the ``n`` per-task bounds cost ``O(t n +
n^2)`` per candidate and ``alpha`` and the ``(N n) x (n t)`` projections are never
formed), beside

* single-task CMM (``MartingaleMixtureBound``: one append, ``upper`` at the same 100
  candidates) at ``t = 200``, the baseline of the ratios;
* the linear scalarized UCB on the Kronecker route (one functional ``w^T f(x)`` per
  candidate instead of ``n`` per-task bounds);
* MT-CMM-UCB's step (``MultiTaskMartingaleMixtureRule.screened_argmax``): the same
  append, then the exact Chebyshev argmax over the candidates, computed where it can
  win only (a grid bound, ``O(t n)`` per candidate and ``alpha`` by matrix products,
  screens the candidates; the exact bounds only at the few left);
* the dense route on the same kernel written as two half-terms ``k B / 2 + k B / 2``
  (``SumOfSeparableKernels`` with two terms leaves the Kronecker route: the ``(n t) x
  (n t)`` Gram matrix is decomposed, ``O((n t)^3)``), for the ``n`` whose estimated time
  (the previous ``n``'s, scaled by ``(n / n')^3``) stays under ``--dense-limit``
  seconds.

All in the same run, each the median of ``--repeats`` steps on a fresh copy of the bound
(the copy is not timed), on one torch thread by default (``--threads``). The table gives
each step with its append part (the new spectrum), the ratio to the single-task step and
between consecutive ``n``; the summary says whether the cost grows at most linearly in
``n`` (the least-squares slope of ``log time`` against ``log n`` at most 1, within
``SLOPE_TOLERANCE``) and gives the largest ratio between consecutive ``n``.

Usage::

    python -m botorch_mtucb benchmark multi-task-bound              # a minute or two
    python -m botorch_mtucb benchmark multi-task-bound --quick      # t = 50, n = 2, 5
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Sequence
from typing import Any

import torch
from gpytorch.kernels import RBFKernel
from torch import Tensor

from botorch_mtucb.acquisition import ScalarizedMartingaleMixtureUCB
from botorch_mtucb.bandits import MultiTaskMartingaleMixtureRule
from botorch_mtucb.benchmarks.icm_posterior import random_task_covariance
from botorch_mtucb.benchmarks.timing import benchmark_parser, median_seconds
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.experiments.cli_types import nonnegative_int, positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.scalarization import ChebyshevScalarization, LinearScalarization
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "MultiTaskMartingaleMixtureBound's step (append + Chebyshev UCB at 100 points) in n, "
    "vs single-task CMM and the dense route"
)
DTYPE = torch.float64
DIM, LENGTHSCALE, NUM_CANDIDATES = 3, 0.5, 100
RKHS_NORM, NOISE_STD, DELTA = 5.0, 0.1, 0.01


def make_kernel() -> RBFKernel:
    """The SE kernel of the benchmark (lengthscale 0.5, float64, frozen).

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_bound import make_kernel
        >>> float(make_kernel().lengthscale)
        0.5
    """
    kernel = RBFKernel().to(DTYPE)
    kernel.lengthscale = LENGTHSCALE
    kernel.raw_lengthscale.requires_grad_(False)
    return kernel


def icm_data(num_tasks: int, num_points: int, seed: int) -> dict[str, Tensor]:
    r"""Full-vector observations of ``f(x)^T = sum_j k(x, a_j) c_j^T B`` (an element of
    the RKHS of ``Gamma = k B``, 10 anchors ``a_j``, ``||f||_Gamma = RKHS_NORM / 2``) with
    noise ``NOISE_STD``: ``X`` (``t x 3``), ``Y`` (``t x n``), ``B``, 100 ``candidates``.

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_bound import icm_data
        >>> data = icm_data(3, 20, seed=0)
        >>> data["X"].shape, data["Y"].shape, data["B"].shape, data["candidates"].shape
        (torch.Size([20, 3]), torch.Size([20, 3]), torch.Size([3, 3]), torch.Size([100, 3]))
    """
    generator = torch.Generator().manual_seed(seed)
    B = random_task_covariance(num_tasks, generator)
    kernel = make_kernel()
    anchors = torch.rand(10, DIM, generator=generator, dtype=DTYPE)
    C = torch.randn(10, num_tasks, generator=generator, dtype=DTYPE)
    with torch.no_grad():
        norm = torch.trace(C.T @ kernel(anchors, anchors).to_dense() @ C @ B).sqrt()
        C = C * (0.5 * RKHS_NORM / norm)
        X = torch.rand(num_points, DIM, generator=generator, dtype=DTYPE)
        F = kernel(X, anchors).to_dense() @ C @ B
    Y = F + NOISE_STD * torch.randn(num_points, num_tasks, generator=generator, dtype=DTYPE)
    candidates = torch.rand(NUM_CANDIDATES, DIM, generator=generator, dtype=DTYPE)
    return {"X": X, "Y": Y, "B": B, "candidates": candidates}


def step_seconds(data: dict[str, Tensor], route: str, repeats: int) -> tuple[float, float]:
    """Median seconds of the two parts of one step on ``data`` (``t`` rows): the bound
    is built on the first ``t - 1`` rows (not timed); the append adds row ``t`` and
    decomposes the new Gram matrix (``check_nonempty``), the UCB then evaluates the
    bounds at the candidates. ``route``: ``"kronecker"`` (``Gamma = k B``, the
    Chebyshev UCB), ``"linear"`` (``Gamma = k B``, the linear UCB: one functional
    ``w^T f(x)``), ``"dense"`` (``k B / 2 + k B / 2``, the Chebyshev UCB) or
    ``"single"`` (task 0, single-task CMM: ``upper``).

    Returns:
        ``(append_seconds, ucb_seconds)``; the step is their sum.

    Raises:
        ValueError: For another ``route``.

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_bound import icm_data, step_seconds
        >>> append, ucb = step_seconds(icm_data(2, 20, seed=0), "kronecker", repeats=1)
        >>> append > 0 and ucb > 0
        True
    """
    X, Y, B, candidates = data["X"], data["Y"], data["B"], data["candidates"]
    arguments = (RKHS_NORM, NOISE_STD, DELTA)
    if route == "single":
        new_Y = Y[:, :1]
        bound: Any = MartingaleMixtureBound(X[:-1], new_Y[:-1], make_kernel(), *arguments)

        def ucb(appended: MartingaleMixtureBound) -> Tensor:
            return appended.upper(candidates)

    elif route in ("kronecker", "linear", "dense", "screened"):
        new_Y = Y
        kernel = make_kernel()
        kernels, covariances = (
            ([kernel, make_kernel()], [B / 2] * 2) if route == "dense" else (kernel, B)
        )
        bound = MultiTaskMartingaleMixtureBound(X[:-1], Y[:-1], kernels, covariances, *arguments)
        if bound.kronecker_route == (route == "dense"):  # pragma: no cover - a guard
            raise RuntimeError(f"the {route} bound took the other route")
        weights = torch.full((B.shape[0],), 1.0 / B.shape[0], dtype=DTYPE)
        scalarization = (
            LinearScalarization(weights)
            if route == "linear"
            else ChebyshevScalarization(weights, Y.min(0).values)
        )

        def ucb(appended: MultiTaskMartingaleMixtureBound) -> Tensor:
            if route == "screened":  # MT-CMM-UCB's choice: the exact argmax, screened
                return MultiTaskMartingaleMixtureRule(appended).screened_argmax(
                    candidates, scalarization
                )
            return ScalarizedMartingaleMixtureUCB(appended, scalarization)(candidates[:, None])

    else:
        raise ValueError(
            f"route must be 'kronecker', 'linear', 'dense', 'screened' or 'single', got {route!r}"
        )

    def append(fresh: Any) -> Any:
        fresh.append_observations(X[-1:], new_Y[-1:])
        fresh.check_nonempty()  # the spectrum of the new Gram matrix
        return fresh

    append_seconds, appended = median_seconds(append, repeats, lambda: copy.deepcopy(bound))
    ucb_seconds, _ = median_seconds(ucb, repeats, lambda: appended)
    return append_seconds, ucb_seconds


def measure(
    tasks: Sequence[int], num_points: int, repeats: int, dense_limit: float, seed: int
) -> tuple[float, list[dict[str, Any]]]:
    """The single-task step's seconds and one row per ``n``: the step's seconds of the
    ``kronecker``, ``linear`` and ``dense`` routes and of their appends (``*_append``;
    ``dense`` ``None`` where its estimate exceeds ``dense_limit`` seconds).

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_bound import measure
        >>> single, rows = measure([2], 20, 1, 1.0, seed=0)
        >>> single > 0, [row["n"] for row in rows], rows[0]["dense"] is not None
        (True, [2], True)
    """
    for route in ("single", "kronecker", "linear", "dense", "screened"):  # warm-up
        step_seconds(icm_data(2, 10, seed), route, 1)
    single = sum(step_seconds(icm_data(1, num_points, seed), "single", repeats))
    rows: list[dict[str, Any]] = []
    previous_dense: tuple[int, float] | None = None
    for n in tasks:
        data = icm_data(n, num_points, seed)
        row: dict[str, Any] = {"n": n, "dense": None, "dense_append": None}
        routes = ["kronecker", "linear", "screened"]
        estimate = (
            0.0 if previous_dense is None else previous_dense[1] * (n / previous_dense[0]) ** 3
        )
        if estimate <= dense_limit:
            routes.append("dense")
        for route in routes:
            append_seconds, ucb_seconds = step_seconds(data, route, repeats)
            row[route], row[f"{route}_append"] = append_seconds + ucb_seconds, append_seconds
        if row["dense"] is not None:
            previous_dense = (n, row["dense"])
        rows.append(row)
    return single, rows


SLOPE_TOLERANCE = 0.05  # timing noise in the fitted slope


def growth_summary(rows: Sequence[dict[str, Any]], key: str = "kronecker") -> str:
    """Whether the step ``row[key]`` grows at most linearly in ``n``: the least-squares
    slope of ``log time`` against ``log n`` is at most 1 (``SLOPE_TOLERANCE`` for
    timing noise); the largest ratio between consecutive ``n`` is given beside it (a
    single pair is noisy on a shared machine, so it is reported, not the verdict).

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_bound import growth_summary
        >>> growth_summary([{"n": 2, "kronecker": 1.0}, {"n": 4, "kronecker": 1.5}])
        'cost grows at most linearly in n (slope of log time vs log n: 0.58; largest step x1.50 for n x2.0)'
    """
    if len(rows) < 2:
        return "one n only: no growth measured"
    n = torch.tensor([float(row["n"]) for row in rows], dtype=DTYPE).log()
    seconds = torch.tensor([row[key] for row in rows], dtype=DTYPE).log()
    centred = n - n.mean()
    slope = float((centred * (seconds - seconds.mean())).sum() / (centred**2).sum())
    steps = [(b[key] / a[key], b["n"] / a["n"]) for a, b in zip(rows, rows[1:])]
    ratio, n_ratio = max(steps, key=lambda step: step[0] / step[1])
    verdict = (
        "grows at most linearly" if slope <= 1.0 + SLOPE_TOLERANCE else "grows faster than linearly"
    )
    return (
        f"cost {verdict} in n (slope of log time vs log n: {slope:.2f}; largest step "
        f"x{ratio:.2f} for n x{n_ratio:.1f})"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; returns 0.

    Example:
        >>> main(["--quick"])  # doctest: +SKIP
        multi-task CMM step (append + Chebyshev UCB at 100 candidates), t = 50, ...
        ...
        0
    """
    parser = benchmark_parser("multi-task-bound", DESCRIPTION, "t = 50, n = 2, 5 (seconds)")
    parser.add_argument("--tasks", type=positive_int, nargs="+", default=[2, 5, 10, 20])
    parser.add_argument("--points", type=positive_int, default=200, help="t (default 200)")
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--dense-limit", type=float, default=20.0,
                        help="largest estimated seconds of a dense step (default 20)")  # fmt: skip
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    args = parser.parse_args(argv)
    tasks, points, repeats = (
        ([2, 5], 50, 1) if args.quick else (args.tasks, args.points, args.repeats)
    )
    with pinned_threads(args.threads) as threads:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
        print(
            f"multi-task CMM step (append + Chebyshev UCB at {NUM_CANDIDATES} candidates), "
            f"t = {points}, {threads} torch thread(s), load {load:.2f} on "
            f"{os.cpu_count()} CPUs, median of {repeats}"
        )
        single, rows = measure(tasks, points, repeats, args.dense_limit, args.seed)
    table = []
    for index, row in enumerate(rows):
        previous = rows[index - 1] if index else None
        consecutive = (
            f"{row['kronecker'] / previous['kronecker']:.2f} (n x{row['n'] / previous['n']:.1f})"
            if previous
            else "-"
        )
        dense = row["dense"]
        table.append([
            f"{row['n']}", f"{row['n'] * points}", f"{row['kronecker']:.4f}",
            f"{row['kronecker_append']:.4f}", f"{row['kronecker'] / single:.1f}", consecutive,
            "-" if dense is None else f"{dense:.3f}",
            "-" if dense is None else f"{row['dense_append']:.3f}",
            "-" if dense is None else f"{dense / row['kronecker']:.1f}",
            f"{row['linear']:.4f}", f"{row['screened']:.4f}",
        ])  # fmt: skip
    header = ["n", "M = n t", "step [s]", "append [s]", "/ single-task", "/ previous n",
              "dense [s]", "dense append [s]", "dense / step", "linear [s]",
              "MT-CMM-UCB [s]"]  # fmt: skip
    print(format_table(table, header))
    print(f"single-task CMM step (append + upper at {NUM_CANDIDATES} candidates): "
          f"{single:.4f} s")  # fmt: skip
    print(f"Chebyshev step: {growth_summary(rows)}")
    print(f"linear step: {growth_summary(rows, 'linear')}")
    print(f"MT-CMM-UCB step: {growth_summary(rows, 'screened')}")
    print("step: append (one full-vector row, then the spectrum: O(t^3 + n^3) on the "
          "Kronecker route) + Chebyshev UCB at the candidates (n per-task bounds, each the "
          "1-D dual of eq. (12) by matrix products at shared alphas and power series "
          "around each bound's best one: O(t n + n^2) per candidate and alpha); "
          "linear: the step with one functional w^T f; dense: the Chebyshev step "
          "on the same kernel as two half-terms (spectrum O((n t)^3)); '-': not run "
          "(estimated above --dense-limit); MT-CMM-UCB: append + the policy's choice, the "
          "exact Chebyshev argmax over the candidates found by screening with the grid "
          "bound (MultiTaskMartingaleMixtureRule.screened_argmax).")  # fmt: skip
    return 0
