"""The box certificate: ``optimum_upper`` is at least the maximum of ``u_t`` over a fine
grid and within the stated tolerance of it (d = 1, 2, 3), every cell's bound covers
``f`` there, and the gap covers the true regret of known-norm functions."""

from __future__ import annotations

import pytest
import torch
from certificate_cases import known_norm_function, noisy_bound, rbf
from gpytorch.kernels import MaternKernel, ScaleKernel

from botorch_mtucb.confidence.certificate import MartingaleMixtureBounds, MTKBBounds, certify
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils import BoxDomain

GRID = {1: 2001, 2: 101, 3: 31}
TOLERANCE = 0.05


def _grid(d: int) -> torch.Tensor:
    axis = torch.linspace(0, 1, GRID[d], dtype=torch.float64)
    return torch.cartesian_prod(*[axis] * d).reshape(-1, d)


def _box(d: int, dtype=torch.float64) -> BoxDomain:
    return BoxDomain(torch.stack([torch.zeros(d), torch.ones(d)]).to(dtype))


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("kernel_name", ["rbf", "matern"])
def test_optimum_upper_bounds_the_grid_maximum_within_tolerance(d, kernel_name, dtype):
    generator = torch.Generator().manual_seed(d)
    if kernel_name == "rbf":
        kernel = rbf(0.4)
    else:
        kernel = ScaleKernel(MaternKernel(nu=2.5)).double()
        kernel.base_kernel.lengthscale = 0.5
        kernel.outputscale = 1.5
    f = known_norm_function(kernel, d, 1.0, generator)
    X = torch.rand(8 * d, d, dtype=torch.float64, generator=generator)
    bound = noisy_bound(f, kernel, X, 1.0, 0.02, 0.1, generator)
    certificate = certify(
        bound, _box(d, dtype), tolerance=TOLERANCE, relative_tolerance=0.0, max_cells=50_000
    )
    assert "tolerance reached" in certificate.method
    grid = _grid(d)
    grid_max = float(bound.upper(grid).max())
    assert certificate.optimum_upper >= grid_max
    # the bound stops within TOLERANCE of max_c u_t(c) <= max_x u_t(x); the grid's
    # maximum is below max_x u_t by at most B * (the metric over half a grid step)
    step = 0.5 / (GRID[d] - 1) * torch.ones(1, d, dtype=torch.float64)
    grid_error = float(MartingaleMixtureBounds(bound).cell_radius(step, step))
    assert certificate.optimum_upper - grid_max <= TOLERANCE + grid_error
    assert certificate.recommendation.dtype == dtype
    # the true regret is covered and the maximizer is in a kept cell
    values = f(grid)
    regret = float(values.max() - f(certificate.recommendation.double()[None]))
    assert certificate.gap >= regret
    x_star = grid[values.argmax()]
    centres, half = certificate.candidates.double(), certificate.candidate_half_widths.double()
    inside = ((x_star - centres).abs() <= half + 1e-12).all(-1)
    assert bool(inside.any())


def test_cell_bound_covers_the_function_on_random_points():
    """``f(x) <= u_t(c) + B d_k(x, c)`` for random points of the kept cells."""
    generator = torch.Generator().manual_seed(7)
    kernel = rbf(0.3)
    f = known_norm_function(kernel, 2, 1.5, generator)
    X = torch.rand(15, 2, dtype=torch.float64, generator=generator)
    bound = noisy_bound(f, kernel, X, 1.5, 0.02, 0.1, generator)
    bounds = MartingaleMixtureBounds(bound)
    certificate = certify(bounds, _box(2), max_cells=2000)
    centres, half = certificate.candidates, certificate.candidate_half_widths
    points = centres + half * (2 * torch.rand(centres.shape, dtype=torch.float64) - 1)
    cell_upper = bounds.upper(centres) + 1.5 * bounds.cell_radius(centres, half)
    assert bool((f(points) <= cell_upper).all())
    assert bool((bounds.upper(points) <= cell_upper + 1e-9).all())  # u_t is B-Lipschitz too
    assert float(cell_upper.max()) == pytest.approx(certificate.optimum_upper)


def test_coverage_over_repetitions_single_and_multi_task():
    """Over 20 known-norm problems at delta = 0.1 the gap is never below the true regret
    (the event fails with probability <= delta; these seeds are checked to stay in it)."""
    box, grid = _box(1), _grid(1)
    for seed in range(20):
        generator = torch.Generator().manual_seed(seed)
        kernel = rbf(0.2)
        f = known_norm_function(kernel, 1, 2.0, generator)
        X = torch.rand(6, 1, dtype=torch.float64, generator=generator)
        bound = noisy_bound(f, kernel, X, 2.0, 0.1, 0.1, generator)
        certificate = certify(bound, box)
        regret = float(f(grid).max() - f(certificate.recommendation[None]))
        assert certificate.gap >= regret
    # MT-KB on the second task of a two-task function f = (g, g + h)
    generator = torch.Generator().manual_seed(0)
    kernel = rbf(0.2)
    g = known_norm_function(kernel, 1, 1.0, generator)
    X = torch.rand(8, 1, dtype=torch.float64, generator=generator)
    Y = torch.stack([g(X), g(X)], -1) + 0.05 * torch.randn(8, 2, dtype=torch.float64)
    model = VectorValuedGP(X, Y, kernel, torch.ones(2, 2, dtype=torch.float64) + 1e-9, 0.01)
    bounds = MTKBBounds(model, 1.0, noise_std=0.05, delta=0.1, task=1)
    certificate = certify(bounds, box)
    assert certificate.gap >= float(g(grid).max() - g(certificate.recommendation[None]))
    # a bound on max g, not on max u_t: MT-KB's u_t is not b-Lipschitz (its set is an
    # ellipsoid, not inside the norm ball), so the cells can cut below max u_t
    assert certificate.optimum_upper >= float(g(grid).max())


def test_target_gap_stops_early():
    generator = torch.Generator().manual_seed(2)
    kernel = rbf(0.3)
    f = known_norm_function(kernel, 2, 1.0, generator)
    X = torch.rand(20, 2, dtype=torch.float64, generator=generator)
    bound = noisy_bound(f, kernel, X, 1.0, 0.01, 0.1, generator)
    full = certify(bound, _box(2), relative_tolerance=0.0, tolerance=1e-3)
    early = certify(bound, _box(2), target_gap=10 * full.gap)
    assert "certified <= target_gap" in early.method and early.gap <= 10 * full.gap
    shown = certify(bound, _box(2), target_gap=0.1 * full.gap)
    assert "shown > target_gap" in shown.method and shown.gap > 0.1 * full.gap
