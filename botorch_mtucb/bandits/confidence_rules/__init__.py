"""Confidence rules: one object per way of building a round's upper confidence bound.

A policy is a confidence rule composed with a round protocol (``ConfidencePolicy``,
``bandits.rounds``); the rules live here, one module per family, whatever paper's
protocol they are played with:

* ``base``: what the protocols ask of a rule (``ConfidenceRule`` for points,
  ``TaskConfidenceRule`` for paper 001's task-indexed data, ``TaskChoice``);
* ``widths``: ``WidthRule`` (``mu + width * sigma`` on a model) and the theorems' width
  functions (MT-KB, MT-BKB, IT-KB, IT-BKB, MOBO, AY-GP-UCB, IGP-UCB);
* ``martingale_mixture``: paper 002's bounds on one task, on full vectors of a multi-task
  kernel (paper 000's feedback) and on task-indexed data (paper 001's);
* ``agnostic`` and ``regression``: paper 001's widths of Theorem 1 on the agnostic
  multi-task regression, posterior sampling (MTS) and AdaMT-UCB's learners.
"""

from botorch_mtucb.bandits.confidence_rules.agnostic import (
    AdaptiveDeviationRule,
    AgnosticWidth,
    AgnosticWidthRule,
    DataDependentLargeBWidth,
    ImprovedWidth,
    LargeBWidth,
    NaiveWidth,
    PosteriorSamplingRule,
    SmallBWidth,
)
from botorch_mtucb.bandits.confidence_rules.base import (
    ConfidenceRule,
    TaskChoice,
    TaskConfidenceRule,
    maximize_rule,
)
from botorch_mtucb.bandits.confidence_rules.martingale_mixture import (
    MartingaleMixtureRule,
    MultiTaskMartingaleMixtureRule,
    TaskIndexedMartingaleMixtureRule,
    task_indexed_norm_bound,
)
from botorch_mtucb.bandits.confidence_rules.regression import AgnosticMultiTaskRegression
from botorch_mtucb.bandits.confidence_rules.widths import (
    AYGPUCBWidth,
    DragonflyRadius,
    GPUCBRadius,
    IGPUCBWidth,
    IndependentBKBWidth,
    IndependentIGPUCBWidth,
    MTBKBWidth,
    MTKBWidth,
    WidthRule,
)

__all__ = [
    "AYGPUCBWidth",
    "AdaptiveDeviationRule",
    "AgnosticMultiTaskRegression",
    "AgnosticWidth",
    "AgnosticWidthRule",
    "ConfidenceRule",
    "DataDependentLargeBWidth",
    "DragonflyRadius",
    "GPUCBRadius",
    "IGPUCBWidth",
    "ImprovedWidth",
    "IndependentBKBWidth",
    "IndependentIGPUCBWidth",
    "LargeBWidth",
    "MTBKBWidth",
    "MTKBWidth",
    "MartingaleMixtureRule",
    "MultiTaskMartingaleMixtureRule",
    "NaiveWidth",
    "PosteriorSamplingRule",
    "SmallBWidth",
    "TaskChoice",
    "TaskConfidenceRule",
    "TaskIndexedMartingaleMixtureRule",
    "WidthRule",
    "maximize_rule",
    "task_indexed_norm_bound",
]
