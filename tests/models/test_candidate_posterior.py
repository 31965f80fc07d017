"""The posterior kept at a finite candidate set (``CandidatePosterior``, attached by
``VectorValuedGP.track_candidates``) against the plain posterior (solved from scratch) and
the dense NumPy formula, over several appends, on every kernel case and both kinds of
data; the arms of each task (paper 001, eqs. 3-4) against the dense formula."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from cases import CASES, ICM_CASES, NUM_TASKS, build_case, tolerances
from gpytorch.kernels import LinearKernel, RBFKernel

from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.models.candidate_posterior import CandidateSolves
from botorch_mtucb.utils import FiniteDomain, GrowingCholesky


def _moments(model, X):
    posterior = model.posterior(X)
    return posterior.mean, posterior.distribution.covariance_matrix


def _close(dtype):
    return (
        {"rtol": 1e-10, "atol": 1e-12} if dtype == torch.float64 else {"rtol": 1e-4, "atol": 1e-5}
    )


def _assert_same(tracked, plain, X, dtype):
    (mean_a, cov_a), (mean_b, cov_b) = _moments(tracked, X), _moments(plain, X)
    assert mean_a.shape == mean_b.shape and cov_a.shape == cov_b.shape
    assert mean_a.dtype == dtype
    torch.testing.assert_close(mean_a, mean_b, **_close(dtype))
    torch.testing.assert_close(cov_a, cov_b, **_close(dtype))


def _appends(case, candidates, kind, rng):
    """Rows to append: a candidate, a point that is not one, two candidates at once, and
    a candidate seen before (every branch of the update)."""
    dtype = case.dtype
    other = torch.tensor(rng.uniform(size=(1, 2)), dtype=dtype)
    batches = [candidates[2:3], other, candidates[[4, 6]], candidates[2:3], candidates[7:8]]
    for X in batches:
        if kind == "full":
            Y = torch.tensor(rng.normal(size=(X.shape[0], NUM_TASKS)), dtype=dtype)
            yield X, Y, None
        else:
            Y = torch.tensor(rng.normal(size=(X.shape[0], 1)), dtype=dtype)
            yield X, Y, torch.tensor(rng.integers(0, NUM_TASKS, size=X.shape[0]))


@pytest.mark.parametrize("kind", ("full", "indexed"))
@pytest.mark.parametrize("name", CASES)
def test_tracked_posterior_equals_the_plain_one_over_appends(name, kind, dtype):
    rng = np.random.default_rng(3)
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    candidates = torch.tensor(rng.uniform(size=(9, 2)), dtype=dtype)
    candidates[0] = case.train_X[1]  # a training input among the candidates
    tracked, plain = case.build(), case.build()
    assert tracked.uses_eigen_route == (kind == "full" and name in ICM_CASES)
    assert tracked.track_candidates(candidates) and tracked.tracks_candidates
    queries = {
        "all": candidates.unsqueeze(-2),
        "some": candidates[[5, 0, 5]].unsqueeze(-2),
        "one": candidates[3:4].unsqueeze(0),
        "plain": torch.tensor(rng.uniform(size=(4, 2, 2)), dtype=dtype),
    }
    for X, Y, tasks in [(None, None, None), *_appends(case, candidates, kind, rng)]:
        if X is not None:
            tracked.append_observations(X, Y, train_tasks=tasks)
            plain.append_observations(X, Y, train_tasks=tasks)
        for query in queries.values():
            _assert_same(tracked, plain, query, dtype)
        torch.testing.assert_close(tracked.information_gain(), plain.information_gain())
    assert tracked.tracks_candidates
    # and both are the dense formula of everything seen
    X, tasks = tracked.train_X, tracked.train_tasks
    mean, covariance = case.oracle.posterior(
        X.double().numpy(),
        tracked.train_Y.double().numpy(),
        candidates.double().numpy(),
        None if tasks is None else tasks.numpy(),
    )
    posterior = tracked.posterior(candidates.unsqueeze(-2))
    tol = tolerances(dtype)
    np.testing.assert_allclose(posterior.mean.reshape(-1).double().numpy(), mean.reshape(-1), **tol)
    n = NUM_TASKS
    blocks = covariance.reshape(9, n, 9, n)[np.arange(9), :, np.arange(9), :]  # 9 x n x n
    np.testing.assert_allclose(
        posterior.distribution.covariance_matrix.double().numpy(), blocks, **tol
    )


@pytest.mark.parametrize("name", ("icm", "independent"))
def test_tracking_from_the_prior_and_a_second_model(name, dtype):
    """Tracking an empty model; a model tracked after its data; the eigen route's factor
    rows read off ``V`` give the same factor (to round-off) as the plain update."""
    rng = np.random.default_rng(0)
    case = build_case(name, dtype)
    candidates = torch.tensor(rng.uniform(size=(6, 2)), dtype=dtype)
    empty_X, empty_Y = case.train_X[:0], case.train_Y[:0]
    tracked, plain = case.build(empty_X, empty_Y), case.build(empty_X, empty_Y)
    assert tracked.track_candidates(candidates)
    _assert_same(tracked, plain, candidates.unsqueeze(-2), dtype)
    for j in (1, 1, 4, 0):
        Y = torch.tensor(rng.normal(size=(1, NUM_TASKS)), dtype=dtype)
        tracked.append_observations(candidates[j : j + 1], Y)
        plain.append_observations(candidates[j : j + 1], Y)
        _assert_same(tracked, plain, candidates.unsqueeze(-2), dtype)
    torch.testing.assert_close(tracked._factor.factor, plain._factor.factor, **_close(dtype))
    late = case.build(plain.train_X, plain.train_Y)
    assert late.track_candidates(candidates)
    _assert_same(late, plain, candidates.unsqueeze(-2), dtype)


def test_memory_cap_stops_tracking_and_the_posterior_stays_right():
    case = build_case("icm", torch.float64)
    candidates = torch.rand(5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    model, plain = case.build(), case.build()
    r = model._factor.buffer.shape[0]
    assert not model.track_candidates(candidates, max_entries=r * 5 * 5)  # < one buffer
    assert not model.tracks_candidates
    capacity = CandidateSolves(torch.zeros(r, 5, 5)).capacity  # t = 5 rows + headroom
    assert model.track_candidates(candidates, max_entries=r * capacity * 5)
    for j in range(capacity - 4):  # grows past the cap: tracking stops, model stays right
        Y = torch.rand(1, NUM_TASKS, dtype=torch.float64)
        model.append_observations(candidates[j % 5 : j % 5 + 1], Y)
        plain.append_observations(candidates[j % 5 : j % 5 + 1], Y)
    assert not model.tracks_candidates
    _assert_same(model, plain, candidates.unsqueeze(-2), torch.float64)
    assert not model.track_candidates(None)


def test_copies_casts_and_conditioning_keep_the_tracked_posterior():
    case = build_case("icm", torch.float64)
    candidates = torch.rand(7, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    model, plain = case.build(), case.build()
    model.track_candidates(candidates)
    Y = torch.rand(1, NUM_TASKS, dtype=torch.float64)
    new = model.condition_on_observations(candidates[3:4], Y)  # a copy, extended
    assert new.tracks_candidates and model.num_observations == plain.num_observations
    _assert_same(model, plain, candidates.unsqueeze(-2), torch.float64)
    _assert_same(
        new,
        plain.condition_on_observations(candidates[3:4], Y),
        candidates.unsqueeze(-2),
        torch.float64,
    )
    fantasy_X = candidates[:2].expand(3, 2, 2)
    fantasy_Y = torch.rand(3, 2, NUM_TASKS, dtype=torch.float64)
    batched = model.condition_on_observations(fantasy_X, fantasy_Y)  # Gaussian conditioning
    assert batched.batch_shape == torch.Size([3])
    _assert_same(
        batched,
        plain.condition_on_observations(fantasy_X, fantasy_Y),
        candidates[:, None, None, :],
        torch.float64,
    )
    # a conditioned model tracks its own data; its posteriors stay the conditioned ones
    assert batched.track_candidates(candidates) and batched.tracks_candidates
    _assert_same(
        batched,
        plain.condition_on_observations(fantasy_X, fantasy_Y),
        candidates[:, None, None, :],
        torch.float64,
    )
    single = model.to(torch.float32)  # the tracked sums are cast with the model
    assert single.tracks_candidates and single.candidates.mean.dtype == torch.float32
    _assert_same(single, plain.to(torch.float32), candidates.float().unsqueeze(-2), torch.float32)
    with pytest.raises(UnsupportedError, match="track_candidates"):
        model.subset_output([0]).track_candidates(candidates)


def test_candidate_solves_extend_equals_a_full_triangular_solve(dtype):
    generator = torch.Generator().manual_seed(0)
    A = torch.randn(2, 9, 9, generator=generator, dtype=torch.float64)
    A = (A @ A.transpose(-1, -2) + 9 * torch.eye(9, dtype=torch.float64)).to(dtype)
    C = torch.randn(2, 9, 4, generator=generator, dtype=torch.float64).to(dtype)
    factor = GrowingCholesky(A[:, :2, :2])
    solves = CandidateSolves(factor.solve(C[:, :2]), capacity=3)  # grows on the way
    for start, stop in ((2, 3), (3, 6), (6, 9)):
        factor.append(A[:, :start, start:stop], A[:, start:stop, start:stop])
        solves.extend(factor, C[:, start:stop])
    expected = torch.linalg.solve_triangular(torch.linalg.cholesky(A), C, upper=False)
    torch.testing.assert_close(solves.values, expected, **_close(dtype))
    with pytest.raises(ValueError, match="t \\+ m"):
        solves.extend(factor, C[:, :1])
    with pytest.raises(ValueError, match="capacity"):
        CandidateSolves(C, capacity=2)


def test_queries_located_among_the_candidates():
    points = torch.tensor([[0.0, 1.0], [0.5, 0.5], [0.0, 1.0]], dtype=torch.float64)
    model = VectorValuedGP(points[:0], points[:0], RBFKernel(), torch.eye(2), 0.1)
    assert model.track_candidates(FiniteDomain(points))  # a domain or its points
    candidates = model.candidates
    assert candidates.locate(points.unsqueeze(-2)).tolist() == [0, 1, 2]  # the set itself
    assert candidates.locate(points[[2, 1]].unsqueeze(-2)).tolist() == [0, 1]  # the first equal
    assert candidates.locate(points.unsqueeze(0)) is None  # q = 3
    assert candidates.locate(points.float().unsqueeze(-2)) is None  # another dtype
    assert candidates.locate(torch.tensor([[[0.0, 0.9]]], dtype=torch.float64)) is None
    wanting_grad = points.clone().requires_grad_(True).unsqueeze(-2)
    assert candidates.locate(wanting_grad) is None
    assert candidates.locate_rows(points[[1, 2]]).tolist() == [1, 0]


def test_eigen_route_factors_are_those_of_the_stacked_matrices(dtype):
    """Issue 14, item 3: the groups' factors are built one at a time in the buffer; the
    numbers are those of factorizing ``xi_g K + eta I`` stacked (the former build)."""
    case = build_case("icm", dtype, num_rows=9)
    model = case.build()
    kernel = model.kernel.kernels[0]
    gram = kernel(case.train_X, case.train_X).to_dense()
    eye = torch.eye(9, dtype=dtype)
    stacked = model._group_xi[:, None, None] * gram + model.regularization * eye
    assert model._factor.buffer.shape[0] == 3
    assert torch.equal(model._factor.factor, GrowingCholesky(stacked).factor)


# ------------------------------------------------ the arms of each task (paper 001)
def _arm_kernel(kind, dtype):
    kernel = (LinearKernel() if kind == "linear" else RBFKernel()).to(dtype)
    if kind == "linear":
        kernel.initialize(variance=1.0)
    return kernel


def _task_indexed_model(kernel, task_covariance, lam, dtype, d):
    empty = torch.zeros(0, d, dtype=dtype)
    tasks = torch.zeros(0, dtype=torch.long)
    return VectorValuedGP(empty, empty[:, :1], kernel, task_covariance, lam, train_tasks=tasks)


def _observe(model, arms, task, arm, y):
    x = arms[task][arm : arm + 1]
    Y = torch.tensor([[y]], dtype=x.dtype)
    model.append_observations(x, Y, train_tasks=torch.tensor([task]))


@pytest.mark.parametrize("kind", ["linear", "rbf"])
@pytest.mark.parametrize("shared", [False, True])
def test_task_arms_match_the_dense_posterior(dtype, kind, shared):
    torch.manual_seed(0)
    N, b = 3, 2.0
    if shared:
        arms = [torch.randn(15, 3, dtype=dtype)] * N
    else:
        arms = [torch.randn(10 + 4 * i, 3, dtype=dtype) for i in range(N)]
    kernel = _arm_kernel(kind, dtype)
    Kt = UniformSimilarityTaskKernel.from_b(N, b).covar_matrix.detach().to(dtype)
    lam = (N + b) / (N + b * N)
    model = _task_indexed_model(kernel, Kt, lam, dtype, 3)
    assert model.track_candidates([FiniteDomain(a) for a in arms])
    points, tasks, ys = [], [], []
    for s in range(20):
        i = s % N
        j = int(torch.randint(arms[i].shape[0], (1,)))
        y = float(torch.randn(()))
        _observe(model, arms, i, j, y)
        points.append(arms[i][j])
        tasks.append(i)
        ys.append(y)
    Xo = torch.stack(points).double()
    T = np.array(tasks)
    kx = lambda a, c: kernel.double()(a, c).to_dense().detach().numpy()  # noqa: E731
    K = Kt.double().numpy()[np.ix_(T, T)] * kx(Xo, Xo)
    A = np.linalg.inv(K + lam * np.eye(len(T)))
    tol = 2e-3 if dtype == torch.float32 else 1e-9
    for i in range(N):
        Xa = arms[i].double()
        k = Kt.double().numpy()[T, i][:, None] * kx(Xo, Xa)
        mean = k.T @ A @ np.array(ys)
        var = Kt[i, i].item() * np.diag(kx(Xa, Xa)) - np.einsum("tq,ts,sq->q", k, A, k)
        tracked_mean, tracked_variance = model.candidates.task_moments(i)
        np.testing.assert_allclose(tracked_mean.double().numpy(), mean, atol=tol)
        np.testing.assert_allclose(tracked_variance.double().numpy(), np.maximum(var, 0), atol=tol)
    gain = 0.5 * np.linalg.slogdet(np.eye(len(T)) + K / lam)[1]
    assert model.candidates.information_gain is not None  # kept by the chain rule
    assert float(model.information_gain()) == pytest.approx(
        gain, rel=1e-3 if dtype == torch.float32 else 1e-9
    )


@pytest.mark.parametrize("kind", ["linear", "rbf"])
def test_task_arm_factor_is_the_dense_cholesky_of_the_observations(dtype, kind):
    # The model's GrowingCholesky, bordered one row per observation from the kept
    # variances (past the buffer's first growth), is chol(K_t + lambda I).
    torch.manual_seed(2)
    N, lam = 2, 0.5
    arms = [torch.randn(12, 3, dtype=dtype), torch.randn(9, 3, dtype=dtype)]
    kernel = _arm_kernel(kind, dtype)
    Kt = UniformSimilarityTaskKernel.from_b(N, 0.5).covar_matrix.detach().to(dtype)
    model = _task_indexed_model(kernel, Kt, lam, dtype, 3)
    assert model.track_candidates(arms)
    capacity = model._factor.capacity
    plan = [(s % N, int(torch.randint(arms[s % N].shape[0], (1,)))) for s in range(capacity + 8)]
    for task, arm in plan:
        _observe(model, arms, task, arm, float(torch.randn(())))
    assert model._factor.capacity > capacity and model.candidates.solves.size == len(plan)
    X = torch.stack([arms[task][arm] for task, arm in plan]).double()
    tasks = [task for task, _ in plan]
    with torch.no_grad():
        K = Kt.double()[tasks][:, tasks] * kernel.double()(X, X).to_dense()
    expected = np.linalg.cholesky((K + lam * torch.eye(len(plan), dtype=torch.float64)).numpy())
    tol = 1e-3 if dtype == torch.float32 else 1e-10
    factor = model._factor.factor
    assert factor.dtype == dtype and factor.shape == (len(plan), len(plan))
    np.testing.assert_allclose(factor.double().numpy(), expected, rtol=tol, atol=tol)
    sample = model.sample_candidates(0, torch.Generator().manual_seed(0))
    assert sample.shape == (12,) and sample.dtype == dtype and torch.isfinite(sample).all()


def test_task_arms_after_an_observation_off_the_arms_and_bad_input():
    arms = [torch.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=torch.float64)] * 2
    B = torch.tensor([[1.0, 0.3], [0.3, 1.0]], dtype=torch.float64)
    model = _task_indexed_model(RBFKernel().double(), B, 0.1, torch.float64, 2)
    plain = _task_indexed_model(RBFKernel().double(), B, 0.1, torch.float64, 2)
    with pytest.raises(ValueError, match=r"one domain per task \(2\)"):
        model.track_candidates(arms[:1])
    with pytest.raises(ValueError, match=r"points\[1\] must be N x 2 with N >= 1"):
        model.track_candidates([arms[0], arms[0][:0]])
    with pytest.raises(TypeError, match=r"points\[1\] must be float32 or float64"):
        model.track_candidates([arms[0], arms[0].half()])
    with pytest.raises(ValueError, match="^points is outside the range where the kernel"):
        _task_indexed_model(LinearKernel().double(), B, 0.1, torch.float64, 2).track_candidates(
            [1e300 * arms[0]] * 2
        )
    assert model.track_candidates(arms)
    with pytest.raises(ValueError, match=r"task must lie in \[0, 1\]"):
        model.candidates.task_moments(2)
    for x, y, task in ((arms[0][1:], 0.5, 0), (torch.tensor([[0.5, 0.5]]), -1.0, 1)):
        for m in (model, plain):
            m.append_observations(x, torch.tensor([[y]]), train_tasks=torch.tensor([task]))
    # the observation off the arms went through the plain update: still exact, but the
    # chain rule and the samples need every observation at an arm
    assert model.candidates.information_gain is None and model.candidates.observed is None
    torch.testing.assert_close(model.information_gain(), plain.information_gain())
    posterior = plain.posterior(arms[0].unsqueeze(-2), output_indices=[1])
    mean, variance = model.candidates.task_moments(1)
    torch.testing.assert_close(mean, posterior.mean.reshape(-1))
    torch.testing.assert_close(variance, posterior.variance.reshape(-1))
    with pytest.raises(UnsupportedError, match="every observation at a candidate"):
        model.sample_candidates(0)
    with pytest.raises(UnsupportedError, match="general route"):
        build_case("icm", torch.float64).build().sample_candidates(0)
