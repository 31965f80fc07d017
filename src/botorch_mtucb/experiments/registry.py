"""The named experiments of ``python -m botorch_mtucb reproduce NAME``.

Each paper's experiments live in their own module (``paper000``, ``paper001``,
``paper002``) and register themselves with ``@register``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# run(output, quick, progress, **options) -> summary dict (already written to output)
ExperimentFunction = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Experiment:
    """A reproducible experiment: its name, a one-line description and its runner."""

    name: str
    description: str
    run: ExperimentFunction


EXPERIMENTS: dict[str, Experiment] = {}
_MODULES = ("paper000", "paper001", "paper002")


def register(name: str, description: str) -> Callable[[ExperimentFunction], ExperimentFunction]:
    """Decorator adding ``function`` to ``EXPERIMENTS`` under ``name``."""

    def decorator(function: ExperimentFunction) -> ExperimentFunction:
        if name in EXPERIMENTS:
            raise ValueError(f"experiment {name!r} is registered twice")
        EXPERIMENTS[name] = Experiment(name, description, function)
        return function

    return decorator


def load_experiments() -> dict[str, Experiment]:
    """Import every experiment module (those that exist) and return the registry."""
    for module in _MODULES:
        try:
            importlib.import_module(f"botorch_mtucb.experiments.{module}")
        except ModuleNotFoundError as error:
            if error.name != f"botorch_mtucb.experiments.{module}":
                raise
    return EXPERIMENTS


def run_experiment(
    name: str, output: str | Path, quick: bool = False, progress: bool = True, **options: Any
) -> dict[str, Any]:
    """Run the experiment ``name`` into ``output``; returns its summary.

    Raises:
        ValueError: If ``name`` is not a registered experiment.
    """
    experiments = load_experiments()
    if name not in experiments:
        known = ", ".join(sorted(experiments))
        raise ValueError(f"unknown experiment {name!r}; known experiments: {known}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    return experiments[name].run(output=output, quick=quick, progress=progress, **options)
