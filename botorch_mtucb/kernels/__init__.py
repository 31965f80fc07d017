"""Task kernels for GPyTorch: uniform similarity, fixed ICM task covariances and sums of
separable kernels."""

from botorch_mtucb.kernels.fixed_task import FixedTaskCovarianceKernel
from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels
from botorch_mtucb.kernels.uniform_similarity import (
    UniformSimilarityLinearOperator,
    UniformSimilarityTaskKernel,
)

__all__ = [
    "FixedTaskCovarianceKernel",
    "SumOfSeparableKernels",
    "UniformSimilarityLinearOperator",
    "UniformSimilarityTaskKernel",
]
