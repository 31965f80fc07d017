"""The named experiments of ``python -m botorch_mtucb reproduce NAME``.

Each paper's experiments live in their own subpackage (``paper000``, ``paper001``,
``paper002``) and register themselves with ``@register``; ``experiment_options`` checks
the options each accepts. ``run_experiment`` locks the output directory for the whole run
(one run at a time: ``RunDirectory.locked``) and claims it (``RunDirectory.claim``: the
run's settings are recorded, and a run with other settings is refused), so that running
the same command again resumes a run.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botorch_mtucb.experiments.output_lock import OutputLockedError
from botorch_mtucb.experiments.parallel import check_workers, parallel_execution
from botorch_mtucb.experiments.run_directory import (
    RunDirectory,
    UnwrittenFilesWarning,
    collect_unwritten_files,
)
from botorch_mtucb.utils.threads import run_threads

# run(output, quick, progress, **options) -> summary dict (already written to output, a
# ``RunDirectory`` when ``run_experiment`` calls it)
ExperimentFunction = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Experiment:
    """A reproducible experiment: its name, a one-line description and its runner
    ``run(output, quick, progress, **options) -> summary`` (``summary.build_summary``);
    ``run_experiment`` passes ``output`` as the locked ``RunDirectory`` (a path-like).

    Example:
        >>> from botorch_mtucb.experiments.registry import load_experiments
        >>> experiment = load_experiments()["000-rkhs-20"]
        >>> experiment.description
        'paper 000 Fig. 1(c): RKHS function, 20 tasks'
    """

    name: str
    description: str
    run: ExperimentFunction


EXPERIMENTS: dict[str, Experiment] = {}
_MODULES = ("paper000", "paper001", "paper002")


def register(name: str, description: str) -> Callable[[ExperimentFunction], ExperimentFunction]:
    """Decorator adding ``function`` to ``EXPERIMENTS`` under ``name``.

    Raises:
        ValueError: If ``name`` is already registered.

    Example:
        >>> from botorch_mtucb.experiments.registry import EXPERIMENTS, register
        >>> @register("demo-experiment", "a demo")
        ... def demo(output, quick=False, progress=True, **options):
        ...     return {}
        >>> EXPERIMENTS.pop("demo-experiment").description
        'a demo'
    """

    def decorator(function: ExperimentFunction) -> ExperimentFunction:
        if name in EXPERIMENTS:
            raise ValueError(f"experiment {name!r} is registered twice")
        EXPERIMENTS[name] = Experiment(name, description, function)
        return function

    return decorator


def load_experiments() -> dict[str, Experiment]:
    """Import every experiment module (those that exist) and return the registry.

    Example:
        >>> from botorch_mtucb.experiments.registry import load_experiments
        >>> "002-table1" in load_experiments()
        True
    """
    for module in _MODULES:
        try:
            importlib.import_module(f"botorch_mtucb.experiments.{module}")
        except ModuleNotFoundError as error:
            if error.name != f"botorch_mtucb.experiments.{module}":
                raise
    return EXPERIMENTS


# Options that only change how long a run is (tests use them): runs of another length
# resume or extend; policies whose parameters depend on the horizon record them in
# their run files (``settings()``), so a mismatch is refused there.
RUN_LENGTH_OPTIONS = ("horizon", "repetitions")


def run_settings(name: str, quick: bool, options: dict[str, Any]) -> dict[str, Any]:
    """What identifies a run directory: the experiment, the mode and the options other
    than ``RUN_LENGTH_OPTIONS`` (a data file by its SHA-256 alone, so that a different
    file is never mistaken for it and the same file may be given under any path).

    Example:
        >>> from botorch_mtucb.experiments.registry import run_settings
        >>> run_settings("000-sine", True, {"horizon": 3})
        {'experiment': '000-sine', 'quick': True}
    """
    settings: dict[str, Any] = {"experiment": name, "quick": bool(quick)}
    for key, value in sorted(options.items()):
        if key in RUN_LENGTH_OPTIONS:
            continue
        if key == "data" and value is not None and Path(value).is_file():
            # By content only: the same file under another path or name is the same run.
            settings["data_sha256"] = hashlib.sha256(Path(value).read_bytes()).hexdigest()
            continue
        settings[key] = value if isinstance(value, (int, float, bool, type(None))) else str(value)
    return settings


def experiment_options(
    experiment: str, options: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """The options an experiment accepts, with ``defaults`` where absent or ``None``.

    Args:
        experiment: The experiment's name (for the error message).
        options: What the caller passed (``--data``, or sizes that tests shrink).
        defaults: Option name -> default value: the options the experiment accepts.

    Raises:
        ValueError: If ``options`` holds a name that is not in ``defaults``.

    Example:
        >>> from botorch_mtucb.experiments.registry import experiment_options
        >>> experiment_options("000-sine", {"horizon": 3}, {"horizon": 200, "repetitions": 10})
        {'horizon': 3, 'repetitions': 10}
        >>> experiment_options("000-sine", {"data": "x.npz"}, {"horizon": 200})
        Traceback (most recent call last):
        ...
        ValueError: experiment '000-sine' takes no option(s) ['data'] (its options, keyword
        arguments of run_experiment: ['horizon'])
    """
    unknown = set(options) - set(defaults)
    if unknown:
        raise ValueError(
            f"experiment {experiment!r} takes no option(s) {sorted(unknown)} (its options, "
            f"keyword arguments of run_experiment: {sorted(defaults)})"
        )
    return {
        key: default if options.get(key) is None else options[key]
        for key, default in defaults.items()
    }


def unwritten_files_message(unwritten: list[tuple[Path, OSError]], output: str | Path) -> str:
    """One line naming the result files that could not be written
    (``run_directory.collect_unwritten_files``), relative to ``output``, and why.

    Example:
        >>> import errno
        >>> from pathlib import Path
        >>> from botorch_mtucb.experiments.registry import unwritten_files_message
        >>> error = PermissionError(errno.EACCES, "Permission denied")
        >>> print(unwritten_files_message([(Path("out/summary.json"), error)], "out"))
        could not write summary.json in out (Permission denied); the results printed are complete (computed from its run files)
    """
    names = []
    for path, _ in unwritten:
        try:
            names.append(path.relative_to(output).as_posix())
        except ValueError:
            names.append(str(path))
    reasons = dict.fromkeys(error.strerror or str(error) for _, error in unwritten)
    return (
        f"could not write {', '.join(names)} in {output} ({'; '.join(reasons)}); the "
        "results printed are complete (computed from its run files)"
    )


def run_experiment(
    name: str,
    output: str | Path,
    quick: bool = False,
    progress: bool = True,
    workers: int | None = None,
    ray_address: str | None = None,
    threads: int = 1,
    **options: Any,
) -> dict[str, Any]:
    """Run the experiment ``name`` into ``output``; returns its summary.

    An interrupted run is resumed by running the same command again: ``output`` keeps
    the run's settings in ``experiment.json`` and refuses a run with other settings.
    The run holds the lock on ``output`` throughout (``RunDirectory.locked``): a
    second run into it is refused at once. Result files (summary, CSV, plots) that cannot
    be written, as in a read-only directory holding a finished run, are named in one
    ``UnwrittenFilesWarning`` and the summary is returned all the same.

    With ``workers > 1`` or ``ray_address``, the (method, repetition) runs go to local
    worker processes or a Ray cluster (``parallel.parallel_execution``); the files and the
    summary are those of a serial run, and either kind of run resumes the other.

    Args:
        name: A registered experiment (``load_experiments``).
        output: Its output directory.
        quick: The small version.
        progress: Whether to show progress bars.
        workers: Local worker processes (default 1: serial, no Ray needed), or with
            ``ray_address`` the runs in flight at most.
        ray_address: A running Ray cluster (``"auto"``, ``"host:port"``,
            ``"ray://host:port"``).
        threads: Torch threads of the run (of each worker in a parallel run); default 1,
            the caller's own setting is restored after. Like ``workers``, it does not
            enter ``experiment.json``: a run resumes under any of them.
        options: The experiment's own options (stored in ``experiment.json``).

    Raises:
        ValueError: If ``name`` is not a registered experiment, ``output`` is not a
            usable directory or holds a run with other settings.
        OutputLockedError: At once, if another run holds ``output``.
        OSError: If a run file cannot be written (naming it); the rounds finished
            before are kept.
        TypeError: If ``workers`` is not an int.
        ClusterUnavailableError: If ``ray_address`` is given and no cluster answers there
            or Ray is not installed (before anything is written).
        UnitsFailedError: If runs on the workers failed twice (the others are saved).

    Example:
        >>> import tempfile
        >>> from botorch_mtucb.experiments.registry import run_experiment
        >>> summary = run_experiment(
        ...     "001-widths", tempfile.mkdtemp(), progress=False)  # doctest: +ELLIPSIS
        paper 001, Figure 2: ...
        >>> sorted(summary["problems"])
        ['noise_free', 'unit_noise']
    """
    experiments = load_experiments()
    if name not in experiments:
        known = ", ".join(sorted(experiments))
        raise ValueError(f"unknown experiment {name!r}; known experiments: {known}")
    if str(output).strip() == "":
        raise ValueError("output must name a directory, got an empty string")
    directory = RunDirectory(output)
    settings = run_settings(name, quick, options)
    threads = check_workers(threads, "threads")
    with run_threads(threads), parallel_execution(workers, ray_address, progress, threads):
        return _run_into(experiments[name], directory, settings, quick, progress, options)


def _run_into(
    experiment: Any,
    directory: RunDirectory,
    settings: dict,
    quick: bool,
    progress: bool,
    options: dict,
) -> dict[str, Any]:
    """``run_experiment``'s body: claim ``directory``, run, write the results."""
    existed = directory.path.exists()
    directory.make()
    try:
        with directory.locked():
            created = directory.claim(settings)
            try:
                with collect_unwritten_files() as unwritten:
                    summary = experiment.run(
                        output=directory, quick=quick, progress=progress, **options
                    )
            except Exception:
                if created and not directory.has_runs():  # nothing ran: release it
                    directory.settings_file.unlink(missing_ok=True)
                raise
    except OutputLockedError:
        raise  # the directory is another run's
    except Exception:
        if not existed and not directory.settings_file.exists():  # a failed start
            directory.remove_lock_files()
            with contextlib.suppress(OSError):
                directory.path.rmdir()  # if empty
        raise
    if unwritten:
        message = unwritten_files_message(unwritten, directory.path)
        warnings.warn(message, UnwrittenFilesWarning, 2)
    else:
        print(f"results written to {directory}")
    return summary
