"""A multi-task loop at scale: 10 tasks, up to 20,000 task-indexed observations.

The problem (``scale_problem``): 10 tasks on ``[0, 1]^4``, a sample of an ICM GP
``f(x) = C z(x)`` (``C C^T = B = A A^T + 0.05 I`` with ``A`` a ``10 x 3`` Gaussian
matrix, ``B`` scaled to unit mean diagonal; ``z``: 10 independent RBF-GP samples of
lengthscale 0.5 by 2,000 random Fourier features), observed one task at a time (each
observation is one task at one ``x``, as ``MultiTaskGP`` data, tasks drawn uniformly)
with Gaussian noise of variance ``NOISE_VARIANCE``. Every model gets the same kernel
``k_RBF(x, x') B`` and noise: nothing is fitted, so the comparison is posterior plus
acquisition.

For each size ``N`` (``--sizes``) and route, in a fresh Python process (``--in-process``
runs them here, as ``--quick`` does):

* **build**: the model from the ``N`` observations (wall-clock and CPU seconds,
  ``time.process_time``: on one thread the CPU seconds are what the work costs, whatever
  else loads the machine);
* **iteration** (median over ``--iterations``, wall-clock and CPU, and each iteration's
  CPU seconds: a redraw of the sketch's dictionary costs more than an extension, so the
  iterations differ): one acquisition optimization for the
  target task 0 with BoTorch's ``optimize_acqf`` on the box (``--restarts`` restarts,
  ``--raw-samples`` raw samples, BoTorch's default L-BFGS-B options), then the new
  observation of task 0 added to the model;
* **peak memory**: the peak resident set size the build and the iterations add to the
  process (``mt_bkb_builds.peak_bytes_of``).

Routes:

* ``exact``: ``VectorValuedGP`` (the ``N x N`` Gram matrix of the observations, one
  Cholesky factor), ``TaskConditionedUCB(width=WIDTH)``, ``append_observations`` (the
  factor bordered in place). Skipped where its estimated memory (``EXACT_BYTES_PER_ENTRY
  N^2``) exceeds ``--memory-fraction`` of the available memory.
* ``nystrom``: ``NystromVectorValuedGP`` (MT-BKB's sketch, paper 000 Section 3.2,
  adaptive build) with ``accuracy = ACCURACY`` (``q``: the dictionary holds each
  observation with probability ``min(q sigma^2, 1)``; Theorem 3's ``q`` is hundreds and
  keeps nearly every row at this noise), ``TaskConditionedUCB(width=WIDTH)``,
  ``append_observations`` with ``update_schedule="adaptive"`` (the dictionary redrawn
  once the information since the last redraw passes ``log 2``, the sketch extended in
  between: ``models.nystrom_build``).
* ``botorch``: BoTorch's ``MultiTaskGP`` (``output_tasks=[0]``, fixed noise
  ``train_Yvar``, no outcome transform, its ``RBFKernel`` and an ``IndexKernel`` set to
  ``B``, zero mean), built then its prediction caches computed by one posterior call;
  ``UpperConfidenceBound(beta=WIDTH**2)`` (the same bound: BoTorch multiplies
  ``sqrt(beta)``); the new point added with ``condition_on_observations`` (what a
  BoTorch user does without refitting: GPyTorch's fantasy update of the caches). Run
  up to the largest size it finishes within ``--botorch-max-seconds`` (a size past a
  timeout is skipped) and the memory fraction (estimate ``BOTORCH_BYTES_PER_ENTRY
  N^2``).

Everything runs on one torch thread by default (``--threads``; printed). The table gives
each route's seconds and peak memory and BoTorch's CPU seconds per iteration divided by
the route's (the aim: at least 10x); ``--output DIR`` writes ``multi_task_scale.json``.

Usage::

    python -m botorch_mtucb benchmark multi-task-scale          # N up to 20,000 (minutes)
    python -m botorch_mtucb benchmark multi-task-scale --quick  # N in {200, 400}, seconds
"""

from __future__ import annotations

import gc
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import torch

from botorch_mtucb.benchmarks.mt_bkb_builds import available_memory, peak_bytes_of
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.experiments.tables import format_table
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "10-task loop with up to 20,000 task-indexed observations: exact, Nystrom sketch "
    "and BoTorch's MultiTaskGP (time and peak memory)"
)
NUM_TASKS, DIM, LENGTHSCALE, NOISE_VARIANCE = 10, 4, 0.5, 0.05
ACCURACY = 10.0  # q of the sketch (module docstring)
WIDTH = 2.0  # mu + WIDTH * sigma; BoTorch's beta = WIDTH ** 2
TARGET_TASK = 0
NUM_FEATURES = 2000  # random Fourier features of each latent RBF-GP sample
ROUTES = ("exact", "nystrom", "botorch")
# Estimated peak bytes per entry of the N x N matrices (float64): the exact route keeps
# the Gram matrix and its growing factor; BoTorch the covariance, its Cholesky factor
# and the predictive caches.
EXACT_BYTES_PER_ENTRY, BOTORCH_BYTES_PER_ENTRY = 3 * 8, 4 * 8
QUICK_SIZES = (200, 400)


def scale_problem(size: int, seed: int = 0) -> dict[str, Any]:
    """The benchmark's data: ``size`` task-indexed observations of the ICM sample.

    Returns:
        A dict with ``X`` (``size x 4``), ``tasks`` (``size``), ``Y`` (``size x 1``),
        ``task_covariance`` (``B``, ``10 x 10``) and ``objective`` (a function of
        ``(X, tasks)`` giving the noiseless ``f(x)_task``).

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_scale import scale_problem
        >>> problem = scale_problem(5)
        >>> tuple(problem["X"].shape), tuple(problem["Y"].shape), problem["tasks"].max() < 10
        ((5, 4), (5, 1), tensor(True))
    """
    generator = torch.Generator().manual_seed(seed)
    options = {"generator": generator, "dtype": torch.float64}
    A = torch.randn(NUM_TASKS, 3, **options)
    B = A @ A.T + 0.05 * torch.eye(NUM_TASKS, dtype=torch.float64)
    B = B / B.diagonal().mean()
    mix = torch.linalg.cholesky(B)  # f = C z: Cov(f(x), f(x')) = k(x, x') B
    frequencies = torch.randn(NUM_TASKS, DIM, NUM_FEATURES, **options) / LENGTHSCALE
    phases = 2 * math.pi * torch.rand(NUM_TASKS, 1, NUM_FEATURES, **options)
    weights = torch.randn(NUM_TASKS, NUM_FEATURES, 1, **options)

    def objective(X: torch.Tensor, tasks: torch.Tensor) -> torch.Tensor:
        features = torch.cos(X @ frequencies + phases) * math.sqrt(2.0 / NUM_FEATURES)
        latent = (features @ weights).squeeze(-1)  # n_latent x size: z(x)
        return (mix[tasks] * latent.transpose(0, 1)).sum(-1)  # f(x)_task

    X = torch.rand(size, DIM, **options)
    tasks = torch.randint(0, NUM_TASKS, (size,), generator=generator)
    noise = math.sqrt(NOISE_VARIANCE) * torch.randn(size, **options)
    Y = (objective(X, tasks) + noise).unsqueeze(-1)
    return {"X": X, "tasks": tasks, "Y": Y, "task_covariance": B, "objective": objective}


def _kernel(**options: Any):
    from gpytorch.kernels import RBFKernel

    kernel = RBFKernel(**options)
    kernel.lengthscale = LENGTHSCALE
    return kernel


def build_route(route: str, problem: dict[str, Any]) -> Any:
    """The model of ``route`` (``ROUTES``) on the problem's data, ready for a posterior
    (BoTorch's prediction caches computed).

    Raises:
        ValueError: For another ``route``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.multi_task_scale import build_route, scale_problem
        >>> problem = scale_problem(30)
        >>> X = torch.rand(3, 1, 4, dtype=torch.float64)
        >>> exact = build_route("exact", problem).posterior(X, output_indices=[0]).mean
        >>> botorch = build_route("botorch", problem).posterior(X).mean
        >>> torch.allclose(exact, botorch)  # the same kernel, noise and data
        True
    """
    from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP

    X, tasks, Y, B = problem["X"], problem["tasks"], problem["Y"], problem["task_covariance"]
    if route == "exact":
        return VectorValuedGP(X, Y, _kernel(), B, NOISE_VARIANCE, tasks)
    if route == "nystrom":
        return NystromVectorValuedGP(
            X, Y, _kernel(), B, NOISE_VARIANCE, tasks, accuracy=ACCURACY, update_schedule="adaptive"
        )
    if route != "botorch":
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    from botorch.models import MultiTaskGP
    from gpytorch.kernels import IndexKernel
    from gpytorch.means import ZeroMean

    rows = torch.cat([X, tasks.unsqueeze(-1).to(X)], -1)
    model = MultiTaskGP(
        rows,
        Y,
        task_feature=-1,
        train_Yvar=torch.full_like(Y, NOISE_VARIANCE),
        mean_module=ZeroMean(),
        covar_module=_kernel(),
        output_tasks=[TARGET_TASK],
        outcome_transform=None,
        all_tasks=list(range(NUM_TASKS)),
    )
    # B = A A^T + diag(v): a Cholesky factor as covar_factor, v ~ 0 (IndexKernel's floor)
    index = IndexKernel(num_tasks=NUM_TASKS, rank=NUM_TASKS, active_dims=[DIM]).to(X)
    index.covar_factor.data = torch.linalg.cholesky(B - 1e-9 * torch.eye(NUM_TASKS).to(B))
    index.raw_var.data = index.raw_var_constraint.inverse_transform(torch.full_like(B[0], 1e-9))
    # With tasks missing from the data, BoTorch's eval() (every posterior call) sets their
    # factor to the observed tasks' mean through this method: B is known, keep it.
    index._set_covar_factor = lambda value: None
    model.covar_module = _kernel(active_dims=list(range(DIM))) * index  # x, not the task
    model.requires_grad_(False)
    model.eval()
    model.posterior(X[:1].unsqueeze(0))  # the prediction caches: part of the build
    return model


def _iteration(route: str, model: Any, problem: dict[str, Any], restarts: int, raw: int) -> Any:
    """One loop step: the acquisition optimized for the target task, the new observation
    added; returns the model to use next."""
    from botorch.acquisition import UpperConfidenceBound
    from botorch.optim import optimize_acqf

    from botorch_mtucb.acquisition import TaskConditionedUCB

    bounds = torch.stack([torch.zeros(DIM), torch.ones(DIM)]).to(torch.float64)
    if route == "botorch":
        acquisition = UpperConfidenceBound(model, beta=WIDTH**2)
    else:
        acquisition = TaskConditionedUCB(model, task=TARGET_TASK, width=WIDTH)
    x, _ = optimize_acqf(acquisition, bounds, q=1, num_restarts=restarts, raw_samples=raw)
    task = torch.tensor([TARGET_TASK])
    noise = math.sqrt(NOISE_VARIANCE) * torch.randn(1, dtype=torch.float64)
    y = (problem["objective"](x, task) + noise).unsqueeze(-1)
    if route == "botorch":
        row = torch.cat([x, task.unsqueeze(-1).to(x)], -1)
        return model.condition_on_observations(row, y, noise=torch.full_like(y, NOISE_VARIANCE))
    return model.append_observations(x, y, task)


def _timed(function: Any) -> tuple[float, float, Any]:
    """Wall-clock and CPU (``time.process_time``) seconds of ``function()``, garbage
    collection paused (as ``timeit``), and its result."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        return time.perf_counter() - wall, time.process_time() - cpu, result
    finally:
        if enabled:
            gc.enable()


def measure_route(route: str, size: int, iterations: int, restarts: int, raw: int) -> dict:
    """Build seconds, seconds per iteration (median; wall-clock and CPU, and each
    iteration's CPU seconds) and peak bytes of ``route`` at ``size`` observations, in
    this process (``dictionary_size`` and ``num_resamplings`` for the sketch).

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_scale import measure_route
        >>> entry = measure_route("nystrom", 50, 1, 2, 16)
        >>> sorted(entry)  # doctest: +NORMALIZE_WHITESPACE
        ['build_cpu_seconds', 'build_seconds', 'cpu_seconds_per_iteration',
         'dictionary_size', 'iteration_cpu_seconds', 'num_resamplings', 'peak_bytes',
         'seconds_per_iteration']
    """
    problem = scale_problem(size)
    torch.manual_seed(size)  # optimize_acqf's raw samples
    entry: dict[str, Any] = {}

    def run() -> None:
        entry["build_seconds"], entry["build_cpu_seconds"], model = _timed(
            lambda: build_route(route, problem)
        )
        walls, cpus = [], []
        for _ in range(iterations):
            wall, cpu, model = _timed(partial(_iteration, route, model, problem, restarts, raw))
            walls.append(wall)
            cpus.append(cpu)
        entry["seconds_per_iteration"] = statistics.median(walls)
        entry["cpu_seconds_per_iteration"] = statistics.median(cpus)
        entry["iteration_cpu_seconds"] = cpus
        if route == "nystrom":
            entry["dictionary_size"] = model.dictionary_size
            entry["num_resamplings"] = model.num_resamplings

    entry["peak_bytes"] = peak_bytes_of(run)
    return entry


def child_measure_route(argv: Sequence[str]) -> None:
    """In a fresh process: ``measure_route`` with ``route size iterations restarts raw
    threads`` from ``argv``; prints the entry as JSON (the last line).

    Example:
        >>> import contextlib, io, json
        >>> from botorch_mtucb.benchmarks.multi_task_scale import child_measure_route
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     child_measure_route(["exact", "30", "1", "1", "4", "1"])
        >>> json.loads(out.getvalue().splitlines()[-1])["seconds_per_iteration"] > 0
        True
    """
    route, *numbers = argv
    size, iterations, restarts, raw, threads = map(int, numbers)
    with pinned_threads(threads):
        print(json.dumps(measure_route(route, size, iterations, restarts, raw)))


def _estimated_bytes(route: str, size: int) -> float:
    per_entry = {"exact": EXACT_BYTES_PER_ENTRY, "botorch": BOTORCH_BYTES_PER_ENTRY}
    return per_entry.get(route, 0) * size**2


def _fresh_process(route, size, args, threads, timeout) -> tuple[dict | None, str | None]:
    code = (
        "import sys\nfrom botorch_mtucb.benchmarks.multi_task_scale import "
        "child_measure_route\nchild_measure_route(sys.argv[1:])"
    )
    numbers = [size, args.iterations, args.restarts, args.raw_samples, threads]
    command = [sys.executable, "-c", code, route, *map(str, numbers)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout:g} s"
    if done.returncode != 0:
        return None, f"failed: {done.stderr.strip()[-300:]}"
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def measure(sizes: Sequence[int], args: Any, threads: int) -> list[dict[str, Any]]:
    """Every route at every size (``ROUTES``; ``args`` as ``main`` parses them), each
    printed as it ends; skipped sizes with their reason.

    Example:
        >>> import argparse, contextlib, io
        >>> from botorch_mtucb.benchmarks.multi_task_scale import measure
        >>> args = argparse.Namespace(
        ...     memory_fraction=0.6, in_process=True, iterations=1, restarts=1,
        ...     raw_samples=4, botorch_max_seconds=60.0,
        ... )
        >>> with contextlib.redirect_stdout(io.StringIO()):
        ...     results = measure([20], args, 1)
        >>> [(r["route"], r["skipped"]) for r in results]
        [('exact', None), ('nystrom', None), ('botorch', None)]
    """
    results, stopped = [], {}
    for size in sizes:
        for route in ROUTES:
            need, free = _estimated_bytes(route, size), available_memory()
            reason = stopped.get(route)
            if reason is None and need > args.memory_fraction * free:
                reason = f"needs ~{need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB available"
            entry: dict[str, Any] = {"size": size, "route": route}
            if reason is None:
                timeout = args.botorch_max_seconds if route == "botorch" else None
                if args.in_process:
                    entry.update(measure_route(route, size, *_loop_arguments(args)))
                else:
                    found, reason = _fresh_process(route, size, args, threads, timeout)
                    entry.update(found or {})
                if reason is not None and route == "botorch":
                    stopped[route] = f"skipped after N = {size} ({reason})"
            entry["skipped"] = reason
            print(_line(entry), flush=True)
            results.append(entry)
    return results


def _loop_arguments(args: Any) -> tuple[int, int, int]:
    return args.iterations, args.restarts, args.raw_samples


def _line(entry: dict[str, Any]) -> str:
    head = f"N = {entry['size']:6d} {entry['route']:8s}"
    if entry["skipped"]:
        return f"{head} skipped: {entry['skipped']}"
    each = ", ".join(f"{c:.2f}" for c in entry.get("iteration_cpu_seconds", []))
    return (
        f"{head} build {entry['build_seconds']:8.2f} s ({entry['build_cpu_seconds']:.2f} CPU), "
        f"{entry['seconds_per_iteration']:8.3f} s/iteration "
        f"({entry['cpu_seconds_per_iteration']:.3f} CPU; each {each}), "
        f"peak {entry['peak_bytes'] / 2**30:.2f} GiB"
    )


def scale_table(results: Sequence[dict[str, Any]]) -> str:
    """The table: size, route, build seconds (wall-clock, CPU), median seconds per
    iteration (wall-clock, CPU), peak GiB and BoTorch's median CPU seconds per iteration
    divided by the route's (``-``: not measured).

    Example:
        >>> from botorch_mtucb.benchmarks.multi_task_scale import scale_table
        >>> rows = [{"size": 10, "route": r, "skipped": None, "build_seconds": 1.0,
        ...          "build_cpu_seconds": 1.0, "seconds_per_iteration": s,
        ...          "cpu_seconds_per_iteration": s, "peak_bytes": 2**30} for r, s in
        ...         [("nystrom", 0.5), ("botorch", 5.0)]]
        >>> "10.0" in scale_table(rows)  # 5.0 / 0.5
        True
    """
    botorch = {
        r["size"]: r["cpu_seconds_per_iteration"]
        for r in results
        if r["route"] == "botorch" and not r["skipped"]
    }
    rows = []
    for r in results:
        if r["skipped"]:
            rows.append([r["size"], r["route"], *["-"] * 6, f"skipped: {r['skipped']}"])
            continue
        base = botorch.get(r["size"])
        ratio = "-" if base is None else f"{base / r['cpu_seconds_per_iteration']:.1f}"
        note = ""
        if "dictionary_size" in r:
            note = f"m = {r['dictionary_size']}, {r.get('num_resamplings', '?')} draws"
        rows.append(
            [
                r["size"],
                r["route"],
                f"{r['build_seconds']:.2f}",
                f"{r['build_cpu_seconds']:.2f}",
                f"{r['seconds_per_iteration']:.3f}",
                f"{r['cpu_seconds_per_iteration']:.3f}",
                f"{r['peak_bytes'] / 2**30:.2f}",
                ratio,
                note,
            ]
        )
    header = [
        "N",
        "route",
        "build s",
        "build CPU s",
        "s/iteration",
        "CPU s/iteration",
        "peak GiB",
        "BoTorch/route (CPU)",
        "note",
    ]
    return format_table(rows, header)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; returns 0.

    Example:
        >>> import contextlib, io
        >>> from botorch_mtucb.benchmarks.multi_task_scale import main
        >>> arguments = ["--sizes", "20", "--in-process", "--iterations", "1", "--restarts", "1"]
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     code = main([*arguments, "--raw-samples", "4"])
        >>> code, "BoTorch/route (CPU)" in out.getvalue()
        (0, True)
    """
    parser = benchmark_parser("multi-task-scale", DESCRIPTION, "N in {200, 400}, in-process")
    parser.add_argument(
        "--sizes", type=positive_int, nargs="+", default=[1000, 2000, 5000, 10000, 20000]
    )
    parser.add_argument("--iterations", type=positive_int, default=3)
    parser.add_argument("--restarts", type=positive_int, default=4)
    parser.add_argument("--raw-samples", type=positive_int, default=256)
    parser.add_argument("--botorch-max-seconds", type=float, default=300.0)
    parser.add_argument("--memory-fraction", type=float, default=0.6)
    parser.add_argument("--in-process", action="store_true", help="no fresh processes")
    parser.add_argument("--output", default=None, help="directory for multi_task_scale.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.in_process = list(QUICK_SIZES), True
        args.iterations, args.restarts, args.raw_samples = 2, 2, 32
    with pinned_threads(args.threads) as threads:
        print(
            f"{NUM_TASKS} tasks, d = {DIM}, RBF lengthscale {LENGTHSCALE}, noise variance "
            f"{NOISE_VARIANCE}, sketch q = {ACCURACY:g}, width {WIDTH:g} (BoTorch beta = "
            f"{WIDTH**2:g}), optimize_acqf: {args.restarts} restarts, {args.raw_samples} raw "
            f"samples; {threads} thread(s); "
            + ("in this process" if args.in_process else "a fresh process per route and size"),
            flush=True,
        )
        results = measure(sorted(args.sizes), args, threads)
    print()
    print(scale_table(results))
    if args.output is not None:
        path = Path(args.output) / "multi_task_scale.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        summary = {"threads": threads, "arguments": vars(args), "results": results}
        path.write_text(json.dumps(summary, indent=2) + "\n")
        print(f"numbers written to {path}")
    return 0
