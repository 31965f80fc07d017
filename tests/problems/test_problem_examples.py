"""The ``Example:`` blocks of ``botorch_mtucb.problems`` run as doctests (``torch`` and the
module's own names in scope, as a user who imported them would have)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
import torch

import botorch_mtucb.problems

SKIPPED: set[str] = set()
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(botorch_mtucb.problems.__path__, "botorch_mtucb.problems.")
    if info.name not in SKIPPED
)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    tests = [
        test
        for test in finder.find(module, globs={"torch": torch, **vars(module)})
        if test.examples and test.name.startswith(name)  # not the imported objects
    ]
    assert tests, f"{name} has no Example block"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {name} (above)"
