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


def _arrays(rng, **changes):
    features = rng.normal(size=(6, 3))
    features /= np.linalg.norm(features, axis=-1, keepdims=True)
    arrays = {
        "features": features,
        "task": np.array([0, 0, 1, 1, 1, 0]),
        "affinity": rng.normal(size=6),
        "alleles": np.array(["a", "b"]),
    }
    return {**arrays, **changes}


@pytest.mark.parametrize(
    "key, change, match",
    [
        # strings used to give "could not convert string to float" (no file, no key),
        # or to be converted silently when they spelled numbers
        ("features", lambda a: a.astype(str), r"'features' must hold real numbers .*strings"),
        ("features", lambda a: np.full(a.shape, "x"), r"'features' must hold real numbers"),
        ("affinity", lambda a: a.astype(str), r"'affinity' must hold real numbers .*strings"),
        ("features", lambda a: a > 0, r"'features' must hold real numbers .*booleans"),
        ("features", lambda a: a.astype(complex), r"'features' .*complex numbers"),
        # a string task column gave a bare numpy TypeError ("ufunc 'isfinite' not supported")
        ("task", lambda a: a.astype(str), r"'task' must hold integer task indices, got strings"),
        # booleans used to be read as tasks 0 / 1
        ("task", lambda a: a > 0, r"'task' must hold integer task indices, got booleans"),
        (
            "task",
            lambda a: np.where(a == 1, 1.7, a),
            r"'task' must hold integer .*got 1.7 at row 2",
        ),
    ],
)
def test_bad_columns_name_the_file_and_the_key(tmp_path, key, change, match):
    rng = np.random.default_rng(0)
    arrays = _arrays(rng)
    path = _write(tmp_path / "bad_column.npz", **{**arrays, key: change(arrays[key])})
    with pytest.raises(ValueError, match=rf"bad_column\.npz: {match}"):
        load_mhc_data(path)


def test_whole_float_and_unsigned_task_indices_are_read_as_before(tmp_path):
    rng = np.random.default_rng(0)
    arrays = _arrays(rng)
    for task in (arrays["task"].astype(float), arrays["task"].astype(np.uint8)):
        data = load_mhc_data(_write(tmp_path / "ok.npz", **{**arrays, "task": task}))
        assert data["task"].dtype == np.int64 and data["task"].tolist() == arrays["task"].tolist()
        np.testing.assert_array_equal(data["features"], arrays["features"])
