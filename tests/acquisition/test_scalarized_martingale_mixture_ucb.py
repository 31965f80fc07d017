"""ScalarizedMartingaleMixtureUCB: values equal the bounds of the scalarization, BoTorch's
optimizers maximize it, the Chebyshev lattice lies between the exact and the per-task form."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch
from botorch.exceptions import UnsupportedError
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from gpytorch.kernels import MaternKernel, RBFKernel
from scipy.optimize import minimize

from botorch_mtucb.acquisition import ScalarizedMartingaleMixtureUCB
from botorch_mtucb.acquisition.candidates import JointBatchError
from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import (
    MAX_LATTICE_FUNCTIONALS,
    simplex_lattice,
)
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.scalarization import (
    ChebyshevScalarization,
    LinearScalarization,
    Scalarization,
)

DTYPES = (torch.float64, torch.float32)
N, D = 3, 2
WEIGHTS = torch.tensor([0.2, 0.3, 0.5], dtype=torch.float64)
REFERENCE = torch.tensor([-1.5, -1.0, -2.0], dtype=torch.float64)


def make_bound(dtype=torch.float64, t=20, task_covariance=None, kernel=None, seed=0):
    """Full-vector ICM data of 3 tasks on [0, 1]^2 (the Kronecker route)."""
    generator = torch.Generator().manual_seed(seed)
    if task_covariance is None:
        A = torch.randn(N, N, generator=generator, dtype=torch.float64)
        task_covariance = A @ A.T / N + 0.1 * torch.eye(N, dtype=torch.float64)
    X = torch.rand(t, D, generator=generator, dtype=torch.float64)
    F = torch.stack([torch.sin(3 * X[:, 0] + k) * torch.cos(2 * X[:, 1]) for k in range(N)], -1)
    Y = F + 0.1 * torch.randn(t, N, generator=generator, dtype=torch.float64)
    kernel = kernel or RBFKernel()
    kernel.lengthscale = 0.3
    return MultiTaskMartingaleMixtureBound(
        X.to(dtype), Y.to(dtype), kernel, task_covariance, 5.0, 0.1, 0.01
    )


def chebyshev(dtype=torch.float64):
    return ChebyshevScalarization(WEIGHTS.to(dtype), REFERENCE.to(dtype))


def points(shape, dtype, seed=1):
    return torch.rand(*shape, D, generator=torch.Generator().manual_seed(seed)).to(dtype)


# ------------------------------------------------------------------------ values
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alphas", [None, [0.003, 0.01, 0.03], 0.01])
def test_linear_value_is_the_bound_of_the_functional(dtype, alphas):
    bound = make_bound(dtype)
    X = points((5, 4, 1), dtype)
    for scalarization in (LinearScalarization(WEIGHTS.to(dtype)), WEIGHTS.to(dtype)):
        acqf = ScalarizedMartingaleMixtureUCB(bound, scalarization, alphas=alphas)
        values = acqf(X)
        assert values.shape == (5, 4) and values.dtype == dtype
        torch.testing.assert_close(values, bound.upper(X.squeeze(-2), WEIGHTS, alphas))
    # one f for all tasks: tighter than the weighted per-task bounds, looser than the lower
    per_task = bound.upper(X.squeeze(-2), alphas=alphas) @ WEIGHTS.to(dtype)
    assert bool((values <= per_task + 1e-5).all())
    assert bool((values >= bound.lower(X.squeeze(-2), WEIGHTS, alphas) - 1e-5).all())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alphas", [None, "DMM", "AMM"])
def test_chebyshev_value_is_the_minimum_of_the_per_task_bounds(dtype, alphas):
    bound = make_bound(dtype)
    acqf = ScalarizedMartingaleMixtureUCB(bound, chebyshev(dtype), alphas=alphas)
    X = points((6, 1), dtype)
    values = acqf(X)
    assert values.shape == (6,) and values.dtype == dtype
    s = bound.base_alpha
    grid = {None: None, "DMM": [m * s for m in (0.1, 0.3, 1, 3, 10)], "AMM": s}[alphas]
    u = bound.upper(X.squeeze(-2), alphas=grid).double()  # 6 x 3
    expected = torch.stack([WEIGHTS[i] * (u[:, i] - REFERENCE[i]) for i in range(N)]).min(0)
    torch.testing.assert_close(values.double(), expected.values, rtol=1e-5, atol=1e-6)


def exact_chebyshev(bound, x):
    """``min_{p in simplex} upper(x, p * w) - p^T (w * z)`` (minimax) by SLSQP."""

    def objective(p):
        P = torch.as_tensor(p).clamp_min(0.0)
        return float(bound.upper(x[None], weights=P * WEIGHTS)[0] - P @ (WEIGHTS * REFERENCE))

    result = minimize(objective, np.full(N, 1.0 / N), method="SLSQP", bounds=[(0.0, 1.0)] * N,
                      constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0}],
                      options={"ftol": 1e-12})  # fmt: skip
    return result.fun


@pytest.mark.parametrize("task_covariance", [None, torch.eye(N, dtype=torch.float64)])
def test_chebyshev_lattice_lies_between_the_exact_and_the_per_task_form(task_covariance):
    bound = make_bound(task_covariance=task_covariance)
    X = points((8, 1), torch.float64, seed=5)
    simple = ScalarizedMartingaleMixtureUCB(bound, chebyshev())(X)
    lattice = ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=4)(X)
    exact = torch.tensor([exact_chebyshev(bound, x) for x in X.squeeze(-2)], dtype=torch.float64)
    assert bool((lattice <= simple + 1e-10).all()) and bool((exact <= lattice + 1e-6).all())
    assert float((simple - lattice).max()) > 1e-3  # strictly tighter somewhere
    # lattice of resolution 1: the vertices p = e_i, the per-task form
    vertices = ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=1)(X)
    assert torch.equal(vertices, simple)


def test_simplex_lattice_counts_and_sums():
    lattice = simplex_lattice(3, 4)
    assert lattice.shape == (math.comb(6, 2), 3) and torch.allclose(
        lattice.sum(-1), torch.ones(1, dtype=torch.float64)
    )
    assert torch.equal(lattice[:3], torch.eye(3, dtype=torch.float64))
    assert len({tuple(row.tolist()) for row in lattice}) == len(lattice)
    assert bool(((lattice * 4) == (lattice * 4).round()).all())


# ------------------------------------------------------------------- optimizers
def test_gradient_matches_finite_differences():
    bound = make_bound(kernel=MaternKernel(nu=2.5))
    for acqf in (ScalarizedMartingaleMixtureUCB(bound, WEIGHTS),
                 ScalarizedMartingaleMixtureUCB(bound, chebyshev()),
                 ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=3)):  # fmt: skip
        x = points((1, 1), torch.float64, seed=7).requires_grad_(True)
        acqf(x).sum().backward()
        step = 1e-6
        numeric = [
            (float(acqf(x.detach() + step * e)) - float(acqf(x.detach() - step * e))) / (2 * step)
            for e in torch.eye(D, dtype=torch.float64).reshape(D, 1, 1, D)
        ]
        assert x.grad.reshape(-1).tolist() == pytest.approx(numeric, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["linear", "chebyshev"])
def test_optimize_acqf_beats_random_search(dtype, kind):
    torch.manual_seed(0)  # BoTorch draws from the global generator
    bound = make_bound(dtype, kernel=MaternKernel(nu=2.5))
    scalarization = WEIGHTS.to(dtype) if kind == "linear" else chebyshev(dtype)
    acqf = ScalarizedMartingaleMixtureUCB(bound, scalarization)
    box = torch.tensor([[0.0] * D, [1.0] * D], dtype=dtype)
    candidate, value = optimize_acqf(
        acqf, box, q=1, num_restarts=8, raw_samples=256, options={"seed": 0}
    )
    assert candidate.dtype == dtype and ((candidate >= 0) & (candidate <= 1)).all()
    assert float(value) == pytest.approx(float(acqf(candidate[None])), rel=1e-5)
    best_random = float(acqf(points((2000, 1), dtype, seed=3)).max())
    assert float(value) >= best_random - 1e-5 * abs(best_random)


@pytest.mark.parametrize("dtype", DTYPES)
def test_optimize_acqf_discrete_picks_the_largest_bound(dtype):
    bound = make_bound(dtype)
    acqf = ScalarizedMartingaleMixtureUCB(bound, chebyshev(dtype))
    choices = points((150,), dtype, seed=2)
    candidate, value = optimize_acqf_discrete(acqf, q=1, choices=choices)
    values = acqf(choices.unsqueeze(-2))
    assert torch.equal(candidate[0], choices[values.argmax()])
    assert math.isclose(float(value), float(values.max()), rel_tol=1e-6)


def test_pending_points_follow_gp_bucb():
    bound = make_bound()
    X, pending = points((6, 1), torch.float64), points((2,), torch.float64, seed=9)
    for scalarization in (WEIGHTS, chebyshev()):
        plain = ScalarizedMartingaleMixtureUCB(bound, scalarization)
        acqf = ScalarizedMartingaleMixtureUCB(bound, scalarization, X_pending=pending)
        assert bool((acqf(X) <= plain(X) + 1e-12).all()) and not torch.equal(acqf(X), plain(X))
        acqf.set_X_pending(None)
        torch.testing.assert_close(acqf(X), plain(X))
    acqf = ScalarizedMartingaleMixtureUCB(bound, WEIGHTS, X_pending=pending)
    torch.testing.assert_close(acqf(X), bound.upper(X.squeeze(-2), WEIGHTS, X_pending=pending))
    acqf.set_X_pending(pending[:0])  # no pending points: the plain bound
    torch.testing.assert_close(acqf(X), bound.upper(X.squeeze(-2), WEIGHTS))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sequential_batches_of_distinct_points(dtype):
    torch.manual_seed(0)
    bound = make_bound(dtype)
    acqf = ScalarizedMartingaleMixtureUCB(bound, chebyshev(dtype), alphas="AMM")
    box = torch.tensor([[0.0] * D, [1.0] * D], dtype=dtype)
    batch, _ = optimize_acqf(acqf, box, q=2, num_restarts=2, raw_samples=32, sequential=True)
    assert batch.shape == (2, D) and batch.dtype == dtype
    assert float(torch.cdist(batch, batch)[0, 1]) > 1e-3
    assert acqf.X_pending is None  # BoTorch restores the acquisition's pending points
    choices = points((40,), dtype, seed=4)
    picked, _ = optimize_acqf_discrete(acqf, q=3, choices=choices)
    assert len({tuple(row.tolist()) for row in picked}) == 3
    first, _ = optimize_acqf_discrete(acqf, q=1, choices=choices)
    assert torch.equal(picked[0], first[0])
    with pytest.raises(JointBatchError, match="q = 1 is required"):
        optimize_acqf(acqf, box, q=2, num_restarts=2, raw_samples=32, sequential=False)


# ------------------------------------------------------------------- bad input
class _Maximum(Scalarization):
    def forward(self, Y):
        return Y.amax(-1)


def test_bad_input():
    bound = make_bound()
    with pytest.raises(TypeError, match="bound must be a MultiTaskMartingaleMixtureBound"):
        ScalarizedMartingaleMixtureUCB(object(), WEIGHTS)
    with pytest.raises(TypeError, match="scalarization must be"):
        ScalarizedMartingaleMixtureUCB(bound, lambda y: y.sum(-1))
    with pytest.raises(TypeError, match="LinearScalarization, a ChebyshevScalarization"):
        ScalarizedMartingaleMixtureUCB(bound, _Maximum(WEIGHTS))
    with pytest.raises(ValueError, match=r"n = 3 .* got weights of shape \(2,\)"):
        ScalarizedMartingaleMixtureUCB(bound, WEIGHTS[:2])
    with pytest.raises(ValueError, match=r"one weight vector .* \(2, 3\)"):
        ScalarizedMartingaleMixtureUCB(bound, WEIGHTS.repeat(2, 1))
    with pytest.raises(ValueError, match="reference point must have shape"):
        ScalarizedMartingaleMixtureUCB(bound, ChebyshevScalarization(WEIGHTS, REFERENCE[None]))
    with pytest.raises(ValueError, match="'DMM', 'AMM'"):
        ScalarizedMartingaleMixtureUCB(bound, WEIGHTS, alphas="CMM")
    with pytest.raises(ValueError, match="alphas"):
        ScalarizedMartingaleMixtureUCB(bound, WEIGHTS, alphas=[-1.0])
    with pytest.raises(ValueError, match="ChebyshevScalarization only"):
        ScalarizedMartingaleMixtureUCB(bound, WEIGHTS, chebyshev_lattice=3)
    with pytest.raises(ValueError, match="chebyshev_lattice must be >= 1"):
        ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=0)
    with pytest.raises(TypeError, match="chebyshev_lattice"):
        ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=2.0)
    acqf = ScalarizedMartingaleMixtureUCB(bound, chebyshev())
    with pytest.raises(JointBatchError, match=r"batch_shape x 1 x 2: q = 1"):
        acqf(points((4, 2), torch.float64))
    with pytest.raises(ValueError, match="X must have shape"):
        acqf(torch.rand(4, 1, 3, dtype=torch.float64))
    for bad, error in [(torch.rand(2, 3), ValueError), (torch.rand(1, 2, 2), ValueError),
                       (torch.full((1, 2), float("nan")), ValueError), ("x", TypeError)]:  # fmt: skip
        with pytest.raises(error, match="X_pending"):
            acqf.set_X_pending(bad)


def test_chebyshev_lattice_is_bounded_before_anything_is_allocated():
    """``chebyshev_lattice=10**9`` allocated 12.6 GB before the OOM killer stopped it (the
    lattice was enumerated from ``(r + 1)^n`` tuples); its size is now checked from
    ``binom(r + n - 1, n - 1)`` alone, with the count, the limit and what fits."""
    bound = make_bound()  # n = 3 tasks
    start = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=r"chebyshev_lattice=1000000000 gives binom\(r \+ n - 1, n - 1\) = "
        r"500000001500000001 functionals for n = 3 tasks, more than "
        r"MAX_LATTICE_FUNCTIONALS = 1000 .*use chebyshev_lattice <= 43",
    ):
        ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=10**9)
    assert time.perf_counter() - start < 1.0
    assert math.comb(43 + 2, 2) <= MAX_LATTICE_FUNCTIONALS < math.comb(44 + 2, 2)
    acqf = ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=43)
    assert acqf._lattice.shape == (math.comb(45, 2), 3)
    with pytest.raises(ValueError, match="MAX_LATTICE_FUNCTIONALS"):
        ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=44)
    with pytest.raises(ValueError, match="MAX_LATTICE_FUNCTIONALS"):
        ScalarizedMartingaleMixtureUCB(bound, chebyshev(), chebyshev_lattice=44, maximize=False)
    with pytest.raises(ValueError, match="MAX_ALPHAS = 100"):
        ScalarizedMartingaleMixtureUCB(bound, WEIGHTS, alphas=torch.linspace(0.01, 1.0, 101))


def test_pending_points_need_full_vector_data():
    X = points((10,), torch.float64)
    tasks = torch.arange(10) % N
    bound = MultiTaskMartingaleMixtureBound(
        X, X[:, :1].sin(), RBFKernel(), torch.eye(N, dtype=torch.float64), 5.0, 0.1, 0.01,
        train_tasks=tasks,
    )  # fmt: skip
    acqf = ScalarizedMartingaleMixtureUCB(bound, WEIGHTS)
    assert acqf(points((3, 1), torch.float64)).shape == (3,)
    with pytest.raises(UnsupportedError, match="full-vector data"):
        acqf.set_X_pending(X[:2])
    with pytest.raises(UnsupportedError, match="full-vector data"):
        ScalarizedMartingaleMixtureUCB(bound, WEIGHTS, X_pending=X[:2])


def test_repr_and_attributes():
    bound = make_bound()
    acqf = ScalarizedMartingaleMixtureUCB(bound, chebyshev(), alphas=[0.003, 0.01])
    assert acqf.bound is bound and acqf.model is None and acqf.X_pending is None
    assert acqf.alphas.tolist() == [0.003, 0.01]
    assert repr(acqf) == (
        "ScalarizedMartingaleMixtureUCB(ChebyshevScalarization, alphas=[0.003, 0.01], M=60)"
    )
