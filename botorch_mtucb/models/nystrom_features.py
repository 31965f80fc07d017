r"""The redraws of an adaptive ICM build, on low-rank features of the distinct rows.

Source: paper 000 (Chowdhury & Gopalan 2021), Algorithm 2 and Appendix A, eqs. (7)-(8)
(the ICM route of ``models.nystrom_sketch``); Appendix D, Lemma 8 (the sketch is the
posterior of the features projected on the dictionary's span).

A build from data (``models.nystrom_build``) redraws the dictionary ``O(log N)`` times,
and each redraw needs only the variances at the rows, eq. (8) before the max,

.. math::
    c_i(x) = \xi_i \bigl(k(x, x) - \|\tilde\phi_t(x)\|^2
        + \eta\, \tilde\phi_t(x)^\top (\xi_i \tilde v_t + \eta I)^{-1} \tilde\phi_t(x)\bigr).

On the ``u`` distinct rows ``P`` the data kernel has a factor ``k(P, P) = F F^T`` (``u x
rho``: a pivoted Cholesky factorization, stopped once every residual variance is at most
``FEATURE_RTOL`` times the largest prior variance). With the dictionary's weights merged
per point, ``c_p = sum_{j in D_t: x_j = p} 1 / p_j``, and the number ``n_p`` of rows at
``p`` so far,

.. math::
    \tilde G_t = W k(D, D) W = A A^\top \;(A = W F_D), \qquad
    M = A^\top A = F^\top \operatorname{diag}(c) F = V S V^\top, \qquad
    \tilde\phi_t(p) = V_+^\top F_p, \qquad
    \tilde v_t = V_+^\top F^\top \operatorname{diag}(n) F V_+,

``V_+`` the eigenvectors of ``M`` kept by ``PSEUDO_INVERSE_RTOL`` (``G~_t`` and ``M``
have the same nonzero eigenvalues, and ``(G~_t^{1/2})^+ W k(D, p) = V_+^T F_p`` up to a
rotation that no variance sees). With ``v~_t = Q diag(lambda) Q^T`` and ``psi(p) = Q^T
phi~_t(p)``, the quadratic form is ``sum_k psi_k(p)^2 / (xi_i lambda_k + eta)`` for every
eigenvalue ``xi_i`` of ``B`` at once: one matrix product instead of one triangular solve
per eigenvalue group. A redraw thus costs ``O(u rho^2 + rho^3)`` in a few operations,
whatever the number of rows ``t``, instead of ``O(m t d + m'^3 + g r^2 t)`` (``m'``
distinct dictionary points, ``g`` groups). The draws themselves (``_resample``: one
uniform per row, from the model's seeded stream) are unchanged; the variances they use
equal the row route's up to ``FEATURE_RTOL`` times the prior variance and round-off.

The last redraw's sketch is the model's, in the eigenbasis of ``v~_t``: the embedding
``psi = Q^T phi~``, its root ``R_j = Q^T S_+^{-1} V_+^T F_{x_j} / p_j`` (``psi(x) = sum_j
R_j k(x_j, x)`` at any ``x``), and ``xi_g v~_t + eta I = diag(xi_g lambda + eta)``, whose
Cholesky factor is the square root of its diagonal.

*Threads.* A redraw's tensors have ``u x rho``, ``u x n`` or ``rho x rho`` entries, a
few thousand on a finite domain, and its eigen-decompositions are ``rho x rho`` and ``r
x r``: products of that size are elementwise products and sums (``small_product``),
which torch runs on the calling thread below its grain size, where a BLAS call opens a
thread team whatever its size (with 2 threads and the other core busy, each team waits
for a time slice there). The kernel is evaluated once on the distinct rows, before the
redraws, next to the passes over the rows' ``t x n`` values.

Used in float64 (the theory's precision; float32 builds take the row route) when the
factor has at most ``FEATURE_MAX_RANK`` columns or is exact (``rho = u``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from botorch_mtucb.models.nystrom_sketch import PSEUDO_INVERSE_RTOL

# The pivoted Cholesky factor stops once every residual prior variance is at most this
# fraction of the largest prior variance: the kernel on the rows is F F^T up to that.
FEATURE_RTOL = 1e-14
# Factors with more columns than this (and fewer than the distinct rows) are abandoned:
# the build then takes the row route.
FEATURE_MAX_RANK = 128
# Up to this many distinct rows the kernel is evaluated on them once (u^2 entries, at
# most 32 MiB in float64: the range check of the rows and the factor's columns), beyond
# it one column per pivot.
FEATURE_GRAM_POINTS = 2048
# Products of a redraw with at most this many multiply-adds per block of rows, in at
# most SMALL_PRODUCT_BLOCKS blocks, are elementwise products and sums: torch runs those
# on the calling thread below its grain size (32768 elements), where every BLAS call
# opens a thread team (small_product).
SMALL_PRODUCT_ENTRIES = 32768
SMALL_PRODUCT_BLOCKS = 4


def pivoted_features(
    column: Callable[[int], Tensor],
    prior: Tensor,
    rtol: float = FEATURE_RTOL,
    max_rank: int = FEATURE_MAX_RANK,
) -> Tensor | None:
    r"""A factor ``F`` (``u x rho``) with ``K = F F^T`` up to ``rtol`` times the largest
    diagonal entry, by pivoted Cholesky (the largest residual variance first).

    Args:
        column: ``j -> K[:, j]`` (``u``) for a positive semi-definite ``u x u`` ``K``.
        prior: ``K``'s diagonal, ``u``.
        rtol: Stop once every residual variance ``K_pp - ||F_p||^2`` is at most ``rtol
            * max_p K_pp``.
        max_rank: Give up past this many columns (unless ``rho = u``: exact).

    Returns:
        ``F``, or ``None`` when it would need more than ``max_rank < u`` columns or
        ``K`` vanishes.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models.nystrom_features import pivoted_features
        >>> P = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> K = RBFKernel()(P, P).to_dense().detach()
        >>> F = pivoted_features(lambda j: K[:, j], K.diagonal())
        >>> F.shape[1] < 50, bool(torch.allclose(F @ F.T, K, rtol=0, atol=1e-13))
        (True, True)
    """
    num_points = prior.shape[0]
    residual = prior.clone()
    floor = rtol * float(prior.amax())
    columns = min(num_points, max_rank)
    factor = prior.new_zeros(num_points, columns)
    for k in range(columns):
        j = int(torch.argmax(residual))
        pivot = float(residual[j])
        if pivot <= floor:
            return factor[:, :k] if k else None
        update = column(j)
        if k:
            update = update - (factor[:, :k] * factor[j, :k]).sum(-1)
        factor[:, k] = update / math.sqrt(pivot)
        residual = residual - factor[:, k].square()
        residual[j] = 0.0
    return factor if columns == num_points else None


class FeatureSketch:
    r"""The sketch of an ICM build at its ``u`` distinct rows, from their features
    (module docstring): what a build keeps between redraws.

    Args:
        features: ``F``, ``u x rho`` (``pivoted_features``).
        prior: ``k(p, p)`` at the points, ``u``.
        xi: The eigenvalues of the (whitened) ``B``, ``n``.
        group_xi: The distinct ones, ``g``; ``group_of`` (``n``): each one's group.
        regularization: ``eta``.

    Attributes:
        eigenvalues: ``lambda`` (``r``), the eigenvalues of ``v~_t`` after a ``redraw``:
            ``embedding`` and ``root`` are in its eigenbasis, where ``v~_t`` is
            ``diag(lambda)``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models.nystrom_features import FeatureSketch, pivoted_features
        >>> P = torch.linspace(0, 1, 5, dtype=torch.float64).unsqueeze(-1)
        >>> K = RBFKernel()(P, P).to_dense().detach()
        >>> prior = K.diagonal()
        >>> F = pivoted_features(lambda j: K[:, j], prior)
        >>> xi = torch.tensor([0.5, 2.0], dtype=torch.float64)
        >>> sketch = FeatureSketch(F, prior, xi, xi, torch.arange(2), 0.1)
        >>> sketch.add_rows(torch.tensor([0, 0, 3]))  # rows at points 0, 0 and 3
        >>> every = torch.arange(5)  # every point in the dictionary, p = 1
        >>> components = sketch.redraw(every, torch.ones(5, dtype=torch.float64))
        >>> components.shape, bool((components < xi * prior[:, None]).all())
        (torch.Size([5, 2]), True)
    """

    def __init__(
        self,
        features: Tensor,
        prior: Tensor,
        xi: Tensor,
        group_xi: Tensor,
        group_of: Tensor,
        regularization: float,
    ) -> None:
        self.features, self.prior = features, prior
        self.xi, self.group_xi, self.group_of = xi, group_xi, group_of
        self.regularization = regularization
        rank = features.shape[1]
        rows, columns = torch.triu_indices(rank, rank, device=features.device)
        # F_p F_p^T of every point, packed (upper triangle): u x rho (rho + 1) / 2
        self._outer = features.index_select(1, rows) * features.index_select(1, columns)
        order = torch.arange(rows.shape[0], device=features.device)
        unpack = torch.zeros(rank, rank, dtype=torch.long, device=features.device)
        unpack[rows, columns] = order
        unpack[columns, rows] = order
        self._unpack = unpack.reshape(-1)
        self._moments = prior.new_zeros(rows.shape[0])  # F^T diag(n) F, packed
        self.eigenvalues = self.basis = self.root_map = None
        self._one = prior.new_ones(())

    def _packed_gram(self, weights: Tensor) -> Tensor:
        """``F^T diag(weights) F`` (``rho x rho``) for ``weights`` per point (``u``)."""
        packed = small_product(weights.unsqueeze(0), self._outer).squeeze(0)
        rank = self.features.shape[1]
        return packed.index_select(0, self._unpack).reshape(rank, rank)

    def prior_components(self) -> Tensor:
        """``xi_i k(p, p)``, ``u x n``: the variances before any data."""
        return (self.xi * self.prior[:, None]).clamp_min(0.0)

    def information(self, components: Tensor) -> Tensor:
        """``log(1 + c_i(p) / eta)`` (nats) of ``components`` (``u x n``), as
        ``xlog1py(1, c / eta)``: an elementwise operation, which torch runs on the
        calling thread below its grain size, where ``log1p`` calls a vector math
        library that opens a thread team above 2048 entries."""
        return torch.special.xlog1py(self._one, components / self.regularization)

    def add_rows(self, points: Tensor) -> None:
        """Count rows at ``points`` (indices into the ``u`` points, ``k``)."""
        counts = torch.bincount(points, minlength=self.prior.shape[0]).to(self.prior.dtype)
        self._moments = self._moments + small_product(counts.unsqueeze(0), self._outer).squeeze(0)

    def redraw(self, dictionary: Tensor, weights: Tensor) -> Tensor:
        r"""The sketch of the dictionary whose rows sit at the points ``dictionary``
        (``m`` indices, repeats allowed) with squared weights ``weights = 1 / p_j``
        (``m``), on the rows counted by ``add_rows``; returns ``c_i(p)`` (eq. (8)
        before the max, clamped at 0), ``u x n``."""
        merged = torch.zeros_like(self.prior).index_add(0, dictionary, weights)  # c_p
        rank = self.features.shape[1]
        s, vectors = torch.linalg.eigh(self._packed_gram(merged))  # M = V S V^T
        rtol = PSEUDO_INVERSE_RTOL.get(s.dtype, 1e-6)
        keep = s > rtol * s.amax().clamp_min(torch.finfo(s.dtype).tiny)
        keep[-1] = True
        kept = vectors[:, keep]  # V_+, rho x r: phi~(p) = V_+^T F_p
        scales = s[keep].clamp_min(torch.finfo(s.dtype).tiny)  # S_+
        moments = self._moments.index_select(0, self._unpack).reshape(rank, rank)
        gram = small_product(small_product(kept.transpose(0, 1), moments), kept)  # v~_t
        self.eigenvalues, rotation = torch.linalg.eigh(gram)  # v~_t = Q diag(lambda) Q^T
        # the embedding in v~_t's eigenbasis, psi(p) = Q^T phi~(p), and its root's map
        self.basis = small_product(kept, rotation)  # V_+ Q
        self.root_map = small_product(kept / scales, rotation)  # V_+ S_+^{-1} Q
        psi = small_product(self.features, self.basis).square()  # u x r
        eta = self.regularization
        inverse = (self.group_xi[:, None] * self.eigenvalues + eta).reciprocal()  # g x r
        quad = small_product(psi, inverse.transpose(0, 1))  # u x g
        residual = self.prior - psi.sum(-1)  # k(p, p) - ||phi~(p)||^2
        components = self.xi * (residual[:, None] + eta * quad[:, self.group_of])
        return components.clamp_min(0.0)

    def embedding(self) -> Tensor:
        """``psi(p) = Q^T V_+^T F_p`` at every point, ``r x u`` (after ``redraw``): the
        embedding ``phi~`` in the eigenbasis of ``v~_t``."""
        return small_product(self.features, self.basis).transpose(0, 1)

    def root(self, dictionary: Tensor, probabilities: Tensor) -> Tensor:
        """The root ``R`` (``m x r``) of the dictionary of the last ``redraw`` (rows at
        the points ``dictionary``, inclusion probabilities ``probabilities``): ``psi(x)
        = sum_j R_j k(x_j, x)`` for every ``x``, with ``R_j = Q^T S_+^{-1} V_+^T
        F_{x_j} / p_j`` (``M V_+ = V_+ S_+``, so ``sum_j R_j F_{x_j}^T = Q^T V_+^T``)."""
        coefficients = small_product(self.features, self.root_map)  # u x r
        return coefficients.index_select(0, dictionary) / probabilities.unsqueeze(-1)


def small_product(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` (``k x l`` and ``l x n``); up to ``SMALL_PRODUCT_BLOCKS`` blocks of
    rows of ``a`` with at most ``SMALL_PRODUCT_ENTRIES`` multiply-adds each are one
    elementwise product and one sum per block, which torch runs on the calling thread,
    where a BLAS call opens a thread team whatever its size; larger products are one
    BLAS call.

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.nystrom_features import small_product
        >>> a, b = torch.rand(30, 4, dtype=torch.float64), torch.rand(4, 5, dtype=torch.float64)
        >>> bool(torch.allclose(small_product(a, b), a @ b))
        True
    """
    inner = a.shape[-1] * b.shape[-1]
    rows = max(SMALL_PRODUCT_ENTRIES // max(inner, 1), 1)
    if a.shape[-2] > SMALL_PRODUCT_BLOCKS * rows:
        return a @ b
    blocks = [(part.unsqueeze(-1) * b).sum(-2) for part in a.split(rows, -2)]
    return blocks[0] if len(blocks) == 1 else torch.cat(blocks, -2)
