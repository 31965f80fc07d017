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

**Sizes.** Each alpha costs a ``t x t`` factor (``O(t^3)`` to compute, ``t^2`` entries
kept), so the grids that the bounds take are bounded before anything is allocated
(``check_alpha_grid``): at most ``MAX_ALPHAS`` alphas per call (the acquisitions' limit
too; also for the multi-task bound, whose grid bounds cost one dual per alpha), and, for
the cached factors, at most ``MAX_FACTOR_ENTRIES`` entries for the factors that one
call adds (``count * t^2``). The cache keeps the first factor (the bound's ``sigma^2 /
c``) and drops the others (factorized again when asked for) when a new grid or an
appended observation would take it past ``MAX_FACTOR_ENTRIES`` entries.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_alphas
from botorch_mtucb.utils.linalg import GrowingCholesky

MAX_ALPHAS = 100  # alphas of one grid bound (a factor, or a dual, per alpha)
MAX_FACTOR_ENTRIES = 2**28  # entries of the cached factors beyond the first (2 GiB, float64)


def check_alpha_grid(alphas: float | Sequence[float] | Tensor) -> Tensor:
    """``check_alphas`` after counting the alphas against ``MAX_ALPHAS`` (before any
    tensor is built from them).

    Raises:
        TypeError, ValueError: As ``check_alphas``, or for more than ``MAX_ALPHAS``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.gram_cache import check_alpha_grid
        >>> try:
        ...     check_alpha_grid(torch.logspace(-3, 1, 1000))
        ... except ValueError as error:
        ...     print(str(error)[:64])
        alphas must hold at most MAX_ALPHAS = 100 values per call, got 1
    """
    if isinstance(alphas, Tensor):
        count = alphas.numel()
    elif isinstance(alphas, Sequence) and not isinstance(alphas, str):
        count = len(alphas)
    else:
        count = int(getattr(alphas, "size", 1))  # a NumPy array, or one number
    if count > MAX_ALPHAS:
        raise ValueError(
            f"alphas must hold at most MAX_ALPHAS = {MAX_ALPHAS} values per call, got "
            f"{count} (a grid bound computes a t x t factor or a dual per alpha); evaluate a "
            "longer grid in chunks, or take the exact bound (alphas=None: the minimum over "
            "all alpha > 0)"
        )
    return check_alphas(alphas)


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
        """Positions of ``alphas`` in the cache; missing ones are factorized from ``K_t``
        (the cache first drops the factors after the first if they would take it past
        ``MAX_FACTOR_ENTRIES``).

        Raises:
            ValueError: If the factors that ``alphas`` needs (all but the first's) hold
                more than ``MAX_FACTOR_ENTRIES`` entries (before any is computed).
        """
        alphas = alphas.to(self.alphas.device)
        requested = sorted(set(alphas.tolist()))
        missing = [a for a in requested if not (self.alphas == a).any()]
        if missing:
            first = float(self.alphas[0]) if self.alphas.numel() else missing[0]
            needed, entries = sum(a != first for a in requested), self.size**2
            if needed * entries > MAX_FACTOR_ENTRIES:
                raise ValueError(
                    f"alphas holds {needed} value(s) whose factors of K_t + alpha I (t = "
                    f"{self.size}) would hold {needed * entries} entries, more than "
                    f"MAX_FACTOR_ENTRIES = {MAX_FACTOR_ENTRIES}; pass at most "
                    f"{MAX_FACTOR_ENTRIES // max(entries, 1)} alphas at this t, or take the "
                    "exact bound (alphas=None), which needs no factor per alpha"
                )
            if (self.alphas.numel() - 1 + len(missing)) * entries > MAX_FACTOR_ENTRIES:
                self._drop_all_but_first(keep=alphas)
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
        with it (``O(m t^2)``; the factors after the first are dropped first if the grown
        ones would hold more than ``MAX_FACTOR_ENTRIES`` entries)."""
        t = self.size
        if (self.alphas.numel() - 1) * (t + 1) ** 2 > MAX_FACTOR_ENTRIES:
            self._drop_all_but_first()
        self._reserve(t + 1)
        column = cross.reshape(t, 1)
        for alpha, factor in zip(self.alphas.tolist(), self.factors):
            factor.append(column, (prior_variance + alpha).reshape(1, 1).to(column))
        self.gram_storage[t, :t] = cross
        self.gram_storage[:t, t] = cross
        self.gram_storage[t, t] = prior_variance
        self.size = t + 1

    def discard(self, alphas: Sequence[float]) -> None:
        """Drop the factors of ``alphas`` (never the first: the bound's ``sigma^2 / c``)."""
        drop = set(alphas)
        kept = [0] + [
            i for i, alpha in enumerate(self.alphas.tolist()[1:], start=1) if alpha not in drop
        ]
        if len(kept) < len(self.factors):
            self.factors = [self.factors[i] for i in kept]
            self.alphas = self.alphas[kept]

    def _drop_all_but_first(self, keep: Tensor | None = None) -> None:
        """Drop the factors after the first, except those of ``keep`` (at most
        ``MAX_FACTOR_ENTRIES`` entries: ``ensure`` checked them)."""
        kept = [0] + [
            i
            for i, alpha in enumerate(self.alphas.tolist()[1:], start=1)
            if keep is not None and bool((keep == alpha).any())
        ]
        self.factors = [self.factors[i] for i in kept]
        self.alphas = self.alphas[kept]

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
