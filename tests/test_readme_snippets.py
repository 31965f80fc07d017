"""Every ```python block of README.md runs as pasted: each in a fresh, empty namespace, as a
user pastes it into a new interpreter (so each snippet imports and defines what it uses).

A block preceded by the line ``<!-- not-run -->`` is skipped; the README says why next to
it. The snippets are kept small (the whole file takes well under a minute on one core).
"""

from __future__ import annotations

import logging
import re
import signal
from pathlib import Path

import pytest
import torch

README = Path(__file__).resolve().parents[1] / "README.md"
NOT_RUN = "<!-- not-run -->"
TIMEOUT_S = 40  # per snippet; each takes a few seconds


def _snippets() -> list:
    text = README.read_text(encoding="utf-8")
    params, seen = [], {}
    for match in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        if text[: match.start()].rstrip().endswith(NOT_RUN):
            continue
        line = text.count("\n", 0, match.start()) + 2  # the snippet's first line
        heading = re.findall(r"^#+ (.+)$", text[: match.start()], re.M)[-1]
        name = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}-{seen[name]}"
        params.append(pytest.param(match.group(1), line, id=name))
    return params


SNIPPETS = _snippets()


def test_readme_has_snippets():
    assert len(SNIPPETS) >= 7, f"found {len(SNIPPETS)} ```python blocks in README.md"


def _timeout(signum, frame):
    raise TimeoutError(f"a README snippet ran longer than {TIMEOUT_S} s")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("code", "line"), SNIPPETS)
def test_snippet_runs_as_pasted(code, line, tmp_path, monkeypatch, capfd):
    if re.search(r"^(from|import) ax\b", code, re.M):
        pytest.importorskip("ax")
    monkeypatch.chdir(tmp_path)  # anything a snippet writes goes to a temporary folder
    torch.manual_seed(0)
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(TIMEOUT_S)
    try:
        exec(compile(code, f"README.md, line {line}", "exec"), {"__name__": "__main__"})
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        logging.disable(logging.NOTSET)  # the Ax snippet silences INFO logging
    assert "[INFO" not in capfd.readouterr().err, "a snippet printed log lines (INFO)"
