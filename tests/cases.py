"""Multi-task model cases (kernel, data, model) paired with their dense NumPy oracles."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from oracles import (
    DenseMultiTaskGP,
    make_matern,
    make_rbf,
    numpy_kernel,
    random_psd,
    uniform_similarity,
)

from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.models import VectorValuedGP

DTYPES = (torch.float64, torch.float32)
NUM_TASKS = 3
DIM = 2
ETA = 0.1

# Kernels of paper 000, Section 2: ICM (full rank, rank deficient, uniform similarity with
# omega in {0, 0.4, 1}), a sum of two separable kernels, and independent tasks.
ICM_CASES = ("icm", "icm_rank_deficient", "uniform_0.4", "uniform_0", "uniform_1")
CASES = (*ICM_CASES, "sum", "independent")


def tolerances(dtype: torch.dtype) -> dict[str, float]:
    """``rtol`` / ``atol`` for comparing with the float64 oracle."""
    if dtype == torch.float64:
        return {"rtol": 1e-7, "atol": 1e-7}
    return {"rtol": 1e-3, "atol": 1e-3}


@dataclass
class Case:
    """A model, the data it was built from and the oracle with the same kernel."""

    name: str
    dtype: torch.dtype
    kernels: list
    task_covariances: list
    oracle: DenseMultiTaskGP
    train_X: torch.Tensor
    train_Y: torch.Tensor
    train_tasks: torch.Tensor | None

    def build(self, X=None, Y=None, tasks="same") -> VectorValuedGP:
        """A ``VectorValuedGP`` with this case's kernel on ``(X, Y, tasks)``."""
        X = self.train_X if X is None else X
        Y = self.train_Y if Y is None else Y
        tasks = self.train_tasks if isinstance(tasks, str) else tasks
        kernels = self.kernels[0] if len(self.kernels) == 1 else self.kernels
        covariances = (
            self.task_covariances[0] if len(self.task_covariances) == 1 else self.task_covariances
        )
        return VectorValuedGP(X, Y, kernels, covariances, regularization=ETA, train_tasks=tasks)

    def tasks_numpy(self, tasks="same"):
        tasks = self.train_tasks if isinstance(tasks, str) else tasks
        return None if tasks is None else tasks.numpy()


def _kernel_and_covariances(name: str, dtype: torch.dtype, rng: np.random.Generator):
    n = NUM_TASKS
    if name == "icm":
        return [make_rbf([0.3, 0.5], dtype)], [torch.tensor(random_psd(n, n, rng), dtype=dtype)]
    if name == "icm_rank_deficient":
        return [make_rbf([0.4, 0.3], dtype)], [torch.tensor(random_psd(n, 2, rng), dtype=dtype)]
    if name.startswith("uniform_"):
        omega = float(name.split("_")[1])
        task_kernel = UniformSimilarityTaskKernel(n, omega).to(dtype)
        return [make_rbf([0.35, 0.35], dtype)], [task_kernel]
    if name == "sum":
        kernels = [make_rbf([0.4, 0.4], dtype), make_matern(2.5, 0.7, 1.5, dtype)]
        covariances = [random_psd(n, n, rng), random_psd(n, 1, rng)]
        return kernels, [torch.tensor(b, dtype=dtype) for b in covariances]
    if name == "independent":
        kernels = [
            make_rbf([0.3, 0.3], dtype),
            make_rbf([0.6, 0.2], dtype),
            make_matern(1.5, 0.5, 2.0, dtype),
        ]
        covariances = [torch.diag(torch.eye(n, dtype=dtype)[j]) for j in range(n)]
        return kernels, covariances
    raise ValueError(name)


def _task_matrix(covariance) -> np.ndarray:
    if isinstance(covariance, torch.Tensor):
        return covariance.detach().double().numpy()
    omega = float(covariance.omega.detach().double())
    return uniform_similarity(covariance.num_tasks, omega)


def build_case(
    name: str,
    dtype: torch.dtype,
    task_indexed: bool = False,
    num_rows: int | None = None,
    seed: int = 0,
) -> Case:
    """A case with ``num_rows`` rows of full-vector (default 5) or task-indexed (8) data."""
    rng = np.random.default_rng(seed)
    kernels, covariances = _kernel_and_covariances(name, dtype, rng)
    num_rows = num_rows if num_rows is not None else (8 if task_indexed else 5)
    train_X = torch.tensor(rng.uniform(size=(num_rows, DIM)), dtype=dtype)
    if task_indexed:
        train_Y = torch.tensor(rng.normal(size=(num_rows, 1)), dtype=dtype)
        train_tasks = torch.tensor(rng.integers(0, NUM_TASKS, size=num_rows))
    else:
        train_Y = torch.tensor(rng.normal(size=(num_rows, NUM_TASKS)), dtype=dtype)
        train_tasks = None
    case = Case(name, dtype, kernels, covariances, None, train_X, train_Y, train_tasks)
    # Build once so that kernels are cast to ``dtype``; the oracle then reads back the
    # hyperparameters they actually hold.
    case.build()
    terms = [(numpy_kernel(k), _task_matrix(b)) for k, b in zip(kernels, covariances)]
    case.oracle = DenseMultiTaskGP(terms, ETA)
    return case
