"""Paper 000's experiments (Section 5, Appendix E) and the main job on sensor data.

Each experiment runs methods of ``METHOD_BUILDERS`` (MT-KB, MT-BKB, IT-KB, IT-BKB,
MOBO and the martingale-mixture variants MT-CMM-UCB, MT-DMM-UCB, IT-CMM-UCB) on a
problem with the Chebyshev (or linear) scalarization and writes
``summary.json``, ``curves.csv`` and plots of the time-average cumulative regret
``R_C(t) / t`` (Figure 1 style) and of the Bayes regret ``R_B(t)`` (Figure 3); the main
job plots ``R_C(t)`` alone (``sensor_main``).

* ``000-rkhs-2``, ``000-rkhs-20``, ``000-sine``, ``000-branin``, ``000-sensor``:
  Figure 1 (b)-(f).
* ``000-similarity``: Figure 1 (a), MT-KB's regret on RKHS functions drawn for the
  kernel ``k (omega I + (1 - omega) 11^T / n)`` as ``omega`` varies.
* ``000-linear``: Figure 2, linear scalarization on the RKHS function (2 tasks) and the
  perturbed sine.
* ``000-bayes-regret``: Figure 3, the Bayes regret ``R_B(t)`` on the same two problems
  with the Chebyshev scalarization.
* ``sensor-main``: the main job (``python -m botorch_mtucb run``), MT-KB against IT-KB
  and MT-CMM-UCB on the real light-sensor data.

Choices the paper leaves open, documented: MT-BKB and IT-BKB use the accuracy ``q``
of Theorem 3 (BKB's ``q_bar``) for the run's horizon ``T``; "the RKHS function" of
Figures 2 and 3 is the 2-task one; Figure 1 (a) uses ``n = 10`` tasks and
``omega in {0, 0.2, ..., 1}`` (RKHS functions with the same centres and coefficients
for every ``omega``); ``000-sensor`` shares the main job's horizon (``SENSOR_SETTING``).
Each run goes through ``scalarized.run_scalarized_experiment``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from botorch_mtucb.bandits import ScalarizedEnvironment
from botorch_mtucb.experiments.paper000.methods import MAIN_JOB_METHODS, build_mt_kb
from botorch_mtucb.experiments.paper000.plots import plot_panels, plot_regret_against_omega
from botorch_mtucb.experiments.paper000.scalarized import (
    Setting,
    bayes_regret,
    method_entry,
    run_scalarized_experiment,
    scalarized_settings,
    write_and_print,
)
from botorch_mtucb.experiments.plots import save_curves_plot
from botorch_mtucb.experiments.registry import register
from botorch_mtucb.experiments.run_directory import RunDirectory
from botorch_mtucb.experiments.runs import Method, MethodResult, run_methods
from botorch_mtucb.experiments.summary import (
    build_summary,
    final_statistics,
    problem_summary,
    write_summary,
)
from botorch_mtucb.experiments.tables import combine_curves_csv, write_curves_csv
from botorch_mtucb.problems import (
    MultiTaskProblem,
    light_sensor_problem,
    perturbed_sine_problem,
    rkhs_problem,
    shifted_branin_problem,
    similarity_problem,
)
from botorch_mtucb.utils.threads import pinned_threads

SYNTHETIC_SETTING = Setting(horizon=200, repetitions=10, quick_horizon=60, quick_repetitions=3)
SENSOR_SETTING = Setting(horizon=800, repetitions=10, quick_horizon=200, quick_repetitions=3)


@register(
    "sensor-main", "the main job: MT-KB vs IT-KB and MT-CMM-UCB on the real light-sensor data"
)
def sensor_main(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options: Any
) -> dict:
    """The main job (``python -m botorch_mtucb run``): ``MAIN_JOB_METHODS`` (MT-KB,
    IT-KB, MT-CMM-UCB) on the light-sensor data, 800 rounds, 10 repetitions
    (``SENSOR_SETTING``).

    Its table has ``R_C(T)``, ``R_C(T) / T`` and ms per step, and its one plot,
    ``cumulative_regret.png``, the cumulative regret ``R_C(t)`` (in units of the largest
    light reading) beside each method's difference to IT-KB's, both as mean +- standard
    error over the repetitions (``plot_regret_against_baseline``). The Bayes regret is
    left to ``000-bayes-regret``: on these 41 locations the methods soon play every
    scalarization's maximizer, so ``R_B(t)`` is below ``1e-4`` for all three by ``t =
    100`` and 0 by ``t = 300`` (its table column read ``0.0000 +- 0.0000``).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper000.experiments import sensor_main
        >>> summary = sensor_main(
        ...     Path(tempfile.mkdtemp()), progress=False, horizon=2, repetitions=1
        ... )  # doctest: +ELLIPSIS
        <BLANKLINE>
        sensor-main: T = 2, 1 repetitions (chebyshev scalarization)
        ...
        >>> list(summary["problems"]["sensor"]["methods"])
        ['MT-KB', 'IT-KB', 'MT-CMM-UCB']
    """
    summary, _ = run_scalarized_experiment(
        "sensor-main",
        "sensor",
        lambda rep: light_sensor_problem(),
        SENSOR_SETTING.sizes("sensor-main", quick, options),
        output,
        quick,
        progress,
        methods=MAIN_JOB_METHODS,
        title="Light sensors (real data)",
        bayes_regret_curve=False,
        baseline="IT-KB",
        regret_unit=_sensor_regret_unit(),
    )
    return summary


def _sensor_regret_unit() -> str:
    """The unit of the light-sensor regret, for the plots' axis labels."""
    scale = light_sensor_problem().notes["reading_scale_lux"]
    return f"1 = {scale:.0f} lux, the largest light reading"


def _register_figure_1(
    name: str,
    description: str,
    label: str,
    make_problem: Callable[[int], MultiTaskProblem],
    setting: Setting,
    title: str,
    regret_unit: Callable[[], str] | None = None,
) -> None:
    def run(
        output: str | Path | RunDirectory,
        quick: bool = False,
        progress: bool = True,
        **options: Any,
    ) -> dict:
        sizes = setting.sizes(name, quick, options)
        summary, _ = run_scalarized_experiment(
            name,
            label,
            make_problem,
            sizes,
            output,
            quick,
            progress,
            title=title,
            regret_unit=regret_unit() if regret_unit is not None else None,
        )
        return summary

    run.__doc__ = description
    register(name, description)(run)


_register_figure_1(
    "000-rkhs-2",
    "paper 000 Fig. 1(b): RKHS function, 2 tasks",
    "rkhs-2",
    lambda rep: rkhs_problem(2, seed=rep),
    SYNTHETIC_SETTING,
    "RKHS function (2 tasks)",
)
_register_figure_1(
    "000-rkhs-20",
    "paper 000 Fig. 1(c): RKHS function, 20 tasks",
    "rkhs-20",
    lambda rep: rkhs_problem(20, seed=rep),
    SYNTHETIC_SETTING,
    "RKHS function (20 tasks)",
)
_register_figure_1(
    "000-sine",
    "paper 000 Fig. 1(d): perturbed sine, 4 tasks",
    "sine",
    lambda rep: perturbed_sine_problem(),
    SYNTHETIC_SETTING,
    "Perturbed sine (4 tasks)",
)
_register_figure_1(
    "000-branin",
    "paper 000 Fig. 1(e): shifted Branin-Hoo, 9 tasks on a 15x15 grid",
    "branin",
    lambda rep: shifted_branin_problem(),
    SYNTHETIC_SETTING,
    "Shifted Branin-Hoo (9 tasks)",
)
_register_figure_1(
    "000-sensor",
    "paper 000 Fig. 1(f): sensor measurements (real light-sensor data, 3 tasks)",
    "sensor",
    lambda rep: light_sensor_problem(),
    SENSOR_SETTING,
    "Sensor measurements (light, 3 tasks)",
    regret_unit=_sensor_regret_unit,
)


# ----------------------------------------------------------------- Figure 1 (a)
SIMILARITY_OMEGAS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
SIMILARITY_TASKS = 10


def similarity_label(omega: float) -> str:
    """The method name of MT-KB run on the problem of ``omega`` in ``000-similarity``.

    Example:
        >>> from botorch_mtucb.experiments.paper000.experiments import similarity_label
        >>> similarity_label(0.2)
        'MT-KB (omega=0.2)'
    """
    return f"MT-KB (omega={omega:g})"


@register("000-similarity", "paper 000 Fig. 1(a): MT-KB's regret as the task similarity varies")
def similarity(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options: Any
) -> dict:
    """Figure 1 (a): MT-KB on RKHS functions for ``Gamma_omega``, ``omega`` in
    ``SIMILARITY_OMEGAS`` (``n = 10`` tasks, Chebyshev scalarization); one problem
    ``"similarity"`` whose methods are MT-KB at each ``omega``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper000.experiments import similarity
        >>> summary = similarity(
        ...     Path(tempfile.mkdtemp()), progress=False, horizon=2, repetitions=1
        ... )  # doctest: +ELLIPSIS
        <BLANKLINE>
        000-similarity: T = 2, 1 repetitions (chebyshev scalarization)
        ...
        >>> summary["problems"]["similarity"]["omegas"]
        [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    """
    horizon, repetitions = SYNTHETIC_SETTING.sizes("000-similarity", quick, options)
    directory = RunDirectory(output)
    environments: dict[tuple[float, int], ScalarizedEnvironment] = {}

    def environment_for(omega: float, rep: int) -> ScalarizedEnvironment:
        if (omega, rep) not in environments:
            environments[omega, rep] = ScalarizedEnvironment(
                similarity_problem(omega, seed=rep, num_tasks=SIMILARITY_TASKS)
            )
        return environments[omega, rep]

    methods = [
        Method(
            similarity_label(omega),
            make_policy=lambda rep, w=omega: build_mt_kb(environment_for(w, rep).problem),
            make_environment=lambda rep, w=omega: environment_for(w, rep),
        )
        for omega in SIMILARITY_OMEGAS
    ]
    with pinned_threads():
        results = run_methods(
            methods,
            horizon,
            repetitions,
            directory,
            curve_functions={"bayes_regret": bayes_regret},
            progress=progress,
        )
    entry = problem_summary(
        {method: method_entry(result) for method, result in results.items()},
        omegas=list(SIMILARITY_OMEGAS),
        num_tasks=SIMILARITY_TASKS,
    )
    summary = build_summary(
        "000-similarity",
        scalarized_settings(horizon, repetitions, quick, "chebyshev"),
        {"similarity": entry},
    )
    write_curves_csv(results, directory.curves_file)
    save_curves_plot(
        results,
        "cumulative_regret",
        directory.curve_plot_file("cumulative_regret", time_average=True),
        title=f"MT-KB, tasks with varying similarity (n = {SIMILARITY_TASKS})",
        ylabel="R_C(t) / t",
        time_average=True,
    )
    means, stds = zip(
        *(
            final_statistics(results[similarity_label(w)], "cumulative_regret")
            for w in SIMILARITY_OMEGAS
        )
    )
    plot_regret_against_omega(
        SIMILARITY_OMEGAS, means, stds, horizon, directory.plot_file("regret_against_omega")
    )
    write_and_print("000-similarity", summary, directory, "similarity")
    return summary


# ------------------------------------------------------------ Figures 2 and 3
PANEL_PROBLEMS: dict[str, tuple[Callable[[int], MultiTaskProblem], str]] = {
    "rkhs-2": (lambda rep: rkhs_problem(2, seed=rep), "RKHS function (2 tasks)"),
    "sine": (lambda rep: perturbed_sine_problem(), "Perturbed sine (4 tasks)"),
}


def run_panels(
    name: str,
    output: str | Path | RunDirectory,
    quick: bool,
    progress: bool,
    scalarization: str,
    curve: str,
    ylabel: str,
    time_average: bool,
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """One ``run_scalarized_experiment`` per problem of ``PANEL_PROBLEMS`` (into
    ``output/<label>``, each with its own ``summary.json``), then a combined
    ``summary.json`` (one problem per panel), ``curves.csv`` (with a ``panel`` column)
    and a figure with one panel per problem, of ``curve`` (``R_B`` on a log scale).

    Raises:
        ValueError: If ``options`` holds anything but ``horizon`` and ``repetitions``.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper000.experiments import run_panels
        >>> summary = run_panels(
        ...     "demo", Path(tempfile.mkdtemp()), True, False, "linear", "cumulative_regret",
        ...     "R_C(t) / t", True, {"horizon": 2, "repetitions": 1},
        ... )  # doctest: +ELLIPSIS
        <BLANKLINE>
        demo/rkhs-2: T = 2, 1 repetitions (linear scalarization)
        ...
        >>> list(summary["problems"])
        ['rkhs-2', 'sine']
    """
    sizes = SYNTHETIC_SETTING.sizes(name, quick, options)
    directory = RunDirectory(output)
    entries: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, MethodResult]] = {}
    for label, (make_problem, title) in PANEL_PROBLEMS.items():
        panel_summary, results[label] = run_scalarized_experiment(
            f"{name}/{label}",
            label,
            make_problem,
            sizes,
            directory.sub(label),
            quick,
            progress,
            scalarization=scalarization,
            title=title,
        )
        entries[label] = panel_summary["problems"][label]
    settings = {**scalarized_settings(*sizes, quick, scalarization), "curve": curve}
    summary = build_summary(name, settings, entries)
    write_summary(summary, directory.summary_file)
    combine_curves_csv(
        {label: directory.sub(label).curves_file for label in PANEL_PROBLEMS},
        directory.curves_file,
        column="panel",
    )
    plot_panels(
        {PANEL_PROBLEMS[label][1]: panel for label, panel in results.items()},
        directory.plot_file(name.removeprefix("000-")),
        curve,
        ylabel,
        time_average,
        log_y=curve == "bayes_regret",  # R_B(t) falls by orders of magnitude
    )
    return summary


@register("000-linear", "paper 000 Fig. 2: linear scalarization (RKHS function, perturbed sine)")
def linear(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options: Any
) -> dict:
    """Figure 2: time-average cumulative regret with the linear scalarization.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper000.experiments import linear
        >>> summary = linear(Path(tempfile.mkdtemp()), progress=False, horizon=2,
        ...                  repetitions=1)  # doctest: +ELLIPSIS
        <BLANKLINE>
        000-linear/rkhs-2: T = 2, 1 repetitions (linear scalarization)
        ...
        >>> summary["settings"]["scalarization"], list(summary["problems"])
        ('linear', ['rkhs-2', 'sine'])
    """
    return run_panels(
        "000-linear",
        output,
        quick,
        progress,
        "linear",
        "cumulative_regret",
        "R_C(t) / t",
        True,
        options,
    )


@register("000-bayes-regret", "paper 000 Fig. 3: Bayes regret (RKHS function, perturbed sine)")
def bayes_regret_experiment(
    output: str | Path | RunDirectory, quick: bool = False, progress: bool = True, **options: Any
) -> dict:
    """Figure 3: the Bayes regret ``R_B(t)`` with the Chebyshev scalarization.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.paper000.experiments import bayes_regret_experiment
        >>> summary = bayes_regret_experiment(Path(tempfile.mkdtemp()), progress=False,
        ...                                   horizon=2, repetitions=1)  # doctest: +ELLIPSIS
        <BLANKLINE>
        000-bayes-regret/rkhs-2: T = 2, 1 repetitions (chebyshev scalarization)
        ...
        >>> summary["settings"]["curve"]
        'bayes_regret'
    """
    return run_panels(
        "000-bayes-regret",
        output,
        quick,
        progress,
        "chebyshev",
        "bayes_regret",
        "R_B(t)",
        False,
        options,
    )
