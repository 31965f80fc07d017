"""Paper 000's experiments (Section 5, Appendix E) and the main job on sensor data.

Each experiment runs the methods of ``METHOD_BUILDERS`` (MT-KB, MT-BKB, IT-KB, IT-BKB,
MOBO) on one problem with the Chebyshev (or linear) scalarization, eta = 0.1,
delta = 0.1 and eps = 0.5 (paper 000, Section 5), and writes ``summary.json``,
``curves.csv`` and plots of the time-average cumulative regret ``R_C(t) / t``
(Figure 1 style) and of the Bayes regret ``R_B(t)`` (Figure 3).

* ``000-rkhs-2``, ``000-rkhs-20``, ``000-sine``, ``000-branin``, ``000-sensor``:
  Figure 1 (b)-(f).
* ``000-similarity``: Figure 1 (a), MT-KB's regret on RKHS functions drawn for the
  kernel ``k (omega I + (1 - omega) 11^T / n)`` as ``omega`` varies.
* ``000-linear``: Figure 2, linear scalarization on the RKHS function (2 tasks) and the
  perturbed sine.
* ``000-bayes-regret``: Figure 3, the Bayes regret ``R_B(t)`` on the same two problems
  with the Chebyshev scalarization.

Choices the paper leaves open, documented: MT-BKB and IT-BKB use the accuracy ``q``
of Theorem 3 (BKB's ``q_bar``) for the run's horizon ``T``; "the RKHS function" of
Figures 2 and 3 is the 2-task one; Figure 1 (a) uses ``n = 10`` tasks and
``omega in {0, 0.2, ..., 1}`` (RKHS functions with the same centres and coefficients
for every ``omega``); ``000-sensor`` shares the main job's horizon (``SENSOR_SETTING``).
MOBO's radius is discussed in ``botorch_mtucb.bandits.scalarized.mobo``.
Runs use one torch thread (small linear algebra is faster without threading).
"""

from __future__ import annotations

import contextlib
import csv
import platform
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from botorch_mtucb.bandits import (
    IndependentTaskBudgetedKernelizedBandit,
    IndependentTaskKernelizedBandit,
    MultiTaskBudgetedKernelizedBandit,
    MultiTaskKernelizedBandit,
    RandomScalarizationUCB,
    ScalarizedEnvironment,
)
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
from botorch_mtucb.problems import (
    MultiTaskProblem,
    light_sensor_problem,
    perturbed_sine_problem,
    rkhs_problem,
    shifted_branin_problem,
)
from botorch_mtucb.problems.synthetic_000 import similarity_problem
from botorch_mtucb.utils import FiniteDomain

DELTA = 0.1  # paper 000, Section 5
EPS = 0.5  # paper 000, Section 5: accuracy of the Nystrom sketches
DEFAULT_HORIZON = 200  # for q when a builder is called without the run's horizon


def build_mt_kb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MT-KB with the problem's multi-task kernel and norm bound."""
    return MultiTaskKernelizedBandit(
        problem.make_data_kernel(),
        problem.task_covariance,
        problem.domain,
        rkhs_norm_bound=problem.rkhs_norm_bound,
        noise_std=problem.noise_std,
        regularization=problem.regularization,
        delta=DELTA,
    )


def build_it_kb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """IT-KB: independent tasks with ``k * diag(B)``, IGP-UCB width times ``sqrt(n)``."""
    return IndependentTaskKernelizedBandit(
        problem.make_data_kernel(),
        torch.diagonal(problem.task_covariance),
        problem.domain,
        rkhs_norm_bound=problem.independent_rkhs_norm_bound,
        noise_std=problem.noise_std,
        eta=problem.regularization,
        delta=DELTA,
    )


def build_mt_bkb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MT-BKB: the multi-task kernel, Theorem 3's ``q`` (for ``horizon``) and width."""
    return MultiTaskBudgetedKernelizedBandit(
        problem.make_data_kernel(),
        problem.task_covariance,
        problem.domain,
        rkhs_norm_bound=problem.rkhs_norm_bound,
        noise_std=problem.noise_std,
        regularization=problem.regularization,
        delta=DELTA,
        eps=EPS,
        horizon=horizon or DEFAULT_HORIZON,
    )


def build_it_bkb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """IT-BKB: independent tasks with BKB (its ``q_bar`` and width) times ``sqrt(n)``."""
    return IndependentTaskBudgetedKernelizedBandit(
        problem.make_data_kernel(),
        torch.diagonal(problem.task_covariance),
        problem.domain,
        rkhs_norm_bound=problem.independent_rkhs_norm_bound,
        noise_std=problem.noise_std,
        eta=problem.regularization,
        delta=DELTA,
        eps=EPS,
        horizon=horizon or DEFAULT_HORIZON,
    )


def build_mobo(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MOBO: independent GPs (``k * diag(B)``, noise ``eta``), scalarized GP-UCB."""
    domain_size = None
    if not isinstance(problem.domain, FiniteDomain):
        domain_size = problem.regret_points.shape[0]
    return RandomScalarizationUCB(
        problem.make_data_kernel(),
        torch.diagonal(problem.task_covariance),
        problem.domain,
        regularization=problem.regularization,
        delta=DELTA,
        domain_size=domain_size,
    )


# Method name -> builder(problem, horizon) -> policy, in the order of the tables.
METHOD_BUILDERS: dict[str, Callable[..., Policy]] = {
    "MT-KB": build_mt_kb,
    "MT-BKB": build_mt_bkb,
    "IT-KB": build_it_kb,
    "IT-BKB": build_it_bkb,
    "MOBO": build_mobo,
}
MAIN_JOB_METHODS = ["MT-KB", "IT-KB"]


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """Run with one torch thread (restored afterwards)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass
class Setting:
    """Sizes of one experiment in full and quick mode."""

    horizon: int
    repetitions: int
    quick_horizon: int
    quick_repetitions: int


def bayes_regret(records, environment: ScalarizedEnvironment) -> np.ndarray:
    """``R_B(t)`` from the queried points (Monte Carlo over the environment's weights)."""
    X = torch.tensor([record.x for record in records], dtype=torch.float64)
    return environment.bayes_regret_curve(X).numpy()


def run_scalarized_experiment(
    name: str,
    make_problem: Callable[[int], MultiTaskProblem],
    setting: Setting,
    output: Path,
    quick: bool,
    progress: bool,
    methods: list[str] | None = None,
    scalarization: str = "chebyshev",
    title: str | None = None,
    horizon: int | None = None,
    repetitions: int | None = None,
) -> dict[str, Any]:
    """Run ``methods`` on ``make_problem(rep)`` and write summary, curves and plots.

    ``horizon`` / ``repetitions`` override the setting (used by tests).
    """
    summary, _ = _scalarized_runs(
        name,
        make_problem,
        setting,
        output,
        quick,
        progress,
        methods=methods,
        scalarization=scalarization,
        title=title,
        horizon=horizon,
        repetitions=repetitions,
    )
    return summary


def _scalarized_runs(
    name: str,
    make_problem: Callable[[int], MultiTaskProblem],
    setting: Setting,
    output: Path,
    quick: bool,
    progress: bool,
    methods: list[str] | None = None,
    scalarization: str = "chebyshev",
    title: str | None = None,
    horizon: int | None = None,
    repetitions: int | None = None,
) -> tuple[dict[str, Any], dict[str, MethodResult]]:
    """``run_scalarized_experiment`` that also returns the per-method results."""
    methods = methods or list(METHOD_BUILDERS)
    horizon = horizon or (setting.quick_horizon if quick else setting.horizon)
    repetitions = repetitions or (setting.quick_repetitions if quick else setting.repetitions)
    problems: dict[int, MultiTaskProblem] = {}
    environments: dict[int, ScalarizedEnvironment] = {}

    def problem_for(rep: int) -> MultiTaskProblem:
        if rep not in problems:
            problems[rep] = make_problem(rep)
        return problems[rep]

    def environment_for(rep: int) -> ScalarizedEnvironment:
        if rep not in environments:
            environments[rep] = ScalarizedEnvironment(problem_for(rep), scalarization)
        return environments[rep]

    method_list = [
        Method(
            method,
            make_policy=lambda rep, m=method: METHOD_BUILDERS[m](problem_for(rep), horizon=horizon),
            make_environment=environment_for,
        )
        for method in methods
    ]
    with single_thread():
        results = run_methods(
            method_list,
            horizon,
            repetitions,
            output,
            curve_functions={"bayes_regret": bayes_regret},
            progress=progress,
        )
    summary = summarize(name, horizon, repetitions, results)
    summary["scalarization"] = scalarization
    summary["quick"] = quick
    summary["problem_notes"] = _jsonable_notes(problem_for(0).notes)
    summary["machine"] = platform.platform()
    write_summary(summary, output / "summary.json")
    write_curves_csv(results, output / "curves.csv")
    plot_curves(
        results,
        "cumulative_regret",
        output / "average_cumulative_regret.png",
        title=title or name,
        ylabel="R_C(t) / t",
        time_average=True,
    )
    plot_curves(
        results, "bayes_regret", output / "bayes_regret.png", title=title or name, ylabel="R_B(t)"
    )
    print(f"\n{name}: T = {horizon}, {repetitions} repetitions ({scalarization} scalarization)")
    print(summary_table(summary))
    print(f"results written to {output}")
    return summary, results


def summarize(
    name: str, horizon: int, repetitions: int, results: dict[str, MethodResult]
) -> dict[str, Any]:
    """The ``summary.json`` content of a paper-000 experiment."""
    methods: dict[str, dict[str, float]] = {}
    for method, result in results.items():
        cumulative_mean, cumulative_std = final_statistics(result, "cumulative_regret")
        bayes_mean, bayes_std = final_statistics(result, "bayes_regret")
        entry = {
            "cumulative_regret_mean": cumulative_mean,
            "cumulative_regret_std": cumulative_std,
            "bayes_regret_mean": bayes_mean,
            "bayes_regret_std": bayes_std,
            "seconds_per_step": float(np.mean(result.seconds_per_step)),
        }
        if "dictionary_size" in result.diagnostics:
            entry["final_dictionary_size"] = float(
                result.diagnostics["dictionary_size"][:, -1].mean()
            )
        methods[method] = entry
    return {"experiment": name, "horizon": horizon, "repetitions": repetitions, "methods": methods}


def summary_table(summary: dict[str, Any]) -> str:
    """The printed table: mean +- sd over repetitions."""
    rows = []
    for method, entry in summary["methods"].items():
        rows.append(
            [
                method,
                f"{entry['cumulative_regret_mean']:.3f} +- {entry['cumulative_regret_std']:.3f}",
                f"{entry['cumulative_regret_mean'] / summary['horizon']:.4f}",
                f"{entry['bayes_regret_mean']:.4f} +- {entry['bayes_regret_std']:.4f}",
                f"{entry['seconds_per_step'] * 1000:.1f}",
            ]
        )
    header = ["method", "R_C(T)", "R_C(T)/T", "R_B(T)", "ms/step"]
    return format_table(rows, header)


def _jsonable_notes(notes: dict) -> dict:
    def convert(value):
        if isinstance(value, torch.Tensor):
            return value.tolist()
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [convert(v) for v in value]
        return value

    return convert(notes)


def _no_options(options: dict[str, Any], name: str) -> None:
    unknown = set(options) - {"horizon", "repetitions"}
    if unknown:
        raise ValueError(f"experiment {name!r} takes no option(s) {sorted(unknown)}")


SENSOR_SETTING = Setting(horizon=800, repetitions=10, quick_horizon=200, quick_repetitions=3)


@register("sensor-main", "the main job: MT-KB vs IT-KB on the real light-sensor data")
def sensor_main(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """The main job (``python -m botorch_mtucb run``): light-sensor data, 800 rounds,
    10 repetitions."""
    _no_options(options, "sensor-main")
    return run_scalarized_experiment(
        "sensor-main",
        lambda rep: light_sensor_problem(),
        SENSOR_SETTING,
        output,
        quick,
        progress,
        methods=MAIN_JOB_METHODS,
        title="Light sensors (real data)",
        **options,
    )


def _register_000(name: str, description: str, make_problem, setting: Setting, title: str):
    def run(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
        _no_options(options, name)
        return run_scalarized_experiment(
            name, make_problem, setting, output, quick, progress, title=title, **options
        )

    run.__doc__ = description
    register(name, description)(run)
    return run


SYNTHETIC_SETTING = Setting(horizon=200, repetitions=10, quick_horizon=60, quick_repetitions=3)

_register_000(
    "000-rkhs-2",
    "paper 000 Fig. 1(b): RKHS function, 2 tasks",
    lambda rep: rkhs_problem(2, seed=rep),
    SYNTHETIC_SETTING,
    "RKHS function (2 tasks)",
)
_register_000(
    "000-rkhs-20",
    "paper 000 Fig. 1(c): RKHS function, 20 tasks",
    lambda rep: rkhs_problem(20, seed=rep),
    SYNTHETIC_SETTING,
    "RKHS function (20 tasks)",
)
_register_000(
    "000-sine",
    "paper 000 Fig. 1(d): perturbed sine, 4 tasks",
    lambda rep: perturbed_sine_problem(),
    SYNTHETIC_SETTING,
    "Perturbed sine (4 tasks)",
)
_register_000(
    "000-branin",
    "paper 000 Fig. 1(e): shifted Branin-Hoo, 9 tasks on a 15x15 grid",
    lambda rep: shifted_branin_problem(),
    SYNTHETIC_SETTING,
    "Shifted Branin-Hoo (9 tasks)",
)
_register_000(
    "000-sensor",
    "paper 000 Fig. 1(f): sensor measurements (real light-sensor data, 3 tasks)",
    lambda rep: light_sensor_problem(),
    SENSOR_SETTING,
    "Sensor measurements (light, 3 tasks)",
)


# ----------------------------------------------------------------- Figure 1 (a)
SIMILARITY_OMEGAS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
SIMILARITY_TASKS = 10


def _similarity_label(omega: float) -> str:
    return f"MT-KB (omega={omega:g})"


@register("000-similarity", "paper 000 Fig. 1(a): MT-KB's regret as the task similarity varies")
def similarity(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """Figure 1 (a): MT-KB on RKHS functions for ``Gamma_omega``, ``omega`` in
    ``SIMILARITY_OMEGAS`` (``n = 10`` tasks, Chebyshev scalarization)."""
    _no_options(options, "000-similarity")
    horizon = options.get("horizon") or (
        SYNTHETIC_SETTING.quick_horizon if quick else SYNTHETIC_SETTING.horizon
    )
    repetitions = options.get("repetitions") or (
        SYNTHETIC_SETTING.quick_repetitions if quick else SYNTHETIC_SETTING.repetitions
    )
    environments: dict[tuple[float, int], ScalarizedEnvironment] = {}

    def environment_for(omega: float, rep: int) -> ScalarizedEnvironment:
        if (omega, rep) not in environments:
            environments[omega, rep] = ScalarizedEnvironment(
                similarity_problem(omega, seed=rep, num_tasks=SIMILARITY_TASKS)
            )
        return environments[omega, rep]

    methods = [
        Method(
            _similarity_label(omega),
            make_policy=lambda rep, w=omega: build_mt_kb(environment_for(w, rep).problem),
            make_environment=lambda rep, w=omega: environment_for(w, rep),
        )
        for omega in SIMILARITY_OMEGAS
    ]
    with single_thread():
        results = run_methods(
            methods,
            horizon,
            repetitions,
            output,
            curve_functions={"bayes_regret": bayes_regret},
            progress=progress,
        )
    summary = summarize("000-similarity", horizon, repetitions, results)
    summary.update(
        {
            "scalarization": "chebyshev",
            "quick": quick,
            "omegas": list(SIMILARITY_OMEGAS),
            "num_tasks": SIMILARITY_TASKS,
            "machine": platform.platform(),
        }
    )
    write_summary(summary, output / "summary.json")
    write_curves_csv(results, output / "curves.csv")
    plot_curves(
        results,
        "cumulative_regret",
        output / "average_cumulative_regret.png",
        title=f"MT-KB, tasks with varying similarity (n = {SIMILARITY_TASKS})",
        ylabel="R_C(t) / t",
        time_average=True,
    )
    _plot_final_regret_against_omega(summary, output / "regret_against_omega.png")
    print(f"\n000-similarity: T = {horizon}, {repetitions} repetitions (chebyshev scalarization)")
    print(summary_table(summary))
    print(f"results written to {output}")
    return summary


def _plot_final_regret_against_omega(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    omegas = summary["omegas"]
    entries = [summary["methods"][_similarity_label(w)] for w in omegas]
    mean = np.array([e["cumulative_regret_mean"] for e in entries])
    std = np.array([e["cumulative_regret_std"] for e in entries])
    figure, ax = plt.subplots(figsize=(5.5, 4))
    ax.errorbar(omegas, mean, yerr=std, marker="o", capsize=3)
    ax.set_xlabel("omega (0: identical tasks, 1: unrelated tasks)")
    ax.set_ylabel(f"R_C(T), T = {summary['horizon']}")
    ax.set_title("MT-KB under varying inter-task similarity")
    ax.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


# ------------------------------------------------------------ Figures 2 and 3
PANEL_PROBLEMS: dict[str, tuple[Callable[[int], MultiTaskProblem], str]] = {
    "rkhs-2": (lambda rep: rkhs_problem(2, seed=rep), "RKHS function (2 tasks)"),
    "sine": (lambda rep: perturbed_sine_problem(), "Perturbed sine (4 tasks)"),
}


def run_panels(
    name: str,
    output: Path,
    quick: bool,
    progress: bool,
    scalarization: str,
    curve: str,
    ylabel: str,
    time_average: bool,
    **options: Any,
) -> dict[str, Any]:
    """One ``run_scalarized_experiment`` per problem of ``PANEL_PROBLEMS`` (into
    ``output/<panel>``), then a combined ``summary.json`` (``"panels"``), ``curves.csv``
    (with a ``panel`` column) and a figure with one panel per problem."""
    summaries: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, MethodResult]] = {}
    for panel, (make_problem, title) in PANEL_PROBLEMS.items():
        summaries[panel], results[panel] = _scalarized_runs(
            f"{name}/{panel}",
            make_problem,
            SYNTHETIC_SETTING,
            output / panel,
            quick,
            progress,
            scalarization=scalarization,
            title=title,
            **options,
        )
    first = next(iter(summaries.values()))
    summary = {
        "experiment": name,
        "horizon": first["horizon"],
        "repetitions": first["repetitions"],
        "scalarization": scalarization,
        "quick": quick,
        "curve": curve,
        "panels": summaries,
    }
    write_summary(summary, output / "summary.json")
    _combine_curves(output, list(PANEL_PROBLEMS))
    _plot_panels(results, output / f"{name.removeprefix('000-')}.png", curve, ylabel, time_average)
    return summary


def _combine_curves(output: Path, panels: list[str]) -> None:
    with (output / "curves.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        for index, panel in enumerate(panels):
            with (output / panel / "curves.csv").open(newline="") as source:
                rows = list(csv.reader(source))
            if index == 0:
                writer.writerow(["panel", *rows[0]])
            writer.writerows([panel, *row] for row in rows[1:])


def _plot_panels(results, path: Path, curve: str, ylabel: str, time_average: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4))
    for ax, (panel, panel_results) in zip(np.atleast_1d(axes), results.items()):
        plot_curves(
            panel_results,
            curve,
            path,
            title=PANEL_PROBLEMS[panel][1],
            ylabel=ylabel,
            time_average=time_average,
            log_y=curve == "bayes_regret",  # R_B(t) falls by orders of magnitude
            ax=ax,
        )
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


@register("000-linear", "paper 000 Fig. 2: linear scalarization (RKHS function, perturbed sine)")
def linear(output: Path, quick: bool = False, progress: bool = True, **options: Any) -> dict:
    """Figure 2: time-average cumulative regret with the linear scalarization."""
    _no_options(options, "000-linear")
    return run_panels(
        "000-linear",
        output,
        quick,
        progress,
        "linear",
        "cumulative_regret",
        "R_C(t) / t",
        True,
        **options,
    )


@register("000-bayes-regret", "paper 000 Fig. 3: Bayes regret (RKHS function, perturbed sine)")
def bayes_regret_experiment(
    output: Path, quick: bool = False, progress: bool = True, **options: Any
) -> dict:
    """Figure 3: the Bayes regret ``R_B(t)`` with the Chebyshev scalarization."""
    _no_options(options, "000-bayes-regret")
    return run_panels(
        "000-bayes-regret",
        output,
        quick,
        progress,
        "chebyshev",
        "bayes_regret",
        "R_B(t)",
        False,
        **options,
    )
