"""Shared cases of the single-task rule tests: an RKHS function of norm ``B`` observed
with noise ``SIGMA``, empty bounds and models to feed, the alphas of the three
martingale-mixture bounds."""

from __future__ import annotations

import torch

from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.problems import RKHSTestFunction, make_kernel

B, SIGMA, DELTA, C = 10.0, 0.1, 0.01, 0.5
ALPHAS = {
    "exact": None,
    "grid": torch.tensor([0.002, 0.02, 0.2], dtype=torch.float64),
    "analytic": torch.tensor([SIGMA**2 / C], dtype=torch.float64),
}


def _data(t=20, d=2, seed=0):
    kernel = make_kernel("matern52", 0.4)
    generator = torch.Generator().manual_seed(seed)
    function = RKHSTestFunction.sample(kernel, d, B, generator=generator)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        noise = SIGMA * torch.randn(t, 1, generator=generator, dtype=torch.float64)
        Y = function(X).unsqueeze(-1) + noise
    test_X = torch.rand(40, d, generator=generator, dtype=torch.float64)
    return kernel, X, Y, test_X


def _empty_bound(kernel, d=2):
    empty_X, empty_Y = (
        torch.zeros(0, d, dtype=torch.float64),
        torch.zeros(0, 1, dtype=torch.float64),
    )
    return MartingaleMixtureBound(empty_X, empty_Y, kernel, B, SIGMA, DELTA, mixture_scale=C)


def _empty_model(kernel, regularization, d=2):
    return VectorValuedGP(
        torch.zeros(0, d, dtype=torch.float64),
        torch.zeros(0, 1, dtype=torch.float64),
        kernel,
        torch.ones(1, 1, dtype=torch.float64),
        regularization=regularization,
    )


def _feed(rule, X, Y):
    for x, y in zip(X, Y):
        rule.update(x.reshape(1, -1), y.reshape(1, 1))
