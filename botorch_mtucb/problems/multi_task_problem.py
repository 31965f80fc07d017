"""A vector-valued test problem with the multi-task kernel the algorithms assume.

Paper 000's problems (Section 5): an objective ``f: X -> R^n``, a domain (finite or a
box), the noise, the ICM kernel ``Gamma = k B`` given to MT-KB / MT-BKB and the bound
``b`` on ``||f||_Gamma`` used in their widths.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from gpytorch.kernels import Kernel
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain


@dataclass
class MultiTaskProblem:
    """A vector objective ``f: X -> R^n`` and everything the algorithms are given.

    Attributes:
        name: Short name.
        domain: ``FiniteDomain`` or ``BoxDomain`` (inputs ``d``-dimensional).
        objective_function: Noise-free ``f``: ``... x d`` -> ``... x n``.
        data_kernel: The scalar kernel ``k`` of the ICM kernel (unit variance).
        task_covariance: ``B`` (``n x n``, PSD).
        noise_std: ``sigma``, the sub-Gaussian noise level given to the widths.
        rkhs_norm_bound: ``b``, the bound on ``||f||_Gamma`` given to MT-KB / MT-BKB.
        independent_rkhs_norm_bound: The bound given to the independent-task
            baselines (IT-KB, IT-BKB); paper 000 uses the same ``b`` for every method.
        reference_point: ``z`` of the Chebyshev scalarization (``n``).
        regret_points: ``M x d`` points over which optima are taken (the finite
            domain itself, or a dense grid of the box).
        regularization: The regularization ``eta`` (paper 000: 0.1).
        observation_function: ``(x, generator) -> y`` for real-data noise; ``None``
            adds ``N(0, noise_std^2 I)`` to ``f(x)``.
        notes: Documentation of the choices made (written into summaries).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.problems import MultiTaskProblem
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> points = torch.linspace(0, 1, 11, dtype=torch.float64).unsqueeze(-1)
        >>> problem = MultiTaskProblem(
        ...     name="two-sines",
        ...     domain=FiniteDomain(points),
        ...     objective_function=lambda X: torch.cat([torch.sin(3 * X), torch.cos(3 * X)], -1),
        ...     data_kernel=RBFKernel(),
        ...     task_covariance=torch.eye(2, dtype=torch.float64),
        ...     noise_std=0.1,
        ...     rkhs_norm_bound=2.0,
        ...     reference_point=torch.full((2,), -1.0, dtype=torch.float64),
        ...     regret_points=points,
        ... )
        >>> problem.num_tasks, problem.observe(points[3], torch.Generator().manual_seed(0)).shape
        (2, torch.Size([2]))
    """

    name: str
    domain: FiniteDomain | BoxDomain
    objective_function: Callable[[Tensor], Tensor]
    data_kernel: Kernel
    task_covariance: Tensor
    noise_std: float
    rkhs_norm_bound: float
    reference_point: Tensor
    regret_points: Tensor
    independent_rkhs_norm_bound: float | None = None
    regularization: float = 0.1
    observation_function: Callable[[Tensor, torch.Generator], Tensor] | None = None
    notes: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.independent_rkhs_norm_bound is None:
            self.independent_rkhs_norm_bound = self.rkhs_norm_bound

    @property
    def num_tasks(self) -> int:
        """The number of tasks ``n``."""
        return self.task_covariance.shape[-1]

    def objective(self, X: Tensor) -> Tensor:
        """``f(X)``: ``... x d`` -> ``... x n``."""
        return self.objective_function(X)

    def observe(self, x: Tensor, generator: torch.Generator) -> Tensor:
        """A noisy observation ``y = f(x) + eps`` at one point ``x`` (``d``) -> ``n``."""
        if self.observation_function is not None:
            return self.observation_function(x, generator)
        value = self.objective(x.reshape(1, -1)).reshape(-1)
        noise = torch.randn(value.shape, generator=generator, dtype=value.dtype)
        return value + self.noise_std * noise.to(value.device)

    def make_data_kernel(self) -> Kernel:
        """A fresh copy of the scalar kernel ``k`` (each model owns its kernel)."""
        return copy.deepcopy(self.data_kernel)


def kernel_matrix(kernel: Kernel, X: Tensor) -> Tensor:
    """``k(X, X)`` as a dense tensor, without gradients.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.problems.multi_task_problem import kernel_matrix
        >>> kernel_matrix(RBFKernel(), torch.zeros(2, 1))
        tensor([[1., 1.],
                [1., 1.]])
    """
    with torch.no_grad():
        return kernel(X, X).to_dense()


def finite_domain_rkhs_norm(values: Tensor, gram: Tensor, task_covariance: Tensor) -> float:
    r"""Exact ``||f||_Gamma`` of ``f`` given on a finite domain, ``Gamma = k B``.

    ``||f||^2 = vec(F)^T G^{-1} vec(F)`` with ``G = K kron B`` (``F``: ``N x n``, rows
    are points), the minimum-norm interpolant's norm. ``G`` must be invertible.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems.multi_task_problem import finite_domain_rkhs_norm
        >>> F = torch.tensor([[3.0], [4.0]], dtype=torch.float64)  # 2 points, 1 task
        >>> finite_domain_rkhs_norm(F, torch.eye(2, dtype=torch.float64), torch.eye(1))
        5.0
    """
    big_gram = torch.kron(gram, task_covariance)
    chol = psd_safe_cholesky(big_gram)
    solved = torch.linalg.solve_triangular(chol, values.reshape(-1, 1), upper=False)
    return float(solved.square().sum().sqrt())


def heuristic_rkhs_norm_bound(values: Tensor, task_covariance: Tensor) -> float:
    r"""Paper 000's choice for the RKHS test function (Section 5):
    ``b = max_x ||f(x)||_2 / kappa`` with ``kappa`` the largest eigenvalue of ``B``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems.multi_task_problem import heuristic_rkhs_norm_bound
        >>> values = torch.tensor([[3.0, 4.0]], dtype=torch.float64)  # ||f(x)|| = 5
        >>> heuristic_rkhs_norm_bound(values, 2 * torch.eye(2, dtype=torch.float64))
        2.5
    """
    kappa = torch.linalg.eigvalsh(task_covariance).amax()
    return float(values.norm(dim=-1).amax() / kappa)
