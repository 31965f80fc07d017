"""Bandit environments: the feedback protocols of papers 000 and 001."""
