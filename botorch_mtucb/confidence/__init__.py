"""Confidence widths and bounds of the three papers, and the information gains they use.

* ``information_gain``: information gains and effective dimensions (batch, per task and
  incremental);
* ``scalarized_widths``: paper 000's MT-KB and MT-BKB widths;
* ``single_task_widths``: the single-task baselines (IGP-UCB, AY-GP-UCB, GP-UCB, BKB,
  Dragonfly);
* ``agnostic_widths``: paper 001's Theorem 1 widths;
* ``martingale_mixture``: paper 002's martingale-mixture confidence bounds;
* ``certificate``: certified optimality gaps from bounds that hold for all rounds at once
  (``certify`` on finite domains and boxes, ``Certificate``, the ``ConfidenceBounds``
  adapters).
"""

from botorch_mtucb.confidence.agnostic_widths import (
    WIDTH_RULES,
    multitask_regularization,
    multitask_widths,
    theorem2_kernel_parameter,
)
from botorch_mtucb.confidence.certificate import (
    Certificate,
    ConfidenceBounds,
    MartingaleMixtureBounds,
    MTKBBounds,
    MultiTaskMartingaleMixtureBounds,
    certify,
)
from botorch_mtucb.confidence.information_gain import (
    IncrementalInformationGain,
    effective_dimension,
    information_gain,
    information_gain_increment,
    multitask_information_gain,
    observation_information_gain,
    single_task_information_gains,
    task_effective_dimensions,
    task_kernel_matrix,
)
from botorch_mtucb.confidence.martingale_mixture import (
    EmptyConfidenceSetError,
    MartingaleMixtureBound,
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.confidence.scalarized_widths import (
    mt_bkb_accuracy,
    mt_bkb_width,
    mt_kb_width,
    sketch_distortion,
)
from botorch_mtucb.confidence.single_task_widths import (
    ay_gp_ucb_width,
    bkb_width,
    dragonfly_ucb_width,
    gp_ucb_width,
    igp_ucb_width,
)

__all__ = [
    "WIDTH_RULES",
    "Certificate",
    "ConfidenceBounds",
    "EmptyConfidenceSetError",
    "IncrementalInformationGain",
    "MTKBBounds",
    "MartingaleMixtureBound",
    "MartingaleMixtureBounds",
    "MultiTaskMartingaleMixtureBound",
    "MultiTaskMartingaleMixtureBounds",
    "ay_gp_ucb_width",
    "bkb_width",
    "certify",
    "dragonfly_ucb_width",
    "effective_dimension",
    "gp_ucb_width",
    "igp_ucb_width",
    "information_gain",
    "information_gain_increment",
    "mt_bkb_accuracy",
    "mt_bkb_width",
    "mt_kb_width",
    "multitask_information_gain",
    "multitask_regularization",
    "multitask_widths",
    "observation_information_gain",
    "single_task_information_gains",
    "sketch_distortion",
    "task_effective_dimensions",
    "task_kernel_matrix",
    "theorem2_kernel_parameter",
]
