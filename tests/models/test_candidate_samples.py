"""Joint posterior samples at the arms of a task (``models.candidate_samples``, Matheron's
rule through ``VectorValuedGP.sample_candidates``): the samples' mean and variance are the
kept posterior moments (paper 001's MTS draws), for a linear and an RBF data kernel."""

from __future__ import annotations

import pytest
import torch
from gpytorch.kernels import LinearKernel, RBFKernel

from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.models import VectorValuedGP


def _arm_kernel(kind, dtype):
    kernel = (LinearKernel() if kind == "linear" else RBFKernel()).to(dtype)
    if kind == "linear":
        kernel.initialize(variance=1.0)
    return kernel


def _task_indexed_model(kernel, task_covariance, lam, dtype, d):
    empty = torch.zeros(0, d, dtype=dtype)
    tasks = torch.zeros(0, dtype=torch.long)
    return VectorValuedGP(empty, empty[:, :1], kernel, task_covariance, lam, train_tasks=tasks)


def _observe(model, arms, task, arm, y):
    x = arms[task][arm : arm + 1]
    Y = torch.tensor([[y]], dtype=x.dtype)
    model.append_observations(x, Y, train_tasks=torch.tensor([task]))


@pytest.mark.parametrize("kind", ["linear", "rbf"])
def test_task_arm_samples_have_the_posterior_moments(kind):
    torch.manual_seed(1)
    arms = [torch.randn(6, 2, dtype=torch.float64), torch.randn(5, 2, dtype=torch.float64)]
    Kt = UniformSimilarityTaskKernel.from_b(2, 1.0).covar_matrix.detach().double()
    model = _task_indexed_model(_arm_kernel(kind, torch.float64), Kt, 0.3, torch.float64, 2)
    assert model.track_candidates(arms)
    for s in range(5):
        _observe(model, arms, s % 2, s % 5, float(torch.randn(())))
    generator = torch.Generator().manual_seed(0)
    draws = torch.stack([model.sample_candidates(1, generator) for _ in range(6000)])
    mean, var = model.candidates.task_moments(1)
    scale = var.max().sqrt()
    assert (draws.mean(0) - mean).abs().max() < 5 * scale / 6000**0.5
    assert (draws.var(0) - var).abs().max() < 0.1 * var.max() + 1e-9
