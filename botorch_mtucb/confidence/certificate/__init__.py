"""Certified optimality gaps: an upper bound on the simple regret from confidence bounds
that hold for all rounds at once.

* ``bounds``: ``ConfidenceBounds`` (the protocol) and its adapters
  (``MartingaleMixtureBounds``, ``MultiTaskMartingaleMixtureBounds``, ``MTKBBounds``);
* ``kernel_metric``: the RKHS metric ``d_k`` and its supremum over a cell;
* ``certificate``: the result, ``Certificate``;
* ``finite``: the exact certificate on a finite domain;
* ``box``: branch and bound on a box;
* ``certify``: the one entry point.
"""

from botorch_mtucb.confidence.certificate.bounds import (
    ConfidenceBounds,
    MartingaleMixtureBounds,
    MTKBBounds,
    MultiTaskMartingaleMixtureBounds,
    as_confidence_bounds,
)
from botorch_mtucb.confidence.certificate.certificate import Certificate
from botorch_mtucb.confidence.certificate.certify import certify
from botorch_mtucb.confidence.certificate.finite import MAX_FINITE_POINTS
from botorch_mtucb.confidence.certificate.kernel_metric import KernelMetric

__all__ = [
    "MAX_FINITE_POINTS",
    "Certificate",
    "ConfidenceBounds",
    "KernelMetric",
    "MTKBBounds",
    "MartingaleMixtureBounds",
    "MultiTaskMartingaleMixtureBounds",
    "as_confidence_bounds",
    "certify",
]
