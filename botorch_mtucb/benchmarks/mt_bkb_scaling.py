"""Per-step cost of MT-BKB against MT-KB as ``t`` grows (paper 000, Sections 3.2-3.3).

The 20-task RKHS problem of paper 000 (Figure 1 c): 101 points of [0, 1], SE kernel of
lengthscale 0.2, ``B = A^T A`` with 20 distinct eigenvalues. For each ``t`` in
``--steps`` both policies are given the same ``t - 1`` observations (points drawn
uniformly from the domain, noisy values of ``f``) and one round is timed: ``select``
(the scalarized UCB over the 101 candidates, as the policies run it) plus ``update``
(MT-KB: one Cholesky extension of each of the 20 ``t x t`` factors and the width of
Theorem 2; MT-BKB: redrawing the dictionary, rebuilding the sketch, Theorem 3's width).

* MT-BKB's model is built from the ``t - 1`` rows as MT-BKB would have built it
  (``NystromVectorValuedGP`` replays the dictionary draws in chunks of ``t / 50`` rows),
  with Theorem 3's ``q`` for ``T = max(steps)``, ``eps = 0.5``, ``delta = 0.1`` unless
  ``--accuracy`` is given. Its round is the median of ``--repeats`` runs on copies.
* MT-KB keeps 20 Cholesky factors of size ``t x t`` (``160 t^2`` bytes in float64, in
  buffers of capacity ``1.5 t``; about ``680 t^2`` bytes at the peak while it is built
  or solved against). A ``t`` whose estimated peak memory exceeds 80% of the available
  memory (``--memory-fraction``) is skipped (an out-of-memory kill could hit other
  processes); MT-KB's cost there is extrapolated
  from a least-squares fit ``c t^p`` on the measured ``t >= 1000`` and reported as
  such. Its round is timed once (it is seconds long at large ``t``).

Everything runs single-threaded by default (``--threads``): the two methods are timed in
the same run under the same load, so their ratio is what is comparable across machines.
The plot (``--output``) shows the cost per step against ``t`` and the dictionary size;
a JSON file with the numbers is written next to it.

Usage::

    python benchmarks/mt_bkb_scaling.py             # t up to 5000 (about 10-20 minutes)
    python benchmarks/mt_bkb_scaling.py --quick     # t up to 500, seconds
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from botorch_mtucb.bandits import (
    MultiTaskBudgetedKernelizedBandit,
    MultiTaskKernelizedBandit,
    ScalarizedEnvironment,
)
from botorch_mtucb.confidence import mt_bkb_accuracy
from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.problems import rkhs_problem

EPS, DELTA = 0.5, 0.1
TARGET = 5.0  # issue 3: MT-BKB's step at least 5 times cheaper than MT-KB's at t = 5000


def available_memory() -> float:
    """Bytes of memory available (``MemAvailable`` of ``/proc/meminfo``; inf elsewhere)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return float(line.split()[1]) * 1024
    except OSError:
        pass
    return math.inf


def mt_kb_peak_bytes(t: int, num_factors: int) -> float:
    """MT-KB's estimated peak memory: the factors' buffers (capacity 1.5 t) plus the
    scaled Gram matrices and a contiguous copy of the factors, ``num_factors x t x t``
    each, in float64."""
    return (1.5**2 + 2.0) * num_factors * t**2 * 8


def data(problem, size: int, seed: int = 0):
    """``size`` points drawn uniformly from the domain and noisy values of ``f``."""
    generator = torch.Generator().manual_seed(seed)
    points = problem.domain.points
    X = points[torch.randint(0, points.shape[0], (size,), generator=generator)]
    noise = torch.randn(size, problem.num_tasks, generator=generator, dtype=X.dtype)
    return X, problem.objective(X) + problem.noise_std * noise


def one_round(policy, environment, t, x, y) -> float:
    """Seconds for ``select`` (UCB over the candidates) + ``update`` with ``(x, y)``."""
    context = environment.context(t, torch.Generator().manual_seed(t))
    generator = torch.Generator().manual_seed(10_000 + t)
    start = time.perf_counter()
    policy.select(context, generator)
    policy.update(x, y, context, generator)
    return time.perf_counter() - start


def measure_mt_bkb(problem, environment, X, Y, t, accuracy, repeats):
    policy = MultiTaskBudgetedKernelizedBandit(
        problem.make_data_kernel(),
        problem.task_covariance,
        problem.domain,
        problem.rkhs_norm_bound,
        problem.noise_std,
        problem.regularization,
        DELTA,
        EPS,
        accuracy=accuracy,
    )
    start = time.perf_counter()
    policy.model = NystromVectorValuedGP(
        X[: t - 1],
        Y[: t - 1],
        problem.make_data_kernel(),
        problem.task_covariance,
        problem.regularization,
        accuracy=accuracy,
        chunk_size=max(1, (t - 1) // 50),
    )
    build = time.perf_counter() - start
    policy._width = policy.width()
    times, sizes = [], []
    for _ in range(repeats):
        copy_ = copy.deepcopy(policy)
        times.append(one_round(copy_, environment, t, X[t - 1], Y[t - 1]))
        sizes.append(copy_.model.dictionary_size)
    return {
        "seconds_per_step": statistics.median(times),
        "dictionary_size": int(statistics.median(sizes)),
        "embedding_dimension": copy_.model.embedding_dimension,
        "build_seconds": build,
    }


def measure_mt_kb(problem, environment, X, Y, t):
    policy = MultiTaskKernelizedBandit(
        problem.make_data_kernel(),
        problem.task_covariance,
        problem.domain,
        problem.rkhs_norm_bound,
        problem.noise_std,
        problem.regularization,
        DELTA,
    )
    start = time.perf_counter()
    policy.model = VectorValuedGP(
        X[: t - 1],
        Y[: t - 1],
        problem.make_data_kernel(),
        problem.task_covariance,
        problem.regularization,
    )
    build = time.perf_counter() - start
    policy._width = policy.width()
    seconds = one_round(policy, environment, t, X[t - 1], Y[t - 1])
    del policy
    return {"seconds_per_step": seconds, "build_seconds": build}


def fit_power_law(ts, costs):
    """Least-squares ``cost = c t^p`` in log-log; returns ``(c, p)``."""
    slope, intercept = np.polyfit(np.log(ts), np.log(costs), 1)
    return float(math.exp(intercept)), float(slope)


def plot(results, path: Path, fit) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    ts = [r["t"] for r in results]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    measured = [(r["t"], r["mt_kb"]["seconds_per_step"]) for r in results if r["mt_kb"]]
    if measured:
        left.plot(*zip(*measured), "o-", label="MT-KB (measured)")
    if fit is not None:
        grid = np.geomspace(min(ts), max(ts), 50)
        left.plot(
            grid,
            fit[0] * grid ** fit[1],
            "--",
            color="C0",
            alpha=0.6,
            label=f"MT-KB fit ~ t^{fit[1]:.2f}",
        )
    left.plot(ts, [r["mt_bkb"]["seconds_per_step"] for r in results], "s-", label="MT-BKB")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("round t")
    left.set_ylabel("seconds per step (select + update)")
    left.set_title("Per-step cost, 20-task RKHS problem")
    left.grid(alpha=0.3, which="both")
    left.legend()
    right.plot(
        ts,
        [r["mt_bkb"]["dictionary_size"] for r in results],
        "s-",
        color="C1",
        label="dictionary size m_t",
    )
    right.plot(ts, ts, ":", color="gray", label="t (every point)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("round t")
    right.set_ylabel("points")
    right.set_title("MT-BKB's dictionary")
    right.grid(alpha=0.3, which="both")
    right.legend()
    for ax in (left, right):  # label the measured t (minor labels would overlap)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(ts, [str(t) for t in ts])
    right.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    right.set_yticks(ts, [str(t) for t in ts])
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--steps", type=int, nargs="+", default=[250, 500, 1000, 2000, 3000, 4000, 5000]
    )
    parser.add_argument("--quick", action="store_true", help="t in {100, 250, 500}")
    parser.add_argument("--accuracy", type=float, default=None, help="q (default: Theorem 3)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: default)")
    parser.add_argument("--output", default="results/mt_bkb_scaling.png")
    parser.add_argument(
        "--memory-fraction",
        type=float,
        default=0.8,
        help="measure MT-KB only if its estimated peak memory is below this fraction of "
        "the available memory (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    steps = [100, 250, 500] if args.quick else sorted(args.steps)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    problem = rkhs_problem(20, seed=0)
    environment = ScalarizedEnvironment(problem)
    accuracy = args.accuracy or mt_bkb_accuracy(EPS, DELTA, max(steps))
    X, Y = data(problem, max(steps))
    num_factors = 20
    print(f"20-task RKHS problem, q = {accuracy:.1f}, {torch.get_num_threads()} thread(s)")
    results = []
    for t in steps:
        entry = {
            "t": t,
            "mt_bkb": measure_mt_bkb(problem, environment, X, Y, t, accuracy, args.repeats),
        }
        need, free = mt_kb_peak_bytes(t, num_factors), available_memory()
        if need < args.memory_fraction * free:
            entry["mt_kb"] = measure_mt_kb(problem, environment, X, Y, t)
        else:
            entry["mt_kb"] = None
            print(
                f"t = {t}: MT-KB skipped (needs ~{need / 2**30:.1f} GiB, "
                f"{free / 2**30:.1f} GiB available)"
            )
        results.append(entry)
        kb = entry["mt_kb"]
        print(
            f"t = {t:5d}: MT-BKB {entry['mt_bkb']['seconds_per_step'] * 1e3:9.1f} ms "
            f"(m = {entry['mt_bkb']['dictionary_size']}, r = "
            f"{entry['mt_bkb']['embedding_dimension']}), MT-KB "
            + (
                f"{kb['seconds_per_step'] * 1e3:9.1f} ms (build {kb['build_seconds']:.1f} s)"
                if kb
                else "not measured"
            ),
            flush=True,
        )
    measured = [r for r in results if r["mt_kb"] and r["t"] >= 1000] or [
        r for r in results if r["mt_kb"]
    ]
    fit = None
    if len(measured) >= 2:
        fit = fit_power_law(
            [r["t"] for r in measured], [r["mt_kb"]["seconds_per_step"] for r in measured]
        )
    rows = []
    for r in results:
        bkb = r["mt_bkb"]["seconds_per_step"]
        if r["mt_kb"]:
            kb, kind = r["mt_kb"]["seconds_per_step"], "measured"
        elif fit is not None:
            kb, kind = fit[0] * r["t"] ** fit[1], "extrapolated"
        else:
            kb, kind = math.nan, "none"
        r["ratio"], r["ratio_kind"] = kb / bkb, kind
        rows.append((r["t"], kb, bkb, r["ratio"], kind, r["mt_bkb"]["dictionary_size"]))
    print("\n    t   MT-KB s/step  MT-BKB s/step  ratio KB/BKB  (MT-KB)       dictionary")
    for t, kb, bkb, ratio, kind, m in rows:
        print(f"{t:5d}  {kb:12.4f}  {bkb:13.4f}  {ratio:12.1f}  {kind:12s}  {m:6d} ({m / t:.1%})")
    if fit is not None:
        print(f"MT-KB fit on measured t: {fit[0]:.3g} * t^{fit[1]:.2f} s")
    last = results[-1]
    print(
        f"at t = {last['t']}: MT-BKB is {last['ratio']:.1f}x cheaper per step "
        f"({last['ratio_kind']}; target >= {TARGET:g}x)"
    )
    output = Path(args.output)
    plot(results, output, fit)
    summary = {
        "accuracy": accuracy,
        "threads": torch.get_num_threads(),
        "results": results,
        "mt_kb_fit": fit,
    }
    output.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"plot written to {output}")
    return summary


if __name__ == "__main__":
    main()
