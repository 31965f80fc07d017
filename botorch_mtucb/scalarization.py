"""Linear and Chebyshev scalarizations, their Lipschitz constants and weight sampling.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 2 ("Random scalarizations and
Pareto optimality"): s_lambda(y) = sum_i lambda_i y_i and
s_lambda(y) = min_i lambda_i (y_i - z_i), L_lambda-Lipschitz in the l2-norm; Section 5
(Chebyshev weights, following Paria et al. 2019) and Appendix E (linear weights).
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.utils.checks import as_int, check_floating_dtype, check_tensor


def _check_weights(weights: Tensor) -> Tensor:
    weights = check_tensor(weights, "weights")
    if weights.dim() < 1 or weights.shape[-1] < 1:
        raise ValueError(f"weights must have shape ... x n with n >= 1, got {tuple(weights.shape)}")
    if (weights < 0).any():
        raise ValueError("weights must be non-negative")
    if (weights.sum(-1) == 0).any():
        raise ValueError("weights must have at least one positive entry (all zeros given)")
    return weights


class Scalarization(Module):
    """A scalarization ``s_lambda: R^n -> R`` with weights of shape ``... x n``.

    A ``torch.nn.Module``: the weights (and Chebyshev's reference point) are buffers, so
    ``.to(device)`` / ``.to(dtype)`` move them and ``state_dict`` holds them. Subclasses
    implement ``forward`` on outputs ``... x n`` (broadcast against the weights' batch
    shape) and ``lipschitz_constant`` (shape ``weights.shape[:-1]``); calling the object
    calls ``forward``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.scalarization import LinearScalarization, Scalarization
        >>> s = LinearScalarization(torch.tensor([0.3, 0.7], dtype=torch.float64))
        >>> isinstance(s, Scalarization), s.num_tasks
        (True, 2)
        >>> s.to(torch.float32).weights.dtype
        torch.float32
    """

    weights: Tensor

    def __init__(self, weights: Tensor) -> None:
        """Args:
            weights: ``... x n`` non-negative weights (at least one positive per row).

        Raises:
            TypeError, ValueError: For a non-tensor, NaN/inf or negative weights, or a
                row of zeros.
        """
        super().__init__()
        self.register_buffer("weights", _check_weights(weights))

    @property
    def num_tasks(self) -> int:
        """The number of outputs ``n``."""
        return self.weights.shape[-1]

    @property
    def lipschitz_constant(self) -> Tensor:  # pragma: no cover - abstract
        """``L_lambda`` with ``|s(y) - s(y')| <= L_lambda ||y - y'||_2``."""
        raise NotImplementedError

    def forward(self, Y: Tensor) -> Tensor:  # pragma: no cover - abstract
        """``Y``: ``... x n`` -> ``...``."""
        raise NotImplementedError

    def _check_outputs(self, Y: Tensor) -> None:
        if not isinstance(Y, Tensor):
            raise TypeError(f"Y must be a torch.Tensor, got {type(Y).__name__}")
        if Y.shape[-1] != self.num_tasks:
            raise ValueError(
                f"Y must have {self.num_tasks} outputs in its last dimension (the size of "
                f"the weights), got shape {tuple(Y.shape)}"
            )


class LinearScalarization(Scalarization):
    r"""``s_lambda(y) = lambda^T y``; Lipschitz constant ``||lambda||_2`` (paper 000, Sec. 2).

    Args:
        weights: ``... x n`` non-negative weights.

    Raises:
        TypeError, ValueError: For a non-tensor, NaN/inf or negative weights.

    Example:
        >>> import torch
        >>> from botorch_mtucb.scalarization import LinearScalarization
        >>> s = LinearScalarization(torch.tensor([0.3, 0.7]))
        >>> s(torch.tensor([[1.0, 2.0]]))
        tensor([1.7000])
        >>> s.lipschitz_constant
        tensor(0.7616)
    """

    @property
    def lipschitz_constant(self) -> Tensor:
        """``||lambda||_2``, shape ``weights.shape[:-1]``."""
        return torch.linalg.vector_norm(self.weights, dim=-1)

    def forward(self, Y: Tensor) -> Tensor:
        """``Y``: ``... x n`` -> ``...`` (broadcast with the weights' batch shape)."""
        self._check_outputs(Y)
        return (Y * self.weights.to(Y)).sum(-1)


class ChebyshevScalarization(Scalarization):
    r"""``s_lambda(y) = min_i lambda_i (y_i - z_i)``; Lipschitz ``max_i lambda_i``.

    Source: paper 000, Section 2 (Nakayama et al. 2009). ``z`` is the reference point.

    Args:
        weights: ``... x n`` non-negative weights.
        reference_point: ``n`` reference point ``z`` (or broadcastable ``... x n``).

    Raises:
        TypeError, ValueError: For non-tensors, NaN/inf, negative weights, or a
            reference point whose last dimension differs from the weights'.

    Example:
        >>> import torch
        >>> from botorch_mtucb.scalarization import ChebyshevScalarization
        >>> s = ChebyshevScalarization(torch.tensor([0.5, 0.5]), torch.zeros(2))
        >>> s(torch.tensor([[1.0, 3.0]]))
        tensor([0.5000])
        >>> s.to(torch.float64).reference_point.dtype
        torch.float64
    """

    reference_point: Tensor

    def __init__(self, weights: Tensor, reference_point: Tensor) -> None:
        super().__init__(weights)
        reference_point = check_tensor(reference_point, "reference_point")
        if reference_point.dim() < 1 or reference_point.shape[-1] != self.weights.shape[-1]:
            raise ValueError(
                f"weights and reference_point must have the same length n, got "
                f"{self.weights.shape[-1]} and {tuple(reference_point.shape)}"
            )
        self.register_buffer("reference_point", reference_point)

    @property
    def lipschitz_constant(self) -> Tensor:
        """``max_i lambda_i``, shape ``weights.shape[:-1]``."""
        return self.weights.amax(dim=-1)

    def forward(self, Y: Tensor) -> Tensor:
        """``Y``: ``... x n`` -> ``...`` (broadcast with the weights' batch shape)."""
        self._check_outputs(Y)
        return (self.weights.to(Y) * (Y - self.reference_point.to(Y))).amin(dim=-1)


def as_scalarization(scalarization: Scalarization | Tensor) -> Scalarization:
    """A ``Scalarization``, or a weight tensor read as ``LinearScalarization(weights)``.

    Args:
        scalarization: A ``Scalarization`` (returned unchanged) or ``... x n``
            non-negative weights.

    Raises:
        TypeError: For anything else (a function, a list ...), or non-floating weights.
        ValueError: For NaN/inf or negative weights, or a row of zeros.

    Example:
        >>> import torch
        >>> from botorch_mtucb.scalarization import as_scalarization
        >>> as_scalarization(torch.tensor([0.3, 0.7])).lipschitz_constant  # ||lambda||_2
        tensor(0.7616)
    """
    if isinstance(scalarization, Scalarization):
        return scalarization
    if isinstance(scalarization, Tensor):
        return LinearScalarization(scalarization)
    raise TypeError(
        "scalarization must be a botorch_mtucb Scalarization (LinearScalarization, "
        "ChebyshevScalarization) or a tensor of linear weights, got "
        f"{type(scalarization).__name__}"
    )


def _uniform(num_tasks: int, sample_shape: torch.Size, generator, dtype, device) -> Tensor:
    num_tasks = as_int(num_tasks, "num_tasks", 1)
    dtype = check_floating_dtype(dtype)
    # (0, 1]: avoids a division by zero in the Chebyshev weights.
    u = torch.rand(*sample_shape, num_tasks, generator=generator, dtype=dtype, device=device)
    return 1.0 - u


def sample_linear_weights(
    num_tasks: int,
    sample_shape: torch.Size = torch.Size(),  # noqa: B008
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float64,
    device: torch.device | None = None,
) -> Tensor:
    r"""Weights for the linear scalarization: ``lambda = u / ||u||_1``, ``u ~ U[0, 1]^n``.

    Source: paper 000, Appendix E. Returns ``sample_shape x n`` weights on the simplex.

    Raises:
        TypeError: If ``num_tasks`` is not an int or ``dtype`` not a floating dtype.
        ValueError: If ``num_tasks < 1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.scalarization import sample_linear_weights
        >>> sample_linear_weights(3, generator=torch.Generator().manual_seed(0))
        tensor([0.0347, 0.3387, 0.6266], dtype=torch.float64)
    """
    u = _uniform(num_tasks, torch.Size(sample_shape), generator, dtype, device)
    return u / u.sum(-1, keepdim=True)


def sample_chebyshev_weights(
    num_tasks: int,
    sample_shape: torch.Size = torch.Size(),  # noqa: B008
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float64,
    device: torch.device | None = None,
) -> Tensor:
    r"""Weights for the Chebyshev scalarization (paper 000, Section 5; Paria et al. 2019).

    ``lambda = alpha / ||alpha||_1`` with ``alpha_i = ||u||_1 / u_i``, ``u ~ U[0, 1]^n``.
    Returns ``sample_shape x n`` weights on the simplex.

    Raises:
        TypeError: If ``num_tasks`` is not an int or ``dtype`` not a floating dtype.
        ValueError: If ``num_tasks < 1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.scalarization import sample_chebyshev_weights
        >>> generator = torch.Generator().manual_seed(0)
        >>> sample_chebyshev_weights(3, torch.Size([2]), generator=generator)
        tensor([[0.8636, 0.0885, 0.0478],
                [0.6239, 0.1393, 0.2368]], dtype=torch.float64)
    """
    u = _uniform(num_tasks, torch.Size(sample_shape), generator, dtype, device)
    alpha = u.sum(-1, keepdim=True) / u
    return alpha / alpha.sum(-1, keepdim=True)
