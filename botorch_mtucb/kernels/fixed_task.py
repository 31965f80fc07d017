"""A task kernel with a fixed, user-given positive semi-definite task covariance B.

Source: paper 000, Section 2 (intrinsic coregionalization model, Gamma = k(x, x') B).
"""

from __future__ import annotations

import torch
from gpytorch.kernels import IndexKernel, Kernel
from torch import Tensor


def validate_task_covariance(
    task_covariance: Tensor, num_tasks: int | None = None, name: str = "task_covariance"
) -> Tensor:
    """Check that ``task_covariance`` is a finite, symmetric PSD matrix.

    Args:
        task_covariance: Tensor of shape ``... x n x n``.
        num_tasks: If given, the required ``n``.
        name: The argument name used in error messages.

    Returns:
        The matrix, symmetrized exactly (``(B + B^T) / 2``).

    Raises:
        TypeError: If it is not a real (integer or floating-point) tensor.
        ValueError: If it is not square, is empty (``n = 0`` or a batch dimension
            of size 0), has the wrong size, holds NaN/inf, is not
            symmetric (relative tolerance 1e-6) or has an eigenvalue below
            ``-1e-8 * max(1, largest eigenvalue)`` (float64) / ``-1e-5 * ...`` (float32).
    """
    if not isinstance(task_covariance, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(task_covariance).__name__}")
    if task_covariance.dtype == torch.bool or task_covariance.is_complex():
        raise TypeError(f"{name} must be a real tensor, got dtype {task_covariance.dtype}")
    if task_covariance.dim() < 2 or task_covariance.shape[-1] != task_covariance.shape[-2]:
        raise ValueError(
            f"{name} must be a square n x n matrix, got shape {tuple(task_covariance.shape)}"
        )
    if task_covariance.numel() == 0:
        raise ValueError(
            f"{name} must be n x n with n >= 1 (one row per task) and no empty batch "
            f"dimension, got shape {tuple(task_covariance.shape)}"
        )
    if num_tasks is not None and task_covariance.shape[-1] != num_tasks:
        raise ValueError(
            f"{name} must be {num_tasks} x {num_tasks} (the number of tasks), "
            f"got {tuple(task_covariance.shape)}"
        )
    if not torch.isfinite(task_covariance).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    scale = task_covariance.abs().amax().clamp_min(1.0)
    asym = (task_covariance - task_covariance.transpose(-1, -2)).abs().amax()
    if asym > 1e-6 * scale:
        raise ValueError(f"{name} must be symmetric, max |B - B^T| = {asym.item():.3g}")
    sym = 0.5 * (task_covariance + task_covariance.transpose(-1, -2))
    eigenvalues = torch.linalg.eigvalsh(sym.double())
    tol = (1e-8 if sym.dtype == torch.float64 else 1e-5) * eigenvalues.amax().clamp_min(1.0)
    if (eigenvalues < -tol).any():
        raise ValueError(
            f"{name} must be positive semi-definite, smallest eigenvalue "
            f"{eigenvalues.amin().item():.3g}"
        )
    return sym


class FixedTaskCovarianceKernel(IndexKernel):
    r"""Task kernel returning a fixed PSD matrix ``B`` (no trainable parameters).

    .. math::
        k(i, j) = B_{ij}

    With a data kernel ``k`` this gives the ICM kernel ``Gamma(x, x') = k(x, x') B``
    (paper 000, Section 2). Usable wherever GPyTorch's ``IndexKernel`` is (the task
    factor of ``MultiTaskGP``'s product kernel, ``MultitaskKernel.task_covar_module``).

    Example:
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 2.0]], dtype=torch.float64)
        >>> task_kernel = FixedTaskCovarianceKernel(B)
        >>> task_kernel.covar_matrix  # equals B
    """

    def __init__(self, task_covariance: Tensor, **kwargs) -> None:
        """Build the kernel.

        Args:
            task_covariance: ``n x n`` (or ``batch_shape x n x n``) PSD matrix.
            **kwargs: Passed to ``gpytorch.kernels.Kernel``.

        Raises:
            TypeError, ValueError: See ``validate_task_covariance``.
        """
        task_covariance = validate_task_covariance(task_covariance)
        kwargs.setdefault("batch_shape", task_covariance.shape[:-2])
        Kernel.__init__(self, **kwargs)
        self.num_tasks = task_covariance.shape[-1]
        self.register_buffer("task_covariance", task_covariance.clone())

    def _eval_covar_matrix(self) -> Tensor:
        return self.task_covariance

    @property
    def covar_matrix(self) -> Tensor:
        """The task covariance ``B``, shape ``batch_shape x n x n``."""
        return self.task_covariance
