"""Building MT-BKB's sketch from data (``models.nystrom_build``): chunks replay the
updates, ``chunk_size=1`` is Algorithm 2 of paper 000 row by row, and the adaptive chunks
follow their rule and give a valid sketch (against dense NumPy transcriptions of the sketch
and against the exact posterior)."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch
from cases import ETA, build_case, tolerances
from nystrom_cases import _moments, _np, _sketch, _test_points
from oracles import dense_sketch

from botorch_mtucb.models import NystromVectorValuedGP
from botorch_mtucb.models.nystrom_sketch import PSEUDO_INVERSE_RTOL

KINDS = ("full", "indexed")


def test_draws_are_reproducible_and_chunks_replay_the_updates():
    case = build_case("uniform_0.4", torch.float64, num_rows=20, seed=5)
    X = _test_points(torch.float64)
    a = _sketch(case, accuracy=1.0, seed=7, chunk_size=1)
    b = _sketch(case, accuracy=1.0, seed=7, chunk_size=1)
    assert torch.equal(a.dictionary, b.dictionary)
    assert any(
        not torch.equal(_sketch(case, accuracy=1.0, seed=s, chunk_size=1).dictionary, a.dictionary)
        for s in range(8, 12)
    )
    # building in one go (chunk_size=1) is the sequence of single-row updates
    step = _sketch(case, X=case.train_X[:0], Y=case.train_Y[:0], accuracy=1.0, seed=7)
    for i in range(20):
        assert step.append_observations(case.train_X[i : i + 1], case.train_Y[i : i + 1]) is step
    assert torch.equal(step.dictionary, a.dictionary) and step.num_resamplings == 20
    np.testing.assert_allclose(_moments(step, X)[1], _moments(a, X)[1], rtol=1e-12, atol=1e-12)
    # chunks: one draw per chunk
    assert _sketch(case, accuracy=1.0, chunk_size=8).num_resamplings == 3


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # sqrtm of singular G~
def test_adaptive_build_merges_repeated_dictionary_rows(dtype):
    """On a finite domain the dictionary holds copies of the same point: the adaptive
    build merges them (one column, weight sqrt(sum 1/p)) and its posterior is still the
    dense sketch of the dictionary as drawn, copies and all."""
    case = build_case("icm", dtype, num_rows=6, seed=8)
    index = torch.randint(0, 6, (36,), generator=torch.Generator().manual_seed(0))
    X, Y = case.train_X[index], case.train_Y[index] + 0.1 * torch.arange(36).to(dtype)[:, None]
    model = _sketch(case, X=X, Y=Y, accuracy=50.0, seed=1)
    rows = X[model.dictionary]
    assert torch.unique(rows, dim=0).shape[0] < rows.shape[0]  # copies were drawn
    test = _test_points(dtype, q=3)
    mean, covariance = _moments(model, test)
    expected_mean, expected_covariance = dense_sketch(
        case.oracle,
        _np(X),
        _np(Y),
        None,
        model.dictionary.numpy(),
        _np(model.inclusion_probabilities),
        _np(test),
        rtol=PSEUDO_INVERSE_RTOL[dtype],
    )
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float64 else {"rtol": 3e-2, "atol": 3e-2}
    np.testing.assert_allclose(mean, expected_mean, **tol)
    np.testing.assert_allclose(covariance, expected_covariance, **tol)
    # the same dictionary rebuilt by the online route (append_observations), which
    # keeps every copy: the same posterior to round-off
    unmerged = copy.deepcopy(model)
    unmerged._rebuild()
    assert not torch.equal(unmerged._root, model._root)  # the copies' rows are not zero
    merged_tol = {"rtol": 1e-9, "atol": 1e-9} if dtype == torch.float64 else tol
    for moment, expected in zip(_moments(unmerged, test), (mean, covariance)):
        np.testing.assert_allclose(moment, expected, **merged_tol)


# Dictionaries of chunk_size=1 (Algorithm 2 replayed row by row) as built by main before
# issue 14 (commit 8045767), 25 rows, seed=1 data, accuracy 3, draws seed 4: float64 and
# float32 draw the same rows. The sums of log-dets are those of 8045767 in float64.
ALGORITHM_2_DICTIONARIES = {
    ("icm", "full"): ([3, 4, 5, 6, 7, 8, 11, 12, 16, 17, 20, 22, 23, 24], 67.08719536947989),
    ("uniform_0.4", "full"): (
        [0, 2, 4, 5, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24],
        80.5810000154192,
    ),
    ("sum", "full"): ([0, 4, 5, 8, 10, 11, 14, 17, 18, 20, 21, 22, 23, 24], 86.36373298218649),
    ("independent", "indexed"): (
        [2, 3, 4, 5, 6, 7, 8, 12, 15, 19, 22, 23, 24],
        55.876957533463916,
    ),
}


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # sqrtm of singular G~
@pytest.mark.parametrize("key", list(ALGORITHM_2_DICTIONARIES), ids=str)
def test_chunk_size_1_is_algorithm_2_as_before_issue_14(key, dtype):
    """chunk_size=1 draws the dictionary main drew before the adaptive default (the
    row-by-row replay of Algorithm 2), one redraw per row, and its posterior is the
    dense sketch of that dictionary."""
    name, kind = key
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=25, seed=1)
    model = _sketch(case, accuracy=3.0, seed=4, chunk_size=1)
    dictionary, log_det_sum = ALGORITHM_2_DICTIONARIES[key]
    assert model.dictionary.tolist() == dictionary and model.num_resamplings == 25
    tol = tolerances(dtype)
    if dtype == torch.float32:  # float32's eigvalsh of the sum's 3 x 3 blocks: 2e-3
        tol = {"rtol": 5e-3, "atol": 5e-3}
    np.testing.assert_allclose(float(model.sketched_log_det_sum), log_det_sum, **tol)
    X = _test_points(dtype, q=3)
    mean, covariance = _moments(model, X)
    expected_mean, expected_covariance = dense_sketch(
        case.oracle,
        _np(case.train_X),
        _np(case.train_Y),
        case.tasks_numpy(),
        model.dictionary.numpy(),
        _np(model.inclusion_probabilities),
        _np(X),
        rtol=PSEUDO_INVERSE_RTOL[dtype],
    )
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float64 else {"rtol": 3e-2, "atol": 3e-2}
    np.testing.assert_allclose(mean, expected_mean, **tol)
    np.testing.assert_allclose(covariance, expected_covariance, **tol)


def _information(model, X, tasks, U):
    """Dense check of ``_row_information``: per-row information under ``model`` at
    rows ``X`` (``k x h``) and norms ``||Gamma~(x, x)||`` (or ``Gamma~_ii``)."""
    blocks = _np(model.posterior(X.unsqueeze(-2)).distribution.covariance_matrix)  # k x n x n
    if tasks is not None:
        own = blocks[np.arange(len(X)), tasks, tasks]
        return np.log1p(own / ETA)[:, None], own
    norms = np.linalg.eigvalsh(blocks)[:, -1]
    if U is not None:  # ICM: the eigen-directions of B are separate scalar problems
        components = np.einsum("ia,kij,ja->ka", U, blocks, U)
        return np.log1p(np.clip(components, 0, None) / ETA), norms
    log_det = np.linalg.slogdet(np.eye(blocks.shape[-1]) + blocks / ETA)[1]
    return log_det[:, None], norms


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_adaptive_chunks_follow_the_rule_and_draw_from_the_previous_chunk(name, kind, monkeypatch):
    """Each adaptive chunk is the longest run of rows within log 2 nats in every
    direction under the previous chunk's sketch (at least t / 8 rows, at most the
    window), and its redraw uses that sketch's variances for every row (checked
    against models built on the prefixes, which replay the same chunks)."""
    from botorch_mtucb.models import nystrom_build as module

    case = build_case(name, torch.float64, task_indexed=kind == "indexed", num_rows=40, seed=6)
    sizes = []
    original = NystromVectorValuedGP._resample

    def recording(self, norms, generator):  # one draw per chunk, from every row so far
        sizes.append(norms.shape[0] - sum(sizes))
        return original(self, norms, generator)

    monkeypatch.setattr(NystromVectorValuedGP, "_resample", recording)
    q = 2.0
    model = _sketch(case, accuracy=q, seed=2)
    assert sum(sizes) == 40 and len(sizes) == model.num_resamplings < 40
    assert max(sizes) > 1  # genuinely batched
    U = None
    if kind == "full" and name == "icm":
        U = np.linalg.eigh(_np(case.task_covariances[0]))[1]
    tasks = case.tasks_numpy()
    boundaries = np.cumsum([0, *sizes])
    last = 0
    for k, (start, end) in enumerate(zip(boundaries[:-1], boundaries[1:])):
        if k % 3 and end != 40:  # a few chunks: each prefix build costs its own chunks
            last = end - start
            continue
        sizes.clear()
        prefix = _sketch(
            case,
            X=case.train_X[:start],
            Y=case.train_Y[:start],
            tasks="same" if tasks is None else case.train_tasks[:start],
            accuracy=q,
            seed=2,
        )
        after = _sketch(
            case,
            X=case.train_X[:end],
            Y=case.train_Y[:end],
            tasks="same" if tasks is None else case.train_tasks[:end],
            accuracy=q,
            seed=2,
        )
        window = min(max(2 * last, module.ADAPTIVE_MIN_WINDOW), max(start, 64))
        stop = min(40, start + window)
        information, norms = _information(
            prefix, case.train_X[:stop], None if tasks is None else tasks[:stop], U
        )
        within = (np.cumsum(information[start:stop], 0) <= np.log(2.0) + 1e-9).all(-1)
        expected = min(max(int(within.sum()), int(np.ceil(start / 8)), 1), stop - start)
        assert end - start == expected, (k, start, end, expected)
        probabilities = np.minimum(q * norms[:end], 1.0)[after.dictionary.numpy()]
        np.testing.assert_allclose(
            _np(after.inclusion_probabilities), probabilities, rtol=1e-7, atol=1e-12
        )
        last = end - start


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum", "independent"))
def test_adaptive_build_is_a_valid_sketch(name, kind, dtype):
    """The adaptive default against chunk_size=1 and the exact posterior: fewer
    redraws, dictionaries of about Algorithm 2's size, and Gamma_t / rho <= Gamma~_t <=
    rho Gamma_t (rho = 3, eps = 0.5) at test points, with means close."""
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=40, seed=7)
    sizes = {"adaptive": [], 1: []}
    for seed in range(2):
        for chunk_size, found in sizes.items():
            model = _sketch(case, accuracy=20.0, seed=seed, chunk_size=chunk_size)
            found.append(model.dictionary_size)
    adaptive = _sketch(case, accuracy=20.0, seed=0)
    assert adaptive.num_resamplings < 28  # against 40 for chunk_size=1
    ratio = np.mean(sizes["adaptive"]) / np.mean(sizes[1])
    assert 0.8 <= ratio <= 1.6, sizes
    assert min(sizes["adaptive"]) < 40  # a genuine sketch (2-d inputs, q = 20: large)
    X = _test_points(dtype, q=6, seed=3)
    mean, covariance = _moments(adaptive, X)
    exact_mean, exact_covariance = _moments(case.build(), X)
    variances, exact_variances = np.diag(covariance), np.diag(exact_covariance)
    assert np.all(variances >= exact_variances / 3) and np.all(variances <= 3 * exact_variances)
    scale = np.sqrt(exact_variances).reshape(mean.shape)
    assert np.all(np.abs(mean - exact_mean) <= 3 * scale + 1e-3)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum", "sum_noise"))
def test_adaptive_update_schedule_extends_between_redraws(name, kind, dtype):
    """update_schedule="adaptive": an append keeps the dictionary while the information
    since the last redraw (each append's log det, read from sketched_log_det_sum) stays
    within log 2, and redraws past it (the ICM route of full-vector data: every time);
    between redraws the posterior is the dense sketch of every row so far with the kept
    dictionary (paper 000, Section 3.2, transcribed densely; ``sum_noise``: with a prior
    mean and per-task noise, the whitened sketch)."""
    noise = name.endswith("_noise")
    name = name.removesuffix("_noise")
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=40, seed=5)
    options = {"accuracy": 2.0, "seed": 1, "update_schedule": "adaptive"}
    if noise:  # the oracle and the model with c and Lambda in place of eta
        mean, variances = [1.5, -2.0, 0.25], [0.02, 0.3, 0.1]
        oracle = dataclasses.replace(
            case.oracle, prior_mean=np.array(mean), noise_variances=np.array(variances)
        )
        case = dataclasses.replace(case, oracle=oracle)
        options.update(prior_mean=torch.tensor(mean), noise_variances=variances)
    X, Y, tasks = case.train_X, case.train_Y, case.train_tasks
    start = 12

    def rows(i, j):
        return X[i:j], Y[i:j], None if tasks is None else tasks[i:j]

    kernels = case.kernels[0] if len(case.kernels) == 1 else case.kernels
    covariances = case.task_covariances
    model = NystromVectorValuedGP(
        X[:start], Y[:start], kernels, covariances[0] if len(covariances) == 1 else covariances,
        None if noise else ETA, rows(0, start)[2], **options,
    )  # fmt: skip
    icm_route = name == "icm" and kind == "full"
    pending, extended, redrawn = 0.0, 0, 0
    test_X = _test_points(dtype, q=3)
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float64 else {"rtol": 3e-2, "atol": 3e-2}
    for i in range(start, X.shape[0]):
        before, draws = float(model.sketched_log_det_sum), model.num_resamplings
        dictionary = model.dictionary.clone()
        model.append_observations(*rows(i, i + 1))
        information = float(model.sketched_log_det_sum) - before
        redrew = model.num_resamplings > draws
        expected = icm_route or pending + information > np.log(2.0)
        assert redrew == expected, (i, pending, information)
        pending = 0.0 if redrew else pending + information
        redrawn, extended = redrawn + redrew, extended + (not redrew)
        if redrew:
            continue
        assert torch.equal(model.dictionary, dictionary)
        mean, covariance = _moments(model, test_X)
        expected_mean, expected_covariance = dense_sketch(
            case.oracle,
            _np(X[: i + 1]),
            _np(Y[: i + 1]),
            None if tasks is None else tasks[: i + 1].numpy(),
            model.dictionary.numpy(),
            _np(model.inclusion_probabilities),
            _np(test_X),
            rtol=PSEUDO_INVERSE_RTOL[dtype],
        )
        np.testing.assert_allclose(mean, expected_mean, **tol)
        np.testing.assert_allclose(covariance, expected_covariance, **tol)
    assert redrawn > 0 and (icm_route or extended > 0), (redrawn, extended)


def test_update_schedule_every_and_chunk_size_1_keep_algorithm_2():
    """The default schedule redraws at every append; a chunk_size=1 build replays one
    redraw per row whatever the schedule; other schedules are refused."""
    case = build_case("sum", torch.float64, task_indexed=True, num_rows=20, seed=5)
    replay = _sketch(case, accuracy=2.0, chunk_size=1, update_schedule="adaptive")
    assert replay.num_resamplings == 20
    model = _sketch(case, accuracy=2.0)
    draws = model.num_resamplings
    for i in range(5):
        model.append_observations(
            case.train_X[i : i + 1], case.train_Y[i : i + 1], case.train_tasks[i : i + 1]
        )
    assert model.num_resamplings == draws + 5
    with pytest.raises(ValueError, match="update_schedule must be 'every' or 'adaptive'"):
        _sketch(case, update_schedule="sometimes")
