"""The summary schema: its builder, checker and writer."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from botorch_mtucb.experiments.runs import MethodResult
from botorch_mtucb.experiments.summary import (
    build_summary,
    check_summary,
    final_statistics,
    method_summary,
    problem_summary,
    write_summary,
)

ENTRY = {"cumulative_regret_mean": 3.0, "cumulative_regret_std": 0.5}


def _result(name="A"):
    curves = {"cumulative_regret": np.array([[1.0, 2.0, 4.0], [1.0, 3.0, 6.0]])}
    return MethodResult(name, curves, seconds_per_step=[0.1, 0.3])


def test_method_summary_is_the_final_regret_over_repetitions():
    entry = method_summary(_result(), extra=1.0)
    assert entry == {
        "cumulative_regret_mean": 5.0,
        "cumulative_regret_std": 1.0,
        "seconds_per_step": pytest.approx(0.2),
        "extra": 1.0,
    }
    assert final_statistics(_result(), "cumulative_regret") == (5.0, 1.0)


def test_build_summary_is_what_json_reads_back(tmp_path):
    problem = problem_summary(
        {"A": method_summary(_result())},
        tensor=torch.tensor([1.0, 2.0]),
        array=np.arange(2),
        pair=(1, 2),
        number=np.float64(0.5),
    )
    summary = build_summary("demo", {"horizon": 3, "grid": (0.1, 1.0)}, {"p": problem})
    assert list(summary) == ["experiment", "settings", "problems"]
    assert summary["problems"]["p"]["tensor"] == [1.0, 2.0]
    assert summary["problems"]["p"]["pair"] == [1, 2]
    write_summary(summary, tmp_path / "summary.json")
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    with pytest.raises(TypeError, match="JSON"):
        build_summary("demo", {"x": object()}, {"p": problem_summary({})})


@pytest.mark.parametrize(
    "summary, message",
    [
        ([], "exactly the keys"),
        ({"experiment": "x", "settings": {}}, "exactly the keys"),
        ({"experiment": "x", "settings": {}, "problems": {}, "methods": {}}, "exactly the keys"),
        ({"experiment": "", "settings": {}, "problems": {"p": {"methods": {}}}}, "name the"),
        ({"experiment": "x", "settings": [], "problems": {"p": {"methods": {}}}}, "settings"),
        ({"experiment": "x", "settings": {}, "problems": {}}, "non-empty"),
        ({"experiment": "x", "settings": {}, "problems": {"p": {}}}, "has no 'methods'"),
        ({"experiment": "x", "settings": {}, "problems": {"p": {"methods": []}}}, "mapping"),
        (
            {"experiment": "x", "settings": {}, "problems": {"p": {"methods": {"A": {}}}}},
            "cumulative_regret_mean",
        ),
        (
            {
                "experiment": "x",
                "settings": {},
                "problems": {"p": {"methods": {"A": {**ENTRY, "cumulative_regret_std": True}}}},
            },
            "cumulative_regret_std",
        ),
        (
            {
                "experiment": "x",
                "settings": {},
                "problems": {
                    "p": {"methods": {"A": {**ENTRY, "cumulative_regret_mean": math.nan}}}
                },
            },
            "finite",
        ),
        (
            {
                "experiment": "x",
                "settings": {},
                "problems": {"p": {"methods": {"A": {**ENTRY, "cumulative_regret_std": -1.0}}}},
            },
            "negative",
        ),
    ],
)
def test_check_summary_names_what_is_wrong(summary, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        check_summary(summary)
    with pytest.raises(ValueError, match=message):
        write_summary(summary, tmp_path / "summary.json")
    assert not (tmp_path / "summary.json").exists()


def test_check_summary_accepts_the_schema():
    check_summary({"experiment": "x", "settings": {}, "problems": {"p": {"methods": {}}}})
    check_summary(
        {"experiment": "x", "settings": {"T": 1}, "problems": {"p": {"methods": {"A": ENTRY}}}}
    )
