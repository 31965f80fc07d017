"""Run several methods over repetitions and collect their curves.

Each run goes to its run file in an experiment's output directory
(``RunDirectory.run_file``: one line per round, written as the round ends). Re-running
into the same directory resumes unfinished repetitions and reuses finished ones
(``botorch_mtucb.bandits.runner.run_policy``), under the directory's lock (one run at a
time: ``RunDirectory.locked``). What is computed from the runs is ``summary`` (the
``summary.json`` schema), ``tables`` (printed tables, ``curves.csv``) and ``plots``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from botorch_mtucb.bandits import Environment, Policy, StepRecord, run_policy
from botorch_mtucb.experiments.parallel import current_executor
from botorch_mtucb.experiments.run_directory import RunDirectory
from botorch_mtucb.utils.progress import on_terminal, progress_bar

# A curve computed from one repetition's records and its environment: T values.
CurveFunction = Callable[[Sequence[StepRecord], Environment], np.ndarray]

# ``Method.cost`` of the methods with the exact (CMM) bound: its round (an eigen-
# decomposition and a 1-D search) costs several times a closed-form width's (see the
# seconds per step in the experiments' run files); only the order in which a parallel run sends units uses it.
EXACT_BOUND_COST = 5.0


def method_cost(name: str) -> float:
    """The ``Method.cost`` the experiments give the method ``name``: ``EXACT_BOUND_COST``
    for the exact-bound (CMM) methods, else 1.

    Example:
        >>> from botorch_mtucb.experiments.runs import method_cost
        >>> method_cost("MT-CMM-UCB b=0.01"), method_cost("MT-KB")
        (5.0, 1.0)
    """
    return EXACT_BOUND_COST if "CMM" in name else 1.0


@dataclass
class Method:
    """A named method: builds a fresh policy and environment for repetition ``rep``.

    Args:
        name: The method's name (its run files: ``RunDirectory.run_file``).
        make_policy: ``rep -> Policy``, a new policy for repetition ``rep``.
        make_environment: ``rep -> Environment``; repetition ``rep`` of every method
            should get the same environment (common random numbers).
        cost: The relative cost of one of its runs (default 1), for the order in which a
            parallel run sends its units (largest first, ``parallel``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import RandomPolicy
        >>> from botorch_mtucb.experiments.runs import Method
        >>> from botorch_mtucb.problems import (
        ...     KernelBanditEnvironment, RKHSTestFunction, make_kernel)
        >>> f = RKHSTestFunction.sample(
        ...     make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0))
        >>> method = Method(
        ...     "Random", lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10))
        >>> method.make_policy(0).name
        'Random'
    """

    name: str
    make_policy: Callable[[int], Policy]
    make_environment: Callable[[int], Environment]
    cost: float = 1.0


@dataclass
class MethodResult:
    """Curves and per-repetition numbers of one method.

    Attributes:
        name: The method's name.
        curves: Curve name -> ``repetitions x T`` array (``cumulative_regret`` always).
        seconds_per_step: Per repetition, the mean wall-clock seconds of a round.
        diagnostics: Diagnostic name -> ``repetitions x T`` array of the values the
            policy reported each round (``nan`` where a round did not report it).

    Example:
        >>> import numpy as np
        >>> from botorch_mtucb.experiments.runs import MethodResult
        >>> result = MethodResult("MT-KB", {"cumulative_regret": np.ones((3, 10))})
        >>> result.curves["cumulative_regret"].shape
        (3, 10)
    """

    name: str
    curves: dict[str, np.ndarray] = field(default_factory=dict)
    seconds_per_step: list[float] = field(default_factory=list)
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)


def cumulative_regret_curve(records: Sequence[StepRecord], environment: Environment) -> np.ndarray:
    """``R_C(t) = sum_{s <= t} r_s``, the cumulative regret after each round (``T`` values).

    Example:
        >>> from botorch_mtucb.bandits import StepRecord
        >>> from botorch_mtucb.experiments.runs import cumulative_regret_curve
        >>> records = [StepRecord(t, [0.0], [0.0], regret=1.0, seconds=0.0) for t in range(3)]
        >>> cumulative_regret_curve(records, None).tolist()
        [1.0, 2.0, 3.0]
    """
    return np.cumsum([record.regret for record in records])


def _collect(
    result: MethodResult,
    records: Sequence[StepRecord],
    environment: Environment,
    curve_functions: Mapping[str, CurveFunction],
) -> None:
    """Add one repetition's curves, mean seconds per round and diagnostics to ``result``."""
    for name, function in curve_functions.items():
        curve = np.asarray(function(records, environment), dtype=float)
        result.curves.setdefault(name, []).append(curve)
    result.seconds_per_step.append(float(np.mean([r.seconds for r in records])))
    keys = records[-1].diagnostics.keys() if records else ()
    for key in keys:
        values = [r.diagnostics.get(key, math.nan) for r in records]
        result.diagnostics.setdefault(key, []).append(np.asarray(values, dtype=float))


def run_methods(
    methods: Sequence[Method],
    horizon: int,
    repetitions: int,
    output: str | Path | RunDirectory,
    seed: int = 0,
    curve_functions: Mapping[str, CurveFunction] | None = None,
    progress: bool = True,
) -> dict[str, MethodResult]:
    """Run every method for ``repetitions`` seeds (``seed + rep``) and collect curves.

    Repetition ``rep`` of every method uses the same seed, hence the same contexts and
    noise; repetitions run in the outer loop, methods in the inner one. Each run is
    written to its run file (``RunDirectory.run_file``) as it goes and resumed from
    there, while this thread holds the lock on ``output`` (``RunDirectory.locked``). Inside
    ``parallel.parallel_execution`` the unfinished runs are first computed by its workers
    (the files they return are written here), then read back as above.

    Args:
        methods: The methods, in the order of the results.
        horizon: Rounds ``T`` per run.
        repetitions: Runs per method.
        output: The experiment's output directory.
        seed: Seed of repetition 0.
        curve_functions: Curve name -> function of a run's records and environment
            returning ``T`` values (``cumulative_regret`` is always computed).
        progress: Whether to show progress: on a terminal, a bar of the runs and one of
            the current run's rounds; in a log (stderr not a terminal), one line per
            finished run (``utils.progress``).

    Returns:
        Method name -> ``MethodResult`` (curves ``repetitions x T``).

    Raises:
        OutputLockedError: At once, if another process runs into ``output``.
        ValueError: If a run file holds another run or rounds that cannot be trusted.
        OSError: If a run file cannot be written (naming it).

    Example:
        >>> import tempfile, torch
        >>> from botorch_mtucb.bandits import RandomPolicy
        >>> from botorch_mtucb.experiments.runs import Method, run_methods
        >>> from botorch_mtucb.problems import (
        ...     KernelBanditEnvironment, RKHSTestFunction, make_kernel)
        >>> f = RKHSTestFunction.sample(
        ...     make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0))
        >>> method = Method(
        ...     "Random", lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10))
        >>> results = run_methods([method], 5, 2, tempfile.mkdtemp(), progress=False)
        >>> results["Random"].curves["cumulative_regret"].shape
        (2, 5)
    """
    directory = RunDirectory(output)
    curve_functions = {"cumulative_regret": cumulative_regret_curve, **(curve_functions or {})}
    results = {method.name: MethodResult(method.name) for method in methods}
    with _writing([(methods, horizon, repetitions, directory)], seed) as computed:
        progress = progress and not computed  # the workers ran them: read back below
        # In a log (stderr not a terminal): one line per finished run, no bar of rounds.
        bar = progress_bar(
            total=len(methods) * repetitions, desc="runs", disable=not progress, interval=0
        )
        round_bars = progress and on_terminal()
        for rep in range(repetitions):
            for method in methods:
                environment = method.make_environment(rep)
                policy = method.make_policy(rep)
                path = directory.run_file(method.name, rep)
                bar.set_postfix_str(f"{method.name} rep {rep}")
                records = run_policy(
                    policy,
                    environment,
                    horizon,
                    seed=seed + rep,
                    path=path,
                    progress=round_bars,
                    description=f"{method.name} #{rep}",
                    replay_finished=False,  # only the records are used below
                )
                _collect(results[method.name], records, environment, curve_functions)
                bar.update(1)
        bar.close()
    for result in results.values():
        result.curves = {k: np.stack(v) for k, v in result.curves.items()}
        result.diagnostics = {k: np.stack(v) for k, v in result.diagnostics.items()}
    return results


def prefetch(
    calls: Sequence[tuple[Sequence[Method], int, int, str | Path | RunDirectory]], seed: int = 0
) -> None:
    """In a parallel run, compute the runs of several later ``run_methods(methods, horizon,
    repetitions, output, seed)`` calls at once, given as ``(methods, horizon,
    repetitions, output)``: their units go out together, with no barrier between the
    calls, and the calls then only read their files back. Serially it does nothing.

    Example:
        >>> import tempfile, torch
        >>> from botorch_mtucb.bandits import RandomPolicy
        >>> from botorch_mtucb.experiments.runs import Method, prefetch
        >>> from botorch_mtucb.problems import (
        ...     KernelBanditEnvironment, RKHSTestFunction, make_kernel)
        >>> f = RKHSTestFunction.sample(
        ...     make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0))
        >>> method = Method(
        ...     "Random", lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10))
        >>> prefetch([([method], 5, 2, tempfile.mkdtemp())])  # serial: nothing to do
    """
    if current_executor() is None:
        return
    with _writing(calls, seed):
        pass


@contextlib.contextmanager
def _writing(
    calls: Sequence[tuple[Sequence[Method], int, int, str | Path | RunDirectory]], seed: int
) -> Iterator[bool]:
    """Hold the lock of every call's directory for the block (the one place this module
    takes it); in a parallel run, first compute the calls' unfinished runs on the
    executor's workers. Yields whether they were computed there."""
    executor = current_executor()
    directories = [RunDirectory(call[3]) for call in calls]
    with contextlib.ExitStack() as stack:
        for directory in dict.fromkeys(directories):  # one run at a time in a directory
            stack.enter_context(directory.locked())
        if executor is not None:
            executor.run_calls(
                [
                    (methods, horizon, repetitions, seed, directory)
                    for (methods, horizon, repetitions, _), directory in zip(calls, directories)
                ]
            )
        yield executor is not None
