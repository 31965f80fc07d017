r"""Ground truths of exactly known RKHS norm for the ``coverage`` benchmark.

A ground truth is a finite kernel expansion ``f(x) = sum_j Gamma(z_j, x) c_j`` with the
ICM kernel ``Gamma = k B`` (``n`` tasks; ``n = 1, B = [1]`` is the single-task case).
By the reproducing property its norm in the vector-valued RKHS ``H_Gamma`` (paper 000,
Section 2) is

.. math::
    \|f\|_\Gamma^2 = \sum_{j, l} c_j^\top \Gamma(z_j, z_l) c_l
    = \operatorname{tr}(C^\top K_Z C B),

exactly, with ``K_Z = [k(z_j, z_l)]`` and ``C`` the ``m x n`` coefficients. With
``B = I`` the tasks are independent scalar functions ``f_i = sum_j c_ji k(z_j, .)`` of
norms ``||f_i||_k = sqrt(c_i^T K_Z c_i)`` (paper 001's assumption ``||f_i|| <= B``) and
``||f_i - f_avg||`` is the norm of the expansion with the centred coefficients
(paper 001, eq. 5).

Each draw follows paper 002, Section 7: ``z_j`` uniform in ``[0, 1]^d``, Gaussian
coefficients, rescaled so that the norm is exactly the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.utils.checks import check_positive

DTYPE = torch.float64


@dataclass(frozen=True)
class KernelExpansion:
    r"""``f(x) = sum_j Gamma(z_j, x) c_j = k(x, Z) C B`` (``n`` outputs) and its norms.

    Attributes:
        kernel: The scalar kernel ``k`` (fixed, float64).
        centres: ``m x d`` points ``z_j``.
        coefficients: ``m x n`` coefficients ``C`` (row ``j`` is ``c_j``).
        task_covariance: ``n x n`` PSD ``B`` of ``Gamma = k B``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_truths import KernelExpansion
        >>> from botorch_mtucb.problems import make_kernel
        >>> f = KernelExpansion(make_kernel("rbf", 0.2), torch.zeros(1, 1, dtype=torch.float64),
        ...                     torch.tensor([[3.0]], dtype=torch.float64),
        ...                     torch.eye(1, dtype=torch.float64))
        >>> f.rkhs_norm, f(torch.zeros(2, 1, dtype=torch.float64)).tolist()  # 3 k(0, 0) = 3
        (3.0, [[3.0], [3.0]])
    """

    kernel: Kernel
    centres: Tensor
    coefficients: Tensor
    task_covariance: Tensor

    def __call__(self, X: Tensor) -> Tensor:
        """``f(X)``: ``N x d`` -> ``N x n`` (float64)."""
        with torch.no_grad():
            cross = self.kernel(X.to(DTYPE), self.centres).to_dense()  # N x m
        return cross @ self.coefficients @ self.task_covariance

    def _gram(self) -> Tensor:
        with torch.no_grad():
            return self.kernel(self.centres, self.centres).to_dense()

    @property
    def rkhs_norm(self) -> float:
        """``||f||_Gamma = sqrt(tr(C^T K_Z C B))``, the norm in ``H_Gamma``."""
        C = self.coefficients
        return float(torch.trace(C.T @ self._gram() @ C @ self.task_covariance).sqrt())

    def task_norms(self) -> Tensor:
        """``||f_i||_k = sqrt(c_i^T K_Z c_i)`` for each task (``n``; for ``B = I``)."""
        C = self.coefficients
        return (C * (self._gram() @ C)).sum(0).sqrt()

    def rescaled(self, factor: float) -> KernelExpansion:
        """``factor * f`` (its norms are ``|factor|`` times ``f``'s)."""
        return KernelExpansion(
            self.kernel, self.centres, factor * self.coefficients, self.task_covariance
        )

    def task_deviation(self) -> float:
        r"""Paper 001's ``epsilon = max_i ||f_i - f_avg|| / max_i ||f_i||`` (eq. 5, with
        ``B = max_i ||f_i||``; for ``B = I``)."""
        centred = self.coefficients - self.coefficients.mean(-1, keepdim=True)
        deviation = KernelExpansion(self.kernel, self.centres, centred, self.task_covariance)
        return float(deviation.task_norms().max() / self.task_norms().max())


def sample_expansion(
    kernel: Kernel,
    dim: int,
    rkhs_norm: float,
    task_covariance: Tensor,
    generator: torch.Generator,
    num_centres: int = 20,
) -> KernelExpansion:
    r"""A ground truth of norm ``||f||_Gamma = rkhs_norm`` in ``H_Gamma``, ``Gamma = k B``:
    ``z_j ~ U[0, 1]^d``, ``c_j ~ N(0, I_n)``, ``C`` rescaled (paper 002, Section 7).

    Raises:
        ValueError: If ``rkhs_norm <= 0``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_expansion
        >>> from botorch_mtucb.problems import make_kernel
        >>> f = sample_expansion(make_kernel("rbf", 0.2), 1, 2.0,
        ...                      torch.eye(3, dtype=torch.float64), torch.Generator())
        >>> round(f.rkhs_norm, 12), f.coefficients.shape
        (2.0, torch.Size([20, 3]))
    """
    rkhs_norm = check_positive(rkhs_norm, "rkhs_norm")
    centres, coefficients = _draw(num_centres, dim, task_covariance.shape[-1], generator)
    draft = KernelExpansion(kernel, centres, coefficients, task_covariance.to(DTYPE))
    return draft.rescaled(rkhs_norm / draft.rkhs_norm)


def sample_related_tasks(
    kernel: Kernel,
    dim: int,
    num_tasks: int,
    rkhs_norm: float,
    deviation_scale: float,
    generator: torch.Generator,
    num_centres: int = 20,
) -> KernelExpansion:
    r"""Paper 001's tasks: ``f_i = g + s h_i`` on shared centres, rescaled so that
    ``max_i ||f_i||_k = rkhs_norm`` exactly (``B = I``; ``epsilon`` from
    ``task_deviation()``).

    ``g`` and the ``h_i`` have coefficients ``N(0, I_m)``; ``s = deviation_scale``.

    Raises:
        ValueError: If ``rkhs_norm <= 0``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_related_tasks
        >>> from botorch_mtucb.problems import make_kernel
        >>> f = sample_related_tasks(make_kernel("rbf", 0.2), 1, 3, 1.0, 0.3, torch.Generator())
        >>> round(float(f.task_norms().max()), 12), 0 < f.task_deviation() < 2
        (1.0, True)
    """
    rkhs_norm = check_positive(rkhs_norm, "rkhs_norm")
    centres, common = _draw(num_centres, dim, 1, generator)
    deviations = torch.randn(num_centres, num_tasks, generator=generator, dtype=DTYPE)
    coefficients = common + deviation_scale * deviations
    draft = KernelExpansion(kernel, centres, coefficients, torch.eye(num_tasks, dtype=DTYPE))
    return draft.rescaled(rkhs_norm / float(draft.task_norms().max()))


def _draw(num_centres: int, dim: int, columns: int, generator: torch.Generator):
    """Centres uniform in ``[0, 1]^d`` and ``N(0, 1)`` coefficients (``m x columns``)."""
    centres = torch.rand(num_centres, dim, generator=generator, dtype=DTYPE)
    return centres, torch.randn(num_centres, columns, generator=generator, dtype=DTYPE)
