"""Paper 000's five methods as policies built from a ``MultiTaskProblem``.

MT-KB (Algorithm 1 with Theorem 2's width), MT-BKB (Algorithm 2 with Theorem 3's
accuracy ``q`` and width), their independent-task counterparts IT-KB and IT-BKB (the
kernel ``k diag(B)``, single-task widths times ``sqrt(n)``), and MOBO (independent GPs
with a scalarized GP-UCB, Paniagua-Tejero et al.), with ``delta = 0.1`` and
``eps = 0.5`` (paper 000, Section 5). MOBO's radius is discussed in
``botorch_mtucb.bandits.scalarized.mobo``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from botorch_mtucb.bandits import (
    IndependentTaskBudgetedKernelizedBandit,
    IndependentTaskKernelizedBandit,
    MultiTaskBudgetedKernelizedBandit,
    MultiTaskKernelizedBandit,
    Policy,
    RandomScalarizationUCB,
)
from botorch_mtucb.problems import MultiTaskProblem
from botorch_mtucb.utils import FiniteDomain

DELTA = 0.1  # paper 000, Section 5
EPS = 0.5  # paper 000, Section 5: accuracy of the Nystrom sketches
DEFAULT_HORIZON = 200  # for q when a builder is called without the run's horizon


def _multi_task_arguments(problem: MultiTaskProblem) -> dict[str, Any]:
    """What MT-KB and MT-BKB are told: the multi-task kernel ``k B`` and its norm bound."""
    return {
        "data_kernel": problem.make_data_kernel(),
        "task_covariance": problem.task_covariance,
        "domain": problem.domain,
        "rkhs_norm_bound": problem.rkhs_norm_bound,
        "noise_std": problem.noise_std,
        "regularization": problem.regularization,
        "delta": DELTA,
    }


def _independent_task_arguments(problem: MultiTaskProblem) -> dict[str, Any]:
    """What IT-KB and IT-BKB are told: the kernel ``k diag(B)`` and its norm bound."""
    return {
        "data_kernel": problem.make_data_kernel(),
        "task_variances": torch.diagonal(problem.task_covariance),
        "domain": problem.domain,
        "rkhs_norm_bound": problem.independent_rkhs_norm_bound,
        "noise_std": problem.noise_std,
        "delta": DELTA,
    }


def build_mt_kb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MT-KB (paper 000, Algorithm 1) with the problem's multi-task kernel and norm bound.

    Args:
        problem: The problem (kernel ``k``, task covariance ``B``, domain, ``B_f``,
            noise level ``sigma`` and regularization ``eta``).
        horizon: Unused (MT-KB's width does not depend on ``T``).

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_mt_kb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> build_mt_kb(rkhs_problem(2, seed=0)).name
        'MT-KB'
    """
    return MultiTaskKernelizedBandit(**_multi_task_arguments(problem))


def build_it_kb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """IT-KB: independent tasks with ``k diag(B)``, IGP-UCB's width times ``sqrt(n)``.

    Args:
        problem: As for ``build_mt_kb``; the norm bound is the problem's
            ``independent_rkhs_norm_bound``.
        horizon: Unused.

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_it_kb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> build_it_kb(rkhs_problem(2, seed=0)).name
        'IT-KB'
    """
    return IndependentTaskKernelizedBandit(
        **_independent_task_arguments(problem), eta=problem.regularization
    )


def build_mt_bkb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MT-BKB (paper 000, Algorithm 2): the multi-task kernel, Theorem 3's ``q`` for
    ``horizon`` rounds and its width.

    Args:
        problem: As for ``build_mt_kb``.
        horizon: The run's ``T`` (Theorem 3's ``q`` depends on it; default 200).

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_mt_bkb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> build_mt_bkb(rkhs_problem(2, seed=0), horizon=50).name
        'MT-BKB'
    """
    return MultiTaskBudgetedKernelizedBandit(
        **_multi_task_arguments(problem), eps=EPS, horizon=horizon or DEFAULT_HORIZON
    )


def build_it_bkb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """IT-BKB: independent tasks with BKB (its ``q_bar`` and width) times ``sqrt(n)``.

    Args:
        problem: As for ``build_it_kb``.
        horizon: The run's ``T`` (BKB's ``q_bar`` depends on it; default 200).

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_it_bkb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> build_it_bkb(rkhs_problem(2, seed=0), horizon=50).name
        'IT-BKB'
    """
    return IndependentTaskBudgetedKernelizedBandit(
        **_independent_task_arguments(problem),
        regularization=problem.regularization,
        eps=EPS,
        horizon=horizon or DEFAULT_HORIZON,
    )


def build_mobo(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MOBO: independent GPs (``k diag(B)``, regularization ``eta``) with a scalarized GP-UCB; on a
    box domain its radius counts the problem's regret points as the domain's size.

    Args:
        problem: As for ``build_mt_kb``.
        horizon: Unused.

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_mobo
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> build_mobo(rkhs_problem(2, seed=0)).name
        'MOBO'
    """
    domain_size = None
    if not isinstance(problem.domain, FiniteDomain):
        domain_size = problem.regret_points.shape[0]
    return RandomScalarizationUCB(
        problem.make_data_kernel(),
        torch.diagonal(problem.task_covariance),
        problem.domain,
        regularization=problem.regularization,
        delta=DELTA,
        domain_size=domain_size,
    )


# Method name -> builder(problem, horizon) -> policy, in the order of the tables.
METHOD_BUILDERS: dict[str, Callable[..., Policy]] = {
    "MT-KB": build_mt_kb,
    "MT-BKB": build_mt_bkb,
    "IT-KB": build_it_kb,
    "IT-BKB": build_it_bkb,
    "MOBO": build_mobo,
}
MAIN_JOB_METHODS = ["MT-KB", "IT-KB"]
