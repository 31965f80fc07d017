"""The threads measurement (``benchmarks.thread_ratio``): the busy loop ends with its
block, on errors too, and by itself once orphaned; the caller's thread setting is
restored; the table of the sketch's build (``mt_bkb_builds.thread_table``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from botorch_mtucb.benchmarks import thread_ratio
from botorch_mtucb.benchmarks.mt_bkb_builds import thread_table
from botorch_mtucb.benchmarks.thread_ratio import busy_core, thread_ratios


def test_busy_core_ends_with_its_block_also_on_errors():
    with pytest.raises(RuntimeError, match="inside"):
        with busy_core() as process:
            assert process.poll() is None  # running
            raise RuntimeError("inside")
    assert process.poll() is not None


def test_an_orphaned_busy_loop_ends_by_itself():
    """Told that its parent is another process (as when its own has died), the loop
    stops after its first million iterations."""
    completed = subprocess.run(
        [sys.executable, "-c", thread_ratio._BUSY_LOOP, "1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 0 and completed.stdout.strip() == "ready"


def test_thread_ratios_restores_the_callers_setting_and_checks_its_arguments():
    before = torch.get_num_threads()
    seen = []
    result = thread_ratios(lambda: seen.append(torch.get_num_threads()), repeats=2, busy=False)
    assert torch.get_num_threads() == before
    assert sorted(set(seen)) == [1, 2] and len(seen) == 2 * (1 + 2)  # warmup + repeats
    assert set(result) == {"threads", "idle"} and result["threads"] == (1, 2)
    idle = result["idle"]
    assert idle["ratio"] == pytest.approx(idle["seconds"][2] / idle["seconds"][1])
    for bad in ({"threads": (1,)}, {"threads": (0, 2)}, {"repeats": 0}, {"warmup": -1}):
        with pytest.raises(ValueError):
            thread_ratios(lambda: None, **bad)


def test_thread_table_states_the_goal():
    fast = {"seconds": {1: 0.1, 2: 0.11}, "ratio": 1.1}
    slow = {"seconds": {1: 0.1, 2: 0.3}, "ratio": 3.0}
    met = thread_table([(1000, {"threads": (1, 2), "idle": fast, "busy": fast})])
    assert "goal 2/1 <= 1.5: met" in met and met.splitlines()[1].split()[0] == "t"
    missed = thread_table([(1000, {"threads": (1, 2), "idle": fast, "busy": slow})])
    assert "not met in this run" in missed and missed.splitlines()[-1].split()[-1] == "3.00"
