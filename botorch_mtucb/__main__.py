"""``python -m botorch_mtucb``: the experiments' command line
(``botorch_mtucb.experiments.cli``) with the benchmarks' catalogue
(``botorch_mtucb.benchmarks``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from botorch_mtucb.benchmarks import BENCHMARKS
from botorch_mtucb.experiments.cli import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m botorch_mtucb`` with ``argv`` (default ``sys.argv[1:]``); returns
    the exit code.

    Example:
        >>> from botorch_mtucb.__main__ import main
        >>> main(["benchmark", "--list"])  # doctest: +ELLIPSIS
        botorch-loop ...
        coverage ...
        ...
        0
    """
    return cli_main(argv, benchmarks=BENCHMARKS)


if __name__ == "__main__":
    sys.exit(main())
