"""The ``coverage`` benchmark: its pieces against independent computations, and a quick
run in which every bound's violation rate is compatible with ``delta`` and every control
(told ``B / 4``) shows violations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from scipy.stats import binom

from botorch_mtucb.__main__ import main as package_main
from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
from botorch_mtucb.bandits import ImprovedWidth
from botorch_mtucb.benchmarks.coverage import Settings, main, play, run_once, run_setup
from botorch_mtucb.benchmarks.coverage_bounds import (
    CASES,
    CONTROLS,
    KernelUCBTracker,
    NoiseFreeKernelUCBTracker,
    ScalarizedTracker,
    TaskIndexedTracker,
    ball_margin,
    band_margin,
)
from botorch_mtucb.benchmarks.coverage_report import RunOutcome, clopper_pearson, summarize
from botorch_mtucb.benchmarks.coverage_truths import sample_expansion, sample_related_tasks
from botorch_mtucb.confidence import EmptyConfidenceSetError, task_kernel_matrix
from botorch_mtucb.confidence.martingale_mixture.noise_level import NUMERICAL_NOISE_FLOOR
from botorch_mtucb.problems import make_kernel
from botorch_mtucb.utils.random import POLICY_STREAM, round_generator

# The kernel's own lengthscale: GPyTorch stores ``lengthscale = 0.2`` through a float32
# tensor (0.20000000298...), and the ground truths are expansions in that kernel.
LENGTHSCALE = float(make_kernel("rbf", 0.2).lengthscale)


def _rbf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``exp(-||a - b||^2 / (2 l^2))`` in NumPy (independent of GPyTorch)."""
    squared = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-squared / (2 * LENGTHSCALE**2))


# ---------------------------------------------------------------- ground truths
@pytest.mark.parametrize("num_tasks", [1, 3])
def test_expansion_has_the_norm_asked_for_in_the_vector_valued_rkhs(num_tasks):
    B = task_kernel_matrix(num_tasks, 1.0) if num_tasks > 1 else torch.eye(1, dtype=torch.float64)
    f = sample_expansion(make_kernel("rbf", 0.2), 2, 2.5, B, torch.Generator())
    Z, C, Bn = f.centres.numpy(), f.coefficients.numpy(), B.numpy()
    K = _rbf(Z, Z)
    # ||f||^2 = sum_{j,l} c_j^T Gamma(z_j, z_l) c_l with Gamma = k B, term by term
    norm_sq = sum(C[j] @ (K[j, l] * Bn) @ C[l] for j in range(len(Z)) for l in range(len(Z)))
    assert math.sqrt(norm_sq) == pytest.approx(2.5, rel=1e-12)
    assert f.rkhs_norm == pytest.approx(2.5, rel=1e-12)
    X = np.random.default_rng(0).random((7, 2))
    expected = sum(_rbf(X, Z[j : j + 1]) * (Bn @ C[j])[None, :] for j in range(len(Z)))
    np.testing.assert_allclose(f(torch.from_numpy(X)).numpy(), expected, rtol=1e-12)


def test_expansion_norm_equals_the_minimum_norm_interpolant_at_its_centres():
    # An independent route: f lies in the span of Gamma(z_j, .), so its norm is that of
    # the interpolant of its values at the centres, vec(F)^T (K kron B)^{-1} vec(F).
    B = task_kernel_matrix(2, 3.0)
    centres = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)  # well separated
    f = sample_expansion(make_kernel("rbf", 0.2), 1, 1.7, B, torch.Generator())
    f = type(f)(f.kernel, centres, f.coefficients[:6], f.task_covariance)
    F = f(centres).numpy().reshape(-1)
    gram = np.kron(_rbf(centres.numpy(), centres.numpy()), B.numpy())
    assert math.sqrt(F @ np.linalg.solve(gram, F)) == pytest.approx(f.rkhs_norm, rel=1e-9)


def test_related_tasks_have_the_largest_task_norm_and_the_deviation_asked_for():
    f = sample_related_tasks(make_kernel("rbf", 0.2), 1, 4, 1.3, 0.3, torch.Generator())
    Z, C = f.centres.numpy(), f.coefficients.numpy()
    K = _rbf(Z, Z)
    norms = np.sqrt(np.einsum("ji,jl,li->i", C, K, C))
    centred = C - C.mean(1, keepdims=True)  # f_i - f_avg
    deviations = np.sqrt(np.einsum("ji,jl,li->i", centred, K, centred))
    assert norms.max() == pytest.approx(1.3, rel=1e-12)
    np.testing.assert_allclose(f.task_norms().numpy(), norms, rtol=1e-12)
    assert f.task_deviation() == pytest.approx(deviations.max() / 1.3, rel=1e-12)


@pytest.mark.parametrize("family", ["000", "001", "002"])
def test_run_setup_draws_truths_of_norm_b(family):
    setup = run_setup(family, 0.8, 0.1, 10, seed=3)
    if family == "001":
        assert float(setup.truth.task_norms().max()) == pytest.approx(0.8, rel=1e-12)
    else:
        assert setup.truth.rkhs_norm == pytest.approx(0.8, rel=1e-12)
    assert setup.values.shape == (40, 1 if family == "002" else 3)
    assert torch.equal(run_setup(family, 0.8, 0.1, 10, seed=3).values, setup.values)


# ------------------------------------------------------------ statistics, checks
def test_clopper_pearson_known_values():
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(0.30850, abs=1e-5))
    assert clopper_pearson(10, 10) == (pytest.approx(0.69150, abs=1e-5), 1.0)
    lower, upper = clopper_pearson(5, 10)
    assert (round(lower, 4), round(upper, 4)) == (0.1871, 0.8129)
    # definition: P(X >= k | p_lo) = P(X <= k | p_hi) = 2.5%
    lower, upper = clopper_pearson(7, 200)
    assert binom.sf(6, 200, lower) == pytest.approx(0.025, rel=1e-8)
    assert binom.cdf(7, 200, upper) == pytest.approx(0.025, rel=1e-8)
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson(3, 2)


def test_band_and_ball_margins_on_a_hand_made_case():
    lower, upper = torch.tensor([0.0, 0.0, 0.0, -2.0]), torch.tensor([2.0, 2.0, 2.0, 0.0])
    values = torch.tensor([1.0, 2.0, 2.5, -1.5])  # centre, upper edge, outside, inside
    assert band_margin(values, lower, upper).tolist() == [1.0, 0.0, -0.5, 0.5]
    error = torch.tensor([[0.6, 0.8], [3.0, 4.0]])  # norms 1 and 5
    assert ball_margin(error, torch.tensor([2.0, 4.0])).tolist() == [0.5, -0.25]


class _ScriptedTracker:
    """Margins given per round; raises an empty set at round ``empty``."""

    observation_size = 1

    def __init__(self, margins, empty=None):
        self.margins, self.empty, self.t, self.updates = margins, empty, 0, 0

    def evaluate(self, generator):
        if self.t == self.empty:
            raise EmptyConfidenceSetError("empty")
        margin = torch.tensor(self.margins[self.t], dtype=torch.float64)
        self.t += 1
        return torch.zeros(2), margin

    def update(self, index, noise, generator):
        self.updates += 1


def test_play_finds_the_first_violation_and_stops_there():
    margins = [[0.5, 0.2], [0.1, 0.3], [0.4, -0.01], [0.2, 0.2], [-1.0, 0.0]]
    tracker = _ScriptedTracker(margins)
    outcome = play(tracker, horizon=4, noise_std=0.1, seed=0)
    assert outcome == RunOutcome(-0.01, 2, 2) and tracker.updates == 2
    outcome = play(_ScriptedTracker(margins), horizon=4, noise_std=0.1, seed=0, stop=False)
    assert outcome == RunOutcome(-1.0, 2, 4)
    assert not play(_ScriptedTracker([[0.0]] * 4), horizon=3, noise_std=0.1, seed=0).violated
    outcome = play(_ScriptedTracker(margins, empty=3), 4, 0.1, 0, stop=False)
    assert outcome.empty_set and outcome.violated and outcome.slack == -math.inf


def test_summarize_counts_violations_and_slack():
    outcomes = [RunOutcome(0.3), RunOutcome(-0.2, 1, 1), RunOutcome(0.1), RunOutcome(0.5)]
    row = summarize("x", "src", 1.0, 0.5, outcomes, 1.0)
    assert (row.violations, row.rate, row.slack_median, row.slack_min) == (1, 0.25, 0.2, -0.2)
    assert row.interval == clopper_pearson(1, 4) and row.valid


# --------------------------------------------- trackers use the bound's own UCB
def _advance(tracker, rounds):
    for t in range(rounds):
        generator = round_generator(0, t, POLICY_STREAM)
        ucb, _ = tracker.evaluate(generator)
        noise = 0.1 * torch.randn(
            tracker.observation_size, generator=generator, dtype=torch.float64
        )
        tracker.update(int(ucb.argmax()), noise, generator)
    return tracker.evaluate(round_generator(0, rounds, POLICY_STREAM))


@pytest.mark.parametrize("variant", ["mt_kb", "mt_bkb"])
def test_scalarized_tracker_ucb_is_the_policy_acquisition(variant):
    setup = run_setup("000", 1.0, 0.1, 10, seed=1)
    tracker = getattr(ScalarizedTracker, variant)(setup, 1.0, 0.5)
    ucb, margin = _advance(tracker, 6)
    rule = tracker.policy.rule
    acquisition = ScalarizedMultiTaskUCB(rule.model, tracker.scalarization, rule.width)
    with torch.no_grad():
        expected = acquisition(setup.candidates.unsqueeze(-2))
    torch.testing.assert_close(ucb, expected, rtol=1e-12, atol=1e-12)
    # the margin is the ball of Theorem 1 / Lemma 9, computed densely here
    posterior = rule.model.posterior(setup.candidates.unsqueeze(-2))
    covariance = posterior.distribution.covariance_matrix  # N x n x n
    radius = float(rule.width) * torch.linalg.eigvalsh(covariance)[..., -1].sqrt()
    error = (setup.values - posterior.mean.squeeze(-2)).norm(dim=-1)
    torch.testing.assert_close(margin, 1 - error / radius, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["CMM-UCB", "DMM-UCB", "AMM-UCB", "AY-GP-UCB", "IGP-UCB"])
def test_kernel_ucb_tracker_ucb_is_the_rule_acquisition(method):
    setup = run_setup("002", 1.0, 0.1, 10, seed=1)
    tracker = KernelUCBTracker(setup, method, 1.0, 0.5)
    ucb, _ = _advance(tracker, 5)
    with torch.no_grad():
        expected = tracker.rule.acquisition()(setup.candidates.unsqueeze(-2))
    torch.testing.assert_close(ucb, expected, rtol=1e-12, atol=1e-12)


def test_task_indexed_tracker_picks_what_mt_ucb_picks():
    setup = run_setup("001", 1.0, 0.1, 10, seed=2)
    tracker = TaskIndexedTracker(setup, ImprovedWidth, 1.0, 0.25)
    ucb, margin = _advance(tracker, 5)
    x = tracker.policy.select({"task": tracker.task}, torch.Generator().manual_seed(0))
    assert torch.equal(x, setup.candidates[int(ucb.argmax())])
    assert margin.shape == (3, 40) and bool((margin > 0).all())


def test_every_bound_and_control_is_run():
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)) == 16
    assert set(CONTROLS) <= set(names)
    settings = Settings(runs=1, horizon=2, delta=0.5, rkhs_norm=1.0, noise_std=0.1, seed=0)
    # told B / 4 the exact bound already fails under the prior for this truth
    case = next(case for case in CASES if case.name == "CMM (exact)")
    assert run_once(case, 0.25, 0, settings).violated


def test_noise_free_rows_observe_f_exactly_with_the_floor_sigma():
    setup = run_setup("002", 1.0, 0.1, 5, seed=0)
    tracker = NoiseFreeKernelUCBTracker(setup, "CMM-UCB", 1.0, 0.5)
    for index in (3, 7):
        tracker.update(index, torch.full((1,), 5.0, dtype=torch.float64), None)
    bound = tracker.rule.bound
    assert bound.noise_std == NUMERICAL_NOISE_FLOOR
    assert torch.equal(bound.train_Y[:, 0], setup.values[[3, 7], 0])  # the noise is not added
    _, margin = tracker.evaluate(torch.Generator())
    assert bool((margin >= 0).all())


# -------------------------------------------------------------- the quick run
def test_quick_run_rates_are_within_delta_and_controls_fail(tmp_path, capsys):
    output = tmp_path / "coverage.json"
    code = main(["--quick", "--workers", "1", "--output", str(output)])
    printed = capsys.readouterr().out
    assert "1 torch thread(s) x 1 worker(s)" in printed and "slack = min over rounds" in printed
    summary = json.loads(output.read_text())
    rows = summary["rows"]
    assert summary["settings"]["delta"] == 0.5 and summary["settings"]["runs"] == 20
    bounds = [row for row in rows if row["norm_factor"] == 1.0]
    controls = [row for row in rows if row["norm_factor"] != 1.0]
    assert [row["name"] for row in bounds] == [case.name for case in CASES]
    assert sorted(row["name"] for row in controls) == sorted(CONTROLS)
    for row in bounds:  # an invalid bound (rate > delta) would fail this
        assert row["interval"][0] <= row["delta"], row
    for row in controls:  # proof that the check can fail
        assert row["violations"] >= 1, row
    assert code == 0
    assert output.with_suffix(".csv").read_text().count("\n") == len(rows) + 1


def test_options_are_checked(capsys):
    with pytest.raises(SystemExit):
        main(["--delta", "1.5"])
    assert "--delta must lie in (0, 1)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--rkhs-norm", "0"])
    assert "--rkhs-norm must be > 0" in capsys.readouterr().err


def test_listed_by_the_benchmark_command(capsys):
    assert package_main(["benchmark", "--list"]) == 0
    assert "coverage" in capsys.readouterr().out.split()


def test_multi_task_mixture_trackers_use_the_issue_12_kernels_and_norms():
    """000: the truth's ICM kernel and its norm B, full-vector data; 001: K_task(b) with
    b = 1 and B sqrt(N (1 + b eps^2)) (paper 001, A.1: ||f~||^2 = sum ||f_i||^2 + b sum
    ||f_i - f_avg||^2), task-indexed data; the UCB is the bound of the round's context."""
    from botorch_mtucb.benchmarks.coverage_bounds import MultiTaskMixtureTracker

    setup = run_setup("001", 1.0, 0.1, 10, seed=3)
    tracker = MultiTaskMixtureTracker.task_indexed(setup, 1.0, 0.5)
    eps = setup.truth.task_deviation()
    assert tracker.bound.rkhs_norm_bound == pytest.approx((3 * (1 + eps**2)) ** 0.5)
    B = tracker.bound.kernel.task_covariances[0]
    expected = (
        torch.full((3, 3), 1 / 6, dtype=torch.float64) + torch.eye(3, dtype=torch.float64) / 2
    )
    torch.testing.assert_close(B, expected)  # (1 / (1 + b)) I + b / ((1 + b) N) 11^T
    ucb, margin = _advance(tracker, 4)
    assert tracker.bound.num_observations == 4 and not tracker.bound.full_vector
    assert torch.equal(ucb, tracker.bound.upper(setup.candidates)[:, tracker.task])
    setup = run_setup("000", 1.0, 0.1, 10, seed=3)
    tracker = MultiTaskMixtureTracker.full_vector(setup, 1.0, 0.5)
    ucb, margin = _advance(tracker, 4)
    assert tracker.bound.num_observations == 12 and tracker.bound.kronecker_route
    torch.testing.assert_close(ucb, tracker.bound.upper(setup.candidates, tracker.weights))
    assert margin.shape == (3, 40) and bool((margin > 0).all())


def test_a_subset_of_bounds_runs_with_its_controls(tmp_path, capsys):
    output = tmp_path / "subset.json"
    code = main(["--quick", "--workers", "1", "--bounds", "MT-CMM (001)", "AMM (analytic)",
                 "--output", str(output)])  # fmt: skip
    rows = json.loads(output.read_text())["rows"]
    assert code == 0
    assert [(row["name"], row["norm_factor"]) for row in rows] == [
        ("MT-CMM (001)", 1.0), ("AMM (analytic)", 1.0), ("MT-CMM (001)", 0.25)
    ]  # fmt: skip
    with pytest.raises(SystemExit):
        main(["--bounds", "no such bound"])
