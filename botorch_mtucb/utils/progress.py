"""Progress bars that suit where stderr goes: a tqdm bar on a terminal, a few plain lines
in a log.

A bar redraws itself in place on a terminal. Written to a file or a pipe (a log, CI),
every redraw is text of its own, and nested bars add cursor moves: a long run fills a
log with bars. ``progress_bar`` gives a tqdm bar when its stream is a terminal, and a
``LogProgress`` otherwise, which prints one plain line ``desc: n/total (p%), elapsed``
at most every ``interval`` seconds and one when it closes (if kept: ``leave``). Both
take tqdm's calls that the package uses (``update``, ``set_postfix_str``, ``refresh``,
``close``, ``total``).
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from tqdm import tqdm  # text bars everywhere: ipywidgets is not a dependency

LOG_INTERVAL = 10.0  # seconds between two lines of a bar in a log


def on_terminal(file: TextIO | None = None) -> bool:
    """Whether ``file`` (default: ``sys.stderr``) is a terminal, where a bar can redraw
    in place; ``False`` for files, pipes, closed or replaced streams.

    Example:
        >>> import io
        >>> from botorch_mtucb.utils.progress import on_terminal
        >>> on_terminal(io.StringIO())
        False
    """
    file = sys.stderr if file is None else file
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class LogProgress:
    """A progress count for logs: one line ``desc: n/total (p%), elapsed[, postfix]``
    after an ``update`` at least ``interval`` seconds after the previous line (every
    update with ``interval=0``), and one at ``close`` when ``leave`` and the count moved
    since the last line. Nothing else is written: no carriage returns, no cursor moves.

    Args:
        total: The count at the end (``None`` or 0: unknown; may be raised later by
            assigning ``total``).
        desc: The name at the start of each line.
        initial: The count already done.
        unit: What is counted, after the total (``"it"``: not printed).
        disable: Print nothing.
        leave: Print the last count at ``close``.
        interval: Seconds at least between two lines of ``update``, ``>= 0``.
        file: Where the lines go (default: ``sys.stderr`` at the time of writing).

    Raises:
        ValueError: If ``interval`` is negative.

    Example:
        >>> import sys
        >>> from botorch_mtucb.utils.progress import LogProgress
        >>> bar = LogProgress(total=4, desc="runs", interval=0, file=sys.stdout)
        >>> bar.set_postfix_str("MT-KB rep 0")
        >>> bar.update(1)  # doctest: +ELLIPSIS
        runs: 1/4 (25%), ... s, MT-KB rep 0
        >>> bar.close()  # the last count is printed already
    """

    def __init__(
        self,
        total: float | None = None,
        desc: str = "",
        *,
        initial: float = 0,
        unit: str = "it",
        disable: bool = False,
        leave: bool = True,
        interval: float = LOG_INTERVAL,
        file: TextIO | None = None,
    ) -> None:
        if not interval >= 0:
            raise ValueError(f"interval must be >= 0 seconds, got {interval}")
        self.total = total
        self.desc = desc
        self.n = initial
        self.unit = unit
        self.disable = disable
        self.leave = leave
        self.interval = interval
        self.file = file
        self.postfix = ""
        self._start = self._last_line = time.monotonic()
        self._printed_n = initial

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def update(self, n: float = 1) -> None:
        """Count ``n`` more; print a line if ``interval`` seconds passed since the last.

        Example:
            >>> from botorch_mtucb.utils.progress import LogProgress
            >>> bar = LogProgress(total=100, desc="rounds", interval=3600)
            >>> bar.update(5)  # within the interval: nothing printed
            >>> bar.n
            5
        """
        self.n += n
        if time.monotonic() - self._last_line >= self.interval:
            self._line()

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Show ``s`` at the end of the next lines (``refresh`` is tqdm's argument: a log
        prints no line for a new postfix).

        Example:
            >>> from botorch_mtucb.utils.progress import LogProgress
            >>> bar = LogProgress(total=2, desc="runs")
            >>> bar.set_postfix_str("IT-KB rep 1")
            >>> bar.postfix
            'IT-KB rep 1'
        """
        self.postfix = s

    def refresh(self) -> None:
        """Nothing (tqdm redraws its bar here; a log waits for the next ``update``).

        Example:
            >>> from botorch_mtucb.utils.progress import LogProgress
            >>> LogProgress(total=2).refresh()
        """

    def close(self) -> None:
        """Print the last count (when ``leave`` and it moved since the last line); later
        calls print nothing.

        Example:
            >>> import sys
            >>> from botorch_mtucb.utils.progress import LogProgress
            >>> bar = LogProgress(total=3, desc="units", unit="round", file=sys.stdout)
            >>> bar.update(3)
            >>> bar.close()  # doctest: +ELLIPSIS
            units: 3/3 round (100%), ... s
            >>> bar.close()
        """
        if self.leave and self.n != self._printed_n:
            self._line()
        self.disable = True

    def _line(self) -> None:
        if self.disable:
            return
        count = _number(self.n)
        if self.total:
            count += f"/{_number(self.total)}"
        if self.unit != "it":
            count += f" {self.unit}"
        if self.total:
            count += f" ({self.n / self.total:.0%})"
        parts = [count, f"{time.monotonic() - self._start:.0f} s"]
        if self.postfix:
            parts.append(self.postfix)
        name = f"{self.desc}: " if self.desc else ""
        file = sys.stderr if self.file is None else self.file
        print(name + ", ".join(parts), file=file, flush=True)
        self._last_line = time.monotonic()
        self._printed_n = self.n


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


def progress_bar(
    total: float | None = None,
    desc: str = "",
    *,
    initial: float = 0,
    unit: str = "it",
    disable: bool = False,
    leave: bool = True,
    interval: float = LOG_INTERVAL,
    file: TextIO | None = None,
    **tqdm_options: Any,
) -> tqdm | LogProgress:
    """A progress bar on ``file`` (default: ``sys.stderr``): tqdm's bar when ``file`` is a
    terminal (``on_terminal``), else a ``LogProgress`` with the same count, printing a line
    at most every ``interval`` seconds (``interval=0``: a line per ``update``, as for a bar
    counting finished units).

    Args:
        total, desc, initial, unit, disable, leave: As tqdm's.
        interval: Seconds at least between two lines in a log, ``>= 0``.
        file: The stream of the bar.
        tqdm_options: More of tqdm's options (on a terminal only, e.g. ``smoothing``).

    Raises:
        ValueError: If ``interval`` is negative.

    Example:
        >>> import io
        >>> from botorch_mtucb.utils.progress import progress_bar
        >>> log = io.StringIO()  # not a terminal: a line per update with interval=0
        >>> with progress_bar(total=2, desc="runs", interval=0, file=log) as bar:
        ...     for _ in range(2):
        ...         bar.update(1)
        >>> [line.split(",")[0] for line in log.getvalue().splitlines()]
        ['runs: 1/2 (50%)', 'runs: 2/2 (100%)']
    """
    if on_terminal(sys.stderr if file is None else file):
        if not interval >= 0:
            raise ValueError(f"interval must be >= 0 seconds, got {interval}")
        return tqdm(
            total=total,
            desc=desc,
            initial=initial,
            unit=unit,
            disable=disable,
            leave=leave,
            file=file,
            **tqdm_options,
        )
    return LogProgress(
        total,
        desc,
        initial=initial,
        unit=unit,
        disable=disable,
        leave=leave,
        interval=interval,
        file=file,
    )


__all__ = ["LOG_INTERVAL", "LogProgress", "on_terminal", "progress_bar"]
