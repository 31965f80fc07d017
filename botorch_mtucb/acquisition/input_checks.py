"""Checks of an analytic acquisition's inputs: candidates ``batch_shape x 1 x d``
(``q = 1``) and a fixed confidence width.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.utils.checks import as_float


def check_width(width: float | Tensor) -> Tensor:
    """A confidence width: a finite number ``>= 0``, returned as a 0-d float64 tensor.

    Raises:
        TypeError: If ``width`` is not a real number or one-element real tensor.
        ValueError: If it has more than one element, is negative, NaN or infinite.

    Example:
        >>> from botorch_mtucb.acquisition.input_checks import check_width
        >>> check_width(2)
        tensor(2., dtype=torch.float64)
    """
    number = as_float(width, "width", finite=False)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"width must be a finite number >= 0, got {number}")
    return torch.tensor(number, dtype=torch.float64)


def check_candidates(X: object, dim: int | None = None) -> Tensor:
    """Candidates of an analytic acquisition: a tensor ``batch_shape x 1 x d`` (``q = 1``).

    A 2-d ``X`` is BoTorch's ``q x d`` (one batch), so it must be ``1 x d``.

    Raises:
        TypeError: If ``X`` is not a tensor.
        ValueError: If ``X`` has fewer than 2 dimensions, ``q != 1`` (q = 1 is required:
            the acquisitions score one point per batch entry), or (``dim`` given) its
            last dimension is not ``dim``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.acquisition.input_checks import check_candidates
        >>> check_candidates(torch.zeros(5, 1, 2), dim=2).shape
        torch.Size([5, 1, 2])
        >>> try:
        ...     check_candidates(torch.zeros(5, 3, 2))
        ... except ValueError as error:
        ...     print(str(error)[:58])
        X must have shape batch_shape x 1 x d: q = 1 is required (
    """
    shape = f"batch_shape x 1 x {'d' if dim is None else dim}"
    if not isinstance(X, Tensor):
        raise TypeError(f"X must be a torch.Tensor of shape {shape}, got {type(X).__name__}")
    if X.dim() < 2:
        raise ValueError(
            f"X must have shape {shape} (one candidate per batch entry; a single point x "
            f"is x.reshape(1, 1, -1)), got shape {tuple(X.shape)}"
        )
    q = X.shape[-2]
    if q != 1:
        hint = " (for one candidate per row, pass X.unsqueeze(-2))" if X.dim() == 2 else ""
        raise ValueError(
            f"X must have shape {shape}: q = 1 is required (one candidate per batch entry; "
            f"joint q-batches are not supported), got q = {q} in shape {tuple(X.shape)}{hint}"
        )
    if dim is not None and X.shape[-1] != dim:
        raise ValueError(
            f"X must have shape {shape} (d = {dim}, the dimension of the training inputs), "
            f"got shape {tuple(X.shape)}"
        )
    return X
