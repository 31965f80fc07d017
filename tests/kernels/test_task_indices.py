"""CheckedIndexKernel: task indices are checked before GPyTorch's ``.long()`` cast."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gpytorch.kernels import RBFKernel
from oracles import uniform_similarity

from botorch_mtucb.kernels import FixedTaskCovarianceKernel, UniformSimilarityTaskKernel

B = torch.tensor([[1.0, 0.5, 0.2], [0.5, 2.0, 0.3], [0.2, 0.3, 1.5]], dtype=torch.float64)


def _kernels():
    return [
        UniformSimilarityTaskKernel(3, omega=0.4, dtype=torch.float64),
        FixedTaskCovarianceKernel(B),
    ]


def _matrix(kernel) -> np.ndarray:
    if isinstance(kernel, FixedTaskCovarianceKernel):
        return B.numpy()
    return uniform_similarity(3, 0.4)


@pytest.mark.parametrize("index", (5, 3, -1))
@pytest.mark.parametrize("kernel", _kernels(), ids=lambda k: type(k).__name__)
def test_index_out_of_range(kernel, index):
    # Used to fail in a sparse product: "addmm: index out of row bound: 5 not between 1 and 3".
    owner = type(kernel).__name__
    good = torch.tensor([[0], [2]])
    with pytest.raises(ValueError, match=rf"x1 \(task indices of {owner}\) must lie in \[0, 2\]"):
        kernel(torch.tensor([[index]]), good).to_dense()
    with pytest.raises(ValueError, match=rf"x2 \(task indices of {owner}\) must lie in \[0, 2\]"):
        kernel(good, torch.tensor([[index]])).to_dense()


@pytest.mark.parametrize("kernel", _kernels(), ids=lambda k: type(k).__name__)
def test_fractional_and_boolean_indices(kernel):
    # 1.7 used to be truncated to task 1, True read as task 1.
    with pytest.raises(ValueError, match=r"x1 \(task indices of .*\) must hold whole-number"):
        kernel(torch.tensor([[1.7]]), torch.tensor([[0]])).to_dense()
    with pytest.raises(ValueError, match=r"x1 .* must hold whole-number"):
        kernel(torch.tensor([[float("nan")]])).to_dense()
    with pytest.raises(TypeError, match=r"x2 .* must hold integer task indices .*torch.bool"):
        kernel(torch.tensor([[0]]), torch.tensor([[True]])).to_dense()


@pytest.mark.parametrize("kernel", _kernels(), ids=lambda k: type(k).__name__)
def test_whole_float_and_integer_indices_give_the_task_covariance(kernel):
    # BoTorch's MultiTaskGP passes its task column as floats: accepted as before.
    tasks = np.array([2, 0, 1, 1])
    expected = _matrix(kernel)[np.ix_(tasks, tasks)]
    for index in (
        torch.tensor(tasks).unsqueeze(-1),
        torch.tensor(tasks, dtype=torch.float64)[:, None],
    ):
        np.testing.assert_allclose(kernel(index, index).to_dense().detach().numpy(), expected)
    batched = torch.tensor(tasks).reshape(2, 2, 1)  # batch_shape x m x 1
    values = kernel(batched, batched).to_dense().detach().numpy()
    np.testing.assert_allclose(values[1], _matrix(kernel)[np.ix_(tasks[2:], tasks[2:])])


def test_gradients_flow_through_a_product_with_a_task_column():
    data = RBFKernel(active_dims=[0]).to(torch.float64)
    product = data * UniformSimilarityTaskKernel(3, 0.4, active_dims=[1], dtype=torch.float64)
    X = torch.tensor([[0.1, 0.0], [0.4, 2.0], [0.7, 1.0]], dtype=torch.float64, requires_grad=True)
    product(X, X).to_dense().sum().backward()
    assert X.grad is not None and torch.isfinite(X.grad).all() and X.grad[:, 0].abs().sum() > 0
