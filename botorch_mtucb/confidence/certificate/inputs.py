"""Checks of ``certify``'s inputs and the shared steps of the finite and box methods:
the evaluated points, the recommendation (in the domain, of the domain's ``d``), and the
lower bounds at them."""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain, find_rows

_DTYPE = torch.float64


def check_points(X: object, dim: int, name: str) -> Tensor:
    """An ``m x d`` finite real tensor (``m`` may be 0), as float64.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.certificate.inputs import check_points
        >>> check_points(torch.zeros(3, 2), 2, "evaluated").dtype
        torch.float64
    """
    if not isinstance(X, Tensor):
        raise TypeError(f"{name} must be an m x {dim} tensor, got {type(X).__name__}")
    if X.dtype == torch.bool or X.is_complex():
        raise TypeError(f"{name} must be real, got dtype {X.dtype}")
    if X.dim() != 2 or X.shape[-1] != dim:
        raise ValueError(f"{name} must be an m x {dim} tensor, got shape {tuple(X.shape)}")
    if not bool(torch.isfinite(X).all()):
        raise ValueError(f"{name} must not contain NaN or inf")
    return X.detach().to(_DTYPE)


def check_recommendation(recommendation: object, domain: FiniteDomain | BoxDomain) -> Tensor | None:
    """``x_hat`` as a float64 ``d`` vector inside ``domain`` (``None`` passes through).

    Raises:
        TypeError: For a non-tensor.
        ValueError: For a shape other than ``d`` or ``1 x d``, NaN/inf, a point that is
            not one of the finite domain's points or lies outside the box.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.certificate.inputs import check_recommendation
        >>> from botorch_mtucb.utils import BoxDomain
        >>> check_recommendation(torch.tensor([0.5]), BoxDomain(torch.tensor([[0.0], [1.0]])))
        tensor([0.5000], dtype=torch.float64)
    """
    if recommendation is None:
        return None
    d = domain.dim
    if not isinstance(recommendation, Tensor):
        raise TypeError(
            f"recommendation must be a tensor of d = {d} numbers, got "
            f"{type(recommendation).__name__}"
        )
    if recommendation.shape not in ((d,), (1, d)):
        raise ValueError(
            f"recommendation must have shape ({d},) or (1, {d}), got {tuple(recommendation.shape)}"
        )
    x = check_points(recommendation.reshape(1, d), d, "recommendation")
    if isinstance(domain, FiniteDomain):
        if find_rows(domain.points, x.to(domain.points.dtype)) is None:
            raise ValueError(
                "recommendation must be one of the finite domain's points (the regret is "
                "measured over the domain), got one that is not among them"
            )
    else:
        bounds = domain.bounds.to(_DTYPE)
        if bool(((x < bounds[0]) | (x > bounds[1])).any()):
            raise ValueError(
                f"recommendation {x.squeeze(0).tolist()} lies outside the box "
                f"[{bounds[0].tolist()}, {bounds[1].tolist()}]"
            )
    return x.squeeze(0)


def check_domain(domain: object, dim: int) -> FiniteDomain | BoxDomain:
    """A ``FiniteDomain`` or ``BoxDomain`` of dimension ``dim``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.certificate.inputs import check_domain
        >>> from botorch_mtucb.utils import BoxDomain
        >>> check_domain(BoxDomain(torch.tensor([[0.0], [1.0]])), 1).dim
        1
    """
    if not isinstance(domain, (FiniteDomain, BoxDomain)):
        raise TypeError(
            "domain must be a botorch_mtucb.utils.FiniteDomain or BoxDomain, got "
            f"{type(domain).__name__}"
        )
    if domain.dim != dim:
        raise ValueError(f"domain has d = {domain.dim}, the bounds take d = {dim} inputs")
    return domain


def evaluated_lower(bounds, evaluated: Tensor | None) -> tuple[Tensor, Tensor]:
    """The evaluated points (``m x d``; the bounds' own if ``None``) and ``l_t`` there.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import MartingaleMixtureBounds
        >>> from botorch_mtucb.confidence.certificate.inputs import evaluated_lower
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> bounds = MartingaleMixtureBounds(MartingaleMixtureBound(X, X, RBFKernel(), 2.0, 0.1, 0.1))
        >>> points, lower = evaluated_lower(bounds, None)
        >>> points.shape, lower.shape
        (torch.Size([5, 1]), torch.Size([5]))
    """
    d = bounds.input_dim
    if evaluated is None:
        evaluated = bounds.evaluated_inputs()
    evaluated = check_points(evaluated, d, "evaluated")
    if evaluated.shape[0] == 0:
        return evaluated, evaluated.new_zeros(0)
    return evaluated, bounds.lower(evaluated).to(_DTYPE).reshape(-1)


def lower_range(values: Tensor) -> float:
    """``max - min`` of a vector of lower bounds (0 if empty).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.certificate.inputs import lower_range
        >>> lower_range(torch.tensor([1.0, 3.0]))
        2.0
    """
    return float(values.max() - values.min()) if values.numel() else 0.0
