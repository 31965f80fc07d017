"""SumOfSeparableKernels: Gamma(x, x') = sum_j k_j(x, x') B_j (paper 000, Section 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import NUM_TASKS, build_case, tolerances
from gpytorch.kernels import MaternKernel, RBFKernel
from oracles import make_rbf

from botorch_mtucb.kernels import SumOfSeparableKernels, UniformSimilarityTaskKernel


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _kernel(case) -> SumOfSeparableKernels:
    return SumOfSeparableKernels(case.kernels, case.task_covariances)


@pytest.mark.parametrize("name", ("icm", "uniform_0.4", "sum", "independent"))
@pytest.mark.parametrize("batch", ((), (2,)), ids=str)
def test_covariances_match_numpy(name, batch, dtype):
    case = build_case(name, dtype)
    kernel = _kernel(case)
    assert kernel.num_tasks == NUM_TASKS
    assert kernel.num_terms == len(case.kernels)
    generator = torch.Generator().manual_seed(0)
    X1 = torch.rand(*batch, 3, 2, generator=generator, dtype=torch.float64).to(dtype)
    X2 = torch.rand(*batch, 4, 2, generator=generator, dtype=torch.float64).to(dtype)
    tasks1, tasks2 = torch.tensor([2, 0, 2]), torch.tensor([1, 1, 0, 2])
    tol = tolerances(dtype)
    full = kernel.full_covariance(X1, X2)
    observation = kernel.observation_covariance(X1, tasks1, X2, tasks2)
    block = kernel.task_block_covariance(X1, X2, tasks2)
    diagonal = kernel.diagonal_blocks(X1)
    assert full.shape == (*batch, 3, NUM_TASKS, 4, NUM_TASKS)
    assert observation.shape == (*batch, 3, 4)
    assert block.shape == (*batch, 3, NUM_TASKS, 4)
    assert diagonal.shape == (*batch, 3, NUM_TASKS, NUM_TASKS)
    for index in np.ndindex(*batch):
        x1, x2 = _np(X1[index]), _np(X2[index])
        gamma = case.oracle.gamma(x1, x2)  # 3 x n x 4 x n
        np.testing.assert_allclose(_np(full[index]), gamma, **tol)
        np.testing.assert_allclose(
            _np(observation[index]),
            case.oracle.observation_gram(x1, tasks1.numpy(), x2, tasks2.numpy()),
            **tol,
        )
        np.testing.assert_allclose(
            _np(block[index]), gamma[:, :, np.arange(4), tasks2.numpy()], **tol
        )
        self_gamma = case.oracle.gamma(x1, x1)
        np.testing.assert_allclose(
            _np(diagonal[index]), np.stack([self_gamma[a, :, a] for a in range(3)]), **tol
        )


def test_task_kernel_module_is_evaluated():
    task_kernel = UniformSimilarityTaskKernel(3, omega=0.25).double()
    kernel = SumOfSeparableKernels(make_rbf([0.5]), task_kernel)
    expected = 0.25 * np.eye(3) + 0.75 / 3
    np.testing.assert_allclose(_np(kernel.task_covariances[0]), expected, rtol=1e-12)


def test_bad_input():
    rbf = make_rbf([0.5])
    with pytest.raises(ValueError, match="task_covariance\\[0\\] must be positive"):
        SumOfSeparableKernels(rbf, -torch.eye(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="batched task kernels"):
        SumOfSeparableKernels(
            rbf, UniformSimilarityTaskKernel(2, torch.tensor([0.2, 0.3]), torch.Size([2]))
        )
    with pytest.raises(ValueError, match="non-empty"):
        SumOfSeparableKernels([], [])
    with pytest.raises(TypeError, match="data_kernel\\[1\\]"):
        SumOfSeparableKernels([rbf, "k"], [torch.eye(2), torch.eye(2)])
    with pytest.raises(TypeError, match="data_kernel"):
        SumOfSeparableKernels(3, torch.eye(2))
    with pytest.raises(TypeError, match="task_covariance"):
        SumOfSeparableKernels(rbf, 3.0)


def test_state_holds_the_data_kernels_classes():
    """An RBF state has a Matern kernel's parameter names: the classes are the extra
    state and a state of others is refused; a state saved without them loads."""
    B = torch.eye(2)
    rbf = SumOfSeparableKernels([RBFKernel(), RBFKernel()], [B, B])
    state = rbf.state_dict()
    assert state["_extra_state"] == {
        "data_kernels": [".=ModuleList"] + [
            entry
            for j in (0, 1)
            for entry in (f"{j}=RBFKernel", f"{j}.raw_lengthscale_constraint=Positive",
                          f"{j}.raw_lengthscale_constraint._transform=Softplus")
        ]
    }  # fmt: skip
    matern = SumOfSeparableKernels([RBFKernel(), MaternKernel()], [B, B])
    with pytest.raises(ValueError, match=r"1=RBFKernel where this one has 1=MaternKernel"):
        matern.load_state_dict(state)
    old = {k: v for k, v in state.items() if k != "_extra_state"}
    target = SumOfSeparableKernels([RBFKernel(), RBFKernel()], [2.0 * B, B])
    assert not target.load_state_dict(old).missing_keys
    assert torch.equal(target.task_covariances, rbf.task_covariances)
