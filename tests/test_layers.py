"""The package's floor plan: each layer imports only the layers below it.

Layers, lowest first (README, "Architecture"): utils, kernels, models, scalarization,
confidence, acquisition, bandits, problems, experiments, benchmarks. ``problems`` must not
import ``bandits`` although it sits above it: a test function knows nothing of the
algorithms run on it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import botorch_mtucb

LAYERS = (
    "utils",
    "kernels",
    "models",
    "scalarization",
    "confidence",
    "acquisition",
    "bandits",
    "problems",
    "experiments",
    "benchmarks",
)
FORBIDDEN = {"problems": {"bandits"}}
PACKAGE = Path(botorch_mtucb.__file__).parent


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "botorch_mtucb" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


MODULES = sorted(
    p
    for p in PACKAGE.rglob("*.py")
    if _layer("botorch_mtucb." + ".".join(p.relative_to(PACKAGE).with_suffix("").parts))
)


def test_every_module_sits_in_a_layer():
    top = {p.relative_to(PACKAGE).parts[0] for p in PACKAGE.rglob("*.py")}
    allowed = {f"{layer}.py" for layer in LAYERS} | set(LAYERS) | {"__init__.py", "__main__.py"}
    assert top <= allowed, sorted(top - allowed)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_from_a_layer_above(path: Path):
    own = _layer("botorch_mtucb." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts))
    rank = LAYERS.index(own)
    bad = []
    for line, module in _imports(path):
        layer = _layer(module)
        if layer is None or layer == own:
            continue
        if LAYERS.index(layer) > rank or layer in FORBIDDEN.get(own, set()):
            bad.append(f"line {line}: {module}")
    assert not bad, f"{own} imports from a layer above it: {bad}"
