"""A task kernel with a fixed, user-given positive semi-definite task covariance B.

Source: paper 000, Section 2 (intrinsic coregionalization model, Gamma = k(x, x') B).
"""

from __future__ import annotations

from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.kernels.task_checks import check_task_covariance
from botorch_mtucb.kernels.task_indices import CheckedIndexKernel


class FixedTaskCovarianceKernel(CheckedIndexKernel):
    r"""Task kernel returning a fixed PSD matrix ``B`` (no trainable parameters).

    .. math::
        k(i, j) = B_{ij}

    With a data kernel ``k`` this gives the ICM kernel ``Gamma(x, x') = k(x, x') B``
    (paper 000, Section 2). Usable wherever GPyTorch's ``IndexKernel`` is (the task
    factor of ``MultiTaskGP``'s product kernel, ``MultitaskKernel.task_covar_module``);
    task indices are checked as in ``CheckedIndexKernel``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels import FixedTaskCovarianceKernel
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 2.0]], dtype=torch.float64)
        >>> task_kernel = FixedTaskCovarianceKernel(B)
        >>> torch.equal(task_kernel.covar_matrix, B)
        True
        >>> task_kernel(torch.tensor([[0], [1]])).to_dense()  # k(i, j) = B_ij
        tensor([[1.0000, 0.5000],
                [0.5000, 2.0000]], dtype=torch.float64)
    """

    def __init__(self, task_covariance: Tensor, **kwargs) -> None:
        """Build the kernel.

        Args:
            task_covariance: ``n x n`` (or ``batch_shape x n x n``) PSD matrix.
            **kwargs: Passed to ``gpytorch.kernels.Kernel``.

        Raises:
            TypeError, ValueError: See ``check_task_covariance``.
        """
        task_covariance = check_task_covariance(task_covariance)
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
