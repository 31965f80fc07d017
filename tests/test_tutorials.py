"""Every notebook in ``tutorials/`` runs end to end in its ``SMOKE_TEST`` configuration.

Each notebook is executed with nbclient in a temporary copy of ``tutorials/`` (the
notebooks themselves are never modified) with ``SMOKE_TEST=1`` in the environment. The
``python3`` kernel is a kernelspec written into a temporary directory that is put first
on ``JUPYTER_PATH``: it runs ``sys.executable``, so the notebooks see the same
interpreter (and the same installed ``botorch_mtucb``) as the tests, in a fresh virtual
environment as well as on a machine with other user-level kernels installed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import ipykernel  # noqa: F401  (the kernel below runs ``python -m ipykernel_launcher``)
import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

TUTORIALS = Path(__file__).resolve().parents[1] / "tutorials"
NOTEBOOKS = sorted(TUTORIALS.glob("*.ipynb"))
KERNEL_NAME = "python3"
CELL_TIMEOUT_S = 600
# Appended to the in-memory copy: proves which interpreter ran the notebook.
INTERPRETER_PROBE = "import sys\nprint(sys.executable)"


def test_tutorials_are_found() -> None:
    assert NOTEBOOKS, f"no notebooks found in {TUTORIALS}"


@pytest.fixture
def jupyter_environment(tmp_path_factory, monkeypatch) -> Path:
    """A ``python3`` kernelspec for ``sys.executable`` first on ``JUPYTER_PATH``, and
    ``SMOKE_TEST=1`` (inherited by the kernel process)."""
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (botorch-mtucb tests)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    previous = os.environ.get("JUPYTER_PATH")
    monkeypatch.setenv(
        "JUPYTER_PATH", os.pathsep.join([str(root)] + ([previous] if previous else []))
    )
    monkeypatch.setenv("SMOKE_TEST", "1")
    resolved = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    assert resolved.argv[0] == sys.executable, resolved.argv
    return root


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name)
def test_tutorial_runs(notebook: Path, jupyter_environment: Path, tmp_path: Path) -> None:
    work_dir = tmp_path / "tutorials"
    shutil.copytree(TUTORIALS, work_dir, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    copy = work_dir / notebook.name
    nb = nbformat.read(copy, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(INTERPRETER_PROBE))
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(work_dir)}},
    )
    client.execute()  # raises CellExecutionError with the failing cell's traceback
    probe = nb.cells[-1].outputs
    printed = "".join(output.get("text", "") for output in probe).strip()
    assert os.path.realpath(printed) == os.path.realpath(sys.executable), printed
