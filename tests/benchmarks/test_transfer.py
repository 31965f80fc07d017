"""``benchmark transfer``: the loop's bookkeeping against a recomputation (designs shared by
the methods, regret, no repeated arm, the refit schedule), every method in a short run,
resume, refusal of other settings, the table and the aims, the quick mode."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest
import torch

from botorch_mtucb.__main__ import main
from botorch_mtucb.benchmarks import transfer_methods
from botorch_mtucb.benchmarks.transfer import (
    TargetOracle,
    TransferRun,
    TransferSettings,
    load_run,
    measure,
    run_file,
    run_method,
)
from botorch_mtucb.benchmarks.transfer_methods import METHODS, fit_multi_task_gp
from botorch_mtucb.benchmarks.transfer_problems import (
    INITIAL_DESIGN,
    TRANSFER_PROBLEMS,
    alleles_problem,
    initial_state,
)
from botorch_mtucb.benchmarks.transfer_report import aims, table
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.problems import hpo_transfer_problem, mhc_binding_problem


@pytest.fixture(autouse=True)
def short_fits(monkeypatch):
    """Hyperparameter fits of at most 15 L-BFGS steps: the tests check the loop, not the
    fit (a full MultiTaskGP fit takes seconds)."""
    fit = transfer_methods.fit_gpytorch_mll

    def short(mll):
        return fit(mll, optimizer_kwargs={"options": {"maxiter": 15}})

    monkeypatch.setattr(transfer_methods, "fit_gpytorch_mll", short)


def test_initial_state_draws_sources_and_design_by_seed():
    settings = TransferSettings(6)
    state, oracle = initial_state("hpo-related", 4, settings.evaluations, settings.initial_design)
    again, _ = initial_state("hpo-related", 4, settings.evaluations, settings.initial_design)
    other, _ = initial_state("hpo-related", 5, settings.evaluations, settings.initial_design)
    problem = hpo_transfer_problem("digits", ["breast_cancer", "wine"])
    assert state.evaluated == again.evaluated != other.evaluated
    assert len(state.evaluated) == INITIAL_DESIGN
    assert state.source_tasks.tolist() == [1] * 30 + [2] * 30
    for task in (1, 2):  # 30 distinct arms of the source, with their exact scores
        X = state.source_X[state.source_tasks == task]
        assert torch.unique(X, dim=0).shape[0] == 30
        rows = [int((problem.arms[task] == x).all(-1).nonzero()) for x in X]
        expected = problem.values[task][rows]
        torch.testing.assert_close(state.source_Y[state.source_tasks == task, 0], expected)
    torch.testing.assert_close(state.target_Y[:, 0], oracle.values[state.evaluated])


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_runs_and_the_regret_is_recomputed(method):
    settings = TransferSettings(5)
    state, oracle = initial_state("hpo-negated", 1, settings.evaluations, settings.initial_design)
    run = run_method(state, oracle, "hpo-negated", method, 1, settings)
    assert run.error is None, run.error
    values = hpo_transfer_problem("digits").values[0].numpy()
    assert run.evaluated[:2] == state.evaluated  # the shared design
    assert len(set(run.evaluated)) == 5  # no arm twice
    expected = [values.max() - values[run.evaluated[: k + 1]].max() for k in range(5)]
    np.testing.assert_allclose(run.regret, expected, atol=1e-12)
    assert state.evaluated == run.evaluated[:2]  # the caller's state is not touched


def test_refit_schedule_and_choices(monkeypatch):
    seen = []

    def first_remaining(state):
        seen.append((len(state.evaluated), state.refit))
        return int(state.remaining()[0])

    monkeypatch.setitem(METHODS, "probe", lambda: first_remaining)
    settings = TransferSettings(8, refit_at=(4, 6))
    state, oracle = initial_state("hpo-related", 0, settings.evaluations, settings.initial_design)
    run = run_method(state, oracle, "hpo-related", "probe", 0, settings)
    assert seen == [(2, False), (3, False), (4, True), (5, False), (6, True), (7, False)]
    remaining = [i for i in range(121) if i not in state.evaluated]
    assert run.evaluated[2:] == remaining[:6]


def test_oracle_copy_repeats_the_noise():
    oracle = TargetOracle(torch.tensor([0.0, 1.0], dtype=torch.float64), 0.5, torch.Generator())
    oracle.noise.manual_seed(3)
    copy = oracle.copy()
    assert float(oracle.observe(1)) == float(copy.observe(1)) != 1.0
    assert oracle.regret(0) == 1.0


def test_measure_resumes_and_refuses_other_settings(tmp_path, capsys):
    settings = TransferSettings(4)
    first = measure(["hpo-related"], ["random"], [0, 1], settings, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "hpo-related__random__seed0.json",
        "hpo-related__random__seed1.json",
    ]
    capsys.readouterr()
    again = measure(["hpo-related"], ["random"], [0, 1], settings, tmp_path)
    assert "2 run(s) already in" in capsys.readouterr().out
    assert [r.regret for r in again] == [r.regret for r in first]
    path = run_file(tmp_path, "hpo-related", "random", 1)
    path.write_text("{not json")  # a malformed file is run again
    assert load_run(path, settings) is None
    rerun = measure(["hpo-related"], ["random"], [0, 1], settings, tmp_path)
    assert load_run(path, settings).regret == first[1].regret == rerun[1].regret
    with pytest.raises(ValueError, match="other settings"):
        measure(["hpo-related"], ["random"], [0], TransferSettings(5), tmp_path)
    stored = json.loads(path.read_text())
    stored["error"] = "Traceback ..."  # a run that raised is tried again
    path.write_text(json.dumps(stored))
    assert load_run(path, settings) is None


def _run(method, regrets, problem="hpo-related"):
    return TransferRun(problem, method, 0, regrets, 0.5, None, {}, list(range(len(regrets))))


def test_table_and_aims_compute_their_statistics():
    settings = TransferSettings(5)  # checkpoints [5]
    runs = [
        _run("ST-qLogNEI", [1.0] * 4 + [0.4]),
        _run("ST-qLogNEI", [1.0] * 4 + [0.2]),
        _run("MTGP-qLogNEI", [1.0] * 4 + [0.2]),
        _run("MTGP-qLogNEI", [1.0] * 4 + [0.0]),
        _run("ST-qLogNEI", [0.1] * 5, "hpo-negated"),
        _run("TC-UCB", [0.2] * 5, "hpo-negated"),
    ]
    text = table(runs, ["hpo-related", "hpo-negated"], list(METHODS), settings)
    row = next(line for line in text.splitlines() if "MTGP-qLogNEI" in line)
    assert "0.1 [0.05, 0.15]" in row and " 0.33 " in row  # mean 0.1 / 0.3
    lines = aims(runs, ["hpo-related", "hpo-negated"], settings).splitlines()
    assert "0.33 (aim <= 0.70): met" in lines[0]
    assert "2.00 (aim <= 1.05): missed" in lines[1]


def test_alleles_problem_selects_and_negates():
    full = mhc_binding_problem()
    names = [str(n) for n in full.task_names]
    problem = alleles_problem("A_2402", ["A_0201"], ["A_0203"])
    for task, (name, sign) in enumerate([("A_2402", 1), ("A_0201", 1), ("A_0203", -1)]):
        row = names.index(name)
        torch.testing.assert_close(problem.arms[task], full.arms[row])
        torch.testing.assert_close(problem.values[task], sign * full.values[row])
    with pytest.raises(ValueError, match="alleles must be among"):
        alleles_problem("A_9999")
    with pytest.raises(ValueError, match="once"):
        alleles_problem("A_0201", ["A_0201"])


def test_every_problem_builds_with_enough_source_arms():
    for name, spec in TRANSFER_PROBLEMS.items():
        problem = spec.build()
        assert problem.num_tasks in (2, 3), name
        assert all(a.shape[0] >= spec.source_observations for a in problem.arms[1:]), name


def test_quick_mode(tmp_path, capsys):
    assert main(["benchmark", "transfer", "--quick", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "regret@5" in out and "(aim <= 0.70)" in out
    assert len(list(tmp_path.glob("*.json"))) == len(METHODS)
    assert (tmp_path / "regret.png").exists()
    stored = load_run(run_file(tmp_path, "hpo-related", "MT-MM-UCB", 0), TransferSettings(5))
    assert asdict(stored)["settings"]["evaluations"] == 5


def test_the_signed_model_converts_to_its_own_posterior():
    """The package's routes fit MultiTaskGP with an IndexKernel (task correlations of any
    sign); VectorValuedGP.from_model reads it: the same target posterior on the grid."""
    state, _ = initial_state("hpo-negated", 0, 5)
    model = fit_multi_task_gp(state, signed=True)
    assert type(model.covar_module.kernels[1]).__name__ == "IndexKernel"
    assert sorted(state.fitted) == ["signed"]
    converted = VectorValuedGP.from_model(model)
    with torch.no_grad():
        expected = model.posterior(state.arms)
        ours = model.outcome_transform.untransform_posterior(converted.posterior(state.arms))
    torch.testing.assert_close(ours.mean[:, :1], expected.mean)
    torch.testing.assert_close(ours.variance[:, :1], expected.variance)
