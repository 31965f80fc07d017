"""Task kernels for GPyTorch: uniform similarity and fixed ICM task covariances."""

from botorch_mtucb.kernels.fixed_task import FixedTaskCovarianceKernel, validate_task_covariance
from botorch_mtucb.kernels.uniform_similarity import UniformSimilarityTaskKernel

__all__ = [
    "FixedTaskCovarianceKernel",
    "UniformSimilarityTaskKernel",
    "validate_task_covariance",
]
