"""The command lines' argument types (``experiments.cli_types``)."""

from __future__ import annotations

import argparse

import pytest

from botorch_mtucb.experiments.cli_types import nonnegative_int, positive_int


def test_integer_types_accept_their_range_and_give_one_line_usage_errors():
    assert positive_int("1") == 1 and positive_int("12") == 12
    assert nonnegative_int("0") == 0 and nonnegative_int("7") == 7
    for check, minimum, below in ((positive_int, 1, "0"), (nonnegative_int, 0, "-1")):
        with pytest.raises(
            argparse.ArgumentTypeError, match=rf"^expected an integer >= {minimum}, got {below}$"
        ):
            check(below)
        for text in ("1.5", "x", ""):
            with pytest.raises(
                argparse.ArgumentTypeError, match=rf"^expected an integer >= {minimum}, got '"
            ):
                check(text)
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=positive_int)
    assert parser.parse_args(["--seeds", "3"]).seeds == 3
