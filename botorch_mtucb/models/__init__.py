"""BoTorch models: the exact vector-valued GP, its Nystrom sketch (MT-BKB) and the
finite-arm task posterior (paper 001)."""

from botorch_mtucb.models.nystrom_vector_valued_gp import NystromVectorValuedGP
from botorch_mtucb.models.task_arm_posterior import TaskArmPosterior
from botorch_mtucb.models.vector_valued_gp import VectorValuedGP

__all__ = ["NystromVectorValuedGP", "TaskArmPosterior", "VectorValuedGP"]
