"""Fitted-looking BoTorch multi-output GPs with hand-set hyperparameters, and NumPy oracles.

Each case builds a BoTorch model (no fitting: hyperparameters are set by hand, so the
tests are fast and deterministic) and, independently of the package, the dense NumPy
prior covariance ``K`` of its scalar training observations and their noise covariance
``Sigma`` in the model's transformed space, per a-priori independent group: the min-max
scaling of ``Normalize`` and the ``y / std`` of ``Standardize`` written out by hand, the
RBF kernel from its closed form, ``B = F F^T + diag(v)`` of the index kernels.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch
from botorch.exceptions.warnings import InputDataWarning
from botorch.models import KroneckerMultiTaskGP, ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from gpytorch.likelihoods import MultitaskGaussianLikelihood
from oracles import se_kernel

CASE_NAMES = (
    "single",
    "two_outputs",
    "fixed_noise",
    "multitask",
    "kronecker",
    "kronecker_rank1",
    "list_shared",
    "list_own_inputs",
)
N, D = 8, 2


def np64(value) -> np.ndarray:
    return value.detach().cpu().to(torch.float64).numpy()


def normalize(X: np.ndarray) -> np.ndarray:
    """BoTorch's ``Normalize`` with bounds learned from the data."""
    low, high = X.min(0), X.max(0)
    return (X - low) / (high - low)


def _index_kernel_matrix(task_kernel) -> np.ndarray:
    """``F F^T + diag(v)``, scaled to a unit target entry for a ``PositiveIndexKernel``."""
    F, v = np64(task_kernel.covar_factor), np64(task_kernel.var)
    B = F @ F.T + np.diag(v)
    if getattr(task_kernel, "unit_scale_for_target", False):
        B = B / B[task_kernel.target_task_index, task_kernel.target_task_index]
    return B


@dataclass
class BoTorchCase:
    """A model, the inputs it was built from, and the NumPy ``(K, Sigma)`` per group."""

    name: str
    model: object
    groups: list[tuple[np.ndarray, np.ndarray]]
    num_tasks: int


def _data(dtype, seed=0, rows=N, columns=2):
    g = torch.Generator().manual_seed(seed)
    X = 5.0 * torch.rand(rows, D, generator=g, dtype=torch.float64)
    Y = 3.0 * torch.randn(rows, columns, generator=g, dtype=torch.float64) + 2.0
    return X.to(dtype), Y.to(dtype)


def _zero_means(model) -> None:
    for name, parameter in model.named_parameters():
        if "mean_module" in name:
            parameter.data.zero_()


def _rbf(kernel, lengthscale) -> np.ndarray:
    kernel.lengthscale = torch.tensor(lengthscale).to(kernel.lengthscale)
    return np64(kernel.lengthscale).reshape(-1)


def build_botorch_case(
    name: str, dtype=torch.float64, equal_noise=False, zero_mean=False
) -> BoTorchCase:
    """The case ``name`` in ``dtype``; ``equal_noise``: one noise variance for all
    observations (the setting in which ``VectorValuedGP.from_model`` is exact)."""
    with torch.random.fork_rng(), warnings.catch_warnings():
        torch.manual_seed(0)  # BoTorch draws the task kernels' initial values
        warnings.simplefilter("ignore", InputDataWarning)  # float32, inputs off [0, 1]
        return _build_case(name, dtype, equal_noise, zero_mean)


def _build_case(name, dtype, equal_noise, zero_mean) -> BoTorchCase:
    X, Y = _data(dtype)
    if name in ("single", "two_outputs"):
        m = 1 if name == "single" else 2
        model = SingleTaskGP(X, Y[:, :m], input_transform=Normalize(D))
        lengthscales = [[0.3, 0.5], [0.6, 0.2]][:m]
        noises = [0.02, 0.02 if equal_noise else 0.05][:m]
        model.covar_module.lengthscale = torch.tensor(lengthscales).reshape(
            model.covar_module.lengthscale.shape
        )
        model.likelihood.noise = torch.tensor(noises).reshape(model.likelihood.noise.shape)
        Z = normalize(np64(X))
        groups = [
            (
                se_kernel(np64(model.covar_module.lengthscale)[i])(Z, Z),
                np.eye(N) * np64(model.likelihood.noise).reshape(-1)[i],
            )
            for i in range(m)
        ]
        num_tasks = m
    elif name == "fixed_noise":
        Yvar = torch.full_like(Y[:, :1], 0.3) if equal_noise else 0.1 + Y[:, :1].abs() / 10
        model = SingleTaskGP(X, Y[:, :1], Yvar)
        ell = _rbf(model.covar_module, [0.4, 0.7])
        std = np64(Y[:, 0]).std(ddof=1)
        groups = [(se_kernel(ell)(np64(X), np64(X)), np.diag(np64(Yvar[:, 0]) / std**2))]
        num_tasks = 1
    elif name == "multitask":
        tasks = torch.tensor([0, 1, 2, 0, 1, 2, 1, 1], dtype=dtype)
        Xt = torch.cat([X, tasks.unsqueeze(-1)], -1)
        model = MultiTaskGP(
            Xt, Y[:, :1], task_feature=-1, input_transform=Normalize(D + 1, indices=[0, 1])
        )
        data_kernel, task_kernel = model.covar_module.kernels
        ell = _rbf(data_kernel, [0.5, 0.3])
        noise = [0.03] * 3 if equal_noise else [0.01, 0.03, 0.05]
        model.likelihood.noise = torch.tensor(noise, dtype=dtype).reshape(
            model.likelihood.noise.shape
        )
        noise = np64(model.likelihood.noise).reshape(-1)
        B = _index_kernel_matrix(task_kernel)
        Z = normalize(np64(X))
        t = np64(tasks).astype(int)
        K = se_kernel(ell)(Z, Z) * B[t][:, t]
        groups = [(K, np.diag(noise[t]))]
        num_tasks = 3
    elif name in ("kronecker", "kronecker_rank1"):
        rank = 1 if name == "kronecker_rank1" else 0
        model = KroneckerMultiTaskGP(
            X,
            Y,
            input_transform=Normalize(D),
            outcome_transform=Standardize(2),
            likelihood_rank=rank,
        )
        ell = _rbf(model.covar_module.data_covar_module, [0.4, 0.6])
        likelihood: MultitaskGaussianLikelihood = model.likelihood
        likelihood.noise = torch.tensor([1e-3]).to(X)
        if rank == 0:
            likelihood.task_noises = torch.tensor([0.02, 0.02 if equal_noise else 0.06]).to(X)
            S = np.diag(np64(likelihood.task_noises))
        else:
            likelihood.task_noise_covar_factor.data = torch.tensor([[0.2], [0.1]]).to(X)
            F = np64(likelihood.task_noise_covar_factor)
            S = F @ F.T
        S = S + np64(likelihood.noise).reshape(-1)[0] * np.eye(2)
        B = _index_kernel_matrix(model.covar_module.task_covar_module)
        Z = normalize(np64(X))
        groups = [(np.kron(se_kernel(ell)(Z, Z), B), np.kron(np.eye(N), S))]
        num_tasks = 2
    elif name in ("list_shared", "list_own_inputs"):
        X2 = X if name == "list_shared" else _data(dtype, seed=1, rows=5)[0]
        first = SingleTaskGP(X, Y[:, :1], input_transform=Normalize(D))
        second = SingleTaskGP(X2, Y[: X2.shape[0], 1:])
        ell1 = _rbf(first.covar_module, [0.3, 0.4])
        ell2 = _rbf(second.covar_module, [0.8, 0.5])
        first.likelihood.noise = torch.tensor([0.02]).to(X)
        second.likelihood.noise = torch.tensor([0.02 if equal_noise else 0.07]).to(X)
        model = ModelListGP(first, second)
        Z = normalize(np64(X))
        groups = [
            (se_kernel(ell1)(Z, Z), np64(first.likelihood.noise).reshape(-1)[0] * np.eye(N)),
            (
                se_kernel(ell2)(np64(X2), np64(X2)),
                np64(second.likelihood.noise).reshape(-1)[0] * np.eye(X2.shape[0]),
            ),
        ]
        num_tasks = 2
    else:  # pragma: no cover - test helper misuse
        raise ValueError(name)
    if zero_mean:
        _zero_means(model)
    return BoTorchCase(name, model, groups, num_tasks)


def numpy_gain(groups) -> float:
    """``sum 1/2 log det(I + Sigma^{-1/2} K Sigma^{-1/2})`` = ``1/2 (logdet(K + Sigma) -
    logdet(Sigma))`` per group."""
    total = 0.0
    for K, Sigma in groups:
        total += 0.5 * (np.linalg.slogdet(K + Sigma)[1] - np.linalg.slogdet(Sigma)[1])
    return total
