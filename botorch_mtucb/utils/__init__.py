"""Shared plumbing below every other layer: argument checks, linear algebra, random
streams and tie-breaking, and the domains acquisitions are maximized over."""

from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain, maximize_acquisition

__all__ = ["BoxDomain", "FiniteDomain", "maximize_acquisition"]
