r"""Paper 001's methods as compositions: a task-indexed confidence rule with the revealed
task's round (online) or the active task choice.

Source: paper 001 (Sessa et al. 2023), Algorithms 1-3, Table 1, Section 5 and Appendix C.3.

Online (``RevealedTaskRound``: nature reveals ``i_t``, ``x_t = argmax_x u_{t-1}(i_t, x)``):

* ``mt_ucb`` (Algorithm 1): ``mu + beta_t(b) sigma`` on the agnostic regression with
  ``K_task(b)`` and a width of Theorem 1 (``AgnosticWidthRule``); Table 1's special cases
  ``independent_ucb`` (``b = 0``, ``lambda = 1``), ``single_ucb`` (``b = inf``,
  ``lambda = 1 / N``) and ``gob_lin`` (the naive width, ``lambda = 1``);
* ``ada_mt_ucb`` (Algorithm 3): MT-UCB learners for candidate deviations with the
  misspecification test (``AdaptiveDeviationRule``);
* ``mt_cmm_ucb``: Algorithm 1 with the exact multi-task martingale-mixture bound
  (``TaskIndexedMartingaleMixtureRule``).

Active learning (``ActiveTaskRound``: a recommendation per task, one task queried):

* ``mt_al`` (Algorithm 2): MT-UCB's rule, the most uncertain task (``LargestGain``);
  ``query=UniformTask()`` is "Uniform", ``query=OptimisticGap()`` AE-LSVI;
* ``mts``: multi-task Thompson sampling (``PosteriorSamplingRule``), the largest sampled
  improvement;
* ``mt_cmm_al``: Algorithm 2 with the martingale-mixture bound's half-width.

The active methods on the regression record the queried task, the width and
``gamma_t^mt`` with each round (``ACTIVE_DIAGNOSTICS``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gpytorch.kernels import Kernel

from botorch_mtucb.bandits.confidence_rules import (
    AdaptiveDeviationRule,
    AgnosticMultiTaskRegression,
    AgnosticWidth,
    AgnosticWidthRule,
    ImprovedWidth,
    NaiveWidth,
    PosteriorSamplingRule,
    TaskIndexedMartingaleMixtureRule,
)
from botorch_mtucb.bandits.confidence_rules.agnostic import DEFAULT_DEVIATIONS
from botorch_mtucb.bandits.policy import ConfidencePolicy
from botorch_mtucb.bandits.rounds import ActiveTaskRound, LargestGain, RevealedTaskRound
from botorch_mtucb.utils.domains import Domain

ACTIVE_DIAGNOSTICS = ("task", "width", "info_gain_mt")


def _width_rule(
    domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
    regularization, width, num_tasks, rule_class=AgnosticWidthRule,
) -> AgnosticWidthRule:  # fmt: skip
    if not (isinstance(width, type) and issubclass(width, AgnosticWidth)):
        raise TypeError(
            f"width must be a width of Theorem 1 (ImprovedWidth, NaiveWidth, ...), got {width!r}"
        )
    regression = AgnosticMultiTaskRegression(
        domains, data_kernel, b, regularization, num_tasks=num_tasks
    )
    return rule_class(regression, width(rkhs_norm_bound, task_deviation, delta, noise_std))


def mt_ucb(
    domains: Domain | Sequence[Domain],
    data_kernel: Kernel,
    b: float,
    rkhs_norm_bound: float,
    task_deviation: float,
    delta: float = 0.01,
    noise_std: float = 1.0,
    regularization: float | None = None,
    width: type[AgnosticWidth] = ImprovedWidth,
    num_tasks: int | None = None,
    name: str | None = None,
) -> ConfidencePolicy:
    r"""MT-UCB, Algorithm 1 of paper 001: ``x_t = argmax_x mu_{t-1}(i_t, x) +
    beta_{t-1}(b) sigma_{t-1}(i_t, x)`` (eq. 7) for the revealed task ``i_t``.

    Args:
        domains: One ``FiniteDomain`` / ``BoxDomain`` per task (or one shared domain
            with ``num_tasks``).
        data_kernel: The input kernel ``k_X`` (fixed).
        b: Kernel parameter ``b >= 0`` (``math.inf`` allowed).
        rkhs_norm_bound: ``B >= max_i ||f_i||``.
        task_deviation: ``epsilon`` of eq. 5 assumed by the widths, in ``[0, 2]``.
        delta: Confidence level in ``(0, 1)``.
        noise_std: Sub-Gaussian noise level assumed by the widths.
        regularization: ``lambda``; default ``(N + b) / (N + bN)`` (Theorem 2).
        width: The width of Theorem 1 (``ImprovedWidth``: Theorem 1 with the
            data-dependent large-b width in the minimum; ``NaiveWidth``, ...).
        num_tasks: Needed only with a single shared domain.
        name: Name used in results (default ``"MT-UCB"``, ``"MT-UCB-naive"`` with
            ``NaiveWidth``).

    Raises:
        TypeError: If ``width`` is not a subclass of ``AgnosticWidth``.
        ValueError: For arguments that ``AgnosticMultiTaskRegression`` or
            ``multitask_widths`` reject.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import mt_ucb
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = mt_ucb(arms, LinearKernel().double(), b=1.0, rkhs_norm_bound=1.0,
        ...                 task_deviation=0.5, num_tasks=2)
        >>> x = policy.select({"task": 1}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.2]), {"task": 1}, torch.Generator())
        >>> policy.name, policy.rule.regression.num_observations
        ('MT-UCB', 1)
    """
    rule = _width_rule(
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        regularization, width, num_tasks,
    )  # fmt: skip
    name = name or "MT-UCB" + width.label_suffix
    return ConfidencePolicy(rule, RevealedTaskRound(), name)


def independent_ucb(domains, data_kernel, rkhs_norm_bound, **kwargs) -> ConfidencePolicy:
    """Independent (Table 1): ``mt_ucb`` with ``b = 0``, ``lambda = 1``, ``epsilon = 0``
    unless given (N independent IGP-UCBs).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import independent_ucb
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = independent_ucb(arms, LinearKernel().double(), 1.0, num_tasks=2)
        >>> regression = policy.rule.regression
        >>> policy.name, regression.b, regression.regularization
        ('Independent', 0.0, 1.0)
    """
    kwargs.setdefault("name", "Independent")
    kwargs.setdefault("task_deviation", 0.0)
    return mt_ucb(domains, data_kernel, 0.0, rkhs_norm_bound, regularization=1.0, **kwargs)


def single_ucb(domains, data_kernel, rkhs_norm_bound, **kwargs) -> ConfidencePolicy:
    r"""Single (Table 1): ``mt_ucb`` with ``b = inf``, ``lambda = 1 / N``, tasks assumed
    identical (``epsilon = 0``).

    Then ``mu_t`` is the single-task regression on the pooled data with ``lambda = 1``,
    ``sigma_t`` is its std over ``sqrt(N)``, and the ``naive`` width (the minimum) is
    ``sqrt(N)`` times IGP-UCB's ``B + sqrt(2 (gamma + ln(1/delta)))``: one IGP-UCB for all
    tasks (Section 5, "Single").

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import single_ucb
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = single_ucb([arms, arms], LinearKernel().double(), 1.0)
        >>> regression = policy.rule.regression
        >>> policy.name, regression.b, regression.regularization
        ('Single', inf, 0.5)
    """
    kwargs.setdefault("name", "Single")
    n = kwargs.get("num_tasks") or len(domains)
    return mt_ucb(
        domains, data_kernel, math.inf, rkhs_norm_bound, task_deviation=0.0,
        regularization=1.0 / n, **kwargs,
    )  # fmt: skip


def gob_lin(domains, data_kernel, b, rkhs_norm_bound, task_deviation, **kwargs) -> ConfidencePolicy:
    """GoB.Lin (Table 1): ``mt_ucb`` with the naive width and ``lambda = 1``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import gob_lin
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = gob_lin(arms, LinearKernel().double(), 1.0, 1.0, 0.5, num_tasks=2)
        >>> policy.name, type(policy.rule.width_function).__name__
        ('MT-UCB-naive', 'NaiveWidth')
    """
    return mt_ucb(
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, regularization=1.0,
        width=NaiveWidth, **kwargs,
    )  # fmt: skip


def ada_mt_ucb(
    domains: Domain | Sequence[Domain],
    data_kernel: Kernel,
    rkhs_norm_bound: float,
    candidate_deviations: Sequence[float] = DEFAULT_DEVIATIONS,
    b: float | None = None,
    horizon: int | None = None,
    delta: float = 0.01,
    noise_std: float = 1.0,
    concentration_constant: float | None = None,
    width: type[AgnosticWidth] = ImprovedWidth,
    num_tasks: int | None = None,
    name: str = "AdaMT-UCB",
) -> ConfidencePolicy:
    r"""AdaMT-UCB, Algorithm 3 of paper 001: ``AdaptiveDeviationRule`` on the revealed
    task (each round the learner with the smallest remaining deviation chooses).

    Args:
        domains, data_kernel, rkhs_norm_bound, delta, noise_std, num_tasks: As ``mt_ucb``.
        candidate_deviations, b, horizon, concentration_constant, width: As
            ``AdaptiveDeviationRule``.
        name: Name used in results.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import ada_mt_ucb
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = ada_mt_ucb(arms, LinearKernel().double(), rkhs_norm_bound=1.0, b=0.5,
        ...                     num_tasks=2)
        >>> x = policy.select({"task": 0}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.2]), {"task": 0}, torch.Generator())
        >>> policy.rule.epoch_length, policy.rule.removed
        (1, [])
    """
    rule = AdaptiveDeviationRule(
        domains, data_kernel, rkhs_norm_bound, candidate_deviations, b, horizon, delta,
        noise_std, concentration_constant, width, num_tasks,
    )  # fmt: skip
    return ConfidencePolicy(rule, RevealedTaskRound(), name)


def mt_al(
    domains: Domain | Sequence[Domain],
    data_kernel: Kernel,
    b: float,
    rkhs_norm_bound: float,
    task_deviation: float,
    delta: float = 0.01,
    noise_std: float = 1.0,
    regularization: float | None = None,
    width: type[AgnosticWidth] = ImprovedWidth,
    query: LargestGain | None = None,
    num_tasks: int | None = None,
    name: str | None = None,
) -> ConfidencePolicy:
    r"""MT-AL, Algorithm 2 of paper 001: ``x_t^i = argmax_x ucb_{t-1}(i, x)`` for every
    task and the most uncertain task ``i_t = argmax_i beta_{t-1} sigma_{t-1}(i, x_t^i)``
    (one ``B`` and ``epsilon``: the same ``beta`` for every task; exact ties at random).

    Args:
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
            regularization, width, num_tasks: As ``mt_ucb``.
        query: The task query (default ``LargestGain()``; ``UniformTask()``: "Uniform",
            ``OptimisticGap()``: AE-LSVI).
        name: Name used in results (default the query's label, ``"-naive"`` appended
            with ``NaiveWidth``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits import OptimisticGap
        >>> from botorch_mtucb.bandits.task_indexed import mt_al
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = mt_al(arms, LinearKernel().double(), 1.0, 1.0, 0.5, num_tasks=2,
        ...                query=OptimisticGap())
        >>> policy.name, policy.select({}, torch.Generator().manual_seed(0)).num_tasks
        ('AE-LSVI', 2)
    """
    rule = _width_rule(
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        regularization, width, num_tasks,
    )  # fmt: skip
    protocol = ActiveTaskRound(query)
    name = name or protocol.query.label + width.label_suffix
    return ConfidencePolicy(rule, protocol, name, recorded=ACTIVE_DIAGNOSTICS)


def mts(
    domains: Domain | Sequence[Domain],
    data_kernel: Kernel,
    b: float,
    rkhs_norm_bound: float,
    task_deviation: float,
    delta: float = 0.01,
    noise_std: float = 1.0,
    regularization: float | None = None,
    num_tasks: int | None = None,
    name: str = "MTS",
) -> ConfidencePolicy:
    r"""MTS (multi-task Thompson sampling, Char et al. 2019; paper 001, Section 5): the
    active task choice with ``PosteriorSamplingRule``, the largest sampled improvement
    queried. Needs finite domains; the width arguments give the width recorded with the
    rounds (Theorem 1's, unused by the choices).

    Raises:
        TypeError: If the domains are not finite.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import mts
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = mts(arms, LinearKernel().double(), 1.0, 1.0, 0.5, num_tasks=2)
        >>> action = policy.select({}, torch.Generator().manual_seed(0))
        >>> policy.update(action, torch.tensor([0.1]), {}, torch.Generator())
        >>> policy.select({}, torch.Generator().manual_seed(1)).task == 1 - action.task
        True
    """
    rule = _width_rule(
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        regularization, ImprovedWidth, num_tasks, PosteriorSamplingRule,
    )  # fmt: skip
    return ConfidencePolicy(rule, ActiveTaskRound(), name, recorded=ACTIVE_DIAGNOSTICS)


def mt_cmm_ucb(
    domains: Domain | Sequence[Domain],
    data_kernel: Kernel,
    b: float,
    rkhs_norm_bound: float,
    task_deviation: float,
    delta: float = 0.01,
    noise_std: float = 1.0,
    mixture_scale: float = 1.0,
    on_empty: str = "raise",
    num_tasks: int | None = None,
    name: str = "MT-CMM-UCB",
) -> ConfidencePolicy:
    r"""MT-CMM-UCB: Algorithm 1 of paper 001 with the exact multi-task martingale-mixture
    bound (``TaskIndexedMartingaleMixtureRule``), ``x_t = argmax_x u_{t-1}(i_t, x)`` for
    the revealed task; the half-width at ``x_t`` is recorded as ``width``.

    Args:
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
            mixture_scale, on_empty, num_tasks: As ``TaskIndexedMartingaleMixtureRule``.
        name: Name used in results.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import mt_cmm_ucb
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = mt_cmm_ucb(arms, LinearKernel().double(), b=1.0, rkhs_norm_bound=1.0,
        ...                     task_deviation=0.5, num_tasks=2)
        >>> x = policy.select({"task": 1}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.2]), {"task": 1}, torch.Generator())
        >>> policy.rule.bound.num_observations, sorted(policy.diagnostics())
        (1, ['growths', 'radius_squared', 'rkhs_norm_bound', 'width'])
    """
    rule = TaskIndexedMartingaleMixtureRule(
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        mixture_scale, on_empty, num_tasks,
    )  # fmt: skip
    return ConfidencePolicy(rule, RevealedTaskRound(), name)


def mt_cmm_al(
    domains: Domain | Sequence[Domain],
    data_kernel: Kernel,
    b: float,
    rkhs_norm_bound: float,
    task_deviation: float,
    delta: float = 0.01,
    noise_std: float = 1.0,
    mixture_scale: float = 1.0,
    on_empty: str = "raise",
    num_tasks: int | None = None,
    name: str = "MT-CMM-AL",
) -> ConfidencePolicy:
    r"""MT-CMM-AL: Algorithm 2 of paper 001 with the multi-task CMM bound:
    ``x_t^i = argmax_x u_{t-1}(i, x)`` for every task and the queried task ``i_t =
    argmax_i (u_{t-1}(i, x_t^i) - l_{t-1}(i, x_t^i)) / 2`` (MT-AL's ``beta_{t-1}
    sigma_{t-1}(i, x_t^i)`` replaced by the bound's half-width, ``LargestGain``). Ties of
    arms and of tasks are drawn from the generator (arms first, task by task).

    Args:
        As ``mt_cmm_ucb``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.bandits.task_indexed import mt_cmm_al
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
        >>> policy = mt_cmm_al(arms, LinearKernel().double(), 1.0, 1.0, 0.5, num_tasks=2)
        >>> action = policy.select({}, torch.Generator().manual_seed(0))
        >>> action.recommendations.shape
        torch.Size([2, 3])
        >>> policy.update(action, torch.tensor([0.2]), {}, torch.Generator())
        >>> policy.diagnostics()["task"] == action.task
        True
    """
    rule = TaskIndexedMartingaleMixtureRule(
        domains, data_kernel, b, rkhs_norm_bound, task_deviation, delta, noise_std,
        mixture_scale, on_empty, num_tasks,
    )  # fmt: skip
    return ConfidencePolicy(rule, ActiveTaskRound(), name)
