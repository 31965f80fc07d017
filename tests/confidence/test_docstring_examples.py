"""Every ``Example:`` block of the confidence layer (and of ``MartingaleMixtureUCB``) runs
as written, in a fresh namespace: the examples a user pastes stay correct."""

from __future__ import annotations

import doctest
import importlib

import pytest
import torch

MODULES = (
    "botorch_mtucb.confidence.information_gain",
    "botorch_mtucb.confidence.agnostic_widths",
    "botorch_mtucb.confidence.scalarized_widths",
    "botorch_mtucb.confidence.single_task_widths",
    "botorch_mtucb.confidence.martingale_mixture.radius",
    "botorch_mtucb.confidence.martingale_mixture.alpha_search",
    "botorch_mtucb.confidence.martingale_mixture.emptiness",
    "botorch_mtucb.confidence.martingale_mixture.gram_cache",
    "botorch_mtucb.confidence.martingale_mixture.bound",
    "botorch_mtucb.acquisition.martingale_mixture_ucb",
)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run_as_written(name):
    torch.manual_seed(0)
    module = importlib.import_module(name)
    result = doctest.testmod(module, globs={}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
