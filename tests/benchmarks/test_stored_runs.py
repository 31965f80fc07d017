"""The run-file machinery of the stored benchmarks: settings read back, jobs in order on a
pool (a failing job propagates its exception), the output directory and the exit codes."""

from __future__ import annotations

import argparse
import json
import math
from types import SimpleNamespace

import pytest

from botorch_mtucb.benchmarks.stored_runs import (
    interrupted,
    output_directory,
    report_failures,
    results_in_order,
    stored_settings,
)


def test_stored_settings_reads_only_a_dict(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"settings": {"iterations": 3}}))
    assert stored_settings(path) == {"iterations": 3}
    for text in ("[1, 2]", '{"settings": [1]}', "{broken"):
        path.write_text(text)
        assert stored_settings(path) is None


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_in_order(workers):
    arguments = [(float(x),) for x in (4, 1, 9, 16)]
    assert list(results_in_order(math.sqrt, arguments, workers)) == [2.0, 1.0, 3.0, 4.0]


def test_a_failing_job_raises_on_the_pool():
    with pytest.raises(ValueError, match="math domain error"):
        list(results_in_order(math.sqrt, [(1.0,), (-1.0,), (4.0,)], workers=2))


def test_output_directory_and_exit_codes(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    assert output_directory(parser, str(tmp_path / "a" / "b")).is_dir()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit):
        output_directory(parser, str(blocker / "below"))
    assert "cannot create the directory" in capsys.readouterr().err
    (tmp_path / "x.json").write_text("{}")
    assert interrupted(tmp_path) == 130
    assert "1 run file(s)" in capsys.readouterr().err
    failed = SimpleNamespace(problem="p", method="m", seed=1, error="Traceback: boom")
    assert report_failures([SimpleNamespace(error=None), failed]) == 1
    assert "p m seed 1 raised:\nTraceback: boom" in capsys.readouterr().err
