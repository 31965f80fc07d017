"""Shared pieces of the Nystrom sketch tests: a sketch of a ``cases`` case, query
points and the posterior moments as NumPy arrays."""

from __future__ import annotations

import numpy as np
import torch
from cases import ETA

from botorch_mtucb.models import NystromVectorValuedGP


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _sketch(case, X=None, Y=None, tasks="same", **kwargs) -> NystromVectorValuedGP:
    X = case.train_X if X is None else X
    Y = case.train_Y if Y is None else Y
    tasks = case.train_tasks if isinstance(tasks, str) else tasks
    kernels = case.kernels[0] if len(case.kernels) == 1 else case.kernels
    covariances = (
        case.task_covariances[0] if len(case.task_covariances) == 1 else case.task_covariances
    )
    return NystromVectorValuedGP(X, Y, kernels, covariances, ETA, train_tasks=tasks, **kwargs)


def _test_points(dtype, q=4, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(q, 2, generator=generator, dtype=torch.float64).to(dtype)


def _moments(model, X):
    posterior = model.posterior(X)
    return _np(posterior.mean), _np(posterior.distribution.covariance_matrix)
