"""The MHC-I data as a multi-task bandit problem, and checks of ``--data`` files."""

from __future__ import annotations

import numpy as np
import pytest

from botorch_mtucb.problems.mhc import (
    MHC_NOISE_STD,
    default_mhc_path,
    load_mhc_data,
    mhc_binding_problem,
)


def test_packaged_data_and_provenance():
    path = default_mhc_path()
    assert path.exists() and (path.parent / "MHC1_BINDING.md").exists()
    problem = mhc_binding_problem()
    raw = np.load(path)
    assert problem.num_tasks == 5 and problem.dim == 45
    assert problem.task_names == ["A_0202", "A_0203", "A_0201", "A_2301", "A_2402"]
    assert [a.shape[0] for a in problem.arms] == [1447, 1443, 3089, 104, 197]
    assert problem.noise_std == MHC_NOISE_STD
    for i in range(5):
        rows = raw["task"] == i
        assert problem.optimum(i) == pytest.approx(raw["affinity"][rows].max())
        k = 17 % rows.sum()
        x = raw["features"][rows][k]
        assert problem.objective(i, problem.arms[i][k]) == pytest.approx(raw["affinity"][rows][k])
        assert np.allclose(problem.arms[i][k].numpy(), x)


def _write(path, **arrays):
    np.savez(path, **arrays)
    return path


def test_other_files_and_bad_files(tmp_path):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(9, 4))
    features /= np.linalg.norm(features, axis=-1, keepdims=True)  # unit norm, as documented
    task = np.array([0, 0, 1, 1, 1, 2, 2, 2, 2])
    affinity = rng.normal(size=9)
    alleles = np.array(["a", "b", "c"])
    good = _write(
        tmp_path / "good.npz", features=features, task=task, affinity=affinity, alleles=alleles
    )
    problem = mhc_binding_problem(good, noise_std=0.1)
    assert problem.num_tasks == 3 and [len(a) for a in problem.arms] == [2, 3, 4]
    missing = _write(tmp_path / "missing.npz", features=features, task=task, alleles=alleles)
    with pytest.raises(ValueError, match=r"lacks the key\(s\) \['affinity'\]"):
        load_mhc_data(missing)
    empty = _write(
        tmp_path / "empty.npz",
        features=features,
        task=task,
        affinity=affinity,
        alleles=np.array(["a", "b", "c", "d"]),
    )
    with pytest.raises(ValueError, match=r"task\(s\) \['d'\] have no arms"):
        load_mhc_data(empty)
    bad_index = _write(
        tmp_path / "bad.npz", features=features, task=task + 1, affinity=affinity, alleles=alleles
    )
    with pytest.raises(ValueError, match="task indices must lie"):
        load_mhc_data(bad_index)
    with pytest.raises(FileNotFoundError):
        load_mhc_data(tmp_path / "nope.npz")
    twice = _write(
        tmp_path / "twice.npz",
        features=features,
        task=task,
        affinity=affinity,
        alleles=np.array(["a", "b", "a"]),
    )
    with pytest.raises(ValueError, match="allele names must be distinct"):
        load_mhc_data(twice)
    objects = _write(
        tmp_path / "objects.npz",
        features=features,
        task=task,
        affinity=affinity,
        alleles=np.array(["a", "b", None], dtype=object),
    )
    with pytest.raises(ValueError, match=r"objects\.npz: 'alleles' is an array of Python objects"):
        load_mhc_data(objects)
    unnormalized = _write(
        tmp_path / "raw.npz", features=3 * features, task=task, affinity=affinity, alleles=alleles
    )
    with pytest.warns(UserWarning, match="unit-norm features"):
        assert load_mhc_data(unnormalized)["features"].shape == (9, 4)


def test_files_that_are_not_npz_archives_or_disagree_in_rows(tmp_path):
    text = tmp_path / "notes.npz"
    text.write_text("not an archive")
    with pytest.raises(ValueError, match="not a NumPy .npz archive"):
        load_mhc_data(text)
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    with pytest.raises(ValueError, match="not a NumPy .npz archive"):
        load_mhc_data(single)
    rng = np.random.default_rng(0)
    rows = _write(
        tmp_path / "rows.npz",
        features=rng.normal(size=(4, 2)),
        task=np.array([0, 0, 1, 1]),
        affinity=rng.normal(size=3),  # one affinity short
        alleles=np.array(["a", "b"]),
    )
    with pytest.raises(ValueError, match="one task and one affinity per row"):
        load_mhc_data(rows)
