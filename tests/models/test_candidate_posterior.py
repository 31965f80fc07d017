"""The incremental posterior at a fixed candidate set (``VectorValuedGP.track_candidates``,
issue 14, item 1) against the plain posterior (solved from scratch) and the dense NumPy
formula, over several appends, on every kernel case and both kinds of data."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from cases import CASES, ICM_CASES, NUM_TASKS, build_case, tolerances
from gpytorch.kernels import RBFKernel

from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.models.candidate_posterior import CandidateSolves, match_candidates
from botorch_mtucb.utils import GrowingCholesky


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
    single = model.to(torch.float32)  # the tracked sums are cast with the model
    assert single.tracks_candidates and single._candidates["mean"].dtype == torch.float32
    _assert_same(single, plain.to(torch.float32), candidates.float().unsqueeze(-2), torch.float32)
    with pytest.raises(UnsupportedError, match="track_candidates"):
        batched.track_candidates(candidates)


def test_bad_arguments():
    model = build_case("icm", torch.float64).build()
    with pytest.raises(TypeError, match="points"):
        model.track_candidates([[0.0, 0.0]])
    with pytest.raises(ValueError, match="points"):
        model.track_candidates(torch.zeros(3, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="points"):
        model.track_candidates(torch.zeros(0, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN"):
        model.track_candidates(torch.full((2, 2), float("nan"), dtype=torch.float64))
    with pytest.raises(TypeError, match="max_entries"):
        model.track_candidates(torch.zeros(2, 2, dtype=torch.float64), max_entries=1.5)
    with pytest.raises(ValueError, match="max_entries"):
        model.track_candidates(torch.zeros(2, 2, dtype=torch.float64), max_entries=0)


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


def test_match_candidates():
    points = torch.tensor([[0.0, 1.0], [0.5, 0.5], [0.0, 1.0]], dtype=torch.float64)
    assert match_candidates(points.unsqueeze(-2), points) == slice(None)
    index = match_candidates(points[[2, 1]].unsqueeze(-2), points)
    assert index.tolist() == [0, 1]  # the first equal candidate
    assert match_candidates(points.unsqueeze(0), points) is None  # q = 3
    assert match_candidates(points.float().unsqueeze(-2), points) is None  # another dtype
    assert match_candidates(torch.tensor([[[0.0, 0.9]]], dtype=torch.float64), points) is None
    wanting_grad = points.clone().requires_grad_(True).unsqueeze(-2)
    assert match_candidates(wanting_grad, points) is None


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


def test_the_memory_cap_is_checked_before_anything_is_computed(monkeypatch):
    model = build_case("icm", torch.float64).build()

    def fail(*args):
        raise AssertionError("V was computed although it exceeds max_entries")

    monkeypatch.setattr(model, "_icm_columns", fail)
    points = torch.rand(50, 2, dtype=torch.float64)
    assert not model.track_candidates(points, max_entries=1000)  # 3 x 37 x 50 > 1000
    with pytest.raises(AssertionError, match="V was computed"):
        model.track_candidates(points)


def test_half_precision_candidates_are_refused():
    X = torch.rand(4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = torch.sin(X)
    B = torch.eye(2, dtype=torch.float64)
    for model in (VectorValuedGP(X, Y, RBFKernel(), B, 0.1),
                  NystromVectorValuedGP(X, Y, RBFKernel(), B, 0.1)):  # fmt: skip
        with pytest.raises(TypeError, match="points must be float32 or float64"):
            model.track_candidates(torch.rand(3, 2).half())
