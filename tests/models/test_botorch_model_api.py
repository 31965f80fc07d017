"""VectorValuedGP as a full BoTorch model: batched condition_on_observations with noise,
fantasize (qKnowledgeGradient, qNegIntegratedPosteriorVariance), subset_output,
posterior_transform and .to(), against a dense NumPy multi-output GP posterior with one
noise variance per scalar observation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.acquisition import (
    qKnowledgeGradient,
    qNegIntegratedPosteriorVariance,
)
from botorch.acquisition.objective import PosteriorTransform, ScalarizedPosteriorTransform
from botorch.exceptions.errors import DeprecationError, UnsupportedError
from botorch.optim import optimize_acqf
from botorch.sampling import SobolQMCNormalSampler
from cases import ETA, NUM_TASKS, build_case, tolerances

from botorch_mtucb.models import VectorValuedGP

KINDS = ("full", "indexed")
F64 = torch.float64


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def dense_posterior(oracle, obs_X, obs_tasks, obs_y, obs_noise, X):
    """Mean ``q x n`` and covariance ``(q n) x (q n)`` of the GP given scalar
    observations ``y_s = f_{i_s}(x_s) + eps_s``, ``eps_s ~ N(0, noise_s)``:
    ``G_t(x)^T (G_t + S)^{-1} y`` and ``Gamma(x, x') - G_t(x)^T (G_t + S)^{-1} G_t(x')``."""
    X = np.asarray(X, dtype=np.float64)
    q, n, M = X.shape[0], oracle.num_tasks, len(obs_y)
    prior = oracle.gamma(X, X).reshape(q * n, q * n)
    G = oracle.observation_gram(obs_X, obs_tasks, obs_X, obs_tasks) + np.diag(obs_noise)
    Gx = oracle.gamma(obs_X, X)[np.arange(M), obs_tasks].reshape(M, q * n)
    mean = Gx.T @ np.linalg.solve(G, obs_y)
    return mean.reshape(q, n), prior - Gx.T @ np.linalg.solve(G, Gx)


def scalar_rows(X, Y, tasks=None, noise=ETA, outputs=None):
    """Scalar observations ``(x, task, y, noise)`` of rows; full rows observe ``outputs``."""
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    noise = np.broadcast_to(np.asarray(noise, dtype=np.float64), Y.shape)
    if tasks is None:
        outputs = np.arange(Y.shape[-1]) if outputs is None else np.asarray(outputs)
        obs_tasks = np.tile(outputs, X.shape[0])
        return np.repeat(X, Y.shape[-1], 0), obs_tasks, Y.reshape(-1), noise.reshape(-1)
    outputs = np.arange(NUM_TASKS) if outputs is None else np.asarray(outputs)
    return X, outputs[np.asarray(tasks)], Y.reshape(-1), noise.reshape(-1)


def joined(*parts):
    return tuple(np.concatenate(column) for column in zip(*parts))


def core_rows(case):
    return scalar_rows(_np(case.train_X), _np(case.train_Y), case.tasks_numpy())


def assert_matches(posterior, index, case, observations, X, tol=None):
    mean, covariance = dense_posterior(case.oracle, *observations, _np(X))
    tol = tol or tolerances(case.dtype)
    np.testing.assert_allclose(_np(posterior.mean[index]), mean, **tol)
    np.testing.assert_allclose(
        _np(posterior.distribution.covariance_matrix[index]), covariance, **tol
    )


def _rand(*shape, seed=0, dtype=F64):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=generator, dtype=F64).to(dtype)


def _randn(*shape, seed=0, dtype=F64):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=F64).to(dtype)


# ------------------------------------------------------------ conditioning
@pytest.mark.parametrize("with_noise", (False, True))
@pytest.mark.parametrize("shapes", [((), (3,)), ((2,), (4, 2)), ((2, 1), (1, 3))], ids=str)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum", "independent"))
def test_batched_condition_matches_dense_posterior(name, kind, shapes, with_noise, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    model = case.build()
    x_batch, y_batch = shapes
    X_new = _rand(*x_batch, 2, 2, seed=1, dtype=dtype)
    Y_new = _randn(*y_batch, 2, NUM_TASKS, seed=2, dtype=dtype)
    noise = 0.01 + 0.3 * _rand(*x_batch, 2, NUM_TASKS, seed=3, dtype=dtype) if with_noise else None
    test_X = _rand(3, 2, seed=4, dtype=dtype)
    before = model.posterior(test_X).mean.clone()
    conditioned = model.condition_on_observations(X_new, Y_new, noise=noise)
    batch = torch.broadcast_shapes(x_batch, y_batch)
    assert isinstance(conditioned, VectorValuedGP) and conditioned.batch_shape == batch
    posterior = conditioned.posterior(test_X)
    assert posterior.mean.shape == (*batch, 3, NUM_TASKS)
    assert posterior.distribution.covariance_matrix.shape == (*batch, 3 * NUM_TASKS, 3 * NUM_TASKS)
    assert posterior.mean.dtype == dtype
    X_b = X_new.expand(*batch, 2, 2)
    Y_b = Y_new.expand(*batch, 2, NUM_TASKS)
    noise_b = ETA if noise is None else noise.expand(*batch, 2, NUM_TASKS)
    for index in np.ndindex(*batch):
        level = ETA if noise is None else _np(noise_b[index])
        rows = scalar_rows(_np(X_b[index]), _np(Y_b[index]), noise=level)
        assert_matches(posterior, index, case, joined(core_rows(case), rows), test_X)
    assert torch.equal(model.posterior(test_X).mean, before)  # self is unchanged
    assert model.batch_shape == torch.Size([])


@pytest.mark.parametrize("kind", KINDS)
def test_task_indexed_rows_other_kind_and_chained_conditioning(kind, dtype):
    """Rows of the other kind (task-indexed rows for a full-vector model and the
    reverse), batched task-indexed rows, then a second conditioning on top."""
    case = build_case("sum", dtype, task_indexed=kind == "indexed")
    model = case.build()
    X1, Y1 = _rand(2, 3, 2, seed=5, dtype=dtype), _randn(3, 1, seed=6, dtype=dtype)
    tasks1 = torch.tensor([2, 0, 2])
    first = model.condition_on_observations(X1, Y1, train_tasks=tasks1)  # batch 2 over X
    X2, Y2 = _rand(1, 2, seed=7, dtype=dtype), _randn(3, 1, 1, NUM_TASKS, seed=8, dtype=dtype)
    noise2 = torch.tensor([[0.05, 0.2, 0.5]], dtype=dtype)
    second = first.condition_on_observations(X2, Y2, noise=noise2)
    assert first.batch_shape == (2,) and second.batch_shape == (3, 2)
    test_X = _rand(2, 2, seed=9, dtype=dtype)
    p_first, p_second = first.posterior(test_X), second.posterior(test_X)
    for b in range(2):
        rows1 = scalar_rows(_np(X1[b]), _np(Y1), tasks1.numpy())
        assert_matches(p_first, (b,), case, joined(core_rows(case), rows1), test_X)
        for f in range(3):
            rows2 = scalar_rows(_np(X2), _np(Y2[f, 0]), noise=_np(noise2))
            observations = joined(core_rows(case), rows1, rows2)
            assert_matches(p_second, (f, b), case, observations, test_X)
    # unbatched rows of the other kind: honoured exactly, an unbatched conditioned model
    other_tasks = None if kind == "indexed" else torch.tensor([1])
    Y_other = _randn(1, NUM_TASKS if kind == "indexed" else 1, seed=10, dtype=dtype)
    other = model.condition_on_observations(X2, Y_other, train_tasks=other_tasks)
    assert other.batch_shape == torch.Size([])
    rows = scalar_rows(_np(X2), _np(Y_other), None if other_tasks is None else [1])
    assert_matches(other.posterior(test_X), (), case, joined(core_rows(case), rows), test_X)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_unbatched_rows_with_the_model_noise_keep_the_fast_update(name, kind):
    """noise omitted or equal to lambda: the O(t^2) in-place update of a copy, the same
    numbers as append_observations; another noise: conditioning, as the dense formula."""
    case = build_case(name, F64, task_indexed=kind == "indexed", num_rows=7)
    indexed = case.train_tasks is not None
    head, tail = (case.train_tasks[:5], case.train_tasks[5:]) if indexed else (None, None)
    X0, Y0, X, Y = case.train_X[:5], case.train_Y[:5], case.train_X[5:], case.train_Y[5:]
    model, appended = case.build(X=X0, Y=Y0, tasks=head), case.build(X=X0, Y=Y0, tasks=head)
    appended.append_observations(X, Y, train_tasks=tail)
    test_X = _rand(3, 2, seed=1)
    expected = appended.posterior(test_X)
    for noise in (None, torch.full(Y.shape, ETA, dtype=F64)):
        fast = model.condition_on_observations(X, Y, noise=noise, train_tasks=tail)
        assert fast._conditioning is None and fast.num_observations == appended.num_observations
        got = fast.posterior(test_X)
        assert torch.equal(got.mean, expected.mean)  # bit-identical
        assert torch.equal(got.variance, expected.variance)
    slow = model.condition_on_observations(
        X, Y, noise=torch.full(Y.shape, 0.02, dtype=F64), train_tasks=tail
    )
    assert slow._conditioning is not None and slow.num_observations == model.num_observations
    rows = scalar_rows(_np(X), _np(Y), case.tasks_numpy(tail), noise=0.02)
    first = scalar_rows(_np(X0), _np(Y0), case.tasks_numpy(head))
    assert_matches(slow.posterior(test_X), (), case, joined(first, rows), test_X)


# -------------------------------------------------------------- fantasies
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "independent"))
def test_fantasize_matches_dense_posterior_of_the_sampled_values(name, kind, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    model = case.build()
    X = _rand(2, 2, 2, seed=11, dtype=dtype)  # batch 2, n' = 2
    sampler = SobolQMCNormalSampler(torch.Size([3]), seed=0)
    fantasy = model.fantasize(X, sampler)
    assert isinstance(fantasy, VectorValuedGP) and fantasy.batch_shape == (3, 2)
    # the same base samples: the fantasized values
    Y = sampler(model.posterior(X, observation_noise=True))  # 3 x 2 x 2 x n
    test_X = _rand(2, 2, seed=12, dtype=dtype)
    posterior = fantasy.posterior(test_X)
    tol = tolerances(dtype) if dtype == F64 else {"rtol": 2e-3, "atol": 2e-3}
    for f, b in np.ndindex(3, 2):
        rows = scalar_rows(_np(X[b]), _np(Y[f, b]))
        assert_matches(posterior, (f, b), case, joined(core_rows(case), rows), test_X, tol)
    # a given observation noise is used for the samples and the conditioning
    noise = torch.tensor([[0.3, 0.01, 0.05]], dtype=dtype)
    noisy = model.fantasize(X, SobolQMCNormalSampler(torch.Size([2]), seed=1), noise)
    variance = noisy.posterior(test_X).variance[0, 0]
    rows = scalar_rows(_np(X[0]), np.zeros((2, NUM_TASKS)), noise=_np(noise))
    _, covariance = dense_posterior(case.oracle, *joined(core_rows(case), rows), _np(test_X))
    np.testing.assert_allclose(_np(variance).reshape(-1), np.diag(covariance), **tol)
    with pytest.raises(DeprecationError):
        model.fantasize(X, sampler, observation_noise=True)


def test_fantasize_without_points_and_nested_fantasies():
    case = build_case("icm", F64)
    model = case.build()
    sampler = SobolQMCNormalSampler(torch.Size([2]))
    empty = model.fantasize(torch.zeros(3, 0, 2, dtype=F64), sampler)
    assert empty.batch_shape == (2, 3)
    test_X = _rand(2, 2, seed=1)
    expected = model.posterior(test_X)
    got = empty.posterior(test_X)
    assert got.mean.shape == (2, 3, 2, NUM_TASKS)
    torch.testing.assert_close(got.mean, expected.mean.expand_as(got.mean))
    # a fantasy of a fantasy (with gradients through the first): 2 x 2 x 3 models
    X = _rand(3, 1, 2, seed=2).requires_grad_(True)
    first = model.fantasize(X, sampler)
    second = first.fantasize(_rand(1, 2, seed=3), SobolQMCNormalSampler(torch.Size([2])))
    assert second.batch_shape == (2, 2, 3)
    second.posterior(test_X).mean.sum().backward()
    assert X.grad is not None and torch.isfinite(X.grad).all()


def test_fantasy_posterior_is_differentiable_in_the_fantasy_points():
    """d/dX of a fantasy model's posterior at fixed base samples, against central
    differences (optimize_acqf of qKG follows this gradient)."""
    case = build_case("sum", F64)
    model = case.build()
    sampler = SobolQMCNormalSampler(torch.Size([4]), seed=3)
    test_X = _rand(2, 2, seed=4)
    weights = torch.tensor([0.5, -1.0, 2.0], dtype=F64)

    def value(X):
        posterior = model.fantasize(X, sampler).posterior(test_X)
        return (posterior.mean @ weights).sum() + posterior.variance.sum()

    X = _rand(1, 2, 2, seed=5).requires_grad_(True)
    (gradient,) = torch.autograd.grad(value(X), X)
    step = 1e-6
    for index in ((0, 0, 0), (0, 1, 1)):
        shift = torch.zeros_like(X)
        shift[index] = step
        numeric = (value(X.detach() + shift) - value(X.detach() - shift)) / (2 * step)
        assert gradient[index].item() == pytest.approx(numeric.item(), rel=1e-5, abs=1e-8)


def test_q_negative_integrated_posterior_variance_and_optimize_acqf():
    case = build_case("icm", F64)
    model = case.build()
    weights = torch.tensor([1.0, -0.5, 0.25], dtype=F64)
    transform = ScalarizedPosteriorTransform(weights)
    mc_points = _rand(16, 2, seed=6)
    acqf = qNegIntegratedPosteriorVariance(model, mc_points, posterior_transform=transform)
    X = _rand(2, 2, seed=7)  # q = 2
    value = acqf(X.unsqueeze(0))
    # the dense formula: minus the average variance of w^T f after observing X with eta
    rows = scalar_rows(_np(X), np.zeros((2, NUM_TASKS)))
    _, covariance = dense_posterior(case.oracle, *joined(core_rows(case), rows), _np(mc_points))
    blocks = covariance.reshape(16, NUM_TASKS, 16, NUM_TASKS)[np.arange(16), :, np.arange(16)]
    expected = -np.mean(np.einsum("i,pij,j->p", _np(weights), blocks, _np(weights)))
    np.testing.assert_allclose(value.item(), expected, rtol=1e-9)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=F64)
    candidates, best = optimize_acqf(
        acqf, bounds, q=2, num_restarts=2, raw_samples=8, options={"maxiter": 10}
    )
    assert candidates.shape == (2, 2) and best.item() >= value.item() - 1e-9


def test_q_knowledge_gradient_value_and_optimize_acqf():
    case = build_case("sum", F64)
    model = case.build()
    weights = torch.tensor([1.0, 0.5, -0.3], dtype=F64)
    transform = ScalarizedPosteriorTransform(weights)
    acqf = qKnowledgeGradient(model, num_fantasies=4, posterior_transform=transform)
    X_actual, X_fantasies = _rand(1, 2, seed=8), _rand(4, 1, 2, seed=9)
    value = acqf(torch.cat([X_actual, X_fantasies.reshape(4, 2)]).unsqueeze(0))
    # the same fantasies through the dense formula: mean over f of w^T mu_f(X_fantasies[f])
    Y = acqf.sampler(model.posterior(X_actual, observation_noise=True))  # 4 x 1 x n
    values = []
    for f in range(4):
        rows = scalar_rows(_np(X_actual), _np(Y[f]))
        mean, _ = dense_posterior(case.oracle, *joined(core_rows(case), rows), _np(X_fantasies[f]))
        values.append(mean[0] @ _np(weights))
    np.testing.assert_allclose(value.item(), np.mean(values), rtol=1e-9)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=F64)
    candidates, best = optimize_acqf(
        acqf, bounds, q=1, num_restarts=2, raw_samples=8, options={"maxiter": 10}
    )
    assert candidates.shape == (1, 2) and torch.isfinite(best)
    assert (candidates >= 0).all() and (candidates <= 1).all()


# --------------------------------------------------------- subset, transform, to
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_subset_output_equals_output_indices_and_conditions_on_its_outputs(name, kind, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    model = case.build()
    sub = model.subset_output([2, 0])
    assert isinstance(sub, VectorValuedGP) and sub.num_outputs == 2 and sub.num_tasks == 3
    test_X = _rand(2, 3, 2, seed=13, dtype=dtype)
    got, expected = sub.posterior(test_X), model.posterior(test_X, output_indices=[2, 0])
    assert torch.equal(got.mean, expected.mean)
    assert torch.equal(got.distribution.covariance_matrix, expected.distribution.covariance_matrix)
    one = sub.subset_output([1])  # task 0
    assert one.num_outputs == 1 and one.posterior(test_X).mean.shape == (2, 3, 1)
    assert torch.equal(one.posterior(test_X).mean, model.posterior(test_X, output_indices=[0]).mean)
    # observations of the subset's outputs are observations of tasks 2 and 0
    X_new, Y_new = _rand(2, 2, seed=14, dtype=dtype), _randn(2, 2, seed=15, dtype=dtype)
    conditioned = sub.condition_on_observations(X_new, Y_new)
    rows = scalar_rows(_np(X_new), _np(Y_new), outputs=[2, 0])
    mean, covariance = dense_posterior(case.oracle, *joined(core_rows(case), rows), _np(test_X[0]))
    flat = (np.arange(3)[:, None] * NUM_TASKS + np.array([2, 0])).reshape(-1)
    tol = tolerances(dtype)
    p = conditioned.posterior(test_X[0])
    np.testing.assert_allclose(_np(p.mean), mean[:, [2, 0]], **tol)
    np.testing.assert_allclose(
        _np(p.distribution.covariance_matrix), covariance[np.ix_(flat, flat)], **tol
    )
    fantasy = sub.fantasize(test_X[:, :1], SobolQMCNormalSampler(torch.Size([3])))
    assert fantasy.batch_shape == (3, 2) and fantasy.posterior(test_X).mean.shape == (3, 2, 3, 2)
    # the full set in order is the model itself
    assert model.subset_output([0, 1, 2])._output_tasks is None
    with pytest.raises(UnsupportedError, match="subset_output"):
        sub.information_gain()
    with pytest.raises(UnsupportedError, match="subset_output"):
        sub.append_observations(X_new, Y_new)


def test_subset_output_bad_indices():
    model = build_case("icm", F64).build()
    for bad, error in (
        ([], ValueError),
        ([0, 0], ValueError),
        ([3], ValueError),
        ([-1], ValueError),
        (0, TypeError),
        ([0.5], TypeError),
    ):
        with pytest.raises(error, match="idcs"):
            model.subset_output(bad)


def test_posterior_transform_is_called_as_botorch_does():
    case = build_case("icm", F64)
    model = case.build().condition_on_observations(_rand(2, 1, 2, seed=1), _randn(2, 1, 3, seed=2))
    seen = {}

    class Record(PosteriorTransform):
        scalarize = True

        def evaluate(self, Y):  # pragma: no cover - not used
            return Y

        def forward(self, posterior, X=None):
            seen["X"] = X
            return posterior

    test_X = _rand(2, 4, 2, seed=3)
    model.posterior(test_X, posterior_transform=Record())
    assert torch.equal(seen["X"], test_X)
    weights = torch.tensor([0.2, -0.5, 1.5], dtype=F64)
    scalarized = model.posterior(test_X, posterior_transform=ScalarizedPosteriorTransform(weights))
    full = model.posterior(test_X)
    torch.testing.assert_close(scalarized.mean.squeeze(-1), full.mean @ weights)
    W = torch.kron(torch.eye(4, dtype=F64), weights.unsqueeze(-1))
    torch.testing.assert_close(
        scalarized.distribution.covariance_matrix, W.T @ full.distribution.covariance_matrix @ W
    )
    with pytest.raises(TypeError, match="unexpected keyword"):
        model.posterior(test_X, observation_noise_std=0.1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_to_float32_and_back_and_double(name, kind):
    case = build_case(name, F64, task_indexed=kind == "indexed")
    model = case.build().condition_on_observations(_rand(2, 1, 2, seed=1), _randn(2, 1, 3, seed=2))
    test_X = _rand(3, 2, seed=3)
    expected = model.posterior(test_X)
    single = model.to(torch.float32)
    assert single is model
    floating = [b for b in model.buffers() if b is not None and b.is_floating_point()]
    assert floating and all(b.dtype == torch.float32 for b in floating)
    assert model._factor.buffer.dtype == torch.float32
    got = model.posterior(test_X)
    assert got.mean.dtype == torch.float32
    tol = {"rtol": 1e-4, "atol": 1e-4}
    torch.testing.assert_close(got.mean.double(), expected.mean, **tol)
    torch.testing.assert_close(got.variance.double(), expected.variance, **tol)
    back = model.to(F64).posterior(test_X)
    assert back.mean.dtype == F64
    torch.testing.assert_close(back.mean, expected.mean, **tol)
    # a float32 model made double equals the float64 model up to float32 round-off
    built = build_case(name, torch.float32, task_indexed=kind == "indexed").build().double()
    torch.testing.assert_close(
        built.posterior(test_X).mean, case.build().posterior(test_X).mean, **tol
    )
    assert (
        built.append_observations(
            case.train_X[:1],
            case.train_Y[:1],
            train_tasks=case.train_tasks[:1] if case.train_tasks is not None else None,
        )
        is built
    )


# ------------------------------------------------------------------ bad input
def test_conditioning_bad_input_and_unsupported_calls():
    model = build_case("icm", F64).build()
    X = _rand(2, 1, 2, seed=1)
    with pytest.raises(ValueError, match="same number of rows"):
        model.condition_on_observations(X, torch.zeros(2, 2, 3, dtype=F64))
    with pytest.raises(ValueError, match="must broadcast"):
        model.condition_on_observations(X, torch.zeros(3, 1, 3, dtype=F64))
    with pytest.raises(ValueError, match="one column per output"):
        model.condition_on_observations(X, torch.zeros(2, 1, 2, dtype=F64))
    with pytest.raises(ValueError, match="noise must hold variances >= 0"):
        model.condition_on_observations(X, torch.zeros(2, 1, 3, dtype=F64), noise=-torch.ones(1))
    with pytest.raises(ValueError, match="noise must broadcast"):
        model.condition_on_observations(X, torch.zeros(2, 1, 3, dtype=F64), noise=torch.ones(2))
    with pytest.raises(TypeError, match="noise must be a tensor"):
        model.condition_on_observations(X, torch.zeros(2, 1, 3, dtype=F64), noise=0.1)
    with pytest.raises(ValueError, match="Y contains NaN|Y must be finite"):
        model.condition_on_observations(X, torch.full((2, 1, 3), float("nan"), dtype=F64))
    with pytest.raises(ValueError, match=r"train_tasks must lie in \[0, 2\]"):
        model.condition_on_observations(
            X, torch.zeros(2, 1, 1, dtype=F64), train_tasks=torch.tensor([3])
        )
    with pytest.raises(ValueError, match="X is outside the range"):
        model.condition_on_observations(1e300 * _rand(1, 2, 2), torch.zeros(1, 2, 3, dtype=F64))
    with pytest.raises(TypeError, match="only the unbatched update"):
        model.condition_on_observations(X, torch.zeros(2, 1, 3, dtype=F64), generator=None)
    conditioned = model.condition_on_observations(X, torch.zeros(2, 1, 3, dtype=F64))
    with pytest.raises(ValueError, match="broadcast with the model's batch_shape"):
        conditioned.condition_on_observations(_rand(3, 1, 2), torch.zeros(3, 1, 3, dtype=F64))
    with pytest.raises(ValueError, match="broadcast with the model's batch_shape"):
        conditioned.posterior(_rand(3, 1, 2))
    # rows that carry a gradient are not detached by the in-place update
    x = _rand(1, 2).requires_grad_(True)
    moved = model.condition_on_observations(x, torch.zeros(1, 3, dtype=F64))
    assert moved._conditioning is not None
    moved.posterior(_rand(2, 2)).mean.sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    subset = model.subset_output([0, 2])
    for call in (
        subset.information_gain,
        lambda: subset.append_observations(X[0], torch.zeros(1, 3, dtype=F64)),
        lambda: subset.track_candidates(X[0]),
    ):
        with pytest.raises(UnsupportedError, match="subset_output"):
            call()


def _information_gain(oracle, obs_X, obs_tasks, obs_y, obs_noise):
    """``1/2 log det(I + S^{-1/2} G S^{-1/2})`` of scalar observations with noise ``S``."""
    G = oracle.observation_gram(obs_X, obs_tasks, obs_X, obs_tasks)
    root = 1.0 / np.sqrt(obs_noise)
    return 0.5 * np.linalg.slogdet(np.eye(len(obs_y)) + root[:, None] * G * root)[1]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_a_conditioned_model_keeps_append_information_gain_and_tracking(name, kind):
    """Either route of condition_on_observations gives a model with the same abilities:
    rows appended to a conditioned model join its own data (still conditioned on the
    batched observations), its information gain adds theirs (the chain rule), and it
    tracks candidates; all against the dense posterior of every observation."""
    case = build_case(name, F64, task_indexed=kind == "indexed")
    model = case.build()
    X_c, Y_c = _rand(2, 2, 2, seed=1), _randn(2, 2, NUM_TASKS, seed=2)
    noise_c = 0.02 + 0.2 * _rand(2, 2, NUM_TASKS, seed=3)
    conditioned = model.condition_on_observations(X_c, Y_c, noise=noise_c)
    candidates = _rand(5, 2, seed=4)
    assert conditioned.track_candidates(candidates) and conditioned.tracks_candidates
    if kind == "full":
        X_a, Y_a, tasks_a = candidates[[1, 3]], _randn(2, NUM_TASKS, seed=5), None
    else:
        X_a, Y_a, tasks_a = candidates[[1, 3]], _randn(2, 1, seed=5), torch.tensor([2, 0])
    assert conditioned.append_observations(X_a, Y_a, train_tasks=tasks_a) is conditioned
    assert conditioned.batch_shape == (2,) and conditioned.num_observations == (
        model.num_observations + Y_a.numel()
    )
    test_X = {"plain": _rand(3, 2, seed=6), "tracked": candidates[:, None, None, :]}
    appended = scalar_rows(_np(X_a), _np(Y_a), None if tasks_a is None else tasks_a.numpy())
    own = joined(core_rows(case), appended)
    gain = conditioned.information_gain()
    assert gain.shape == (2,)
    for b in range(2):
        rows = scalar_rows(_np(X_c[b]), _np(Y_c[b]), noise=_np(noise_c[b]))
        everything = joined(own, rows)
        posterior = conditioned.posterior(test_X["plain"])
        assert_matches(posterior, (b,), case, everything, test_X["plain"])
        for p in range(5):  # b x 1 x d queries at the candidates
            posterior = conditioned.posterior(test_X["tracked"][p])
            assert_matches(posterior, (b,), case, everything, test_X["tracked"][p][0])
        np.testing.assert_allclose(float(gain[b]), _information_gain(case.oracle, *everything))
    np.testing.assert_allclose(
        float(model.information_gain()), _information_gain(case.oracle, *core_rows(case))
    )
