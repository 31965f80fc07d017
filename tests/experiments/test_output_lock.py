"""The lock on an output directory: a second process (or thread) is refused at once with
the holder's pid, host, start time and command; a killed holder blocks nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
import torch

from botorch_mtucb.bandits import RandomPolicy
from botorch_mtucb.experiments.output_lock import (
    HOLDER_FILE,
    LOCK_FILE,
    OutputLockedError,
    locked_output,
    read_holder,
)
from botorch_mtucb.experiments.registry import run_experiment
from botorch_mtucb.experiments.runs import Method, run_methods
from botorch_mtucb.problems import KernelBanditEnvironment, RKHSTestFunction, make_kernel

HOLD = """
import sys
from botorch_mtucb.experiments.output_lock import locked_output
with locked_output(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def holder(tmp_path):
    """Another process holding the lock on ``tmp_path / "out"`` until its stdin closes."""
    output = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(output), "--marker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline() == "locked\n"
    yield output, process
    if process.poll() is None:
        process.kill()
    process.wait()


def _methods():
    kernel = make_kernel("rbf", 0.5)
    f = RKHSTestFunction.sample(kernel, 2, 1.0, generator=torch.Generator().manual_seed(0))
    return [
        Method(
            "Random", lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10)
        )
    ]


def _refused(call, output, process):
    start = time.monotonic()
    with pytest.raises(OutputLockedError) as error:
        call()
    assert time.monotonic() - start < 5  # at once, no waiting for the holder
    message = str(error.value)
    assert message.startswith(f"{output} is in use by another run (pid {process.pid} on ")
    assert socket.gethostname() in message and "--marker" in message  # its command line
    assert error.value.holder["pid"] == process.pid
    assert error.value.holder["started"][:4].isdigit()  # an ISO time
    return message


def test_a_second_process_is_refused_at_once(holder):
    # The issue: two processes on one output both ran and interleaved their rounds.
    output, process = holder
    _refused(lambda: run_methods(_methods(), 3, 1, output, progress=False), output, process)
    _refused(
        lambda: run_experiment("000-sine", output, quick=True, progress=False), output, process
    )
    assert not (output / "runs").exists()  # nothing was written
    assert not (output / "experiment.json").exists()
    process.stdin.close()  # the holder ends: the directory is free
    process.wait(timeout=30)
    assert read_holder(output) is None  # it removed its record
    results = run_methods(_methods(), 3, 1, output, progress=False)
    assert results["Random"].curves["cumulative_regret"].shape == (1, 3)


def test_a_killed_holder_blocks_nothing(holder):
    output, process = holder
    process.send_signal(signal.SIGKILL)  # no clean-up: its record stays behind
    process.wait(timeout=30)
    assert read_holder(output)["pid"] == process.pid
    with locked_output(output):  # the OS lock ended with the process
        assert read_holder(output)["pid"] == os.getpid()  # the stale record replaced
    assert read_holder(output) is None


def test_a_stale_record_alone_does_not_block(tmp_path):
    output = tmp_path / "out"
    output.mkdir()
    stale = {"pid": 999999999, "host": socket.gethostname(), "started": "x", "command": "y"}
    (output / HOLDER_FILE).write_text(json.dumps(stale))
    (output / LOCK_FILE).write_text("")
    with locked_output(output):
        assert read_holder(output)["pid"] == os.getpid()


def test_reentrant_in_a_thread_refused_in_another(tmp_path):
    output = tmp_path / "out"
    refused = []

    def other_thread():
        try:
            with locked_output(output):
                pass
        except OutputLockedError as error:
            refused.append(str(error))

    with locked_output(output):
        with locked_output(tmp_path / ".." / tmp_path.name / "out"):  # spelled otherwise
            run_methods(_methods(), 2, 1, output, progress=False)  # takes it again
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert len(refused) == 1 and f"pid {os.getpid()}" in refused[0]
    with locked_output(output):  # released by the outermost block
        pass


def test_a_record_of_a_process_that_ended_says_so(tmp_path):
    from botorch_mtucb.experiments.output_lock import describe_holder

    ended = {"pid": 999999999, "host": socket.gethostname(), "started": "t", "command": "c"}
    assert describe_holder(ended).endswith(
        "that process has ended, so one it started holds the lock"
    )
    assert "has ended" not in describe_holder({**ended, "pid": os.getpid()})
