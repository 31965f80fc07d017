"""The RKHS metric against the kernel itself: ``sqrt(k(x, x) + k(y, y) - 2 k(x, y))`` from
GPyTorch, the cell radius against brute force over random points of the cell, the
multi-task metric against ``w^T (Gamma(x,x) + Gamma(y,y) - Gamma(x,y) - Gamma(y,x)) w``."""

from __future__ import annotations

import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models.transforms.input import Normalize, Warp
from gpytorch.kernels import LinearKernel, MaternKernel, PeriodicKernel, RBFKernel, ScaleKernel

from botorch_mtucb.confidence.certificate import KernelMetric


def _kernels(d: int):
    rbf = RBFKernel(ard_num_dims=d)
    rbf.lengthscale = torch.linspace(0.2, 0.5, d)
    scaled = ScaleKernel(MaternKernel(nu=2.5))
    scaled.base_kernel.lengthscale = 0.3
    scaled.outputscale = 2.5
    kernels = [rbf, scaled]
    for nu in (0.5, 1.5):
        matern = MaternKernel(nu=nu)
        matern.lengthscale = 0.4
        kernels.append(matern)
    return [k.double() for k in kernels]


def _brute_distance(kernel, X, Y, transform=None):
    if transform is not None:
        X, Y = transform(X), transform(Y)
    kxx = kernel(X, diag=True)
    kyy = kernel(Y, diag=True)
    kxy = torch.stack([kernel(x[None], y[None]).to_dense().squeeze() for x, y in zip(X, Y)])
    return (kxx + kyy - 2 * kxy).clamp_min(0).sqrt().detach()


@pytest.mark.parametrize("d", [1, 3])
def test_distance_matches_the_kernel(d, dtype):
    for kernel in _kernels(d):
        X = torch.rand(20, d, dtype=torch.float64)
        Y = X + 0.3 * torch.randn(20, d, dtype=torch.float64)
        metric = KernelMetric(kernel, input_dim=d)
        expected = _brute_distance(kernel, X, Y)
        got = metric.distance(X.to(dtype), Y.to(dtype))
        assert got.dtype == torch.float64
        atol = 1e-7 if dtype == torch.float64 else 1e-5
        torch.testing.assert_close(got, expected, atol=atol, rtol=1e-6)
        assert bool((metric.distance(X, Y) >= expected - 1e-9).all())  # never below


def test_distance_with_an_affine_input_transform():
    d = 2
    transform = Normalize(d, bounds=torch.tensor([[0.0, -5.0], [10.0, 5.0]], dtype=torch.float64))
    transform.eval()
    kernel = _kernels(d)[0]
    X = 10 * torch.rand(10, d, dtype=torch.float64)
    Y = 10 * torch.rand(10, d, dtype=torch.float64)
    metric = KernelMetric(kernel, input_transform=transform, input_dim=d)
    torch.testing.assert_close(
        metric.distance(X, Y), _brute_distance(kernel, X, Y, transform), atol=1e-7, rtol=1e-6
    )


@pytest.mark.parametrize("d", [1, 2, 3])
def test_cell_radius_bounds_every_point_of_the_cell(d):
    for kernel in _kernels(d):
        metric = KernelMetric(kernel, input_dim=d)
        centre = torch.rand(1, d, dtype=torch.float64)
        half = 0.05 + 0.2 * torch.rand(1, d, dtype=torch.float64)
        points = centre + half * (2 * torch.rand(500, d, dtype=torch.float64) - 1)
        corners = centre + half * (2 * torch.randint(0, 2, (8, d)).double() - 1)
        distances = _brute_distance(kernel, torch.cat([points, corners]), centre.expand(508, d))
        radius = metric.cell_radius(half)
        assert float(distances.max()) <= float(radius) + 1e-12
        assert float(radius) - float(distances[-8:].max()) < 1e-7  # attained at a corner


def test_multi_task_metric_matches_the_vector_valued_kernel():
    k1, k2 = _kernels(2)[:2]
    B1 = torch.tensor([[1.0, 0.6], [0.6, 1.0]], dtype=torch.float64)
    B2 = torch.tensor([[0.5, -0.2], [-0.2, 0.3]], dtype=torch.float64)
    w = torch.tensor([0.7, -1.3], dtype=torch.float64)
    weights = torch.stack([w @ B1 @ w, w @ B2 @ w])
    metric = KernelMetric([k1, k2], weights, input_dim=2)
    X = torch.rand(6, 2, dtype=torch.float64)
    Y = torch.rand(6, 2, dtype=torch.float64)

    def gamma(a, b):
        return (
            k1(a[None], b[None]).to_dense().squeeze() * B1
            + k2(a[None], b[None]).to_dense().squeeze() * B2
        )

    expected = torch.stack([
        (w @ (gamma(x, x) + gamma(y, y) - gamma(x, y) - gamma(y, x)) @ w).sqrt()
        for x, y in zip(X, Y)
    ])  # fmt: skip
    torch.testing.assert_close(metric.distance(X, Y), expected, atol=1e-7, rtol=1e-6)


def test_unsupported_kernels_and_transforms_are_refused():
    for kernel in (PeriodicKernel(), LinearKernel(), RBFKernel() + RBFKernel()):
        with pytest.raises(UnsupportedError, match="RBFKernel or MaternKernel"):
            KernelMetric(kernel, input_dim=1)
    with pytest.raises(UnsupportedError, match="active_dims"):
        KernelMetric(RBFKernel(active_dims=[0]), input_dim=2)
    with pytest.raises(UnsupportedError, match="input transform"):
        KernelMetric(RBFKernel(), input_transform=Warp(1, indices=[0]), input_dim=1)
    with pytest.raises(ValueError, match="w\\^T B_j w must be >= 0"):
        KernelMetric([RBFKernel()], [-1.0], input_dim=1)
