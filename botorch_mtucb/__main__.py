"""``python -m botorch_mtucb``: the experiments' command line
(``botorch_mtucb.experiments.cli``) with the benchmarks' catalogue
(``botorch_mtucb.benchmarks``).

Neither is imported with BoTorch: ``list``, ``benchmark --list`` and ``--help`` answer at
once, and a command imports what it runs once its arguments are parsed. Ctrl-C before a
run has started (during those imports, or in a benchmark) ends the command with one line
``interrupted`` and exit code 130; an interrupted experiment says how to resume it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from botorch_mtucb.benchmarks import BENCHMARKS
from botorch_mtucb.experiments.cli import main as cli_main

INTERRUPTED = 130  # the shell's code for a command ended by SIGINT (128 + 2)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m botorch_mtucb`` with ``argv`` (default ``sys.argv[1:]``); returns
    the exit code: ``experiments.cli.main``'s, or 130 with one line on stderr when
    interrupted (Ctrl-C) outside an experiment's run.

    Example:
        >>> from botorch_mtucb.__main__ import main
        >>> main(["benchmark", "--list"])  # doctest: +ELLIPSIS
        botorch-loop ...
        coverage ...
        ...
        0
    """
    try:
        return cli_main(argv, benchmarks=BENCHMARKS)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
