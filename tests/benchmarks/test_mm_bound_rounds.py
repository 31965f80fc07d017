"""The mm-bound-rounds benchmark: its quick run and its pieces."""

import pytest
import torch

from botorch_mtucb.__main__ import main


def test_quick_run_prints_the_table_the_exponent_and_the_threads(capsys):
    threads = torch.get_num_threads()
    code = main(["benchmark", "mm-bound-rounds", "--quick"])
    out = capsys.readouterr().out
    assert torch.get_num_threads() == threads  # the caller's setting is restored
    rows = [line.split() for line in out.splitlines() if line[:4] in ("300 ", "800 ")]
    assert [row[1] for row in rows] == ["eigen", "factored"]  # FACTORED_MIN_OBSERVATIONS
    assert all(float(row[-1]) <= 1e-8 for row in rows)  # the two routes agree
    for row in rows:  # round / eigh and round / GP are the printed times' ratios
        round_ms, eigh_ms, posterior_ms = float(row[2]), float(row[4]), float(row[6])
        assert float(row[5]) == pytest.approx(round_ms / eigh_ms, rel=0.05, abs=2e-3)
        assert float(row[7]) == pytest.approx(round_ms / posterior_ms, rel=0.05, abs=2e-2)
    assert "fitted exponent" in out and "2 torch threads vs 1" in out
    assert code == (0 if "all targets measured in this run met" in out else 1)
