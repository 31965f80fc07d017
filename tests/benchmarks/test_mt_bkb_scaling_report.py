"""The mt_bkb_scaling benchmark's report: the power-law fit, the KB / BKB ratios
(measured, extrapolated or none) and the plot, drawn without pyplot state."""

from __future__ import annotations

import math

import pytest

from botorch_mtucb.benchmarks.mt_bkb_scaling_report import add_ratios, fit_power_law, plot


def _entry(t, kb, bkb=0.5, size=None):
    step = {"seconds_per_step": bkb, "dictionary_size": size or t}
    return {"t": t, "mt_kb": None if kb is None else {"seconds_per_step": kb}, "mt_bkb": step}


def test_fit_power_law_recovers_c_and_p():
    ts = [100.0, 300.0, 1000.0, 3000.0]
    c, p = fit_power_law(ts, [3e-7 * t**2.4 for t in ts])
    assert c == pytest.approx(3e-7, rel=1e-9) and p == pytest.approx(2.4, rel=1e-12)


def test_ratios_are_fitted_on_large_t_and_extrapolated_where_kb_was_skipped():
    # t >= 1000 only enter the fit when two of them were measured: 2 t^2 there, not t^3.
    results = [
        _entry(500, 500.0**3),
        _entry(1000, 2 * 1000.0**2),
        _entry(2000, 2 * 2000.0**2),
        _entry(4000, None),
    ]
    c, p = add_ratios(results)
    assert (c, p) == (pytest.approx(2.0), pytest.approx(2.0))
    assert [r["ratio_kind"] for r in results] == ["measured"] * 3 + ["extrapolated"]
    assert results[3]["mt_kb_seconds"] == pytest.approx(2 * 4000.0**2)
    assert results[3]["ratio"] == pytest.approx(2 * 4000.0**2 / 0.5)
    lonely = [_entry(10, 1.0), _entry(20, None)]
    assert add_ratios(lonely) is None
    assert lonely[1]["ratio_kind"] == "none" and math.isnan(lonely[1]["ratio"])


def test_plot_leaves_pyplot_alone(tmp_path):
    import matplotlib.pyplot as plt

    figures = plt.get_fignums()
    results = [_entry(t, 0.001 * t) for t in (10, 20, 40)]
    plot(results, tmp_path / "scaling.png", fit=(0.001, 1.0))
    assert (tmp_path / "scaling.png").read_bytes()[:4] == b"\x89PNG"
    assert plt.get_fignums() == figures
