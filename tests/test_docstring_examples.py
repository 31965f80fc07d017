"""Every public class and function of the package has an ``Example:`` block, and every
example runs as written: as doctests in a fresh, empty namespace, exactly as a user pastes
it into a new interpreter (so each example imports what it uses; files an example writes go
to a temporary folder)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest
import torch

import botorch_mtucb

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(botorch_mtucb.__path__, "botorch_mtucb.")
)
NEEDS_CVXPY = {"botorch_mtucb.benchmarks.mm_bound_vs_cvxpy"}


def _public_objects(module):
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            yield name, obj


def _has_example(obj) -> bool:
    docs = [inspect.getdoc(obj) or ""]
    if inspect.isclass(obj):
        docs.append(inspect.getdoc(obj.__init__) or "")
    return any("Example:" in doc for doc in docs)


@pytest.mark.parametrize("name", MODULES)
def test_every_public_name_has_an_example(name):
    module = importlib.import_module(name)
    missing = [n for n, obj in _public_objects(module) if not _has_example(obj)]
    assert not missing, f"{name}: no Example block in {missing}"


# Modules that define something public (package ``__init__`` files only re-export).
DEFINING = [name for name in MODULES if any(_public_objects(importlib.import_module(name)))]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", DEFINING)
def test_examples_run_as_written(name, tmp_path, monkeypatch):
    if name in NEEDS_CVXPY:
        pytest.importorskip("cvxpy")
    monkeypatch.chdir(tmp_path)
    torch.manual_seed(0)
    module = importlib.import_module(name)
    globs: dict = {}  # a fresh interpreter: each example imports what it uses
    tests = [
        test
        for test in doctest.DocTestFinder().find(module, globs=globs)
        if test.examples and test.name.startswith(name)  # not the imported objects
    ]
    assert tests, f"{name} has no Example block"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {name} (above)"
