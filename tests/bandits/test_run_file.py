"""Run files: round numbers checked on reading, damage reported, nothing finished ever lost
(appends, atomic repairs, a full disk), and reading a finished run writes nothing."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import warnings
from dataclasses import asdict
from pathlib import Path

import pytest
import torch
from read_only import read_only
from tiny_problem import TinyProblem

from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
from botorch_mtucb.bandits import run_file as run_file_module
from botorch_mtucb.bandits.run_file import RunFile, RunFileWarning

HORIZON = 10
TESTS = Path(__file__).resolve().parents[1]


class CountingPolicy:
    """Random grid points; its diagnostics depend on every update it got, so a round
    replayed twice or skipped changes the records."""

    name = "counting"

    def __init__(self) -> None:
        self.points = TinyProblem().points
        self.total = 0.0
        self.num_updates = 0

    def select(self, context, generator):
        return self.points[int(torch.randint(len(self.points), (1,), generator=generator))]

    def update(self, x, y, context, generator):
        self.total += float(y.sum())
        self.num_updates += 1

    def diagnostics(self):
        return {"total": self.total, "num_updates": self.num_updates}


def run(horizon, path=None, replay_finished=True):
    environment = ScalarizedEnvironment(TinyProblem())
    return run_policy(
        CountingPolicy(), environment, horizon, seed=3, path=path, replay_finished=replay_finished
    )


def comparable(records):
    return [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in records]


@pytest.fixture(scope="module")
def reference():
    return comparable(run(HORIZON))


@pytest.fixture
def finished(tmp_path):
    """A finished run file and its lines (with their newlines)."""
    path = tmp_path / "rep0.jsonl"
    run(HORIZON, path)
    return path, path.read_text().splitlines(keepends=True)


def _no_warnings():
    context = warnings.catch_warnings()
    context.__enter__()
    warnings.simplefilter("error")
    return context


# ------------------------------------------------------------- round numbers (7)
def test_a_duplicated_round_is_refused_and_the_file_kept(finished):
    # The issue: a round line stored twice (valid JSON) was replayed twice and changed
    # the result. Now it is an error naming the file, the line and the round.
    path, lines = finished
    damaged = "".join(lines[:6] + [lines[5]] + lines[6:])  # round 5 again, as line 7
    path.write_text(damaged)
    for horizon in (HORIZON, 12):
        with pytest.raises(ValueError) as error:
            run(horizon, path)
        message = str(error.value)
        assert f"{path}, line 7: round 5 where round 6 belongs (round 5 is stored twice)" in message
        assert path.read_text() == damaged  # left for the user to look at
    # Another run's round 5 (other numbers), and a round missing, likewise.
    other = json.loads(lines[5])
    other["y"] = [0.0, 0.0]
    path.write_text("".join(lines[:6] + [json.dumps(other) + "\n"] + lines[6:]))
    with pytest.raises(ValueError, match="line 7: round 5 where round 6 belongs"):
        run(HORIZON, path)
    path.write_text("".join(lines[:6] + lines[7:]))
    with pytest.raises(
        ValueError, match="line 7: round 7 where round 6 belongs .round 6 is missing"
    ):
        run(HORIZON, path)


@pytest.mark.parametrize(
    "garbage", ("#!garbage\n", "[1, 2]\n", '{"t": "4"}\n', '{"t": 4, "x": [0.1]}\n', "\xff\n")
)
def test_a_garbage_line_in_the_middle_warns_and_is_recomputed(finished, reference, garbage):
    # The issue: a garbage line silently dropped every later round. Now a warning names
    # the file, the line and the rounds recomputed; the damaged file is kept.
    path, lines = finished
    damaged = "".join(lines[:4] + [garbage] + lines[5:])  # round 4 replaced
    path.write_text(damaged)
    with pytest.warns(RunFileWarning) as caught:
        records = run(HORIZON, path)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(f"{path}, line 5 is not a round (")
    assert "it and the 6 line(s) after it are set aside and rounds 4-10 recomputed" in message
    assert f"kept as {path}.damaged" in message
    assert comparable(records) == reference
    assert Path(f"{path}.damaged").read_text() == damaged
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    assert [row["t"] for row in stored[1:]] == list(range(1, HORIZON + 1))
    # A second repair keeps the first copy.
    path.write_text(damaged)
    with pytest.warns(RunFileWarning, match=r"kept as .*\.damaged-2\)"):
        assert comparable(run(HORIZON, path)) == reference


def test_a_torn_last_line_is_redone_silently(finished, reference):
    path, lines = finished
    for keep in (0, 3, 9):
        path.write_text("".join(lines[: 1 + keep]) + lines[1 + keep][:25])  # no newline
        context = _no_warnings()
        try:
            assert comparable(run(HORIZON, path)) == reference
        finally:
            context.__exit__(None, None, None)
        assert not list(path.parent.glob("*.damaged*"))
        assert path.read_text().startswith("".join(lines[: 1 + keep]))  # kept as they were
    # A last line complete but for its newline is kept, and the next round goes on a
    # line of its own.
    path.write_text("".join(lines[:5]).rstrip("\n"))
    assert comparable(run(HORIZON, path)) == reference
    assert [json.loads(line)["t"] for line in path.read_text().splitlines()[1:]] == list(
        range(1, HORIZON + 1)
    )


def test_a_garbage_header_names_the_file(finished, reference):
    path, lines = finished
    for header in ("garbage\n", '{"policy": "counting"}\n', '{"header": \n'):
        path.write_text(header + "".join(lines[1:]))
        with pytest.raises(ValueError) as error:
            run(HORIZON, path)
        assert f"{path}, line 1: the first line is not a run file's header" in str(error.value)
    # Interrupted while writing the header (its line is all there is): a new start.
    path.write_text(lines[0][:7])
    assert comparable(run(HORIZON, path)) == reference


# ------------------------------------------------------------ never truncate (8)
def test_resuming_appends_and_repairs_replace_atomically(tmp_path, reference):
    path = tmp_path / "rep0.jsonl"
    run(4, path)
    before, inode = path.read_bytes(), path.stat().st_ino
    assert comparable(run(HORIZON, path)) == reference
    assert path.stat().st_ino == inode  # the same file, appended to
    assert path.read_bytes().startswith(before)
    # A repair writes a new file and renames it over the old one, in one step.
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:6]) + lines[6][:10])
    inode = path.stat().st_ino
    assert comparable(run(HORIZON, path)) == reference
    assert path.stat().st_ino != inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep0.jsonl"]  # no temporary left


@pytest.mark.parametrize("damage", ("torn", "garbage"))
def test_a_failed_repair_leaves_the_file_as_it_was(finished, monkeypatch, damage):
    # A disk full while the kept rounds are rewritten: the original is untouched.
    path, lines = finished
    text = "".join(lines[:7]) + (lines[7][:20] if damage == "torn" else "garbage\n" + lines[8])
    path.write_text(text)

    def full_disk(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(run_file_module.os, "fsync", full_disk)
    with pytest.raises(OSError) as error:
        run(HORIZON, path)
    assert error.value.errno == errno.ENOSPC and error.value.filename == str(path)
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["rep0.jsonl"]


SCRIPT = """
import resource, sys
sys.path[:0] = [{tests!r}, {here!r}]
from test_run_file import run
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))  # Python ignores SIGXFSZ
run({horizon}, {path!r})
"""


def _run_with_file_size_limit(path, limit):
    script = SCRIPT.format(
        tests=str(TESTS), here=str(TESTS / "bandits"), limit=limit, horizon=HORIZON, path=str(path)
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(not hasattr(os, "fork"), reason="resource limits are POSIX")
def test_a_full_disk_during_a_resume_keeps_every_finished_round(finished, reference):
    # The issue: resuming rewrote each run file in place, so a disk that filled during
    # the rewrite erased finished rounds. A file size limit (RLIMIT_FSIZE) makes every
    # write past it fail with EFBIG, as a full disk fails with ENOSPC.
    path, lines = finished
    # (a) A sound file is appended to: the write of round 7 fails, rounds 1-6 stay.
    path.write_text("".join(lines[:6]))
    before = path.read_bytes()
    done = _run_with_file_size_limit(path, len(before) + len(lines[6]) // 2)
    assert done.returncode != 0 and "File too large" in done.stderr and str(path) in done.stderr
    assert path.read_bytes().startswith(before)
    assert comparable(run(HORIZON, path)) == reference  # the next run completes it
    # (b) A torn file is rewritten into a temporary file: that write fails, and the
    # original is left as it was.
    text = "".join(lines[:9]) + lines[9][:30]
    path.write_text(text)
    done = _run_with_file_size_limit(path, len(text) // 2)
    assert done.returncode != 0 and "File too large" in done.stderr
    assert path.read_text() == text
    assert comparable(run(HORIZON, path)) == reference


# ---------------------------------------------------------- reading writes nothing (9)
def test_reading_a_finished_run_writes_nothing(finished, reference):
    path, lines = finished
    # A cut-short line after the rounds asked for needs no repair to read them.
    path.write_text("".join(lines) + '{"t": 11, "x"')
    with read_only(path.parent) as attempts:
        for replay in (True, False):
            assert comparable(run(HORIZON, path, replay_finished=replay)) == reference
        assert comparable(run(5, path)) == reference[:5]
        assert attempts == []  # nothing even tried to write
        # A run that needs a round more cannot be written: the error names the file.
        with pytest.raises(PermissionError) as error:
            run(HORIZON + 2, path)
        assert error.value.filename == str(path)
        assert attempts  # (it tried, and was refused)
    assert path.read_text().endswith('{"t": 11, "x"')


def test_run_file_api(tmp_path):
    path = tmp_path / "sub" / "rep0.jsonl"
    run_file = RunFile(path, {"policy": "p", "seed": 0})
    assert run_file.read() == [] and not path.exists()  # reading creates nothing
    record = run(1)[0]
    with pytest.raises(RuntimeError, match="inside"):
        run_file.append(record)
    with run_file.appending(horizon=1):
        run_file.append(record)
        with pytest.raises(ValueError, match="round 1 cannot follow round 1"):
            run_file.append(record)
    assert [asdict(r) for r in RunFile(path, {"policy": "p", "seed": 0}).read()] == [asdict(record)]
    with pytest.raises(ValueError, match="different run"):
        RunFile(path, {"policy": "q", "seed": 0}).read()


@pytest.mark.parametrize(
    "change",
    (
        {"regret": float("nan")},
        {"regret": float("inf")},
        {"y": [float("nan")]},
        {"x": [0.1, 0.2, 0.3]},  # another length than round 1's
        {"y": [0.0, 1.0, 2.0, 3.0, 4.0]},
        {"x": [float("nan")]},
    ),
)
def test_a_round_with_non_finite_or_misshapen_values_is_recomputed(finished, reference, change):
    """From the fresh-user pass: a round holding NaN, or an x / y of the wrong length, was
    accepted (NaN regrets reached the summary; a wrong x failed deep in torch). It is now
    damage like a garbage line: named, kept aside and recomputed."""
    path, lines = finished
    row = {**json.loads(lines[4]), **change}  # round 4
    path.write_text("".join(lines[:4] + [json.dumps(row) + "\n"] + lines[5:]))
    with pytest.warns(RunFileWarning, match=f"{path}, line 5 is not a round"):
        records = run(HORIZON, path)
    assert comparable(records) == reference
