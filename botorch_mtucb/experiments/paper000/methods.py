"""Paper 000's five methods and the martingale-mixture variants as policies built from a
``MultiTaskProblem`` (the compositions of ``bandits.scalarized``, each a confidence rule
with the scalarized round; ``METHOD_BUILDERS`` maps each label to its builder).

MT-KB (Algorithm 1 with Theorem 2's width), MT-BKB (Algorithm 2 with Theorem 3's
accuracy ``q`` and width), their independent-task counterparts IT-KB and IT-BKB (the
kernel ``k diag(B)``, single-task widths times ``sqrt(n)``), and MOBO (independent GPs
with a scalarized GP-UCB, Paria et al. 2019), with ``delta = 0.1`` and
``eps = 0.5`` (paper 000, Section 5). MOBO's radius is discussed in
``botorch_mtucb.bandits.scalarized.methods``.

MT-CMM-UCB, MT-DMM-UCB (Algorithm 1 with the exact resp. grid multi-task
martingale-mixture bound of paper 002) and IT-CMM-UCB (the same with the
kernel ``k diag(B)``), with the same ``delta``, the problem's ``sigma``, ``c = 1``
(paper 002 for the RBF kernel) and DMM's grid ``{0.1, 0.3, 1, 3, 10} sigma^2``.

Their norm bound (``martingale_mixture_norm_bound``): the problem's ``b`` where it is at
least the norm of ``f`` in the method's RKHS restricted to the (finite) domain, else
that norm. Paper 000's synthetic problems give MT-KB the heuristic ``b = max_x
||f(x)||_2 / lambda_max(B)``, far below ``||f||_Gamma``; the martingale-mixture
confidence set tests the data against ``b`` (paper 002, Lemma 4.2) and is empty after a
few rounds under that heuristic, so these methods are told the norm the theorem needs.
It is exact for the RKHS functions (in the span of the kernel at the domain) and the
light sensors (the problem's ``b`` is the exact norm); for the perturbed sine and the
shifted Branin-Hoo it is the norm of the minimum-norm interpolant with the spectrum cut
at ``NORM_CUTOFF`` (round-off), a number that grows as the cutoff falls (the sine's
most), not a certified bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits import Policy
from botorch_mtucb.bandits.kernel_ucb.methods import DMM_GRID
from botorch_mtucb.bandits.scalarized import (
    it_bkb,
    it_cmm_ucb,
    it_kb,
    mobo,
    mt_bkb,
    mt_cmm_ucb,
    mt_kb,
)
from botorch_mtucb.problems import MultiTaskProblem
from botorch_mtucb.problems.multi_task_problem import kernel_matrix
from botorch_mtucb.utils import FiniteDomain

DELTA = 0.1  # paper 000, Section 5
EPS = 0.5  # paper 000, Section 5: accuracy of the Nystrom sketches
DEFAULT_HORIZON = 200  # for q when a builder is called without the run's horizon
NORM_CUTOFF = 1e-12  # eigenvalues of K kron B below this fraction of the largest: round-off


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
    return mt_kb(**_multi_task_arguments(problem))


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
    return it_kb(**_independent_task_arguments(problem), eta=problem.regularization)


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
    return mt_bkb(**_multi_task_arguments(problem), eps=EPS, horizon=horizon or DEFAULT_HORIZON)


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
    return it_bkb(
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
    return mobo(
        problem.make_data_kernel(),
        torch.diagonal(problem.task_covariance),
        problem.domain,
        regularization=problem.regularization,
        delta=DELTA,
        domain_size=domain_size,
    )


def domain_rkhs_norm(problem: MultiTaskProblem, task_covariance: Tensor) -> float:
    r"""``||f||_Gamma`` of the problem's ``f`` restricted to its finite domain, ``Gamma =
    k B`` with ``B = task_covariance``: ``sqrt(vec(F)^T (K kron B)^+ vec(F))`` (the
    minimum-norm interpolant's norm), from the eigen-decompositions of ``K`` and ``B``;
    eigenvalues ``lambda_a mu_j`` below ``NORM_CUTOFF`` times the largest count as zero
    (round-off).

    Exact for ``f`` in the span of the kernel at the domain (the RKHS functions);
    for other ``f`` (the perturbed sine) the value grows as the cutoff falls.

    Raises:
        ValueError: If the domain is not a ``FiniteDomain``.

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import domain_rkhs_norm
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> round(domain_rkhs_norm(problem, problem.task_covariance), 4)  # ||f||_Gamma
        6.5456
        >>> round(problem.rkhs_norm_bound, 4)  # paper 000's heuristic b
        3.6922
    """
    if not isinstance(problem.domain, FiniteDomain):
        raise ValueError(
            f"the norm of f is computed on a FiniteDomain, got {type(problem.domain).__name__}"
        )
    X = problem.domain.points
    lam, U = torch.linalg.eigh(kernel_matrix(problem.data_kernel, X).to(torch.float64))
    mu, V = torch.linalg.eigh(task_covariance.to(torch.float64))
    rotated = U.mT @ problem.objective(X).detach().to(torch.float64) @ V  # U^T F V
    eigenvalues = lam[:, None] * mu[None, :]
    keep = eigenvalues > NORM_CUTOFF * eigenvalues.max()
    return float((rotated[keep].square() / eigenvalues[keep]).sum().sqrt())


def martingale_mixture_norm_bound(
    problem: MultiTaskProblem, task_covariance: Tensor, given: float
) -> float:
    """The norm bound of the martingale-mixture methods: ``given`` (the problem's ``b``
    for the method's kernel) if it is at least ``domain_rkhs_norm`` (to a relative
    ``1e-9``), else that norm (module docstring).

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import martingale_mixture_norm_bound
        >>> from botorch_mtucb.problems import light_sensor_problem, rkhs_problem
        >>> problem = light_sensor_problem()  # b is the exact norm: kept
        >>> b = problem.rkhs_norm_bound
        >>> martingale_mixture_norm_bound(problem, problem.task_covariance, b) == b
        True
        >>> problem = rkhs_problem(2, seed=0)  # the heuristic b: raised to ||f||_Gamma
        >>> b = problem.rkhs_norm_bound
        >>> round(martingale_mixture_norm_bound(problem, problem.task_covariance, b), 4)
        6.5456
    """
    norm = domain_rkhs_norm(problem, task_covariance)
    return given if norm <= given * (1.0 + 1e-9) else norm


def build_mt_cmm_ucb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MT-CMM-UCB: Algorithm 1 with the exact multi-task martingale-mixture bound.

    Args:
        problem: As for ``build_mt_kb``; the norm bound is
            ``martingale_mixture_norm_bound`` for ``k B``.
        horizon: Unused (``c = 1`` for the RBF kernel).

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_mt_cmm_ucb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> policy = build_mt_cmm_ucb(rkhs_problem(2, seed=0))
        >>> policy.name, policy.rule.alphas, round(policy.rule.bound.rkhs_norm_bound, 4)
        ('MT-CMM-UCB', None, 6.5456)
    """
    return _martingale_mixture_policy(problem, "MT-CMM-UCB", None)


def build_mt_dmm_ucb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """MT-DMM-UCB: as MT-CMM-UCB with the bound's minimum over ``alpha in {0.1, 0.3, 1,
    3, 10} sigma^2`` (paper 002, Section 5.4 and 7).

    Args:
        problem: As for ``build_mt_cmm_ucb``.
        horizon: Unused.

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_mt_dmm_ucb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> [round(a, 6) for a in build_mt_dmm_ucb(rkhs_problem(2, seed=0)).rule.alphas.tolist()]
        [0.001, 0.003, 0.01, 0.03, 0.1]
    """
    alphas = [m * problem.noise_std**2 for m in DMM_GRID]
    return _martingale_mixture_policy(problem, "MT-DMM-UCB", alphas)


def build_it_cmm_ucb(problem: MultiTaskProblem, horizon: int | None = None) -> Policy:
    """IT-CMM-UCB: MT-CMM-UCB with independent tasks (``k diag(B)``), its norm bound
    ``martingale_mixture_norm_bound`` for ``k diag(B)`` from the problem's
    ``independent_rkhs_norm_bound``.

    Args:
        problem: As for ``build_it_kb``.
        horizon: Unused.

    Example:
        >>> from botorch_mtucb.experiments.paper000.methods import build_it_cmm_ucb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> build_it_cmm_ucb(rkhs_problem(2, seed=0)).name
        'IT-CMM-UCB'
    """
    variances = torch.diagonal(problem.task_covariance)
    norm = martingale_mixture_norm_bound(
        problem, torch.diag(variances), problem.independent_rkhs_norm_bound
    )
    return it_cmm_ucb(
        problem.make_data_kernel(), variances, problem.domain, norm, problem.noise_std,
        delta=DELTA, name="IT-CMM-UCB",
    )  # fmt: skip


def _martingale_mixture_policy(
    problem: MultiTaskProblem, name: str, alphas: list[float] | None
) -> Policy:
    norm = martingale_mixture_norm_bound(problem, problem.task_covariance, problem.rkhs_norm_bound)
    return mt_cmm_ucb(
        problem.make_data_kernel(), problem.task_covariance, problem.domain, norm,
        problem.noise_std, delta=DELTA, alphas=alphas, name=name,
    )  # fmt: skip


# Method name -> builder(problem, horizon) -> policy, in the order of the tables.
METHOD_BUILDERS: dict[str, Callable[..., Policy]] = {
    "MT-KB": build_mt_kb,
    "MT-BKB": build_mt_bkb,
    "IT-KB": build_it_kb,
    "IT-BKB": build_it_bkb,
    "MOBO": build_mobo,
    "MT-CMM-UCB": build_mt_cmm_ucb,
    "MT-DMM-UCB": build_mt_dmm_ucb,
    "IT-CMM-UCB": build_it_cmm_ucb,
}
MAIN_JOB_METHODS = ["MT-KB", "IT-KB", "MT-CMM-UCB"]
