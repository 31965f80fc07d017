"""The ``Example:`` blocks of the acquisition functions run as doctests."""

from __future__ import annotations

import pytest
from doctest_examples import run_examples

MODULES = (
    "botorch_mtucb.acquisition.scalarized_ucb",
    "botorch_mtucb.acquisition.scalarized_objective_ucb",
    "botorch_mtucb.acquisition.task_conditioned_ucb",
)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    run_examples(name)
