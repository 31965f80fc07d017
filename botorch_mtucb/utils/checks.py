"""Argument checks shared by the package (clear errors naming the argument).

Every public function that takes a number goes through ``as_float`` (one number),
``as_int`` (a count or index) or ``as_real_tensor`` (a number or a tensor of any shape):
strings, ``None``, booleans and complex numbers raise a ``TypeError`` naming the argument
and what is accepted, instead of being silently converted (``float("1")``,
``float(True)``) or failing deep inside torch. This module imports nothing from the
package, so the kernels, scalarizations and acquisition functions can use it too.
"""

from __future__ import annotations

import argparse
import math
import operator
import warnings
from collections.abc import Sequence

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


def check_delta(delta: float | Tensor) -> float:
    """``delta`` must lie in the open interval (0, 1).

    Example:
        >>> from botorch_mtucb.utils.checks import check_delta
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


def check_b(b: float | Tensor) -> float:
    """The task-similarity parameter ``b >= 0`` of paper 001 (``math.inf`` allowed).

    Raises:
        TypeError: If ``b`` is not a real number.
        ValueError: If ``b < 0`` or NaN.

    Example:
        >>> import math
        >>> from botorch_mtucb.utils.checks import check_b
        >>> check_b(math.inf)
        inf
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

    Example:
        >>> from botorch_mtucb.utils.checks import check_width
        >>> check_width(2)
        tensor(2., dtype=torch.float64)
    """
    number = as_float(width, "width", finite=False)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"width must be a finite number >= 0, got {number}")
    return torch.tensor(number, dtype=torch.float64)


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
    if not torch.isfinite(value).all():
        raise ValueError(f"{name} must be finite (no NaN or inf), but {name} contains NaN or inf")
    return value


def check_tasks(tasks: object, num_rows: int, num_tasks: int, name: str) -> Tensor:
    """Check per-row task indices: ``num_rows`` integers in ``[0, num_tasks - 1]``.

    Accepts a tensor of shape ``num_rows`` or ``num_rows x 1`` (integer, or a float
    tensor holding whole numbers; booleans and complex numbers are refused with a
    ``TypeError``); returns a ``long`` tensor of shape ``num_rows``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_tasks
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


def check_alphas(alphas: float | Sequence[float] | Tensor) -> Tensor:
    """The grid ``A`` as a 1-d float64 CPU tensor of finite positive numbers.

    A single number (or a 0-d tensor) is a grid of one ``alpha``; a sequence or a 1-d
    tensor is the grid itself. Nothing else: a 2-d ``alphas`` is not flattened.

    Raises:
        TypeError: If ``alphas`` is not a real number, sequence or tensor (strings,
            ``None``, booleans and complex numbers included).
        ValueError: If it has more than one dimension, is empty or holds a
            non-positive or non-finite value.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_alphas
        >>> check_alphas([0.5, 2])
        tensor([0.5000, 2.0000], dtype=torch.float64)
        >>> try:
        ...     check_alphas(torch.ones(2, 2))
        ... except ValueError as error:
        ...     print(str(error)[:60])
        alphas must be a number or a 1-d grid of numbers, got shape
    """
    tensor = as_real_tensor(alphas, "alphas").to(device="cpu", dtype=torch.float64)
    if tensor.dim() > 1:
        raise ValueError(
            f"alphas must be a number or a 1-d grid of numbers, got shape {tuple(tensor.shape)}; "
            "pass one grid (e.g. alphas.reshape(-1) if every entry belongs to it)"
        )
    tensor = tensor.reshape(-1)
    if tensor.numel() == 0:
        raise ValueError("alphas must hold at least one value")
    if not torch.isfinite(tensor).all() or (tensor <= 0).any():
        raise ValueError(f"alphas must be finite and > 0, got {tensor.tolist()}")
    return tensor


def check_eps(eps: float | Tensor) -> float:
    """The sketch accuracy ``eps`` must lie in the open interval (0, 1).

    Example:
        >>> from botorch_mtucb.utils.checks import check_eps
        >>> check_eps(0.5)
        0.5
    """
    return _in_open_unit_interval(eps, "eps", "eps (the sketch accuracy epsilon)")


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


def check_finite_width(width: float) -> None:
    """A width that must be finite and ``>= 0`` (paper 001's widths at ``b = inf``).

    Raises:
        ValueError: If ``width`` is NaN, infinite or negative.

    Example:
        >>> from botorch_mtucb.utils.checks import check_finite_width
        >>> check_finite_width(2.0)  # returns None; raises for inf, NaN or < 0
    """
    if not math.isfinite(width) or width < 0:
        raise ValueError(
            f"the width must be finite and >= 0, got {width} (at b = inf the widths are "
            "finite only for task_deviation = 0)"
        )


def check_task_variances(task_variances: Tensor) -> Tensor:
    """``task_variances`` (the diagonal of ``B``) as a flat float64 tensor.

    Raises:
        ValueError: If any variance is not finite or not positive.

    Example:
        >>> from botorch_mtucb.utils.checks import check_task_variances
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
        >>> from botorch_mtucb.utils.checks import check_task_covariance
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
        >>> from botorch_mtucb.utils.checks import check_num_tasks
        >>> check_num_tasks(3)
        3
    """
    return as_int(num_tasks, "num_tasks", 1)


def check_task_deviation(task_deviation: float | Tensor) -> float:
    """The task deviation ``epsilon`` of paper 001 (eq. 5), a number in ``[0, 2]``.

    Raises:
        TypeError: If it is not a real number.
        ValueError: If it lies outside ``[0, 2]``.

    Example:
        >>> from botorch_mtucb.utils.checks import check_task_deviation
        >>> check_task_deviation(0.3)
        0.3
    """
    value = as_float(task_deviation, "task_deviation")
    if not 0.0 <= value <= 2.0:
        raise ValueError(
            f"task_deviation (epsilon of paper 001, eq. 5) must lie in [0, 2], got {value}"
        )
    return value


def check_task_data(train_X: Tensor, train_tasks: Tensor, num_tasks: int) -> Tensor:
    """``train_X`` (``t x d``, finite) and its task indices as a ``long`` tensor ``t``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_task_data
        >>> check_task_data(torch.zeros(2, 1), torch.tensor([1, 0]), num_tasks=2)
        tensor([1, 0])
    """
    check_tensor(train_X, "train_X", dim=2)
    return check_tasks(train_tasks, train_X.shape[0], num_tasks, "train_tasks")


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


def check_trace_regularization(value: float | Tensor, name: str) -> float:
    """A regularization ``c > 0`` of ``Tr(K (K + c I)^{-1})``; ``math.inf`` allowed.

    Example:
        >>> import math
        >>> from botorch_mtucb.utils.checks import check_trace_regularization
        >>> check_trace_regularization(math.inf, "c")
        inf
    """
    c = as_float(value, name, finite=False)
    if math.isnan(c) or c <= 0:
        raise ValueError(f"{name} must be > 0 (math.inf allowed), got {c}")
    return c


def check_training_data(
    X: Tensor, Y: Tensor, dim: int | None = None, names: tuple[str, str] = ("train_X", "train_Y")
) -> None:
    """``X`` ``t x d`` (``d = dim`` if given) and ``Y`` ``t x 1``, real tensors without NaN/inf.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_training_data
        >>> check_training_data(torch.zeros(4, 2), torch.zeros(4, 1))
    """
    x_name, y_name = names
    rows = "t" if dim is None else "m"
    if not isinstance(X, Tensor) or not isinstance(Y, Tensor):
        raise TypeError(f"{x_name} and {y_name} must be torch.Tensors")
    if X.dim() != 2 or (dim is not None and X.shape[-1] != dim):
        columns = "d" if dim is None else dim
        raise ValueError(f"{x_name} must be {rows} x {columns}, got shape {tuple(X.shape)}")
    if Y.dim() != 2 or Y.shape != (X.shape[0], 1):
        raise ValueError(
            f"{y_name} must be {rows} x 1 with {rows} = {X.shape[0]} (the rows of {x_name}), "
            f"got shape {tuple(Y.shape)}"
        )
    for name, value in ((x_name, X), (y_name, Y)):
        if value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"{name} must be a real tensor, got dtype {value.dtype}")
        finite = torch.isfinite(value)
        if not finite.all():
            raise ValueError(
                f"{name} must not contain NaN or inf, got {int((~finite).sum())} non-finite "
                f"of {value.numel()} entries"
            )


def check_query_points(X: Tensor, dim: int, name: str = "X") -> None:
    """Points ``batch x dim`` (any leading batch shape) without NaN/inf; errors name the
    argument ``name``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_query_points
        >>> check_query_points(torch.zeros(5, 3, 2), dim=2)
        >>> try:
        ...     check_query_points(torch.zeros(2, 3), dim=2, name="X_pending")
        ... except ValueError as error:
        ...     print(error)
        X_pending must have shape batch x 2, got (2, 3)
    """
    if not isinstance(X, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(X).__name__}")
    if X.dim() < 1 or X.shape[-1] != dim:
        raise ValueError(f"{name} must have shape batch x {dim}, got {tuple(X.shape)}")
    if not torch.isfinite(X).all():
        raise ValueError(f"{name} must not contain NaN or inf")


def check_unbatched_kernel(kernel: object) -> None:
    """A GPyTorch ``Kernel`` without batch shape.

    Example:
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.utils.checks import check_unbatched_kernel
        >>> check_unbatched_kernel(RBFKernel())
    """
    from gpytorch.kernels import Kernel

    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a gpytorch Kernel, got {type(kernel).__name__}")
    if kernel.batch_shape != torch.Size([]):
        raise ValueError(f"kernel must not be batched, got batch_shape {kernel.batch_shape}")


def check_sum_of_squares(
    Y: Tensor, name: str, consequence: str = "the radius R_t^2 of paper 002's eq. (8)"
) -> None:
    """``sum_i y_i^2`` of ``Y`` is finite in float64 (a least-squares radius such as
    paper 002's eq. (8), or a posterior mean ``K (K + lambda I)^{-1} y``, does not
    overflow).

    Args:
        Y: The observations.
        name: Their name, for the message.
        consequence: What would not be finite, for the message.

    Raises:
        ValueError: If the sum of squares overflows, naming ``name``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.checks import check_sum_of_squares
        >>> check_sum_of_squares(torch.tensor([[1e150], [2.0]], dtype=torch.float64), "train_Y")
        >>> try:
        ...     check_sum_of_squares(torch.tensor([[1e300]], dtype=torch.float64), "train_Y")
        ... except ValueError as error:
        ...     print(str(error)[:56])
        train_Y is too large for float64: the sum of its squares
    """
    total = float(Y.detach().to(torch.float64).square().sum())
    if not math.isfinite(total):
        largest = float(Y.detach().abs().max())
        raise ValueError(
            f"{name} is too large for float64: the sum of its squares overflows (largest "
            f"|y| = {largest:.3g}), so {consequence} is not finite; rescale {name} (and "
            "rkhs_norm_bound and noise_std by the same factor)"
        )


def check_normal_floats(values: dict[str, float]) -> None:
    """Each derived number of ``values`` (a description such as ``"noise_std**2"``: its
    value) is a normal, finite positive float64: it neither overflows to ``inf`` nor
    underflows to ``0`` (or below the smallest normal float).

    Raises:
        ValueError: Naming the first number out of range.

    Example:
        >>> from botorch_mtucb.utils.checks import check_normal_floats
        >>> noise_std = 1e-200
        >>> check_normal_floats({"noise_std**2": 0.1 * 0.1})
        >>> try:
        ...     check_normal_floats({"noise_std**2": noise_std * noise_std})
        ... except ValueError as error:
        ...     print(error)
        noise_std**2 = 0 underflows float64 (it must lie in [2.23e-308, 1.8e+308])
    """
    info = torch.finfo(torch.float64)
    for name, value in values.items():
        if not info.tiny <= value <= info.max:
            problem = "overflows" if value > 1.0 else "underflows"
            raise ValueError(
                f"{name} = {value:g} {problem} float64 (it must lie in "
                f"[{info.tiny:.3g}, {info.max:.3g}])"
            )


def check_mixture_numbers(
    rkhs_norm_bound: float | Tensor | None,
    noise_std: float | Tensor,
    delta: float | Tensor,
    mixture_scale: float | Tensor,
) -> tuple[float | None, float, float, float]:
    """The numbers of a martingale-mixture bound (paper 002, eq. (8)): ``B > 0`` (or
    ``None``: chosen from the data), ``sigma > 0``, ``delta`` in ``(0, 1)``, ``c > 0``,
    with ``B^2``, ``sigma^2`` and ``sigma^2 / c`` normal float64 numbers (each would give
    NaN bounds otherwise), as Python floats.

    Raises:
        TypeError: For a non-number.
        ValueError: Naming the first number out of its range.

    Example:
        >>> from botorch_mtucb.utils.checks import check_mixture_numbers
        >>> check_mixture_numbers(2, 0.1, 0.01, 1)
        (2.0, 0.1, 0.01, 1.0)
    """
    norm = None if rkhs_norm_bound is None else check_positive(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_positive(noise_std, "noise_std")
    delta = check_delta(delta)
    c = check_positive(mixture_scale, "mixture_scale")
    check_normal_floats({
        "rkhs_norm_bound**2": 1.0 if norm is None else norm * norm,
        "noise_std**2": sigma * sigma,
        "noise_std**2 / mixture_scale": sigma * sigma / c,
    })  # fmt: skip
    return norm, sigma, delta, c


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
        >>> from botorch_mtucb.utils.checks import check_task_indices
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
        >>> from botorch_mtucb.utils.checks import check_candidates
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


def positive_int(text: str) -> int:
    """An ``argparse`` type: an integer ``>= 1`` (else a one-line usage error).

    Example:
        >>> from botorch_mtucb.utils.checks import positive_int
        >>> positive_int("3")
        3
    """
    return _int_at_least(text, 1)


def nonnegative_int(text: str) -> int:
    """An ``argparse`` type: an integer ``>= 0`` (else a one-line usage error).

    Example:
        >>> from botorch_mtucb.utils.checks import nonnegative_int
        >>> nonnegative_int("0")
        0
    """
    return _int_at_least(text, 0)


def _int_at_least(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer >= {minimum}, got {text!r}"
        ) from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {value}")
    return value
