r"""A kernel ridge estimate inside paper 002's confidence set: emptiness without ``eigh``.

``F_t`` (Lemma 4.2) is not empty when the kernel ridge estimate ``f_alpha = k_t(.)^T (K +
alpha I)^{-1} y`` at some alpha lies in it (a primal witness): with ``u_y = L^{-1} y`` and
``L L^T = K + alpha I``, ``||f_alpha||_H^2 = ||u_y||^2 - alpha ||(K + alpha I)^{-1} y||^2 <=
B^2`` and ``||f_alpha(x_{1:t}) - y||^2 = alpha^2 ||(K + alpha I)^{-1} y||^2 <= R_t^2``. The
ridge path is the Pareto front of the two (its Lagrangian), so a set with room for a
lattice node of ``factored_dual`` between the two constraints is shown non-empty from the
cached factors, in ``O(t^2)``; otherwise the eigen route's test decides (a witness is
sufficient, not necessary).

Source: paper 002, Lemma 4.2 (the set ``F_t``) and Appendix E.2 (the factors).
"""

from __future__ import annotations

import math

from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
    FactorAt,
    nearest_node,
    node_alpha,
)
from botorch_mtucb.utils.linalg import GrowingCholesky

WITNESS_STEPS = 4  # lattice nodes the search may add in the direction it needs


def ridge_witness(factor: GrowingCholesky, alpha: float, y: Tensor) -> tuple[float, float]:
    r"""``(||f_alpha||_H^2, ||f_alpha(x_{1:t}) - y||^2)`` of the kernel ridge estimate
    ``f_alpha = k_t(.)^T (K + alpha I)^{-1} y`` (module docstring).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.ridge_witness import ridge_witness
        >>> K = torch.tensor([[2.0]], dtype=torch.float64)
        >>> norm_sq, residual_sq = ridge_witness(GrowingCholesky(K + 1.0), 1.0,
        ...     torch.tensor([3.0], dtype=torch.float64))
        >>> round(norm_sq, 12), round(residual_sq, 12)  # w = 1: ||f||^2 = w K w, (K w - y)^2
        (2.0, 1.0)
    """
    half = factor.solve(y.unsqueeze(-1))
    weights = factor.solve_transposed(half)
    weights_sq = float(weights.square().sum())
    return float(half.square().sum()) - alpha * weights_sq, alpha**2 * weights_sq


def witnesses_nonempty(
    factor_at: FactorAt,
    cached: list[float],
    y: Tensor,
    rkhs_norm_bound: float,
    radius_sq: float,
    base_alpha: float,
) -> bool:
    r"""Whether a kernel ridge estimate at a cached alpha (in the order given: the
    likeliest first), or at up to ``WITNESS_STEPS`` lattice nodes in the direction that
    they ask for, lies in ``F_t`` (module docstring). ``False`` proves nothing: the eigen route's test then decides.

    Along the ridge path ``||f_alpha||_H`` decreases and the residual grows with
    ``alpha``: a node whose norm is too large asks for larger alphas, one whose residual
    is too large for smaller ones, and one with both too large ends the search.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.ridge_witness import (
        ...     witnesses_nonempty)
        >>> K = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> eye, y = torch.eye(2, dtype=torch.float64), torch.tensor([0.5, 0.4], dtype=torch.float64)
        >>> witnesses_nonempty(lambda a: GrowingCholesky(K + a * eye), [0.1], y, 2.0, 1.0, 0.1)
        True
    """

    def verdict(alpha: float) -> str:
        norm_sq, residual_sq = ridge_witness(factor_at(alpha), alpha, y)
        large_norm, large_residual = norm_sq > rkhs_norm_bound**2, residual_sq > radius_sq
        if large_norm and large_residual:
            return "both"
        return "norm" if large_norm else "residual" if large_residual else "inside"

    below, above = -math.inf, math.inf  # the largest "norm" alpha, the smallest "residual"
    for alpha in cached:
        kind = verdict(alpha)
        if kind in ("inside", "both"):
            return kind == "inside"
        below, above = (max(below, alpha), above) if kind == "norm" else (below, min(above, alpha))
    if below == -math.inf and above == math.inf:
        return False
    direction = 1 if below > -math.inf else -1
    node = nearest_node(base_alpha, below if direction == 1 else above)
    for _ in range(WITNESS_STEPS):
        node += direction
        alpha = node_alpha(base_alpha, node)
        if (direction == 1 and alpha >= above) or (direction == -1 and alpha <= below):
            return False  # no lattice node between the two sides
        kind = verdict(alpha)
        if kind != ("norm" if direction == 1 else "residual"):
            return kind == "inside"  # inside, or past the gap / both too large
    return False
