"""Shared problems of the certificate tests: a function of known RKHS norm (a kernel
expansion ``f = sum_i a_i k(., z_i)``, ``||f||_H^2 = a^T K_z a``) and its noisy data."""

from __future__ import annotations

import torch
from gpytorch.kernels import RBFKernel

from botorch_mtucb.confidence import MartingaleMixtureBound


def rbf(lengthscale: float = 0.25) -> RBFKernel:
    kernel = RBFKernel().double()
    kernel.lengthscale = lengthscale
    return kernel


def known_norm_function(kernel, d: int, norm: float, generator: torch.Generator, centres=8):
    """``f(X)`` (``N x d`` to ``N``) with ``||f||_H = norm`` exactly."""
    Z = torch.rand(centres, d, dtype=torch.float64, generator=generator)
    a = torch.randn(centres, dtype=torch.float64, generator=generator)
    with torch.no_grad():
        K = kernel(Z).to_dense()
        a = a * norm / (a @ K @ a).sqrt()

    def f(X: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return kernel(X.to(torch.float64), Z).to_dense() @ a

    return f


def noisy_bound(f, kernel, X, norm: float, noise_std: float, delta: float, generator):
    Y = f(X) + noise_std * torch.randn(X.shape[0], dtype=torch.float64, generator=generator)
    return MartingaleMixtureBound(X, Y.unsqueeze(-1), kernel, norm, noise_std, delta)
