"""The registry's option check; the catalogue agrees with the registered experiments."""

from __future__ import annotations

import pytest

from botorch_mtucb.experiments.catalogue import EXPERIMENT_DESCRIPTIONS
from botorch_mtucb.experiments.registry import experiment_options, load_experiments


def test_experiment_options():
    defaults = {"horizon": 200, "repetitions": 10}
    assert experiment_options("x", {}, defaults) == defaults
    assert experiment_options("x", {"horizon": None, "repetitions": 2}, defaults) == {
        "horizon": 200,
        "repetitions": 2,
    }
    with pytest.raises(ValueError, match=r"experiment 'x' takes no option\(s\) \['data'\]"):
        experiment_options("x", {"data": "f.npz"}, defaults)


def test_the_catalogue_is_the_registry():
    # The command line lists and checks names from the catalogue, without importing the
    # experiments: it must name and describe exactly the experiments that register.
    registered = {name: e.description for name, e in load_experiments().items()}
    assert registered == EXPERIMENT_DESCRIPTIONS
