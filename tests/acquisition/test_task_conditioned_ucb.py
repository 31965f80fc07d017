"""TaskConditionedUCB / LCB (paper 001, eq. 7) against a dense NumPy posterior."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from gpytorch.kernels import RBFKernel

from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB
from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.models import VectorValuedGP


def dense_posterior(Xo, To, y, Xq, task, Kx, Kt, lam):
    """Eqs. (3)-(4) of paper 001 with explicit matrices."""
    K = Kt[np.ix_(To, To)] * Kx(Xo, Xo)
    k = Kt[To, task][:, None] * Kx(Xo, Xq)  # t x q
    A = np.linalg.inv(K + lam * np.eye(len(To)))
    mean = k.T @ A @ y
    var = Kt[task, task] * np.diag(Kx(Xq, Xq)) - np.einsum("tq,ts,sq->q", k, A, k)
    return mean, var


def rbf(a, b, lengthscale):
    d = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * d / lengthscale**2)


def _setup(dtype):
    torch.manual_seed(0)
    N, b = 3, 1.5
    X = torch.rand(12, 2, dtype=dtype)
    tasks = torch.randint(0, N, (12,))
    y = torch.randn(12, 1, dtype=dtype)
    kernel = RBFKernel().to(dtype)
    kernel.lengthscale = 0.3
    Kt = UniformSimilarityTaskKernel.from_b(N, b).covar_matrix.to_dense().detach().to(dtype)
    lam = (N + b) / (N + b * N)
    model = VectorValuedGP(X, y, kernel, Kt, lam, train_tasks=tasks)
    return model, X, tasks, y, Kt, lam


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batch_shape", [(5,), (2, 4)])
def test_values_match_dense_formula(dtype, batch_shape):
    model, X, tasks, y, Kt, lam = _setup(dtype)
    Xq = torch.rand(*batch_shape, 1, 2, dtype=dtype)
    width = 2.5
    for task in range(3):
        ucb = TaskConditionedUCB(model, task, width)(Xq)
        lcb = TaskConditionedLCB(model, task, width)(Xq)
        assert ucb.shape == batch_shape
        flat = Xq.reshape(-1, 2).double().numpy()
        mean, var = dense_posterior(
            X.double().numpy(),
            tasks.numpy(),
            y.double().numpy().ravel(),
            flat,
            task,
            lambda a, b_: rbf(a, b_, 0.3),
            Kt.double().numpy(),
            lam,
        )
        tol = 1e-3 if dtype == torch.float32 else 1e-9
        want_ucb = mean + width * np.sqrt(np.maximum(var, 0))
        want_lcb = mean - width * np.sqrt(np.maximum(var, 0))
        np.testing.assert_allclose(ucb.detach().double().reshape(-1).numpy(), want_ucb, atol=tol)
        np.testing.assert_allclose(lcb.detach().double().reshape(-1).numpy(), want_lcb, atol=tol)


def test_discrete_and_box_optimization():
    model, *_ = _setup(torch.float64)
    acqf = TaskConditionedUCB(model, 1, 2.0)
    choices = torch.rand(200, 2, dtype=torch.float64)
    x, value = optimize_acqf_discrete(acqf, q=1, choices=choices)
    values = acqf(choices.unsqueeze(1))
    assert float(value) == pytest.approx(float(values.max()))
    assert torch.equal(x.reshape(-1), choices[values.argmax()])
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    x, value = optimize_acqf(acqf, bounds, q=1, num_restarts=4, raw_samples=64)
    assert ((x >= 0) & (x <= 1)).all()
    assert float(value) >= float(values.max()) - 1e-6  # continuous max beats 200 random points


def test_bad_input():
    model, *_ = _setup(torch.float64)
    with pytest.raises(ValueError, match="task must lie in"):
        TaskConditionedUCB(model, 3, 1.0)
    with pytest.raises(TypeError, match="task must be an int"):
        TaskConditionedUCB(model, 1.0, 1.0)
    with pytest.raises(ValueError, match="width"):
        TaskConditionedLCB(model, 0, -1.0)
    with pytest.raises(ValueError, match="width"):
        TaskConditionedUCB(model, 0, float("inf"))


@pytest.mark.parametrize("cls", [TaskConditionedUCB, TaskConditionedLCB])
def test_argument_types(cls, dtype):
    """Bad model / task / width raise errors naming the argument (as ScalarizedMultiTaskUCB)."""
    model, *_ = _setup(dtype)
    for width in (None, "2.0", b"2", True, 1 + 2j, torch.tensor(True), torch.tensor(1 + 2j)):
        with pytest.raises(TypeError, match="^width must be a real number"):
            cls(model, 1, width)
    with pytest.raises(ValueError, match="^width must be a single number"):
        cls(model, 1, torch.tensor([1.0, 2.0], dtype=dtype))
    for bad_model in ("m", None, object()):
        with pytest.raises(TypeError, match="^model must be a BoTorch Model"):
            cls(bad_model, 1, 2.0)
    for task in ("1", None, True, 1.0, torch.tensor(1.0)):
        with pytest.raises(TypeError, match="^task must be an int"):
            cls(model, task, 2.0)
    with pytest.raises(ValueError, match=r"^task must lie in \[0, 2\]"):
        cls(model, -1, 2.0)


@pytest.mark.parametrize("cls", [TaskConditionedUCB, TaskConditionedLCB])
def test_accepted_width_and_task_types(cls, dtype):
    """Integer-like tasks and real widths of any numeric type give the float/int result."""
    model, *_ = _setup(dtype)
    Xq = torch.rand(6, 1, 2, dtype=dtype)
    reference = cls(model, 2, 2.5)(Xq)
    posterior = model.posterior(Xq, output_indices=[2])
    mean = posterior.mean.reshape(-1)
    std = posterior.variance.reshape(-1).sqrt()
    expected = mean + cls._sign * 2.5 * std  # the bound, computed outside the class
    torch.testing.assert_close(reference, expected)
    for task in (np.int64(2), torch.tensor(2)):
        for width in (np.float64(2.5), torch.tensor(2.5, dtype=dtype), 5 / 2, torch.tensor([2.5])):
            acqf = cls(model, task, width)
            assert acqf.task == 2 and isinstance(acqf.task, int)
            torch.testing.assert_close(acqf(Xq), reference)


def test_batched_multi_output_single_task_gp():
    """A SingleTaskGP with 3 outputs (batched internally): BoTorch's posterior fails for
    one output index ("Must provide at least 2 MVNs"); the UCB reads output ``task`` of
    the posterior over all outputs, in the user's units (Standardize), with gradients."""
    torch.manual_seed(0)
    X = torch.rand(10, 2, dtype=torch.float64)
    Y = torch.stack([X.sum(-1), 10.0 * X[:, 0].sin(), X.prod(-1) - 3.0], -1)
    model = SingleTaskGP(X, Y).eval()
    Xq = torch.rand(6, 1, 2, dtype=torch.float64, requires_grad=True)
    posterior = model.posterior(Xq)
    for task in range(3):
        mean, std = posterior.mean[:, 0, task], posterior.variance[:, 0, task].sqrt()
        ucb = TaskConditionedUCB(model, task, 1.7)(Xq)
        lcb = TaskConditionedLCB(model, task, 1.7)(Xq)
        torch.testing.assert_close(ucb, mean + 1.7 * std)
        torch.testing.assert_close(lcb, mean - 1.7 * std)
    TaskConditionedUCB(model, 2, 1.7)(Xq).sum().backward()
    assert torch.isfinite(Xq.grad).all() and Xq.grad.abs().sum() > 0
