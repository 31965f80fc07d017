"""The run directory: every file an experiment writes is one it names, its names are
spelled nowhere else in ``experiments``, its lock is taken through it alone, and its
claim refuses another run's directory."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

import botorch_mtucb.experiments as experiments_package
from botorch_mtucb.experiments.output_lock import OutputLockedError
from botorch_mtucb.experiments.registry import run_experiment
from botorch_mtucb.experiments.run_directory import (
    RunDirectory,
    collect_unwritten_files,
    write_result_file,
)

EXPERIMENTS = Path(experiments_package.__file__).parent


def test_an_experiment_writes_exactly_the_files_its_directory_names(tmp_path):
    summary = run_experiment("000-sine", tmp_path, progress=False, horizon=2, repetitions=1)
    directory = RunDirectory(tmp_path)
    methods = summary["problems"]["sine"]["methods"]
    named = {
        directory.settings_file,
        directory.summary_file,
        directory.curves_file,
        directory.curve_plot_file("cumulative_regret", time_average=True),
        directory.curve_plot_file("bayes_regret"),
        directory.lock_files[1],  # the lock file stays; the holder's record goes
        *(directory.run_file(method, 0) for method in methods),
    }
    written = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert written == named
    assert directory.has_runs() and len(methods) == len(list(tmp_path.glob("runs/*")))


def test_sub_directories_and_path_likes():
    directory = RunDirectory(Path("out"))
    assert RunDirectory(directory) == directory and Path(directory) == Path("out")
    assert directory.sub("b_sweep").run_file("MT-UCB b=0.1", 3) == Path(
        "out/b_sweep/runs/MT-UCB_b_0.1/rep3.jsonl"
    )
    assert str(directory) == "out" and len({directory, RunDirectory("out")}) == 1


def test_the_lock_is_reentrant_in_a_thread_and_refused_in_another(tmp_path):
    directory = RunDirectory(tmp_path / "out")
    refused = []

    def other_thread():
        try:
            with RunDirectory(tmp_path / "out").locked():
                pass
        except OutputLockedError as error:
            refused.append(error)

    with directory.locked() as held, RunDirectory(tmp_path / ".." / tmp_path.name / "out").locked():
        assert held is directory and directory.lock_files[0].exists()  # the holder's record
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert len(refused) == 1 and not directory.lock_files[0].exists()
    directory.remove_lock_files()
    assert list(directory.path.iterdir()) == []


def test_claim_refuses_another_runs_directory(tmp_path):
    directory = RunDirectory(tmp_path)
    assert directory.claim({"experiment": "a"}) is True
    assert directory.claim({"experiment": "a"}) is False
    with pytest.raises(ValueError, match="holds results of another run"):
        directory.claim({"experiment": "b"})
    directory.settings_file.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read .*experiment.json"):
        directory.claim({"experiment": "a"})
    other = RunDirectory(tmp_path / "other")
    other.run_file("A", 0).parent.mkdir(parents=True)
    other.run_file("A", 0).write_text("")
    with pytest.raises(ValueError, match="runs of unknown settings"):
        other.claim({"experiment": "a"})
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="exists and is not a directory"):
        RunDirectory(tmp_path / "file").make()


def test_result_files_are_listed_inside_collect_unwritten_files(tmp_path):
    missing = tmp_path / "no-such-folder" / "summary.json"
    with pytest.raises(FileNotFoundError):
        write_result_file(missing, b"{}")
    with collect_unwritten_files() as unwritten:
        write_result_file(missing, b"{}")
        write_result_file(tmp_path / "made" / "a.png", b"PNG", make_folders=True)
    assert [path for path, _ in unwritten] == [missing]
    assert (tmp_path / "made" / "a.png").read_bytes() == b"PNG"


def _code_strings(path: Path) -> list[str]:
    """The string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


# A result file -> how its name ends where it is spelled (the owner of each spelling).
SPELLINGS = {
    "summary.json": (("summary.json",), "run_directory.py"),
    "curves.csv": (("curves.csv", "curves"), "run_directory.py"),
    "experiment.json": (("experiment.json",), "run_directory.py"),
    "run files": ((".jsonl",), "run_directory.py"),
    "plots": ((".png",), "run_directory.py"),
    "lock files": ((".lock", ".lock-holder.json"), "output_lock.py"),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_file_names_are_spelled_once(name):
    endings, owner = SPELLINGS[name]
    spelled = [
        path.relative_to(EXPERIMENTS).as_posix()
        for path in sorted(EXPERIMENTS.rglob("*.py"))
        if any(text.endswith(endings) for text in _code_strings(path))
    ]
    assert spelled == [owner]


def test_the_lock_is_taken_through_the_run_directory_alone():
    callers = []
    for path in sorted(EXPERIMENTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "locked_output":
                callers.append(path.relative_to(EXPERIMENTS).as_posix())
    assert callers == ["run_directory.py"]


def test_a_stale_result_file_that_cannot_be_removed_is_listed_not_raised(tmp_path):
    from botorch_mtucb.experiments.run_directory import (
        collect_unwritten_files,
        remove_result_file,
    )

    stale = tmp_path / "bayes_regret.png"
    stale.mkdir()  # unlink fails on a directory: an OSError like a read-only folder's
    with pytest.raises(OSError):
        remove_result_file(stale)
    with collect_unwritten_files() as unwritten:
        remove_result_file(stale)
        remove_result_file(tmp_path / "missing.png")  # nothing to remove: nothing listed
    assert [path for path, _ in unwritten] == [stale]
