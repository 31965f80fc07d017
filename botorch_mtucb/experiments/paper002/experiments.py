"""Paper 002's experiments (Section 7, Appendix F): KernelUCB with martingale-mixture
bounds against AY-GP-UCB, IGP-UCB and random actions on synthetic kernel bandits.

Setup (Section 7): test functions ``f = b sum_{i <= 20} w_i k(., z_i)`` with
``||f||_H = B = 10``; Gaussian noise with ``sigma = 0.1``; 100 actions uniform in
``[0, 1]^d`` per round; ``delta = 0.01``; the true ``B`` and ``sigma`` are given to the
algorithms (except in ``002-loose``); ``c = 1`` (RBF) or ``T^{-d / (2 d + 2 nu)}``
(Matern), AY-GP-UCB's ``lambda = sigma^2 / c``, IGP-UCB's ``eta = 2 / T``; AMM-UCB's
``alpha = sigma^2 / c`` and DMM-UCB's grid ``{0.1, 0.3, 1, 3, 10} sigma^2 / c``.

Departures and choices: Kernel CMM-UCB runs for the full horizon (the paper stops it at
200 rounds, Section 7); ``T`` in ``c`` and ``eta`` is the horizon of the run (so quick
runs use their own shorter ``T``); repetition ``r`` of a configuration draws its test
function from seed ``1000 * (configuration index) + r`` and its action sets and noise
from the runner's seed ``r``, shared by all methods; in ``002-loose`` the text of
Appendix F.3 (``d = 3``) is followed where the caption of Figure 7 says ``[0, 1]^4``.
Runs use one torch thread (small matrices; timings comparable with the paper's single
CPU) and are written to ``<output>/<kernel>-l<lengthscale>-d<d>-T<T>/runs/``, so an
interrupted run resumes and runs of another horizon are kept apart.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from botorch_mtucb.bandits import KernelUCB, RandomPolicy, default_mixture_scale
from botorch_mtucb.bandits.runner import Policy
from botorch_mtucb.experiments.registry import register
from botorch_mtucb.experiments.report import (
    Method,
    MethodResult,
    final_statistics,
    format_table,
    plot_curves,
    run_methods,
    write_curves_csv,
    write_summary,
)
from botorch_mtucb.problems.kernel_bandit import (
    KERNEL_FAMILIES,
    KernelBanditEnvironment,
    RKHSTestFunction,
    make_kernel,
)

METHODS = ("CMM-UCB", "DMM-UCB", "AMM-UCB", "AY-GP-UCB", "IGP-UCB", "Random")
_CONFIDENCE = {
    "CMM-UCB": "CMM",
    "DMM-UCB": "DMM",
    "AMM-UCB": "AMM",
    "AY-GP-UCB": "AY",
    "IGP-UCB": "IGP",
}
RKHS_NORM = 10.0
NOISE_STD = 0.1
DELTA = 0.01
NUM_ACTIONS = 100
FAMILY_LABELS = {"rbf": "RBF", "matern52": "Matern 5/2", "matern32": "Matern 3/2"}

# Paper 002, Table 1 (d = 3, T = 1000, 10 repetitions): mean and sd of the cumulative
# regret; columns in the order of TABLE1_CONFIGS. Kernel CMM-UCB ran only 200 rounds.
PAPER_TABLE1: dict[str, list[tuple[float, float]]] = {
    "DMM-UCB": [
        (32.2, 20.9),
        (491.4, 117.1),
        (129.5, 45.6),
        (795.1, 206.0),
        (195.6, 78.0),
        (814.1, 344.4),
    ],
    "AMM-UCB": [
        (88.8, 6.1),
        (1206.2, 20.8),
        (197.0, 24.4),
        (1661.5, 90.1),
        (316.1, 51.1),
        (1741.2, 351.2),
    ],
    "AY-GP-UCB": [
        (136.9, 12.7),
        (1518.4, 38.9),
        (331.7, 45.2),
        (2382.4, 135.4),
        (546.0, 70.0),
        (2421.3, 568.5),
    ],
    "IGP-UCB": [
        (314.1, 110.5),
        (1433.0, 122.8),
        (553.3, 67.5),
        (1853.1, 105.7),
        (655.6, 67.4),
        (1707.5, 375.5),
    ],
    "Random": [
        (4282.4, 1015.4),
        (3872.4, 783.7),
        (4264.7, 778.0),
        (3677.5, 559.2),
        (4175.1, 681.0),
        (3442.0, 1080.4),
    ],
}


@dataclass(frozen=True)
class BanditConfig:
    """One synthetic kernel bandit: kernel, dimension, and the bounds given to the
    algorithms (``assumed_*``; the truth is ``B = 10``, ``sigma = 0.1``)."""

    family: str
    lengthscale: float
    dim: int = 3
    assumed_norm: float = RKHS_NORM
    assumed_noise: float = NOISE_STD

    @property
    def label(self) -> str:
        """A short name, e.g. ``"RBF l=0.5"``."""
        text = f"{FAMILY_LABELS[self.family]} l={self.lengthscale:g}"
        if self.assumed_norm != RKHS_NORM or self.assumed_noise != NOISE_STD:
            text += f" (sigma={self.assumed_noise:g}, B={self.assumed_norm:g})"
        return text

    @property
    def slug(self) -> str:
        """A directory name."""
        text = f"{self.family}-l{self.lengthscale:g}-d{self.dim}"
        if self.assumed_norm != RKHS_NORM or self.assumed_noise != NOISE_STD:
            text += f"-s{self.assumed_noise:g}-B{self.assumed_norm:g}"
        return text


def table_configs(dim: int) -> list[BanditConfig]:
    """The six columns of Table 1 / Figures 2, 5, 6 for dimension ``dim``."""
    return [
        BanditConfig(family, lengthscale, dim)
        for family in ("rbf", "matern52", "matern32")
        for lengthscale in (0.5, 0.2)
    ]


LOOSE_CONFIGS = [
    BanditConfig("matern52", 0.5, 3, assumed_norm=norm, assumed_noise=noise)
    for noise in (0.1, 0.2)
    for norm in (10.0, 20.0)
]


def run_directory(config: BanditConfig, horizon: int) -> str:
    """The sub-directory of a configuration's runs, e.g. ``"rbf-l0.5-d3-T1000"``: the
    horizon is part of it because ``c`` and ``eta`` depend on ``T`` (the runner would
    otherwise resume a shorter run made with other parameters)."""
    return f"{config.slug}-T{horizon}"


def make_policy(method: str, config: BanditConfig, horizon: int) -> Policy:
    """The policy ``method`` with paper 002's parameters for ``config``."""
    if method == "Random":
        return RandomPolicy()
    nu = KERNEL_FAMILIES[config.family]
    return KernelUCB(
        make_kernel(config.family, config.lengthscale),
        config.dim,
        _CONFIDENCE[method],
        rkhs_norm_bound=config.assumed_norm,
        noise_std=config.assumed_noise,
        delta=DELTA,
        mixture_scale=default_mixture_scale(nu, config.dim, horizon),
        eta=2.0 / horizon,
        name=method,
    )


def make_environment(config: BanditConfig, config_index: int, rep: int) -> KernelBanditEnvironment:
    """The test function of repetition ``rep`` (true ``B = 10``, ``sigma = 0.1``)."""
    generator = torch.Generator().manual_seed(1000 * config_index + rep)
    kernel = make_kernel(config.family, config.lengthscale)
    function = RKHSTestFunction.sample(kernel, config.dim, RKHS_NORM, generator=generator)
    return KernelBanditEnvironment(function, NOISE_STD, NUM_ACTIONS)


def seconds_curve(records, environment) -> np.ndarray:
    """Wall-clock seconds of each round (select + observe + update)."""
    return np.asarray([record.seconds for record in records], dtype=float)


def run_config(
    config: BanditConfig,
    config_index: int,
    methods: Sequence[str],
    horizon: int,
    repetitions: int,
    output: Path,
    progress: bool,
) -> dict[str, MethodResult]:
    """Run ``methods`` on ``config`` into ``output`` (resumable)."""
    environments: dict[int, KernelBanditEnvironment] = {}

    def environment_for(rep: int) -> KernelBanditEnvironment:
        if rep not in environments:
            environments[rep] = make_environment(config, config_index, rep)
        return environments[rep]

    method_list = [
        Method(
            method,
            make_policy=lambda rep, m=method: make_policy(m, config, horizon),
            make_environment=environment_for,
        )
        for method in methods
    ]
    if progress:
        print(
            f"\n{config.label}, d = {config.dim}: {len(methods)} methods x {repetitions} reps x T = {horizon}"
        )
    return run_methods(
        method_list,
        horizon,
        repetitions,
        output,
        curve_functions={"seconds": seconds_curve},
        progress=progress,
    )


def _method_entry(result: MethodResult) -> dict[str, Any]:
    mean, std = final_statistics(result, "cumulative_regret")
    seconds = result.curves["seconds"].mean(0)  # per round, mean over repetitions
    horizon = seconds.size
    at = {
        str(t): float(seconds[max(t - 10, 0) : t].mean())  # the 10 rounds up to t
        for t in sorted({min(200, horizon), horizon})
    }
    return {
        "cumulative_regret_mean": mean,
        "cumulative_regret_std": std,
        "seconds_per_step": float(np.mean(result.seconds_per_step)),
        "seconds_per_step_at": at,
    }


def run_grid_experiment(
    name: str,
    configs: Sequence[BanditConfig],
    output: Path,
    quick: bool,
    progress: bool,
    horizon: int | None = None,
    repetitions: int | None = None,
    methods: Sequence[str] | None = None,
    config_indices: Sequence[int] | None = None,
    paper_table: dict[str, list[tuple[float, float]]] | None = None,
) -> dict[str, Any]:
    """Run every method on every configuration; write summary, curves and plots.

    ``horizon``, ``repetitions``, ``methods`` and ``config_indices`` (which columns)
    override the defaults (full: ``T = 1000``, 10 repetitions; quick: ``T = 200``, 3).
    """
    horizon = horizon or (200 if quick else 1000)
    repetitions = repetitions or (3 if quick else 10)
    methods = list(methods or METHODS)
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown method(s) {sorted(unknown)}; known: {list(METHODS)}")
    indices = list(range(len(configs))) if config_indices is None else list(config_indices)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small matrices: extra threads only contend (and skew timings)
    try:
        results = _run_configs(configs, indices, methods, horizon, repetitions, output, progress)
    finally:
        torch.set_num_threads(threads)
    summary: dict[str, Any] = {
        "experiment": name,
        "horizon": horizon,
        "repetitions": repetitions,
        "quick": quick,
        "delta": DELTA,
        "num_actions": NUM_ACTIONS,
        "threads": 1,
        "machine": platform.platform(),
        "configs": {},
    }
    for index in indices:
        config = configs[index]
        config_results = results[config.label]
        summary["configs"][config.label] = {
            "family": config.family,
            "lengthscale": config.lengthscale,
            "dim": config.dim,
            "assumed_norm": config.assumed_norm,
            "assumed_noise": config.assumed_noise,
            "mixture_scale": default_mixture_scale(
                KERNEL_FAMILIES[config.family], config.dim, horizon
            ),
            "methods": {m: _method_entry(r) for m, r in config_results.items()},
        }
        write_curves_csv(config_results, output / run_directory(config, horizon) / "curves.csv")
    if paper_table is not None:
        summary["paper_table"] = {
            method: [list(cell) for cell in cells] for method, cells in paper_table.items()
        }
    write_summary(summary, output / "summary.json")
    _plot_grid(results, output / "cumulative_regret.png", name)
    _plot_seconds(results, output / "seconds_per_step.png", name)
    print(
        f"\n{name}: cumulative regret after T = {horizon} rounds, mean +- sd over {repetitions} repetitions"
    )
    print(summary_table(summary))
    if paper_table is not None:
        print("\nPaper 002, Table 1 (T = 1000, 10 repetitions; CMM-UCB ran only 200 rounds):")
        print(paper_table_text(summary, paper_table, indices))
    print(f"results written to {output}")
    return summary


def _run_configs(
    configs: Sequence[BanditConfig],
    indices: Sequence[int],
    methods: Sequence[str],
    horizon: int,
    repetitions: int,
    output: Path,
    progress: bool,
) -> dict[str, dict[str, MethodResult]]:
    return {
        configs[index].label: run_config(
            configs[index],
            index,
            methods,
            horizon,
            repetitions,
            output / run_directory(configs[index], horizon),
            progress,
        )  # fmt: skip
        for index in indices
    }


def summary_table(summary: dict[str, Any]) -> str:
    """Methods as rows, configurations as columns (the layout of Table 1)."""
    labels = list(summary["configs"])
    methods: list[str] = []
    for entry in summary["configs"].values():
        methods += [m for m in entry["methods"] if m not in methods]
    rows = []
    for method in methods:
        row = [method]
        for label in labels:
            cell = summary["configs"][label]["methods"].get(method)
            row.append(
                "-"
                if cell is None
                else f"{cell['cumulative_regret_mean']:.1f} +- {cell['cumulative_regret_std']:.1f}"
            )
        rows.append(row)
    return format_table(rows, ["method", *labels])


def paper_table_text(
    summary: dict[str, Any],
    paper_table: dict[str, list[tuple[float, float]]],
    indices: Sequence[int],
) -> str:
    """The paper's values for the columns that were run, in the same layout."""
    labels = list(summary["configs"])
    methods = [m for m in METHODS if any(m in e["methods"] for e in summary["configs"].values())]
    rows = []
    for method in methods:
        cells = paper_table.get(method)
        row = [method]
        for index in indices:
            row.append("-" if cells is None else f"{cells[index][0]:.1f} +- {cells[index][1]:.1f}")
        rows.append(row)
    return format_table(rows, ["method", *labels])


def _plot_grid(results: dict[str, dict[str, MethodResult]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = len(results)
    columns = min(count, 2 if count == 4 else 3)
    rows = math.ceil(count / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.8 * rows), squeeze=False)
    for ax, (label, config_results) in zip(axes.flat, results.items()):
        plot_curves(config_results, "cumulative_regret", path, label, "cumulative regret", ax=ax)
    for ax in list(axes.flat)[count:]:
        ax.set_visible(False)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plot_seconds(results: dict[str, dict[str, MethodResult]], path: Path, title: str) -> None:
    """Figure 4 style: seconds per step (original, zoomed, log scale) for the first
    configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label, config_results = next(iter(results.items()))
    figure, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    for ax in axes:
        for result in config_results.values():
            values = result.curves["seconds"].mean(0)
            ax.plot(np.arange(1, values.size + 1), values, label=result.name)
        ax.set_xlabel("round t")
        ax.set_ylabel("seconds per step")
        ax.grid(alpha=0.3)
    cheap = [  # the zoom ignores CMM-UCB and the first rounds (one-off warm-up costs)
        r.curves["seconds"].mean(0)[5:].max()
        for m, r in config_results.items()
        if m != "CMM-UCB" and r.curves["seconds"].shape[-1] > 5
    ]
    if cheap:
        axes[1].set_ylim(0, 1.1 * max(cheap))
    axes[2].set_yscale("log")
    axes[0].legend()
    axes[0].set_title(f"{label}: time per step")
    axes[1].set_title("zoomed")
    axes[2].set_title("log scale")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


_OPTIONS = {"horizon", "repetitions", "methods", "config_indices"}


def _check_options(options: dict[str, Any], name: str) -> None:
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ValueError(f"experiment {name!r} takes no option(s) {sorted(unknown)}")


@register("002-table1", "paper 002 Table 1 / Fig. 2: KernelUCB variants, d = 3, six kernels")
def table1(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """Table 1 of paper 002 (``d = 3``; RBF, Matern 5/2, 3/2; lengthscales 0.5, 0.2)."""
    _check_options(options, "002-table1")
    return run_grid_experiment(
        "002-table1", table_configs(3), output, quick, progress, paper_table=PAPER_TABLE1, **options
    )


@register("002-d2", "paper 002 Fig. 5: KernelUCB variants, d = 2")
def dim2(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """Figure 5 of paper 002 (``d = 2``)."""
    _check_options(options, "002-d2")
    return run_grid_experiment("002-d2", table_configs(2), output, quick, progress, **options)


@register("002-d4", "paper 002 Fig. 6: KernelUCB variants, d = 4")
def dim4(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """Figure 6 of paper 002 (``d = 4``)."""
    _check_options(options, "002-d4")
    return run_grid_experiment("002-d4", table_configs(4), output, quick, progress, **options)


@register("002-loose", "paper 002 Fig. 7: loose bounds sigma in {0.1, 0.2}, B in {10, 20}")
def loose(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """Figure 7 of paper 002: Matern 5/2, l = 0.5, d = 3, assumed (sigma, B) in
    {0.1, 0.2} x {10, 20} (truth: 0.1, 10)."""
    _check_options(options, "002-loose")
    return run_grid_experiment("002-loose", LOOSE_CONFIGS, output, quick, progress, **options)


@register("002-time", "paper 002 Fig. 4: wall-clock time per step, Matern 5/2, l = 0.5, d = 3")
def time_per_step(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """Figure 4 of paper 002: seconds per step of each method (plot
    ``seconds_per_step.png``; the mean per step is in ``summary.json``)."""
    _check_options(options, "002-time")
    options.setdefault("methods", [m for m in METHODS if m != "Random"])
    summary = run_grid_experiment(
        "002-time", [BanditConfig("matern52", 0.5, 3)], output, quick, progress, **options
    )
    entry = next(iter(summary["configs"].values()))["methods"]
    steps = list(next(iter(entry.values()))["seconds_per_step_at"])
    rows = [
        [m, f"{1000 * e['seconds_per_step']:.2f}"]
        + [f"{1000 * e['seconds_per_step_at'][t]:.2f}" for t in steps]
        for m, e in entry.items()
    ]
    print("\nwall-clock time per step (one thread; at t: mean of the 10 rounds up to t)")
    print(format_table(rows, ["method", "mean ms/step", *[f"ms at t={t}" for t in steps]]))
    return summary
