"""Timing scripts: ``python -m botorch_mtucb benchmark NAME [--quick]``."""
