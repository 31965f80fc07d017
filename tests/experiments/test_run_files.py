"""Run files under real faults, through the command line: two runs at once, SIGTERM, a
duplicated or garbage line, a full disk, a read-only output directory."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from botorch_mtucb.experiments import cli

BANDIT_TESTS = Path(__file__).resolve().parents[1] / "bandits"
sys.path.insert(0, str(BANDIT_TESTS))
from read_only import chmod_tree, read_only  # noqa: E402

ARGV = ["reproduce", "000-sine", "--quick", "--no-progress", "--output"]
RUN_FILE = "runs/MT-KB/rep0.jsonl"


def command(output):
    return [sys.executable, "-m", "botorch_mtucb", *ARGV, str(output)]


def rounds(output):
    """Every run file's rounds, without their timings: relative path -> rows."""
    found = {}
    for path in sorted(Path(output).rglob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row.pop("seconds", None)
        found[path.relative_to(output).as_posix()] = rows
    return found


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run: its directory and what it printed."""
    output = tmp_path_factory.mktemp("reference") / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert cli.main([*ARGV, str(output)]) == 0
    return output, printed.getvalue()


@pytest.fixture
def copy(reference, tmp_path):
    """A copy of the reference run to damage."""
    output = tmp_path / "out"
    shutil.copytree(reference[0], output)
    return output


def _lines(path):
    return path.read_text().splitlines(keepends=True)


# -------------------------------------------------------------- two runs (6)
@pytest.mark.slow
def test_two_runs_at_once_do_not_mix_their_rounds(tmp_path, reference):
    # The issue: two processes on one --output both ran; 13 of 15 run files ended with
    # duplicated or interleaved rounds. Now the second is refused at once.
    output = tmp_path / "out"
    first = subprocess.Popen(command(output), stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen(command(output), stderr=subprocess.PIPE, text=True)
    results = [(p.wait(timeout=300), p.stderr.read()) for p in (first, second)]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 1], [0, 0])  # [0, 0]: one ended before the other started
    for code, err in results:
        if code == 1:
            assert err.startswith(f"error: {output} is in use by another run (pid ")
            assert "Traceback" not in err
    assert rounds(output) == rounds(reference[0])


def test_a_held_directory_is_refused_with_the_holder(tmp_path):
    output = tmp_path / "out"
    hold = "import sys\nfrom botorch_mtucb.experiments.output_lock import locked_output\n"
    hold += "with locked_output(sys.argv[1]):\n    print('locked', flush=True)\n    input()\n"
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(output)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert cli.main([*ARGV, str(output)]) == 1
        message = err.getvalue()
        assert message.startswith(f"error: {output} is in use by another run (pid {holder.pid}")
        assert "locked_output" in message  # its command line
    finally:
        holder.kill()
        holder.wait()


# ------------------------------------------------------------------ SIGTERM (9)
@pytest.mark.slow
def test_sigterm_saves_the_rounds_and_resumes_exactly(tmp_path, reference):
    output = tmp_path / "out"
    run = subprocess.Popen(command(output), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while not (output / "runs" / "MT-KB" / "rep1.jsonl").exists():  # 5 of 15 runs done
        assert run.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=120)
    err = err.decode()
    assert run.returncode == 143
    assert "interrupted: the rounds done so far are saved in" in err
    assert "run the same command again to resume" in err and "Traceback" not in err
    saved = {p: p.read_text() for p in output.rglob("*.jsonl")}
    assert len(saved) >= 6
    assert cli.main([*ARGV, str(output)]) == 0  # resume
    assert rounds(output) == rounds(reference[0])
    for path, text in saved.items():  # every finished round kept as it was (its timing too)
        complete = text[: text.rfind("\n") + 1]
        assert path.read_text().startswith(complete)


def test_sigterm_handler_exit_code_and_restore(tmp_path, monkeypatch, capsys):
    def terminated(*args, **kwargs):
        signal.raise_signal(signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(cli, "run_experiment", terminated)
    assert cli.main(["run", "--output", str(tmp_path / "x")]) == 143
    assert "run the same command again to resume" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before


# ---------------------------------------------------------- damaged lines (7)
def test_a_duplicated_round_is_an_error_naming_file_and_line(copy, reference, capsys):
    # The issue: a duplicated round line (valid JSON) was accepted and changed the
    # result (MT-KB 2.9020 -> 2.9154).
    path = copy / RUN_FILE
    lines = _lines(path)
    path.write_text("".join(lines[:21] + [lines[20]] + lines[21:]))  # round 20 twice
    assert cli.main([*ARGV, str(copy)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}, line 22: round 20 where round 21 belongs")
    assert "(round 20 is stored twice)" in err


def test_a_garbage_line_is_reported_and_recomputed(copy, reference, capsys):
    path = copy / RUN_FILE
    lines = _lines(path)
    path.write_text("".join(lines[:30] + ["\x00\x00 garbage\n"] + lines[31:]))  # round 30
    assert cli.main([*ARGV, str(copy)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"warning: {path}, line 31 is not a round (not JSON")
    assert "rounds 30-60 recomputed" in err[0] and f"kept as {path}.damaged" in err[0]
    assert rounds(copy) == rounds(reference[0])
    summary = json.loads((copy / "summary.json").read_text())["problems"]
    expected = json.loads((reference[0] / "summary.json").read_text())["problems"]
    for problem, entry in expected.items():
        for method, numbers in entry["methods"].items():
            got = summary[problem]["methods"][method]
            assert got["cumulative_regret_mean"] == numbers["cumulative_regret_mean"]


# ---------------------------------------------------------------- full disk (8)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="resource limits are POSIX")
def test_a_full_disk_during_a_resume_loses_no_round(copy, reference):
    # The issue: a disk filling during a resume erased 49 of 60 finished rounds, because
    # resuming rewrote each run file in place. RLIMIT_FSIZE makes every write past the
    # limit fail (EFBIG), as a full disk does (ENOSPC).
    path = copy / RUN_FILE
    lines = _lines(path)
    text = "".join(lines[:50]) + lines[50][:40]  # 49 rounds and a torn line: a repair
    path.write_text(text)
    limit = len(text) // 2

    def limited():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        command(copy), capture_output=True, text=True, preexec_fn=limited, timeout=300
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: [Errno 27] File too large: '{path}'")
    assert "run the same command again to resume" in done.stderr
    assert path.read_text() == text  # all 49 rounds still there
    assert cli.main([*ARGV, str(copy)]) == 0
    assert rounds(copy) == rounds(reference[0])


# ---------------------------------------------------------------- read-only (9)
def test_a_finished_run_in_a_read_only_directory_prints_its_results(copy, reference):
    # The issue: reading a finished run back rewrote every run file, so a read-only
    # directory gave a raw PermissionError traceback.
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in copy.rglob("*") if p.is_file()}
    script = (
        f"import sys; sys.path.insert(0, {str(BANDIT_TESTS)!r})\n"
        "from read_only import protect_and_run_cli\n"
        f"protect_and_run_cli({str(copy)!r}, {[*ARGV, str(copy)]!r})\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
        )
    finally:
        chmod_tree(copy, remove=False)
    assert done.returncode == 0, done.stderr
    # The same tables; "results written to ..." only where they were written.
    written = f"results written to {reference[0]}\n"
    assert reference[1].endswith(written)
    assert done.stdout == reference[1].removesuffix(written).replace(str(reference[0]), str(copy))
    err = done.stderr.splitlines()
    assert len(err) == 1, done.stderr
    assert err[0] == (
        "warning: could not write curves.csv, average_cumulative_regret.png, bayes_regret.png, "
        f"summary.json in {copy} (Permission denied); the results printed are complete "
        "(computed from its run files)"
    )
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in copy.rglob("*") if p.is_file()}
    assert after == before


def test_an_unfinished_run_in_a_read_only_directory_names_the_file(copy, capsys):
    path = copy / "runs" / "IT-KB" / "rep2.jsonl"
    path.write_text("".join(_lines(path)[:40]))
    with read_only(copy):
        assert cli.main([*ARGV, str(copy)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: [Errno 13] Permission denied: '{path}'")
    assert "run the same command again to resume" in err
