"""Shared plumbing below every other layer: argument checks (``checks``), the growable
Cholesky factor (``linalg``), random streams and tie-breaking (``random``), the domains
acquisitions are maximized over (``domains``), the screened argmax over a finite set
(``screening``), torch threads pinned for a block (``threads``) and files replaced in
one step (``files``)."""

from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain, maximize_acquisition
from botorch_mtucb.utils.linalg import CholeskyJitterWarning, GrowingCholesky, cholesky_factor
from botorch_mtucb.utils.random import argmax_random_ties
from botorch_mtucb.utils.screening import screened_argmax

__all__ = [
    "BoxDomain",
    "CholeskyJitterWarning",
    "FiniteDomain",
    "GrowingCholesky",
    "argmax_random_ties",
    "cholesky_factor",
    "maximize_acquisition",
    "screened_argmax",
]
