"""Argument checks for the confidence layer (clear ValueErrors, never silent NaNs)."""

from __future__ import annotations

import math

from torch import Tensor


def as_float(value: float | Tensor, name: str) -> float:
    """Convert a number or 0-d tensor to a finite float."""
    if isinstance(value, (str, bytes, bool)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a number, got {value!r}") from error
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {number}")
    return number


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
