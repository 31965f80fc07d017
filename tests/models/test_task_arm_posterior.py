"""The incremental finite-arm posterior against dense NumPy formulas (paper 001, eqs. 3-4)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gpytorch.kernels import LinearKernel, RBFKernel

from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.models import TaskArmPosterior
from botorch_mtucb.utils.domains import find_arm


def _kernel(kind, dtype):
    kernel = (LinearKernel() if kind == "linear" else RBFKernel()).to(dtype)
    if kind == "linear":
        kernel.initialize(variance=1.0)
    return kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["linear", "rbf"])
@pytest.mark.parametrize("shared", [False, True])
def test_matches_dense_posterior(dtype, kind, shared):
    torch.manual_seed(0)
    N, b = 3, 2.0
    if shared:
        arms = [torch.randn(15, 3, dtype=dtype)] * N
    else:
        arms = [torch.randn(10 + 4 * i, 3, dtype=dtype) for i in range(N)]
    kernel = _kernel(kind, dtype)
    Kt = UniformSimilarityTaskKernel.from_b(N, b).covar_matrix.to_dense().detach().to(dtype)
    lam = (N + b) / (N + b * N)
    posterior = TaskArmPosterior(arms, kernel, Kt, lam)
    points, tasks, ys = [], [], []
    for s in range(20):
        i = s % N
        j = int(torch.randint(arms[i].shape[0], (1,)))
        y = float(torch.randn(()))
        posterior.update(i, j, y)
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
        np.testing.assert_allclose(posterior.mean(i).double().numpy(), mean, atol=tol)
        np.testing.assert_allclose(
            posterior.variance(i).double().numpy(), np.maximum(var, 0), atol=tol
        )
    gain = 0.5 * np.linalg.slogdet(np.eye(len(T)) + K / lam)[1]
    assert posterior.information_gain == pytest.approx(
        gain, rel=1e-3 if dtype == torch.float32 else 1e-9
    )


@pytest.mark.parametrize("kind", ["linear", "rbf"])
def test_samples_have_posterior_moments(kind):
    torch.manual_seed(1)
    N = 2
    arms = [torch.randn(6, 2, dtype=torch.float64), torch.randn(5, 2, dtype=torch.float64)]
    kernel = _kernel(kind, torch.float64)
    Kt = UniformSimilarityTaskKernel.from_b(N, 1.0).covar_matrix.to_dense().detach().double()
    posterior = TaskArmPosterior(arms, kernel, Kt, 0.3)
    for s in range(5):
        posterior.update(s % 2, s % 5, float(torch.randn(())))
    generator = torch.Generator().manual_seed(0)
    draws = torch.stack([posterior.sample(1, generator) for _ in range(6000)])
    mean, var = posterior.mean(1), posterior.variance(1)
    scale = var.max().sqrt()
    assert (draws.mean(0) - mean).abs().max() < 5 * scale / 6000**0.5
    assert (draws.var(0) - var).abs().max() < 0.1 * var.max() + 1e-9


def test_find_arm_and_bad_input():
    arms = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    assert find_arm(arms, torch.tensor([2.0, 3.0])) == 1
    with pytest.raises(ValueError, match="not one of the arms"):
        find_arm(arms, torch.tensor([2.0, 3.5]))
    kernel = RBFKernel()
    with pytest.raises(ValueError, match="regularization"):
        TaskArmPosterior([arms], kernel, torch.eye(1), 0.0)
    with pytest.raises(ValueError, match="task_covariance must be 2 x 2"):
        TaskArmPosterior([arms, arms], kernel, torch.eye(3), 0.1)
    with pytest.raises(ValueError, match="non-empty"):
        TaskArmPosterior([arms, arms[:0]], kernel, torch.eye(2), 0.1)
    posterior = TaskArmPosterior([arms], kernel, torch.eye(1), 0.1)
    with pytest.raises(ValueError, match="arm must lie"):
        posterior.update(0, 5, 1.0)
    with pytest.raises(ValueError, match="task must lie"):
        posterior.mean(1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["linear", "rbf"])
def test_factor_is_the_dense_cholesky_of_the_observations(dtype, kind):
    # The posterior's GrowingCholesky, grown one row per update (past the buffer's
    # first growth), is chol(K_t + lambda I) of the observed (task, arm) pairs.
    torch.manual_seed(2)
    N, lam = 2, 0.5
    arms = [torch.randn(12, 3, dtype=dtype), torch.randn(9, 3, dtype=dtype)]
    kernel = _kernel(kind, dtype)
    Kt = UniformSimilarityTaskKernel.from_b(N, 0.5).covar_matrix.to_dense().detach().to(dtype)
    posterior = TaskArmPosterior(arms, kernel, Kt, lam)
    capacity = posterior._factor.capacity
    plan = [(s % N, int(torch.randint(arms[s % N].shape[0], (1,)))) for s in range(capacity + 8)]
    for task, arm in plan:
        posterior.update(task, arm, float(torch.randn(())))
    assert posterior._factor.capacity > capacity and posterior._rows.shape[0] >= len(plan)
    X = torch.stack([arms[task][arm] for task, arm in plan]).double()
    tasks = [task for task, _ in plan]
    with torch.no_grad():
        K = Kt.double()[tasks][:, tasks] * kernel.double()(X, X).to_dense()
    expected = np.linalg.cholesky((K + lam * torch.eye(len(plan), dtype=torch.float64)).numpy())
    tol = 1e-3 if dtype == torch.float32 else 1e-10
    factor = posterior._factor.factor
    assert factor.dtype == dtype and factor.shape == (len(plan), len(plan))
    np.testing.assert_allclose(factor.double().numpy(), expected, rtol=tol, atol=tol)
    sample = posterior.sample(0, torch.Generator().manual_seed(0))
    assert sample.shape == (12,) and sample.dtype == dtype and torch.isfinite(sample).all()


@pytest.mark.parametrize("half", (torch.float16, torch.bfloat16), ids=str)
def test_half_precision_arms_are_refused(half):
    # Half-precision arms used to run the whole posterior in float16, silently.
    arms = [torch.rand(4, 2, dtype=torch.float64), torch.rand(3, 2).to(half)]
    with pytest.raises(TypeError, match=rf"arms\[1\] must be float32 or float64, got {half}"):
        TaskArmPosterior(arms, RBFKernel(), torch.eye(2, dtype=torch.float64), 0.1)


def test_arms_that_overflow_the_kernel_are_refused():
    # k(x, x) = 1e600 overflows: every variance was inf, without an error.
    arms = [1e300 * torch.rand(4, 2, dtype=torch.float64)] * 2
    with pytest.raises(ValueError, match="^arms is outside the range where the kernel is finite"):
        TaskArmPosterior(arms, _kernel("linear", torch.float64), torch.eye(2), 0.1)
