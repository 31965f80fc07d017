"""Paper 000's experiments end to end with tiny horizons (``horizon`` / ``repetitions``
options, not ``--quick``): summary keys and method names, curves and plots."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch

from botorch_mtucb.experiments.paper000.experiments import SIMILARITY_OMEGAS
from botorch_mtucb.experiments.paper000.methods import (
    DELTA,
    MAIN_JOB_METHODS,
    METHOD_BUILDERS,
    domain_rkhs_norm,
    martingale_mixture_norm_bound,
)
from botorch_mtucb.experiments.registry import load_experiments, run_experiment
from botorch_mtucb.experiments.summary import check_summary
from botorch_mtucb.problems import (
    MultiTaskProblem,
    light_sensor_problem,
    rkhs_problem,
    shifted_branin_problem,
    similarity_problem,
)
from botorch_mtucb.problems.synthetic_000 import se_kernel
from botorch_mtucb.utils import FiniteDomain

TINY = {"horizon": 3, "repetitions": 1}
FIVE = ["MT-KB", "MT-BKB", "IT-KB", "IT-BKB", "MOBO"]
MARTINGALE_MIXTURE = ["MT-CMM-UCB", "MT-DMM-UCB", "IT-CMM-UCB"]
ALL = FIVE + MARTINGALE_MIXTURE
ENTRY_KEYS = {
    "cumulative_regret_mean",
    "cumulative_regret_std",
    "bayes_regret_mean",
    "bayes_regret_std",
    "seconds_per_step",
}
BAYES_KEYS = {"bayes_regret_mean", "bayes_regret_std"}
SKETCHED = {"MT-BKB", "IT-BKB"}


LABELS = {
    "000-rkhs-2": "rkhs-2",
    "000-rkhs-20": "rkhs-20",
    "000-sine": "sine",
    "000-branin": "branin",
    "000-sensor": "sensor",
}


def _check_methods(summary, label, names, keys=ENTRY_KEYS):
    """The one schema, then problem ``label``'s methods: ``names``, with their ``keys``."""
    check_summary(summary)
    methods = summary["problems"][label]["methods"]
    assert list(methods) == names
    for name, entry in methods.items():
        assert keys <= set(entry), name
        assert entry["cumulative_regret_mean"] >= 0 and entry.get("bayes_regret_mean", 0) >= 0
        if name in SKETCHED:
            assert 1 <= entry["final_dictionary_size"] <= summary["settings"]["horizon"]
        else:
            assert "final_dictionary_size" not in entry


def _check_curves(path, names, rows_per_method):
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["method"] for row in rows] == [n for n in names for _ in range(rows_per_method)]
    assert {"cumulative_regret_mean", "cumulative_regret_std", "bayes_regret_mean"} <= set(rows[0])


def test_method_names_and_registry():
    assert list(METHOD_BUILDERS) == ALL
    assert MAIN_JOB_METHODS == ["MT-KB", "IT-KB", "MT-CMM-UCB"]
    names = set(load_experiments())
    expected = {"000-rkhs-2", "000-rkhs-20", "000-sine", "000-branin", "000-sensor"}
    assert expected | {"000-similarity", "000-linear", "000-bayes-regret", "sensor-main"} <= names


@pytest.mark.parametrize(
    "name", ["000-rkhs-2", "000-rkhs-20", "000-sine", "000-branin", "000-sensor"]
)
def test_figure_1_experiments(tmp_path, name):
    summary = run_experiment(name, tmp_path, progress=False, **TINY)
    assert summary["experiment"] == name and summary["settings"]["horizon"] == 3
    assert summary["settings"]["scalarization"] == "chebyshev"
    assert list(summary["problems"]) == [LABELS[name]]
    _check_methods(summary, LABELS[name], ALL)
    stored = json.loads((tmp_path / "summary.json").read_text())
    assert stored == summary
    _check_curves(tmp_path / "curves.csv", ALL, 3)
    for png in ("average_cumulative_regret.png", "bayes_regret.png"):
        assert (tmp_path / png).stat().st_size > 1000


def test_main_job_runs_mt_kb_it_kb_and_mt_cmm_ucb(tmp_path):
    summary = run_experiment("sensor-main", tmp_path, progress=False, **TINY)
    _check_methods(summary, "sensor", ["MT-KB", "IT-KB", "MT-CMM-UCB"], ENTRY_KEYS - BAYES_KEYS)
    for entry in summary["problems"]["sensor"]["methods"].values():
        assert not BAYES_KEYS & set(entry)
    # Its one plot: R_C(t) beside the differences to IT-KB; no R_B (0 on 41 locations).
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["cumulative_regret.png"]


def test_main_job_removes_the_plots_it_no_longer_draws(tmp_path):
    # A results directory of an older version: its R_B and R_C(t)/t plots are stale.
    for stale in ("bayes_regret.png", "average_cumulative_regret.png"):
        (tmp_path / stale).write_bytes(b"old")
    (tmp_path / "mine.png").write_bytes(b"a user's file")
    run_experiment("sensor-main", tmp_path, progress=False, **TINY)
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert names == ["cumulative_regret.png", "mine.png"]
    assert (tmp_path / "mine.png").read_bytes() == b"a user's file"


def test_sensor_figure_labels_the_regret_unit(tmp_path, monkeypatch):
    from botorch_mtucb.experiments.paper000 import scalarized

    labels = []

    def record(results, curve, path, title, ylabel, *args, **kwargs):
        labels.append(ylabel)

    monkeypatch.setattr(scalarized, "save_curves_plot", record)
    run_experiment("000-sensor", tmp_path, progress=False, **TINY)
    assert labels and "lux" in labels[0], labels


@pytest.mark.parametrize(
    "name, scalarization", [("000-linear", "linear"), ("000-bayes-regret", "chebyshev")]
)
def test_two_panel_experiments(tmp_path, name, scalarization):
    summary = run_experiment(name, tmp_path, progress=False, **TINY)
    assert summary["experiment"] == name
    assert summary["settings"]["scalarization"] == scalarization
    assert list(summary["problems"]) == ["rkhs-2", "sine"]
    for panel in summary["problems"]:
        _check_methods(summary, panel, ALL)
        # each panel also has a summary of its own, in the same schema
        panel_summary = json.loads((tmp_path / panel / "summary.json").read_text())
        _check_methods(panel_summary, panel, ALL)
        assert panel_summary["settings"]["scalarization"] == scalarization
        assert panel_summary["problems"][panel] == summary["problems"][panel]
    stored = json.loads((tmp_path / "summary.json").read_text())
    assert list(stored["problems"]) == ["rkhs-2", "sine"]
    with (tmp_path / "curves.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["panel"] for row in rows] == ["rkhs-2"] * 24 + ["sine"] * 24
    figure = tmp_path / f"{name.removeprefix('000-')}.png"
    assert figure.stat().st_size > 1000


def test_similarity_experiment(tmp_path):
    summary = run_experiment("000-similarity", tmp_path, progress=False, **TINY)
    names = [f"MT-KB (omega={w:g})" for w in SIMILARITY_OMEGAS]
    _check_methods(summary, "similarity", names)
    assert summary["problems"]["similarity"]["omegas"] == list(SIMILARITY_OMEGAS)
    _check_curves(tmp_path / "curves.csv", names, 3)
    for png in ("average_cumulative_regret.png", "regret_against_omega.png"):
        assert (tmp_path / png).stat().st_size > 1000


def test_similarity_problem_is_an_rkhs_function_of_its_kernel():
    """omega = 0: identical tasks; every omega: f = sum_i k(., x_i) B_omega c_i with the
    same centres and coefficients (recovered by least squares on the kernel's span)."""
    same = similarity_problem(0.0, seed=1)
    values = same.objective(same.regret_points).numpy()
    np.testing.assert_allclose(values, values[:, :1].repeat(values.shape[1], 1), atol=1e-12)
    a, b = similarity_problem(0.3, seed=1), similarity_problem(0.9, seed=1)
    Fa = a.objective(a.regret_points).numpy()
    Fb = b.objective(b.regret_points).numpy()
    Ba, Bb = a.task_covariance.numpy(), b.task_covariance.numpy()
    # F_omega = K C B_omega: F_a B_a^{-1} = F_b B_b^{-1}
    np.testing.assert_allclose(Fa @ np.linalg.inv(Ba), Fb @ np.linalg.inv(Bb), atol=1e-9)
    assert a.rkhs_norm_bound == pytest.approx(np.linalg.norm(Fa, axis=1).max(), rel=1e-12)
    with pytest.raises(ValueError, match="omega"):
        similarity_problem(1.5)


def test_unknown_option(tmp_path):
    with pytest.raises(ValueError, match="takes no option"):
        run_experiment("000-linear", tmp_path, progress=False, data="x.npz")


def _one_centre_problem(B, c, centre=0.4):
    """``f = Gamma(., x_0) c = k(., x_0) B c``: ``||f||_Gamma^2 = c^T B c k(x_0, x_0)``."""
    kernel = se_kernel(0.2)
    x0 = torch.tensor([[centre]], dtype=torch.float64)
    points = torch.linspace(0.0, 1.0, 5, dtype=torch.float64).unsqueeze(-1)
    return MultiTaskProblem(
        name="one-centre",
        domain=FiniteDomain(points),
        objective_function=lambda X: kernel(X, x0).to_dense() @ (B @ c).unsqueeze(0),
        data_kernel=kernel,
        task_covariance=B,
        noise_std=0.1,
        rkhs_norm_bound=1.0,
        reference_point=torch.zeros(2, dtype=torch.float64),
        regret_points=points,
    )


def test_domain_rkhs_norm_of_a_kernel_section():
    B = torch.tensor([[1.0, 0.3], [0.3, 0.5]], dtype=torch.float64)
    c = torch.tensor([2.0, -1.0], dtype=torch.float64)
    problem = _one_centre_problem(B, c, centre=0.5)  # x_0 on the grid: f in the span
    assert domain_rkhs_norm(problem, B) == pytest.approx(float(c @ B @ c) ** 0.5, rel=1e-9)
    # in the RKHS of k diag(B): ||f_i||_k^2 / B_ii summed over the tasks
    w = B @ c
    independent = float((w.square() / torch.diagonal(B)).sum()) ** 0.5
    assert domain_rkhs_norm(problem, torch.diag(torch.diagonal(B))) == pytest.approx(
        independent, rel=1e-9
    )


def test_domain_rkhs_norm_against_a_dense_pseudo_inverse():
    problem = rkhs_problem(2, seed=1)
    X = problem.domain.points
    K = problem.data_kernel(X, X).to_dense().detach().numpy()
    G = np.kron(K, problem.task_covariance.numpy())
    F = problem.objective(X).detach().numpy().reshape(-1)
    dense = float(np.sqrt(F @ np.linalg.pinv(G, rcond=1e-12, hermitian=True) @ F))
    assert domain_rkhs_norm(problem, problem.task_covariance) == pytest.approx(dense, rel=1e-6)
    with pytest.raises(ValueError, match="FiniteDomain"):
        domain_rkhs_norm(shifted_branin_problem(continuous=True), torch.eye(9))


def test_martingale_mixture_methods_get_a_valid_norm_bound():
    heuristic = rkhs_problem(2, seed=0)  # paper 000's b = max ||f|| / lambda_max(B)
    exact = domain_rkhs_norm(heuristic, heuristic.task_covariance)
    assert heuristic.rkhs_norm_bound < exact
    policy = METHOD_BUILDERS["MT-CMM-UCB"](heuristic)
    assert policy.rule.bound.rkhs_norm_bound == exact
    assert policy.rule.bound.noise_std == heuristic.noise_std and policy.rule.bound.delta == DELTA
    assert policy.rule.alphas is None
    dmm = METHOD_BUILDERS["MT-DMM-UCB"](heuristic)
    assert dmm.rule.alphas.tolist() == pytest.approx([0.001, 0.003, 0.01, 0.03, 0.1])
    independent = METHOD_BUILDERS["IT-CMM-UCB"](heuristic)
    diagonal = torch.diag(torch.diagonal(heuristic.task_covariance))
    assert torch.equal(independent.rule.bound.kernel.task_covariances[0], diagonal)
    assert independent.rule.bound.rkhs_norm_bound == domain_rkhs_norm(heuristic, diagonal)
    sensor = light_sensor_problem()  # its b is the exact norm: kept as MT-KB's
    B = sensor.task_covariance
    assert martingale_mixture_norm_bound(sensor, B, sensor.rkhs_norm_bound) == (
        sensor.rkhs_norm_bound
    )
    assert METHOD_BUILDERS["IT-CMM-UCB"](sensor).rule.bound.rkhs_norm_bound == (
        sensor.independent_rkhs_norm_bound
    )
    assert martingale_mixture_norm_bound(heuristic, heuristic.task_covariance, 100.0) == 100.0
