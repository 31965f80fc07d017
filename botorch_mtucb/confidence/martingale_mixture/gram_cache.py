r"""The growing Gram matrix of paper 002's bounds and its regularized factorizations.

For a set of fixed regularizations ``alpha`` (``sigma^2 / c`` for the radius of eq. (8),
and the alphas of the grid and analytic bounds) the cache keeps the Cholesky factor
``L_alpha L_alpha^T = K_t + alpha I`` (a ``GrowingCholesky``), from which

.. math::
    k_t(x)^\top (K_t + \alpha I)^{-1} k_t(x) = \|L_\alpha^{-1} k_t(x)\|^2,\qquad
    \ln\det(I + K_t / \alpha) = 2 \sum_i \ln [L_\alpha]_{ii} - t \ln\alpha,

and the ridge weights ``(K_t + alpha I)^{-1} y``. Adding an observation borders each
factor in ``O(t^2)`` (paper 002, Appendix E.2, with a Cholesky factor in place of the
recursive inverse); ``K_t`` itself lives in the top-left corner of a buffer with spare
capacity (doubling) for the eigen-decomposition of the exact bound.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.utils.linalg import GrowingCholesky


class RegularizedGramCache(Module):
    r"""``K_t`` and, for a set of alphas, the factors of ``K_t + alpha I``.

    Args:
        gram: ``t x t`` Gram matrix ``K_t`` (float64; ``t`` may be 0).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.gram_cache import (
        ...     RegularizedGramCache)
        >>> cache = RegularizedGramCache(torch.zeros(0, 0, dtype=torch.float64))
        >>> index = cache.ensure(torch.tensor([0.5], dtype=torch.float64))
        >>> cache.append(torch.zeros(0, dtype=torch.float64), torch.tensor(1.5, dtype=torch.float64))
        >>> y = torch.tensor([3.0], dtype=torch.float64)
        >>> round(float(cache.weights(y, index)[0, 0]), 12)  # 3 / (1.5 + 0.5)
        1.5
        >>> round(float(cache.log_det(index)[0]), 6)  # log(1 + 1.5 / 0.5)
        1.386294
    """

    def __init__(self, gram: Tensor) -> None:
        super().__init__()
        self.size = gram.shape[-1]
        # derived from the kernel and the data: not in the state (the bound rebuilds it)
        self.register_buffer("gram_storage", gram, persistent=False)
        self.register_buffer("alphas", gram.new_zeros(0), persistent=False)
        self.factors: list[GrowingCholesky] = []

    @property
    def gram(self) -> Tensor:
        """``K_t`` (``t x t``, a view of the storage)."""
        return self.gram_storage[: self.size, : self.size]

    def index(self, alpha: float) -> Tensor:
        """The position of ``alpha`` in the cache (factorized, ``O(t^3)``, if missing):
        a ``1``-element index tensor."""
        return self.ensure(torch.tensor([alpha], dtype=self.alphas.dtype))

    def ensure(self, alphas: Tensor) -> Tensor:
        """Positions of ``alphas`` in the cache; missing ones are factorized from ``K_t``."""
        alphas = alphas.to(self.alphas.device)
        missing = sorted({a for a in alphas.tolist() if not (self.alphas == a).any()})
        if missing:
            eye = torch.eye(self.size, dtype=self.gram.dtype, device=self.gram.device)
            self.factors.extend(
                GrowingCholesky(self.gram + alpha * eye, regularization=alpha) for alpha in missing
            )
            new = torch.tensor(missing, dtype=self.alphas.dtype, device=self.alphas.device)
            self.alphas = torch.cat([self.alphas, new])
        return (self.alphas[None, :] == alphas[:, None]).float().argmax(-1)

    def weights(self, y: Tensor, index: Tensor) -> Tensor:
        """``(K_t + alpha I)^{-1} y`` for ``y`` (``t``) and the alphas at ``index``
        (``m``): ``m x t``."""
        rhs = y.reshape(-1, 1)
        return torch.stack([self.factors[i].solve_spd(rhs).squeeze(-1) for i in index.tolist()])

    def data_fit(self, y: Tensor, index: Tensor) -> Tensor:
        """``alpha y^T (K_t + alpha I)^{-1} y = alpha ||L_alpha^{-1} y||^2`` for the alphas
        at ``index`` (``m``): ``m``."""
        rhs = y.reshape(-1, 1)
        fits = [self.factors[i].solve(rhs).square().sum() for i in index.tolist()]
        return self.alphas[index] * torch.stack(fits)

    def log_det(self, index: Tensor) -> Tensor:
        """``ln det(I + K_t / alpha)`` for the alphas at ``index`` (``m``): ``m``."""
        half = torch.stack([self.factors[i].half_log_det() for i in index.tolist()])
        return 2.0 * half - self.size * self.alphas[index].log()

    def explained_variance(self, index: Tensor, cross: Tensor) -> Tensor:
        """``k_t(x)^T (K_t + alpha I)^{-1} k_t(x)`` for ``cross = k_t(x)`` (``N x t``)
        and the alphas at ``index`` (``m``): ``N x m``."""
        rhs = cross.transpose(0, 1)  # t x N
        return torch.stack(
            [self.factors[i].solve(rhs).square().sum(0) for i in index.tolist()], dim=-1
        )

    def append(self, cross: Tensor, prior_variance: Tensor) -> None:
        """Border ``K_t`` with ``cross = k_t(x)`` (``t``) and ``k(x, x)``, and every factor
        with it (``O(m t^2)``)."""
        t = self.size
        self._reserve(t + 1)
        column = cross.reshape(t, 1)
        for alpha, factor in zip(self.alphas.tolist(), self.factors):
            factor.append(column, (prior_variance + alpha).reshape(1, 1).to(column))
        self.gram_storage[t, :t] = cross
        self.gram_storage[:t, t] = cross
        self.gram_storage[t, t] = prior_variance
        self.size = t + 1

    def _reserve(self, size: int) -> None:
        """Grow the Gram storage (doubling) so that it holds ``size`` observations."""
        capacity = self.gram_storage.shape[-1]
        if size > capacity:
            capacity = max(size, 2 * capacity, 16)
            gram = self.gram_storage.new_zeros(capacity, capacity)
            gram[: self.size, : self.size] = self.gram
            self.gram_storage = gram

    def _apply(self, fn, recurse=True):
        for factor in self.factors:
            factor.buffer = fn(factor.buffer)
        return super()._apply(fn, recurse)
