"""Paper 001's methods, each a task-indexed confidence rule with the revealed task's round
(MT-UCB and Table 1's special cases, AdaMT-UCB, MT-CMM-UCB) or the active task choice
(MT-AL, its Uniform and AE-LSVI queries, MTS, MT-CMM-AL)."""

from botorch_mtucb.bandits.task_indexed.methods import (
    ACTIVE_DIAGNOSTICS,
    ada_mt_ucb,
    gob_lin,
    independent_ucb,
    mt_al,
    mt_cmm_al,
    mt_cmm_ucb,
    mt_ucb,
    mts,
    single_ucb,
)

__all__ = [
    "ACTIVE_DIAGNOSTICS",
    "ada_mt_ucb",
    "gob_lin",
    "independent_ucb",
    "mt_al",
    "mt_cmm_al",
    "mt_cmm_ucb",
    "mt_ucb",
    "mts",
    "single_ucb",
]
