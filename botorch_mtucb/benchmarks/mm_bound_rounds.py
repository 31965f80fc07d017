"""The exact martingale-mixture bound's round in a loop, as the data grow.

A CMM-UCB round (paper 002, Section 5.3) appends one observation to the bound and asks
for the exact upper bound (eq. (10)) at 100 candidates. The data are those of
``mm-bound-vs-cvxpy`` (an RKHS function of the Matern 5/2 kernel, lengthscale 0.5, d = 3,
``||f|| = 10``, sigma = 0.1, delta = 0.01, c = 0.2). For each ``t`` the benchmark times,
in this process and on the same data:

* the round as the package runs it (``MartingaleMixtureBound``: the factored route of
  ``factored_dual`` from ``FACTORED_MIN_OBSERVATIONS`` observations, the eigen route
  below);
* the round on the eigen route (``spectrum()`` first: one ``eigh`` of ``K_{t+1}``, then
  the 1-D dual per candidate), whose values the package's must equal (largest relative
  difference printed);
* one ``eigh`` of ``K_{t+1}``, the eigen route's floor;
* BoTorch's ``SingleTaskGP`` posterior (mean and variance) at the 100 candidates, built
  on the same data with the same kernel and noise (what a UCB round reads).

It prints the medians (CPU seconds of this process, one torch thread by default), the
ratios, and the exponent of a least-squares fit of ``log(round)`` on ``log(t)``; then
the round's wall time with 2 torch threads against 1 at ``--threads-size``, with this
machine otherwise idle and with a busy-loop process on another core (started and
stopped by the benchmark; the load average is printed, since "idle" is the machine's).

Usage::

    python -m botorch_mtucb benchmark mm-bound-rounds [--sizes 250 500 1000 2000 4000]
    python -m botorch_mtucb benchmark mm-bound-rounds --quick
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from botorch_mtucb.benchmarks.mm_bound_vs_cvxpy import DELTA, NUM_CANDIDATES, SIGMA, B, C, problem
from botorch_mtucb.benchmarks.thread_ratio import thread_ratios
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.experiments.cli_types import nonnegative_int, positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "the exact martingale-mixture bound's round in t: the package's route vs the eigen "
    "route, one eigh and SingleTaskGP's posterior; fitted exponent; 2 vs 1 threads"
)
TARGETS = {"exponent": 2.2, "round_per_eigh": 0.3, "round_per_posterior": 2.0, "rel_diff": 1e-8}
EIGH_TARGET_SIZE = 2000  # the size at which round / eigh is a target


def _cpu_seconds(function: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


def posterior_seconds(kernel, X: torch.Tensor, Y: torch.Tensor, candidates: torch.Tensor) -> float:
    """CPU seconds of a ``SingleTaskGP`` (the bound's kernel, fixed noise ``sigma^2``, no
    outcome transform) built on ``(X, Y)`` and its posterior mean and variance at the
    candidates (the best of two, after a warm-up).

    Example:
        >>> from botorch_mtucb.benchmarks.mm_bound_rounds import posterior_seconds, problem
        >>> kernel, X, Y, candidates = problem(20, 0)
        >>> posterior_seconds(kernel, X, Y, candidates) > 0
        True
    """
    from botorch.models import SingleTaskGP

    def call() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gp = SingleTaskGP(
                X, Y, torch.full_like(Y, SIGMA**2), covar_module=kernel, outcome_transform=None
            )
            gp.eval()
            with torch.no_grad():
                posterior = gp.posterior(candidates)
                posterior.mean, posterior.variance  # noqa: B018 (computed, as a UCB reads them)

    call()
    return min(_cpu_seconds(call)[0] for _ in range(2))


def measure(size: int, rounds: int, eigen_rounds: int, seed: int) -> dict[str, float]:
    """One row: the medians over ``rounds`` rounds of the package's round (append one
    observation, the exact bound at 100 candidates), over ``eigen_rounds`` of the same
    rounds on the eigen route and of one ``eigh``; the largest relative difference of
    the two routes' values; the ``SingleTaskGP`` posterior on the last round's data.

    Example:
        >>> from botorch_mtucb.benchmarks.mm_bound_rounds import measure
        >>> row = measure(30, 2, 1, 0)
        >>> row["t"], row["round_s"] > 0, row["rel_diff"] < 1e-8
        (30, True, True)
    """
    kernel, X, Y, candidates = problem(size + rounds + 1, seed)
    package = MartingaleMixtureBound(X[:size], Y[:size], kernel, B, SIGMA, DELTA, C)
    eigen = MartingaleMixtureBound(X[:size], Y[:size], kernel, B, SIGMA, DELTA, C)
    for bound in (package, eigen):  # one warm round: the storage and the nodes, as a loop has them
        bound.append_observations(X[size : size + 1], Y[size : size + 1])
    package.upper(candidates)
    eigen.spectrum()
    eigen.upper(candidates)
    times: dict[str, list[float]] = {"round": [], "eigen": [], "eigh": []}
    rel_diff = 0.0
    for r in range(size + 1, size + 1 + rounds):
        new_X, new_Y = X[r : r + 1], Y[r : r + 1]
        start = time.process_time()
        package.append_observations(new_X, new_Y)
        value = package.upper(candidates)
        times["round"].append(time.process_time() - start)
        if len(times["eigen"]) < eigen_rounds:
            start = time.process_time()
            eigen.append_observations(new_X, new_Y)
            eigen.spectrum()
            reference = eigen.upper(candidates)
            times["eigen"].append(time.process_time() - start)
            with torch.no_grad():
                gram = kernel(X[: r + 1]).to_dense()
            start = time.process_time()
            torch.linalg.eigh(gram)
            times["eigh"].append(time.process_time() - start)
            rel_diff = max(rel_diff, float(((value - reference).abs() / reference.abs()).max()))
    n = size + 1 + rounds
    medians = {f"{key}_s": float(np.median(value)) for key, value in times.items()}
    posterior = posterior_seconds(kernel, X[:n], Y[:n], candidates)
    factored = package.gram_spectrum._spectrum is None  # the eigen route keeps its spectrum
    return {"t": size, **medians, "posterior_s": posterior, "rel_diff": rel_diff,
            "route": "factored" if factored else "eigen"}  # fmt: skip


def fitted_exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """The slope of a least-squares line through ``(log t, log seconds)``.

    Example:
        >>> from botorch_mtucb.benchmarks.mm_bound_rounds import fitted_exponent
        >>> round(fitted_exponent([100, 200, 400], [1.0, 4.0, 16.0]), 6)
        2.0
    """
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def round_thread_ratios(size: int, seed: int, repeats: int) -> dict[str, float]:
    """``thread_ratio.thread_ratios`` of the package's round from ``size`` observations on: each call
    appends the next observation and asks for the exact bound (the data grow by one per
    call, ``4 (repeats + 1)`` in all).

    Example:
        >>> from botorch_mtucb.benchmarks.mm_bound_rounds import round_thread_ratios
        >>> round_thread_ratios(30, 0, 1)["idle"]["seconds"][1] > 0
        True
    """
    calls = 2 * 2 * (repeats + 1)  # idle and busy, 1 and 2 threads, a warm-up each
    kernel, X, Y, candidates = problem(size + calls, seed)
    bound = MartingaleMixtureBound(X[:size], Y[:size], kernel, B, SIGMA, DELTA, C)
    bound.upper(candidates)  # the nodes factored once, as a loop has them
    rows = iter(range(size, size + calls))

    def work() -> None:
        r = next(rows)
        bound.append_observations(X[r : r + 1], Y[r : r + 1]).upper(candidates)

    return thread_ratios(work, (1, 2), repeats)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; 0 if every target was met
    in this run, else 1 (the numbers are printed either way).

    Example:
        >>> main(["--quick"])  # doctest: +SKIP
        the exact bound's round (append one observation, the exact bound at 100 candidates) ...
        0
    """
    parser = benchmark_parser("mm-bound-rounds", DESCRIPTION, "t = 300, 800; 2 rounds")
    parser.add_argument(
        "--sizes", type=positive_int, nargs="+", default=[250, 500, 1000, 2000, 4000]
    )
    parser.add_argument("--rounds", type=positive_int, default=5, help="rounds per size (medians)")
    parser.add_argument("--eigen-rounds", type=positive_int, default=2,
                        help="of them also on the eigen route (its eigh is the slow part)")  # fmt: skip
    parser.add_argument("--threads-size", type=nonnegative_int, default=1000,
                        help="t of the 2 vs 1 threads measurement (0: none)")  # fmt: skip
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    args = parser.parse_args(argv)
    sizes, rounds, eigen_rounds = args.sizes, args.rounds, args.eigen_rounds
    threads_size, repeats = args.threads_size, 3
    if args.quick:
        sizes, rounds, eigen_rounds, threads_size, repeats = [300, 800], 2, 1, 300, 1
    rows = []
    with pinned_threads(args.threads) as threads:
        print(
            f"the exact bound's round (append one observation, the exact bound at "
            f"{NUM_CANDIDATES} candidates), {threads} torch thread(s), CPU seconds of this "
            f"process, median of {rounds} rounds ({eigen_rounds} on the eigen route)"
        )
        for size in sizes:
            rows.append(measure(size, rounds, eigen_rounds, args.seed))
    table = [
        [f"{row['t']}", row["route"], f"{1e3 * row['round_s']:.1f}", f"{1e3 * row['eigen_s']:.1f}",
         f"{1e3 * row['eigh_s']:.1f}", f"{row['round_s'] / row['eigh_s']:.3f}",
         f"{1e3 * row['posterior_s']:.1f}", f"{row['round_s'] / row['posterior_s']:.2f}",
         f"{row['rel_diff']:.1e}"]
        for row in rows
    ]  # fmt: skip
    header = ["t", "route", "round [ms]", "eigen round [ms]", "eigh [ms]", "round / eigh",
              "GP posterior [ms]", "round / GP", "max rel diff"]  # fmt: skip
    print(format_table(table, header))
    print("round: the package's (factored route: Cholesky factors at a lattice of alphas, "
          "bordered per observation, and Lanczos near each candidate's minimizer; eigen "
          "route below FACTORED_MIN_OBSERVATIONS); eigen round: eigh of K_{t+1} and the 1-D "
          "dual per candidate; GP posterior: SingleTaskGP(X, Y, sigma^2) and its mean and "
          "variance at the candidates; max rel diff: the two routes' bounds.")  # fmt: skip
    met = []
    if len(rows) >= 2:
        exponent = fitted_exponent([row["t"] for row in rows], [row["round_s"] for row in rows])
        print(f"fitted exponent of the round in t ({rows[0]['t']}..{rows[-1]['t']}): "
              f"{exponent:.2f} (target <= {TARGETS['exponent']})")  # fmt: skip
        met.append(exponent <= TARGETS["exponent"])
    for row in rows:
        met.append(row["round_s"] / row["posterior_s"] <= TARGETS["round_per_posterior"])
        met.append(row["rel_diff"] <= TARGETS["rel_diff"])
        if row["t"] == EIGH_TARGET_SIZE:
            met.append(row["round_s"] / row["eigh_s"] <= TARGETS["round_per_eigh"])
    if threads_size:
        with pinned_threads(args.threads):
            ratios = round_thread_ratios(threads_size, args.seed, repeats)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
        print(f"\nthe round at t = {threads_size}, wall seconds, 2 torch threads vs 1 "
              f"(load average {load:.2f} before; busy: a busy-loop process on another core)")  # fmt: skip
        print(format_table(
            [[state, f"{1e3 * ratios[state]['seconds'][1]:.1f}",
              f"{1e3 * ratios[state]['seconds'][2]:.1f}", f"{ratios[state]['ratio']:.2f}"]
             for state in ("idle", "busy")],
            ["machine", "1 thread [ms]", "2 threads [ms]", "2 / 1"],
        ))  # fmt: skip
        met.append(max(ratios["idle"]["ratio"], ratios["busy"]["ratio"]) <= 1.5)
    targets = (f"exponent <= {TARGETS['exponent']}, round / eigh <= {TARGETS['round_per_eigh']} "
               f"at t = {EIGH_TARGET_SIZE}, round / GP posterior <= "
               f"{TARGETS['round_per_posterior']}, max rel diff <= {TARGETS['rel_diff']:g}, "
               "2 / 1 threads <= 1.5")  # fmt: skip
    if all(met):
        print(f"all targets measured in this run met ({targets})")
        return 0
    print(f"some targets missed in this run ({targets})")
    return 1
