r"""The RKHS metric of a stationary kernel and its supremum over a box.

For ``f`` in the RKHS of ``k`` with ``||f||_H <= B``, the reproducing property and
Cauchy-Schwarz give ``|f(x) - f(x')| = |<f, k(., x) - k(., x')>| <= B d_k(x, x')`` with

.. math::
    d_k(x, x')^2 = k(x, x) + k(x', x') - 2 k(x, x').

For a vector-valued RKHS with ``Gamma = sum_j k_j B_j`` and a linear functional ``w^T f``
the representer is ``Gamma(., x) w`` (paper 000, Section 2), so ``|w^T f(x) - w^T
f(x')| <= B d(x, x')`` with ``d^2 = w^T (Gamma(x, x) + Gamma(x', x') - Gamma(x, x') -
Gamma(x', x)) w = sum_j (w^T B_j w) d_{k_j}(x, x')^2``.

For a stationary kernel ``k(x, x') = s rho(r)``, ``r = ||(x - x') / ell||`` (lengthscales
``ell``), ``d_k^2 = 2 s (1 - rho(r))``; for RBF and Matern (``nu`` in ``{1/2, 3/2,
5/2}``) ``rho`` decreases in ``r``, so ``sup_{x in cell} d_k(x, c)`` over a box with
centre ``c`` and half-widths ``h`` is attained at a corner: ``r = ||h / ell||``. With a
per-coordinate affine input transform (``Normalize``, ``InputStandardize``) the
difference ``x - x'`` is divided by the transform's coefficients first, and the same
holds. ``1 - rho`` is computed in closed form (``expm1``) plus ``4 eps`` of float64, so
round-off never makes the metric smaller than the exact one.

Other kernels (periodic, linear, polynomial, sums, products, ``active_dims``, batched
kernels) are refused with ``UnsupportedError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models.transforms.input import AffineInputTransform
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel, ScaleKernel
from torch import Tensor

_DTYPE = torch.float64
_SLACK = 4.0 * torch.finfo(torch.float64).eps


def _one_minus_correlation(kind: str, r: Tensor) -> Tensor:
    """``1 - rho(r)`` for the stationary correlation ``rho`` (closed forms, no cancellation
    in ``exp``) plus a float64 slack, so that the result is never below the exact value."""
    if kind == "rbf":
        value = -torch.expm1(-0.5 * r.square())
    elif kind == "matern0.5":
        value = -torch.expm1(-r)
    elif kind == "matern1.5":
        a = math.sqrt(3.0) * r
        value = -torch.expm1(-a) - a * torch.exp(-a)
    else:  # matern2.5
        a = math.sqrt(5.0) * r
        value = -torch.expm1(-a) - (a + a.square() / 3.0) * torch.exp(-a)
    return value.clamp_min(0.0) + _SLACK


def _profile(kernel: Kernel, name: str) -> tuple[float, Tensor, str]:
    """``(s, ell, kind)`` of ``s * rho(||(x - x') / ell||)``, or ``UnsupportedError``."""
    scale = 1.0
    base = kernel
    if isinstance(kernel, ScaleKernel):
        scale = float(kernel.outputscale.detach().reshape(-1)[0])
        if kernel.outputscale.numel() != 1:
            raise UnsupportedError(f"{name}: a batched ScaleKernel has no single RKHS metric")
        base = kernel.base_kernel
    if isinstance(base, RBFKernel):
        kind = "rbf"
    elif isinstance(base, MaternKernel) and base.nu in (0.5, 1.5, 2.5):
        kind = f"matern{base.nu}"
    else:
        raise UnsupportedError(
            f"{name} is a {type(base).__name__}; the box certificate bounds the RKHS metric "
            "over a cell only for stationary kernels whose correlation decreases with the "
            "lengthscale-scaled distance: RBFKernel or MaternKernel (nu = 0.5, 1.5, 2.5), "
            "optionally wrapped in a ScaleKernel (use a FiniteDomain for other kernels)"
        )
    for module in (kernel, base):
        if module.active_dims is not None:
            raise UnsupportedError(f"{name}: kernels with active_dims are not supported")
        if module.batch_shape != torch.Size([]):
            raise UnsupportedError(f"{name}: batched kernels are not supported")
    ell = base.lengthscale.detach().to(_DTYPE).reshape(-1)
    return scale, ell, kind


def _input_coefficient(input_transform, input_dim: int) -> Tensor | None:
    """The per-coordinate divisor of an affine input transform (``None``: no transform)."""
    if input_transform is None:
        return None
    if (
        not isinstance(input_transform, AffineInputTransform)
        or getattr(input_transform, "indices", None) is not None
    ):
        raise UnsupportedError(
            f"the input transform {type(input_transform).__name__} is not supported by the "
            "kernel metric: use Normalize or InputStandardize on all columns, or none"
        )
    coefficient = input_transform.coefficient.detach().to(_DTYPE).reshape(-1)
    if coefficient.numel() not in (1, input_dim):
        raise UnsupportedError("the input transform's coefficient does not match d")
    return coefficient


class KernelMetric:
    r"""``d(x, x')^2 = sum_j c_j 2 s_j (1 - rho_j(||(x - x') / (a ell_j)||))``: the RKHS
    metric of a stationary kernel (one term, ``c = 1``) or of ``w^T f`` for ``Gamma = sum_j
    k_j B_j`` (``c_j = w^T B_j w``), ``a`` the coefficients of an affine input transform.

    Args:
        kernels: One GPyTorch kernel or the terms ``k_j`` (RBF / Matern, optionally in a
            ``ScaleKernel``).
        weights: ``c_j >= 0``, one per term (default: 1 each).
        input_transform: ``None``, or a BoTorch ``Normalize`` / ``InputStandardize``.
        input_dim: ``d``.

    Raises:
        UnsupportedError: For other kernels or input transforms (module docstring).
        ValueError: For negative or non-finite weights.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence.certificate.kernel_metric import KernelMetric
        >>> kernel = RBFKernel()
        >>> metric = KernelMetric(kernel, input_dim=1)
        >>> X, Y = torch.zeros(1, 1), torch.ones(1, 1)
        >>> exact = (2 - 2 * kernel(X, Y).to_dense()).sqrt().squeeze()
        >>> bool(torch.isclose(metric.distance(X, Y), exact.double(), atol=1e-7))
        True
    """

    def __init__(
        self,
        kernels: Kernel | Sequence[Kernel],
        weights: Sequence[float] | Tensor | None = None,
        input_transform=None,
        input_dim: int = 1,
    ) -> None:
        kernels = [kernels] if isinstance(kernels, Kernel) else list(kernels)
        self.terms = [_profile(k, f"kernel term {j}") for j, k in enumerate(kernels)]
        if weights is None:
            weights = [1.0] * len(kernels)
        weights = torch.as_tensor(weights, dtype=_DTYPE).reshape(-1)
        if weights.numel() != len(kernels) or not bool(torch.isfinite(weights).all()):
            raise ValueError("the metric's weights must be finite, one per kernel term")
        if bool((weights < -1e-12 * weights.abs().max().clamp_min(1.0)).any()):
            raise ValueError(f"the metric's weights w^T B_j w must be >= 0, got {weights}")
        self.weights = weights.clamp_min(0.0)
        self.coefficient = _input_coefficient(input_transform, input_dim)

    def _squared(self, difference: Tensor) -> Tensor:
        difference = difference.to(_DTYPE)
        if self.coefficient is not None:
            difference = difference / self.coefficient.to(difference.device)
        total = torch.zeros(difference.shape[:-1], dtype=_DTYPE, device=difference.device)
        for c, (scale, ell, kind) in zip(self.weights.tolist(), self.terms):
            r = (difference / ell.to(difference.device)).norm(dim=-1)
            total = total + c * 2.0 * scale * _one_minus_correlation(kind, r)
        return total

    def distance(self, X1: Tensor, X2: Tensor) -> Tensor:
        """``d(x1, x2)`` for ``N x d`` pairs of rows (broadcasting), float64 ``N``."""
        return self._squared(X1.to(_DTYPE) - X2.to(_DTYPE)).sqrt()

    def cell_radius(self, half_widths: Tensor) -> Tensor:
        """``sup_{x in cell} d(x, c)`` for cells of ``N x d`` half-widths around their
        centres: the distance to a corner (module docstring), float64 ``N``."""
        return self._squared(half_widths).sqrt()
