"""run_policy: JSON-lines records written as rounds end, exact resumption."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
import torch
from tiny_problem import TinyProblem

from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy


class RandomPolicy:
    """Picks a random grid point; remembers what it saw (its diagnostics depend on it)."""

    name = "random"

    def __init__(self, points: torch.Tensor, path=None) -> None:
        self.points = points
        self.path = path
        self.total = 0.0
        self.num_updates = 0
        self.rounds_on_disk: list[int] = []

    def select(self, context, generator):
        if self.path is not None and self.path.exists():
            # records of the rounds already finished are on disk (header + rounds)
            self.rounds_on_disk.append(len(self.path.read_text().splitlines()) - 1)
        index = int(torch.randint(len(self.points), (1,), generator=generator))
        return self.points[index]

    def update(self, x, y, context, generator):
        self.total += float(y.sum())
        self.num_updates += 1

    def diagnostics(self):
        return {"total": self.total, "num_updates": self.num_updates}


def _comparable(records):
    rows = []
    for record in records:
        row = asdict(record)
        row.pop("seconds")
        rows.append(row)
    return rows


def _run(horizon, path=None, seed=3, policy=None):
    problem = TinyProblem()
    policy = policy or RandomPolicy(problem.points, path)
    return run_policy(policy, ScalarizedEnvironment(problem), horizon, seed=seed, path=path)


@pytest.fixture(scope="module")
def reference():
    return _comparable(_run(10))


def test_records_are_written_as_rounds_end(tmp_path, reference):
    path = tmp_path / "run.jsonl"
    problem = TinyProblem()
    policy = RandomPolicy(problem.points, path)
    records = _run(10, path, policy=policy)
    assert policy.rounds_on_disk == list(range(10))
    assert _comparable(records) == reference
    lines = path.read_text().splitlines()
    assert "header" in json.loads(lines[0])
    stored = [json.loads(line) for line in lines[1:]]
    assert [row["t"] for row in stored] == list(range(1, 11))
    for row, expected in zip(stored, reference):
        row.pop("seconds")
        assert row == expected
    # contexts hold the weights, not the "_scalarization" object
    assert set(reference[0]["context"]) == {"weights"}
    assert reference[-1]["diagnostics"]["num_updates"] == 10


def test_same_seed_same_records_other_seed_differs(reference):
    assert _comparable(_run(10)) == reference
    other = _comparable(_run(10, seed=4))
    assert [r["context"] for r in other] != [r["context"] for r in reference]


def test_resume_after_a_shorter_run(tmp_path, reference):
    path = tmp_path / "run.jsonl"
    first = _run(5, path)
    assert _comparable(first) == reference[:5]
    resumed = _run(10, path)
    assert _comparable(resumed) == reference
    # the file now holds the full run; reading it again replays without new rounds
    again = _run(10, path)
    assert _comparable(again) == reference
    assert len(path.read_text().splitlines()) == 11
    # a shorter horizon reads a prefix and keeps the longer run on disk
    assert _comparable(_run(3, path)) == reference[:3]
    assert len(path.read_text().splitlines()) == 11
    # A finished run is replayed into the policy by default, or only read back.
    problem = TinyProblem()
    for replay, updates in ((True, 10), (False, 0)):
        policy = RandomPolicy(problem.points)
        records = run_policy(
            policy,
            ScalarizedEnvironment(problem),
            10,
            seed=3,
            path=path,
            replay_finished=replay,
        )
        assert _comparable(records) == reference and policy.num_updates == updates
    # An unfinished run is always replayed and completed.
    path.write_text("\n".join(path.read_text().splitlines()[:5]) + "\n")
    policy = RandomPolicy(problem.points)
    records = run_policy(
        policy, ScalarizedEnvironment(problem), 10, seed=3, path=path, replay_finished=False
    )
    assert _comparable(records) == reference and policy.num_updates == 10


@pytest.mark.parametrize("keep", (0, 4, 9))
@pytest.mark.parametrize("torn", (False, True))
def test_resume_after_an_interruption(tmp_path, reference, keep, torn):
    path = tmp_path / "run.jsonl"
    _run(10, path)
    lines = path.read_text().splitlines(keepends=True)
    text = "".join(lines[: 1 + keep])
    if torn:
        text += lines[1 + keep][: len(lines[1 + keep]) // 2]  # half a line, no newline
    path.write_text(text)
    problem = TinyProblem()
    policy = RandomPolicy(problem.points)
    resumed = _run(10, path, policy=policy)
    assert _comparable(resumed) == reference
    assert policy.num_updates == 10  # replayed rounds plus new ones
    stored = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert [row["t"] for row in stored] == list(range(1, 11))


def test_a_file_from_a_different_run_raises(tmp_path):
    path = tmp_path / "run.jsonl"
    _run(4, path, seed=3)
    with pytest.raises(ValueError, match="different run"):
        _run(4, path, seed=5)

    class Other(RandomPolicy):
        name = "other"

    with pytest.raises(ValueError, match="different run"):
        _run(4, path, policy=Other(TinyProblem().points))


def test_bad_horizon():
    for horizon in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="horizon must be a positive int"):
            _run(horizon)


def test_policy_settings_are_checked_on_resume(tmp_path):
    # A policy whose behaviour depends on a parameter (e.g. MT-BKB's q, which depends
    # on the horizon) records it; a run made with another value is never resumed.
    class Tuned(RandomPolicy):
        def __init__(self, points, accuracy):
            super().__init__(points)
            self.accuracy = accuracy

        def settings(self):
            return {"accuracy": self.accuracy}

    path = tmp_path / "run.jsonl"
    points = TinyProblem().points
    _run(3, path, policy=Tuned(points, 10.0))
    assert json.loads(path.read_text().splitlines()[0])["header"]["settings"] == {"accuracy": 10.0}
    assert len(_run(5, path, policy=Tuned(points, 10.0))) == 5
    with pytest.raises(ValueError, match="different run"):
        _run(5, path, policy=Tuned(points, 20.0))
