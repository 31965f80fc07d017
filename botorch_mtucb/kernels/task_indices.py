"""GPyTorch's ``IndexKernel`` with its task indices checked: the base of the task kernels.

GPyTorch casts task indices with ``.long()``: ``1.7`` silently becomes task 1, ``True``
task 1, and an index out of range fails deep inside a sparse product (an ``addmm``
``RuntimeError``). The task kernels of this package check them instead.
"""

from __future__ import annotations

from gpytorch.kernels import IndexKernel
from linear_operator.operators import LinearOperator
from torch import Tensor

from botorch_mtucb.kernels.task_checks import check_task_indices


class CheckedIndexKernel(IndexKernel):
    r"""An ``IndexKernel`` (``k(i, j) = B_ij``) whose task indices are checked.

    The indices ``x1``, ``x2`` (``... x m x 1``) must be integers in
    ``[0, num_tasks - 1]``: an integer tensor, or a floating one holding whole numbers
    (the task column BoTorch's ``MultiTaskGP`` passes). The check is one vectorised
    pass per call (no copy of the covariance). Subclasses set ``num_tasks`` and
    implement ``_eval_covar_matrix``.

    Raises:
        TypeError: For boolean or complex indices (on evaluation).
        ValueError: For an index out of range, not a whole number or not finite.

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels import UniformSimilarityTaskKernel
        >>> from botorch_mtucb.kernels.task_indices import CheckedIndexKernel
        >>> kernel = UniformSimilarityTaskKernel(num_tasks=2, omega=0.5)
        >>> isinstance(kernel, CheckedIndexKernel)
        True
        >>> kernel(torch.tensor([[1.0]]), torch.tensor([[0], [1]])).to_dense().detach()
        tensor([[0.2500, 0.7500]])
        >>> try:
        ...     kernel(torch.tensor([[2]])).to_dense()
        ... except ValueError as error:
        ...     print(error)
        x1 (task indices of UniformSimilarityTaskKernel) must lie in [0, 1], got values in [2, 2]
    """

    num_tasks: int

    def forward(self, i1: Tensor, i2: Tensor, **params) -> LinearOperator:
        """GPyTorch's ``IndexKernel.forward`` on the checked indices."""
        owner = type(self).__name__
        check_task_indices(i1, self.num_tasks, f"x1 (task indices of {owner})")
        if i2 is not i1:
            check_task_indices(i2, self.num_tasks, f"x2 (task indices of {owner})")
        return super().forward(i1, i2, **params)
