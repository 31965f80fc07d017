"""Paper 001's experiments (Sessa et al. 2023, Section 5, Figures 2-4, Appendix D).

* ``001-widths``: Figure 2, the widths of Theorem 1 against ``b`` (``widths``).
* ``001-synthetic-online`` / ``001-synthetic-active``: Figure 3 (a) and Appendix D
  (Figure 4): ``N in {3, 5, 10}``, deviation weight ``delta in {0.2, 0.4}``, ``d = 4``,
  linear kernel, unit noise, horizon ``T = 5 N d`` (as in the authors' reference
  experiments), 5 repetitions (a new random problem per repetition).
* ``001-mhc-online`` / ``001-mhc-active``: Figure 3 (b) on the MHC-I data (one task per
  allele; ``--data`` for any file with the same keys), ``T = 600`` (the authors'
  ``min(5 N d, 600)``; ``--quick``: 300), 5 repetitions, ``B = 5``, ``epsilon = 0.3``
  (``settings``).

The b sweep of Section 5 runs MT-UCB (improved widths) for every ``b`` of ``B_GRID`` on
the evaluation repetitions and keeps the ``b`` with the smallest mean final regret (the
paper's protocol, hence optimistic for MT-UCB); the chosen ``b`` is used by every other
method except Independent and Single (``methods``). Each problem of ``summary.json``
records the chosen ``b``, its regularization and the sweep's means. Runs use one torch
thread unless ``--threads`` says otherwise (small vector operations are faster
without threading).

MT-CMM-UCB / MT-CMM-AL (MT-UCB / MT-AL with the multi-task CMM bound) get a
sweep of their own (``sweep_cmm``: ``b = 0``, the independent baseline, and the ``b`` of
the grid, run into ``b_sweep`` as ``"MT-CMM-UCB b=..."``); the tables add the run at
their best ``b`` and the one at ``b = 0``, and ``summary.json`` records ``cmm_b`` and
``cmm_b_sweep``. The option ``cmm`` says which ``b``: ``"sweep"`` (the default; the
whole grid), ``"chosen"`` (the default with ``--quick``: only MT-UCB's chosen ``b``, as
the exact bound costs tens of times MT-UCB's round) or ``"off"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from botorch_mtucb.confidence import multitask_regularization
from botorch_mtucb.experiments.paper001.methods import (
    ACTIVE_METHODS,
    CMM_METHODS,
    DELTA,
    ONLINE_METHODS,
    make_method,
)
from botorch_mtucb.experiments.paper001.settings import (
    SYNTHETIC_DIM,
    Setting,
    mhc_setting,
    synthetic_setting,
)
from botorch_mtucb.experiments.plots import save_curves_plot
from botorch_mtucb.experiments.registry import experiment_options, register
from botorch_mtucb.experiments.run_directory import RunDirectory
from botorch_mtucb.experiments.runs import MethodResult, run_methods
from botorch_mtucb.experiments.summary import (
    build_summary,
    final_statistics,
    method_summary,
    problem_summary,
    write_summary,
)
from botorch_mtucb.experiments.tables import method_table, write_curves_csv
from botorch_mtucb.problems.mhc import MHC_RKHS_NORM_BOUND, MHC_TASK_DEVIATION
from botorch_mtucb.utils.checks import check_choice
from botorch_mtucb.utils.threads import pinned_threads

B_GRID = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
CMM_CHOICES = ("sweep", "chosen", "off")  # which b MT-CMM runs for (module docstring)
SWEEP_FOLDER = "b_sweep"  # the sub-directory of the b sweeps' runs
SYNTHETIC_CONFIGURATIONS = tuple((n, w) for n in (3, 5, 10) for w in (0.2, 0.4))
MHC_HORIZON = 600


def _b_label(b: float) -> str:
    return f"MT-UCB b={b:g}"


def sweep_b(
    setting: Setting,
    b_grid: Sequence[float],
    horizon: int,
    repetitions: int,
    output: str | Path | RunDirectory,
    progress: bool,
) -> tuple[float, dict[str, float], dict[str, MethodResult]]:
    """Section 5's b sweep: MT-UCB (improved widths) for each ``b`` of ``b_grid``, run
    into ``output/b_sweep``.

    Returns:
        The ``b`` with the smallest mean final cumulative regret, the mean final
        cumulative regret per ``b`` (keys ``f"{b:g}"``) and the runs' results.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper001.experiments import sweep_b
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> b, means, _ = sweep_b(
        ...     synthetic_setting(3, 0.2), (0.1, 1.0), 3, 1, Path(tempfile.mkdtemp()), False)
        >>> b in (0.1, 1.0), sorted(means)
        (True, ['0.1', '1'])
    """
    methods = [make_method("MT-UCB", setting, b, active=False, label=_b_label(b)) for b in b_grid]
    sweep = RunDirectory(output).sub(SWEEP_FOLDER)
    results = run_methods(methods, horizon, repetitions, sweep, progress=progress)
    means = {
        f"{b:g}": final_statistics(results[_b_label(b)], "cumulative_regret")[0] for b in b_grid
    }
    best = min(b_grid, key=lambda b: means[f"{b:g}"])
    return float(best), means, results


def _cmm_label(active: bool, b: float) -> str:
    return f"{CMM_METHODS[active]} b={b:g}"


def sweep_cmm(
    setting: Setting,
    active: bool,
    b_grid: Sequence[float],
    horizon: int,
    repetitions: int,
    output: str | Path | RunDirectory,
    progress: bool,
) -> tuple[float, dict[str, float], dict[str, MethodResult]]:
    """MT-CMM-UCB (or MT-CMM-AL if ``active``) for ``b = 0`` and each ``b`` of
    ``b_grid``, run into ``output/b_sweep`` (labels ``"MT-CMM-UCB b=0.1"``, ...).

    Returns:
        The ``b`` of ``b_grid`` with the smallest mean final cumulative regret, the mean
        final cumulative regret per ``b`` (keys ``f"{b:g}"``, ``"0"`` included) and the
        runs' results (keyed by label).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper001.experiments import sweep_cmm
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> b, means, results = sweep_cmm(
        ...     synthetic_setting(3, 0.2), False, (0.1, 1.0), 3, 1, Path(tempfile.mkdtemp()),
        ...     False)
        >>> b in (0.1, 1.0), sorted(means), sorted(results)
        (True, ['0', '0.1', '1'], ['MT-CMM-UCB b=0', 'MT-CMM-UCB b=0.1', 'MT-CMM-UCB b=1'])
    """
    grid = (0.0, *(b for b in b_grid if b != 0))
    name = CMM_METHODS[active]
    methods = [make_method(name, setting, b, active, label=_cmm_label(active, b)) for b in grid]
    sweep = RunDirectory(output).sub(SWEEP_FOLDER)
    results = run_methods(methods, horizon, repetitions, sweep, progress=progress)
    means = {
        f"{b:g}": final_statistics(results[_cmm_label(active, b)], "cumulative_regret")[0]
        for b in grid
    }
    best = min(b_grid, key=lambda b: means[f"{b:g}"])
    return float(best), means, results


def run_setting(
    setting: Setting,
    active: bool,
    horizon: int,
    repetitions: int,
    b_grid: Sequence[float],
    output: str | Path | RunDirectory,
    progress: bool,
    title: str,
    cmm: str = "sweep",
) -> dict[str, Any]:
    """Sweep ``b``, then run every online (or active-learning) method with the chosen
    ``b`` into ``output``; with ``cmm`` (``CMM_CHOICES``) ``"sweep"`` or ``"chosen"``,
    add MT-CMM's sweep over ``b_grid`` or over the chosen ``b`` (``sweep_cmm``) and its
    runs at its best ``b`` and at ``b = 0``; write ``curves.csv`` and
    ``cumulative_regret.png``.

    Returns:
        The problem's ``summary.json`` entry: ``methods``, the chosen ``b``, its
        regularization ``lambda``, the sweep's means ``b_sweep`` and, unless ``cmm`` is
        ``"off"``, MT-CMM's ``cmm_b`` and ``cmm_b_sweep``.

    Raises:
        ValueError: For ``cmm`` not in ``CMM_CHOICES``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper001.experiments import run_setting
        >>> from botorch_mtucb.experiments.paper001.methods import ONLINE_METHODS
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> entry = run_setting(synthetic_setting(3, 0.2), False, 3, 1, (0.1, 1.0),
        ...                     Path(tempfile.mkdtemp()), False, "demo")
        >>> list(entry["methods"])[: len(ONLINE_METHODS)] == list(ONLINE_METHODS)
        True
        >>> list(entry["methods"])[len(ONLINE_METHODS) :] == [
        ...     f"MT-CMM-UCB b={entry['cmm_b']:g}", "MT-CMM-UCB b=0"]
        True
    """
    cmm = check_choice(cmm, "cmm", CMM_CHOICES)
    directory = RunDirectory(output)
    directory.path.mkdir(parents=True, exist_ok=True)
    b, sweep_means, sweep_results = sweep_b(
        setting, b_grid, horizon, repetitions, directory, progress
    )
    names = ACTIVE_METHODS if active else ONLINE_METHODS
    results: dict[str, MethodResult] = {}
    to_run = []
    for name in names:
        if name == "MT-UCB":  # the sweep already ran MT-UCB at the chosen b
            result = sweep_results[_b_label(b)]
            result.name = name
            results[name] = result
        else:
            to_run.append(make_method(name, setting, b, active))
    results.update(run_methods(to_run, horizon, repetitions, directory, progress=progress))
    results = {name: results[name] for name in names}
    extra: dict[str, Any] = {}
    if cmm != "off":
        cmm_grid = b_grid if cmm == "sweep" else (b,)
        cmm_b, cmm_means, cmm_results = sweep_cmm(
            setting, active, cmm_grid, horizon, repetitions, directory, progress
        )
        for label in dict.fromkeys((_cmm_label(active, cmm_b), _cmm_label(active, 0.0))):
            results[label] = cmm_results[label]
        extra = {"cmm_b": cmm_b, "cmm_b_sweep": cmm_means}
    write_curves_csv(results, directory.curves_file)
    ylabel = "active learning regret" if active else "multitask regret (eq. 6)"
    regret_plot = directory.curve_plot_file("cumulative_regret")
    save_curves_plot(results, "cumulative_regret", regret_plot, title, ylabel)
    return problem_summary(
        {name: method_summary(result) for name, result in results.items()},
        b=b,
        regularization=multitask_regularization(setting.problem(0).num_tasks, b),
        b_sweep=sweep_means,
        **extra,
    )


def print_table(problem: Mapping[str, Any], title: str) -> None:
    """Print a problem's final regret (mean, sd) and milliseconds per round per method.

    Example:
        >>> from botorch_mtucb.experiments.paper001.experiments import print_table
        >>> entry = {"cumulative_regret_mean": 831.9, "cumulative_regret_std": 55.1,
        ...          "seconds_per_step": 0.0037}
        >>> print_table({"b": 0.01, "methods": {"MT-UCB": entry}}, "MHC-I online")
        ... # doctest: +NORMALIZE_WHITESPACE
        MHC-I online (b = 0.01)
        method  final regret  sd     ms / round
        ------  ------------  -----  ----------
        MT-UCB  831.90        55.10  3.7
    """
    columns = {
        "final regret": lambda e: f"{e['cumulative_regret_mean']:.2f}",
        "sd": lambda e: f"{e['cumulative_regret_std']:.2f}",
        "ms / round": lambda e: f"{1000 * e['seconds_per_step']:.1f}",
    }
    print(f"{title} (b = {problem['b']:g})")
    print(method_table(problem["methods"], columns))


def _sizes(
    name: str, options: Mapping[str, Any], defaults: dict[str, Any], quick: bool
) -> dict[str, Any]:
    """``experiment_options`` with a ``b_grid`` option (default ``B_GRID``) and ``cmm``
    (``CMM_CHOICES``; default ``"chosen"`` with ``quick``, else ``"sweep"``)."""
    cmm = "chosen" if quick else "sweep"
    chosen = experiment_options(name, options, {**defaults, "b_grid": B_GRID, "cmm": cmm})
    check_choice(chosen["cmm"], "cmm", CMM_CHOICES)  # before any run
    return chosen


# ---------------------------------------------------------------- experiments
def _synthetic(
    output: str | Path | RunDirectory, quick: bool, progress: bool, active: bool, options
) -> dict:
    kind = "active" if active else "online"
    name = f"001-synthetic-{kind}"
    defaults = {
        "configurations": [(5, 0.4)] if quick else list(SYNTHETIC_CONFIGURATIONS),
        "repetitions": 2 if quick else 5,
        "horizon": None,  # 5 N d
    }
    chosen = _sizes(name, options, defaults, quick)
    repetitions = int(chosen["repetitions"])
    b_grid = tuple(float(b) for b in chosen["b_grid"])
    directory = RunDirectory(output)
    problems: dict[str, dict[str, Any]] = {}
    with pinned_threads():
        for num_tasks, weight in chosen["configurations"]:
            horizon = int(chosen["horizon"] or 5 * num_tasks * SYNTHETIC_DIM)
            setting = synthetic_setting(int(num_tasks), float(weight))
            title = f"synthetic {kind}: N={num_tasks}, delta={weight}, d={SYNTHETIC_DIM}"
            entry = run_setting(
                setting,
                active,
                horizon,
                repetitions,
                b_grid,
                directory.sub(f"N{num_tasks}_delta{weight}"),
                progress,
                title,
                chosen["cmm"],
            )
            entry.update(
                {
                    "num_tasks": int(num_tasks),
                    "deviation_weight": float(weight),
                    "horizon": horizon,
                    "task_deviation_mean": float(
                        np.mean([setting.problem(r).task_deviation for r in range(repetitions)])
                    ),
                }
            )
            problems[setting.name] = entry
            print_table(entry, title)
    settings = {"quick": quick, "repetitions": repetitions, "delta": DELTA, "b_grid": b_grid,
                "cmm": chosen["cmm"]}  # fmt: skip
    summary = build_summary(name, settings, problems)
    write_summary(summary, directory.summary_file)
    return summary


def _mhc(
    output: str | Path | RunDirectory, quick: bool, progress: bool, active: bool, options
) -> dict:
    kind = "active" if active else "online"
    name = f"001-mhc-{kind}"
    defaults = {"data": None, "horizon": 300 if quick else MHC_HORIZON, "repetitions": 5}
    chosen = _sizes(name, options, defaults, quick)
    data, horizon, repetitions = chosen["data"], int(chosen["horizon"]), int(chosen["repetitions"])
    b_grid = tuple(float(b) for b in chosen["b_grid"])
    with pinned_threads():
        setting = mhc_setting(data)
        problem = setting.problem(0)
        source = "MHC-I" if data is None else Path(data).name
        title = f"{source} {kind} ({problem.num_tasks} alleles)"
        entry = run_setting(
            setting, active, horizon, repetitions, b_grid, output, progress, title,
            chosen["cmm"],
        )  # fmt: skip
    entry.update(
        {
            "alleles": problem.task_names,
            "num_tasks": problem.num_tasks,
            "rkhs_norm_bound": MHC_RKHS_NORM_BOUND,
            "task_deviation": MHC_TASK_DEVIATION,
            "noise_std": problem.noise_std,
        }
    )
    settings = {
        "quick": quick,
        "data": str(data) if data is not None else "packaged mhc1_binding.npz",
        "horizon": horizon,
        "repetitions": repetitions,
        "delta": DELTA,
        "b_grid": b_grid,
        "cmm": chosen["cmm"],
    }
    summary = build_summary(name, settings, {setting.name: entry})
    write_summary(summary, RunDirectory(output).summary_file)
    print_table(entry, title)
    return summary


@register("001-synthetic-online", "paper 001 Fig. 3a / App. D: MT-UCB vs baselines, synthetic")
def synthetic_online(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options
) -> dict:
    """Online learning on the synthetic tasks (``--quick``: ``N = 5``, ``delta = 0.4``,
    2 repetitions); one problem per ``(N, delta)``.

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.paper001.experiments import synthetic_online
        >>> summary = synthetic_online(
        ...     tempfile.mkdtemp(), progress=False, configurations=[(3, 0.2)], horizon=2,
        ...     repetitions=1, b_grid=(0.1,))  # doctest: +ELLIPSIS
        synthetic online: N=3, delta=0.2, d=4 (b = 0.1)
        ...
        >>> list(summary["problems"])
        ['N=3,delta=0.2']
    """
    return _synthetic(output, quick, progress, False, options)


@register("001-synthetic-active", "paper 001 App. D: MT-AL vs baselines, synthetic")
def synthetic_active(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options
) -> dict:
    """Active learning on the synthetic tasks (``--quick``: ``N = 5``, ``delta = 0.4``).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.paper001.experiments import synthetic_active
        >>> summary = synthetic_active(
        ...     tempfile.mkdtemp(), progress=False, configurations=[(3, 0.2)], horizon=2,
        ...     repetitions=1, b_grid=(0.1,))  # doctest: +ELLIPSIS
        synthetic active: N=3, delta=0.2, d=4 (b = 0.1)
        ...
        >>> list(summary["problems"]["N=3,delta=0.2"]["methods"])[:2]
        ['MT-AL', 'MT-AL-naive']
    """
    return _synthetic(output, quick, progress, True, options)


@register("001-mhc-online", "paper 001 Sec. 5: MT-UCB vs baselines on MHC-I (--data)")
def mhc_online(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options
) -> dict:
    """Online learning on MHC-I (``--quick``: ``T = 300``; 5 repetitions in both modes).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.paper001.experiments import mhc_online
        >>> summary = mhc_online(tempfile.mkdtemp(), progress=False, horizon=2, repetitions=1,
        ...                      b_grid=(0.1,))  # doctest: +ELLIPSIS
        MHC-I online (5 alleles) (b = 0.1)
        ...
        >>> summary["problems"]["mhc"]["num_tasks"]
        5
    """
    return _mhc(output, quick, progress, False, options)


@register("001-mhc-active", "paper 001 Fig. 3b: MT-AL vs baselines on MHC-I (--data)")
def mhc_active(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options
) -> dict:
    """Active learning on MHC-I (``--quick``: ``T = 300``; 5 repetitions in both modes).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.paper001.experiments import mhc_active
        >>> summary = mhc_active(tempfile.mkdtemp(), progress=False, horizon=2, repetitions=1,
        ...                      b_grid=(0.1,))  # doctest: +ELLIPSIS
        MHC-I active (5 alleles) (b = 0.1)
        ...
        >>> summary["settings"]["horizon"]
        2
    """
    return _mhc(output, quick, progress, True, options)
