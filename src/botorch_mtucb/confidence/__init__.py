"""Confidence widths and bounds: information gain, MT-KB / IGP-UCB widths, ..."""

from botorch_mtucb.confidence.information_gain import (
    information_gain,
    information_gain_increment,
)
from botorch_mtucb.confidence.widths import igp_ucb_width, mt_kb_width

__all__ = [
    "igp_ucb_width",
    "information_gain",
    "information_gain_increment",
    "mt_kb_width",
]
