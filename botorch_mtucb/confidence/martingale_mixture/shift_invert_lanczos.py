r"""Gauss quadrature for ``(K + alpha I)^{-1}`` near a factored node: shift-and-invert Lanczos.

With a Cholesky factor ``L L^T = K + alpha_g I`` (a node ``alpha_g``) and ``Delta = alpha -
alpha_g``,

.. math::
    K + \alpha I = L (I + \Delta M) L^\top, \qquad M = L^{-1} L^{-\top},

so for ``u = L^{-1} k``: ``k^T (K + alpha I)^{-1} k = u^T (I + Delta M)^{-1} u``. ``M`` is
symmetric positive definite, with the spectrum ``1 / (lambda_i + alpha_g)`` in ``(0, 1 /
alpha_g]`` (the spectral transformation of Ericsson & Ruhe, *Math. Comp.* 35, 1980). ``n``
Lanczos steps on ``M`` from ``u / ||u||`` (``shift_invert_lanczos``: two triangular solves
per step, full reorthogonalization) give ``T_n = S diag(theta) S^T`` and the ``n``-point
Gauss rule for the spectral measure of ``M`` at ``u`` (Golub & Meurant, *Matrices,
Moments and Quadrature with Applications*, Princeton 2010, Ch. 6-7):

.. math::
    u^\top (I + \Delta M)^{-1} u \approx \|u\|^2 \sum_i \frac{S_{1i}^2}{1 + \Delta\theta_i}.

Its error is the squared energy-norm error of conjugate gradients on ``(I + Delta M) x =
u`` after ``n`` steps: at most ``4 rho^{2n}`` times the value, with ``rho = (sqrt(kappa) -
1) / (sqrt(kappa) + 1)`` and ``kappa = cond(I + Delta M) <= r`` for ``alpha`` in ``[alpha_g
/ r, r alpha_g]``, whatever the spectrum of ``K``. A bilinear form ``u^T (I + Delta M)^{-1}
u_y`` takes both Krylov spaces (``bilinear``): ``u^T x_y - Delta beta_n [c_y]_n x_u^T
q_{n+1}``, where ``x_u``, ``x_y`` are the Galerkin solutions; its error is the product of
the two solutions' errors (``u^T x_y`` alone would be only one).

Every function works on a batch of ``N`` start vectors at once (the columns of a ``t x N``
tensor), one triangular solve of ``N`` right-hand sides per half step.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from botorch_mtucb.utils.linalg import GrowingCholesky

BREAKDOWN = 1e-13  # a residual below this times ||M|| ||q|| ends that column's Krylov space


class KrylovBasis(NamedTuple):
    r"""``n`` Lanczos steps on ``M = L^{-1} L^{-T}`` from ``N`` start vectors.

    Attributes:
        vectors: ``Q`` (``N x n x t``): the orthonormal Lanczos vectors of each column.
        diagonal: ``a`` (``N x n``), the diagonal of ``T_n``.
        off_diagonal: ``b`` (``N x n``): ``b_1 ... b_{n-1}`` under the diagonal of ``T_n``,
            and ``b_n``, the coupling to the next vector (``M Q = Q T_n + b_n q_{n+1}
            e_n^T``).
        next_vector: ``q_{n+1}`` (``t x N``; zero where the space is exhausted).
        start_norm: ``||u||`` (``N``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.shift_invert_lanczos import (
        ...     shift_invert_lanczos)
        >>> start = torch.ones(4, 3, dtype=torch.float64)
        >>> basis = shift_invert_lanczos(GrowingCholesky(torch.eye(4, dtype=torch.float64)), start, 2)
        >>> basis.vectors.shape, basis.truncated(1, slice(0, 2)).vectors.shape
        (torch.Size([3, 2, 4]), torch.Size([2, 1, 4]))
    """

    vectors: Tensor
    diagonal: Tensor
    off_diagonal: Tensor
    next_vector: Tensor
    start_norm: Tensor

    def truncated(self, steps: int, columns: slice) -> KrylovBasis:
        """The first ``steps`` steps of the columns ``columns`` (``q_{n+1}`` included)."""
        n = self.vectors.shape[1]
        following = self.next_vector if steps == n else self.vectors[:, steps].transpose(0, 1)
        return KrylovBasis(
            self.vectors[columns, :steps], self.diagonal[columns, :steps],
            self.off_diagonal[columns, :steps], following[:, columns], self.start_norm[columns],
        )  # fmt: skip


class RitzSystem(NamedTuple):
    r"""``T_n = S diag(theta) S^T`` per column, read at its first and last rows.

    Attributes:
        theta: Ritz values (``N x n``) of ``M``, in ``[0, 1 / alpha_g]``.
        first: ``S_{1i}`` (``N x n``).
        last: ``S_{ni}`` (``N x n``).
        vectors: ``S`` (``N x n x n``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture import shift_invert_lanczos as sil
        >>> A = torch.diag(torch.tensor([1.0, 4.0], dtype=torch.float64))
        >>> ritz = sil.ritz_system(sil.shift_invert_lanczos(GrowingCholesky(A),
        ...                                                 torch.ones(2, 1, dtype=torch.float64), 2))
        >>> [round(v, 6) for v in ritz.theta[0].tolist()], ritz.first.shape
        ([0.25, 1.0], torch.Size([1, 2]))
    """

    theta: Tensor
    first: Tensor
    last: Tensor
    vectors: Tensor


def apply_shift_inverse(factor: GrowingCholesky, block: Tensor) -> Tensor:
    """``M block = L^{-1} L^{-T} block`` for a ``t x N`` block (two triangular solves).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.shift_invert_lanczos import (
        ...     apply_shift_inverse)
        >>> A = torch.tensor([[4.0, 2.0], [2.0, 5.0]], dtype=torch.float64)
        >>> factor = GrowingCholesky(A)
        >>> L = torch.linalg.cholesky(A)
        >>> v = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
        >>> expected = torch.linalg.inv(L) @ torch.linalg.inv(L).T @ v
        >>> bool(torch.allclose(apply_shift_inverse(factor, v), expected))
        True
    """
    return factor.solve(factor.solve_transposed(block))


def shift_invert_lanczos(
    factor: GrowingCholesky, start: Tensor, steps: int, previous: KrylovBasis | None = None
) -> KrylovBasis:
    r"""``steps`` Lanczos steps on ``M = L^{-1} L^{-T}`` from each column of ``start``
    (after the steps of ``previous``, if given: it continues them).

    Full reorthogonalization keeps ``Q`` orthonormal to round-off, so ``T_n`` is the
    projection of ``M`` and the Gauss rules hold at every ``n``. A column whose residual
    falls below ``BREAKDOWN ||M||`` has found an invariant subspace: its later vectors
    are zero (``T_n`` decouples, the rule is exact).

    Args:
        factor: ``L`` with ``L L^T = K + alpha_g I`` (``t x t``).
        start: ``t x N`` start vectors (zero columns are allowed: their rules are 0).
        steps: ``n >= 1`` (more).
        previous: The basis to continue (from the same ``factor`` and ``start``).

    Returns:
        A ``KrylovBasis``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.shift_invert_lanczos import (
        ...     ritz_system, shift_invert_lanczos)
        >>> A = torch.diag(torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64))
        >>> factor, start = GrowingCholesky(A), torch.ones(3, 1, dtype=torch.float64)
        >>> basis = shift_invert_lanczos(factor, start, 2)
        >>> basis = shift_invert_lanczos(factor, start, 1, previous=basis)  # 3 steps
        >>> sorted(round(v, 6) for v in ritz_system(basis).theta[0].tolist())  # 1 / eig(A)
        [0.25, 0.5, 1.0]
    """
    t, N = start.shape
    scale = float(1.0 / factor.factor.diagonal().square().min()) if t else 1.0  # >= ||M||
    tiny = torch.finfo(start.dtype).tiny
    if previous is None:
        norm, done = start.norm(dim=0), 0
        first = torch.where(norm > 0, start / norm.clamp_min(tiny), 0.0).transpose(0, 1)
        previous_parts = (start.new_zeros(N, 0, t), start.new_zeros(N, 0), start.new_zeros(N, 0))
    else:
        norm, done = previous.start_norm, previous.vectors.shape[1]
        first = previous.next_vector.transpose(0, 1)
        previous_parts = (previous.vectors, previous.diagonal, previous.off_diagonal)
    # Row layout (N x steps x t): each step is a few large operations (each a thread team
    # when torch runs on several threads), the next vector written in place.
    rows = torch.cat([previous_parts[0], first.unsqueeze(1), start.new_empty(N, steps, t)], 1)
    diagonal = torch.cat([previous_parts[1], start.new_zeros(N, steps)], dim=1)
    off_diagonal = torch.cat([previous_parts[2], start.new_zeros(N, steps)], dim=1)
    alive = torch.ones(N, dtype=torch.bool, device=start.device)
    for j in range(done, done + steps):
        q = rows[:, j]  # N x t
        w = apply_shift_inverse(factor, q.transpose(0, 1)).transpose(0, 1).contiguous()
        basis = rows[:, : j + 1]  # N x (j + 1) x t
        coefficients = basis @ w.unsqueeze(-1)  # N x (j + 1) x 1: Q^T M q, its last a_j
        diagonal[:, j] = coefficients[:, j, 0]
        w = torch.baddbmm(w.unsqueeze(-1), basis.transpose(1, 2), coefficients, alpha=-1.0)
        beta = w.norm(dim=(1, 2))  # one full reorthogonalization pass, then the norm
        alive = alive & (beta > BREAKDOWN * scale)
        beta = torch.where(alive, beta, 0.0)
        off_diagonal[:, j] = beta
        inverse = torch.where(alive, 1.0 / beta.clamp_min(tiny), 0.0)
        torch.mul(w.squeeze(-1), inverse.unsqueeze(-1), out=rows[:, j + 1])
    total = done + steps
    return KrylovBasis(
        rows[:, :total], diagonal, off_diagonal, rows[:, total].transpose(0, 1), norm
    )


def ritz_system(basis: KrylovBasis, steps: int | None = None) -> RitzSystem:
    """The eigen-decomposition of ``T_n`` per column (``n = steps``, default all).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.shift_invert_lanczos import (
        ...     ritz_system, shift_invert_lanczos)
        >>> A = torch.eye(2, dtype=torch.float64) * 2.0
        >>> start = torch.tensor([[1.0], [0.0]], dtype=torch.float64)
        >>> ritz = ritz_system(shift_invert_lanczos(GrowingCholesky(A), start, 2))
        >>> ritz.theta.shape, round(float(ritz.theta.max()), 6)
        (torch.Size([1, 2]), 0.5)
    """
    n = basis.diagonal.shape[-1] if steps is None else steps
    a, b = basis.diagonal[:, :n], basis.off_diagonal[:, : n - 1]
    T = torch.diag_embed(a) + torch.diag_embed(b, offset=1) + torch.diag_embed(b, offset=-1)
    theta, S = torch.linalg.eigh(T)
    return RitzSystem(theta, S[:, 0, :], S[:, n - 1, :], S)


def gauss_rule(ritz: RitzSystem, start_norm: Tensor, delta: Tensor) -> Tensor:
    r"""``||u||^2 sum_i S_{1i}^2 / (1 + Delta theta_i)``: the Gauss rule for ``u^T (I +
    Delta M)^{-1} u`` at one ``Delta`` per column (``N``), or ``G`` per column (``N x
    G``); ``Delta > -1 / max(theta)``. Returns the shape of ``delta``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.shift_invert_lanczos import (
        ...     gauss_rule, ritz_system, shift_invert_lanczos)
        >>> K = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
        >>> k = torch.tensor([[1.0], [0.5]], dtype=torch.float64)
        >>> factor = GrowingCholesky(K + 1.0 * torch.eye(2, dtype=torch.float64))  # node 1
        >>> u = factor.solve(k)
        >>> basis = shift_invert_lanczos(factor, u, 2)
        >>> rule = gauss_rule(ritz_system(basis), basis.start_norm, torch.tensor([0.5]))
        >>> exact = k.T @ torch.linalg.solve(K + 1.5 * torch.eye(2, dtype=torch.float64), k)
        >>> bool(torch.allclose(rule, exact.reshape(1)))  # two steps: exact for t = 2
        True
    """
    shift = delta.reshape(delta.shape[0], -1, 1)  # N x G x 1
    weights = ritz.first.square().unsqueeze(-2) / (1.0 + shift * ritz.theta.unsqueeze(-2))
    return (start_norm.square().reshape(-1, 1) * weights.sum(-1)).reshape(delta.shape)


class BilinearCoefficients(NamedTuple):
    r"""What ``bilinear`` needs of two Krylov spaces at one node: for each candidate ``j``
    with Krylov space ``(Q_u, T_u)`` and the shared ``(Q_y, T_y)`` of ``u_y``.

    Attributes:
        direct: ``||u_y|| (u_j^T Q_y S_y)_i S_{y,1i}`` (``N x n``): ``u^T x_y`` is ``sum_i
            direct_i / (1 + Delta theta_{y,i})``.
        last: ``||u_y|| S_{y,ni} S_{y,1i}`` (``n``): ``[c_y]_n`` is ``sum_i last_i / (1 +
            Delta theta_{y,i})``.
        coupling: ``b_{y,n}`` (``()``).
        correction: ``||u_j|| (S_u^T Q_u^T q_{y,n+1})_k S_{u,1k}`` (``N x n``): ``x_u^T
            q_{y,n+1}`` is ``sum_k correction_k / (1 + Delta theta_{u,k})``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.shift_invert_lanczos import (
        ...     BilinearCoefficients)
        >>> zero = torch.zeros(1, 2)
        >>> BilinearCoefficients(zero, zero[0], torch.tensor(0.0), zero).coupling
        tensor(0.)
    """

    direct: Tensor
    last: Tensor
    coupling: Tensor
    correction: Tensor


def bilinear_coefficients(
    candidates: KrylovBasis,
    candidate_ritz: RitzSystem,
    shared: KrylovBasis,
    shared_ritz: RitzSystem,
    start: Tensor,
) -> BilinearCoefficients:
    r"""The coefficients of ``u_j^T (I + Delta M)^{-1} u_y`` (module docstring).

    Args:
        candidates: The Krylov spaces of the ``N`` columns ``u_j``.
        candidate_ritz: Their Ritz systems.
        shared: The Krylov space of the one column ``u_y`` (``N = 1``).
        shared_ritz: Its Ritz system.
        start: The ``u_j`` (``t x N``).

    Returns:
        ``BilinearCoefficients``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture import shift_invert_lanczos as sil
        >>> K = torch.tensor([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]],
        ...                  dtype=torch.float64)
        >>> factor = GrowingCholesky(K + torch.eye(3, dtype=torch.float64))
        >>> u, u_y = factor.solve(torch.ones(3, 1, dtype=torch.float64)), factor.solve(
        ...     torch.tensor([[1.0], [0.0], [-1.0]], dtype=torch.float64))
        >>> bu, by = sil.shift_invert_lanczos(factor, u, 1), sil.shift_invert_lanczos(factor, u_y, 1)
        >>> c = sil.bilinear_coefficients(bu, sil.ritz_system(bu), by, sil.ritz_system(by), u)
        >>> c.direct.shape, c.correction.shape
        (torch.Size([1, 1]), torch.Size([1, 1]))
    """
    Q_y = shared.vectors[0]  # n x t
    projected = start.transpose(0, 1) @ Q_y.transpose(0, 1)  # N x n: u_j^T Q_y
    norm_y = shared.start_norm[0]
    direct = norm_y * (projected @ shared_ritz.vectors[0]) * shared_ritz.first  # N x n
    last = norm_y * shared_ritz.last[0] * shared_ritz.first[0]  # n
    coupling = shared.off_diagonal[0, -1]
    overlap = candidates.vectors @ shared.next_vector[:, 0]  # N x n: Q_u^T q_{y,n+1}
    rotated = torch.einsum("nk,nki->ni", overlap, candidate_ritz.vectors)
    correction = candidates.start_norm.unsqueeze(-1) * rotated * candidate_ritz.first
    return BilinearCoefficients(direct, last, coupling, correction)


def bilinear(
    coefficients: BilinearCoefficients,
    candidate_ritz: RitzSystem,
    shared_ritz: RitzSystem,
    delta: Tensor,
) -> Tensor:
    r"""``u_j^T (I + Delta_j M)^{-1} u_y`` at one ``Delta`` per candidate (``N``) or ``G``
    (``N x G``):
    ``u^T x_y - Delta b_{y,n} [c_y]_n x_u^T q_{y,n+1}`` (module docstring).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture import shift_invert_lanczos as sil
        >>> K = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
        >>> factor = GrowingCholesky(K + torch.eye(2, dtype=torch.float64))
        >>> k, y = torch.tensor([[1.0], [0.5]], dtype=torch.float64), torch.tensor(
        ...     [[0.3], [-2.0]], dtype=torch.float64)
        >>> u, u_y = factor.solve(k), factor.solve(y)
        >>> bu, by = sil.shift_invert_lanczos(factor, u, 2), sil.shift_invert_lanczos(factor, u_y, 2)
        >>> ru, ry = sil.ritz_system(bu), sil.ritz_system(by)
        >>> c = sil.bilinear_coefficients(bu, ru, by, ry, u)
        >>> value = sil.bilinear(c, ru, ry, torch.tensor([2.0], dtype=torch.float64))
        >>> exact = k.T @ torch.linalg.solve(K + 3.0 * torch.eye(2, dtype=torch.float64), y)
        >>> bool(torch.allclose(value, exact.reshape(1)))
        True
    """
    shift = delta.reshape(delta.shape[0], -1, 1)  # N x G x 1
    p_y = 1.0 / (1.0 + shift * shared_ritz.theta[0])  # N x G x n
    p_u = 1.0 / (1.0 + shift * candidate_ritz.theta.unsqueeze(-2))  # N x G x n
    direct = (coefficients.direct.unsqueeze(-2) * p_y).sum(-1)
    last = (coefficients.last * p_y).sum(-1)
    correction = (coefficients.correction.unsqueeze(-2) * p_u).sum(-1)
    value = direct - shift[..., 0] * coefficients.coupling * last * correction
    return value.reshape(delta.shape)
