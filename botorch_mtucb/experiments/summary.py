"""The one ``summary.json`` schema of every experiment: its builder, its checker, its writer.

Every experiment, single- or multi-problem, writes ``summary.json`` in one schema::

    {
      "experiment": "000-rkhs-20",
      "settings": {"horizon": 60, "repetitions": 3, "quick": true, ...},
      "problems": {
        "rkhs-20": {
          "methods": {
            "MT-KB": {"cumulative_regret_mean": 8.24, "cumulative_regret_std": 2.85, ...},
            ...
          },
          ...
        }
      }
    }

* ``settings``: what holds for the whole run (horizon, repetitions, ``quick``, delta,
  the machine, ...).
* ``problems``: one entry per problem or configuration, by label (a single-problem
  experiment has one label). Each holds ``methods`` and the problem's own numbers (the
  swept ``b`` of paper 001, the kernel of a paper-002 configuration, the paper's values).
* ``methods``: per method, the final cumulative regret ``R_C(T)``, mean and standard
  deviation over the repetitions (``cumulative_regret_mean``, ``cumulative_regret_std``),
  then the method's own numbers (``seconds_per_step``, ``bayes_regret_mean``, ...).
  ``methods`` is empty for an experiment that runs no bandit (``001-widths``).

``build_summary`` builds it, ``check_summary`` checks it (the tests call it on every
experiment), ``write_summary`` writes it.

``summary.json`` replaces the previous one in one step (``run_directory.write_result_file``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from botorch_mtucb.experiments.run_directory import write_result_file
from botorch_mtucb.experiments.runs import MethodResult

SUMMARY_KEYS = ("experiment", "settings", "problems")
REGRET_KEYS = ("cumulative_regret_mean", "cumulative_regret_std")


def final_statistics(result: MethodResult, curve: str) -> tuple[float, float]:
    """Mean and standard deviation over repetitions of the last value of ``curve``.

    Raises:
        KeyError: If ``result`` has no curve ``curve``.

    Example:
        >>> import numpy as np
        >>> from botorch_mtucb.experiments.summary import final_statistics
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("A", {"cumulative_regret": np.array([[1.0, 2.0], [1.0, 4.0]])})
        >>> final_statistics(result, "cumulative_regret")
        (3.0, 1.0)
    """
    values = result.curves[curve][:, -1]
    return float(values.mean()), float(values.std())


def method_summary(result: MethodResult, **extras: Any) -> dict[str, Any]:
    """One method's entry: ``R_C(T)`` mean and sd, mean seconds per step, then ``extras``.

    Example:
        >>> import numpy as np
        >>> from botorch_mtucb.experiments.summary import method_summary
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("A", {"cumulative_regret": np.array([[1.0], [3.0]])}, [0.5, 1.5])
        >>> method_summary(result, final_dictionary_size=4.0)
        {'cumulative_regret_mean': 2.0, 'cumulative_regret_std': 1.0, 'seconds_per_step': 1.0, 'final_dictionary_size': 4.0}
    """
    mean, std = final_statistics(result, "cumulative_regret")
    return {
        "cumulative_regret_mean": mean,
        "cumulative_regret_std": std,
        "seconds_per_step": float(np.mean(result.seconds_per_step)),
        **extras,
    }


def problem_summary(methods: Mapping[str, Mapping[str, Any]], **extras: Any) -> dict[str, Any]:
    """One problem's entry: ``{"methods": methods, **extras}``.

    Example:
        >>> from botorch_mtucb.experiments.summary import problem_summary
        >>> problem_summary({}, b=0.01)
        {'methods': {}, 'b': 0.01}
    """
    return {"methods": dict(methods), **extras}


def _json_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"summary values must be JSON numbers, strings or lists; got {type(value)}")


def build_summary(
    experiment: str, settings: Mapping[str, Any], problems: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The ``summary.json`` content of an experiment, in the one schema (module docstring).

    Tensors and NumPy values become lists and numbers, tuples become lists, so the
    returned dict equals what ``json.loads`` reads back from the file.

    Args:
        experiment: The experiment's registered name.
        settings: What holds for the whole run.
        problems: Label -> ``problem_summary(...)``.

    Raises:
        ValueError: If the result does not follow the schema (``check_summary``).
        TypeError: If a value cannot be written as JSON.

    Example:
        >>> from botorch_mtucb.experiments.summary import build_summary, problem_summary
        >>> entry = {"cumulative_regret_mean": 8.2, "cumulative_regret_std": 2.8}
        >>> summary = build_summary(
        ...     "000-rkhs-20", {"horizon": 60}, {"rkhs-20": problem_summary({"MT-KB": entry})})
        >>> summary["problems"]["rkhs-20"]["methods"]["MT-KB"]["cumulative_regret_mean"]
        8.2
    """
    summary = {"experiment": experiment, "settings": dict(settings), "problems": dict(problems)}
    summary = json.loads(json.dumps(summary, default=_json_value))
    check_summary(summary)
    return summary


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_summary(summary: Mapping[str, Any]) -> None:
    """Check that ``summary`` follows the one schema (module docstring).

    Raises:
        ValueError: Naming the first key that is missing or of the wrong kind: the
            top-level keys must be exactly ``experiment`` (a non-empty string),
            ``settings`` (a mapping) and ``problems`` (a non-empty mapping); every
            problem holds ``methods``, and every method ``cumulative_regret_mean``
            (finite) and ``cumulative_regret_std`` (finite, ``>= 0``).

    Example:
        >>> from botorch_mtucb.experiments.summary import check_summary
        >>> check_summary({"experiment": "x", "settings": {}, "problems": {"p": {}}})
        Traceback (most recent call last):
        ...
        ValueError: summary['problems']['p'] has no 'methods'
    """
    if not isinstance(summary, Mapping) or set(summary) != set(SUMMARY_KEYS):
        keys = sorted(summary) if isinstance(summary, Mapping) else type(summary).__name__
        raise ValueError(f"a summary has exactly the keys {list(SUMMARY_KEYS)}, got {keys}")
    if not isinstance(summary["experiment"], str) or not summary["experiment"]:
        raise ValueError(
            f"summary['experiment'] must name the experiment, got {summary['experiment']!r}"
        )
    if not isinstance(summary["settings"], Mapping):
        raise ValueError("summary['settings'] must be a mapping")
    problems = summary["problems"]
    if not isinstance(problems, Mapping) or not problems:
        raise ValueError("summary['problems'] must be a non-empty mapping label -> problem")
    for label, problem in problems.items():
        where = f"summary['problems'][{label!r}]"
        if not isinstance(problem, Mapping) or "methods" not in problem:
            raise ValueError(f"{where} has no 'methods'")
        if not isinstance(problem["methods"], Mapping):
            raise ValueError(f"{where}['methods'] must be a mapping method -> numbers")
        for method, entry in problem["methods"].items():
            for key in REGRET_KEYS:
                value = entry.get(key) if isinstance(entry, Mapping) else None
                if not _is_number(value) or not math.isfinite(value):
                    raise ValueError(
                        f"{where}['methods'][{method!r}][{key!r}] must be a finite number, "
                        f"got {value!r}"
                    )
            if entry["cumulative_regret_std"] < 0:
                raise ValueError(
                    f"{where}['methods'][{method!r}] has a negative standard deviation"
                )


def write_summary(summary: Mapping[str, Any], path: str | Path) -> None:
    """Check ``summary`` (``check_summary``) and write it to ``path`` as indented JSON.

    Raises:
        ValueError: If ``summary`` does not follow the schema.
        OSError: If the file cannot be written (naming it; inside
            ``collect_unwritten_files`` it is listed instead).

    Example:
        >>> import pathlib, tempfile
        >>> from botorch_mtucb.experiments.summary import (
        ...     build_summary, problem_summary, write_summary)
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "summary.json"
        >>> write_summary(build_summary("x", {}, {"p": problem_summary({})}), path)
        >>> path.read_text().startswith('{\\n  "experiment": "x"')
        True
    """
    check_summary(summary)
    write_result_file(path, (json.dumps(summary, indent=2, sort_keys=False) + "\n").encode())
