"""Input checks shared by the models (clear errors instead of deep tracebacks)."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def check_tensor(value: object, name: str, dim: int | None = None) -> Tensor:
    """Check that ``value`` is a finite floating tensor (of ``dim`` dimensions)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    if dim is not None and value.dim() != dim:
        raise ValueError(f"{name} must have {dim} dimensions, got shape {tuple(value.shape)}")
    if not torch.isfinite(value).all():
        raise ValueError(f"{name} contains NaN or inf")
    return value


def check_positive(value: float | Tensor, name: str) -> float:
    """Check that ``value`` is a finite number ``> 0`` and return it as a float."""
    if isinstance(value, (str, bytes, bool)):
        raise TypeError(f"{name} must be a positive number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a positive number, got {value!r}") from error
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {number}")
    return number


def check_tasks(tasks: object, num_rows: int, num_tasks: int, name: str) -> Tensor:
    """Check per-row task indices: ``num_rows`` integers in ``[0, num_tasks - 1]``.

    Accepts a tensor of shape ``num_rows`` or ``num_rows x 1`` (integer, or a float
    tensor holding whole numbers); returns a ``long`` tensor of shape ``num_rows``.
    """
    if not isinstance(tasks, Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of task indices, got {type(tasks).__name__}"
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
