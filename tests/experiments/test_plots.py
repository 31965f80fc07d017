"""Curve plots on a ``matplotlib`` ``Figure``: no ``pyplot`` state, no backend switched."""

from __future__ import annotations

import numpy as np

from botorch_mtucb.experiments.plots import save_curves_plot
from botorch_mtucb.experiments.runs import MethodResult


def _result(name="A"):
    curves = {"cumulative_regret": np.array([[1.0, 2.0, 4.0], [1.0, 3.0, 6.0]])}
    return MethodResult(name, curves, seconds_per_step=[0.1, 0.3])


def test_curves_plot_uses_no_pyplot_state(tmp_path):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    save_curves_plot({"A": _result()}, "cumulative_regret", tmp_path / "a.png", "t", "R")
    assert (tmp_path / "a.png").stat().st_size > 1000
    assert plt.get_fignums() == before
