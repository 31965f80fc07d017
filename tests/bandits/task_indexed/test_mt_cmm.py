"""MT-CMM-UCB and MT-CMM-AL: paper 001's MT-UCB / MT-AL with the multi-task CMM bound."""

from __future__ import annotations

import math

import pytest
import torch
from gpytorch.kernels import LinearKernel

from botorch_mtucb.bandits.confidence_rules import (
    TaskIndexedMartingaleMixtureRule,
    task_indexed_norm_bound,
)
from botorch_mtucb.bandits.environments.task_indexed import ActiveLearningAction
from botorch_mtucb.bandits.task_indexed import mt_cmm_al, mt_cmm_ucb
from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain

D64 = torch.float64
N, DIM, ARMS = 3, 3, 12
SIGMA, DELTA = 0.1, 0.05
RTOL = 1e-6  # the accuracy of the bound's alpha search


def linear_kernel():
    kernel = LinearKernel().double()
    kernel.initialize(variance=1.0)
    return kernel


def _problem(seed=0, dtype=D64):
    """Arms of distinct norms per task (no ties under the prior), linear tasks."""
    g = torch.Generator().manual_seed(seed)
    arms = [torch.randn(ARMS, DIM, generator=g, dtype=D64) for _ in range(N)]
    theta0 = torch.randn(DIM, generator=g, dtype=D64)
    thetas = theta0 + 0.3 * torch.randn(N, DIM, generator=g, dtype=D64)
    B = float(thetas.norm(dim=-1).max())
    eps = float((thetas - thetas.mean(0)).norm(dim=-1).max()) / B
    return [FiniteDomain(a.to(dtype)) for a in arms], thetas, B, eps, g


def _fresh_bound(rule, X, Y, tasks, b=None, norm=None):
    b = rule.b if b is None else b
    return MultiTaskMartingaleMixtureBound(
        torch.stack(X) if X else torch.zeros(0, DIM, dtype=D64),
        torch.tensor(Y, dtype=D64).reshape(-1, 1),
        linear_kernel(),
        UniformSimilarityTaskKernel.from_b(N, b, dtype=D64),
        rule.norm_bound if norm is None else norm,
        SIGMA,
        DELTA,
        train_tasks=torch.tensor(tasks, dtype=torch.long),
    )


def _brute_force(bound, points, task, sign=1.0):
    """The bound at each candidate, one point at a time."""
    weights = torch.eye(N, dtype=D64)[task]
    evaluate = bound.upper if sign > 0 else bound.lower
    return torch.stack([evaluate(p.to(D64).reshape(1, -1), weights)[0] for p in points])


# ------------------------------------------------------------------ norm bound
@pytest.mark.parametrize("b", [0.0, 0.3, 5.0])
def test_norm_bound_is_the_rkhs_norm_of_k_task_times_k_and_tight(b):
    # f_i(x) = theta_i^T x with the linear kernel: ||f||^2 in the RKHS of K_task(b) (x) k
    # is vec(Theta)^T (K_task^{-1} (x) I) vec(Theta), K_task the package's task kernel.
    g = torch.Generator().manual_seed(1)
    K_task = UniformSimilarityTaskKernel.from_b(N, b, dtype=D64).covar_matrix.to_dense().detach()
    # paper 001, eq. 2: the package's normalisation is K_task(b) itself
    expected = torch.eye(N, dtype=D64) / (1 + b) + b / (1 + b) / N
    torch.testing.assert_close(K_task, expected, rtol=0, atol=1e-15)

    def norm_squared(thetas):
        vec = thetas.contiguous().reshape(-1)  # task-major: theta_1, ..., theta_N
        gram_inverse = torch.kron(torch.linalg.inv(K_task).contiguous(), torch.eye(DIM, dtype=D64))
        return float(vec @ gram_inverse @ vec)

    thetas = torch.randn(N, DIM, generator=g, dtype=D64)
    B = float(thetas.norm(dim=-1).max())
    eps = float((thetas - thetas.mean(0)).norm(dim=-1).max()) / B
    assert norm_squared(thetas) <= task_indexed_norm_bound(B, eps, N, b) ** 2 * (1 + 1e-12)
    # tight: theta_i = theta_0 + u_i, sum u_i = 0, |u_i| equal and orthogonal to theta_0
    angles = 2 * math.pi * torch.arange(N, dtype=D64) / N
    u = 0.4 * torch.stack([angles.cos(), angles.sin(), torch.zeros(N, dtype=D64)], -1)
    tight = torch.tensor([0.0, 0.0, 1.5], dtype=D64) + u
    B, eps = float(tight.norm(dim=-1).max()), 0.4 / float(tight.norm(dim=-1).max())
    assert norm_squared(tight) == pytest.approx(task_indexed_norm_bound(B, eps, N, b) ** 2)


def test_norm_bound_formula_and_errors():
    assert task_indexed_norm_bound(2.0, 0.5, 5, 0.3) == 2.0 * math.sqrt(5 * (1 + 0.3 * 0.25))
    assert task_indexed_norm_bound(2.0, 0.5, 5, 0.0) == 2.0 * math.sqrt(5)
    with pytest.raises(ValueError, match="finite"):
        task_indexed_norm_bound(1.0, 0.1, 2, math.inf)
    with pytest.raises(ValueError, match="task_deviation"):
        task_indexed_norm_bound(1.0, -0.1, 2, 1.0)
    with pytest.raises(ValueError, match="num_tasks"):
        task_indexed_norm_bound(1.0, 0.1, 0, 1.0)
    with pytest.raises(ValueError, match="rkhs_norm_bound"):
        task_indexed_norm_bound(0.0, 0.1, 2, 1.0)


# ------------------------------------------------------------------ the policies
@pytest.mark.parametrize("b", [0.0, 0.5])
def test_mt_cmm_ucb_plays_the_argmax_of_a_fresh_bound(b):
    domains, thetas, B, eps, g = _problem()
    policy = mt_cmm_ucb(domains, linear_kernel(), b, B, eps, DELTA, SIGMA)
    rule = policy.rule
    assert rule.norm_bound == task_indexed_norm_bound(B, eps, N, b)
    X, Y, tasks = [], [], []
    for t in range(12):
        task = (5 * t) % N
        x = policy.select({"task": task}, torch.Generator().manual_seed(t))
        fresh = _brute_force(_fresh_bound(rule, X, Y, tasks), domains[task].points, task)
        # the alpha search is per point: batched and one-point evaluations agree to its
        # accuracy (round-off can move a golden-section step), not to round-off
        scale = RTOL * float(fresh.abs().max())
        torch.testing.assert_close(rule.task_upper(task), fresh, rtol=RTOL, atol=scale)
        chosen = int((domains[task].points == x).all(-1).nonzero())
        assert fresh[chosen] >= fresh.max() - scale
        y = float(thetas[task] @ x) + SIGMA * float(torch.randn(1, generator=g, dtype=D64))
        policy.update(x, torch.tensor([y], dtype=D64), {"task": task}, torch.Generator())
        X, Y, tasks = [*X, x], [*Y, y], [*tasks, task]
        assert policy.diagnostics()["growths"] == 0.0
    # appending equals rebuilding: every per-task bound at every arm, and R_t^2
    fresh = _fresh_bound(rule, X, Y, tasks)
    points = torch.cat([d.points for d in domains])
    for evaluate, again in ((rule.bound.upper, fresh.upper), (rule.bound.lower, fresh.lower)):
        torch.testing.assert_close(evaluate(points), again(points), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(rule.bound.radius_squared, fresh.radius_squared, rtol=1e-12,
                               atol=0)  # fmt: skip


def test_mt_cmm_al_follows_mt_al_rule_with_the_bound_half_width():
    domains, thetas, B, eps, g = _problem(seed=2)
    policy = mt_cmm_al(domains, linear_kernel(), 0.2, B, eps, DELTA, SIGMA)
    X, Y, tasks = [], [], []
    for t in range(6):
        action = policy.select({}, torch.Generator().manual_seed(t))
        assert isinstance(action, ActiveLearningAction)
        fresh = _fresh_bound(policy.rule, X, Y, tasks)
        widths = []
        for i in range(N):
            upper = _brute_force(fresh, domains[i].points, i)
            best = int((domains[i].points == action.recommendations[i]).all(-1).nonzero())
            assert upper[best] >= upper.max() - RTOL * upper.abs().max()
            lower = _brute_force(fresh, domains[i].points[best : best + 1], i, sign=-1.0)
            widths.append(float(upper[best] - lower[0]) / 2)
        assert widths[action.task] >= max(widths) * (1 - RTOL)
        x = action.query
        y = float(thetas[action.task] @ x) + SIGMA * float(torch.randn(1, generator=g, dtype=D64))
        policy.update(action, torch.tensor([y], dtype=D64), {}, torch.Generator())
        # recorded with the round (the runner reads them after the update): the queried
        # task's half-width at its recommendation
        assert policy.diagnostics()["width"] == pytest.approx(widths[action.task], rel=RTOL)
        X, Y, tasks = [*X, x], [*Y, y], [*tasks, action.task]
    assert policy.diagnostics()["task"] == float(tasks[-1])
    assert policy.rule.bound.num_observations == 6


@pytest.mark.parametrize("noise_std", [1e-3, 0.1, 1.0])
def test_screened_argmax_is_the_exact_argmax_over_many_arms(noise_std):
    g = torch.Generator().manual_seed(7)
    arms = FiniteDomain(torch.randn(400, DIM, generator=g, dtype=D64))
    rule = TaskIndexedMartingaleMixtureRule(arms, linear_kernel(), 0.3, 3.0, 0.3, DELTA,
                                            noise_std, num_tasks=2, on_empty="grow")  # fmt: skip
    theta = torch.tensor([0.5, -1.0, 0.8], dtype=D64)
    for t in range(30):
        task = t % 2
        x = arms.points[int(torch.randint(400, (1,), generator=g))]
        y = float(theta @ x) * (1 + 0.2 * task) + noise_std * float(torch.randn(1, generator=g))
        rule.observe(task, x, torch.tensor(y, dtype=D64))
        exact = rule.task_upper(task)
        chosen = rule.ucb_maximizer(task, torch.Generator().manual_seed(t))
        assert exact[chosen] >= exact.max() - RTOL * float(exact.abs().max())


def test_prior_ties_are_broken_at_random():
    # without data every arm of unit norm has the bound B_mt sqrt(K_task(b)_00 k(x, x)):
    # the arm is drawn at random
    arms = FiniteDomain(torch.eye(4, dtype=D64))
    policy = mt_cmm_ucb(arms, linear_kernel(), 0.5, 1.0, 0.1, num_tasks=2)
    prior = policy.rule.norm_bound * math.sqrt((1 + 0.5 / 2) / (1 + 0.5))
    torch.testing.assert_close(policy.rule.task_upper(0), torch.full((4,), prior, dtype=D64))
    chosen = {int(policy.select({"task": 0}, torch.Generator().manual_seed(s)).argmax())
              for s in range(20)}  # fmt: skip
    assert len(chosen) > 1


# ------------------------------------------------------------------ b = 0
def _data(g, counts):
    X = [torch.randn(c, DIM, generator=g, dtype=D64) for c in counts]
    Y = [x.sum(-1, keepdim=True) * 0.3 + SIGMA * torch.randn(len(x), 1, generator=g, dtype=D64)
         for x in X]  # fmt: skip
    return X, Y


def test_b0_with_one_task_of_data_is_the_single_task_cmm_bound():
    # b = 0, K_task = I: with data on task 0 only, the joint set's Gram matrix is task 0's
    # and its radius is task 0's, so the bound on task 0 equals single-task CMM on task
    # 0's data with the same norm bound (B_mt: the joint budget, all of it usable by f_0).
    g = torch.Generator().manual_seed(4)
    (X,), (Y,) = _data(g, [9])
    norm = task_indexed_norm_bound(1.0, 0.2, N, 0.0)
    joint = MultiTaskMartingaleMixtureBound(
        X, Y, linear_kernel(), UniformSimilarityTaskKernel.from_b(N, 0.0, dtype=D64), norm,
        SIGMA, DELTA, train_tasks=torch.zeros(9, dtype=torch.long),
    )  # fmt: skip
    single = MartingaleMixtureBound(X, Y, linear_kernel(), norm, SIGMA, DELTA)
    test_X = torch.randn(7, DIM, generator=g, dtype=D64)
    torch.testing.assert_close(joint.radius_squared, single.radius_squared, rtol=1e-12, atol=0)
    # equal up to the accuracy of the two alpha searches (golden section vs the
    # single-task bound's own search)
    for joint_bound, single_bound in ((joint.upper, single.upper), (joint.lower, single.lower)):
        expected = single_bound(test_X)
        torch.testing.assert_close(joint_bound(test_X)[:, 0], expected, rtol=RTOL,
                                   atol=RTOL * float(expected.abs().max()))  # fmt: skip
    # task 1 has no data: f_1 may spend what f_0 leaves of the budget, so its bound is
    # at most B_mt sqrt(k(x, x)) and at least the bound without data on task 0
    prior = norm * test_X.norm(dim=-1)
    assert (joint.upper(test_X)[:, 1] <= prior * (1 + 1e-9)).all()
    assert (joint.upper(test_X)[:, 1] > 0.5 * prior).all()


def test_b0_joint_set_against_per_task_cmm_bounds():
    # b = 0 with data on every task: ONE confidence set for all tasks, so its radius is
    # over all tasks' data, R^2 = sum_i R_i^2 - 2 (N - 1) sigma^2 ln(1 / delta) (eq. (8)
    # of paper 002 for a block-diagonal Gram matrix), and its projection on task i lies in
    # the single-task set of task i's data with the same B_mt and that joint radius (the
    # single-task bound at the delta' whose radius is R^2): the per-task bounds are inside
    # those single-task bounds.
    g = torch.Generator().manual_seed(5)
    X, Y = _data(g, [6, 4, 8])
    norm = task_indexed_norm_bound(1.0, 0.2, N, 0.0)
    tasks = torch.cat([torch.full((len(x),), i) for i, x in enumerate(X)])
    joint = MultiTaskMartingaleMixtureBound(
        torch.cat(X), torch.cat(Y), linear_kernel(),
        UniformSimilarityTaskKernel.from_b(N, 0.0, dtype=D64), norm, SIGMA, DELTA,
        train_tasks=tasks,
    )  # fmt: skip
    singles = [MartingaleMixtureBound(x, y, linear_kernel(), norm, SIGMA, DELTA)
               for x, y in zip(X, Y)]  # fmt: skip
    total = sum(float(s.radius_squared) for s in singles)
    joint_radius = float(joint.radius_squared)
    assert joint_radius == pytest.approx(total - 2 * (N - 1) * SIGMA**2 * math.log(1 / DELTA))
    test_X = torch.randn(11, DIM, generator=g, dtype=D64)
    upper, lower = joint.upper(test_X), joint.lower(test_X)
    for i, single in enumerate(singles):
        own = float(single.radius_squared) - 2 * SIGMA**2 * math.log(1 / DELTA)
        delta_i = math.exp(-(joint_radius - own) / (2 * SIGMA**2))
        wide = MartingaleMixtureBound(X[i], Y[i], linear_kernel(), norm, SIGMA, delta_i)
        assert float(wide.radius_squared) == pytest.approx(joint_radius, rel=1e-10)
        assert (upper[:, i] <= wide.upper(test_X) + 1e-8).all()
        assert (lower[:, i] >= wide.lower(test_X) - 1e-8).all()
        # ... and strictly inside somewhere: the other tasks use part of the budget
        assert (upper[:, i] < wide.upper(test_X) - 1e-6).any()


# ------------------------------------------------------------------ empty sets
def _contradicting_policy(on_empty):
    arms = FiniteDomain(torch.eye(2, dtype=D64))
    policy = mt_cmm_ucb(arms, linear_kernel(), 0.5, 0.1, 0.1, DELTA, 0.01,
                        on_empty=on_empty, num_tasks=2)  # fmt: skip
    return policy, arms


def test_empty_set_raises_or_grows_the_norm_bound():
    policy, arms = _contradicting_policy("raise")
    with pytest.raises(EmptyConfidenceSetError):
        policy.update(arms.points[0], torch.tensor([5.0]), {"task": 0}, torch.Generator())
    policy, arms = _contradicting_policy("grow")
    policy.update(arms.points[0], torch.tensor([5.0]), {"task": 0}, torch.Generator())
    rule = policy.rule
    assert rule.norm_bound > rule.initial_norm_bound and rule.num_growths == 1
    assert policy.settings()["rkhs_norm_bound"] == rule.initial_norm_bound
    assert policy.diagnostics()["rkhs_norm_bound"] == rule.norm_bound
    rule.bound.check_nonempty()
    # the grown bound is the bound with that norm on the same data
    fresh = MultiTaskMartingaleMixtureBound(
        arms.points[:1], torch.tensor([[5.0]], dtype=D64), linear_kernel(),
        UniformSimilarityTaskKernel.from_b(2, 0.5, dtype=D64), rule.norm_bound, 0.01, DELTA,
        train_tasks=torch.tensor([0]),
    )  # fmt: skip
    torch.testing.assert_close(rule.bound.upper(arms.points), fresh.upper(arms.points))
    x = policy.select({"task": 1}, torch.Generator())
    assert x.shape == (2,)


# ------------------------------------------------------------------ dtypes and checks
def test_float32_arms_give_the_choices_of_their_float64_copies():
    domains32, thetas, B, eps, _ = _problem(seed=6, dtype=torch.float32)
    domains64 = [FiniteDomain(d.points.to(D64)) for d in domains32]
    policies = [mt_cmm_ucb(d, linear_kernel(), 0.3, B, eps, DELTA, SIGMA)
                for d in (domains32, domains64)]  # fmt: skip
    for t in range(6):
        context = {"task": t % N}
        x32, x64 = (p.select(context, torch.Generator().manual_seed(t)) for p in policies)
        assert x32.dtype == torch.float32 and torch.equal(x32.to(D64), x64)
        y = torch.tensor([float(thetas[t % N] @ x64)])
        for policy, x in zip(policies, (x32, x64)):
            policy.update(x, y, context, torch.Generator())
    assert policies[0].rule.task_upper(0).dtype == D64


def test_bad_arguments():
    arms = FiniteDomain(torch.eye(2, dtype=D64))
    with pytest.raises(ValueError, match="num_tasks"):
        TaskIndexedMartingaleMixtureRule(arms, linear_kernel(), 0.1, 1.0, 0.1)
    with pytest.raises(TypeError, match="FiniteDomain"):
        box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=D64))
        TaskIndexedMartingaleMixtureRule([box, box], linear_kernel(), 0.1, 1.0, 0.1)
    with pytest.raises(ValueError, match="on_empty"):
        TaskIndexedMartingaleMixtureRule(
            arms, linear_kernel(), 0.1, 1.0, 0.1, on_empty="ignore", num_tasks=2
        )
    with pytest.raises(ValueError, match="finite"):
        TaskIndexedMartingaleMixtureRule(arms, linear_kernel(), math.inf, 1.0, 0.1, num_tasks=2)
