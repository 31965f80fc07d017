"""Command line: ``python -m botorch_mtucb run`` and ``... reproduce NAME``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from botorch_mtucb.experiments.registry import load_experiments, run_experiment

MAIN_EXPERIMENT = "sensor-main"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``botorch_mtucb`` command."""
    experiments = load_experiments()
    parser = argparse.ArgumentParser(
        prog="python -m botorch_mtucb",
        description="Multi-task BO with regret guarantees: the main job and the papers' experiments.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help="the main job: MT-KB vs IT-KB on the real light-sensor data (about 2 min)"
    )
    run.add_argument(
        "--output", default="results/run", help="output directory (default: %(default)s)"
    )
    run.add_argument("--no-progress", action="store_true", help="hide progress bars")
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
    commands.add_parser("list", help="list the experiments")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        for name, experiment in sorted(load_experiments().items()):
            print(f"{name:22s} {experiment.description}")
        return 0
    if args.command == "run":
        name, output, quick, options = MAIN_EXPERIMENT, args.output, False, {}
    else:
        output = f"results/{args.name}" if args.output is None else args.output
        name, quick = args.name, args.quick
        options = {} if args.data is None else {"data": args.data}
    try:
        run_experiment(name, output, quick=quick, progress=not args.no_progress, **options)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: the rounds done so far are saved in {output}; run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
