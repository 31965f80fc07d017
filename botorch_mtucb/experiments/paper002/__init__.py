"""Paper 002's experiments; importing this package registers them."""

from botorch_mtucb.experiments.paper002 import experiments  # noqa: F401
