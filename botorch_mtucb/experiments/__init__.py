"""The command line and the papers' experiments (``python -m botorch_mtucb``)."""
