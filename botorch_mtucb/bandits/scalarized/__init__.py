"""Paper 000's methods, each a confidence rule with the scalarized round: MT-KB, MT-BKB,
their independent-task baselines IT-KB and IT-BKB, MOBO's random-scalarization UCB, and
MT-KB's protocol with the multi-task martingale-mixture bound (MT-CMM-UCB, MT-DMM-UCB,
IT-CMM-UCB)."""

from botorch_mtucb.bandits.scalarized.methods import (
    empty_model,
    it_bkb,
    it_cmm_ucb,
    it_kb,
    mobo,
    mt_bkb,
    mt_cmm_ucb,
    mt_kb,
)

__all__ = [
    "empty_model",
    "it_bkb",
    "it_cmm_ucb",
    "it_kb",
    "mobo",
    "mt_bkb",
    "mt_cmm_ucb",
    "mt_kb",
]
