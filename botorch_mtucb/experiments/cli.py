"""The command line ``python -m botorch_mtucb``: ``run``, ``reproduce NAME``, ``list`` and
``benchmark NAME``.

The benchmarks sit in the layer above the experiments, so this module does not import
them: ``botorch_mtucb.__main__`` passes their catalogue (``botorch_mtucb.benchmarks.
BENCHMARKS``) to ``main``. Importing this module imports neither BoTorch nor the
experiments: ``list``, ``--help`` and the checks of the arguments read the names from
``catalogue``, and the experiments are imported once the arguments are parsed and a
command runs them.

While an experiment runs, SIGTERM interrupts it as Ctrl-C (SIGINT) does, and SIGINT does
even where the command was started with it ignored (``command &`` in a script): the
rounds done so far stay in the run files and the same message says how to resume (exit
code 143, 130 for SIGINT). A local Ray that cannot start (``--workers N``) gives way to a
process pool with one warning line; a cluster named by ``--ray`` that cannot be reached
is an error saying how to run on this machine instead. Errors are one line ``error: ...``
naming the file or directory; the package's warnings about damaged run files and
unwritten result files are one line ``warning: ...`` each.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from botorch_mtucb.experiments.backends import RAY_EXTRA, ClusterUnavailableError
from botorch_mtucb.experiments.catalogue import EXPERIMENT_DESCRIPTIONS
from botorch_mtucb.experiments.cli_types import positive_int

MAIN_EXPERIMENT = "sensor-main"


def run_experiment(name: str, output: str | Path, **options: Any) -> dict[str, Any]:
    """``registry.run_experiment(name, output, **options)``, the registry imported at the
    first call: it imports the experiments and BoTorch, which the commands that run
    nothing (``list``, ``--help``) do without.

    Raises:
        ValueError: As ``registry.run_experiment`` (e.g. an unknown ``name``), and every
            other error it raises.

    Example:
        >>> from botorch_mtucb.experiments.cli import run_experiment
        >>> run_experiment("no-such-experiment", "out")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: unknown experiment 'no-such-experiment'; known experiments: 000-bayes-regret, ...
    """
    from botorch_mtucb.experiments import registry  # BoTorch: imported late

    return registry.run_experiment(name, output, **options)


class BenchmarkCommand(Protocol):
    """What ``benchmark NAME`` needs of a benchmark: a one-line description and a
    ``run(argv) -> exit code`` that parses the benchmark's own options.

    Example:
        >>> from botorch_mtucb.experiments.cli import main
        >>> class Hello:
        ...     description = "says hello"
        ...     def run(self, argv):
        ...         print("hello", *argv)
        ...         return 0
        >>> main(["benchmark", "hello", "--quick"], benchmarks={"hello": Hello()})
        hello --quick
        0
    """

    description: str

    def run(self, argv: Sequence[str]) -> int:
        """Run with the command-line arguments after ``NAME``; returns the exit code."""


def build_parser(
    benchmarks: Mapping[str, BenchmarkCommand] | None = None,
) -> argparse.ArgumentParser:
    """The argument parser of the ``botorch_mtucb`` command (a ``benchmark`` command
    when ``benchmarks`` are given).

    Example:
        >>> from botorch_mtucb.experiments.cli import build_parser
        >>> args = build_parser().parse_args(["reproduce", "000-rkhs-20", "--quick"])
        >>> args.command, args.name, args.quick
        ('reproduce', '000-rkhs-20', True)
    """
    experiments = EXPERIMENT_DESCRIPTIONS
    parser = argparse.ArgumentParser(
        prog="python -m botorch_mtucb",
        description="Multi-task BO with regret guarantees: the main job and the papers' experiments.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="the main job: MT-KB vs IT-KB and MT-CMM-UCB on the real light-sensor data "
        "(the longest command; MT-CMM-UCB takes most of its time)",
    )
    run.add_argument(
        "--output", default="results/run", help="output directory (default: %(default)s)"
    )
    run.add_argument("--no-progress", action="store_true", help="hide progress bars")
    _parallel_arguments(run)
    reproduce = commands.add_parser("reproduce", help="one of the papers' experiments")
    reproduce.add_argument(
        "name",
        choices=sorted(experiments),
        metavar="NAME",
        help="one of: " + ", ".join(sorted(experiments)),
    )
    reproduce.add_argument(
        "--quick", action="store_true", help="a small version that runs in minutes"
    )
    reproduce.add_argument(
        "--output", default=None, help="output directory (default: results/NAME)"
    )
    reproduce.add_argument(
        "--data", default=None, help="a data file, for experiments that take one"
    )
    reproduce.add_argument("--no-progress", action="store_true", help="hide progress bars")
    _parallel_arguments(reproduce)
    commands.add_parser("list", help="list the experiments")
    if benchmarks is not None:
        benchmark = commands.add_parser(
            "benchmark",
            help="a timing benchmark (ratios against a baseline measured in the same run)",
            description="Run a benchmark; arguments after NAME go to it (NAME --help).",
        )
        benchmark.add_argument("--list", action="store_true", help="list the benchmarks")
        benchmark.add_argument(
            "name", nargs="?", metavar="NAME", help="one of: " + ", ".join(sorted(benchmarks))
        )
        benchmark.add_argument(
            "arguments", nargs=argparse.REMAINDER, help="the benchmark's options (e.g. --quick)"
        )
    return parser


def _parallel_arguments(parser: argparse.ArgumentParser) -> None:
    """``--workers N``, ``--threads N`` and ``--ray ADDRESS`` (``parallel``)."""
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="run the (method, repetition) units on N >= 1 local worker processes (Ray "
        "when installed and it starts, else a process pool); with --ray, the units in "
        "flight at most (default: 1, serial; with --ray: the cluster's CPUs)",
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        metavar="N",
        help="torch threads of the run, or of each worker, N >= 1 (default: %(default)s; "
        "small matrices are faster on one, and on a busy machine more can be much slower)",
    )
    parser.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="run the units as tasks on a running Ray cluster: 'auto' (this machine "
        "belongs to it), 'host:port' or 'ray://host:port' (results come back to this "
        f"machine; needs: {RAY_EXTRA})",
    )


def _benchmark(args: argparse.Namespace, benchmarks: Mapping[str, BenchmarkCommand]) -> int:
    if args.list or args.name is None:
        for name, benchmark in sorted(benchmarks.items()):
            print(f"{name:22s} {benchmark.description}")
        return 0
    if args.name not in benchmarks:
        known = ", ".join(sorted(benchmarks))
        print(f"error: unknown benchmark {args.name!r}; known benchmarks: {known}", file=sys.stderr)
        return 2
    return benchmarks[args.name].run(args.arguments)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C raises ``KeyboardInterrupt``
    (inside ``interrupts``).

    Example:
        >>> from botorch_mtucb.experiments.cli import Terminated
        >>> issubclass(Terminated, KeyboardInterrupt)
        True
    """


@contextlib.contextmanager
def interrupts() -> Iterator[None]:
    """Within the block, SIGINT (Ctrl-C) raises ``KeyboardInterrupt`` and SIGTERM raises
    ``Terminated`` (once; a second SIGTERM during the clean-up is ignored), whatever their
    handlers were; the previous handlers are restored after. Only the main thread can
    handle signals: elsewhere this does nothing.

    SIGINT counts even where the command started with it ignored, as a non-interactive
    shell starts its background jobs (``command &``): Python keeps an inherited ignore,
    and the run would go on to its end and exit 0. A run is built to be stopped (every
    finished round is kept and the same command resumes), so SIGINT stops it there too.

    Example:
        >>> import signal
        >>> from botorch_mtucb.experiments.cli import interrupts
        >>> before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        >>> _ = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in ``command &``
        >>> with interrupts():  # (in the main thread)
        ...     signal.getsignal(signal.SIGINT) is signal.default_int_handler
        True
        >>> signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        True
        >>> _ = signal.signal(signal.SIGINT, before[0])
        >>> signal.getsignal(signal.SIGTERM) is before[1]
        True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []

    def terminated(signum: int, frame: Any) -> None:
        if not received:
            received.append(signum)
            raise Terminated

    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        previous_term = signal.signal(signal.SIGTERM, terminated)
        try:
            yield
        finally:
            if previous_term is not None:  # None: set outside Python, cannot be restored
                signal.signal(signal.SIGTERM, previous_term)
    finally:
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)


@contextlib.contextmanager
def _one_line_warnings(categories: tuple[type[Warning], ...]) -> Iterator[None]:
    """The package's warnings about its files (``categories``) as one line
    ``warning: ...`` on stderr."""
    show = warnings.showwarning

    def showwarning(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, categories):
            print(f"warning: {message}", file=sys.stderr)
        else:
            show(message, category, *args, **kwargs)

    warnings.showwarning = showwarning
    try:
        yield
    finally:
        warnings.showwarning = show


def main(
    argv: Sequence[str] | None = None, benchmarks: Mapping[str, BenchmarkCommand] | None = None
) -> int:
    """Entry point; returns the exit code: 0, 1 when a file cannot be written or the
    output is another run's, 2 for bad input, 130 when interrupted (Ctrl-C), 143 when
    terminated (SIGTERM).

    Example:
        >>> from botorch_mtucb.experiments.cli import main
        >>> main(["list"])  # doctest: +ELLIPSIS
        000-bayes-regret       paper 000 Fig. 3: Bayes regret (RKHS function, perturbed sine)
        ...
        0
    """
    parser = build_parser(benchmarks)
    args = parser.parse_args(argv)
    if args.command == "list":
        for name, description in sorted(EXPERIMENT_DESCRIPTIONS.items()):
            print(f"{name:22s} {description}")
        return 0
    if args.command == "benchmark":
        return _benchmark(args, benchmarks or {})
    return _run(args, argv)


def _run(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """``run`` and ``reproduce NAME``: the experiment, its errors as one line each."""
    # Imported here, once a command runs an experiment: they import BoTorch. An interrupt
    # before the run starts is the plain one of ``botorch_mtucb.__main__``.
    from botorch_mtucb.bandits.run_file import RunFileWarning
    from botorch_mtucb.experiments.output_lock import OutputLockedError
    from botorch_mtucb.experiments.parallel import UnitsFailedError
    from botorch_mtucb.experiments.registry import load_experiments
    from botorch_mtucb.experiments.run_directory import UnwrittenFilesWarning

    load_experiments()
    if args.command == "run":
        name, output, quick, options = MAIN_EXPERIMENT, args.output, False, {}
    else:
        output = f"results/{args.name}" if args.output is None else args.output
        name, quick = args.name, args.quick
        options = {} if args.data is None else {"data": args.data}
    command = "python -m botorch_mtucb " + shlex.join(sys.argv[1:] if argv is None else argv)
    try:
        with interrupts(), _one_line_warnings((RunFileWarning, UnwrittenFilesWarning)):
            run_experiment(
                name,
                output,
                quick=quick,
                progress=not args.no_progress,
                workers=args.workers,
                ray_address=args.ray,
                threads=args.threads,
                **options,
            )
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ClusterUnavailableError as error:  # never a silent switch to this machine
        print(
            f"error: {error}; to run on this machine instead, leave out --ray "
            "(--workers N: N local processes)",
            file=sys.stderr,
        )
        return 2
    except (OutputLockedError, UnitsFailedError) as error:
        if isinstance(error, UnitsFailedError):
            error = f"{error} in {output}; run the same command again to retry them: {command}"
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # a run file or directory that cannot be written
        print(
            f"error: {error}\n(the rounds done so far are kept in {output}; once this is "
            "fixed, run the same command again to resume)",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt as interrupt:
        print(
            f"\ninterrupted: the rounds done so far are saved in {output}; run the same "
            f"command again to resume: {command}",
            file=sys.stderr,
        )
        return 143 if isinstance(interrupt, Terminated) else 130
    return 0
