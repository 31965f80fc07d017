"""Run a module's ``Example:`` blocks as doctests, with ``torch`` and the module's own
names in scope (as a user who imported them would have)."""

from __future__ import annotations

import doctest
import importlib

import torch


def run_examples(name: str) -> None:
    """Run every example of module ``name``; fail if it has none or one fails."""
    module = importlib.import_module(name)
    tests = [
        test
        for test in doctest.DocTestFinder().find(module, globs={"torch": torch, **vars(module)})
        if test.examples and test.name.startswith(name)  # not the imported objects
    ]
    assert tests, f"{name} has no Example block"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {name}"
