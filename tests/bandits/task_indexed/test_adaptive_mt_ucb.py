"""AdaMT-UCB (Algorithm 3 of paper 001): the misspecification test of eq. 45, Theorem 2's
choice of b, and a resumed run."""

from __future__ import annotations

import math

import pytest
import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.bandits import AgnosticMultiTaskRegression
from botorch_mtucb.bandits.environments.task_indexed import OnlineMultiTaskEnvironment
from botorch_mtucb.bandits.runner import run_policy
from botorch_mtucb.bandits.task_indexed import ada_mt_ucb
from botorch_mtucb.confidence import theorem2_kernel_parameter
from botorch_mtucb.problems.multitask_synthetic import multitask_synthetic_problem
from botorch_mtucb.utils.domains import FiniteDomain


def linear_kernel():
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    return kernel


def _problem():
    return multitask_synthetic_problem(3, 0.4, dim=2, num_actions=40, radius=1.0, seed=3)


def _one_arm_policy(**kwargs):
    arms = [torch.tensor([[1.0]], dtype=torch.float64), torch.tensor([[1.0]], dtype=torch.float64)]
    return ada_mt_ucb(
        [FiniteDomain(a) for a in arms],
        linear_kernel(),
        rkhs_norm_bound=0.01,
        candidate_deviations=(0.1, 2.0),
        b=1.0,
        noise_std=1e-3,
        **kwargs,
    )


def test_adamt_removes_a_learner_exactly_when_eq45_fires():
    policy = _one_arm_policy(concentration_constant=0.3)
    rule = policy.rule
    generator = torch.Generator().manual_seed(0)
    x = torch.tensor([1.0], dtype=torch.float64)
    U = R = 0.0
    L = {0.1: 0.0, 2.0: 0.0}
    observations = [5.0] * 5 + [-5.0] * 20  # the last ones contradict the first ones
    fired_at = None
    for step, y in enumerate(observations):
        widths = {e: rule.regression_of[e].widths(0.01, e, 0.01, 1e-3)["new"] for e in L}
        stats = {e: rule.regression_of[e].mean_std_at(0, x) for e in L}
        U += y
        R += 2 * widths[0.1] * stats[0.1][1]
        for e in L:
            L[e] += stats[e][0] - widths[e] * stats[e][1]
        tau = step + 1
        expected = U + R + 0.3 * math.sqrt(tau * math.log(max(math.log(tau), 1) / 0.01)) < max(
            L.values()
        )
        policy.update(x, torch.tensor([y]), {"task": 0}, generator)
        assert (rule.removed == [0.1]) == expected, step
        if expected:
            fired_at = step
            break
    assert fired_at is not None and fired_at >= 5
    assert rule.current_deviation == 2.0
    assert rule.epoch_length == 0 and rule.cumulative_reward == 0.0
    assert list(rule.lower_bounds) == [2.0]
    assert policy.diagnostics() == {"task_deviation": 2.0, "b": 1.0,
                                    "width": rule._widths[2.0], "removed": 1.0}  # fmt: skip


def test_adamt_keeps_learners_on_consistent_data_and_theorem2_b():
    policy = _one_arm_policy()
    generator = torch.Generator().manual_seed(0)
    x = torch.tensor([1.0], dtype=torch.float64)
    for _ in range(20):
        policy.update(x, torch.tensor([1.0]), {"task": 1}, generator)
    assert policy.rule.removed == []
    adaptive = ada_mt_ucb(
        [FiniteDomain(torch.eye(2, dtype=torch.float64))] * 3,
        linear_kernel(),
        1.0,
        candidate_deviations=(0.01, 0.5),
        horizon=5,
    )
    for e in (0.01, 0.5):
        e_b = adaptive.rule.kernel_parameters[e]
        assert e_b == pytest.approx(theorem2_kernel_parameter(3, e, 5))
    assert len(adaptive.rule.regressions) == 2
    with pytest.raises(ValueError, match="horizon is required"):
        ada_mt_ucb([FiniteDomain(torch.eye(2))] * 3, linear_kernel(), 1.0)
    with pytest.raises(ValueError, match=r"subset of \(0, 2\]"):
        ada_mt_ucb(
            [FiniteDomain(torch.eye(2))] * 3,
            linear_kernel(),
            1.0,
            candidate_deviations=(0.0, 1.0),
            b=1.0,
        )


def test_runner_end_to_end_and_resume(tmp_path):
    problem = _problem()

    def make():
        return ada_mt_ucb(problem.domains(), linear_kernel(), problem.rkhs_norm_bound, b=0.5)

    environment = OnlineMultiTaskEnvironment(problem)
    full = run_policy(make(), environment, 12, seed=4)
    run_policy(make(), environment, 5, seed=4, path=tmp_path / "run.jsonl")
    resumed = run_policy(make(), environment, 12, seed=4, path=tmp_path / "run.jsonl")
    assert [r.x for r in resumed] == [r.x for r in full]
    assert all(r.regret >= 0 for r in full)


def test_prior_data_teach_every_learner_but_not_the_test():
    """add_prior_data: each learner's posterior is that of a regression fed the same data
    directly (the widths recomputed), the epoch's sums are untouched; upper_bounds is the
    chooser's mu + beta sigma at every arm, and its argmax is the rule's choice."""
    problem = _problem()
    policy = ada_mt_ucb(
        problem.domains(), linear_kernel(), rkhs_norm_bound=1.0, b=1.0, noise_std=0.1
    )
    rule = policy.rule
    generator = torch.Generator().manual_seed(1)
    data = []
    for _ in range(6):
        task = int(torch.randint(1, 3, (1,), generator=generator))
        x = problem.arms[task][int(torch.randint(40, (1,), generator=generator))]
        data.append((task, x, float(torch.randn(1, generator=generator))))
    for task, x, y in data:
        rule.add_prior_data(task, x, y)
    assert (rule.epoch_length, rule.cumulative_reward, rule.believed_regret) == (0, 0.0, 0.0)
    assert set(rule.lower_bounds.values()) == {0.0}
    e = rule.current_deviation
    fresh = AgnosticMultiTaskRegression(
        problem.domains(), linear_kernel(), rule.kernel_parameters[e],
        rule.regression_of[e].regularization,
    )  # fmt: skip
    for task, x, y in data:
        fresh.update(task, x, y)
    mean, std = fresh.arm_moments(0)
    width = fresh.widths(1.0, e, 0.01, 0.1)["new"]
    torch.testing.assert_close(rule.upper_bounds(0), mean + width * std)
    choice = rule.task_argmax(0, None)
    assert torch.equal(choice.x, problem.arms[0][int(rule.upper_bounds(0).argmax())])
