"""Paper 001's experiments; importing this package registers them."""

from botorch_mtucb.experiments.paper001 import experiments, widths  # noqa: F401
