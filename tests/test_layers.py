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


# ------------------------------------------------------------------ import circles
def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("botorch_mtucb", *parts))


ALL_MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports run when the module is imported: module level, including ``try`` and
    ``if`` blocks, but not ``if TYPE_CHECKING:`` blocks, functions or classes' methods."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, ast.If):
                if not _is_type_checking(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, (ast.With, ast.ClassDef)):
                visit(node.body)

    visit(tree.body)
    return found


def _resolve(module: str, level: int, own: str, is_package: bool) -> str:
    if not level:
        return module
    base = own.split(".") if is_package else own.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports at module level.

    ``from botorch_mtucb.x import y`` is an edge to ``botorch_mtucb.x.y`` when that is a
    module, else to ``botorch_mtucb.x`` (``y`` is a name defined there)."""
    graph: dict[str, set[str]] = {}
    for name, path in ALL_MODULES.items():
        edges = set()
        is_package = path.name == "__init__.py"
        for node in _module_level_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(node.module or "", node.level, name, is_package)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in ALL_MODULES else base
                    for alias in node.names
                ]
            edges.update(t for t in targets if t in ALL_MODULES and t != name)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle ``[a, b, ..., a]`` of ``graph``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"b", "c"}}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"a"}}) == ["a", "a"]


def test_import_graph_counts_submodules_and_skips_type_checking_and_functions():
    graph = import_graph()
    # ``from botorch_mtucb.utils.domains import FiniteDomain``: an edge to the module
    assert "botorch_mtucb.utils.domains" in graph["botorch_mtucb.utils"]
    assert "botorch_mtucb.utils.checks" in graph["botorch_mtucb.utils.domains"]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import botorch_mtucb.models\n"
        "def f():\n    import botorch_mtucb.bandits\n"
        "try:\n    import botorch_mtucb.utils\nexcept ImportError:\n    pass\n"
    )
    assert [ast.unparse(n) for n in _module_level_imports(tree)] == [
        "from typing import TYPE_CHECKING",
        "import botorch_mtucb.utils",
    ]


def test_no_import_circle():
    """Module-level imports between the package's modules form no circle (imports under
    ``if TYPE_CHECKING:`` and inside functions are not run at import time, so they do not
    count)."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


# ------------------------------------------------------------------ module lengths
MAX_LINES = 600
EXPLAIN_LINES = 500
WHY_LONG = "Why this module is long:"


@pytest.mark.parametrize(
    "path", sorted(ALL_MODULES.values()), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_module_length(path: Path):
    """No module has more than 600 lines; a module over 500 lines says why in its
    docstring, on a line that begins with ``Why this module is long:`` (leading spaces
    allowed), e.g. ``Why this module is long: one class whose ten methods share a cache``.
    """
    text = path.read_text()
    count = len(text.splitlines())
    assert count <= MAX_LINES, f"{count} lines: split it by concept (hard limit {MAX_LINES})"
    if count > EXPLAIN_LINES:
        docstring = ast.get_docstring(ast.parse(text)) or ""
        reasons = [line for line in docstring.splitlines() if line.lstrip().startswith(WHY_LONG)]
        assert reasons, (
            f"{count} lines (over {EXPLAIN_LINES}): its docstring must say why, on a line "
            f"beginning {WHY_LONG!r}"
        )
