"""``run_methods``' progress in a log: one plain line per finished run, no bars."""

from __future__ import annotations

import torch

from botorch_mtucb.bandits import RandomPolicy
from botorch_mtucb.experiments.runs import Method, run_methods
from botorch_mtucb.problems import KernelBanditEnvironment, RKHSTestFunction, make_kernel


def test_a_log_gets_one_line_per_finished_run(tmp_path, capsys):
    f = RKHSTestFunction.sample(
        make_kernel("rbf", 0.5), 2, 1.0, generator=torch.Generator().manual_seed(0)
    )
    methods = [
        Method(name, lambda rep: RandomPolicy(), lambda rep: KernelBanditEnvironment(f, 0.1, 10))
        for name in ("A", "B")
    ]
    run_methods(methods, 40, 3, tmp_path, progress=True)  # stderr: captured, no terminal
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 2 * 3  # before: a bar redrawn for the runs and one for the rounds
    assert lines[0].startswith("runs: 1/6 (17%), ") and lines[0].endswith(", A rep 0")
    assert lines[-1].startswith("runs: 6/6 (100%), ") and lines[-1].endswith(", B rep 2")
    assert "\r" not in err and "\x1b" not in err
