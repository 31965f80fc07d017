"""Test functions and real-data problems (finite or box domains)."""

from botorch_mtucb.problems.hpo_transfer import hpo_transfer_problem, load_hpo_transfer
from botorch_mtucb.problems.kernel_bandit import (
    KernelBanditEnvironment,
    RKHSTestFunction,
    make_kernel,
)
from botorch_mtucb.problems.light_sensor import light_sensor_problem
from botorch_mtucb.problems.mhc import load_mhc_data, mhc_binding_problem
from botorch_mtucb.problems.multi_task_problem import MultiTaskProblem
from botorch_mtucb.problems.multitask_synthetic import (
    MultiTaskLinearProblem,
    multitask_synthetic_problem,
)
from botorch_mtucb.problems.synthetic_000 import (
    perturbed_sine_problem,
    rkhs_problem,
    shifted_branin_problem,
    similarity_problem,
)
from botorch_mtucb.problems.task_arms import MultiTaskArmProblem

__all__ = [
    "KernelBanditEnvironment",
    "MultiTaskArmProblem",
    "MultiTaskLinearProblem",
    "MultiTaskProblem",
    "RKHSTestFunction",
    "hpo_transfer_problem",
    "light_sensor_problem",
    "load_hpo_transfer",
    "load_mhc_data",
    "make_kernel",
    "mhc_binding_problem",
    "multitask_synthetic_problem",
    "perturbed_sine_problem",
    "rkhs_problem",
    "shifted_branin_problem",
    "similarity_problem",
]
