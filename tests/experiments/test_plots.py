"""Curve plots on a ``matplotlib`` ``Figure``: no ``pyplot`` state, no backend switched."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from botorch_mtucb.experiments.paper000.plots import plot_regret_against_baseline
from botorch_mtucb.experiments.plots import plot_curves, save_curves_plot
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


@pytest.mark.parametrize(
    "band, half_width, name",
    [("sd", 2**0.5, "sd"), ("se", 1.0, "standard error")],
)
def test_the_band_is_the_one_the_legend_names(band, half_width, name):
    # Final values 0, 0, 3: mean 1, sd sqrt(2), standard error sqrt(3 / 2) / sqrt(3) = 1.
    result = MethodResult("A", {"cumulative_regret": np.array([[0.0], [0.0], [3.0]])})
    ax = Figure().subplots()
    plot_curves(ax, {"A": result}, "cumulative_regret", "t", "R", band=band)
    assert ax.get_legend().get_title().get_text() == f"mean +- {name} over 3 repetitions"
    band_values = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band_values.max() == pytest.approx(1.0 + half_width)
    assert band_values.min() == pytest.approx(1.0 - half_width)


def test_an_unknown_band_is_refused():
    with pytest.raises(ValueError, match="band must be 'sd' or 'se'"):
        plot_curves(
            Figure().subplots(), {"A": _result()}, "cumulative_regret", "t", "R", band="iqr"
        )


def test_the_difference_panel_is_paired_by_repetition(tmp_path):
    a = _result("A")
    b = MethodResult("B", {"cumulative_regret": a.curves["cumulative_regret"] - 1.0})
    plot_regret_against_baseline({"A": a, "B": b}, "B", tmp_path / "r.png", "demo", "R_C(t)")
    assert (tmp_path / "r.png").stat().st_size > 1000
    with pytest.raises(KeyError):
        plot_regret_against_baseline({"A": a}, "B", tmp_path / "s.png", "demo", "R_C(t)")
