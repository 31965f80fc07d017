"""The command line: `run`, `reproduce`, `list`, bad names, resumption, one-line errors
and warnings."""

import csv
import errno
import json
import os
import signal
import time
import warnings

import pytest

from botorch_mtucb.bandits.run_file import RunFileWarning
from botorch_mtucb.experiments import cli
from botorch_mtucb.experiments.paper000 import experiments as paper000
from botorch_mtucb.experiments.paper000.scalarized import Setting
from botorch_mtucb.experiments.run_directory import UnwrittenFilesWarning
from botorch_mtucb.experiments.summary import check_summary


@pytest.fixture
def tiny_sensor(monkeypatch):
    monkeypatch.setattr(paper000, "SENSOR_SETTING", Setting(6, 2, 4, 1))


def test_list_names_every_experiment(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("000-rkhs-2", "000-rkhs-20", "000-sine", "000-branin", "000-sensor"):
        assert name in out


def test_unknown_experiment_is_refused(capsys):
    with pytest.raises(SystemExit) as error:
        cli.main(["reproduce", "no-such-experiment"])
    assert error.value.code == 2
    assert "no-such-experiment" in capsys.readouterr().err


def test_unknown_option_is_refused(tmp_path, capsys):
    code = cli.main(["reproduce", "000-sine", "--data", "x.npz", "--output", str(tmp_path)])
    assert code == 2
    assert "takes no option" in capsys.readouterr().err


def test_run_writes_summary_curves_and_plots_and_resumes(tmp_path, tiny_sensor, capsys):
    output = tmp_path / "run"
    assert cli.main(["run", "--output", str(output), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "MT-KB" in printed and "IT-KB" in printed and "MT-CMM-UCB" in printed
    assert "R_C(T)/T" in printed and "R_B" not in printed
    summary = json.loads((output / "summary.json").read_text())
    check_summary(summary)
    assert summary["experiment"] == "sensor-main"
    assert summary["settings"]["horizon"] == 6 and summary["settings"]["repetitions"] == 2
    methods = summary["problems"]["sensor"]["methods"]
    assert set(methods) == {"MT-KB", "IT-KB", "MT-CMM-UCB"}
    # The main job leaves the Bayes regret to 000-bayes-regret (0 on the 41 locations).
    keys = {"cumulative_regret_mean", "cumulative_regret_std", "seconds_per_step"}
    for entry in methods.values():
        assert set(entry) == keys
        assert entry["cumulative_regret_mean"] >= 0 and entry["seconds_per_step"] > 0
    with (output / "curves.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 * 6
    # The CSV's last cumulative regret equals the summary's mean.
    last = [r for r in rows if r["method"] == "MT-KB" and r["t"] == "6"][0]
    assert float(last["cumulative_regret_mean"]) == pytest.approx(
        methods["MT-KB"]["cumulative_regret_mean"], rel=1e-8
    )
    assert (output / "cumulative_regret.png").stat().st_size > 1000
    assert sorted(p.name for p in output.glob("*.png")) == ["cumulative_regret.png"]
    assert "bayes_regret_mean" not in rows[0]
    runs = sorted(p.relative_to(output).as_posix() for p in (output / "runs").rglob("*.jsonl"))
    assert runs == [
        "runs/IT-KB/rep0.jsonl",
        "runs/IT-KB/rep1.jsonl",
        "runs/MT-CMM-UCB/rep0.jsonl",
        "runs/MT-CMM-UCB/rep1.jsonl",
        "runs/MT-KB/rep0.jsonl",
        "runs/MT-KB/rep1.jsonl",
    ]
    # Interrupt one run (drop its last two rounds and tear a line): a rerun completes it
    # and reproduces the same numbers.
    path = output / "runs" / "MT-KB" / "rep1.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-2]) + '\n{"t": 5, "x": [0.1')
    assert cli.main(["run", "--output", str(output), "--no-progress"]) == 0
    again = json.loads((output / "summary.json").read_text())["problems"]["sensor"]["methods"]
    for method in ("MT-KB", "IT-KB", "MT-CMM-UCB"):
        assert again[method]["cumulative_regret_mean"] == pytest.approx(
            methods[method]["cumulative_regret_mean"]
        )


def test_output_must_be_a_directory(tmp_path, capsys):
    path = tmp_path / "a_file"
    path.write_text("x")
    assert cli.main(["reproduce", "000-sine", "--quick", "--output", str(path)]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_a_directory_of_another_run_is_refused(tmp_path, tiny_sensor, capsys):
    output = tmp_path / "run"
    assert cli.main(["run", "--output", str(output), "--no-progress"]) == 0
    # The same directory for another experiment, or another mode, would mix two runs.
    assert cli.main(["reproduce", "000-sine", "--quick", "--output", str(output)]) == 2
    assert "holds results of another run" in capsys.readouterr().err
    assert cli.main(["reproduce", "sensor-main", "--quick", "--output", str(output)]) == 2


def test_another_data_file_is_refused(tmp_path):
    from botorch_mtucb.experiments.registry import run_settings

    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    first.write_bytes(b"one")
    second.write_bytes(b"two")
    a = run_settings("001-mhc-online", True, {"data": str(first)})
    b = run_settings("001-mhc-online", True, {"data": str(first)})
    second.rename(first.with_name("c.npz"))
    first.write_bytes(b"changed")
    c = run_settings("001-mhc-online", True, {"data": str(first)})
    assert a == b and a != c  # same path, other content: another run
    # The same content under another path or spelling is the same run.
    copy = tmp_path / "sub" / "copy.npz"
    copy.parent.mkdir()
    copy.write_bytes(b"changed")
    relative = tmp_path / "sub" / ".." / "a.npz"
    assert run_settings("001-mhc-online", True, {"data": str(copy)}) == c
    assert run_settings("001-mhc-online", True, {"data": str(relative)}) == c


def test_unreadable_settings_file_and_empty_output(tmp_path, capsys):
    output = tmp_path / "run"
    output.mkdir()
    (output / "experiment.json").write_text("{not json")
    assert cli.main(["reproduce", "000-sine", "--quick", "--output", str(output)]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert cli.main(["reproduce", "000-sine", "--quick", "--output", ""]) == 2
    assert "empty string" in capsys.readouterr().err


def test_a_failed_start_leaves_no_directory(tmp_path, capsys):
    output = tmp_path / "never"
    code = cli.main(
        ["reproduce", "000-sine", "--quick", "--data", "x.npz", "--output", str(output)]
    )
    assert code == 2 and "data" in capsys.readouterr().err
    assert not output.exists()


def test_interrupt_says_how_to_resume(tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_experiment", interrupted)
    assert cli.main(["run", "--output", str(tmp_path / "x")]) == 130
    assert "run the same command again to resume" in capsys.readouterr().err


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_run_even_where_it_was_ignored(
    tmp_path, monkeypatch, capsys, signum, code
):
    # A non-interactive shell starts `command &` with SIGINT ignored, and Python keeps it
    # ignored: before the fix `kill -INT` did nothing and the run went on to exit 0.
    steps = []

    def run(*args, **kwargs):
        os.kill(os.getpid(), signum)
        for step in range(200):  # the handler runs in this (the main) thread, between steps
            steps.append(step)
            time.sleep(0.01)

    monkeypatch.setattr(cli, "run_experiment", run)
    previous = signal.signal(signum, signal.SIG_IGN)
    try:
        assert cli.main(["run", "--output", str(tmp_path / "x")]) == code
        assert signal.getsignal(signum) is signal.SIG_IGN  # the caller's handler is back
    finally:
        signal.signal(signum, previous)
    assert len(steps) < 200
    assert "run the same command again to resume" in capsys.readouterr().err


def test_a_file_that_cannot_be_written_is_one_error_line(tmp_path, monkeypatch, capsys):
    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "/x/runs/MT-KB/rep0.jsonl")

    monkeypatch.setattr(cli, "run_experiment", full_disk)
    assert cli.main(["run", "--output", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: [Errno 28] No space left on device: '/x/runs/MT-KB/rep0.jsonl'")
    assert "run the same command again to resume" in err


def test_the_package_warnings_are_one_line_each(tmp_path, monkeypatch, capsys):
    def warns(*args, **kwargs):
        warnings.warn("runs/A/rep0.jsonl, line 5 is not a round", RunFileWarning, stacklevel=2)
        warnings.warn("could not write summary.json", UnwrittenFilesWarning, stacklevel=2)

    monkeypatch.setattr(cli, "run_experiment", warns)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert cli.main(["run", "--output", str(tmp_path / "x")]) == 0
    assert capsys.readouterr().err == (
        "warning: runs/A/rep0.jsonl, line 5 is not a round\nwarning: could not write summary.json\n"
    )
