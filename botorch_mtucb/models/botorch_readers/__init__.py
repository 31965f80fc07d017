"""Readers of fitted BoTorch models: their data, kernels, prior mean and noise, in the
model's own (transformed) space.

The confidence widths, bounds and acquisitions built from a BoTorch model, and
``VectorValuedGP.from_model``, read the model through these modules:

* ``moments``: the one reader of a model's prior mean and noise
  (``observation_moments``, ``task_constants``) and the covariances its exact marginal
  likelihood sees (``training_covariances``);
* ``single_output``: one output of a single-output or batched multi-output exact GP
  (``single_output_data``, ``output_data``);
* ``multi_output``: a multi-output GP as a sum of separable kernels
  (``read_multi_output_model``);
* ``wrapped_outputs``: one scalar GP inside BoTorch's multi-output wrappers;
* ``conversion``: the arguments of ``VectorValuedGP.from_model``.
"""

from botorch_mtucb.models.botorch_readers.conversion import vector_valued_gp_arguments
from botorch_mtucb.models.botorch_readers.moments import (
    ACCEPTED_MODELS,
    ObservationMoments,
    TrainingCovariance,
    eval_mode,
    is_diagonal,
    is_multi_task_model,
    leaf_models,
    num_batched_outputs,
    observation_moments,
    smallest_noise_variance,
    task_constants,
    training_covariances,
)
from botorch_mtucb.models.botorch_readers.multi_output import (
    ModelInputKernel,
    MultiOutputData,
    read_multi_output_model,
)
from botorch_mtucb.models.botorch_readers.single_output import (
    SingleOutputData,
    outcome_affine_map,
    output_data,
    single_output_data,
)
from botorch_mtucb.models.botorch_readers.wrapped_outputs import (
    ScalarGPData,
    TaskColumnInputs,
    WeightedOutputSumKernel,
    is_scalarized_multi_output,
    is_single_task_multi_task_gp,
    joint_training_data,
    multi_task_output_data,
    scalarized_output_data,
    unwrap_model_list,
)

__all__ = [
    "ACCEPTED_MODELS",
    "ModelInputKernel",
    "MultiOutputData",
    "ObservationMoments",
    "ScalarGPData",
    "SingleOutputData",
    "TaskColumnInputs",
    "TrainingCovariance",
    "WeightedOutputSumKernel",
    "eval_mode",
    "is_diagonal",
    "is_multi_task_model",
    "is_scalarized_multi_output",
    "is_single_task_multi_task_gp",
    "joint_training_data",
    "leaf_models",
    "multi_task_output_data",
    "num_batched_outputs",
    "observation_moments",
    "outcome_affine_map",
    "output_data",
    "read_multi_output_model",
    "scalarized_output_data",
    "single_output_data",
    "smallest_noise_variance",
    "task_constants",
    "training_covariances",
    "unwrap_model_list",
    "vector_valued_gp_arguments",
]
