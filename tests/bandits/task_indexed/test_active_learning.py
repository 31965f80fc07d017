"""MT-AL (Algorithm 2) and the baselines Uniform, AE-LSVI (Appendix C.3) and MTS."""

from __future__ import annotations

import json
import math
from functools import partial

import pytest
import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.bandits.confidence_rules import NaiveWidth
from botorch_mtucb.bandits.environments.task_indexed import (
    ActiveLearningAction,
    ActiveMultiTaskEnvironment,
)
from botorch_mtucb.bandits.rounds import OptimisticGap, UniformTask
from botorch_mtucb.bandits.runner import run_policy
from botorch_mtucb.bandits.task_indexed import mt_al, mts
from botorch_mtucb.problems.multitask_synthetic import multitask_synthetic_problem
from botorch_mtucb.utils.domains import BoxDomain


def linear_kernel():
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    return kernel


ae_lsvi = partial(mt_al, query=OptimisticGap())
uniform = partial(mt_al, query=UniformTask())


def _problem():
    return multitask_synthetic_problem(3, 0.3, dim=2, num_actions=30, radius=1.0, seed=5)


def _make(cls, problem, **kwargs):
    return cls(
        problem.domains(),
        linear_kernel(),
        0.5,
        problem.rkhs_norm_bound,
        problem.task_deviation,
        **kwargs,
    )


def _warm_up(policy, problem, rounds=6):
    environment = ActiveMultiTaskEnvironment(problem)
    generator = torch.Generator().manual_seed(1)
    for t in range(rounds):  # query tasks in a fixed order, arms at random
        task = t % problem.num_tasks
        recommendations = torch.stack(
            [a[int(torch.randint(len(a), (1,), generator=generator))] for a in problem.arms]
        )
        action = ActiveLearningAction(task, recommendations)
        policy.update(action, environment.observe(action, {}, generator), {}, generator)
    return generator


@pytest.mark.parametrize("cls", [mt_al, ae_lsvi])
def test_task_rules_match_their_definitions(cls):
    problem = _problem()
    policy = _make(cls, problem)
    generator = _warm_up(policy, problem)
    width = policy.rule.width
    scores, points = [], []
    for i in range(problem.num_tasks):
        mean, std = policy.rule.regression.arm_moments(i)
        ucb, lcb = mean + width * std, mean - width * std
        k = int(torch.argmax(ucb))
        points.append(problem.arms[i][k])
        if cls is mt_al:
            scores.append(float(width * std[k]))  # beta sigma(i, x^i)
        else:
            scores.append(float(ucb[k] - lcb.max()))  # ucb(i, x^i) - max lcb(i, .)
    action = policy.select({}, generator)
    assert isinstance(action, ActiveLearningAction)
    assert torch.equal(action.recommendations, torch.stack(points).double())
    assert action.task == max(range(problem.num_tasks), key=lambda i: scores[i])


def test_uniform_draws_every_task():
    problem = _problem()
    policy = _make(uniform, problem)
    generator = torch.Generator().manual_seed(0)
    tasks = [policy.select({}, generator).task for _ in range(300)]
    counts = [tasks.count(i) for i in range(3)]
    assert min(counts) > 70


@pytest.mark.parametrize("cls", [mt_al, mts])
def test_first_round_ties_are_broken_at_random(cls):
    # Under the prior every task has the same score (MT-AL: width * ||x|| on arms of equal
    # norm; MTS: +inf), so the first queried task must not always be task 0.
    problem = _problem()
    firsts = set()
    for seed in range(40):
        policy = _make(cls, problem)
        firsts.add(policy.select({}, torch.Generator().manual_seed(seed)).task)
    assert firsts == {0, 1, 2}


def test_mts_queries_unexplored_tasks_first_then_sampled_improvement():
    problem = _problem()
    policy = _make(mts, problem)
    environment = ActiveMultiTaskEnvironment(problem)
    records = run_policy(policy, environment, 6, seed=0)
    first = [r.x["task"] for r in records[:3]]
    assert sorted(first) == [0, 1, 2]  # score +inf for tasks never queried: each once
    assert all(math.isfinite(r.regret) and r.regret >= 0 for r in records)
    with pytest.raises(TypeError, match="finite domains"):
        bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        mts(BoxDomain(bounds), linear_kernel(), 0.5, 1.0, 0.3, num_tasks=2)


def test_naive_width_and_resume(tmp_path):
    problem = _problem()
    naive = _make(mt_al, problem, width=NaiveWidth, regularization=1.0)
    improved = _make(mt_al, problem)
    assert isinstance(naive.rule.width_function, NaiveWidth)
    assert naive.rule.regression.regularization == 1.0 and naive.name == "MT-AL-naive"
    regression = improved.rule.regression
    widths = regression.widths(problem.rkhs_norm_bound, problem.task_deviation, 0.01)
    assert improved.rule.width == widths["new"] <= widths["naive"]
    environment = ActiveMultiTaskEnvironment(problem)
    full = run_policy(_make(mt_al, problem), environment, 8, seed=2)
    run_policy(_make(mt_al, problem), environment, 3, seed=2, path=tmp_path / "r.jsonl")
    resumed = run_policy(_make(mt_al, problem), environment, 8, seed=2, path=tmp_path / "r.jsonl")
    assert [r.x for r in resumed] == [r.x for r in full]
    assert [r.y for r in resumed] == [r.y for r in full]
    assert [r.regret for r in resumed] == [r.regret for r in full]
    assert [r.diagnostics for r in resumed] == [r.diagnostics for r in full]
    assert all(set(r.x) == {"task", "recommendations"} for r in resumed)
    # the recorded numbers of the active methods (not the online rule's info_gain_st)
    assert list(full[-1].diagnostics) == ["task", "width", "info_gain_mt"]
    with pytest.raises(TypeError, match="width must be a width of Theorem 1"):
        _make(mt_al, problem, width="bogus")


@pytest.mark.parametrize("cls", [mt_al, mts, ae_lsvi])
def test_structured_actions_resume_bit_identically_after_a_torn_line(tmp_path, cls):
    # The run file holds {"task", "recommendations"} per round; a resumed run rebuilds
    # each ActiveLearningAction from it, replays it into a fresh policy and then plays
    # the same rounds as an uninterrupted run, number for number.
    problem = _problem()
    environment = ActiveMultiTaskEnvironment(problem)
    full = run_policy(_make(cls, problem), environment, 9, seed=4)
    path = tmp_path / "run.jsonl"
    run_policy(_make(cls, problem), environment, 9, seed=4, path=path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:5]) + lines[5][:40])  # 4 rounds and half of the 5th
    replayed = _make(cls, problem)
    resumed = run_policy(replayed, environment, 9, seed=4, path=path)
    for a, b in zip(resumed, full):
        assert (a.t, a.x, a.y, a.regret, a.diagnostics) == (b.t, b.x, b.y, b.regret, b.diagnostics)
    assert replayed.rule.regression.num_observations == 9
    stored = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert [row["x"] for row in stored] == [r.x for r in full]
    rebuilt = ActiveLearningAction.from_json(stored[0]["x"])
    assert rebuilt.task == full[0].x["task"]
    assert rebuilt.recommendations.tolist() == full[0].x["recommendations"]
