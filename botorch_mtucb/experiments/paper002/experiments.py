"""Paper 002's experiments (Section 7, Appendix F): KernelUCB with martingale-mixture
bounds against AY-GP-UCB, IGP-UCB and random actions on synthetic kernel bandits
(``configs``), with the parameters of Section 7 (``methods``).

* ``002-table1``: Table 1 / Figure 2, ``d = 3``, six kernels (the paper's values are
  printed next to ours and kept in each problem of ``summary.json``).
* ``002-d2``, ``002-d4``: Figures 5 and 6, ``d = 2`` and ``d = 4``.
* ``002-loose``: Figure 7, loose assumed bounds.
* ``002-time``: Figure 4, wall-clock time per step.

Full runs: ``T = 1000``, 10 repetitions; ``--quick``: ``T = 200``, 3 repetitions. Runs
use one torch thread unless ``--threads`` says otherwise (small matrices; timings
comparable with the paper's single CPU)
and are written to ``<output>/<kernel>-l<lengthscale>-d<d>-T<T>/runs/``, so an
interrupted run resumes and runs of another horizon are kept apart.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from botorch_mtucb.bandits import StepRecord, default_mixture_scale
from botorch_mtucb.experiments.paper002.configs import (
    LOOSE_CONFIGS,
    NUM_ACTIONS,
    PAPER_TABLE1,
    BanditConfig,
    config_folder,
    make_environment,
    table_configs,
)
from botorch_mtucb.experiments.paper002.methods import DELTA, METHODS, make_policy
from botorch_mtucb.experiments.paper002.plots import plot_grid, plot_seconds
from botorch_mtucb.experiments.registry import experiment_options, register
from botorch_mtucb.experiments.run_directory import RunDirectory
from botorch_mtucb.experiments.runs import (
    Method,
    MethodResult,
    method_cost,
    prefetch,
    run_methods,
)
from botorch_mtucb.experiments.summary import (
    build_summary,
    method_summary,
    problem_summary,
    write_summary,
)
from botorch_mtucb.experiments.tables import grid_table, method_table, write_curves_csv
from botorch_mtucb.problems import KernelBanditEnvironment
from botorch_mtucb.problems.kernel_bandit import KERNEL_FAMILIES
from botorch_mtucb.utils.threads import current_run_threads, pinned_threads


def seconds_curve(records: Sequence[StepRecord], environment: Any) -> np.ndarray:
    """Wall-clock seconds of each round (select + observe + update), ``T`` values.

    Example:
        >>> from botorch_mtucb.bandits import StepRecord
        >>> from botorch_mtucb.experiments.paper002.experiments import seconds_curve
        >>> records = [StepRecord(t, [0.0], [0.0], 0.0, seconds=0.5) for t in range(2)]
        >>> seconds_curve(records, None).tolist()
        [0.5, 0.5]
    """
    return np.asarray([record.seconds for record in records], dtype=float)


def config_methods(
    config: BanditConfig, config_index: int, methods: Sequence[str], horizon: int
) -> list[Method]:
    """The runner's ``Method``s of ``methods`` on configuration ``config`` (column
    ``config_index``), sharing one environment per repetition.

    Example:
        >>> from botorch_mtucb.experiments.paper002.configs import BanditConfig
        >>> from botorch_mtucb.experiments.paper002.experiments import config_methods
        >>> [m.name for m in config_methods(BanditConfig("rbf", 0.5), 0, ["CMM-UCB", "Random"], 5)]
        ['CMM-UCB', 'Random']
    """
    environments: dict[int, KernelBanditEnvironment] = {}

    def environment_for(rep: int) -> KernelBanditEnvironment:
        if rep not in environments:
            environments[rep] = make_environment(config, config_index, rep)
        return environments[rep]

    return [
        Method(
            method,
            make_policy=lambda rep, m=method: make_policy(m, config, horizon),
            make_environment=environment_for,
            cost=method_cost(method),
        )
        for method in methods
    ]


def run_config(
    config: BanditConfig,
    config_index: int,
    methods: Sequence[str],
    horizon: int,
    repetitions: int,
    output: str | Path | RunDirectory,
    progress: bool,
) -> dict[str, MethodResult]:
    """Run ``methods`` on configuration ``config`` (column ``config_index``) into
    ``output`` (resumable); curves ``cumulative_regret`` and ``seconds``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper002.configs import BanditConfig
        >>> from botorch_mtucb.experiments.paper002.experiments import run_config
        >>> results = run_config(BanditConfig("rbf", 0.5), 0, ["Random"], 3, 1,
        ...                      Path(tempfile.mkdtemp()), progress=False)
        >>> results["Random"].curves["seconds"].shape
        (1, 3)
    """
    method_list = config_methods(config, config_index, methods, horizon)
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
    seconds = result.curves["seconds"].mean(0)  # per round, mean over repetitions
    horizon = seconds.size
    at = {
        str(t): float(seconds[max(t - 10, 0) : t].mean())  # the 10 rounds up to t
        for t in sorted({min(200, horizon), horizon})
    }
    return method_summary(result, seconds_per_step_at=at)


def _config_entry(
    config: BanditConfig,
    index: int,
    results: Mapping[str, MethodResult],
    horizon: int,
    paper_table: Mapping[str, Sequence[tuple[float, float]]] | None,
) -> dict[str, Any]:
    extras: dict[str, Any] = {
        "family": config.family,
        "lengthscale": config.lengthscale,
        "dim": config.dim,
        "assumed_norm": config.assumed_norm,
        "assumed_noise": config.assumed_noise,
        "mixture_scale": default_mixture_scale(KERNEL_FAMILIES[config.family], config.dim, horizon),
    }
    if paper_table is not None:
        extras["paper_cumulative_regret"] = {m: cells[index] for m, cells in paper_table.items()}
    return problem_summary({m: _method_entry(r) for m, r in results.items()}, **extras)


def summary_table(problems: Mapping[str, Mapping[str, Any]]) -> str:
    """Methods as rows, configurations as columns (the layout of Table 1): the final
    cumulative regret, mean +- sd over repetitions (``-`` where a method did not run).

    Example:
        >>> from botorch_mtucb.experiments.paper002.experiments import summary_table
        >>> entry = {"cumulative_regret_mean": 37.04, "cumulative_regret_std": 16.5}
        >>> print(summary_table({"RBF l=0.5": {"methods": {"CMM-UCB": entry}}}))
        ... # doctest: +NORMALIZE_WHITESPACE
        method   RBF l=0.5
        -------  ------------
        CMM-UCB  37.0 +- 16.5
    """

    def cell(problem: Mapping[str, Any], method: str) -> str | None:
        entry = problem["methods"].get(method)
        if entry is None:
            return None
        return f"{entry['cumulative_regret_mean']:.1f} +- {entry['cumulative_regret_std']:.1f}"

    return grid_table(problems, cell)


def paper_table_text(problems: Mapping[str, Mapping[str, Any]]) -> str:
    """The paper's values (each problem's ``paper_cumulative_regret``) in the layout of
    ``summary_table``, for the methods that ran, in the order of ``METHODS``.

    Example:
        >>> from botorch_mtucb.experiments.paper002.experiments import paper_table_text
        >>> problem = {"methods": {"DMM-UCB": {}}, "paper_cumulative_regret": {"DMM-UCB": [32.2, 20.9]}}
        >>> print(paper_table_text({"RBF l=0.5": problem}))  # doctest: +NORMALIZE_WHITESPACE
        method   RBF l=0.5
        -------  ------------
        DMM-UCB  32.2 +- 20.9
    """

    def cell(problem: Mapping[str, Any], method: str) -> str | None:
        values = problem["paper_cumulative_regret"].get(method)
        return None if values is None else f"{values[0]:.1f} +- {values[1]:.1f}"

    ran = [m for m in METHODS if any(m in p["methods"] for p in problems.values())]
    return grid_table(problems, cell, methods=ran)


def run_grid_experiment(
    name: str,
    configs: Sequence[BanditConfig],
    output: str | Path | RunDirectory,
    quick: bool,
    progress: bool,
    options: Mapping[str, Any],
    paper_table: Mapping[str, Sequence[tuple[float, float]]] | None = None,
) -> dict[str, Any]:
    """Run every method on every configuration; write ``summary.json`` (one problem per
    configuration), a ``curves.csv`` per configuration and two plots; print the table
    (and the paper's values, if ``paper_table``: method -> one ``(mean, sd)`` per
    configuration).

    ``options`` may set ``horizon``, ``repetitions``, ``methods`` and
    ``config_indices`` (which configurations; default all). Defaults: ``T = 1000``,
    10 repetitions; quick: ``T = 200``, 3 repetitions.

    Raises:
        ValueError: If ``options`` holds another name or an unknown method.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper002.configs import table_configs
        >>> from botorch_mtucb.experiments.paper002.experiments import run_grid_experiment
        >>> options = {"horizon": 3, "repetitions": 1, "methods": ["Random"], "config_indices": [0]}
        >>> summary = run_grid_experiment("demo", table_configs(3), Path(tempfile.mkdtemp()),
        ...                               True, False, options)  # doctest: +ELLIPSIS
        <BLANKLINE>
        demo: cumulative regret after T = 3 rounds, mean +- sd over 1 repetitions
        ...
        >>> list(summary["problems"])
        ['RBF l=0.5']
    """
    defaults = {
        "horizon": 200 if quick else 1000,
        "repetitions": 3 if quick else 10,
        "methods": METHODS,
        "config_indices": None,
    }
    chosen = experiment_options(name, options, defaults)
    horizon, repetitions = int(chosen["horizon"]), int(chosen["repetitions"])
    methods = list(chosen["methods"] or METHODS)
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown method(s) {sorted(unknown)}; known: {list(METHODS)}")
    indices = chosen["config_indices"]
    indices = list(range(len(configs))) if indices is None else list(indices)
    directory = RunDirectory(output)
    folders = {index: directory.sub(config_folder(configs[index], horizon)) for index in indices}
    # small matrices: extra threads only contend (and skew timings)
    with pinned_threads():
        prefetch(  # a parallel run sends every configuration's units at once
            [
                (
                    config_methods(configs[index], index, methods, horizon),
                    horizon,
                    repetitions,
                    folders[index],
                )
                for index in indices
            ]
        )
        results = {
            configs[index].label: run_config(
                configs[index],
                index,
                methods,
                horizon,
                repetitions,
                folders[index],
                progress,
            )
            for index in indices
        }
    settings = {
        "horizon": horizon,
        "repetitions": repetitions,
        "quick": quick,
        "delta": DELTA,
        "num_actions": NUM_ACTIONS,
        "threads": current_run_threads(),
        "machine": platform.platform(),
    }
    problems = {}
    for index in indices:
        config = configs[index]
        config_results = results[config.label]
        problems[config.label] = _config_entry(config, index, config_results, horizon, paper_table)
        write_curves_csv(config_results, folders[index].curves_file)
    summary = build_summary(name, settings, problems)
    write_summary(summary, directory.summary_file)
    plot_grid(results, directory.curve_plot_file("cumulative_regret"), name)
    plot_seconds(results, directory.plot_file("seconds_per_step"), name)
    print(
        f"\n{name}: cumulative regret after T = {horizon} rounds, mean +- sd over {repetitions} repetitions"
    )
    print(summary_table(summary["problems"]))
    if paper_table is not None:
        print("\nPaper 002, Table 1 (T = 1000, 10 repetitions; CMM-UCB ran only 200 rounds):")
        print(paper_table_text(summary["problems"]))
    return summary


def _register_grid(
    name: str,
    description: str,
    configs: Sequence[BanditConfig],
    paper_table: Mapping[str, Sequence[tuple[float, float]]] | None = None,
) -> None:
    """Register ``run_grid_experiment`` on ``configs`` as experiment ``name``."""

    def run(
        output: str | Path | RunDirectory,
        quick: bool = False,
        progress: bool = True,
        **options: Any,
    ) -> dict:
        return run_grid_experiment(name, configs, output, quick, progress, options, paper_table)

    run.__doc__ = description
    register(name, description)(run)


# Table 1 of paper 002 (d = 3; RBF, Matern 5/2, 3/2; lengthscales 0.5, 0.2), Figures 5
# and 6 (d = 2, 4), and Figure 7: Matern 5/2, l = 0.5, d = 3, assumed (sigma, B) in
# {0.1, 0.2} x {10, 20} (truth: 0.1, 10).
_register_grid(
    "002-table1",
    "paper 002 Table 1 / Fig. 2: KernelUCB variants, d = 3, six kernels",
    table_configs(3),
    PAPER_TABLE1,
)
_register_grid("002-d2", "paper 002 Fig. 5: KernelUCB variants, d = 2", table_configs(2))
_register_grid("002-d4", "paper 002 Fig. 6: KernelUCB variants, d = 4", table_configs(4))
_register_grid(
    "002-loose",
    "paper 002 Fig. 7: loose bounds sigma in {0.1, 0.2}, B in {10, 20}",
    LOOSE_CONFIGS,
)


@register("002-time", "paper 002 Fig. 4: wall-clock time per step, Matern 5/2, l = 0.5, d = 3")
def time_per_step(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options: Any
) -> dict:
    """Figure 4 of paper 002: seconds per step of each method but Random (plot
    ``seconds_per_step.png``; the mean per step is in ``summary.json``), and a table of
    the milliseconds per step, overall and over the 10 rounds up to ``t = 200`` and
    ``T``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper002.experiments import time_per_step
        >>> summary = time_per_step(Path(tempfile.mkdtemp()), True, False, horizon=2,
        ...     repetitions=1, methods=["DMM-UCB"])  # doctest: +ELLIPSIS
        <BLANKLINE>
        002-time: cumulative regret after T = 2 rounds, mean +- sd over 1 repetitions
        ...
        wall-clock time per step (one thread; at t: mean of the 10 rounds up to t)
        method   mean ms/step  ms at t=2
        ...
    """
    options = {"methods": [m for m in METHODS if m != "Random"], **options}
    config = BanditConfig("matern52", 0.5, 3)
    summary = run_grid_experiment("002-time", [config], output, quick, progress, options)
    methods = summary["problems"][config.label]["methods"]
    steps = list(next(iter(methods.values()))["seconds_per_step_at"])
    columns = {"mean ms/step": lambda e: f"{1000 * e['seconds_per_step']:.2f}"}
    for t in steps:
        columns[f"ms at t={t}"] = lambda e, t=t: f"{1000 * e['seconds_per_step_at'][t]:.2f}"
    print("\nwall-clock time per step (one thread; at t: mean of the 10 rounds up to t)")
    print(method_table(methods, columns))
    return summary
