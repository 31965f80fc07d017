"""BoTorch models: the exact vector-valued GP, its Nystrom sketch (MT-BKB) and the
finite-arm task posterior (paper 001)."""

from botorch_mtucb.models.conversion import vector_valued_gp_from_model
from botorch_mtucb.models.gp_covariances import TrainingCovariance, training_covariances
from botorch_mtucb.models.multi_output_data import (
    ModelInputKernel,
    MultiOutputData,
    read_multi_output_model,
)
from botorch_mtucb.models.nystrom_vector_valued_gp import NystromVectorValuedGP
from botorch_mtucb.models.single_output_data import (
    SingleOutputData,
    output_data,
    single_output_data,
)
from botorch_mtucb.models.task_arm_posterior import TaskArmPosterior
from botorch_mtucb.models.vector_valued_gp import VectorValuedGP

__all__ = [
    "ModelInputKernel",
    "MultiOutputData",
    "NystromVectorValuedGP",
    "SingleOutputData",
    "TaskArmPosterior",
    "TrainingCovariance",
    "VectorValuedGP",
    "output_data",
    "read_multi_output_model",
    "single_output_data",
    "training_covariances",
    "vector_valued_gp_from_model",
]
