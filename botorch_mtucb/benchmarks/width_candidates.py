r"""Candidate ways of tightening paper 002's martingale-mixture bound, measured in
BoTorch's canonical loop setting: only those that narrow it are kept.

**The state measured.** Per problem (``loop_problems``) and seed, one state of
``benchmark botorch-loop``'s loop: ``n = 2 (d + 1) + 40`` scrambled Sobol points
(``draw_sobol_samples``, seeded by the seed) observed with the problem's noise (generator
seeded ``20_000 + seed``), ``SingleTaskGP(X, Y, input_transform=Normalize(d))`` fitted
with ``fit_gpytorch_mll``, ``N = 1000`` Sobol candidates (seed ``1000 + seed``); exact
bounds (``upper(X)``), ``delta = 0.01``. ``--quick``: 1 seed, Branin noise-free and
noisy, ``n = 2 (d + 1) + 10`` (intersection over ``n - 6, n - 3, n``).

**The width** of a bound ``u`` in GP posterior standard deviations,

.. math::
    w(x) = \frac{u(x) - \mu_{gp}(x)}{\sigma_{gp}(x)}

(``mu_gp``, ``sigma_gp`` from ``gp.posterior``, the user's units; UCB(beta=0.2) has
``w = 0.45``), summarized by its median over the candidates and its value at the
candidate maximizing ``mu_gp + sqrt(0.2) sigma_gp``; and the ratio to ``measured
sigma``'s width, ``median_x w(x) / w_ref(x)``. Per problem, the medians over the seeds.

**Where f escapes.** ``f > u``: the fraction of the candidates where the noise-free
function lies above the bound (0 for a valid upper bound; with ``B`` chosen from the data
no configuration promises it).

**Configurations** (``B*``: the ``B`` of the data rule ``norm_choice`` for 2.):

1. ``fitted sigma``: ``from_model(gp)``: fitted noise, ``B`` from the data, ``c = 1``.
2. ``measured sigma``: ``from_model(gp, measurement_noise_std=s)``, the problem's
   ``measurement_noise_std`` (the package's recommendation; the reference), whose data
   rule adds the leave-one-out allowance (``norm_choice.norm_bound_with_allowance``).
3. ``c-grid union``: ``min_c u_c(x)``, ``c in {0.1, 0.3, 1, 3, 10}``, each at ``delta /
   5`` with ``B = B*``: each set holds with probability ``1 - delta / 5``, so all five
   (and their minimum) with ``1 - delta`` (a union bound).
4. ``intersection over time``: ``min_m u_m(x)`` over the bounds on the first ``m in {n -
   20, n - 10, n}`` observations (the final fit's kernel, ``B*``, ``sigma``). Paper 002's
   sets hold for all ``t`` at once **for a kernel fixed in advance**, and so does their
   intersection; in BoTorch's loop the kernel is refit every iteration, the sets of
   different rounds are about different RKHS balls, and their intersection has no
   guarantee there.
5. ``B: smallest non-empty``: the smallest ``B`` of a non-empty set
   (``emptiness.smallest_passing``) times ``1 + 1e-6``: the degenerate choice (the set
   shrinks to about one function, the bound to its values).
6. ``B: 2 x data rule``: ``B = 2 B*`` (how the width scales with ``B``).
7. ``B: plain data rule``: as 2 with the rule without the allowance
   (``choose_rkhs_norm_bound``): with a small stated level, about the degenerate set.

**Guarantees.** Paper 002's theorem needs ``B >= ||f~||_H`` fixed in advance, ``sigma``
at least the true sub-Gaussian level and a fixed kernel. The fitted noise is an
estimate, not such a level; ``B*`` is chosen from the data (a practical choice). 3 and 6
keep what 2 has (the guarantee, for a ``B`` fixed in advance); 4 only for a fixed
kernel; 5 and 7 none. A candidate is kept if its median ratio over the problems is below
``KEEP_RATIO`` and it keeps 2's guarantee in the loop.

Why this module is long: six configurations, each with its construction and its
guarantee, measured at one state and reported together (table, argmin fractions,
verdicts), so that the candidates read as one comparison.

Usage::

    python -m botorch_mtucb benchmark width-candidates            # 3 seeds, 6 problems
    python -m botorch_mtucb benchmark width-candidates --quick    # 1 seed, 2 problems
"""

from __future__ import annotations

import json
import math
import statistics
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from botorch_mtucb.benchmarks.loop_problems import PROBLEMS
from botorch_mtucb.benchmarks.timing import benchmark_parser
from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.emptiness import (
    min_radius_tilde_squared,
    smallest_passing,
)
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound
from botorch_mtucb.experiments.cli_types import positive_int
from botorch_mtucb.utils.files import write_atomically
from botorch_mtucb.utils.threads import pinned_threads

DESCRIPTION = (
    "candidate tightenings of the martingale-mixture bound (c-grid union, intersection "
    "over time, B choices) in BoTorch's loop: width in GP posterior sds vs measured sigma"
)
DELTA = 0.01
UCB_BETA = 0.2
NUM_CANDIDATES = 1000
MIXTURE_SCALES = (0.1, 0.3, 1.0, 3.0, 10.0)
KEEP_RATIO = 0.95
NONEMPTY_MARGIN = 1e-6  # B: smallest non-empty, times 1 + 1e-6 (non-empty after round-off)
REFERENCE = "measured sigma"
# name -> the guarantee it has in BoTorch's loop, relative to the reference's
CONFIGURATIONS = {
    "fitted sigma": "none (fitted noise is an estimate)",
    REFERENCE: "reference (B fixed in advance: paper 002)",
    "c-grid union": "as measured sigma (union bound)",
    "intersection over time": "only for a kernel fixed in advance, none in the loop",
    "B: smallest non-empty": "none (degenerate B)",
    "B: 2 x data rule": "as measured sigma",
    "B: plain data rule": "none (about the degenerate set for a small sigma)",
}
KEEPS_GUARANTEE = {"c-grid union", "B: 2 x data rule"}


def loop_state(
    problem: str, seed: int, extra_points: int = 40, num_candidates: int = NUM_CANDIDATES
) -> tuple[SingleTaskGP, Tensor]:
    """The loop's state (module docstring, float64): the ``SingleTaskGP`` fitted on ``2 (d
    + 1) + extra_points`` Sobol observations and ``num_candidates x d`` Sobol candidates.

    Example:
        >>> from botorch_mtucb.benchmarks.width_candidates import loop_state
        >>> gp, candidates = loop_state("branin", 0, extra_points=2, num_candidates=4)
        >>> gp.train_inputs[0].shape[0], tuple(candidates.shape)
        (8, (4, 2))
    """
    spec = PROBLEMS[problem]
    function = spec.function()
    bounds, d = function.bounds, function.bounds.shape[-1]
    X = draw_sobol_samples(bounds, n=2 * (d + 1) + extra_points, q=1, seed=seed).squeeze(-2)
    Y = spec.observe(function, X, torch.Generator().manual_seed(20_000 + seed))
    torch.manual_seed(seed)  # the fit's restarts, if any
    gp = SingleTaskGP(X, Y, input_transform=Normalize(d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fitting chatter
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    gp.eval()
    candidates = draw_sobol_samples(bounds, n=num_candidates, q=1, seed=1000 + seed)
    return gp, candidates.squeeze(-2)


def _minimum(builders: Sequence[Callable], X: Tensor) -> tuple[Tensor, Tensor, int]:
    """The minimum of the bounds that ``builders`` make at ``X``, the minimizing index
    (``-1``: all empty) and the number of empty sets (left out: a larger, safe value)."""
    uppers, empty = [], 0
    for build in builders:
        try:
            with torch.no_grad():
                uppers.append(build().upper(X))
        except EmptyConfidenceSetError:
            uppers.append(torch.full(X.shape[:-1], math.inf, dtype=X.dtype))
            empty += 1
    value, index = torch.stack(uppers).min(dim=0)
    return value, torch.where(torch.isfinite(value), index, -1), empty


def c_grid_union(
    gp: SingleTaskGP,
    X: Tensor,
    measurement_noise_std: float,
    rkhs_norm_bound: float,
    scales: Sequence[float] = MIXTURE_SCALES,
    delta: float = DELTA,
) -> tuple[Tensor, Tensor, int]:
    r"""``min_c u_c(x)`` over mixture scales ``c``, each bound at ``delta / len(scales)``.

    A union bound: with probability ``1 - delta`` every set holds, so the minimum bounds
    ``f``. A ``c`` whose set is empty (an event of that failure, or a wrong ``B``) is
    left out of the minimum (a larger, conservative value).

    Args:
        gp: A fitted single-output GP (``MartingaleMixtureBound.from_model``).
        X: ``N x d`` points (user's space).
        measurement_noise_std: ``sigma_meas`` in the user's units.
        rkhs_norm_bound: ``B`` (transformed units), the same for every ``c``.
        scales: The mixture scales ``c``.
        delta: The overall confidence level.

    Returns:
        ``min_c u_c(X)`` (``N``, user's units), the index in ``scales`` of the minimizing
        ``c`` (``N``; ``-1`` where every set is empty) and the number of empty sets.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.benchmarks.width_candidates import c_grid_union
        >>> X = torch.rand(10, 1, dtype=torch.float64)
        >>> gp = SingleTaskGP(X, X.sin()).eval()
        >>> upper, argmin, empty = c_grid_union(gp, X[:3], 0.01, 5.0, scales=(0.5, 2.0))
        >>> upper.shape, bool(((argmin == 0) | (argmin == 1)).all()), empty
        (torch.Size([3]), True, 0)
    """

    def builder(c: float) -> Callable[[], MartingaleMixtureBound]:
        return lambda: MartingaleMixtureBound.from_model(
            gp, rkhs_norm_bound, delta=delta / len(scales), mixture_scale=c,
            measurement_noise_std=measurement_noise_std,
        )  # fmt: skip

    return _minimum([builder(c) for c in scales], X)


def prefix_bound(bound: MartingaleMixtureBound, m: int) -> MartingaleMixtureBound:
    """The bound on the first ``m`` observations of ``bound``: its kernel, ``B``, ``sigma``,
    ``delta``, ``c``, input transform and outcome map (``bound.train_X`` / ``train_Y``
    are already in the transformed space).

    Raises:
        EmptyConfidenceSetError: If those ``m`` observations contradict ``B`` and
            ``sigma``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.benchmarks.width_candidates import prefix_bound
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 2.0, 0.1, 0.01)
        >>> bool(torch.equal(prefix_bound(bound, 6).upper(X), bound.upper(X)))
        True
    """
    return MartingaleMixtureBound(
        bound.train_X[:m], bound.train_Y[:m], bound.kernel, bound.rkhs_norm_bound,
        bound.noise_std, bound.delta, bound.mixture_scale,
        input_transform=bound.input_transform, outcome_shift=bound.outcome_shift,
        outcome_scale=bound.outcome_scale,
    )  # fmt: skip


def intersection_over_time(
    bound: MartingaleMixtureBound, X: Tensor, sizes: Sequence[int]
) -> tuple[Tensor, Tensor, int]:
    """``min_m u_m(x)`` over the bounds on the first ``m in sizes`` observations
    (``prefix_bound``; a prefix whose set is empty is left out). Valid for a kernel fixed
    in advance only (module docstring).

    Returns:
        As ``c_grid_union``, the index into ``sizes``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.benchmarks.width_candidates import intersection_over_time
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 2.0, 0.1, 0.01)
        >>> upper, argmin, empty = intersection_over_time(bound, X, [4, 8])
        >>> bool((upper <= bound.upper(X)).all())
        True
    """
    return _minimum([lambda m=m: prefix_bound(bound, m) for m in sizes], X)


def smallest_nonempty_norm_bound(bound: MartingaleMixtureBound) -> float:
    r"""The smallest ``B`` at which ``bound``'s confidence set (its data, ``sigma``,
    ``c``, ``delta``) is non-empty, ``min_alpha R~_alpha^2(B) >= 0``, times ``1 + 1e-6``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.benchmarks.width_candidates import smallest_nonempty_norm_bound
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, 3 * X.sin(), RBFKernel(), None, 0.1, 0.01)
        >>> 0 < smallest_nonempty_norm_bound(bound) <= bound.rkhs_norm_bound
        True
    """
    spectrum, radius_sq = bound.spectrum(), bound.radius_squared

    def margin(norm: float) -> float:
        return min_radius_tilde_squared(spectrum, norm, radius_sq, bound.base_alpha)

    threshold = smallest_passing(margin, 1e-6 * bound.rkhs_norm_bound)
    return threshold * (1.0 + NONEMPTY_MARGIN)


def measure_state(
    gp: SingleTaskGP,
    X: Tensor,
    measurement_noise_std: float,
    sizes: Sequence[int],
    truth: Tensor | None = None,
) -> dict[str, dict]:
    """Every configuration's width at one state (module docstring).

    Args:
        gp, X: The fitted GP and the ``N x d`` candidates (``loop_state``).
        measurement_noise_std: The problem's ``sigma_meas`` (user's units).
        sizes: The numbers of observations of ``intersection over time`` (the last ``n``).
        truth: ``f(X)`` (``N``, the noise-free function), or ``None``.

    Returns:
        ``{configuration: record}``, a record holding ``median_width``, ``ucb_width``
        (at the UCB(beta=0.2) candidate), ``ratio`` (to ``measured sigma``),
        ``rkhs_norm_bound``, ``noise_std`` (transformed units) and, with ``truth``,
        ``above`` (the fraction of candidates with ``f(x) > u(x)``); the two minima also
        ``argmin_fractions`` (per ``MIXTURE_SCALES`` / ``sizes``) and ``empty_sets``.

    Example:
        >>> from botorch_mtucb.benchmarks.width_candidates import loop_state, measure_state
        >>> gp, X = loop_state("branin-noisy", 0, extra_points=4, num_candidates=20)
        >>> records = measure_state(gp, X, 5.0, [8, 10])
        >>> records["measured sigma"]["ratio"]
        1.0
    """
    s = measurement_noise_std
    with torch.no_grad():
        posterior = gp.posterior(X)
        mean, sd = posterior.mean.squeeze(-1), posterior.variance.squeeze(-1).sqrt()
    ucb_index = int((mean + math.sqrt(UCB_BETA) * sd).argmax())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fitted noise at its floor: measured here
        fitted = MartingaleMixtureBound.from_model(gp, delta=DELTA)
    measured = MartingaleMixtureBound.from_model(gp, delta=DELTA, measurement_noise_std=s)
    best, smallest = measured.rkhs_norm_bound, smallest_nonempty_norm_bound(measured)

    def with_norm(norm: float) -> MartingaleMixtureBound:
        return MartingaleMixtureBound.from_model(gp, norm, delta=DELTA, measurement_noise_std=s)

    minima = {
        "c-grid union": c_grid_union(gp, X, s, best),
        "intersection over time": intersection_over_time(measured, X, sizes),
    }
    bounds = dict.fromkeys(CONFIGURATIONS, measured) | {"fitted sigma": fitted}
    bounds["B: smallest non-empty"] = with_norm(smallest)
    bounds["B: 2 x data rule"] = with_norm(2 * best)
    gram = measured.kernel(measured.train_X).to_dense().detach()
    plain = choose_rkhs_norm_bound(gram, measured.train_Y, measured.noise_std, DELTA)
    bounds["B: plain data rule"] = with_norm(plain)
    with torch.no_grad():
        uppers = {k: minima[k][0] if k in minima else b.upper(X) for k, b in bounds.items()}
    widths = {name: (upper - mean) / sd for name, upper in uppers.items()}  # w(x)
    records = {
        name: {
            "median_width": float(w.quantile(0.5)),
            "ucb_width": float(w[ucb_index]),
            "ratio": float((w / widths[REFERENCE]).quantile(0.5)),
            "rkhs_norm_bound": bounds[name].rkhs_norm_bound,
            "noise_std": bounds[name].noise_std,
        }
        for name, w in widths.items()
    }
    if truth is not None:  # where f escapes the bound (u is an upper bound of f or not)
        for name, upper in uppers.items():
            records[name]["above"] = float((truth.reshape(-1) > upper).double().mean())
    counts = {"c-grid union": len(MIXTURE_SCALES), "intersection over time": len(sizes)}
    for name, (_, argmin, empty) in minima.items():
        records[name]["argmin_fractions"] = [
            float((argmin == k).double().mean()) for k in range(counts[name])
        ]
        records[name]["empty_sets"] = empty
    return records


def summarize(records: dict[tuple[str, int], dict[str, dict]]) -> list[dict]:
    """One row per (problem, configuration): the medians over the seeds of each number
    (the mean for ``argmin_fractions``, the sum for ``empty_sets``), with the per-seed
    values.

    Args:
        records: ``{(problem, seed): measure_state(...)}``.

    Example:
        >>> from botorch_mtucb.benchmarks.width_candidates import summarize
        >>> one = {"median_width": 2.0, "ucb_width": 3.0, "ratio": 1.0,
        ...        "rkhs_norm_bound": 1.0, "noise_std": 0.1}
        >>> rows = summarize({("branin", 0): {"measured sigma": one},
        ...                   ("branin", 1): {"measured sigma": dict(one, median_width=4.0)}})
        >>> rows[0]["median_width"], rows[0]["per_seed"]["median_width"]
        (3.0, [2.0, 4.0])
    """
    rows = []
    for problem in dict.fromkeys(problem for problem, _ in records):
        seeds = [seed for (p, seed) in records if p == problem]
        states = [records[problem, seed] for seed in seeds]
        for name in states[0]:
            row = {"problem": problem, "configuration": name, "seeds": seeds}
            per_seed = {key: [state[name][key] for state in states] for key in states[0][name]}
            for key, values in per_seed.items():
                if key == "argmin_fractions":
                    row[key] = [statistics.fmean(column) for column in zip(*values)]
                elif key == "empty_sets":
                    row[key] = sum(values)
                else:
                    row[key] = statistics.median(values)
            row["per_seed"] = per_seed
            rows.append(row)
    return rows


def table(rows: Sequence[dict]) -> str:
    """The printed table of ``summarize``'s rows, the fractions of candidates where each
    ``c`` of ``c-grid union`` is the argmin and where an earlier set (``m < n``) is the
    tighter in ``intersection over time``, and the empty sets left out.

    Example:
        >>> from botorch_mtucb.benchmarks.width_candidates import table
        >>> row = {"problem": "branin", "configuration": "measured sigma",
        ...        "median_width": 2.0, "ucb_width": 3.0, "ratio": 1.0,
        ...        "rkhs_norm_bound": 1.0, "noise_std": 0.1}
        >>> print(table([row]).splitlines()[2])
        branin           measured sigma               2.000      3.000   1.000        1    0.1    nan
    """
    lines = [
        f"{'problem':16} {'configuration':24} {'median w':>9} {'w at UCB':>10} "
        f"{'ratio':>7} {'B':>8} {'sigma':>6} {'f > u':>6}",
        "-" * 93,
    ]
    for row in rows:
        lines.append(
            f"{row['problem']:16} {row['configuration']:24} {row['median_width']:9.3f} "
            f"{row['ucb_width']:10.3f} {row['ratio']:7.3f} {row['rkhs_norm_bound']:8.3g} "
            f"{row['noise_std']:6.2g} {row.get('above', math.nan):6.3f}"
        )
    scales = " ".join(f"{'c=' + format(c, 'g'):>7}" for c in MIXTURE_SCALES)
    lines += [
        "",
        "where the minimum is attained (fraction of candidates, mean over seeds): each c of "
        "c-grid union; m < n: an earlier set of intersection over time",
        f"{'problem':16}{scales}   m < n",
    ]
    for problem in dict.fromkeys(row["problem"] for row in rows):
        mine = {row["configuration"]: row for row in rows if row["problem"] == problem}
        union = mine.get("c-grid union", {}).get("argmin_fractions", [])
        over_time = mine.get("intersection over time", {}).get("argmin_fractions", [1.0])
        fractions = "".join(f"{value:8.2f}" for value in [*union, 1.0 - over_time[-1]])
        lines.append(f"{problem:16}{fractions}")
    lines += [
        f"{row['problem']} {row['configuration']}: {row['empty_sets']} empty set(s) over "
        "the seeds, left out of the minimum"
        for row in rows
        if row.get("empty_sets")
    ]
    return "\n".join(lines)


def verdicts(rows: Sequence[dict]) -> list[str]:
    """One line per candidate: its median ratio over the problems and whether it is kept
    (ratio below ``KEEP_RATIO`` and the reference's guarantee in the loop kept).

    Example:
        >>> from botorch_mtucb.benchmarks.width_candidates import verdicts
        >>> verdicts([{"problem": "branin", "configuration": "c-grid union", "ratio": 0.9}])
        ['c-grid union: median ratio 0.900 over problems: kept']
    """
    lines = []
    for name in CONFIGURATIONS:
        ratios = [row["ratio"] for row in rows if row["configuration"] == name]
        if name == REFERENCE or not ratios:
            continue
        ratio = statistics.median(ratios)
        if ratio >= KEEP_RATIO:
            verdict = "not kept (no gain)"
        elif name in KEEPS_GUARANTEE:
            verdict = "kept"
        else:
            verdict = f"not kept (narrower, but guarantee: {CONFIGURATIONS[name]})"
        lines.append(f"{name}: median ratio {ratio:.3f} over problems: {verdict}")
    return lines


def _parser():
    parser = benchmark_parser(
        "width-candidates", DESCRIPTION, "1 seed, branin and branin-noisy, n = 2 (d + 1) + 10"
    )
    parser.add_argument("--seeds", type=positive_int, default=3, help="(default: %(default)s)")
    parser.add_argument(
        "--problems", nargs="+", choices=sorted(PROBLEMS), default=list(PROBLEMS),
        help="(default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--output", default="results/width-candidates.json", help="(default: %(default)s)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark with command-line arguments ``argv``; returns 0.

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.benchmarks.width_candidates import main
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "w.json"
        >>> main(["--quick", "--output", str(out)])  # doctest: +SKIP
        width-candidates: 1 seed(s), branin, branin-noisy; ...
        0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if Path(args.output).is_dir():  # checked before the work, not after
        parser.error(f"--output {args.output} is a directory; give a JSON file name")
    if args.quick:
        seeds, problems, extra, steps = 1, ["branin", "branin-noisy"], 10, (6, 3)
    else:
        seeds, problems, extra, steps = args.seeds, args.problems, 40, (20, 10)
    records = {}
    with pinned_threads(args.threads) as threads:
        print(
            f"width-candidates: {seeds} seed(s), {', '.join(problems)}; n = 2 (d + 1) + "
            f"{extra}, N = {NUM_CANDIDATES}, delta = {DELTA}; {threads} torch thread(s)"
        )
        for problem in problems:
            for seed in range(seeds):
                gp, X = loop_state(problem, seed, extra)
                n, s = gp.train_inputs[0].shape[0], PROBLEMS[problem].measurement_noise_std
                truth = PROBLEMS[problem].function()(X)
                sizes = [n - k for k in steps] + [n]
                records[problem, seed] = measure_state(gp, X, s, sizes, truth)
    rows = summarize(records)
    print(
        f"\nw = (u - mu_gp) / sd_gp, width in GP posterior sds (UCB(beta=0.2): 0.447): median "
        f"over the {NUM_CANDIDATES} candidates and at the UCB(0.2) one;\nratio: median of w / "
        f"w({REFERENCE}); B, sigma in transformed units; f > u: fraction of the candidates "
        "above the bound;\nmedians over seeds"
    )
    print(table(rows))
    lines = verdicts(rows)
    print("\n" + "\n".join(lines))
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    settings = {"seeds": seeds, "extra_points": extra, "intersection_steps": list(steps)}
    document = {"settings": settings, "rows": rows, "verdicts": lines}
    write_atomically(output, (json.dumps(document, indent=1) + "\n").encode())
    print(f"\nrows in {output}")
    return 0
