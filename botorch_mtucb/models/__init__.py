"""BoTorch models: the exact vector-valued GP and its Nystrom sketch (MT-BKB)."""

from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels
from botorch_mtucb.models.nystrom_vector_valued_gp import NystromVectorValuedGP
from botorch_mtucb.models.vector_valued_gp import VectorValuedGP

__all__ = ["NystromVectorValuedGP", "SumOfSeparableKernels", "VectorValuedGP"]
