r"""The argmax over a finite set of a score that is costly to compute, screened by a cheap
upper bound of it.

Where a score ``s_i`` has a cheap upper bound ``u_i >= s_i`` (an exact confidence bound
screened by its minimum over a few fixed ``alpha``, paper 002's DMM bound, which is never
below the exact one), the maximizer need not compute ``s`` everywhere: candidates are
visited in decreasing ``u``, ``chunk`` at a time, and the exact score is computed until the
next ``u`` falls below the best score found by more than the tie tolerance; no candidate
left can then reach or tie it. ``screened_argmax`` is this search, with the library's
tie-breaking (``argmax_random_ties``); BoTorch's ``optimize_acqf_discrete``
(``maximize_acquisition``) is the plain search that computes the score everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from botorch_mtucb.utils.checks import as_int
from botorch_mtucb.utils.random import argmax_random_ties

DEFAULT_CHUNK = 8  # candidates whose exact score is computed in one batch


def screened_argmax(
    upper: Tensor,
    score: Callable[[Tensor], Tensor],
    generator: torch.Generator | None = None,
    rtol: float | None = None,
    chunk: int = DEFAULT_CHUNK,
) -> int:
    r"""``argmax_i s_i`` over ``N`` candidates, computing ``s`` only where it can win.

    With ``u_i >= s_i`` for every candidate, the candidates are visited in decreasing
    ``u`` (stable: equal ``u`` in index order), ``chunk`` at a time, and ``s`` is
    computed on each chunk (``score(indices)``) until the next ``u`` lies below the best
    ``s`` by more than ``rtol`` times the largest ``|s|`` computed; then the result is
    ``argmax_random_ties`` of the computed scores (ties within that tolerance drawn from
    ``generator``; ``None``: the first in index order). No candidate left unvisited can
    tie: its ``s <= u`` lies below the tie threshold. With ``rtol = 0`` and no generator
    it is ``torch.argmax`` of ``s`` over all candidates (the first maximizer).

    Args:
        upper: ``N`` upper bounds ``u_i`` of the scores (a 1-d floating tensor, no NaN).
        score: ``indices -> s`` at those candidates (a 1-d long tensor in, a tensor of
            the same length out, on ``upper``'s device and dtype or castable to it).
        generator: Source of the random draw among ties (``argmax_random_ties``).
        rtol: Relative tie tolerance (``argmax_random_ties``'s; default ``1000 eps``
            of ``upper``'s dtype).
        chunk: Candidates visited per step (``>= 1``). ``score`` is called on blocks of
            the visiting order, ``chunk`` candidates first and then doubling, so that
            ``O(log N)`` calls cover any number of near-ties; a block may score up to as
            many candidates again as were visited, and only the visited ones count.

    Returns:
        The index of the maximizer (an int).

    Raises:
        ValueError: If ``upper`` is not a non-empty 1-d tensor without NaN, ``score``
            returns NaN or another number of values, ``rtol < 0`` or ``chunk < 1``.
        TypeError: If ``chunk`` is not an int.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import screened_argmax
        >>> exact = torch.tensor([0.5, 2.0, 1.0, 3.0])
        >>> upper = exact + torch.tensor([4.0, 0.1, 0.5, 0.0])  # u >= s
        >>> evaluated = []
        >>> def score(indices):
        ...     evaluated.extend(indices.tolist())
        ...     return exact[indices]
        >>> screened_argmax(upper, score, chunk=1)
        3
        >>> evaluated  # u = 4.5 (index 0), then 3.0 (index 3); then 2.1 < 3.0: stop
        [0, 3]
    """
    if not isinstance(upper, Tensor) or upper.dim() != 1 or upper.numel() == 0:
        raise ValueError(
            f"upper must be a non-empty 1-d tensor, got {getattr(upper, 'shape', upper)}"
        )
    if bool(torch.isnan(upper).any()):
        raise ValueError("upper must not contain NaN")
    chunk = as_int(chunk, "chunk", minimum=1)
    if rtol is None:
        rtol = 1000 * torch.finfo(upper.dtype).eps
    if not rtol >= 0:
        raise ValueError(f"rtol must be >= 0, got {rtol}")
    order = torch.argsort(upper, descending=True, stable=True)
    values = torch.full_like(upper, -math.inf)
    computed = torch.empty(0, dtype=values.dtype, device=values.device)
    best, scale = -math.inf, 0.0
    for start in range(0, order.numel(), chunk):
        if float(upper[order[start]]) < best - rtol * scale:
            break
        end = min(start + chunk, order.numel())
        if end > computed.numel():  # score a block: ``chunk``, then doubling (O(log N) calls)
            stop = min(max(end, 2 * computed.numel()), order.numel())
            computed = torch.cat([computed, _scores(score, order[computed.numel() : stop], values)])
        which, scores = order[start:end], computed[start:end]
        values[which] = scores
        best = max(best, float(scores.max()))
        finite = scores[torch.isfinite(scores)]
        if finite.numel():
            scale = max(scale, float(finite.abs().max()))
    return argmax_random_ties(values, generator, rtol)


def _scores(score: Callable[[Tensor], Tensor], which: Tensor, like: Tensor) -> Tensor:
    """``score(which)`` checked: one value per index, no NaN, ``like``'s dtype."""
    scores = torch.as_tensor(score(which)).to(like).reshape(-1)
    if scores.numel() != which.numel():
        raise ValueError(
            f"score must return one value per index ({which.numel()}), got {scores.numel()}"
        )
    if bool(torch.isnan(scores).any()):
        raise ValueError("score returned NaN")
    return scores
