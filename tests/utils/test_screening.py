"""screened_argmax: the argmax of the exact score over every candidate (brute force),
computed only where the upper bound lets a candidate win; ties as argmax_random_ties."""

from __future__ import annotations

import math

import pytest
import torch

from botorch_mtucb.utils import argmax_random_ties, screened_argmax


def _recording(exact):
    evaluated = []

    def score(indices):
        evaluated.append(indices.clone())
        return exact[indices]

    return score, evaluated


@pytest.mark.parametrize("chunk", [1, 3, 8, 100])
@pytest.mark.parametrize("seed", range(5))
def test_first_maximizer_of_the_exact_score(dtype, chunk, seed):
    g = torch.Generator().manual_seed(seed)
    exact = torch.randn(60, generator=g, dtype=torch.float64).to(dtype)
    exact[torch.randint(60, (5,), generator=g)] = exact.max()  # exact ties
    upper = exact + torch.rand(60, generator=g, dtype=torch.float64).to(dtype)
    score, evaluated = _recording(exact)
    index = screened_argmax(upper, score, rtol=0.0, chunk=chunk)
    assert index == int(torch.argmax(exact))  # torch.argmax: the first maximizer
    visited = torch.cat(evaluated)
    assert len(set(visited.tolist())) == visited.numel()  # each candidate at most once
    assert len(evaluated[0]) <= chunk  # then doubling blocks: at most the count so far
    assert all(len(b) <= max(chunk, sum(map(len, evaluated[:i]))) for i, b in enumerate(evaluated))
    # every candidate left out could not reach the maximum
    skipped = torch.ones(60, dtype=torch.bool)
    skipped[visited] = False
    assert bool((upper[skipped] < exact.max()).all())


def test_screening_saves_evaluations():
    exact = torch.linspace(0.0, 1.0, 200, dtype=torch.float64)
    upper = exact + 0.01
    score, evaluated = _recording(exact)
    assert screened_argmax(upper, score, chunk=4) == 199
    assert torch.cat(evaluated).numel() <= 8  # two chunks: the top, then the stop


def test_ties_within_rtol_are_drawn_like_argmax_random_ties():
    exact = torch.tensor([1.0, 3.0, 3.0 * (1 - 1e-14), 2.0, 3.0], dtype=torch.float64)
    upper = exact + torch.tensor([0.5, 0.0, 0.0, 0.5, 0.0], dtype=torch.float64)
    for seed in range(10):
        generator = torch.Generator().manual_seed(seed)
        reference = argmax_random_ties(exact, torch.Generator().manual_seed(seed))
        score, _ = _recording(exact)
        assert screened_argmax(upper, score, generator, chunk=1) == reference
    drawn = {
        screened_argmax(upper, _recording(exact)[0], torch.Generator().manual_seed(s))
        for s in range(40)
    }
    assert drawn == {1, 2, 4}  # all three ties, the near one within 1000 eps included
    assert screened_argmax(upper, _recording(exact)[0]) == 1  # no generator: the first


def test_a_tie_below_the_best_upper_is_still_evaluated():
    # candidate 2's upper bound equals the best exact score: it may tie and is evaluated
    exact = torch.tensor([5.0, 4.0, 5.0], dtype=torch.float64)
    upper = torch.tensor([6.0, 4.5, 5.0], dtype=torch.float64)
    score, evaluated = _recording(exact)
    drawn = {screened_argmax(upper, score, torch.Generator().manual_seed(s), chunk=1)
             for s in range(30)}  # fmt: skip
    assert drawn == {0, 2}


def test_bad_input():
    exact = torch.tensor([1.0, 2.0], dtype=torch.float64)

    def score(indices):
        return exact[indices]

    with pytest.raises(ValueError, match="upper"):
        screened_argmax(torch.zeros(0), score)
    with pytest.raises(ValueError, match="upper"):
        screened_argmax(torch.zeros(2, 2), score)
    with pytest.raises(ValueError, match="NaN"):
        screened_argmax(torch.tensor([1.0, float("nan")]), score)
    with pytest.raises(ValueError, match="chunk"):
        screened_argmax(exact, score, chunk=0)
    with pytest.raises(TypeError, match="chunk"):
        screened_argmax(exact, score, chunk=2.5)
    with pytest.raises(ValueError, match="rtol"):
        screened_argmax(exact, score, rtol=-1.0)
    with pytest.raises(ValueError, match="one value per index"):
        screened_argmax(exact, lambda indices: exact, chunk=1)
    with pytest.raises(ValueError, match="NaN"):
        screened_argmax(exact, lambda indices: torch.full((len(indices),), float("nan")))


def _visit_chunk_by_chunk(upper, exact, generator, rtol, chunk):
    """The search one chunk per call (an independent reference): the same visited set."""
    order = torch.argsort(upper, descending=True, stable=True)
    values = torch.full_like(upper, -math.inf)
    best, scale = -math.inf, 0.0
    for start in range(0, order.numel(), chunk):
        if float(upper[order[start]]) < best - rtol * scale:
            break
        which = order[start : start + chunk]
        values[which] = exact[which]
        best = max(best, float(exact[which].max()))
        scale = max(scale, float(exact[which].abs().max()))
    return argmax_random_ties(values, generator, rtol)


@pytest.mark.parametrize("seed", range(6))
def test_many_near_ties_take_logarithmically_many_calls(seed):
    """Hundreds of near-ties (paper 001's arms under the prior): the blocks double, so
    the score is called O(log N) times, and the draw is that of the chunk-by-chunk
    search."""
    g = torch.Generator().manual_seed(seed)
    exact = 1.0 + 1e-15 * torch.randn(700, generator=g, dtype=torch.float64)
    exact[:50] -= torch.rand(50, generator=g, dtype=torch.float64)  # some clear losers
    upper = torch.maximum(exact, torch.ones_like(exact)) + 1e-16
    rtol = 1000 * torch.finfo(torch.float64).eps
    score, evaluated = _recording(exact)
    index = screened_argmax(upper, score, torch.Generator().manual_seed(seed), chunk=8)
    expected = _visit_chunk_by_chunk(upper, exact, torch.Generator().manual_seed(seed), rtol, 8)
    assert index == expected
    assert len(evaluated) <= 1 + math.ceil(math.log2(700 / 8))
