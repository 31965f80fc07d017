"""Argument checks shared by the package (clear errors naming the argument).

Every public function that takes a number goes through ``as_float`` (one number),
``as_int`` (a count or index) or ``as_real_tensor`` (a number or a tensor of any shape):
strings, ``None``, booleans and complex numbers raise a ``TypeError`` naming the argument
and what is accepted, instead of being silently converted (``float("1")``,
``float(True)``) or failing deep inside torch. This module imports nothing from the
package, so the kernels, scalarizations and acquisition functions can use it too.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import torch
from torch import Tensor

_NOT_NUMBERS = (str, bytes, bool, complex, np.bool_, np.complexfloating)


def _describe(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


def _reject_non_numbers(value: object, name: str, accepted: str) -> None:
    """``TypeError`` for ``None``, strings, booleans, complex numbers and bool/complex
    tensors."""
    bad_tensor = isinstance(value, Tensor) and (value.dtype == torch.bool or value.is_complex())
    if value is None or isinstance(value, _NOT_NUMBERS) or bad_tensor:
        raise TypeError(f"{name} must be {accepted}, got {_describe(value)}")


def as_float(value: float | Tensor, name: str, finite: bool = True) -> float:
    """Convert a real number or a one-element real tensor to a float.

    Args:
        value: An int, a float (or NumPy scalar) or a one-element real tensor.
        name: The argument name used in error messages.
        finite: If ``True``, NaN and ``+-inf`` raise a ``ValueError``; if ``False``
            they are returned (the caller checks the range).

    Raises:
        TypeError: For ``None``, strings, booleans, complex numbers, bool/complex
            tensors and other non-numbers.
        ValueError: For a tensor with more than one element, or (``finite=True``) a
            NaN or infinite value.
    """
    accepted = "a real number (int, float or a one-element real tensor)"
    _reject_non_numbers(value, name, accepted)
    if isinstance(value, Tensor) and value.numel() != 1:
        raise ValueError(
            f"{name} must be a single number, got a tensor of shape {tuple(value.shape)}"
        )
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be {accepted}, got {_describe(value)}") from error
    if finite and not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {number}")
    return number


def as_int(value: int, name: str, minimum: int | None = None) -> int:
    """Check a count or an index: an integer (Python, NumPy or a 0-d integer tensor).

    Raises:
        TypeError: For booleans, floats (``2.0`` included), strings, ``None`` ...
        ValueError: If ``value < minimum``.
    """
    accepted = "an int" if minimum is None else f"an int >= {minimum}"
    _reject_non_numbers(value, name, accepted)
    try:
        number = operator.index(value)
    except TypeError as error:
        raise TypeError(f"{name} must be {accepted}, got {_describe(value)}") from error
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {number}")
    return number


def as_real_tensor(value: float | Tensor, name: str) -> Tensor:
    """A real number, sequence of numbers or real tensor as a detached floating tensor.

    Floating tensors keep their dtype; integer tensors and Python numbers become
    float64. Values are not checked (see ``check_nonnegative_tensor``).

    Raises:
        TypeError: For ``None``, strings, booleans, complex numbers, bool/complex
            tensors and anything torch cannot read as real numbers.
    """
    accepted = "a real number or a real tensor"
    _reject_non_numbers(value, name, accepted)
    if isinstance(value, Tensor):
        tensor = value.detach()
        return tensor if tensor.is_floating_point() else tensor.to(torch.float64)
    try:
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as error:
        raise TypeError(f"{name} must be {accepted}, got {_describe(value)}") from error


def check_nonnegative_tensor(value: float | Tensor, name: str) -> Tensor:
    """``as_real_tensor`` whose entries are all finite and ``>= 0``.

    Raises:
        TypeError: As ``as_real_tensor``.
        ValueError: For a NaN, infinite or negative entry.
    """
    tensor = as_real_tensor(value, name)
    if not torch.isfinite(tensor).all() or (tensor < 0).any():
        raise ValueError(f"{name} must be finite and >= 0, got {tensor}")
    return tensor


def check_delta(delta: float | Tensor) -> float:
    """``delta`` must lie in the open interval (0, 1)."""
    delta = as_float(delta, "delta")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return delta


def check_nonnegative(value: float | Tensor, name: str) -> float:
    """A finite number ``>= 0``."""
    number = as_float(value, name)
    if number < 0:
        raise ValueError(f"{name} must be >= 0, got {number}")
    return number


def check_positive(value: float | Tensor, name: str) -> float:
    """A finite number ``> 0``."""
    number = as_float(value, name)
    if number <= 0:
        raise ValueError(f"{name} must be > 0, got {number}")
    return number


def check_b(b: float | Tensor) -> float:
    """The task-similarity parameter ``b >= 0`` of paper 001 (``math.inf`` allowed).

    Raises:
        TypeError: If ``b`` is not a real number.
        ValueError: If ``b < 0`` or NaN.
    """
    value = as_float(b, "b", finite=False)
    if math.isnan(value) or value < 0:
        raise ValueError(f"b must be >= 0 (math.inf allowed), got {value}")
    return value


def check_width(width: float | Tensor) -> Tensor:
    """A confidence width: a finite number ``>= 0``, returned as a 0-d float64 tensor.

    Raises:
        TypeError: If ``width`` is not a real number or one-element real tensor.
        ValueError: If it has more than one element, is negative, NaN or infinite.
    """
    number = as_float(width, "width", finite=False)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"width must be a finite number >= 0, got {number}")
    return torch.tensor(number, dtype=torch.float64)


def check_floating_dtype(dtype: torch.dtype, name: str = "dtype") -> torch.dtype:
    """A floating ``torch.dtype`` (``torch.float32``, ``torch.float64`` ...).

    Raises:
        TypeError: If ``dtype`` is not a floating-point ``torch.dtype``.
    """
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"{name} must be a floating torch.dtype (e.g. torch.float64 or torch.float32), "
            f"got {dtype!r}"
        )
    return dtype


def check_tensor(value: object, name: str, dim: int | None = None) -> Tensor:
    """A real floating-point ``torch.Tensor`` without NaN or inf (of ``dim``
    dimensions if given), returned unchanged.

    Raises:
        TypeError: If ``value`` is not a tensor, or not a real floating-point one.
        ValueError: If it has another number of dimensions, or holds NaN or inf.
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a real floating-point tensor, got dtype {value.dtype}")
    if dim is not None and value.dim() != dim:
        raise ValueError(f"{name} must have {dim} dimensions, got shape {tuple(value.shape)}")
    if not torch.isfinite(value).all():
        raise ValueError(f"{name} must be finite (no NaN or inf), but {name} contains NaN or inf")
    return value


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
