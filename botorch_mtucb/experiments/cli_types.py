"""Argument types of the command lines (``python -m botorch_mtucb`` and the
benchmarks): integers at least 0 or 1, with a one-line usage error otherwise.
"""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An ``argparse`` type: an integer ``>= 1`` (else a one-line usage error).

    Example:
        >>> from botorch_mtucb.experiments.cli_types import positive_int
        >>> positive_int("3")
        3
    """
    return _int_at_least(text, 1)


def nonnegative_int(text: str) -> int:
    """An ``argparse`` type: an integer ``>= 0`` (else a one-line usage error).

    Example:
        >>> from botorch_mtucb.experiments.cli_types import nonnegative_int
        >>> nonnegative_int("0")
        0
    """
    return _int_at_least(text, 0)


def _int_at_least(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer >= {minimum}, got {text!r}"
        ) from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {value}")
    return value
