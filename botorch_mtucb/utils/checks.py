"""Generic argument checks: numbers, counts, tensors, dtypes and computed values (clear
errors naming the argument).

Every public function that takes a number goes through ``as_float`` (one number),
``as_int`` (a count or index) or ``as_real_tensor`` (a number or a tensor of any shape):
strings, ``None``, booleans and complex numbers raise a ``TypeError`` naming the argument
and what is accepted, instead of being silently converted (``float("1")``,
``float(True)``) or failing deep inside torch. BoTorch's pending points (``X_pending``)
are checked here too, since the confidence bounds and the acquisitions both take them.
This module imports nothing from the package, so every layer can use it.

The checks of one concept sit next to it: the task structure in
``kernels.task_checks``, the papers' constants in ``confidence.constant_checks``, a
martingale-mixture bound's inputs in ``confidence.martingale_mixture.mixture_checks``,
an acquisition's candidates and widths in ``acquisition.input_checks`` and the command
lines' argument types in ``experiments.cli_types``.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np
import torch
from botorch.exceptions import BotorchWarning
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

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import as_float
        >>> as_float(torch.tensor([2.5]), "width")
        2.5
        >>> as_float(float("inf"), "b", finite=False)
        inf
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

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import as_int
        >>> as_int(torch.tensor(3), "num_tasks", minimum=1)
        3
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

    Example:
        >>> from botorch_mtucb.utils.checks import as_real_tensor
        >>> as_real_tensor([1, 2], "x")
        tensor([1., 2.], dtype=torch.float64)
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

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_nonnegative_tensor
        >>> check_nonnegative_tensor(torch.tensor([0.0, 2.0]), "variances")
        tensor([0., 2.])
    """
    tensor = as_real_tensor(value, name)
    if not torch.isfinite(tensor).all() or (tensor < 0).any():
        raise ValueError(f"{name} must be finite and >= 0, got {tensor}")
    return tensor


def check_nonnegative(value: float | Tensor, name: str) -> float:
    """A finite number ``>= 0``.

    Example:
        >>> from botorch_mtucb.utils.checks import check_nonnegative
        >>> check_nonnegative(0, "noise_std")
        0.0
    """
    number = as_float(value, name)
    if number < 0:
        raise ValueError(f"{name} must be >= 0, got {number}")
    return number


def check_positive(value: float | Tensor, name: str) -> float:
    """A finite number ``> 0``.

    Example:
        >>> from botorch_mtucb.utils.checks import check_positive
        >>> check_positive(0.1, "regularization")
        0.1
    """
    number = as_float(value, name)
    if number <= 0:
        raise ValueError(f"{name} must be > 0, got {number}")
    return number


def check_floating_dtype(dtype: torch.dtype, name: str = "dtype") -> torch.dtype:
    """A floating ``torch.dtype`` (``torch.float32``, ``torch.float64`` ...).

    Raises:
        TypeError: If ``dtype`` is not a floating-point ``torch.dtype``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_floating_dtype
        >>> check_floating_dtype(torch.float32)
        torch.float32
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

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_tensor
        >>> check_tensor(torch.zeros(3, 2), "train_X", dim=2).shape
        torch.Size([3, 2])
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a real floating-point tensor, got dtype {value.dtype}")
    if dim is not None and value.dim() != dim:
        raise ValueError(f"{name} must have {dim} dimensions, got shape {tuple(value.shape)}")
    if value.numel() and not bool(torch.isfinite(torch.stack(torch.aminmax(value))).all()):
        # one pass over value: its least and largest entries are NaN if any entry is
        raise ValueError(f"{name} must be finite (no NaN or inf), but {name} contains NaN or inf")
    return value


def check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``; a ``ValueError`` naming them otherwise.

    Example:
        >>> from botorch_mtucb.utils.checks import check_choice
        >>> check_choice("linear", "scalarization", ("linear", "chebyshev"))
        'linear'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_square_matrix(matrix: Tensor, name: str) -> int:
    """The size ``t`` of a real ``... x t x t`` tensor without NaN/inf.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_square_matrix
        >>> check_square_matrix(torch.eye(3), "kernel_matrix")
        3
    """
    check_tensor(matrix, name)
    check_working_precision(matrix, name)
    if matrix.dim() < 2 or matrix.shape[-1] != matrix.shape[-2]:
        raise ValueError(f"{name} must be ... x t x t, got {tuple(matrix.shape)}")
    return matrix.shape[-1]


def real_output_dtype(X: Tensor, name: str = "X") -> torch.dtype:
    """The dtype of values computed at points ``X``: ``X``'s floating dtype, ``float64``
    for integer ``X`` (cast like BoTorch does).

    Raises:
        TypeError: For boolean or complex ``X``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import real_output_dtype
        >>> real_output_dtype(torch.tensor([[1, 2]])), real_output_dtype(torch.zeros(1, 2))
        (torch.float64, torch.float32)
    """
    if X.dtype == torch.bool or X.is_complex():
        raise TypeError(f"{name} must be a real (floating or integer) tensor, got dtype {X.dtype}")
    return X.dtype if X.is_floating_point() else torch.float64


def check_working_precision(value: Tensor, name: str) -> Tensor:
    """A tensor that is not of a half-precision floating dtype (``float16``,
    ``bfloat16`` ...), returned unchanged: the package's Cholesky factors and
    eigendecompositions run in ``float32`` or ``float64`` only.

    Raises:
        TypeError: For a floating tensor other than ``float32`` / ``float64``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_working_precision
        >>> check_working_precision(torch.zeros(2, dtype=torch.float32), "train_X").dtype
        torch.float32
        >>> try:
        ...     check_working_precision(torch.zeros(2, dtype=torch.float16), "train_X")
        ... except TypeError as error:
        ...     print(str(error)[:53])
        train_X must be float32 or float64, got torch.float16
    """
    if value.is_floating_point() and value.dtype not in (torch.float32, torch.float64):
        raise TypeError(
            f"{name} must be float32 or float64, got {value.dtype}: Cholesky factors and "
            f"eigendecompositions are not implemented in half precision; pass "
            f"{name}.double() (or {name}.float())"
        )
    return value


def check_kernel_values(values: Tensor, inputs: Tensor, name: str) -> None:
    """Kernel values computed at the points ``inputs`` (the argument ``name``) are finite.

    Finite inputs can still overflow a kernel: squared distances ``||x - x'||^2 /
    lengthscale^2`` (or inner products) above the dtype's largest number give inf, and
    then NaN (``1e300 * X`` in float64).

    Raises:
        ValueError: If ``values`` holds NaN or inf, naming ``name``, the range of
            ``inputs`` and the range in which the kernel stays finite.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.utils.checks import check_kernel_values
        >>> X = 1e300 * torch.tensor([[0.1], [0.5], [0.7], [0.9]], dtype=torch.float64)
        >>> try:
        ...     check_kernel_values(RBFKernel()(X, X).to_dense(), X, "train_X")
        ... except ValueError as error:
        ...     print(str(error)[:58])
        train_X is outside the range where the kernel is finite: t
    """
    if bool(torch.isfinite(values).all()):
        return
    info = torch.finfo(values.dtype)
    dim = max(inputs.shape[-1], 1) if inputs.dim() else 1
    low, high = float(inputs.detach().min()), float(inputs.detach().max())
    raise ValueError(
        f"{name} is outside the range where the kernel is finite: the kernel values at "
        f"{name} (whose entries lie in [{low:.3g}, {high:.3g}]) overflow {values.dtype} to NaN "
        "or inf. "
        f"The kernel's squared distances ||x - x'||^2 / lengthscale^2 (and inner products "
        f"x^T x') must stay below {info.max:.3g}: keep the inputs within about "
        f"{math.sqrt(info.max / dim) / 2:.3g} lengthscales of each other (d = {dim}), e.g. "
        f"by rescaling {name} to the unit cube"
    )


def check_finite_result(values: Tensor, name: str, inputs: Tensor | None = None) -> Tensor:
    """Computed values (``name``, e.g. ``"upper bound"``) are finite, returned unchanged.

    The last line of defence against a silent NaN: when every input was checked and
    the values are still not finite, a numerical failure happened on the way (an
    overflow or a ``0 / 0`` that the code did not anticipate), and a clear error is
    better than a NaN that an optimizer would silently skip or pick.

    Raises:
        FloatingPointError: If ``values`` holds NaN or inf, naming ``name``, how many
            values and (with ``inputs``, ``N x d`` matching ``values``' leading
            dimension) the first input at which it happened.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_finite_result
        >>> check_finite_result(torch.ones(3), "upper bound").tolist()
        [1.0, 1.0, 1.0]
        >>> try:
        ...     check_finite_result(torch.tensor([1.0, float("nan")]), "upper bound")
        ... except FloatingPointError as error:
        ...     print(str(error)[:44])
        the upper bound is not finite at 1 of 2 valu
    """
    finite = torch.isfinite(values.detach())
    if bool(finite.all()):
        return values
    bad = ~finite
    where = ""
    if inputs is not None and inputs.dim() >= 1 and inputs.shape[0] == values.shape[0]:
        row = int(bad.reshape(values.shape[0], -1).any(-1).nonzero()[0, 0])
        where = f" (first at input {inputs[row].detach().cpu().tolist()})"
    raise FloatingPointError(
        f"the {name} is not finite at {int(bad.sum())} of {values.numel()} values{where}: a "
        "numerical failure in float64 with finite inputs. Check the scales (observations, "
        "noise_std and rkhs_norm_bound within a few dozen decades of each other) and "
        "report the case; no value is returned rather than a silent NaN or inf"
    )


def check_X_pending(X_pending: object, dim: int | None = None) -> Tensor | None:
    """``X_pending``: ``None`` or an ``m x d`` floating tensor without NaN/inf.

    Follows BoTorch's ``set_X_pending``: ``m`` points of dimension ``d`` chosen but
    not yet evaluated (``m = 0`` means none). A tensor that requires a gradient is
    detached with BoTorch's ``BotorchWarning`` (no gradient flows to pending points).

    Args:
        X_pending: ``None`` or the ``m x d`` pending points.
        dim: The input dimension ``d`` if known (``None``: not checked here; the model
            checks it when conditioned).

    Returns:
        ``None``, or ``X_pending`` detached.

    Raises:
        TypeError: If ``X_pending`` is neither ``None`` nor a real floating-point
            tensor of ``float32`` / ``float64``.
        ValueError: If it is not ``m x d`` (2 dimensions, ``d`` = ``dim``) or holds
            NaN or inf.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_X_pending
        >>> check_X_pending(torch.zeros(3, 2), dim=2).shape
        torch.Size([3, 2])
        >>> try:
        ...     check_X_pending(torch.zeros(5, 1, 2), dim=2)
        ... except ValueError as error:
        ...     print(error)
        X_pending must have shape m x 2 (m pending points of dimension d = 2), got shape (5, 1, 2)
    """
    if X_pending is None:
        return None
    shape = f"m x {'d' if dim is None else dim}"
    if not isinstance(X_pending, Tensor):
        raise TypeError(
            f"X_pending must be None or a torch.Tensor of shape {shape}, "
            f"got {type(X_pending).__name__}"
        )
    if not X_pending.is_floating_point():
        raise TypeError(
            f"X_pending must be a real floating-point tensor (float32 or float64) of shape "
            f"{shape}, got dtype {X_pending.dtype}"
        )
    check_working_precision(X_pending, "X_pending")
    described = "m pending points" + ("" if dim is None else f" of dimension d = {dim}")
    if X_pending.dim() != 2 or (dim is not None and X_pending.shape[-1] != dim):
        raise ValueError(
            f"X_pending must have shape {shape} ({described}), got shape {tuple(X_pending.shape)}"
        )
    if not torch.isfinite(X_pending).all():
        raise ValueError(f"X_pending must be finite (no NaN or inf), got {X_pending}")
    if X_pending.requires_grad:
        warnings.warn(
            "Pending points require a gradient but the acquisition function will not "
            "provide a gradient to these points.",
            BotorchWarning,
            stacklevel=3,
        )
    return X_pending.detach()
