r"""The exact posterior at a fixed, finite candidate set, kept incrementally.

Source: issue 14, item 1 (the finite-domain loop of paper 000's policies). On a finite
domain ``D`` (``N`` points) every round asks for the posterior at the same ``N`` points.
With the lower Cholesky factor ``L`` of ``G_t + eta I`` (``VectorValuedGP``) the
posterior is read off

.. math::
    V_t = L_t^{-1} G_t(D), \qquad
    \mu_t(D) = V_t^\top (L_t^{-1} Y_t), \qquad
    \Gamma_t(D, D) = \Gamma(D, D) - V_t^\top V_t \;\text{(blocks per point)},

and ``V`` only gains rows: when ``L`` is bordered by ``[W, L_S]`` (``GrowingCholesky``)
for ``m`` new observations with cross-covariances ``C = G(new, D)``,

.. math::
    V_{t+m} = \begin{pmatrix} V_t \\ L_S^{-1} (C - W V_t) \end{pmatrix},

which costs ``O(t m N)`` per update instead of the ``O(t^2 N)`` triangular solve and the
``t N`` kernel evaluations of a posterior computed from scratch. On the ICM eigen route
(paper 000, Section 3.3) there is one ``V`` per eigenvalue group (``L_g`` factorizes
``xi_g K_t + eta I``, ``V_g = L_g^{-1} K(X_t, D)``); when a new input is one of the
candidates, the factor's new row ``W_g = xi_g V_g[:, j]^T`` is read off ``V`` too.

This module holds the storage (``CandidateSolves``, rows in a preallocated buffer,
extended in place) and the lookup of query points among the candidates
(``match_candidates``); ``VectorValuedGP.track_candidates`` uses them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from botorch_mtucb.utils.linalg import GROWTH, HEADROOM, GrowingCholesky

MAX_MATCH_COMPARISONS = 2**22  # query points x candidates compared entry by entry at most


class CandidateSolves:
    r"""``V = L^{-1} C`` (``batch x t x K``) for a growing lower factor ``L``, kept in a
    preallocated ``batch x capacity x K`` buffer that grows geometrically (amortized
    ``O(K)`` copied entries per row), extended in place by ``extend``.

    Args:
        values: The initial ``batch x t x K`` values (``t`` may be 0).
        capacity: Rows reserved (default ``t + HEADROOM``).

    Raises:
        ValueError: If ``values`` has fewer than 2 dimensions or ``capacity < t``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.candidate_posterior import CandidateSolves
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> A = torch.tensor([[4.0, 2.0], [2.0, 5.0]], dtype=torch.float64)
        >>> C = torch.tensor([[1.0, 0.0, 2.0], [3.0, 1.0, 0.0]], dtype=torch.float64)
        >>> factor = GrowingCholesky(A[:1, :1])
        >>> solves = CandidateSolves(factor.solve(C[:1]))
        >>> factor.append(A[:1, 1:], A[1:, 1:])
        >>> solves.extend(factor, C[1:])  # now L^{-1} C for the 2 x 2 factor
        >>> torch.allclose(solves.values, torch.linalg.solve_triangular(
        ...     factor.factor, C, upper=False))
        True
    """

    def __init__(self, values: Tensor, capacity: int | None = None) -> None:
        if values.dim() < 2:
            raise ValueError(f"values must be batch x t x K, got shape {tuple(values.shape)}")
        size = values.shape[-2]
        capacity = self.initial_capacity(size) if capacity is None else capacity
        if capacity < size:
            raise ValueError(f"capacity must be at least t = {size}, got {capacity}")
        self.size = size
        self.buffer = values.new_zeros(*values.shape[:-2], capacity, values.shape[-1])
        self.buffer[..., :size, :] = values

    @staticmethod
    def initial_capacity(rows: int) -> int:
        """The rows a buffer built on ``rows`` rows reserves (``rows + HEADROOM``)."""
        return rows + HEADROOM

    @property
    def values(self) -> Tensor:
        """The active rows ``V`` (a view), ``batch x t x K``."""
        return self.buffer[..., : self.size, :]

    @property
    def capacity(self) -> int:
        """The rows the buffer holds before it must grow."""
        return self.buffer.shape[-2]

    def numel_after(self, rows: int) -> int:
        """Entries of the buffer once ``rows`` more rows are held (after any growth)."""
        size = self.size + rows
        capacity = self.capacity
        if size > capacity:
            capacity = max(size, math.ceil(GROWTH * capacity))
        return self.buffer[..., :1, :].numel() * capacity

    def append(self, rows: Tensor) -> None:
        """Append ``rows`` (``batch x m x K``) in place."""
        t, m = self.size, rows.shape[-2]
        if t + m > self.capacity:
            capacity = max(t + m, math.ceil(GROWTH * self.capacity))
            buffer = self.buffer.new_zeros(*self.buffer.shape[:-2], capacity, self.buffer.shape[-1])
            buffer[..., :t, :] = self.values
            self.buffer = buffer
        self.buffer[..., t : t + m, :] = rows
        self.size = t + m

    def extend(self, factor: GrowingCholesky, cross: Tensor) -> None:
        """Add the rows ``L_S^{-1} (C - W V)`` after ``factor`` grew by ``m`` rows
        ``[W, L_S]`` (``factor.size == t + m``); ``cross``: ``C``, ``batch x m x K``.

        Raises:
            ValueError: If ``factor`` does not hold ``t + m`` rows.
        """
        t, m = self.size, cross.shape[-2]
        if factor.size != t + m:
            raise ValueError(
                f"factor must hold t + m = {t + m} rows (t = {t} solved, m = {m} new), "
                f"got {factor.size}"
            )
        rows = factor.factor[..., t : t + m, :]  # batch x m x (t + m): [W, L_S]
        residual = cross - rows[..., :t] @ self.values if t else cross
        tail = torch.linalg.solve_triangular(rows[..., t:].contiguous(), residual, upper=False)
        self.append(tail)

    def apply(self, fn: Callable[[Tensor], Tensor]) -> None:
        """Apply ``fn`` to the buffer (``.to()`` of the model that holds it)."""
        self.buffer = fn(self.buffer)


def match_candidates(X: Tensor, points: Tensor) -> Tensor | slice | None:
    r"""Where the query points ``X`` (``b x 1 x d``) are among the candidates
    (``points``, ``N x d``): ``slice(None)`` if ``X`` is exactly the candidate set in
    order, an index tensor (``b``, the first equal candidate) if every point is a
    candidate, else ``None`` (also for another shape, ``q > 1`` or ``X`` that requires
    a gradient: such queries take the plain route).

    Comparing every point with every candidate costs ``b N d``; above
    ``MAX_MATCH_COMPARISONS`` entries only the exact candidate set is recognized.

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.candidate_posterior import match_candidates
        >>> points = torch.tensor([[0.0], [0.5], [1.0]])
        >>> match_candidates(points.unsqueeze(-2), points)
        slice(None, None, None)
        >>> match_candidates(torch.tensor([[[1.0]], [[0.0]]]), points)
        tensor([2, 0])
        >>> match_candidates(torch.tensor([[[0.3]]]), points) is None
        True
    """
    if X.dim() != 3 or X.shape[-2] != 1 or X.requires_grad or X.shape[-1] != points.shape[-1]:
        return None
    rows = X[:, 0, :]
    if X.dtype != points.dtype or X.device != points.device:
        return None
    if rows.shape[0] == points.shape[0] and torch.equal(rows, points):
        return slice(None)
    if rows.shape[0] * points.numel() > MAX_MATCH_COMPARISONS:
        return None
    equal = (rows.unsqueeze(-2) == points).all(-1)  # b x N
    found = equal.any(-1)
    if not bool(found.all()):
        return None
    return equal.to(torch.int8).argmax(-1)
