"""One paper-000 experiment on one problem: the scalarized runs of the methods, the
method entries of ``summary.json``, the printed table and the curve plots (the
cumulative regret's, and the Bayes regret's where it is computed).

Every run of ``experiments`` goes through ``run_scalarized_experiment`` (or, for
Figure 1 (a), through the pieces it is made of). Runs use one torch thread unless
``--threads`` says otherwise (small linear algebra is faster without threading).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from botorch_mtucb.bandits import ScalarizedEnvironment, StepRecord
from botorch_mtucb.experiments.paper000.methods import METHOD_BUILDERS
from botorch_mtucb.experiments.paper000.plots import plot_regret_against_baseline
from botorch_mtucb.experiments.plots import save_curves_plot
from botorch_mtucb.experiments.registry import experiment_options
from botorch_mtucb.experiments.run_directory import RunDirectory, remove_result_file
from botorch_mtucb.experiments.runs import Method, MethodResult, method_cost, run_methods
from botorch_mtucb.experiments.summary import (
    build_summary,
    final_statistics,
    method_summary,
    problem_summary,
    write_summary,
)
from botorch_mtucb.experiments.tables import method_table, write_curves_csv
from botorch_mtucb.problems import MultiTaskProblem
from botorch_mtucb.utils.threads import pinned_threads


@dataclass
class Setting:
    """Sizes of one experiment in full and quick mode (rounds ``T``, repetitions).

    Example:
        >>> from botorch_mtucb.experiments.paper000.scalarized import Setting
        >>> Setting(horizon=200, repetitions=10, quick_horizon=60, quick_repetitions=3).sizes(
        ...     "000-sine", quick=True, options={})
        (60, 3)
    """

    horizon: int
    repetitions: int
    quick_horizon: int
    quick_repetitions: int

    def sizes(self, name: str, quick: bool, options: Mapping[str, Any]) -> tuple[int, int]:
        """``(horizon, repetitions)`` of this mode, unless ``options`` set them.

        Raises:
            ValueError: If ``options`` holds anything but ``horizon`` and ``repetitions``.
        """
        defaults = {
            "horizon": self.quick_horizon if quick else self.horizon,
            "repetitions": self.quick_repetitions if quick else self.repetitions,
        }
        sizes = experiment_options(name, options, defaults)
        return int(sizes["horizon"]), int(sizes["repetitions"])


def bayes_regret(records: Sequence[StepRecord], environment: ScalarizedEnvironment) -> np.ndarray:
    """``R_B(t)`` after each round, from the queried points (Monte Carlo over the
    environment's weights; paper 000, Section 2).

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, StepRecord
        >>> from botorch_mtucb.experiments.paper000.scalarized import bayes_regret
        >>> from botorch_mtucb.problems import perturbed_sine_problem
        >>> environment = ScalarizedEnvironment(perturbed_sine_problem())
        >>> records = [StepRecord(t, [0.25], [0.0] * 4, 0.0, 0.0) for t in range(3)]
        >>> bayes_regret(records, environment).shape
        (3,)
    """
    X = torch.tensor([record.x for record in records], dtype=torch.float64)
    return environment.bayes_regret_curve(X).numpy()


def method_entry(result: MethodResult) -> dict[str, Any]:
    """A method's entry in ``summary.json``: ``R_C(T)`` and, where ``result`` has the
    curve ``bayes_regret``, ``R_B(T)`` (mean and sd over repetitions), seconds per step
    and, for the sketched methods, the mean final dictionary size.

    Example:
        >>> import numpy as np
        >>> from botorch_mtucb.experiments.paper000.scalarized import method_entry
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> curves = {"cumulative_regret": np.ones((2, 3)), "bayes_regret": np.zeros((2, 3))}
        >>> entry = method_entry(MethodResult("MT-KB", curves, [0.01, 0.01]))
        >>> entry["cumulative_regret_mean"], entry["bayes_regret_mean"]
        (1.0, 0.0)
        >>> del curves["bayes_regret"]  # a run without the Bayes regret (the main job)
        >>> "bayes_regret_mean" in method_entry(MethodResult("MT-KB", curves, [0.01, 0.01]))
        False
    """
    extras: dict[str, Any] = {}
    if "bayes_regret" in result.curves:
        bayes_mean, bayes_std = final_statistics(result, "bayes_regret")
        extras.update(bayes_regret_mean=bayes_mean, bayes_regret_std=bayes_std)
    if "dictionary_size" in result.diagnostics:
        extras["final_dictionary_size"] = float(result.diagnostics["dictionary_size"][:, -1].mean())
    return method_summary(result, **extras)


def summary_table(methods: Mapping[str, Mapping[str, Any]], horizon: int) -> str:
    """The printed table of a problem's ``methods``: ``R_C(T)`` as mean +- sd over
    repetitions, ``R_C(T) / T``, ``R_B(T)`` (mean +- sd, where every entry has it) and
    milliseconds per step.

    Example:
        >>> from botorch_mtucb.experiments.paper000.scalarized import summary_table
        >>> entry = {"cumulative_regret_mean": 6.0, "cumulative_regret_std": 1.0,
        ...          "bayes_regret_mean": 0.0, "bayes_regret_std": 0.0, "seconds_per_step": 0.01}
        >>> print(summary_table({"MT-KB": entry}, horizon=60))  # doctest: +NORMALIZE_WHITESPACE
        method  R_C(T)          R_C(T)/T  R_B(T)            ms/step
        ------  --------------  --------  ----------------  -------
        MT-KB   6.000 +- 1.000  0.1000    0.0000 +- 0.0000  10.0
        >>> del entry["bayes_regret_mean"], entry["bayes_regret_std"]
        >>> print(summary_table({"MT-KB": entry}, horizon=60))  # doctest: +NORMALIZE_WHITESPACE
        method  R_C(T)          R_C(T)/T  ms/step
        ------  --------------  --------  -------
        MT-KB   6.000 +- 1.000  0.1000    10.0
    """
    columns: dict[str, Callable[[Mapping[str, Any]], str]] = {
        "R_C(T)": lambda e: (
            f"{e['cumulative_regret_mean']:.3f} +- {e['cumulative_regret_std']:.3f}"
        ),
        "R_C(T)/T": lambda e: f"{e['cumulative_regret_mean'] / horizon:.4f}",
    }
    if all("bayes_regret_mean" in entry for entry in methods.values()):
        columns["R_B(T)"] = lambda e: f"{e['bayes_regret_mean']:.4f} +- {e['bayes_regret_std']:.4f}"
    columns["ms/step"] = lambda e: f"{e['seconds_per_step'] * 1000:.1f}"
    return method_table(methods, columns)


def scalarized_settings(
    horizon: int, repetitions: int, quick: bool, scalarization: str
) -> dict[str, Any]:
    """The ``settings`` of a paper-000 summary (the machine included).

    Example:
        >>> from botorch_mtucb.experiments.paper000.scalarized import scalarized_settings
        >>> sorted(scalarized_settings(60, 3, True, "chebyshev"))
        ['horizon', 'machine', 'quick', 'repetitions', 'scalarization']
    """
    return {
        "horizon": horizon,
        "repetitions": repetitions,
        "quick": quick,
        "scalarization": scalarization,
        "machine": platform.platform(),
    }


def write_and_print(
    name: str, summary: dict[str, Any], output: str | Path | RunDirectory, label: str
) -> None:
    """Write ``summary.json`` into ``output`` and print the table of problem ``label``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper000.scalarized import (
        ...     scalarized_settings, write_and_print)
        >>> from botorch_mtucb.experiments.summary import build_summary, problem_summary
        >>> entry = {"cumulative_regret_mean": 6.0, "cumulative_regret_std": 1.0,
        ...          "bayes_regret_mean": 0.0, "bayes_regret_std": 0.0, "seconds_per_step": 0.01}
        >>> summary = build_summary("demo", scalarized_settings(60, 1, True, "linear"),
        ...                         {"p": problem_summary({"MT-KB": entry})})
        >>> write_and_print("demo", summary, Path(tempfile.mkdtemp()), "p")  # doctest: +ELLIPSIS
        <BLANKLINE>
        demo: T = 60, 1 repetitions (linear scalarization)
        ...
    """
    write_summary(summary, RunDirectory(output).summary_file)
    settings = summary["settings"]
    horizon, repetitions, scalarization = (
        settings["horizon"],
        settings["repetitions"],
        settings["scalarization"],
    )
    print(f"\n{name}: T = {horizon}, {repetitions} repetitions ({scalarization} scalarization)")
    print(summary_table(summary["problems"][label]["methods"], horizon))


def run_scalarized_experiment(
    name: str,
    label: str,
    make_problem: Callable[[int], MultiTaskProblem],
    sizes: tuple[int, int],
    output: str | Path | RunDirectory,
    quick: bool,
    progress: bool,
    methods: Sequence[str] | None = None,
    scalarization: str = "chebyshev",
    title: str | None = None,
    bayes_regret_curve: bool = True,
    baseline: str | None = None,
    regret_unit: str | None = None,
) -> tuple[dict[str, Any], dict[str, MethodResult]]:
    """Run ``methods`` (default: every method of ``METHOD_BUILDERS``) on
    ``make_problem(rep)`` for ``sizes = (horizon, repetitions)``; write ``summary.json``
    (one problem, ``label``), ``curves.csv`` and the plots into ``output``; print the
    table.

    The plots: without ``baseline``, paper 000's Figure 1, ``R_C(t) / t`` (mean +- sd
    over the repetitions, ``average_cumulative_regret.png``); with it (the main job),
    ``R_C(t)`` beside every method's difference to ``baseline``
    (``plot_regret_against_baseline``, standard-error bands, ``cumulative_regret.png``).
    ``regret_unit`` (e.g. the problem's unit of ``f``) goes into the y axis' label. If
    ``bayes_regret_curve``, the Bayes regret ``R_B(t)`` is computed and plotted
    (``bayes_regret.png``) and is in ``curves.csv``, the summary and the table.

    Returns:
        The summary and the per-method results.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper000.scalarized import run_scalarized_experiment
        >>> from botorch_mtucb.problems import perturbed_sine_problem
        >>> summary, _ = run_scalarized_experiment(
        ...     "demo", "sine", lambda rep: perturbed_sine_problem(), (3, 1),
        ...     Path(tempfile.mkdtemp()), quick=True, progress=False, methods=["MT-KB"],
        ... )  # doctest: +ELLIPSIS
        <BLANKLINE>
        demo: T = 3, 1 repetitions (chebyshev scalarization)
        ...
        >>> list(summary["problems"]["sine"]["methods"])
        ['MT-KB']
    """
    horizon, repetitions = sizes
    directory = RunDirectory(output)
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
            cost=method_cost(method),
        )
        for method in methods or METHOD_BUILDERS
    ]
    with pinned_threads():
        results = run_methods(
            method_list,
            horizon,
            repetitions,
            directory,
            curve_functions={"bayes_regret": bayes_regret} if bayes_regret_curve else {},
            progress=progress,
        )
    title = title or name
    entry = problem_summary(
        {method: method_entry(result) for method, result in results.items()},
        title=title,
        notes=problem_for(0).notes,
    )
    summary = build_summary(
        name, scalarized_settings(horizon, repetitions, quick, scalarization), {label: entry}
    )
    write_curves_csv(results, directory.curves_file)
    unit = f"\n({regret_unit})" if regret_unit else ""  # a second line of the label
    if baseline is None:
        save_curves_plot(
            results,
            "cumulative_regret",
            directory.curve_plot_file("cumulative_regret", time_average=True),
            title=title,
            ylabel=f"R_C(t) / t{unit}",
            time_average=True,
        )
    else:
        plot_regret_against_baseline(
            results,
            baseline,
            directory.curve_plot_file("cumulative_regret"),
            title,
            f"cumulative regret R_C(t){unit}",
        )
    if bayes_regret_curve:
        save_curves_plot(
            results, "bayes_regret", directory.curve_plot_file("bayes_regret"), title, "R_B(t)"
        )
    # A directory resumed from another version of the experiment may hold plots this one
    # no longer draws: removed, so that every plot in it shows the current run.
    drawn = {
        directory.curve_plot_file("cumulative_regret", time_average=baseline is None),
        *([directory.curve_plot_file("bayes_regret")] if bayes_regret_curve else []),
    }
    for plot in (
        directory.curve_plot_file("cumulative_regret", time_average=True),
        directory.curve_plot_file("cumulative_regret"),
        directory.curve_plot_file("bayes_regret"),
    ):
        if plot not in drawn:
            remove_result_file(plot)
    write_and_print(name, summary, directory, label)
    return summary, results
