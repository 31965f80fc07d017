"""The one martingale-mixture bound (``base.MartingaleMixtureBoundBase``): the single-task
bound is its one-task case (the same values as the multi-task bound with ``n = 1`` on
both of its routes), and what the base does once for both (the evaluation frame's
shapes and dtypes, pending points checked and cached, emptiness) behaves the same in
both classes."""

from __future__ import annotations

import pytest
import torch
from martingale_oracles import DELTA, SIGMA, make_kernel

from botorch_mtucb.confidence import (
    EmptyConfidenceSetError,
    MartingaleMixtureBound,
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.confidence.martingale_mixture.bound_base import MartingaleMixtureBoundBase

NORM = 6.0
ALPHAS = (None, [1e-3, 1e-2, 1e-1], SIGMA**2)  # exact, grid, analytic
ONE = torch.ones(1, 1, dtype=torch.float64)


def data(t=12, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(t, 2, generator=generator, dtype=torch.float64)
    noise = SIGMA * torch.randn(t, 1, generator=generator, dtype=torch.float64)
    return X, torch.sin(4 * X.sum(-1, keepdim=True)) + noise


def three_bounds(X, Y, kernel):
    """The single-task bound and the multi-task bound with one task, on its Kronecker
    route (full vectors) and its dense route (task-indexed data)."""
    tasks = torch.zeros(X.shape[0], dtype=torch.long)
    return (
        MartingaleMixtureBound(X, Y, kernel, NORM, SIGMA, DELTA, mixture_scale=0.5),
        MultiTaskMartingaleMixtureBound(X, Y, kernel, ONE, NORM, SIGMA, DELTA, 0.5),
        MultiTaskMartingaleMixtureBound(
            X, Y, kernel, ONE, NORM, SIGMA, DELTA, 0.5, train_tasks=tasks
        ),
    )


def test_the_single_task_bound_is_the_one_task_case(dtype):
    X, Y = data()
    kernel = make_kernel("m52", 0.4)
    single, kronecker, dense = three_bounds(X[:8], Y[:8], kernel)
    assert all(isinstance(b, MartingaleMixtureBoundBase) for b in (single, kronecker, dense))
    assert kronecker.kronecker_route and not dense.kronecker_route
    single.append_observations(X[8:], Y[8:])
    kronecker.append_observations(X[8:], Y[8:])
    dense.append_observations(X[8:], Y[8:], train_tasks=torch.zeros(4, dtype=torch.long))
    test_X = torch.rand(2, 5, 2, dtype=torch.float64).to(dtype)
    torch.testing.assert_close(kronecker.radius_squared, single.radius_squared, rtol=1e-10, atol=0)
    for alphas in ALPHAS:
        # the exact bound's search: 3e-7 where a minimum sits at the range's floor (1e-9)
        tolerance = {"rtol": 1e-6 if alphas is None else 1e-9, "atol": 1e-10}
        if dtype == torch.float32:
            tolerance = {}
        for method in ("upper", "lower"):
            expected = getattr(single, method)(test_X, alphas=alphas)
            assert expected.shape == (2, 5) and expected.dtype == dtype
            for other in (kronecker, dense):
                value = getattr(other, method)(test_X, alphas=alphas)
                assert value.shape == (2, 5, 1) and value.dtype == dtype
                torch.testing.assert_close(value[..., 0], expected, **tolerance)
    P = torch.rand(3, 2, dtype=torch.float64)  # pending points (full vectors only)
    for alphas in ALPHAS[1:]:
        torch.testing.assert_close(
            kronecker.upper(test_X, alphas=alphas, X_pending=P)[..., 0],
            single.upper(test_X, alphas=alphas, X_pending=P),
            **({"rtol": 1e-9, "atol": 1e-10} if dtype == torch.float64 else {}),
        )


@pytest.mark.parametrize("alphas", ALPHAS[:2])
def test_every_route_gives_an_empty_batch_and_gradients(alphas):
    # An empty batch of candidates (BoTorch's convention: an empty tensor) on every route,
    # with and without pending points (the multi-task dense routes failed on it before).
    X, Y = data()
    B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
    kernel, Y2 = make_kernel("rbf", 0.5), torch.cat([Y, Y.cos()], -1)
    P = torch.rand(2, 2, dtype=torch.float64)
    bounds = [
        (MartingaleMixtureBound(X, Y, kernel, NORM, SIGMA, DELTA), (), P),
        (MultiTaskMartingaleMixtureBound(X, Y2, kernel, B, NORM, SIGMA, DELTA), (2,), P),
        (
            MultiTaskMartingaleMixtureBound(
                X, Y2, [kernel, make_kernel("m52", 0.3)], [B / 2, B / 2], NORM, SIGMA, DELTA
            ),
            (2,),
            P,
        ),
        (
            MultiTaskMartingaleMixtureBound(
                X, Y, kernel, B, NORM, SIGMA, DELTA, train_tasks=torch.arange(12) % 2
            ),
            (2,),
            None,
        ),
    ]
    for bound, tail, pending in bounds:
        for X_pending in (None, pending) if pending is not None else (None,):
            empty = bound.upper(torch.zeros(0, 2), alphas=alphas, X_pending=X_pending)
            assert empty.shape == (0, *tail) and empty.dtype == torch.float32
        test_X = torch.rand(4, 2, dtype=torch.float64, requires_grad=True)
        bound.lower(test_X, alphas=alphas).sum().backward()
        assert test_X.grad is not None and torch.isfinite(test_X.grad).all()
        assert test_X.grad.abs().sum() > 0


def test_pending_points_are_checked_and_cached_alike():
    X, Y = data()
    single, kronecker, dense = three_bounds(X, Y, make_kernel("rbf", 0.5))
    test_X = torch.rand(4, 2, dtype=torch.float64)
    for bound in (single, kronecker):
        P = torch.rand(2, 2, dtype=torch.float64)
        first = bound.upper(test_X, X_pending=P)
        cached = bound._pending
        assert torch.equal(bound.upper(test_X, X_pending=P.clone()), first)
        assert bound._pending is cached  # the pending points' spectrum is kept
        bound.append_observations(X[:1], Y[:1])
        assert bound._pending is None  # new data: rebuilt at the next X_pending
        for bad, error, message in (
            (torch.ones(2, 3, dtype=torch.float64), ValueError, "X_pending must have shape m x 2"),
            (torch.full((1, 2), float("nan")), ValueError, "X_pending must be finite"),
            (torch.ones(1, 2, dtype=torch.long), TypeError, "real floating-point tensor"),
        ):
            with pytest.raises(error, match=message):
                bound.upper(test_X, X_pending=bad)
    with pytest.raises(ValueError, match="X_pending needs full-vector data"):
        dense.upper(test_X, X_pending=torch.rand(1, 2, dtype=torch.float64))


def test_both_bounds_refuse_the_same_contradicting_data():
    X, Y = data()
    for make in (
        lambda: MartingaleMixtureBound(X, 50.0 + Y, make_kernel("rbf", 0.5), 1.0, SIGMA, DELTA),
        lambda: MultiTaskMartingaleMixtureBound(
            X, 50.0 + Y, make_kernel("rbf", 0.5), ONE, 1.0, SIGMA, DELTA
        ),
    ):
        with pytest.raises(EmptyConfidenceSetError, match="norm bound at this noise level"):
            make()
