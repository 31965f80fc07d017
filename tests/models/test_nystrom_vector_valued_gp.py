"""NystromVectorValuedGP against dense NumPy transcriptions of paper 000, Section 3.2 /
Algorithm 2 (sketch, dictionary sampling) and against VectorValuedGP (full dictionary)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from cases import CASES, ETA, ICM_CASES, NUM_TASKS, build_case, tolerances
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from gpytorch.kernels import RBFKernel
from nystrom_cases import _moments, _np, _sketch, _test_points
from oracles import dense_sketch, make_rbf

from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP
from botorch_mtucb.models.nystrom_sketch import PSEUDO_INVERSE_RTOL

KINDS = ("full", "indexed")
EVERYTHING = 1e12  # an accuracy q for which every inclusion probability is 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_full_dictionary_equals_exact_posterior(name, kind, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=7)
    exact = case.build()
    model = _sketch(case, accuracy=EVERYTHING)
    assert model.uses_eigen_route == (kind == "full" and name in ICM_CASES)
    assert model.dictionary_size == 7 and model.num_outputs == NUM_TASKS
    assert torch.all(model.inclusion_probabilities == 1)
    tol = tolerances(dtype)  # 1e-7 in float64
    for X in (_test_points(dtype), case.train_X):
        mean, covariance = _moments(model, X)
        exact_mean, exact_covariance = _moments(exact, X)
        assert model.posterior(X).mean.dtype == dtype
        np.testing.assert_allclose(mean, exact_mean, **tol)
        np.testing.assert_allclose(covariance, exact_covariance, **tol)
    # with Gamma~ = Gamma_{t-1}, the sum of log-dets is Theorem 2's (Lemma 4)
    expected = case.oracle.sequential_log_det_sum(
        _np(case.train_X), _np(case.train_Y), case.tasks_numpy()
    )
    np.testing.assert_allclose(float(model.sketched_log_det_sum), expected, **tol)
    np.testing.assert_allclose(
        float(model.sketched_log_det_sum), 2 * float(exact.information_gain()), **tol
    )


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # sqrtm of singular G~
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "uniform_0", "sum", "independent"))
def test_partial_dictionary_matches_dense_sketch(name, kind, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=24, seed=4)
    model = _sketch(case, accuracy=1.0, seed=3)
    m = model.dictionary_size
    assert 0 < m < 24  # a genuine sketch
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
        rtol=PSEUDO_INVERSE_RTOL[dtype],  # float32 keeps fewer directions
    )
    # float32: the embedding amplifies round-off by 1 / sqrt(smallest kept eigenvalue)
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float64 else {"rtol": 3e-2, "atol": 3e-2}
    np.testing.assert_allclose(mean, expected_mean, **tol)
    np.testing.assert_allclose(covariance, expected_covariance, **tol)
    # ... and it is not the exact posterior (the check is not vacuous)
    exact_mean, exact_covariance = _moments(case.build(), X)
    difference = max(np.abs(mean - exact_mean).max(), np.abs(covariance - exact_covariance).max())
    assert difference > 1e-3


@pytest.mark.parametrize("kind", KINDS)
def test_inclusion_probabilities_follow_algorithm_2(kind):
    """p_{t,i} = min(q ||Gamma~_{t-1}(x_i, x_i)||, 1) with the previous sketch, and
    row i is drawn with that frequency."""
    case = build_case("icm", torch.float64, task_indexed=kind == "indexed", num_rows=12, seed=2)
    q = 2.0
    tasks = case.train_tasks

    def sub(a, b):
        return None if tasks is None else tasks[a:b]

    previous = _sketch(
        case, X=case.train_X[:11], Y=case.train_Y[:11], tasks=sub(0, 11), accuracy=q, chunk_size=1
    )
    current = _sketch(case, accuracy=q, chunk_size=1)  # the same first 10 draws, then one more
    # norms under the previous sketch, from its dense posterior at every row
    posterior = previous.posterior(case.train_X.unsqueeze(-2))
    blocks = _np(posterior.distribution.covariance_matrix)  # 12 x n x n
    if tasks is None:
        norms = np.linalg.eigvalsh(blocks)[:, -1]
    else:
        norms = blocks[np.arange(12), tasks.numpy(), tasks.numpy()]
    expected = np.minimum(q * norms, 1.0)
    inside = (expected > 0.02) & (expected < 0.98)
    assert inside.sum() >= 6  # most probabilities strictly inside (0, 1)
    np.testing.assert_allclose(
        _np(current.inclusion_probabilities), expected[current.dictionary.numpy()], rtol=1e-9
    )
    # frequencies over independent draws from the previous sketch
    draws, counts = 400, np.zeros(12)
    for k in range(draws):
        generator = torch.Generator().manual_seed(1000 + k)
        updated = previous.condition_on_observations(
            case.train_X[11:], case.train_Y[11:], train_tasks=sub(11, 12), generator=generator
        )
        counts[updated.dictionary.numpy()] += 1
    frequency = counts / draws
    bound = 5 * np.sqrt(expected * (1 - expected) / draws) + 1e-9
    assert np.all(np.abs(frequency - expected) <= bound), (frequency, expected)
    assert previous.train_X.shape[0] == 11  # condition_on_observations left it alone


def test_dictionary_is_never_empty():
    case = build_case("icm", torch.float64, num_rows=6)
    tiny = 1e-9 * case.task_covariances[0]  # every variance ~ 1e-9: p ~ 1e-9
    model = NystromVectorValuedGP(
        case.train_X, case.train_Y, case.kernels[0], tiny, ETA, chunk_size=1
    )
    assert model.dictionary_size == 1
    assert model.inclusion_probabilities.item() < 1e-6
    # the kept row is the most informative one of the last draw's probabilities
    rebuilt = NystromVectorValuedGP(
        case.train_X[:5], case.train_Y[:5], case.kernels[0], tiny, ETA, chunk_size=1
    ).posterior(case.train_X.unsqueeze(-2))
    norms = np.linalg.eigvalsh(_np(rebuilt.distribution.covariance_matrix))[:, -1]
    assert model.dictionary.item() == int(np.argmax(norms))


@pytest.mark.parametrize("name", ("icm", "uniform_0.4", "icm_rank_deficient"))
def test_eigen_route_equals_general_route(name, dtype):
    """Appendix A's eqs. (7)-(8) equal the general sketch for the same dictionary; the
    general route is forced by writing k B as k B/2 + k B/2."""
    case = build_case(name, dtype, num_rows=15, seed=6)
    B = case.task_covariances[0]
    B = B if isinstance(B, torch.Tensor) else B.covar_matrix.to_dense().detach()
    kernel = case.kernels[0]
    icm = NystromVectorValuedGP(case.train_X, case.train_Y, kernel, B, ETA, accuracy=1.5, seed=2)
    general = NystromVectorValuedGP(
        case.train_X, case.train_Y, [kernel, kernel], [B / 2, B / 2], ETA, accuracy=1.5, seed=2
    )
    assert icm.uses_eigen_route and not general.uses_eigen_route
    assert torch.equal(icm.dictionary, general.dictionary) and icm.dictionary_size < 15
    tol = tolerances(dtype)
    X = _test_points(dtype)
    for got, expected in zip(_moments(icm, X), _moments(general, X)):
        np.testing.assert_allclose(got, expected, **tol)
    np.testing.assert_allclose(_np(icm.train_variances), _np(general.train_variances), **tol)
    np.testing.assert_allclose(
        float(icm.sketched_log_det_sum), float(general.sketched_log_det_sum), **tol
    )


def test_accuracy_100_on_2000_points_is_small_and_within_theorem_3():
    """q = 100 on 2000 points (SE lengthscale 0.2, 1-d, 3 tasks): a dictionary below 10%
    of the points and Gamma_t / 3 <= Gamma~_t <= 3 Gamma_t (rho = 3, eps = 0.5) at every
    candidate (generalized eigenvalues)."""
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(2000, 1, generator=generator, dtype=torch.float64)
    A = torch.rand(3, 3, generator=generator, dtype=torch.float64)
    B = A.T @ A
    Y = torch.sin(6 * X) @ torch.ones(1, 3, dtype=torch.float64)
    Y = Y + 0.1 * torch.randn(2000, 3, generator=generator, dtype=torch.float64)
    kernel = make_rbf([0.2])
    sketch = NystromVectorValuedGP(X, Y, kernel, B, ETA, accuracy=100.0, seed=0)  # adaptive
    assert sketch.num_resamplings < 80  # O(log N) redraws, not 2000
    exact = VectorValuedGP(X, Y, kernel, B, ETA)
    assert sketch.uses_eigen_route
    assert 1 <= sketch.dictionary_size < 200, sketch.dictionary_size
    candidates = torch.linspace(0, 1, 101, dtype=torch.float64).reshape(101, 1, 1)
    sketched = sketch.posterior(candidates).distribution.covariance_matrix  # 101 x 3 x 3
    exact_cov = exact.posterior(candidates).distribution.covariance_matrix
    L = torch.linalg.cholesky(exact_cov)
    inner = torch.linalg.solve_triangular(L, sketched, upper=False)
    ratio = torch.linalg.solve_triangular(L, inner.transpose(-1, -2), upper=False)
    eigenvalues = torch.linalg.eigvalsh(0.5 * (ratio + ratio.transpose(-1, -2)))
    assert eigenvalues.min() >= 1 / 3 and eigenvalues.max() <= 3, (
        eigenvalues.min(),
        eigenvalues.max(),
    )


def test_icm_state_is_linear_in_t():
    """No t x t matrix in the ICM route's state: per-step cost linear in t."""
    case = build_case("icm", torch.float64, num_rows=40, seed=1)
    model = _sketch(case, accuracy=1.0)
    assert model.uses_eigen_route
    for name, buffer in model.named_buffers():
        if buffer is not None:
            assert sum(size == 40 for size in buffer.shape) <= 1, (name, buffer.shape)


@pytest.mark.parametrize("kind", KINDS)
def test_prior_condition_and_append(kind, dtype):
    case = build_case("sum", dtype, task_indexed=kind == "indexed", num_rows=6)
    empty_tasks = None if kind == "full" else case.train_tasks[:0]
    model = _sketch(case, X=case.train_X[:0], Y=case.train_Y[:0], tasks=empty_tasks)
    assert model.dictionary_size == 0 and model.embedding_dimension == 0
    X = _test_points(dtype, q=2)
    mean, covariance = _moments(model, X)
    assert np.all(mean == 0)
    _, prior = case.oracle.posterior(_np(case.train_X[:0]), _np(case.train_Y[:0]), _np(X))
    np.testing.assert_allclose(covariance, prior, **tolerances(dtype))
    tasks = case.train_tasks
    conditioned = model.condition_on_observations(
        case.train_X, case.train_Y, train_tasks=tasks, generator=torch.Generator().manual_seed(1)
    )
    assert model.train_X.shape[0] == 0 and conditioned.train_X.shape[0] == 6
    assert conditioned.num_resamplings == 1 and 1 <= conditioned.dictionary_size <= 6


@pytest.mark.parametrize("batch", ((), (2,), (2, 3)), ids=str)
def test_batch_shapes_output_indices_and_noise(batch):
    case = build_case("icm", torch.float64, num_rows=9)
    model = _sketch(case, accuracy=1.5)
    generator = torch.Generator().manual_seed(3)
    X = torch.rand(*batch, 2, 2, generator=generator, dtype=torch.float64)
    posterior = model.posterior(X)
    assert isinstance(posterior.distribution, MultitaskMultivariateNormal)
    assert posterior.mean.shape == (*batch, 2, NUM_TASKS)
    covariance = posterior.distribution.covariance_matrix
    for index in np.ndindex(*batch):
        single = model.posterior(X[index])
        np.testing.assert_allclose(
            _np(covariance[index]), _np(single.distribution.covariance_matrix), atol=1e-12
        )
    one = model.posterior(X, output_indices=[1])
    assert isinstance(one.distribution, MultivariateNormal)
    np.testing.assert_allclose(_np(one.mean), _np(posterior.mean[..., 1:2]), atol=1e-12)
    noisy = model.posterior(X, observation_noise=True)
    np.testing.assert_allclose(
        _np(noisy.variance), _np(posterior.variance) + ETA, rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"accuracy": 0.5}, ValueError, "accuracy"),
        ({"accuracy": float("nan")}, ValueError, "accuracy"),
        ({"accuracy": "many"}, TypeError, "accuracy"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"chunk_size": 0}, ValueError, "chunk_size"),
        ({"chunk_size": -3}, ValueError, "chunk_size"),
        ({"chunk_size": "fast"}, ValueError, "chunk_size must be an int >= 1 or 'adaptive'"),
        ({"chunk_size": 2.0}, TypeError, "chunk_size"),
        ({"chunk_size": None}, TypeError, "chunk_size"),
        ({"chunk_size": True}, TypeError, "chunk_size"),
        ({"regularization": 0.0}, ValueError, "regularization"),
    ],
)
def test_bad_constructor_input(kwargs, error, match):
    case = build_case("icm", torch.float64)
    arguments = {
        "train_X": case.train_X,
        "train_Y": case.train_Y,
        "data_kernel": case.kernels[0],
        "task_covariance": case.task_covariances[0],
        "regularization": ETA,
    }
    arguments.update(kwargs)
    with pytest.raises(error, match=match):
        NystromVectorValuedGP(**arguments)


def test_bad_data_and_update_input():
    case = build_case("icm", torch.float64)
    kernel, B = case.kernels[0], case.task_covariances[0]
    with pytest.raises(ValueError, match="same number of rows"):
        NystromVectorValuedGP(case.train_X, case.train_Y[:3], kernel, B, ETA)
    with pytest.raises(ValueError, match="N x 3"):
        NystromVectorValuedGP(case.train_X, case.train_Y[:, :2], kernel, B, ETA)
    model = NystromVectorValuedGP(case.train_X, case.train_Y, kernel, B, ETA)
    with pytest.raises(ValueError, match="NaN"):
        model.posterior(torch.full((2, 2), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="batch x q x 2"):
        model.posterior(torch.zeros(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="train_tasks must be None"):
        model.append_observations(case.train_X[:1], case.train_Y[:1], train_tasks=torch.tensor([0]))
    with pytest.raises(ValueError, match="output_indices"):
        model.posterior(case.train_X, output_indices=[3])


@pytest.mark.parametrize("icm", [True, False])
def test_posterior_is_differentiable_in_X(icm):
    # optimize_acqf on a box needs gradients through the sketched posterior.
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(12, 2, generator=generator, dtype=torch.float64)
    Y = torch.randn(12, 2, generator=generator, dtype=torch.float64)
    kernel = RBFKernel().double()
    kernel.lengthscale = 0.4
    B = torch.tensor([[1.0, 0.3], [0.3, 0.5]], dtype=torch.float64)
    if icm:
        model = NystromVectorValuedGP(X, Y, kernel, B, 0.1, accuracy=5.0)
    else:
        model = NystromVectorValuedGP(X, Y, [kernel, kernel], [B, torch.eye(2).double()], 0.1)
    x = torch.rand(3, 1, 2, generator=generator, dtype=torch.float64, requires_grad=True)

    def value(points):
        posterior = model.posterior(points)
        return posterior.mean.sum() + posterior.distribution.covariance_matrix.sum()

    (gradient,) = torch.autograd.grad(value(x), x)
    step = 1e-6
    for index in [(0, 0, 0), (2, 0, 1)]:
        shift = torch.zeros_like(x)
        shift[index] = step
        numeric = (value(x.detach() + shift) - value(x.detach() - shift)) / (2 * step)
        assert gradient[index].item() == pytest.approx(numeric.item(), rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("task_indexed", [False, True])
def test_empty_query_points(task_indexed, dtype):
    """q = 0 (and an empty batch) raise a ValueError about X, not a reshape error."""
    case = build_case("icm", dtype, task_indexed=task_indexed)
    model = NystromVectorValuedGP(
        case.train_X,
        case.train_Y,
        case.kernels[0],
        case.task_covariances[0],
        ETA,
        train_tasks=case.train_tasks,
    )
    for X in (torch.rand(0, 2, dtype=dtype), torch.rand(4, 0, 2, dtype=dtype)):
        with pytest.raises(ValueError, match=r"^X must hold q >= 1 points"):
            model.posterior(X)
    with pytest.raises(ValueError, match=r"^X must not have an empty batch dimension"):
        model.posterior(torch.rand(0, 1, 2, dtype=dtype))
    assert model.posterior(torch.rand(1, 2, dtype=dtype)).mean.shape[-2] == 1  # q = 1 works


# --------------------------------------------- unclear inputs (issue 11): clear errors
def test_boolean_accuracy_is_refused():
    # accuracy=True used to be read as q = 1.0.
    case = build_case("icm", torch.float64)
    with pytest.raises(TypeError, match=r"accuracy must be a real number .* got True \(bool\)"):
        NystromVectorValuedGP(
            case.train_X,
            case.train_Y,
            case.kernels[0],
            case.task_covariances[0],
            ETA,
            accuracy=True,
        )


@pytest.mark.parametrize("half", (torch.float16, torch.bfloat16), ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_half_precision_data_is_refused(kind, half):
    # Used to fail deep inside torch: "linalg_eigh_cpu" not implemented for 'Half'.
    case = build_case("icm", torch.float64, task_indexed=kind == "indexed")
    with pytest.raises(TypeError, match=rf"train_X must be float32 or float64, got {half}"):
        _sketch(case, X=case.train_X.to(half))
    with pytest.raises(TypeError, match=rf"train_Y must be float32 or float64, got {half}"):
        _sketch(case, Y=case.train_Y.to(half))


@pytest.mark.parametrize("chunk_size", (1, 4, "adaptive"))
@pytest.mark.parametrize("name", ("icm", "sum"))
@pytest.mark.parametrize("kind", KINDS)
def test_inputs_that_overflow_the_kernel_are_refused(kind, name, chunk_size):
    # 1e300 * X used to raise linear_operator's NanError from psd_safe_cholesky.
    case = build_case(name, torch.float64, task_indexed=kind == "indexed")
    with pytest.raises(ValueError, match=r"^train_X is outside the range where the kernel is"):
        _sketch(case, X=1e300 * case.train_X, chunk_size=chunk_size)
    model = _sketch(case, accuracy=EVERYTHING, chunk_size=chunk_size)
    before = model.posterior(case.train_X).mean
    tasks = None if case.train_tasks is None else case.train_tasks[:4]
    with pytest.raises(ValueError, match=r"^X is outside the range where the kernel is finite"):
        model.append_observations(1e300 * case.train_X[:4], case.train_Y[:4], train_tasks=tasks)
    assert model.train_X.shape[0] == case.train_X.shape[0]  # nothing was appended
    torch.testing.assert_close(model.posterior(case.train_X).mean, before, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"^X is outside the range where the kernel is finite"):
        model.posterior(1e300 * case.train_X)


# ------------------------------------ BoTorch model API: conditioning, fantasies
def _gaussian_conditioning(mean, covariance, q, index, values, noise):
    """Condition joint moments (test points first, then the observed points; interleaved
    ``a * n + i``) on observations ``values`` at positions ``q n + index``."""
    n = mean.shape[-1]
    flat, test = mean.reshape(-1), q * n
    obs = test + np.asarray(index)
    S = covariance[np.ix_(obs, obs)] + np.diag(noise)
    cross = covariance[np.ix_(np.arange(test), obs)]
    conditioned_mean = flat[:test] + cross @ np.linalg.solve(S, values - flat[obs])
    conditioned = covariance[:test, :test] - cross @ np.linalg.solve(S, cross.T)
    return conditioned_mean.reshape(q, n), conditioned


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # sqrtm of singular G~
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "sum"))
def test_batched_conditioning_conditions_the_sketched_posterior(name, kind, dtype):
    """Batched rows (and noise) keep the dictionary and condition the sketched GP
    (mu~_t, Gamma~_t) exactly: the dense sketch at test and new points, then the dense
    Gaussian conditioning."""
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=24, seed=4)
    model = _sketch(case, accuracy=1.0, seed=3)
    assert 0 < model.dictionary_size < 24
    generator = torch.Generator().manual_seed(8)
    X_new = torch.rand(2, 2, 2, generator=generator, dtype=torch.float64).to(dtype)
    Y_new = torch.randn(3, 1, 2, NUM_TASKS, generator=generator, dtype=torch.float64).to(dtype)
    noise = torch.tensor([[0.05, 0.1, 0.4]], dtype=dtype)
    conditioned = model.condition_on_observations(X_new, Y_new, noise=noise)
    assert isinstance(conditioned, NystromVectorValuedGP) and conditioned.batch_shape == (3, 2)
    assert torch.equal(conditioned.dictionary, model.dictionary)
    assert conditioned.num_resamplings == model.num_resamplings
    X = _test_points(dtype, q=2)
    posterior = conditioned.posterior(X)
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float64 else {"rtol": 3e-2, "atol": 3e-2}
    index = (np.arange(2)[:, None] * NUM_TASKS + np.arange(NUM_TASKS)).reshape(-1)
    for f, b in np.ndindex(3, 2):
        joint = np.concatenate([_np(X), _np(X_new[b])])
        mean, covariance = dense_sketch(
            case.oracle,
            _np(case.train_X),
            _np(case.train_Y),
            case.tasks_numpy(),
            model.dictionary.numpy(),
            _np(model.inclusion_probabilities),
            joint,
            rtol=PSEUDO_INVERSE_RTOL[dtype],
        )
        values, levels = _np(Y_new[f, 0]).reshape(-1), np.tile(_np(noise)[0], 2)
        expected = _gaussian_conditioning(mean, covariance, 2, index, values, levels)
        np.testing.assert_allclose(_np(posterior.mean[f, b]), expected[0], **tol)
        np.testing.assert_allclose(
            _np(posterior.distribution.covariance_matrix[f, b]), expected[1], **tol
        )


def test_dictionary_redraw_choice_and_errors():
    case = build_case("icm", torch.float64, num_rows=10)
    model = _sketch(case, accuracy=2.0)
    X, Y = case.train_X[:2], case.train_Y[:2]
    redrawn = model.condition_on_observations(X, Y)  # Algorithm 2
    assert redrawn.num_resamplings == model.num_resamplings + 1 and redrawn.batch_shape == ()
    kept = model.condition_on_observations(X, Y, resample_dictionary=False)
    assert kept.num_resamplings == model.num_resamplings and torch.equal(
        kept.dictionary, model.dictionary
    )
    assert kept.train_X.shape[0] == 10  # the sketch's own rows
    with pytest.raises(UnsupportedError, match="resample_dictionary=False"):
        model.condition_on_observations(X.unsqueeze(0), Y.unsqueeze(0), resample_dictionary=True)
    with pytest.raises(UnsupportedError, match="resample_dictionary=False"):
        model.condition_on_observations(
            X, Y, noise=torch.full_like(Y, 0.5), resample_dictionary=True
        )
    with pytest.raises(ValueError, match="generator is used only"):
        model.condition_on_observations(
            X.unsqueeze(0), Y.unsqueeze(0), generator=torch.Generator().manual_seed(0)
        )
    # a conditioned sketch keeps append_observations: its own rows grow (one redraw,
    # the same draw as the unconditioned model's), the observations it was conditioned
    # on stay
    expected = copy.deepcopy(model).append_observations(X, Y)
    expected = expected.condition_on_observations(X, Y, resample_dictionary=False)
    assert kept.append_observations(X, Y) is kept and kept.train_X.shape[0] == 12
    assert torch.equal(kept.dictionary, expected.dictionary)
    test_X = _test_points(torch.float64, q=3)
    torch.testing.assert_close(kept.posterior(test_X).mean, expected.posterior(test_X).mean)
    torch.testing.assert_close(
        kept.posterior(test_X).distribution.covariance_matrix,
        expected.posterior(test_X).distribution.covariance_matrix,
    )


def test_fantasies_subset_output_knowledge_gradient_and_to():
    from botorch.acquisition import qKnowledgeGradient, qNegIntegratedPosteriorVariance
    from botorch.acquisition.objective import ScalarizedPosteriorTransform
    from botorch.optim import optimize_acqf
    from botorch.sampling import SobolQMCNormalSampler

    case = build_case("sum", torch.float64, num_rows=12, seed=2)
    model = _sketch(case, accuracy=1.5)
    X = _test_points(torch.float64, q=3)
    sub = model.subset_output([1])
    assert sub.num_outputs == 1
    assert torch.equal(sub.posterior(X).mean, model.posterior(X, output_indices=[1]).mean)
    fantasy = model.fantasize(X[:2].unsqueeze(0), SobolQMCNormalSampler(torch.Size([4])))
    assert fantasy.batch_shape == (4, 1) and fantasy.posterior(X).mean.shape == (4, 1, 3, 3)
    # the fantasies' variance is that of the sketched GP conditioned on X[:2] with eta
    noisy = model.posterior(torch.cat([X, X[:2]]), observation_noise=False)
    covariance = _np(noisy.distribution.covariance_matrix)
    index = np.arange(2 * NUM_TASKS)
    expected = _gaussian_conditioning(
        _np(noisy.mean), covariance, 3, index, _np(noisy.mean[3:]).reshape(-1), np.full(6, ETA)
    )
    np.testing.assert_allclose(
        _np(fantasy.posterior(X).distribution.covariance_matrix[0, 0]), expected[1], atol=1e-10
    )
    transform = ScalarizedPosteriorTransform(torch.tensor([1.0, -0.5, 0.2], dtype=torch.float64))
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    for acqf in (
        qKnowledgeGradient(model, num_fantasies=4, posterior_transform=transform),
        qNegIntegratedPosteriorVariance(model, X, posterior_transform=transform),
    ):
        candidate, value = optimize_acqf(
            acqf, bounds, q=1, num_restarts=2, raw_samples=6, options={"maxiter": 5}
        )
        assert candidate.shape == (1, 2) and torch.isfinite(value)
    before = model.posterior(X)
    model.to(torch.float32)
    assert all(
        b.dtype == torch.float32 for b in model.buffers() if b is not None and b.is_floating_point()
    )
    after = model.to(torch.float64).posterior(X)
    torch.testing.assert_close(after.mean, before.mean, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(after.variance, before.variance, rtol=1e-4, atol=1e-4)


# ------------------------------------------------- track_candidates (issue 14, item 3)
def _candidate_problem(dtype, num_tasks=3, diagonal=False, size=40, seed=0):
    """A finite domain (21 points of [0, 1]), ICM kernel (full-rank ``B`` or, as IT-BKB,
    diagonal), rows drawn among the candidates with repeats."""
    generator = torch.Generator().manual_seed(seed)
    points = torch.linspace(0, 1, 21, dtype=torch.float64).unsqueeze(-1)
    A = torch.randn(num_tasks, num_tasks, generator=generator, dtype=torch.float64)
    B = torch.diag(torch.rand(num_tasks, generator=generator, dtype=torch.float64) + 0.5)
    if not diagonal:
        B = A @ A.T / num_tasks + 0.1 * torch.eye(num_tasks, dtype=torch.float64)
    X = points[torch.randint(0, points.shape[0], (size,), generator=generator)]
    Y = torch.sin(5 * X + torch.arange(num_tasks)) + 0.1 * torch.randn(
        size, num_tasks, generator=generator, dtype=torch.float64
    )
    kernel = RBFKernel().double()
    kernel.lengthscale = 0.2
    return points.to(dtype), X.to(dtype), Y.to(dtype), kernel.to(dtype), B.to(dtype)


def _assert_same_sketch(plain, tracked, points, atol, rtol):
    assert torch.equal(plain.dictionary, tracked.dictionary)
    for query in (points.unsqueeze(-2), points[[3, 0, 3]].unsqueeze(-2)):  # all, some
        a, b = plain.posterior(query), tracked.posterior(query)
        torch.testing.assert_close(b.mean, a.mean, atol=atol, rtol=rtol)
        torch.testing.assert_close(
            b.distribution.covariance_matrix, a.distribution.covariance_matrix, atol=atol, rtol=rtol
        )
    torch.testing.assert_close(tracked.train_variances, plain.train_variances, atol=atol, rtol=rtol)
    torch.testing.assert_close(
        tracked.sketched_log_det_sum, plain.sketched_log_det_sum, atol=atol, rtol=rtol
    )


@pytest.mark.parametrize("diagonal", [False, True], ids=["mt-bkb", "it-bkb"])
@pytest.mark.parametrize("start", [0, 6])
def test_track_candidates_matches_plain_route_float64(diagonal, start):
    """Over appends (one redraw each) the tracked sketch draws the same dictionaries and
    gives the plain route's posterior at the candidates, its row variances and its
    log-det sum, whether tracking starts on the prior or on data."""
    points, X, Y, kernel, B = _candidate_problem(torch.float64, diagonal=diagonal)
    plain = NystromVectorValuedGP(X[:start], Y[:start], kernel, B, ETA, accuracy=8.0, seed=3)
    tracked = copy.deepcopy(plain)
    assert tracked.track_candidates(points) and tracked.tracks_candidates
    _assert_same_sketch(plain, tracked, points, 1e-8, 1e-7)
    sizes, repeats = set(), 0
    for s in range(start, X.shape[0]):
        plain.append_observations(X[s : s + 1], Y[s : s + 1])
        tracked.append_observations(X[s : s + 1], Y[s : s + 1])
        _assert_same_sketch(plain, tracked, points, 1e-8, 1e-7)
        sizes.add(plain.dictionary_size)
        repeats += len(torch.unique(X[plain.dictionary])) < plain.dictionary_size
    assert len(sizes) > 3 and plain.dictionary_size < X.shape[0]  # real redraws
    assert repeats > 0  # dictionaries with repeated points (merged by the tracked route)
    # a query off the candidates takes the plain route
    off = torch.tensor([[[0.123]], [[0.77]]], dtype=torch.float64)
    torch.testing.assert_close(tracked.posterior(off).mean, plain.posterior(off).mean)


def test_track_candidates_float32():
    """float32: every probability 1 (the dictionary is all rows, so both routes draw the
    same), the tracked posterior is the plain route's to float32 round-off, and both
    are the exact posterior's (VectorValuedGP, float64)."""
    points, X, Y, kernel, B = _candidate_problem(torch.float32, size=25)
    plain = NystromVectorValuedGP(X[:4], Y[:4], kernel, B, ETA, accuracy=EVERYTHING)
    tracked = copy.deepcopy(plain)
    assert tracked.track_candidates(points)
    for s in range(4, X.shape[0]):
        plain.append_observations(X[s : s + 1], Y[s : s + 1])
        tracked.append_observations(X[s : s + 1], Y[s : s + 1])
    assert tracked.posterior(points.unsqueeze(-2)).mean.dtype == torch.float32
    _assert_same_sketch(plain, tracked, points, 2e-3, 1e-3)
    exact = VectorValuedGP(X.double(), Y.double(), kernel.double(), B.double(), ETA)
    torch.testing.assert_close(
        tracked.posterior(points.unsqueeze(-2)).mean.double(),
        exact.posterior(points.double().unsqueeze(-2)).mean,
        atol=2e-2,
        rtol=0,
    )


def test_track_candidates_stops_and_refuses():
    """A row off the candidates stops the tracking (the plain route after it, same
    numbers); tracking is refused off the ICM route, above ``max_entries`` or with a
    training row off the candidates; bad arguments raise; ``.to()`` casts the kept
    tensors."""
    points, X, Y, kernel, B = _candidate_problem(torch.float64, size=12)
    plain = NystromVectorValuedGP(X[:5], Y[:5], kernel, B, ETA, accuracy=8.0)
    tracked = copy.deepcopy(plain)
    assert tracked.track_candidates(points)
    off = torch.tensor([[0.333]], dtype=torch.float64)
    for model in (plain, tracked):
        model.append_observations(X[5:8], Y[5:8])
        model.append_observations(off, Y[:1])
    assert not tracked.tracks_candidates
    _assert_same_sketch(plain, tracked, points, 1e-8, 1e-7)
    assert not copy.deepcopy(plain).track_candidates(points)  # 0.333 is a training row
    assert not NystromVectorValuedGP(X, Y, kernel, B, ETA).track_candidates(points, 20)
    general = NystromVectorValuedGP(X, Y, [kernel, kernel], [B, torch.eye(3).double()], ETA)
    assert not general.track_candidates(points)
    model = NystromVectorValuedGP(X, Y, kernel, B, ETA)
    with pytest.raises(TypeError, match="max_entries"):
        model.track_candidates(points, 1.5)
    with pytest.raises(ValueError, match="max_entries"):
        model.track_candidates(points, 0)
    with pytest.raises(ValueError, match="points"):
        model.track_candidates(points[:0])
    with pytest.raises(ValueError, match="NaN"):
        model.track_candidates(points * float("nan"))
    assert model.track_candidates(points) and not model.track_candidates(None)
    assert model.track_candidates(points)
    single = model.to(torch.float32)
    assert single.candidates.gram.dtype == torch.float32
    assert single.posterior(points.float().unsqueeze(-2)).mean.dtype == torch.float32
    with pytest.raises(UnsupportedError):
        model.subset_output([0]).track_candidates(points)


def test_policy_tracks_a_finite_domain_for_mt_bkb():
    """MT-BKB's policy turns the tracking on (its WidthRule's candidates)."""
    from botorch_mtucb.bandits import ScalarizedEnvironment
    from botorch_mtucb.bandits.runner import run_policy
    from botorch_mtucb.bandits.scalarized import mt_bkb
    from botorch_mtucb.problems import rkhs_problem

    problem = rkhs_problem(2, seed=0)
    arguments = (problem.make_data_kernel(), problem.task_covariance, problem.domain)
    policy = mt_bkb(
        *arguments, problem.rkhs_norm_bound, problem.noise_std, problem.regularization, horizon=3
    )
    run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
    assert policy.rule.model.tracks_candidates


def test_track_candidates_matches_rows_in_blocks(monkeypatch):
    """Rows are matched to the candidates in blocks (``utils.domains.find_rows``), so that
    the comparison budget does not refuse tracking a model with many rows."""
    import botorch_mtucb.utils.domains as domains

    points, X, Y, kernel, B = _candidate_problem(torch.float64, size=30)
    plain = NystromVectorValuedGP(X[:25], Y[:25], kernel, B, ETA, accuracy=8.0)
    tracked = copy.deepcopy(plain)
    monkeypatch.setattr(domains, "MAX_MATCH_COMPARISONS", 50)  # blocks of 2 rows
    assert tracked.track_candidates(points)
    candidates = tracked.candidates
    torch.testing.assert_close(candidates.points[candidates.observed], X[:25])
    for model in (plain, tracked):
        model.append_observations(X[25:], Y[25:])  # 5 rows at once: blocks as well
    assert tracked.tracks_candidates
    _assert_same_sketch(plain, tracked, points, 1e-8, 1e-7)


def test_task_indexed_variances_and_selected_tasks_match_a_dense_sketch(dtype):
    """The per-task embedding and the rows' variances (few large products) equal the
    sketch's formula written densely from its dictionary (paper 000, Section 3.2)."""
    import numpy as np
    from gpytorch.kernels import RBFKernel

    n, N, eta = 3, 40, 0.1
    X = torch.rand(N, 2, dtype=dtype)
    tasks = torch.randint(0, n, (N,))
    Y = torch.randn(N, 1, dtype=dtype)
    A = torch.randn(n, 2, dtype=dtype)
    B = A @ A.T + 0.1 * torch.eye(n, dtype=dtype)
    kernel = RBFKernel()
    model = NystromVectorValuedGP(X, Y, kernel, B, eta, tasks, accuracy=2.0)
    assert model.dictionary_size < N  # a real sketch

    def k(a, b):  # RBFKernel's default lengthscale, log 2
        return np.exp(-0.5 * ((a[:, None] - b[None]) ** 2).sum(-1) / 0.6931471805599453**2)

    x, t, Bn = X.double().numpy(), tasks.numpy(), B.double().numpy()
    d = model.dictionary.numpy()
    w = 1 / np.sqrt(model.inclusion_probabilities.double().numpy())
    gram = w[:, None] * k(x[d], x[d]) * Bn[t[d]][:, t[d]] * w
    s, V = np.linalg.eigh(gram)
    keep = s > (1e-10 if dtype == torch.float64 else 1e-6) * s.max()  # PSEUDO_INVERSE_RTOL
    root = V[:, keep] / np.sqrt(s[keep])

    def cross(pts, tk):  # J x P: reweighted covariances of the dictionary's columns
        return w[:, None] * k(x[d], pts) * Bn[t[d]][:, tk]

    Z = root.T @ cross(x, t)
    inv = np.linalg.inv(Z @ Z.T + eta * np.eye(Z.shape[0]))
    P = np.random.default_rng(0).random((7, 2))
    for i in range(n):  # each task at new points: the selected-task posterior
        phi = root.T @ cross(P, np.full(7, i))
        dense = Bn[i, i] - (phi**2).sum(0) + eta * np.einsum("rp,rs,sp->p", phi, inv, phi)
        got = model.posterior(torch.as_tensor(P, dtype=dtype).unsqueeze(-2), output_indices=[i])
        tolerance = 1e-8 if dtype == torch.float64 else 1e-2  # float32: module docstring
        assert np.allclose(got.variance.reshape(-1).double().numpy(), dense, atol=tolerance)
        own = root.T @ cross(x, np.full(N, i))
        rows = Bn[i, i] - (own**2).sum(0) + eta * np.einsum("rp,rs,sp->p", own, inv, own)
        train = model.train_variances[:, i].double().numpy()
        assert np.allclose(train, np.clip(rows, 0, None), atol=tolerance)
