"""Paper 002's martingale-mixture confidence bounds (exact, grid and analytic)."""

from botorch_mtucb.confidence.martingale_mixture.bound import (
    EmptyConfidenceSetError,
    MartingaleMixtureBound,
)

__all__ = ["EmptyConfidenceSetError", "MartingaleMixtureBound"]
