"""What every benchmark shares: its command line (``--quick``, ``--threads``) and its
timer, the median of ``timeit`` runs of one call each, with an untimed setup before each
run (a fresh copy of a model that the call mutates)."""

from __future__ import annotations

import argparse
import statistics
import timeit
from collections.abc import Callable
from typing import Any, TypeVar

from botorch_mtucb.experiments.cli_types import nonnegative_int

Result = TypeVar("Result")


def median_seconds(
    function: Callable[[Any], Result],
    repeats: int,
    setup: Callable[[], Any] | None = None,
) -> tuple[float, Result]:
    """Median wall-clock seconds of ``function(setup())`` over ``repeats`` runs.

    Each run is one ``timeit`` call of ``function`` (garbage collection paused, as
    ``timeit`` does), preceded by an untimed ``setup()`` whose value is the argument
    (``None`` without ``setup``).

    Args:
        function: What to time; it receives the setup's value.
        repeats: Runs, ``>= 1``.
        setup: Builds each run's argument (not timed).

    Returns:
        The median in seconds and the last run's result.

    Raises:
        ValueError: If ``repeats < 1``.

    Example:
        >>> from botorch_mtucb.benchmarks.timing import median_seconds
        >>> seconds, result = median_seconds(lambda values: sorted(values), 3, lambda: [3, 1, 2])
        >>> seconds >= 0, result
        (True, [1, 2, 3])
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    state: dict[str, Any] = {}

    def prepare() -> None:
        state["argument"] = setup() if setup is not None else None

    def call() -> None:
        state["result"] = function(state["argument"])

    times = timeit.Timer(call, prepare).repeat(repeat=repeats, number=1)
    return statistics.median(times), state["result"]


def benchmark_parser(name: str, description: str, quick: str) -> argparse.ArgumentParser:
    """The argument parser of ``python -m botorch_mtucb benchmark NAME``: ``--quick``
    (described by ``quick``) and ``--threads`` (torch threads, default 1; 0 keeps
    torch's number). Benchmarks add their own options.

    Example:
        >>> from botorch_mtucb.benchmarks.timing import benchmark_parser
        >>> parser = benchmark_parser("icm-posterior", "a benchmark", "small sizes")
        >>> args = parser.parse_args(["--quick"])
        >>> args.quick, args.threads
        (True, 1)
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m botorch_mtucb benchmark {name}", description=description
    )
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument(
        "--threads",
        type=nonnegative_int,
        default=1,
        help="torch threads (default 1: comparable on shared machines; 0: torch's default)",
    )
    return parser
