"""Checks of the task structure: task indices, the number of tasks, task covariances
``B`` and their diagonal, and paper 001's task-similarity parameter ``b``.

The task kernels, the models, the confidence widths and the bandits all read task
indices and task covariances, so these checks sit in the kernels layer, the lowest one
that uses them.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.utils.checks import as_float, as_int, check_tensor


def check_b(b: float | Tensor) -> float:
    """The task-similarity parameter ``b >= 0`` of paper 001 (``math.inf`` allowed).

    Raises:
        TypeError: If ``b`` is not a real number.
        ValueError: If ``b < 0`` or NaN.

    Example:
        >>> import math
        >>> from botorch_mtucb.kernels.task_checks import check_b
        >>> check_b(math.inf)
        inf
    """
    value = as_float(b, "b", finite=False)
    if math.isnan(value) or value < 0:
        raise ValueError(f"b must be >= 0 (math.inf allowed), got {value}")
    return value


def check_tasks(tasks: object, num_rows: int, num_tasks: int, name: str) -> Tensor:
    """Check per-row task indices: ``num_rows`` integers in ``[0, num_tasks - 1]``.

    Accepts a tensor of shape ``num_rows`` or ``num_rows x 1`` (integer, or a float
    tensor holding whole numbers; booleans and complex numbers are refused with a
    ``TypeError``); returns a ``long`` tensor of shape ``num_rows``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels.task_checks import check_tasks
        >>> check_tasks(torch.tensor([[0.0], [2.0]]), 2, 3, "train_tasks")
        tensor([0, 2])
    """
    if not isinstance(tasks, Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of task indices, got {type(tasks).__name__}"
        )
    if tasks.dtype == torch.bool or tasks.is_complex():
        raise TypeError(
            f"{name} must hold integer task indices (an integer tensor, or a float tensor of "
            f"whole numbers), got a {tasks.dtype} tensor"
        )
    if tasks.dim() == 2 and tasks.shape[-1] == 1:
        tasks = tasks.squeeze(-1)
    if tasks.dim() != 1 or tasks.shape[0] != num_rows:
        raise ValueError(
            f"{name} must have shape ({num_rows},) (one task index per row), "
            f"got {tuple(tasks.shape)}"
        )
    if tasks.is_floating_point():
        if not torch.isfinite(tasks).all() or (tasks != tasks.round()).any():
            raise ValueError(f"{name} must hold whole-number task indices")
    long_tasks = tasks.long()
    if num_rows and (long_tasks.min() < 0 or long_tasks.max() >= num_tasks):
        raise ValueError(
            f"{name} must lie in [0, {num_tasks - 1}], got values in "
            f"[{long_tasks.min().item()}, {long_tasks.max().item()}]"
        )
    return long_tasks


def check_task_variances(task_variances: Tensor) -> Tensor:
    """``task_variances`` (the diagonal of ``B``) as a flat float64 tensor.

    Raises:
        ValueError: If any variance is not finite or not positive.

    Example:
        >>> from botorch_mtucb.kernels.task_checks import check_task_variances
        >>> check_task_variances([1.0, 2.0])
        tensor([1., 2.], dtype=torch.float64)
    """
    task_variances = torch.as_tensor(task_variances, dtype=torch.float64).reshape(-1)
    if (task_variances <= 0).any() or not torch.isfinite(task_variances).all():
        raise ValueError("task_variances must be finite and > 0")
    return task_variances


def check_task_covariance(
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

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels.task_checks import check_task_covariance
        >>> check_task_covariance(torch.tensor([[1.0, 0.5], [0.5, 1.0]]), num_tasks=2)
        tensor([[1.0000, 0.5000],
                [0.5000, 1.0000]])
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


def check_num_tasks(num_tasks: int) -> int:
    """The number of tasks: an int ``>= 1``.

    Raises:
        TypeError: If ``num_tasks`` is not an int.
        ValueError: If ``num_tasks < 1``.

    Example:
        >>> from botorch_mtucb.kernels.task_checks import check_num_tasks
        >>> check_num_tasks(3)
        3
    """
    return as_int(num_tasks, "num_tasks", 1)


def check_task_data(train_X: Tensor, train_tasks: Tensor, num_tasks: int) -> Tensor:
    """``train_X`` (``t x d``, finite) and its task indices as a ``long`` tensor ``t``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels.task_checks import check_task_data
        >>> check_task_data(torch.zeros(2, 1), torch.tensor([1, 0]), num_tasks=2)
        tensor([1, 0])
    """
    check_tensor(train_X, "train_X", dim=2)
    return check_tasks(train_tasks, train_X.shape[0], num_tasks, "train_tasks")


def check_task_indices(
    indices: object, num_tasks: int, name: str, num_rows: int | None = None
) -> Tensor:
    """Task indices in ``[0, num_tasks - 1]`` as a ``long`` tensor; booleans refused.

    ``check_tasks`` for a tensor of any shape (``num_rows=None``: the shape is kept) or
    for one index per row (``num_rows`` given: shape ``num_rows`` or ``num_rows x 1``,
    returned flat). Integer tensors and floating tensors of whole numbers (BoTorch's
    ``MultiTaskGP`` passes its task column as floats) are accepted.

    Raises:
        TypeError: If ``indices`` is not a tensor, or is a boolean or complex one
            (``True`` is not the task index 1).
        ValueError: For a non-whole or non-finite float, an index out of range, or
            (``num_rows`` given) the wrong shape.

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels.task_checks import check_task_indices
        >>> check_task_indices(torch.tensor([[0.0], [2.0]]), 3, "x1")
        tensor([[0],
                [2]])
        >>> try:
        ...     check_task_indices(torch.tensor([True, False]), 3, "train_tasks")
        ... except TypeError as error:
        ...     print(str(error)[:50])
        train_tasks must hold integer task indices (an int
    """
    if num_rows is not None:
        return check_tasks(indices, num_rows, num_tasks, name)
    if not isinstance(indices, Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of task indices, got {type(indices).__name__}"
        )
    flat = check_tasks(indices.reshape(-1), indices.numel(), num_tasks, name)
    return flat.reshape(indices.shape)
