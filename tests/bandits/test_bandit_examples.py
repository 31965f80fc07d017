"""The ``Example:`` blocks of the bandits layer run as doctests."""

from __future__ import annotations

import pytest
from doctest_examples import run_examples

MODULES = (
    "botorch_mtucb.bandits.protocols",
    "botorch_mtucb.bandits.runner",
    "botorch_mtucb.bandits.environments.scalarized",
    "botorch_mtucb.bandits.environments.task_indexed",
    "botorch_mtucb.bandits.kernel_ucb.confidence_rules",
    "botorch_mtucb.bandits.kernel_ucb.kernel_ucb",
    "botorch_mtucb.bandits.kernel_ucb.methods",
    "botorch_mtucb.bandits.kernel_ucb.random_policy",
    "botorch_mtucb.bandits.scalarized.policy",
    "botorch_mtucb.bandits.scalarized.mt_kb",
    "botorch_mtucb.bandits.scalarized.mt_bkb",
    "botorch_mtucb.bandits.scalarized.mobo",
    "botorch_mtucb.bandits.task_indexed.regression",
    "botorch_mtucb.bandits.task_indexed.policy",
    "botorch_mtucb.bandits.task_indexed.mt_ucb",
    "botorch_mtucb.bandits.task_indexed.adaptive_mt_ucb",
    "botorch_mtucb.bandits.task_indexed.active_learning",
)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    run_examples(name)
