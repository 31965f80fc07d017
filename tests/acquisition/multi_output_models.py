"""BoTorch multi-output models for the acquisition tests, and a NumPy GP-BUCB oracle.

``build_model(name, X, Y)`` builds each model kind on full-vector data ``Y`` (``N x 2``)
with fixed, non-default hyperparameters (no fitting: the tests stay fast).
``pending_oracle`` conditions a model's joint posterior on pending observations by dense
Gaussian conditioning in NumPy, independently of ``condition_on_observations``.
"""

from __future__ import annotations

import numpy as np
import torch
from botorch.models import KroneckerMultiTaskGP, ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.models.transforms import Normalize, Standardize
from gpytorch.kernels import RBFKernel

from botorch_mtucb.acquisition.posterior_moments import model_posterior
from botorch_mtucb.models import VectorValuedGP

NUM_OUTPUTS = 2
DIM = 2
LENGTHSCALE = 0.4
TASK_COVARIANCE = [[1.0, 0.6], [0.6, 0.8]]

# The models of issue 10's table; "task-indexed" ones see one row per (x, task).
MODELS = ("SingleTaskGP", "MultiTaskGP", "KroneckerMultiTaskGP", "ModelListGP", "VectorValuedGP")
TASK_INDEXED = ("MultiTaskGP", "VectorValuedGP-indexed")


def objective(X: torch.Tensor) -> torch.Tensor:
    """A smooth two-output test function on ``[0, 1]^2``: ``N x 2 -> N x 2``."""
    first = torch.sin(3.0 * X[..., 0]) + X[..., 1]
    second = torch.cos(2.0 * X[..., 1]) - (X[..., 0] - 0.5) ** 2
    return torch.stack([first, second], dim=-1)


def _set_lengthscale(kernel, value: float = LENGTHSCALE) -> None:
    kernel.lengthscale = torch.full_like(kernel.lengthscale, value)


def _long_format(X: torch.Tensor, Y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, task)`` rows, task-major, for a ``MultiTaskGP`` (task feature last)."""
    rows = [torch.cat([X, X.new_full((X.shape[0], 1), float(j))], -1) for j in range(Y.shape[-1])]
    return torch.cat(rows), Y.T.reshape(-1, 1)


def build_model(name: str, X: torch.Tensor, Y: torch.Tensor):
    """A model of kind ``name`` on ``(X, Y)`` with fixed hyperparameters, in eval mode.

    Kinds: the five of ``MODELS`` plus ``"SingleTaskGP-fixed-noise"``,
    ``"SingleTaskGP-batched"`` (a batch of 3 models) and ``"VectorValuedGP-indexed"``
    (task-indexed rows ``(x_i, i mod 2)``).
    """
    dtype = X.dtype
    if name == "SingleTaskGP":  # BoTorch's default Standardize plus Normalize
        model = SingleTaskGP(X, Y, input_transform=Normalize(DIM))
        _set_lengthscale(model.covar_module)
        model.likelihood.noise = torch.full_like(model.likelihood.noise, 0.02)
    elif name == "SingleTaskGP-fixed-noise":
        model = SingleTaskGP(X, Y, train_Yvar=torch.full_like(Y, 0.01))
        _set_lengthscale(model.covar_module)
    elif name == "SingleTaskGP-batched":
        model = SingleTaskGP(
            X.expand(3, *X.shape), Y.expand(3, *Y.shape) * torch.arange(1, 4).to(Y)[:, None, None]
        )
        _set_lengthscale(model.covar_module)
    elif name == "MultiTaskGP":
        long_X, long_Y = _long_format(X, Y)
        model = MultiTaskGP(long_X, long_Y, task_feature=-1)
        _set_lengthscale(model.covar_module.kernels[0])
    elif name == "KroneckerMultiTaskGP":
        model = KroneckerMultiTaskGP(X, Y, outcome_transform=Standardize(NUM_OUTPUTS))
        _set_lengthscale(model.covar_module.data_covar_module)
    elif name == "ModelListGP":
        models = [SingleTaskGP(X, Y[:, j : j + 1]) for j in range(NUM_OUTPUTS)]
        for j, sub_model in enumerate(models):
            _set_lengthscale(sub_model.covar_module, LENGTHSCALE * (1 + j))
        model = ModelListGP(*models)
    elif name in ("VectorValuedGP", "VectorValuedGP-indexed"):
        kernel = RBFKernel()
        _set_lengthscale(kernel)
        covariance = torch.tensor(TASK_COVARIANCE, dtype=dtype)
        if name == "VectorValuedGP":
            return VectorValuedGP(X, Y, kernel, covariance, regularization=0.05)
        tasks = torch.arange(X.shape[0]) % NUM_OUTPUTS
        values = Y.gather(-1, tasks[:, None])
        return VectorValuedGP(X, values, kernel, covariance, 0.05, train_tasks=tasks)
    else:
        raise ValueError(name)
    return model.to(dtype).eval()


def output_noise(model, x: torch.Tensor) -> np.ndarray:
    """Noise variance of each output at ``x`` (``1 x d``) in outcome units: BoTorch's
    ``posterior(observation_noise=True)`` minus the noise-free variance."""
    if isinstance(model, VectorValuedGP):
        return np.full(model.num_outputs, model.regularization)
    with torch.no_grad():
        noisy = model.posterior(x, observation_noise=True).variance
        clean = model.posterior(x).variance
    return (noisy - clean).reshape(-1, model.num_outputs)[0].double().numpy()


def pending_oracle(model, x: torch.Tensor, X_pending: torch.Tensor, task: int | None = None):
    """Mean ``n`` and covariance ``n x n`` at ``x`` (``1 x d``) after observing the
    outputs of ``X_pending`` (``m x d``) at their mean (GP-BUCB), in NumPy.

    The joint posterior over ``[X_pending; x]`` (all outputs) is conditioned on the
    pending rows: all outputs, or only ``task`` (task-indexed models):
    ``Sigma_xx - Sigma_xp (Sigma_pp + N)^{-1} Sigma_px``.
    """
    m, n = X_pending.shape[0], model.num_outputs
    joint = torch.cat([X_pending, x]).unsqueeze(0)  # 1 x (m + 1) x d
    with torch.no_grad():
        posterior = model_posterior(model, joint)
        mean = posterior.mean[0, -1].double().numpy()
        covariance = posterior.distribution.covariance_matrix[0].double().numpy()
    if getattr(posterior.distribution, "_interleaved", True):
        index = lambda point, output: point * n + output  # noqa: E731
    else:  # output-major, as BoTorch's multi-output posteriors
        index = lambda point, output: output * (m + 1) + point  # noqa: E731
    outputs = range(n) if task is None else [task]
    pending = [index(a, j) for a in range(m) for j in outputs]
    query = [index(m, j) for j in range(n)]
    noise = output_noise(model, x)
    noise_pp = np.diag([noise[j] for a in range(m) for j in outputs])
    c_pp = covariance[np.ix_(pending, pending)] + noise_pp
    c_xp = covariance[np.ix_(query, pending)]
    conditioned = covariance[np.ix_(query, query)] - c_xp @ np.linalg.solve(c_pp, c_xp.T)
    return mean, conditioned


def model_task(name: str) -> int | None:
    """The task whose evaluations are pending for ``TaskConditionedUCB(task=1)``:
    ``1`` for task-indexed models, ``None`` (the full vector) otherwise."""
    return 1 if name in TASK_INDEXED else None
