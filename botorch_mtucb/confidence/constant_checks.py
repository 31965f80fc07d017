"""Checks of the papers' constants: the confidence level ``delta``, the sketch accuracy
``eps``, paper 001's task deviation ``epsilon`` and finite widths, and the regularization
``c`` of ``Tr(K (K + c I)^{-1})``.

Errors name the argument and the accepted range (``delta`` and ``eps`` in ``(0, 1)``, the
task deviation in ``[0, 2]``, ``c > 0`` with ``math.inf`` allowed).
"""

from __future__ import annotations

import math

from torch import Tensor

from botorch_mtucb.utils.checks import as_float


def check_delta(delta: float | Tensor) -> float:
    """``delta`` must lie in the open interval (0, 1).

    Example:
        >>> from botorch_mtucb.confidence.constant_checks import check_delta
        >>> check_delta(0.05)
        0.05
    """
    return _in_open_unit_interval(delta, "delta", "delta")


def _in_open_unit_interval(value: float | Tensor, name: str, label: str) -> float:
    """``as_float(value, name)`` in ``(0, 1)``; the error names it as ``label``."""
    number = as_float(value, name)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{label} must lie in (0, 1), got {number}")
    return number


def check_eps(eps: float | Tensor) -> float:
    """The sketch accuracy ``eps`` must lie in the open interval (0, 1).

    Example:
        >>> from botorch_mtucb.confidence.constant_checks import check_eps
        >>> check_eps(0.5)
        0.5
    """
    return _in_open_unit_interval(eps, "eps", "eps (the sketch accuracy epsilon)")


def check_finite_width(width: float) -> None:
    """A width that must be finite and ``>= 0`` (paper 001's widths at ``b = inf``).

    Raises:
        ValueError: If ``width`` is NaN, infinite or negative.

    Example:
        >>> from botorch_mtucb.confidence.constant_checks import check_finite_width
        >>> check_finite_width(2.0)  # returns None; raises for inf, NaN or < 0
    """
    if not math.isfinite(width) or width < 0:
        raise ValueError(
            f"the width must be finite and >= 0, got {width} (at b = inf the widths are "
            "finite only for task_deviation = 0)"
        )


def check_task_deviation(task_deviation: float | Tensor) -> float:
    """The task deviation ``epsilon`` of paper 001 (eq. 5), a number in ``[0, 2]``.

    Raises:
        TypeError: If it is not a real number.
        ValueError: If it lies outside ``[0, 2]``.

    Example:
        >>> from botorch_mtucb.confidence.constant_checks import check_task_deviation
        >>> check_task_deviation(0.3)
        0.3
    """
    value = as_float(task_deviation, "task_deviation")
    if not 0.0 <= value <= 2.0:
        raise ValueError(
            f"task_deviation (epsilon of paper 001, eq. 5) must lie in [0, 2], got {value}"
        )
    return value


def check_trace_regularization(value: float | Tensor, name: str) -> float:
    """A regularization ``c > 0`` of ``Tr(K (K + c I)^{-1})``; ``math.inf`` allowed.

    Example:
        >>> import math
        >>> from botorch_mtucb.confidence.constant_checks import check_trace_regularization
        >>> check_trace_regularization(math.inf, "c")
        inf
    """
    c = as_float(value, name, finite=False)
    if math.isnan(c) or c <= 0:
        raise ValueError(f"{name} must be > 0 (math.inf allowed), got {c}")
    return c
