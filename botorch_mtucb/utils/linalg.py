"""A Cholesky factor that grows by bordering, in place, without refactorizing.

Adding ``m`` rows and columns to a symmetric positive definite matrix ``A`` only needs
the new rows of its lower Cholesky factor:

.. math::
    \\begin{pmatrix} A & C \\\\ C^\\top & D \\end{pmatrix}
    = \\begin{pmatrix} L & 0 \\\\ W & L_S \\end{pmatrix}
      \\begin{pmatrix} L^\\top & W^\\top \\\\ 0 & L_S^\\top \\end{pmatrix},
    \\quad W = (L^{-1} C)^\\top,\\; L_S L_S^\\top = D - W W^\\top,

which costs ``O(t^2 m)`` instead of ``O((t + m)^3)``. The factor lives in the top-left
corner of a preallocated ``capacity x capacity`` buffer whose unused part holds the
identity, so that the new rows are written in place (no ``O(t^2)`` copy per update) and
a solve against the whole buffer with zero-padded right-hand sides is exact (it never
copies the factor either; the padding costs at most ``GROWTH^2`` times the flops). The
buffer starts ``HEADROOM`` rows larger than the matrix and grows geometrically by
``GROWTH`` (amortized ``O(t)`` copied entries per added row).
"""

from __future__ import annotations

import math

import torch
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

GROWTH = 1.25
HEADROOM = 32  # rows reserved beyond the initial size (appends before the first growth)


class GrowingCholesky:
    """The lower Cholesky factor ``L`` (``batch x t x t``) of a growing SPD matrix.

    Args:
        matrix: ``batch x t x t`` SPD matrix to factorize (``t`` may be 0).
        capacity: Initial buffer size (default ``t + HEADROOM``).
    """

    def __init__(self, matrix: Tensor, capacity: int | None = None) -> None:
        size = matrix.shape[-1]
        self.size = size
        self.buffer = self._identity(matrix, capacity or size + HEADROOM)
        if size:
            self.buffer[..., :size, :size] = psd_safe_cholesky(matrix)

    @staticmethod
    def _identity(like: Tensor, capacity: int) -> Tensor:
        eye = torch.eye(capacity, dtype=like.dtype, device=like.device)
        return eye.expand(*like.shape[:-2], capacity, capacity).clone()

    @property
    def factor(self) -> Tensor:
        """The active factor ``L`` (a view), ``batch x t x t``."""
        return self.buffer[..., : self.size, : self.size]

    def solve(self, rhs: Tensor) -> Tensor:
        """``L^{-1} rhs`` for ``rhs`` of shape ``batch x t x k`` (broadcast over batch)."""
        return self._solve_padded(self.buffer, rhs, upper=False)

    def solve_spd(self, rhs: Tensor) -> Tensor:
        """``(L L^T)^{-1} rhs`` for ``rhs`` of shape ``batch x t x k``."""
        half = self._solve_padded(self.buffer, rhs, upper=False)
        return self._solve_padded(self.buffer.transpose(-1, -2), half, upper=True)

    def _solve_padded(self, matrix: Tensor, rhs: Tensor, upper: bool) -> Tensor:
        capacity = matrix.shape[-1]
        padded = torch.nn.functional.pad(rhs, (0, 0, 0, capacity - self.size))
        solved = torch.linalg.solve_triangular(matrix, padded, upper=upper)
        return solved[..., : self.size, :]

    def half_log_det(self) -> Tensor:
        """``1/2 log det(L L^T) = sum log diag(L)``, shape ``batch``."""
        return self.factor.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def append(self, cross: Tensor, new_block: Tensor) -> None:
        """Border the matrix with ``cross`` (``batch x t x m``) and ``new_block``
        (``batch x m x m``), in place."""
        t, m = self.size, new_block.shape[-1]
        if t + m > self.buffer.shape[-1]:
            self._grow(max(t + m, math.ceil(GROWTH * self.buffer.shape[-1])))
        if t:
            lower_left = self.solve(cross).transpose(-1, -2)  # batch x m x t
            schur = new_block - lower_left @ lower_left.transpose(-1, -2)
            self.buffer[..., t : t + m, :t] = lower_left
        else:
            schur = new_block
        self.buffer[..., t : t + m, t : t + m] = psd_safe_cholesky(schur)
        self.size = t + m

    def _grow(self, capacity: int) -> None:
        buffer = self._identity(self.buffer, capacity)
        buffer[..., : self.size, : self.size] = self.factor
        self.buffer = buffer
