"""BoTorch acquisition functions built from a model and a width or a bound."""

from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedMultiTaskUCB

__all__ = ["ScalarizedMultiTaskUCB"]
