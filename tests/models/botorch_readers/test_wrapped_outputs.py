"""Reading one scalar GP from BoTorch's multi-output wrappers (``models.botorch_readers.wrapped_outputs``),
against NumPy: rows, centered targets, kernels, noise and the outcome maps."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models import ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.models.transforms import Normalize
from botorch.models.transforms.outcome import Log
from gpytorch.kernels import RBFKernel
from gpytorch.means import LinearMean
from oracles import se_kernel

from botorch_mtucb.models.botorch_readers import (
    TaskColumnInputs,
    WeightedOutputSumKernel,
    joint_training_data,
    multi_task_output_data,
    scalarized_output_data,
    unwrap_model_list,
)


def test_weighted_output_sum_kernel_is_the_weighted_sum(dtype):
    batched = RBFKernel(batch_shape=torch.Size([3]), ard_num_dims=2).to(dtype)
    lengthscales = np.array([[0.3, 0.5], [0.7, 0.2], [1.0, 1.5]])
    batched.lengthscale = torch.tensor(lengthscales, dtype=dtype)[:, None, :]
    c = np.array([0.2, 0.5, 0.3])
    kernel = WeightedOutputSumKernel(batched, torch.tensor(c, dtype=dtype))
    assert kernel.batch_shape == torch.Size([])
    X1, X2 = torch.rand(4, 2, dtype=dtype), torch.rand(5, 2, dtype=dtype)
    expected = sum(ci * se_kernel(l)(X1.double().numpy(), X2.double().numpy())
                   for ci, l in zip(c, lengthscales))  # fmt: skip
    rtol = 1e-12 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(
        kernel(X1, X2).to_dense().double().detach().numpy(), expected, rtol=rtol
    )
    diag = kernel(X1, X1, diag=True).double().detach().numpy()
    np.testing.assert_allclose(diag, np.full(4, c.sum()), rtol=rtol)


def test_unwrap_model_list():
    X = torch.rand(5, 1, dtype=torch.float64)
    gp = SingleTaskGP(X, X.sin())
    assert unwrap_model_list(ModelListGP(ModelListGP(gp))) is gp
    two = ModelListGP(gp, SingleTaskGP(X, X.cos()))
    assert unwrap_model_list(two) is two
    multi = ModelListGP(SingleTaskGP(X, torch.cat([X, -X], -1)))
    assert unwrap_model_list(multi) is multi  # one model of two outputs is not one output


def _multi_task(dtype, task_values=(0.0, 1.0), output_task=1):
    generator = torch.Generator().manual_seed(0)
    x = 10.0 * torch.rand(8, 1, generator=generator, dtype=torch.float64)
    tasks = torch.tensor(task_values, dtype=torch.float64).repeat(4)[:, None]
    y = x.sin() + 0.1 * tasks
    model = MultiTaskGP(
        torch.cat([x, tasks], -1).to(dtype), y.to(dtype), task_feature=-1,
        output_tasks=[output_task], input_transform=Normalize(2, indices=[0]),
    )  # fmt: skip
    model.likelihood.noise = torch.tensor([0.01, 0.03], dtype=dtype)
    for mean, constant in zip(model.mean_module.base_means, (0.5, -0.25)):
        mean.constant = constant
    return model.eval(), x.numpy(), tasks.numpy().reshape(-1), y.numpy().reshape(-1)


def test_multi_task_output_data_against_numpy(dtype):
    model, x, tasks, y = _multi_task(dtype)
    data = multi_task_output_data(model)
    index = tasks.astype(int)
    xn = (x - x.min()) / (x.max() - x.min())
    rtol = 1e-10 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(
        data.train_X.double().numpy(), np.c_[xn, index], rtol=rtol, atol=rtol
    )
    m, s = y.mean(), y.std(ddof=1)
    centered = (y - m) / s - np.array([0.5, -0.25])[index]
    np.testing.assert_allclose(
        data.train_Y.double().numpy().reshape(-1), centered, rtol=rtol, atol=rtol
    )
    np.testing.assert_allclose(
        data.noise_variance.double().numpy(), np.array([0.01, 0.03])[index], rtol=rtol
    )
    assert data.outcome_shift == pytest.approx(m + s * (-0.25), rel=rtol)
    assert data.outcome_scale == pytest.approx(s, rel=rtol)
    assert data.input_dim == 1
    # the user's points of task 1 map to the rows of task 1 (normalized, index 1)
    rows = data.kernel_inputs(torch.tensor(x[index == 1], dtype=dtype))
    np.testing.assert_allclose(
        rows.double().numpy(), np.c_[xn[index == 1], np.ones(4)], rtol=rtol, atol=rtol
    )
    with torch.no_grad():  # the kernel on the rows is the model's prior covariance
        K = model.forward(model.train_inputs[0]).covariance_matrix
    np.testing.assert_allclose(data.gram().double().numpy(), K.double().numpy(), rtol=rtol)


def test_multi_task_output_data_refuses_other_means_and_outcomes():
    model, *_ = _multi_task(torch.float64)
    model.mean_module.base_means[0] = LinearMean(1).double()  # read by observation_moments
    with pytest.raises(ValueError, match="prior mean differs between the training points of"):
        multi_task_output_data(model)
    x = torch.rand(6, 2, dtype=torch.float64)
    x[:, -1] = torch.tensor([0.0, 1.0]).repeat(3)
    logged = MultiTaskGP(
        x, x[:, :1] + 1.0, task_feature=-1, output_tasks=[0], outcome_transform=Log()
    )
    with pytest.raises(ValueError, match="outcome transform Log is not an affine map"):
        multi_task_output_data(logged)


def _two_outputs(dtype):
    generator = torch.Generator().manual_seed(1)
    X = torch.rand(7, 2, generator=generator, dtype=torch.float64)
    Y = torch.stack([X.sum(-1).sin(), 5.0 + X[:, 0]], -1)
    model = SingleTaskGP(X.to(dtype), Y.to(dtype))
    model.covar_module.lengthscale = torch.tensor([[[0.3, 0.6]], [[0.8, 0.4]]], dtype=dtype)
    model.likelihood.noise = torch.tensor([[0.01], [0.05]], dtype=dtype)
    model.mean_module.constant = torch.tensor([0.2, -0.1], dtype=dtype)
    return model.eval(), X.numpy(), Y.numpy()


def test_scalarized_output_data_against_numpy(dtype):
    model, X, Y = _two_outputs(dtype)
    w = np.array([-2.0, 0.5])
    data = scalarized_output_data(
        model, ScalarizedPosteriorTransform(torch.tensor(w, dtype=dtype), 1.5)
    )
    m, s = Y.mean(0), Y.std(0, ddof=1)
    c = np.array([0.2, -0.1])
    a = w * s
    S = np.linalg.norm(a)
    p = a / S
    rtol = 1e-10 if dtype == torch.float64 else 2e-5
    z = (((Y - m) / s - c) * p).sum(-1)
    np.testing.assert_allclose(data.train_Y.double().numpy().reshape(-1), z, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(
        data.noise_variance.double().numpy(), np.full(7, p**2 @ [0.01, 0.05]), rtol=rtol
    )
    assert data.outcome_scale == pytest.approx(S, rel=rtol)
    assert data.outcome_shift == pytest.approx(1.5 + w @ (m + s * c), rel=rtol)
    K = p[0] ** 2 * se_kernel([0.3, 0.6])(X, X) + p[1] ** 2 * se_kernel([0.8, 0.4])(X, X)
    np.testing.assert_allclose(data.gram().double().numpy(), K, rtol=rtol)


def test_joint_training_data_against_numpy(dtype):
    model, X, Y = _two_outputs(dtype)
    K, Sigma, y = joint_training_data(model)
    expected = np.zeros((14, 14))
    expected[:7, :7] = se_kernel([0.3, 0.6])(X, X)
    expected[7:, 7:] = se_kernel([0.8, 0.4])(X, X)
    rtol = 1e-10 if dtype == torch.float64 else 2e-5
    np.testing.assert_allclose(K.double().numpy(), expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(
        Sigma.double().numpy(), np.diag(np.repeat([0.01, 0.05], 7)), rtol=rtol
    )
    centered = ((Y - Y.mean(0)) / Y.std(0, ddof=1) - [0.2, -0.1]).T.reshape(-1)
    np.testing.assert_allclose(y.double().numpy().reshape(-1), centered, rtol=rtol, atol=rtol)


def test_task_column_inputs_keeps_gradients():
    inputs = TaskColumnInputs(Normalize(3, bounds=torch.tensor([[0.0] * 3, [2.0] * 3])), 1, 5.0, 2)
    X = torch.rand(4, 2, dtype=torch.float64, requires_grad=True)
    rows = inputs(X)
    assert rows.shape == (4, 3) and torch.equal(
        rows[:, 1], torch.full((4,), 2.0, dtype=torch.float64)
    )
    rows.sum().backward()
    torch.testing.assert_close(X.grad, torch.full_like(X, 0.5))
