r"""A Cholesky factor that grows by bordering, in place, without refactorizing.

Adding ``m`` rows and columns to a symmetric positive definite matrix ``A`` only needs
the new rows of its lower Cholesky factor:

.. math::
    \begin{pmatrix} A & C \\ C^\top & D \end{pmatrix}
    = \begin{pmatrix} L & 0 \\ W & L_S \end{pmatrix}
      \begin{pmatrix} L^\top & W^\top \\ 0 & L_S^\top \end{pmatrix},
    \quad W = (L^{-1} C)^\top,\; L_S L_S^\top = D - W W^\top,

which costs ``O(t^2 m)`` instead of ``O((t + m)^3)``. The factor lives in the top-left
corner of a preallocated ``capacity x capacity`` buffer whose unused part holds the
identity, so that the new rows are written in place (no ``O(t^2)`` copy per update) and
a solve against the whole buffer with zero-padded right-hand sides is exact (it never
copies the factor either; the padding costs at most ``GROWTH^2`` times the flops). The
buffer starts ``HEADROOM`` rows larger than the matrix and grows geometrically by
``GROWTH`` (amortized ``O(t)`` copied entries per added row).

BoTorch's ``botorch.utils.probability.linalg.augment_cholesky`` computes the same
bordered factor but returns a new, concatenated tensor (an ``O(t^2)`` copy per
update); the in-place buffer is what this class adds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import torch
from linear_operator.utils.cholesky import psd_safe_cholesky
from linear_operator.utils.errors import NotPSDError
from linear_operator.utils.warnings import NumericalWarning
from torch import Tensor

GROWTH = 1.25
HEADROOM = 32  # rows reserved beyond the initial size (appends before the first growth)
JITTER_TOLERANCE = 0.01  # jitter above this fraction of the regularization is reported


class CholeskyJitterWarning(UserWarning):
    """A Cholesky factor needed jitter comparable to the regularization it works with.

    GPyTorch's ``psd_safe_cholesky`` adds ``1e-6, 1e-5, ...`` (``1e-8, ...`` in float64)
    to the diagonal of a matrix that is not numerically positive definite and issues a
    ``NumericalWarning``. When the matrix is ``K + lambda I`` with ``lambda`` the noise
    variance (or regularization) and the jitter is not small against ``lambda``, the
    factor is at best that of ``K + (lambda + jitter) I`` (in float32 round-off of the
    same size changes it further): posteriors, information gains and every width
    computed from them are not the theorems'. This warning of the package's
    own says so (it is a ``UserWarning``, so filtering GPyTorch's numerical warnings does
    not hide it); the fix is float64 data (``model.double()``, ``X.double()``).

    Example:
        >>> import warnings
        >>> import torch
        >>> from botorch_mtucb.utils.linalg import CholeskyJitterWarning, cholesky_factor
        >>> ones = torch.ones(2, 2)  # singular: jitter 1e-6 is added in float32
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = cholesky_factor(ones + 1e-8 * torch.eye(2), regularization=1e-8)
        >>> any(issubclass(w.category, CholeskyJitterWarning) for w in caught)
        True
    """


def cholesky_factor(
    matrix: Tensor, regularization: float | None = None, size: int | None = None
) -> Tensor:
    r"""The lower Cholesky factor of ``matrix`` (``batch x t x t``), jitter reported.

    Factorizes with GPyTorch's ``psd_safe_cholesky`` (jitter added only when the matrix
    is not numerically positive definite). When jitter was added, its size is read off
    the factor (``max diag(L L^T) - diag(matrix)``, ``O(t^2)``) and, if it exceeds
    ``JITTER_TOLERANCE = 0.01`` times ``regularization`` (the ``lambda`` of
    ``matrix = K + lambda I``), a ``CholeskyJitterWarning`` names both, the consequence
    and the fix.

    Args:
        matrix: ``batch x t x t`` symmetric positive (semi-)definite.
        regularization: ``lambda``, the multiple of the identity in ``matrix`` that the
            jitter is compared with; ``None``: no comparison (GPyTorch's
            ``NumericalWarning`` only).
        size: The size of the whole matrix when ``matrix`` is the Schur complement of
            rows appended to a factor (for the messages; default ``t``).

    Returns:
        ``L``, ``batch x t x t``, with ``L L^T = matrix + jitter I``.

    Raises:
        linear_operator.utils.errors.NanError: If ``matrix`` holds NaN (from
            ``psd_safe_cholesky``).
        linear_operator.utils.errors.NotPSDError: If the largest jitter GPyTorch tries
            does not make it positive definite (the message names the dtype and the
            fix).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.linalg import cholesky_factor
        >>> cholesky_factor(torch.tensor([[4.0, 2.0], [2.0, 5.0]]), regularization=1.0)
        tensor([[2., 0.],
                [1., 2.]])
    """
    factor, info = torch.linalg.cholesky_ex(matrix)
    if not bool(info.any()):
        return factor
    size = matrix.shape[-1] if size is None else size
    what = f"the {str(matrix.dtype).removeprefix('torch.')} {size} x {size} matrix K + lambda I"
    advice = (
        "use float64 data (model.double(), X.double())"
        if matrix.dtype != torch.float64
        else "raise the noise variance or remove (near-)duplicate inputs"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NumericalWarning)
        try:
            factor = psd_safe_cholesky(matrix)
        except NotPSDError:
            raise NotPSDError(
                f"{what} is not positive definite, even with jitter: {advice}"
            ) from None
    jitter = float((factor.square().sum(-1) - matrix.diagonal(dim1=-2, dim2=-1)).amax())
    if regularization is not None and jitter > JITTER_TOLERANCE * regularization:
        warnings.warn(
            f"{what} needed jitter {jitter:.3g} on the diagonal of its Cholesky factor, "
            f"{jitter / regularization:.3g} times lambda = {regularization:.3g}: the "
            "posterior, the information gain and the widths computed from it are not the "
            f"theorems' (jitter and round-off of that size change them); {advice}",
            CholeskyJitterWarning,
            stacklevel=3,
        )
    else:
        for warning in caught:  # small jitter: let GPyTorch's own warning through
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return factor


class GrowingCholesky:
    r"""The lower Cholesky factor ``L`` (``batch x t x t``) of a growing SPD matrix.

    Every module of the package that extends a factorization row by row keeps it here:
    the exact multi-task posterior, the finite-arm posterior and the per-task
    information gains.

    Args:
        matrix: ``batch x t x t`` SPD matrix to factorize (``t`` may be 0).
        capacity: Initial buffer size (default ``t + HEADROOM``).
        regularization: ``lambda`` when the matrix is ``K + lambda I``: jitter that a
            factorization needs beyond 1% of it gives a ``CholeskyJitterWarning``
            (``cholesky_factor``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> A = torch.tensor([[4.0, 2.0], [2.0, 5.0]], dtype=torch.float64)
        >>> factor = GrowingCholesky(A[:1, :1])
        >>> factor.append(A[:1, 1:], A[1:, 1:])
        >>> factor.factor
        tensor([[2., 0.],
                [1., 2.]], dtype=torch.float64)
        >>> factor.solve_spd(torch.ones(2, 1, dtype=torch.float64)).squeeze(-1)
        tensor([0.1875, 0.1250], dtype=torch.float64)
        >>> round(float(factor.half_log_det()), 6)  # 1/2 log det A = log 4
        1.386294
    """

    def __init__(
        self, matrix: Tensor, capacity: int | None = None, regularization: float | None = None
    ) -> None:
        size = matrix.shape[-1]
        self.size = size
        self.regularization = regularization
        self.buffer = self._identity(matrix, capacity or size + HEADROOM)
        if size:
            self.buffer[..., :size, :size] = cholesky_factor(matrix, regularization)

    @classmethod
    def from_blocks(
        cls,
        fill: Callable[[Tensor, int], None],
        batch_size: int,
        size: int,
        like: Tensor,
        capacity: int | None = None,
        regularization: float | None = None,
    ) -> GrowingCholesky:
        r"""Factorize ``batch_size`` matrices one at a time, each built and factorized
        in its own block of the buffer (to bound the peak memory).

        ``fill(block, g)`` writes matrix ``g`` (``size x size``, SPD) into ``block`` (a
        view of the buffer) in place; its factor then replaces it there. The peak is the
        buffer plus one ``size x size`` factor, instead of the buffer plus several
        ``batch_size x size x size`` copies when the matrices are built as one tensor.

        Args:
            fill: Writes matrix ``g`` into ``block``.
            batch_size: The number of matrices ``r``.
            size: Their size ``t``.
            like: A tensor of the dtype and device wanted.
            capacity: As in the constructor (default ``t + HEADROOM``).
            regularization: As in the constructor.

        Returns:
            The factor, ``r x t x t`` (the same numbers as the constructor given the
            stacked matrices).

        Example:
            >>> import torch
            >>> from botorch_mtucb.utils import GrowingCholesky
            >>> A = torch.tensor([[4.0, 2.0], [2.0, 5.0]], dtype=torch.float64)
            >>> factor = GrowingCholesky.from_blocks(
            ...     lambda block, g: block.copy_(A).mul_(g + 1), 2, 2, A)
            >>> torch.allclose(factor.factor, torch.linalg.cholesky(torch.stack([A, 2 * A])))
            True
        """
        self = cls.__new__(cls)
        self.size = size
        self.regularization = regularization
        self.buffer = cls._identity(like.new_empty(batch_size, 0, 0), capacity or size + HEADROOM)
        if size:
            for g in range(batch_size):
                block = self.buffer[g, :size, :size]
                fill(block, g)
                block.copy_(cholesky_factor(block, regularization))
        return self

    @staticmethod
    def _identity(like: Tensor, capacity: int) -> Tensor:
        eye = torch.eye(capacity, dtype=like.dtype, device=like.device)
        return eye.expand(*like.shape[:-2], capacity, capacity).clone()

    @property
    def capacity(self) -> int:
        """The number of rows the buffer holds before it must grow (``>= size``)."""
        return self.buffer.shape[-1]

    @property
    def factor(self) -> Tensor:
        """The active factor ``L`` (a view), ``batch x t x t``."""
        return self.buffer[..., : self.size, : self.size]

    def solve(self, rhs: Tensor) -> Tensor:
        """``L^{-1} rhs`` for ``rhs`` of shape ``batch x t x k`` (broadcast over batch).

        Solved against the whole buffer with zero-padded ``rhs`` (no copy of ``L``).
        """
        return self._solve_padded(self.buffer, rhs, upper=False)

    def solve_transposed(self, rhs: Tensor) -> Tensor:
        """``L^{-T} rhs`` for ``rhs`` of shape ``batch x t x k`` (against the padded
        buffer, as ``solve``)."""
        return self._solve_padded(self.buffer.transpose(-1, -2), rhs, upper=True)

    def solve_spd(self, rhs: Tensor) -> Tensor:
        """``(L L^T)^{-1} rhs`` for ``rhs`` of shape ``batch x t x k``."""
        half = self._solve_padded(self.buffer, rhs, upper=False)
        return self._solve_padded(self.buffer.transpose(-1, -2), half, upper=True)

    def _solve_padded(self, matrix: Tensor, rhs: Tensor, upper: bool) -> Tensor:
        padded = torch.nn.functional.pad(rhs, (0, 0, 0, self.capacity - self.size))
        solved = torch.linalg.solve_triangular(matrix, padded, upper=upper)
        return solved[..., : self.size, :]

    def half_log_det(self) -> Tensor:
        """``1/2 log det(L L^T) = sum log diag(L)``, shape ``batch``."""
        return self.factor.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def append(self, cross: Tensor, new_block: Tensor) -> None:
        """Border the matrix with ``cross`` (``batch x t x m``) and ``new_block``
        (``batch x m x m``), in place: ``W = (L^{-1} C)^T``, ``L_S = chol(D - W W^T)``."""
        t = self.size
        self._reserve(t + new_block.shape[-1])  # before the solve: it uses the buffer
        if t:
            lower_left = self.solve(cross).transpose(-1, -2)  # batch x m x t
            schur = new_block - lower_left @ lower_left.transpose(-1, -2)
        else:
            lower_left, schur = new_block[..., :0], new_block
        lower_right = cholesky_factor(schur, self.regularization, size=t + schur.shape[-1])
        self.append_factor_rows(lower_left, lower_right)

    def append_factor_rows(self, lower_left: Tensor, lower_right: Tensor) -> None:
        """Append rows ``[W, L_S]`` of the factor that the caller already knows, in place.

        For callers that keep ``L^{-1} C`` for other reasons (the finite-arm posterior
        keeps ``L^{-1} K(obs, arms)``), so that ``append`` would redo a solve.

        Args:
            lower_left: ``W``, ``batch x m x t``.
            lower_right: ``L_S``, ``batch x m x m``, lower triangular with a positive
                diagonal (not checked).

        Raises:
            ValueError: If the shapes do not match the current size ``t``.

        Example:
            >>> import torch
            >>> from botorch_mtucb.utils import GrowingCholesky
            >>> factor = GrowingCholesky(torch.tensor([[4.0]]))
            >>> factor.append_factor_rows(torch.tensor([[1.0]]), torch.tensor([[2.0]]))
            >>> factor.factor @ factor.factor.T
            tensor([[4., 2.],
                    [2., 5.]])
        """
        t, m = self.size, lower_right.shape[-1]
        if lower_left.shape[-2:] != (m, t) or lower_right.shape[-2] != m:
            raise ValueError(
                f"lower_left must be batch x m x {t} and lower_right batch x m x m, got "
                f"{tuple(lower_left.shape)} and {tuple(lower_right.shape)}"
            )
        self._reserve(t + m)
        self.buffer[..., t : t + m, :t] = lower_left
        self.buffer[..., t : t + m, t : t + m] = lower_right
        self.size = t + m

    def _reserve(self, size: int) -> None:
        """Grow the buffer (geometrically) so that it holds ``size`` rows."""
        if size <= self.capacity:
            return
        buffer = self._identity(self.buffer, max(size, math.ceil(GROWTH * self.capacity)))
        buffer[..., : self.size, : self.size] = self.factor
        self.buffer = buffer
