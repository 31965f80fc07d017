"""The hyperparameter-transfer data: the loader's grid and shapes, the shipped scores
recomputed by the provenance script on a subset of the grid, and bad files."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from botorch_mtucb.problems.hpo_transfer import (
    default_hpo_transfer_path,
    hpo_transfer_problem,
    load_hpo_transfer,
)

SCRIPT = Path(__file__).parents[2] / "botorch_mtucb" / "problems" / "data" / "make_hpo_transfer.py"


def provenance():
    spec = importlib.util.spec_from_file_location("make_hpo_transfer", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_grid_and_shapes():
    data = load_hpo_transfer()
    assert data.tasks == ("iris", "wine", "breast_cancer", "digits", "diabetes")
    assert data.scores.shape == (5, 121) and data.inputs.shape == (121, 2)
    # C major: the first 11 points share log10 C = -2 and walk through gamma
    assert torch.equal(data.inputs[:11, 0], torch.zeros(11, dtype=torch.float64))
    assert torch.allclose(data.inputs[:11, 1], torch.linspace(0, 1, 11, dtype=torch.float64))
    accuracy = data.scores[:4]
    assert bool(((accuracy >= 0) & (accuracy <= 1)).all())
    assert float(data.scores[4].min()) >= -1.0  # R^2 clipped at -1
    assert data.task_index("digits") == 3
    with pytest.raises(ValueError, match="task must be one of"):
        data.task_index("mnist")


@pytest.mark.parametrize("task", ["iris", "diabetes"])
def test_the_provenance_script_reproduces_the_shipped_scores(task):
    pytest.importorskip("sklearn")
    module = provenance()
    data = load_hpo_transfer()
    rows, columns = [3, 9], [2, 8]  # a 2 x 2 corner of the 11 x 11 grid
    scores = module.task_scores(task, module.LOG10_C[rows], module.LOG10_GAMMA[columns])
    shipped = data.scores[data.task_index(task)].reshape(11, 11)[np.ix_(rows, columns)]
    np.testing.assert_allclose(scores, shipped.numpy(), rtol=0, atol=1e-12)


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_hpo_transfer(tmp_path / "none.npz")
    with np.load(default_hpo_transfer_path()) as archive:
        arrays = {key: archive[key] for key in archive.files}
    np.savez(tmp_path / "missing.npz", **{k: v for k, v in arrays.items() if k != "scores"})
    with pytest.raises(ValueError, match="lacks the arrays \\['scores'\\]"):
        load_hpo_transfer(tmp_path / "missing.npz")
    np.savez(tmp_path / "shape.npz", **(arrays | {"scores": arrays["scores"][:, :3]}))
    with pytest.raises(ValueError, match="tasks x \\|C\\| x \\|gamma\\|"):
        load_hpo_transfer(tmp_path / "shape.npz")
    bad = arrays["scores"].copy()
    bad[0, 0, 0] = np.nan
    np.savez(tmp_path / "nan.npz", **(arrays | {"scores": bad}))
    with pytest.raises(ValueError, match="must be finite"):
        load_hpo_transfer(tmp_path / "nan.npz")
    (tmp_path / "junk.npz").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="not a readable"):
        load_hpo_transfer(tmp_path / "junk.npz")


def test_transfer_problem_tasks_and_negation():
    data = load_hpo_transfer()
    problem = hpo_transfer_problem("digits", ["wine"], ["breast_cancer"], noise_std=0.01)
    assert problem.task_names == ["digits", "wine", "-breast_cancer"]
    x = data.inputs[37]
    assert problem.objective(0, x) == pytest.approx(float(data.scores[3, 37]))
    assert problem.objective(2, x) == pytest.approx(-float(data.scores[2, 37]))
    assert problem.optimum(0) == pytest.approx(float(data.scores[3].max()))
    assert problem.optimum(2) == pytest.approx(-float(data.scores[2].min()))
    with pytest.raises(ValueError, match="each task may appear once"):
        hpo_transfer_problem("digits", ["digits"])
    with pytest.raises(ValueError, match="task must be one of"):
        hpo_transfer_problem("mnist")
