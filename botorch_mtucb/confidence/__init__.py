"""Confidence widths and bounds: information gain, MT-KB / IGP-UCB widths, ..."""

from botorch_mtucb.confidence.agnostic_widths import (
    effective_dimension,
    multitask_information_gain,
    multitask_regularization,
    multitask_widths,
    single_task_information_gains,
    task_effective_dimensions,
    task_kernel_matrix,
    theorem2_kernel_parameter,
)
from botorch_mtucb.confidence.information_gain import information_gain, information_gain_increment
from botorch_mtucb.confidence.martingale_mixture.bound import (
    EmptyConfidenceSetError,
    MartingaleMixtureBound,
)
from botorch_mtucb.confidence.scalarized_widths import (
    bkb_width,
    dragonfly_ucb_width,
    gp_ucb_width,
    mt_bkb_accuracy,
    mt_bkb_width,
    sketch_distortion,
)
from botorch_mtucb.confidence.single_task_widths import ay_gp_ucb_width, igp_ucb_width, mt_kb_width

__all__ = [
    "EmptyConfidenceSetError",
    "MartingaleMixtureBound",
    "ay_gp_ucb_width",
    "bkb_width",
    "dragonfly_ucb_width",
    "gp_ucb_width",
    "mt_bkb_accuracy",
    "mt_bkb_width",
    "sketch_distortion",
    "effective_dimension",
    "igp_ucb_width",
    "information_gain",
    "information_gain_increment",
    "mt_kb_width",
    "multitask_information_gain",
    "multitask_regularization",
    "multitask_widths",
    "single_task_information_gains",
    "task_effective_dimensions",
    "task_kernel_matrix",
    "theorem2_kernel_parameter",
]
