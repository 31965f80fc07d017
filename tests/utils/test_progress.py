"""Progress bars: tqdm's bar on a terminal; in a log, a plain line at most every
``interval`` seconds and one at the end, with no carriage returns or cursor moves."""

from __future__ import annotations

import io

import pytest
from tqdm import tqdm

from botorch_mtucb.utils.progress import LogProgress, on_terminal, progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_tqdm_and_a_log_gets_lines():
    terminal = Terminal()
    bar = progress_bar(total=3, desc="runs", file=terminal)
    assert isinstance(bar, tqdm) and on_terminal(terminal)
    bar.close()
    log = io.StringIO()
    assert isinstance(progress_bar(total=3, file=log), LogProgress) and not on_terminal(log)
    closed = io.StringIO()
    closed.close()
    assert not on_terminal(closed)


def test_a_log_gets_a_line_per_interval_and_one_at_the_end():
    log = io.StringIO()
    with progress_bar(total=10_000, desc="rounds", unit="round", file=log) as bar:
        for _ in range(10_000):  # ten thousand updates within the interval
            bar.update(1)
    assert log.getvalue().splitlines() == [log.getvalue().strip()]
    assert log.getvalue().startswith("rounds: 10000/10000 round (100%), ")
    assert "\r" not in log.getvalue() and "\x1b" not in log.getvalue()


def test_interval_zero_is_a_line_per_update_and_the_postfix_is_the_latest():
    log = io.StringIO()
    bar = progress_bar(total=3, desc="runs", interval=0, file=log)
    for name in ("A", "B", "C"):
        bar.set_postfix_str(f"{name} rep 0")
        bar.update(1)
    bar.close()
    lines = log.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "runs: 1/3 (33%)",
        "runs: 2/3 (67%)",
        "runs: 3/3 (100%)",
    ]
    assert lines[-1].endswith(", C rep 0")


def test_unknown_total_disabled_and_not_left_bars():
    log = io.StringIO()
    bar = progress_bar(desc="units", interval=0, file=log)  # no total yet
    bar.update(2)
    bar.total = 4
    bar.update(2)
    assert log.getvalue().splitlines()[0].startswith("units: 2, ")
    assert log.getvalue().splitlines()[1].startswith("units: 4/4 (100%), ")
    quiet = io.StringIO()
    for bar in (
        progress_bar(total=2, disable=True, interval=0, file=quiet),
        progress_bar(total=2, leave=False, file=quiet),  # gone at the end, as tqdm's
    ):
        bar.update(2)
        bar.close()
    assert quiet.getvalue() == ""


def test_a_negative_interval_is_refused():
    with pytest.raises(ValueError, match="interval must be >= 0"):
        progress_bar(total=1, interval=-1.0, file=io.StringIO())
    with pytest.raises(ValueError, match="interval must be >= 0"):
        progress_bar(total=1, interval=-1.0, file=Terminal())
