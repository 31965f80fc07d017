"""Information gains and effective dimensions, batch, per task and incremental: checked
against NumPy's slogdet / eigvalsh, sequential posterior variances (paper 000, Sec. 4 and
Lemma 4) and the batch formulas (the incremental tracker of paper 001's regression)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.models import ModelListGP, SingleTaskGP
from botorch_models import CASE_NAMES as BOTORCH_CASES
from botorch_models import build_botorch_case, numpy_gain
from cases import CASES, build_case, tolerances
from gpytorch.kernels import LinearKernel, RBFKernel
from oracles import se_kernel

from botorch_mtucb.confidence import (
    IncrementalInformationGain,
    effective_dimension,
    information_gain,
    information_gain_increment,
    multitask_information_gain,
    observation_information_gain,
    single_task_information_gains,
    task_effective_dimensions,
    task_kernel_matrix,
)
from botorch_mtucb.kernels import UniformSimilarityTaskKernel


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _kernel_matrices(batch, t, rng):
    X = rng.uniform(size=(*batch, t, 2))
    k = se_kernel([0.3, 0.4], outputscale=1.7)
    K = np.zeros((*batch, t, t))
    for index in np.ndindex(*batch):
        K[index] = k(X[index], X[index])
    return K


@pytest.mark.parametrize("batch", ((), (3,), (2, 2)), ids=str)
@pytest.mark.parametrize("t", (0, 1, 6))
def test_information_gain_matches_slogdet(batch, t, dtype):
    eta = 0.3
    K = _kernel_matrices(batch, t, np.random.default_rng(t))
    value = information_gain(torch.tensor(K, dtype=dtype), eta)
    assert value.shape == batch and value.dtype == dtype
    expected = 0.5 * np.linalg.slogdet(np.eye(t) + K / eta)[1] if t else np.zeros(batch)
    np.testing.assert_allclose(_np(value), expected, **tolerances(dtype))


def test_information_gain_of_a_singular_matrix():
    """A rank-one K (repeated point) is PSD but singular: still exact."""
    K = np.ones((4, 4))
    value = information_gain(torch.tensor(K), 0.1)
    assert float(value) == pytest.approx(0.5 * np.log(1 + 4 / 0.1), rel=1e-12)


def test_increments_sum_to_information_gain(dtype):
    """Chain rule: sum_s 1/2 log(1 + sigma_{s-1}^2(x_s) / eta) = 1/2 log det(I + K / eta),
    with sigma_{s-1}^2 the posterior variance from the first s - 1 points (NumPy)."""
    eta = 0.2
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(7, 2))
    K = se_kernel([0.3, 0.5])(X, X)
    variances = [K[0, 0]]
    for s in range(1, 7):
        A = K[:s, :s] + eta * np.eye(s)
        variances.append(K[s, s] - K[s, :s] @ np.linalg.solve(A, K[:s, s]))
    increments = information_gain_increment(torch.tensor(variances, dtype=dtype), eta)
    assert increments.shape == (7,)
    np.testing.assert_allclose(
        _np(increments), 0.5 * np.log1p(np.array(variances) / eta), **tolerances(dtype)
    )
    expected = 0.5 * np.linalg.slogdet(np.eye(7) + K / eta)[1]
    np.testing.assert_allclose(float(increments.sum()), expected, **tolerances(dtype))
    np.testing.assert_allclose(
        float(information_gain(torch.tensor(K, dtype=dtype), eta)), expected, **tolerances(dtype)
    )


def test_increment_clips_negative_round_off():
    value = information_gain_increment(torch.tensor([-1e-12, 0.0]), 0.1)
    assert torch.equal(value, torch.zeros(2))


@pytest.mark.parametrize("kind", ("full", "indexed"))
@pytest.mark.parametrize("name", CASES)
def test_model_information_gain_and_lemma_4(name, kind):
    """VectorValuedGP.information_gain() = 1/2 log det(I + G_t / eta) (dense G_t)
    = 1/2 sum_s log det(I + Gamma_{s-1}(x_s, x_s) / eta) (Lemma 4 of 000, sequentially)."""
    case = build_case(name, torch.float64, task_indexed=kind == "indexed")
    model = case.build()
    X, Y, tasks = _np(case.train_X), _np(case.train_Y), case.tasks_numpy()
    dense = case.oracle.information_gain(X, Y, tasks)
    sequential = 0.5 * case.oracle.sequential_log_det_sum(X, Y, tasks)
    np.testing.assert_allclose(dense, sequential, rtol=1e-10)
    np.testing.assert_allclose(float(model.information_gain()), dense, rtol=1e-9, atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="regularization must be > 0"):
        information_gain(torch.eye(2), 0.0)
    with pytest.raises(ValueError, match="regularization must be > 0"):
        information_gain_increment(torch.ones(2), -1.0)
    with pytest.raises(ValueError, match="kernel_matrix must be"):
        information_gain(torch.ones(2, 3), 0.1)
    with pytest.raises(ValueError, match="regularization must be finite"):
        information_gain(torch.eye(2), float("nan"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kernel_class", [LinearKernel, RBFKernel])
def test_information_gain_helpers_match_numpy(dtype, kernel_class):
    torch.manual_seed(2)
    N, t, b, lam = 3, 25, 2.0, 0.7
    X = torch.randn(t, 2, dtype=dtype)
    tasks = torch.randint(0, N, (t,))
    kernel = kernel_class().to(dtype)
    Kx = kernel(X, X).to_dense().detach().double().numpy()
    Kt = np.eye(N) / (1 + b) + b / (1 + b) * np.ones((N, N)) / N
    T = tasks.numpy()
    K = Kt[T][:, T] * Kx
    want_mt = 0.5 * np.linalg.slogdet(np.eye(t) + K / lam)[1]
    tol = 1e-3 if dtype == torch.float32 else 1e-9
    got = multitask_information_gain(X, tasks, kernel, N, b, lam)
    assert float(got) == pytest.approx(want_mt, rel=tol)
    st = single_task_information_gains(X, tasks, kernel, N, lam)
    dims = task_effective_dimensions(X, tasks, kernel, N, b, lam)
    for i in range(N):
        Ki = Kx[T == i][:, T == i]
        want = 0.5 * np.linalg.slogdet(np.eye(len(Ki)) + Ki / lam)[1]
        assert float(st[i]) == pytest.approx(want, rel=tol, abs=tol)
        ev = np.linalg.eigvalsh(Ki)
        c = lam * (1 + b)
        assert float(dims[i]) == pytest.approx(np.sum(ev / (ev + c)), rel=tol, abs=tol)
    assert float(effective_dimension(torch.eye(3, dtype=dtype), math.inf)) == 0.0
    with pytest.raises(ValueError, match="train_tasks"):
        multitask_information_gain(X, tasks + N, kernel, N, b, lam)


@pytest.mark.parametrize("batch", ((), (3,)), ids=str)
def test_effective_dimension_matches_eigenvalues(batch, dtype):
    K = _kernel_matrices(batch, 6, np.random.default_rng(4))
    c = 0.3
    value = effective_dimension(torch.tensor(K, dtype=dtype), c)
    assert value.shape == batch and value.dtype == dtype
    eigenvalues = np.linalg.eigvalsh(K)
    expected = (eigenvalues / (eigenvalues + c)).sum(-1)
    np.testing.assert_allclose(_np(value), expected, **tolerances(dtype))
    empty = effective_dimension(torch.zeros(*batch, 0, 0, dtype=dtype), c)
    assert empty.shape == batch and not empty.any()


@pytest.mark.parametrize("b", (0.0, 0.5, 3.0, math.inf))
def test_task_kernel_matrix_is_eq_2(b):
    N = 4
    matrix = task_kernel_matrix(N, b)
    expected = (
        np.ones((N, N)) / N
        if math.isinf(b)
        else (np.eye(N) / (1 + b) + b / (1 + b) * np.ones((N, N)) / N)
    )
    np.testing.assert_allclose(matrix.numpy(), expected, rtol=1e-15, atol=1e-15)
    assert matrix.dtype == torch.float64
    assert task_kernel_matrix(N, b, dtype=torch.float32).dtype == torch.float32
    if not math.isinf(b):
        kernel = UniformSimilarityTaskKernel.from_b(N, b).double()
        np.testing.assert_allclose(
            matrix.numpy(), kernel.covar_matrix.to_dense().detach().numpy(), rtol=1e-6, atol=1e-7
        )


@pytest.mark.parametrize("kernel_class", (LinearKernel, RBFKernel))
@pytest.mark.parametrize("trace_regularization", (0.4, math.inf))
def test_incremental_information_gain_equals_the_batch_formulas(
    kernel_class, trace_regularization, dtype
):
    """After every append: information_gain(K, lambda) and effective_dimension(K, c) of the
    Gram matrix of the points so far (O(t^2) bordering vs a fresh factorization)."""
    generator = torch.Generator().manual_seed(3)
    X = torch.rand(15, 2, generator=generator, dtype=dtype)
    kernel = kernel_class().to(dtype)
    lam = 0.25
    tracker = IncrementalInformationGain(kernel, lam, trace_regularization, like=X)
    assert tracker.num_observations == 0 and tracker.information_gain == 0.0
    tol = dict(rel=1e-4, abs=1e-5) if dtype == torch.float32 else dict(rel=1e-10, abs=1e-12)
    for t in range(1, 16):
        tracker.append(X[t - 1])
        assert tracker.num_observations == t
        with torch.no_grad():
            K = kernel(X[:t], X[:t]).to_dense().double()
        assert tracker.information_gain == pytest.approx(float(information_gain(K, lam)), **tol)
        expected = float(effective_dimension(K, trace_regularization))
        assert tracker.effective_dimension == pytest.approx(expected, **tol)
    at_once = IncrementalInformationGain(kernel, lam, trace_regularization, like=X)
    at_once.append(X)  # m x d: the same points one after the other
    assert at_once.information_gain == tracker.information_gain
    assert at_once.effective_dimension == tracker.effective_dimension


def test_incremental_information_gain_sums_to_the_per_task_helpers():
    """One tracker per task reproduces single_task_information_gains and
    task_effective_dimensions (paper 001: gamma_t^st and the terms of S, eq. 26)."""
    generator = torch.Generator().manual_seed(5)
    N, b, lam = 3, 2.0, 0.7
    X = torch.rand(20, 2, generator=generator, dtype=torch.float64)
    tasks = torch.randint(0, N, (20,), generator=generator)
    kernel = RBFKernel().double()
    trackers = [IncrementalInformationGain(kernel, lam, lam * (1 + b), like=X) for _ in range(N)]
    for x, task in zip(X, tasks.tolist()):
        trackers[task].append(x)
    gains = single_task_information_gains(X, tasks, kernel, N, lam)
    dims = task_effective_dimensions(X, tasks, kernel, N, b, lam)
    for i in range(N):
        assert trackers[i].information_gain == pytest.approx(float(gains[i]), rel=1e-10)
        assert trackers[i].effective_dimension == pytest.approx(float(dims[i]), rel=1e-10)


def test_incremental_information_gain_bad_input():
    kernel = LinearKernel()
    with pytest.raises(ValueError, match="regularization must be > 0"):
        IncrementalInformationGain(kernel, 0.0)
    with pytest.raises(ValueError, match="trace_regularization must be > 0"):
        IncrementalInformationGain(kernel, 1.0, -1.0)
    with pytest.raises(ValueError, match="trace_regularization must be > 0"):
        IncrementalInformationGain(kernel, 1.0, math.nan)
    with pytest.raises(TypeError, match="regularization"):
        IncrementalInformationGain(kernel, "1")


@pytest.mark.parametrize("function", [information_gain, effective_dimension])
def test_half_precision_kernel_matrix_is_refused(function):
    with pytest.raises(TypeError, match="kernel_matrix must be float32 or float64"):
        function(torch.eye(3, dtype=torch.float16), 0.5)


def test_boolean_task_indices_are_refused():
    X = torch.rand(4, 2, dtype=torch.float64)
    tasks = torch.tensor([True, False, True, False])
    with pytest.raises(TypeError, match="train_tasks must hold integer task indices"):
        multitask_information_gain(X, tasks, RBFKernel().double(), 2, 1.0, 0.5)


# ------------------------------------------------- BoTorch models (issue 10, item 2)
@pytest.mark.parametrize("name", BOTORCH_CASES)
def test_information_gain_of_a_botorch_model_matches_numpy(name, dtype):
    """1/2 log det(I + Sigma^{-1/2} K Sigma^{-1/2}) with K and Sigma built with NumPy from
    the hyperparameters (per-task, per-point and correlated task noise included), summed
    over independent outputs."""
    case = build_botorch_case(name, dtype)
    gain = information_gain(case.model)
    assert gain.shape == () and gain.dtype == dtype and not gain.requires_grad
    np.testing.assert_allclose(float(gain), numpy_gain(case.groups), **tolerances(dtype))


def test_information_gain_of_a_batched_model(dtype):
    """A batch of 3 two-output SingleTaskGPs (per-output, per-batch lengthscales and
    noise): one gain per batch element; a ModelListGP adds its models' gains."""
    g = torch.Generator().manual_seed(11)
    X = torch.rand(3, 6, 2, generator=g, dtype=torch.float64)
    Y = torch.randn(3, 6, 2, generator=g, dtype=torch.float64)
    model = SingleTaskGP(X.to(dtype), Y.to(dtype))
    model.covar_module.lengthscale = torch.rand(3, 2, 1, 2, generator=g, dtype=torch.float64) + 0.2
    model.likelihood.noise = torch.rand(3, 2, 1, generator=g, dtype=torch.float64) / 10 + 0.01
    gain = information_gain(model)
    assert gain.shape == (3,) and gain.dtype == dtype
    ell, noise = _np(model.covar_module.lengthscale), _np(model.likelihood.noise)
    expected = [
        sum(
            0.5
            * np.linalg.slogdet(
                np.eye(6) + se_kernel(ell[b, i, 0])(X[b].numpy(), X[b].numpy()) / noise[b, i, 0]
            )[1]
            for i in range(2)
        )
        for b in range(3)
    ]
    np.testing.assert_allclose(_np(gain), expected, **tolerances(dtype))
    single = SingleTaskGP(X[0].to(dtype), Y[0, :, :1].to(dtype))
    listed = ModelListGP(model, single)
    np.testing.assert_allclose(
        _np(information_gain(listed)), _np(gain + information_gain(single)), rtol=1e-6
    )


def test_observation_information_gain_matches_numpy(dtype):
    rng = np.random.default_rng(4)
    K = _kernel_matrices((), 5, rng)
    A = rng.normal(size=(5, 5))
    Sigma = A @ A.T / 5 + 0.1 * np.eye(5)  # correlated noise
    expected = 0.5 * (np.linalg.slogdet(K + Sigma)[1] - np.linalg.slogdet(Sigma)[1])
    value = observation_information_gain(
        torch.tensor(K, dtype=dtype), torch.tensor(Sigma, dtype=dtype)
    )
    np.testing.assert_allclose(float(value), expected, **tolerances(dtype))
    diagonal = np.diag(rng.uniform(0.1, 1.0, size=5))
    value = observation_information_gain(
        torch.tensor(K, dtype=dtype), torch.tensor(diagonal, dtype=dtype)
    )
    expected = 0.5 * (np.linalg.slogdet(K + diagonal)[1] - np.linalg.slogdet(diagonal)[1])
    np.testing.assert_allclose(float(value), expected, **tolerances(dtype))
    eta = 0.3 * torch.eye(5, dtype=dtype)
    np.testing.assert_allclose(
        float(observation_information_gain(torch.tensor(K, dtype=dtype), eta)),
        float(information_gain(torch.tensor(K, dtype=dtype), 0.3)),
        **tolerances(dtype),
    )


def test_information_gain_of_a_model_bad_input():
    case = build_botorch_case("single")
    with pytest.raises(ValueError, match="regularization must be None"):
        information_gain(case.model, 0.1)
    with pytest.raises(ValueError, match="positive definite"):
        observation_information_gain(torch.eye(2), torch.diag(torch.tensor([1.0, 0.0])))
    with pytest.raises(ValueError, match="positive definite"):
        observation_information_gain(torch.eye(2), torch.ones(2, 2))
    with pytest.raises(ValueError, match="noise_covariance must be M x M"):
        observation_information_gain(torch.eye(2), torch.eye(3))
    vector = build_case("icm", torch.float64).build()  # the package's own: its own value
    assert torch.equal(information_gain(vector), vector.information_gain())
