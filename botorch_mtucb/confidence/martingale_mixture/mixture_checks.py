"""Checks of a martingale-mixture bound's inputs (paper 002): the grid of ``alpha``,
the numbers ``B``, ``sigma``, ``delta`` and ``c`` of eq. (8), the training data and query
points, the kernel, and sums of squares and derived numbers that must not overflow.

A bound built from numbers that pass these checks has finite radii and finite upper and
lower bounds; each check names the argument that would have given NaN or inf instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_mtucb.confidence.constant_checks import check_delta
from botorch_mtucb.utils.checks import as_real_tensor, check_positive


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
        >>> from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_alphas
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


def check_training_data(
    X: Tensor, Y: Tensor, dim: int | None = None, names: tuple[str, str] = ("train_X", "train_Y")
) -> None:
    """``X`` ``t x d`` (``d = dim`` if given) and ``Y`` ``t x 1``, real tensors without NaN/inf.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_training_data
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
        >>> from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_query_points
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
        >>> from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_unbatched_kernel
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
        >>> from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_sum_of_squares
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
        >>> from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_normal_floats
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
        >>> from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_mixture_numbers
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
