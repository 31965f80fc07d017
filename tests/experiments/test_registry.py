"""The registry's option check."""

from __future__ import annotations

import pytest

from botorch_mtucb.experiments.registry import experiment_options


def test_experiment_options():
    defaults = {"horizon": 200, "repetitions": 10}
    assert experiment_options("x", {}, defaults) == defaults
    assert experiment_options("x", {"horizon": None, "repetitions": 2}, defaults) == {
        "horizon": 200,
        "repetitions": 2,
    }
    with pytest.raises(ValueError, match=r"experiment 'x' takes no option\(s\) \['data'\]"):
        experiment_options("x", {"data": "f.npz"}, defaults)
