"""The ``Example:`` blocks of ``botorch_mtucb.experiments`` run as doctests."""

from __future__ import annotations

import pkgutil

import pytest
from doctest_examples import run_examples

import botorch_mtucb.experiments

# Packages whose ``__init__`` only imports (registers) their modules.
WITHOUT_EXAMPLES = {
    "botorch_mtucb.experiments.paper000",
    "botorch_mtucb.experiments.paper001",
    "botorch_mtucb.experiments.paper002",
}
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(
        botorch_mtucb.experiments.__path__, botorch_mtucb.experiments.__name__ + "."
    )
    if info.name not in WITHOUT_EXAMPLES
)


@pytest.mark.parametrize("name", MODULES)
def test_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    run_examples(name)
