"""Paper 000's experiments; importing this package registers them."""

from botorch_mtucb.experiments.paper000 import experiments  # noqa: F401
