"""A constant prior mean and a noise variance per task (``prior_mean``, ``noise_variances``)
in VectorValuedGP and NystromVectorValuedGP, on every route, against the dense NumPy
posterior ``c + G_t(x)^T (G_t + Lambda)^{-1} (Y_t - c)`` written in the outputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from botorch.sampling import SobolQMCNormalSampler
from cases import CASES, ICM_CASES, NUM_TASKS, build_case, tolerances
from oracles import dense_sketch

from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.models.nystrom_sketch import PSEUDO_INVERSE_RTOL

KINDS = ("full", "indexed")
F64 = torch.float64
MEAN = [1.5, -2.0, 0.25]  # c_i
NOISE = [0.02, 0.3, 0.1]  # lambda_i: eta = 0.02, the noise scales S differ by ~4x


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _case(name, dtype, kind="full", num_rows=None, seed=0):
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=num_rows, seed=seed)
    oracle = dataclasses.replace(
        case.oracle, prior_mean=np.array(MEAN), noise_variances=np.array(NOISE)
    )
    return dataclasses.replace(case, oracle=oracle)


def _arguments(case):
    kernels = case.kernels[0] if len(case.kernels) == 1 else case.kernels
    covariances = (
        case.task_covariances[0] if len(case.task_covariances) == 1 else case.task_covariances
    )
    return kernels, covariances


def _model(case, X=None, Y=None, tasks="same", cls=VectorValuedGP, **kwargs):
    X = case.train_X if X is None else X
    Y = case.train_Y if Y is None else Y
    tasks = case.train_tasks if isinstance(tasks, str) else tasks
    kernels, covariances = _arguments(case)
    return cls(
        X,
        Y,
        kernels,
        covariances,
        train_tasks=tasks,
        prior_mean=torch.tensor(MEAN),
        noise_variances=NOISE,
        **kwargs,
    )


def _assert_oracle(posterior, case, X, train_X, train_Y, tasks, tol=None):
    mean, covariance = case.oracle.posterior(_np(train_X), _np(train_Y), _np(X), tasks)
    tol = tol or tolerances(case.dtype)
    np.testing.assert_allclose(_np(posterior.mean), mean, **tol)
    np.testing.assert_allclose(_np(posterior.distribution.covariance_matrix), covariance, **tol)


def _points(q, dtype, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(q, 2, generator=generator, dtype=F64).to(dtype)


def _tasks(case, tasks="same"):
    tasks = case.train_tasks if isinstance(tasks, str) else tasks
    return None if tasks is None else tasks.numpy()


# ------------------------------------------------------------------ exact model
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_posterior_and_information_gain_match_the_dense_formula(name, kind, dtype):
    case = _case(name, dtype, kind)
    model = _model(case)
    assert model.uses_eigen_route == (kind == "full" and name in ICM_CASES)
    assert model.has_task_noise and model.regularization == min(NOISE)
    assert model.prior_mean.dtype == model.noise_variances.dtype == dtype
    for X in (_points(4, dtype), case.train_X):
        _assert_oracle(model.posterior(X), case, X, case.train_X, case.train_Y, _tasks(case))
    expected = case.oracle.information_gain(_np(case.train_X), _np(case.train_Y), _tasks(case))
    np.testing.assert_allclose(float(model.information_gain()), expected, **tolerances(dtype))
    # not vacuous: one noise level eta and zero mean give another posterior
    plain = case.build().posterior(case.train_X).mean
    assert (model.posterior(case.train_X).mean - plain).abs().max() > 0.1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_appends_and_conditioning_equal_the_batch_build(name, kind, dtype):
    """The O(t^2) updates (append_observations, condition_on_observations with each
    task's noise, given or omitted) equal a model built on all rows, and the oracle."""
    case = _case(name, dtype, kind, num_rows=9)
    tasks = case.train_tasks
    first = _model(case, case.train_X[:4], case.train_Y[:4], None if tasks is None else tasks[:4])
    grown = first.condition_on_observations(
        case.train_X[4:6], case.train_Y[4:6], train_tasks=None if tasks is None else tasks[4:6]
    )
    assert grown._conditioning is None  # the in-place route, not Gaussian conditioning
    noise = torch.tensor(NOISE, dtype=dtype)
    noise = noise.expand(3, NUM_TASKS) if tasks is None else noise[tasks[6:9]].unsqueeze(-1)
    grown = grown.condition_on_observations(
        case.train_X[6:9],
        case.train_Y[6:9],
        noise=noise,
        train_tasks=None if tasks is None else tasks[6:9],
    )
    assert grown._conditioning is None
    assert first.train_X.shape[0] == 4  # condition_on_observations left it alone
    first.append_observations(
        case.train_X[4:], case.train_Y[4:], None if tasks is None else tasks[4:]
    )
    batch = _model(case)
    X = _points(3, dtype)
    tol = tolerances(dtype)
    for model in (first, grown, batch):
        _assert_oracle(model.posterior(X), case, X, case.train_X, case.train_Y, _tasks(case))
        np.testing.assert_allclose(
            float(model.information_gain()), float(batch.information_gain()), **tol
        )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "independent"))
def test_batched_conditioning_and_fantasies_use_each_tasks_noise(name, kind, dtype):
    case = _case(name, dtype, kind)
    model = _model(case)
    X_new = _points(2, dtype, seed=5)
    if kind == "full":
        Y_new = torch.randn(3, 2, NUM_TASKS, generator=torch.Generator().manual_seed(6))
        new_tasks = None
    else:
        Y_new = torch.randn(3, 2, 1, generator=torch.Generator().manual_seed(6))
        new_tasks = torch.tensor([2, 0])
    Y_new = Y_new.to(dtype)
    conditioned = model.condition_on_observations(X_new, Y_new, train_tasks=new_tasks)
    assert conditioned.batch_shape == (3,)  # Gaussian conditioning of the posterior
    test_X = _points(3, dtype, seed=7)
    posterior = conditioned.posterior(test_X)
    all_X = torch.cat([case.train_X, X_new])
    all_tasks = None if new_tasks is None else np.concatenate([_tasks(case), new_tasks.numpy()])
    tol = tolerances(dtype)
    for b in range(3):
        mean, covariance = case.oracle.posterior(
            _np(all_X), _np(torch.cat([case.train_Y, Y_new[b]])), _np(test_X), all_tasks
        )
        np.testing.assert_allclose(_np(posterior.mean[b]), mean, **tol)
        np.testing.assert_allclose(
            _np(posterior.distribution.covariance_matrix[b]), covariance, **tol
        )
    # fantasies: sampled with each task's noise and conditioned with it
    sampler = SobolQMCNormalSampler(torch.Size([2]), seed=0)
    fantasy = model.fantasize(X_new, sampler)
    Y = sampler(model.posterior(X_new, observation_noise=True))  # 2 x 2 x n
    posterior = fantasy.posterior(test_X)
    full_rows = np.repeat(np.arange(NUM_TASKS)[None], 2, 0).reshape(-1)
    fantasy_tol = tol if dtype == F64 else {"rtol": 2e-3, "atol": 2e-3}
    for f in range(2):
        X_rows = np.concatenate([_np(case.train_X), np.repeat(_np(X_new), NUM_TASKS, 0)])
        if kind == "full":
            Y_rows = np.concatenate([_np(case.train_Y), _np(Y[f])])
            tasks = None
            mean, covariance = case.oracle.posterior(
                np.concatenate([_np(case.train_X), _np(X_new)]), Y_rows, _np(test_X), tasks
            )
        else:  # a task-indexed model fantasizes every output at each point
            Y_rows = np.concatenate([_np(case.train_Y).reshape(-1), _np(Y[f]).reshape(-1)])
            tasks = np.concatenate([_tasks(case), full_rows])
            mean, covariance = case.oracle.posterior(X_rows, Y_rows[:, None], _np(test_X), tasks)
        np.testing.assert_allclose(_np(posterior.mean[f]), mean, **fantasy_tol)
        np.testing.assert_allclose(
            _np(posterior.distribution.covariance_matrix[f]), covariance, **fantasy_tol
        )


@pytest.mark.parametrize("name", ("icm", "sum"))
def test_subset_output_and_observation_noise(name, dtype):
    case = _case(name, dtype)
    model = _model(case)
    X = _points(3, dtype)
    sub = model.subset_output([2, 0])
    expected = model.posterior(X, output_indices=[2, 0])
    assert torch.equal(sub.posterior(X).mean, expected.mean)
    mean, covariance = case.oracle.posterior(_np(case.train_X), _np(case.train_Y), _np(X))
    np.testing.assert_allclose(_np(expected.mean), mean[:, [2, 0]], **tolerances(dtype))
    noisy = model.posterior(X, observation_noise=True).distribution.covariance_matrix
    plain = model.posterior(X).distribution.covariance_matrix
    added = _np((noisy - plain).diagonal()).reshape(3, NUM_TASKS)
    np.testing.assert_allclose(added, np.broadcast_to(NOISE, (3, NUM_TASKS)), rtol=1e-5)
    kept = sub.posterior(X, observation_noise=True).variance - sub.posterior(X).variance
    np.testing.assert_allclose(_np(kept), np.broadcast_to([NOISE[2], NOISE[0]], (3, 2)), rtol=1e-5)


@pytest.mark.parametrize("name", ("icm", "sum"))
def test_track_candidates_with_prior_mean_and_task_noise(name, dtype):
    case = _case(name, dtype, num_rows=3)
    D = _points(12, dtype, seed=9)
    tracked, plain = _model(case), _model(case)
    assert tracked.track_candidates(D)
    rows = torch.randn(4, NUM_TASKS, generator=torch.Generator().manual_seed(2)).to(dtype)
    for i in range(4):  # two candidates, two other points
        x = D[2 * i : 2 * i + 1] if i % 2 == 0 else _points(1, dtype, seed=20 + i)
        tracked.append_observations(x, rows[i : i + 1])
        plain.append_observations(x, rows[i : i + 1])
    assert tracked.tracks_candidates
    query = D.unsqueeze(-2)
    tol = tolerances(dtype)
    fast, slow = tracked.posterior(query), plain.posterior(query)
    np.testing.assert_allclose(_np(fast.mean), _np(slow.mean), **tol)
    np.testing.assert_allclose(
        _np(fast.distribution.covariance_matrix), _np(slow.distribution.covariance_matrix), **tol
    )
    mean, _ = case.oracle.posterior(_np(plain.train_X), _np(plain.train_Y), _np(D))
    np.testing.assert_allclose(_np(fast.mean).reshape(12, NUM_TASKS), mean, **tol)


def test_one_noise_level_is_the_plain_model_bit_for_bit():
    case = build_case("icm", F64)
    kernels, covariances = _arguments(case)
    plain = case.build()
    same = VectorValuedGP(
        case.train_X, case.train_Y, kernels, covariances, noise_variances=0.1, prior_mean=0.0
    )
    X = _points(4, F64)
    assert not same.has_task_noise and same.regularization == 0.1
    assert torch.equal(same.posterior(X).mean, plain.posterior(X).mean)
    assert torch.equal(
        same.posterior(X).distribution.covariance_matrix,
        plain.posterior(X).distribution.covariance_matrix,
    )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, TypeError, "regularization .* or noise_variances .* is required"),
        ({"regularization": 0.1, "noise_variances": NOISE}, ValueError, "not both"),
        ({"noise_variances": [0.1, 0.2]}, ValueError, "one value per task \\(3\\)"),
        ({"noise_variances": [0.1, 0.0, 0.2]}, ValueError, "noise_variances must be > 0"),
        ({"noise_variances": "0.1"}, TypeError, "noise_variances must be"),
        ({"regularization": 0.1, "prior_mean": [0.0, float("nan"), 1.0]}, ValueError, "finite"),
        ({"regularization": 0.1, "prior_mean": torch.zeros(2, 3)}, ValueError, "prior_mean"),
        ({"regularization": 0.1, "prior_mean": True}, TypeError, "prior_mean must be"),
    ],
)
def test_bad_prior_mean_and_noise_arguments(kwargs, error, match):
    case = build_case("icm", F64)
    kernels, covariances = _arguments(case)
    for cls in (VectorValuedGP, NystromVectorValuedGP):
        with pytest.raises(error, match=match):
            cls(case.train_X, case.train_Y, kernels, covariances, **kwargs)


# ---------------------------------------------------------------- the sketch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_full_dictionary_sketch_is_the_exact_posterior(name, kind, dtype):
    """Every row in the dictionary: the sketch is the exact model, and the sum of its
    log-dets is twice the mutual information under the per-task noise (Lemma 4)."""
    case = _case(name, dtype, kind, num_rows=6)
    sketch = _model(case, cls=NystromVectorValuedGP, accuracy=1e12)
    exact = _model(case)
    assert sketch.dictionary_size == 6
    X = _points(3, dtype)
    tol = tolerances(dtype)
    _assert_oracle(sketch.posterior(X), case, X, case.train_X, case.train_Y, _tasks(case))
    expected = case.oracle.sequential_log_det_sum(
        _np(case.train_X), _np(case.train_Y), _tasks(case)
    )
    np.testing.assert_allclose(float(sketch.sketched_log_det_sum), expected, **tol)
    np.testing.assert_allclose(
        float(sketch.sketched_log_det_sum), 2 * float(exact.information_gain()), **tol
    )
    np.testing.assert_allclose(
        _np(sketch.train_variances),
        _np(exact.posterior(case.train_X.unsqueeze(-2)).variance).reshape(6, NUM_TASKS),
        **tol,
    )


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # sqrtm of singular G~
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_partial_dictionary_matches_the_dense_sketch(name, kind, dtype):
    """The sketch of the whitened function is the projected features' exact posterior
    with mean c and noise Lambda (the dense form in ``oracles.dense_sketch``)."""
    case = _case(name, dtype, kind, num_rows=20, seed=4)
    model = _model(case, cls=NystromVectorValuedGP, accuracy=1.0, seed=3)
    assert 0 < model.dictionary_size < 20  # a genuine sketch
    X = _points(3, dtype)
    expected_mean, expected_covariance = dense_sketch(
        case.oracle,
        _np(case.train_X),
        _np(case.train_Y),
        _tasks(case),
        model.dictionary.numpy(),
        _np(model.inclusion_probabilities),
        _np(X),
        rtol=PSEUDO_INVERSE_RTOL[dtype],
    )
    posterior = model.posterior(X)
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == F64 else {"rtol": 3e-2, "atol": 3e-2}
    np.testing.assert_allclose(_np(posterior.mean), expected_mean, **tol)
    np.testing.assert_allclose(
        _np(posterior.distribution.covariance_matrix), expected_covariance, **tol
    )


@pytest.mark.parametrize("kind", KINDS)
def test_draws_use_the_whitened_variances(kind):
    """Algorithm 2 on g = S^{-1} (f - c): p = min(q ||S^{-1} Gamma~ S^{-1}||, 1) with the
    previous sketch, S^2 = Lambda / eta; the log-det of a new row is that of the
    whitened block."""
    case = _case("icm", F64, kind, num_rows=12, seed=2)
    q, tasks = 2.0, case.train_tasks
    sub = None if tasks is None else tasks[:11]
    previous = _model(
        case,
        case.train_X[:11],
        case.train_Y[:11],
        sub,
        cls=NystromVectorValuedGP,
        accuracy=q,
        chunk_size=1,
    )
    current = _model(case, cls=NystromVectorValuedGP, accuracy=q, chunk_size=1)
    blocks = _np(previous.posterior(case.train_X.unsqueeze(-2)).distribution.covariance_matrix)
    scale = np.sqrt(np.array(NOISE) / min(NOISE))
    white = blocks / np.outer(scale, scale)  # 12 x n x n
    if tasks is None:
        norms = np.linalg.eigvalsh(white)[:, -1]
        new = np.linalg.slogdet(np.eye(NUM_TASKS) + white[-1] / min(NOISE))[1]
    else:
        own = white[np.arange(12), tasks.numpy(), tasks.numpy()]
        norms, new = own, np.log1p(own[-1] / min(NOISE))
    expected = np.minimum(q * norms, 1.0)
    assert ((expected > 0.02) & (expected < 0.98)).sum() >= 4
    np.testing.assert_allclose(
        _np(current.inclusion_probabilities), expected[current.dictionary.numpy()], rtol=1e-9
    )
    increment = float(current.sketched_log_det_sum - previous.sketched_log_det_sum)
    np.testing.assert_allclose(increment, new, rtol=1e-9)


def test_sketch_tracks_candidates_with_task_noise():
    case = _case("icm", F64, num_rows=4)
    D = torch.cat([case.train_X, _points(8, F64, seed=9)])
    tracked = _model(case, cls=NystromVectorValuedGP, accuracy=5.0)
    plain = _model(case, cls=NystromVectorValuedGP, accuracy=5.0)
    assert tracked.track_candidates(D)
    rows = torch.randn(3, NUM_TASKS, generator=torch.Generator().manual_seed(2), dtype=F64)
    for i in range(3):
        tracked.append_observations(D[4 + i : 5 + i], rows[i : i + 1])
        plain.append_observations(D[4 + i : 5 + i], rows[i : i + 1])
    assert tracked.tracks_candidates and torch.equal(tracked.dictionary, plain.dictionary)
    fast, slow = tracked.posterior(D.unsqueeze(-2)), plain.posterior(D.unsqueeze(-2))
    tol = {"rtol": 1e-9, "atol": 1e-9}
    np.testing.assert_allclose(_np(fast.mean), _np(slow.mean), **tol)
    np.testing.assert_allclose(_np(fast.variance), _np(slow.variance), **tol)
    np.testing.assert_allclose(_np(tracked.train_variances), _np(plain.train_variances), **tol)
    assert (fast.mean - slow.mean).abs().max() < 1e-9 < (fast.mean.abs().max())


def test_widths_use_the_smallest_noise_and_the_mutual_information():
    """mt_kb_width / mt_bkb_width of a model with per-task noise: eta = min lambda_i and
    the whitened log-dets (the mutual information under Lambda); the mean does not enter."""
    from botorch_mtucb.confidence import mt_bkb_width, mt_kb_width

    case = _case("icm", F64)
    model = _model(case)
    gain = case.oracle.information_gain(_np(case.train_X), _np(case.train_Y))
    b, sigma, delta = 0.7, 0.3, 0.05
    expected = b + sigma / np.sqrt(min(NOISE)) * np.sqrt(2 * np.log(1 / delta) + 2 * gain)
    assert float(mt_kb_width(model, b, sigma, delta)) == pytest.approx(expected, rel=1e-9)
    unit = b + np.sqrt(2 * np.log(1 / delta) + 2 * gain)  # noise_std=None: each task's own
    assert float(mt_kb_width(model, b, delta=delta)) == pytest.approx(unit, rel=1e-9)
    sketch = _model(case, cls=NystromVectorValuedGP, accuracy=1e12)
    rho = 3.0  # eps = 0.5
    expected = b * (1 + np.sqrt(2)) + sigma / np.sqrt(min(NOISE)) * np.sqrt(
        2 * np.log(2 / delta) + rho * 2 * gain
    )
    width = mt_bkb_width(sketch, b, sigma, delta, eps=0.5)
    assert float(width) == pytest.approx(expected, rel=1e-9)
