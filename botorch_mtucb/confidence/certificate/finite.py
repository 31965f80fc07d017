r"""The certificate on a finite domain: ``bar U_t = max_{x in D} u_t(x)``, exact.

The bounds are evaluated in chunks of ``chunk_size`` points, so the memory of one call
stays that of one chunk (plus two ``N`` vectors); domains of more than ``max_points``
points are refused before anything is computed.
"""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_mtucb.confidence.certificate.certificate import Certificate
from botorch_mtucb.confidence.certificate.inputs import evaluated_lower, lower_range
from botorch_mtucb.utils.checks import as_int
from botorch_mtucb.utils.domains import FiniteDomain

_DTYPE = torch.float64
MAX_FINITE_POINTS = 1_000_000


def _chunked(function, points: Tensor, chunk_size: int) -> Tensor:
    return torch.cat([
        function(points[start : start + chunk_size]).to(_DTYPE).reshape(-1)
        for start in range(0, points.shape[0], chunk_size)
    ])  # fmt: skip


def certify_finite(
    bounds,
    domain: FiniteDomain,
    recommendation: Tensor | None = None,
    evaluated: Tensor | None = None,
    chunk_size: int = 4096,
    max_points: int = MAX_FINITE_POINTS,
) -> Certificate:
    r"""``max_{x in D} u_t(x) - l_t(x_hat)`` over the finite domain ``D`` (``certify``).

    Args:
        bounds: ``ConfidenceBounds`` (checked by ``certify``).
        domain: The finite domain (``N x d`` points).
        recommendation: ``x_hat`` (a point of ``D``, checked), or ``None``: the
            evaluated point with the largest ``l_t`` (the point of ``D`` with the largest
            ``l_t`` if there are none).
        evaluated: ``m x d`` evaluated points (``None``: ``bounds.evaluated_inputs()``).
        chunk_size: Points per evaluation of the bounds.
        max_points: The largest ``N`` accepted.

    Returns:
        A ``Certificate``; ``candidates`` are the points of ``D`` with ``u_t(x) >=
        optimum_lower``.

    Raises:
        ValueError: If ``N > max_points`` (naming what to do), ``chunk_size < 1``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import MartingaleMixtureBounds
        >>> from botorch_mtucb.confidence.certificate.finite import certify_finite
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> points = torch.linspace(0, 1, 11, dtype=torch.float64).unsqueeze(-1)
        >>> bound = MartingaleMixtureBound(points, points, RBFKernel(), 2.0, 0.1, 0.1)
        >>> bounds = MartingaleMixtureBounds(bound)
        >>> certificate = certify_finite(bounds, FiniteDomain(points))
        >>> gap = bounds.upper(points).max() - bounds.lower(certificate.recommendation[None])
        >>> abs(certificate.gap - float(gap)) < 1e-12
        True
    """
    chunk_size = as_int(chunk_size, "chunk_size", minimum=1)
    max_points = as_int(max_points, "max_points", minimum=1)
    points = domain.points
    if points.shape[0] > max_points:
        raise ValueError(
            f"the finite domain has {points.shape[0]} points, more than max_points = "
            f"{max_points}: pass a larger max_points to certify(...) (time grows linearly; "
            "memory stays that of one chunk of chunk_size points), or certify over a "
            "BoxDomain enclosing the points (branch and bound)"
        )
    points = points.detach().to(_DTYPE)
    with torch.no_grad():
        upper = _chunked(bounds.upper, points, chunk_size)
        lower = _chunked(bounds.lower, points, chunk_size)
        evaluated, evaluated_l = evaluated_lower(bounds, evaluated)
    if recommendation is None:
        if evaluated_l.numel():
            index = int(evaluated_l.argmax())
            recommendation, recommendation_lower = evaluated[index], float(evaluated_l[index])
        else:
            index = int(lower.argmax())
            recommendation, recommendation_lower = points[index], float(lower[index])
    else:
        with torch.no_grad():
            recommendation_lower = float(bounds.lower(recommendation.reshape(1, -1)))
    optimum_upper = float(upper.max())
    optimum_lower = max(float(lower.max()), recommendation_lower)
    if evaluated_l.numel():
        optimum_lower = max(optimum_lower, float(evaluated_l.max()))
    keep = upper >= optimum_lower
    return Certificate(
        gap=optimum_upper - recommendation_lower,
        recommendation=recommendation.to(domain.points.dtype),
        recommendation_lower=recommendation_lower,
        optimum_lower=optimum_lower,
        optimum_upper=optimum_upper,
        candidates=domain.points[keep.to(domain.points.device)],
        candidate_half_widths=None,
        lower_bound_range=lower_range(evaluated_l if evaluated_l.numel() else lower),
        guaranteed=bool(bounds.guaranteed),
        assumptions=bounds.assumptions,
        delta=float(bounds.delta),
        method=f"finite domain: the exact maximum of u_t over its {points.shape[0]} points",
    )
