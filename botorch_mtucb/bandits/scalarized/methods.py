r"""Paper 000's methods as compositions: a confidence rule with the scalarized round.

Each round ``x_t = argmax_x u_{t-1}(s_{lambda_t}, x)`` for the round's scalarization
(``ScalarizedRound``), then ``y_t`` (all ``n`` tasks) goes to the rule:

* ``mt_kb`` (Algorithm 1): the exact posterior of ``Gamma`` with Theorem 2's width,
  ``s(mu(x)) + L_lambda width ||Gamma_{t-1}(x, x)||^{1/2}`` (eq. (2));
* ``mt_bkb`` (Algorithm 2): the Nystrom sketch with Theorem 3's ``q`` and width;
* ``it_kb`` / ``it_bkb``: independent tasks (``Gamma = k diag(B_11, ..., B_nn)``), each
  learned as in IGP-UCB / BKB, the width scaled by ``sqrt(n)`` (Section 5, Appendix E);
* ``mobo``: MOBO (Paria, Kandasamy & Poczos, UAI 2019, the UCB variant of their
  Algorithm 1), independent GPs and the scalarization of the per-objective UCBs
  ``s(mu + w_t sigma)`` (``ScalarizedObjectiveUCB``);
* ``mt_cmm_ucb`` / ``it_cmm_ucb``: Algorithm 1 with the multi-task martingale-mixture
  bound of paper 002 in place of Theorem 2's width (MT-CMM-UCB, MT-DMM-UCB with a grid of
  ``alpha``, IT-CMM-UCB: ``k diag(B)``, no transfer between the tasks).

**MOBO's radius.** We could not retrieve the radius of Paria et al.'s theorem from the
text available to us. Their analysis builds on GP-UCB, so the default is the GP-UCB radius
of Srinivas et al. 2010, Theorem 1, for a finite domain, ``w_t = sqrt(2 log(|X| t^2 pi^2
/ (6 delta)))`` (``GPUCBRadius``); the radius of their released code (Dragonfly,
``dragonfly/opt/multiobjective_gpb_acquisitions.py``, ``_get_ucb_beta_th``: ``sqrt(0.2 d
log(2 d t + 1))``) is ``radius=DragonflyRadius(d)``.

Why this module is long: each of paper 000's seven methods is one short composition with
its full docstring (formula, arguments, running example); they share the scalarized
round and its argument checks, so they stay together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.acquisition.scalarized_objective_ucb import ScalarizedObjectiveUCB
from botorch_mtucb.bandits.confidence_rules import (
    GPUCBRadius,
    IndependentBKBWidth,
    IndependentIGPUCBWidth,
    MTBKBWidth,
    MTKBWidth,
    MultiTaskMartingaleMixtureRule,
    WidthRule,
)
from botorch_mtucb.bandits.policy import ConfidencePolicy
from botorch_mtucb.bandits.rounds import ScalarizedRound
from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound, mt_bkb_accuracy
from botorch_mtucb.confidence.constant_checks import check_eps
from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_alphas
from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels, TaskCovarianceLike
from botorch_mtucb.kernels.task_checks import check_task_variances
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.models.nystrom_vector_valued_gp import NystromVectorValuedGP
from botorch_mtucb.utils.checks import as_float
from botorch_mtucb.utils.domains import BoxDomain, Domain, FiniteDomain


def _reference(domain: Domain) -> Tensor:
    """A tensor of the domain's ``d``, dtype and device."""
    return domain.points if isinstance(domain, FiniteDomain) else domain.bounds


def empty_model(
    model_class: type, domain: Domain, data_kernel, task_covariance, regularization, **kwargs
):
    """``model_class`` built on no data (the prior), on the domain's dtype and device.

    Args:
        model_class: ``VectorValuedGP`` or ``NystromVectorValuedGP``.
        domain: A ``FiniteDomain`` or ``BoxDomain`` (gives ``d``, dtype and device).
        data_kernel, task_covariance: The multi-task kernel (as ``VectorValuedGP``).
        regularization: ``eta > 0``.
        **kwargs: Passed on to ``model_class`` (e.g. MT-BKB's ``accuracy``, ``seed``).

    Example:
        >>> from botorch_mtucb.bandits.scalarized import empty_model
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> model = empty_model(VectorValuedGP, problem.domain, problem.make_data_kernel(),
        ...                     problem.task_covariance, 0.1)
        >>> model.train_X.shape, model.num_outputs
        (torch.Size([0, 1]), 2)
    """
    reference = _reference(domain)
    num_tasks = SumOfSeparableKernels(data_kernel, task_covariance).num_tasks
    return model_class(
        reference.new_zeros(0, reference.shape[-1]),
        reference.new_zeros(0, num_tasks),
        data_kernel,
        task_covariance,
        regularization,
        **kwargs,
    )


def _scalarized(rule: Any, domain: Domain, name: str) -> ConfidencePolicy:
    return ConfidencePolicy(rule, ScalarizedRound(domain), name)


def mt_kb(
    data_kernel: Kernel | Sequence[Kernel],
    task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
    domain: Domain,
    rkhs_norm_bound: float,
    noise_std: float,
    regularization: float = 0.1,
    delta: float = 0.1,
    name: str = "MT-KB",
) -> ConfidencePolicy:
    r"""MT-KB, Algorithm 1 of paper 000: the exact posterior (``VectorValuedGP``,
    updated incrementally) with ``beta_{t-1}`` of Theorem 2 (``MTKBWidth``).

    Args:
        data_kernel, task_covariance: The multi-task kernel (as in ``VectorValuedGP``).
        domain: A ``FiniteDomain`` or ``BoxDomain``.
        rkhs_norm_bound: ``b >= ||f||_Gamma``.
        noise_std: Sub-Gaussian noise level ``sigma``.
        regularization: The regularization ``eta > 0`` (paper 000 uses 0.1).
        delta: Confidence level in (0, 1) (paper 000 uses 0.1).
        name: Name used in results.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
        >>> from botorch_mtucb.bandits.scalarized import mt_kb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = mt_kb(problem.make_data_kernel(), problem.task_covariance,
        ...                problem.domain, problem.rkhs_norm_bound, problem.noise_std)
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> sorted(records[-1].diagnostics)
        ['information_gain', 'width']
    """
    model = empty_model(VectorValuedGP, domain, data_kernel, task_covariance, regularization)
    width = MTKBWidth(rkhs_norm_bound, noise_std, delta)
    return _scalarized(WidthRule(model, width, candidates=domain), domain, name)


def it_kb(
    data_kernel: Kernel,
    task_variances: Tensor,
    domain: Domain,
    rkhs_norm_bound: float,
    noise_std: float,
    eta: float = 0.1,
    delta: float = 0.1,
    name: str = "IT-KB",
) -> ConfidencePolicy:
    r"""IT-KB: independent tasks learned with IGP-UCB, width scaled by ``sqrt(n)``.

    Task ``i`` is a scalar GP with kernel ``task_variances[i] * k`` and regularization
    ``1 + eta`` (``IndependentIGPUCBWidth``); the acquisition is eq. (2) with the
    diagonal posterior (paper 000, Section 5, Appendix E).

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances (the diagonal of ``B``).
        domain, rkhs_norm_bound, noise_std, delta: As for ``mt_kb``.
        eta: IGP-UCB's ``eta > 0`` (paper 000 uses the same 0.1 for every method).
        name: Name used in results.

    Raises:
        ValueError: For non-positive task variances.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.bandits.scalarized import it_kb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = it_kb(problem.make_data_kernel(), torch.diagonal(problem.task_covariance),
        ...                problem.domain, problem.rkhs_norm_bound, problem.noise_std)
        >>> environment, generator = ScalarizedEnvironment(problem), torch.Generator()
        >>> context = environment.context(1, generator)
        >>> x = policy.select(context, generator)
        >>> policy.update(x, environment.observe(x, context, generator), context, generator)
        >>> policy.rule.width_function.num_observations
        1
    """
    task_variances = check_task_variances(task_variances)
    model = empty_model(VectorValuedGP, domain, data_kernel, torch.diag(task_variances), 1.0 + eta)
    width = IndependentIGPUCBWidth(rkhs_norm_bound, noise_std, delta, eta, task_variances.numel())
    return _scalarized(WidthRule(model, width, candidates=domain), domain, name)


def _accuracy(accuracy: float | None, eps: float, delta: float, horizon: int | None) -> float:
    if accuracy is not None:
        return as_float(accuracy, "accuracy")
    if horizon is None:
        raise ValueError("give either accuracy (q >= 1) or the horizon T to compute it")
    return mt_bkb_accuracy(eps, delta, horizon)


def mt_bkb(
    data_kernel: Kernel | Sequence[Kernel],
    task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
    domain: Domain,
    rkhs_norm_bound: float,
    noise_std: float,
    regularization: float = 0.1,
    delta: float = 0.1,
    eps: float = 0.5,
    accuracy: float | None = None,
    horizon: int | None = None,
    seed: int = 0,
    name: str = "MT-BKB",
) -> ConfidencePolicy:
    r"""MT-BKB, Algorithm 2 of paper 000: the sketched posterior
    (``NystromVectorValuedGP``) with ``beta~_{t-1}`` of Theorem 3 (``MTBKBWidth``); after
    each observation the dictionary is redrawn with inclusion probabilities ``min(q
    ||Gamma~_{t-1}(x_i, x_i)||, 1)`` from the round's policy generator (so a resumed run
    draws the same dictionaries). ``q`` is recorded in the run file's header.

    Args:
        data_kernel, task_covariance, domain, rkhs_norm_bound, noise_std, regularization,
            delta: As for ``mt_kb``.
        eps: Accuracy of the sketch in (0, 1) (paper 000: 0.5).
        accuracy: ``q >= 1``; default Theorem 3's ``6 rho log(4 T / delta) / eps^2``,
            which needs ``horizon``.
        horizon: ``T``, for the default ``accuracy``.
        seed: Seed of the dictionary draws when no generator is passed to ``update``.
        name: Name used in results.

    Raises:
        TypeError: If ``accuracy`` is not a real number (a bool, a string ...).
        ValueError: For ``eps`` outside (0, 1), ``accuracy < 1``, or neither
            ``accuracy`` nor ``horizon``; otherwise as ``NystromVectorValuedGP``.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
        >>> from botorch_mtucb.bandits.scalarized import mt_bkb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = mt_bkb(problem.make_data_kernel(), problem.task_covariance,
        ...                 problem.domain, problem.rkhs_norm_bound, problem.noise_std,
        ...                 horizon=50)
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> sorted(records[-1].diagnostics)
        ['dictionary_size', 'log_det_sum', 'width']
    """
    eps = check_eps(eps)
    accuracy = _accuracy(accuracy, eps, delta, horizon)
    model = empty_model(
        NystromVectorValuedGP, domain, data_kernel, task_covariance, regularization,
        accuracy=accuracy, seed=seed,
    )  # fmt: skip
    width = MTBKBWidth(rkhs_norm_bound, noise_std, delta, eps)
    rule = WidthRule(model, width, candidates=domain, settings={"accuracy": float(accuracy)})
    return _scalarized(rule, domain, name)


def it_bkb(
    data_kernel: Kernel,
    task_variances: Tensor,
    domain: Domain,
    rkhs_norm_bound: float,
    noise_std: float,
    regularization: float = 0.1,
    delta: float = 0.1,
    eps: float = 0.5,
    accuracy: float | None = None,
    horizon: int | None = None,
    seed: int = 0,
    name: str = "IT-BKB",
) -> ConfidencePolicy:
    r"""IT-BKB: independent tasks learned with BKB, width scaled by ``sqrt(n)``.

    Task ``i`` is a scalar GP with kernel ``task_variances[i] * k`` and regularization
    ``lambda``, sketched as in BKB (Calandriello et al. 2019): the dictionary is redrawn
    after every observation with probabilities ``min(q_bar sigma~^2(x_s) / lambda, 1)``,
    ``q_bar`` from BKB's Theorem 1 (``6 alpha log(4 T / delta) / eps^2``). The tasks
    share one dictionary drawn with the largest of their probabilities (so each task's
    row is drawn at least as often as in its own BKB run; the tasks see the same inputs).
    The width is ``IndependentBKBWidth`` (paper 000, Section 5, Appendix E).

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances (the diagonal of ``B``).
        domain, rkhs_norm_bound, noise_std, delta, eps: As for ``mt_bkb``.
        regularization: BKB's ``lambda > 0`` (paper 000 uses 0.1 for every method).
        accuracy: BKB's ``q_bar >= 1`` (default from ``eps``, ``delta`` and
            ``horizon``); the sketch uses ``q = max(q_bar / lambda, 1)`` on
            unnormalized variances. Recorded in the run file's header.
        horizon, seed, name: As for ``mt_bkb``.

    Raises:
        TypeError: If ``accuracy`` is not a real number (a bool, a string ...).
        ValueError: For non-positive task variances, ``eps`` outside (0, 1),
            ``accuracy < 1`` (or not finite) or neither ``accuracy`` nor ``horizon``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
        >>> from botorch_mtucb.bandits.scalarized import it_bkb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = it_bkb(problem.make_data_kernel(), torch.diagonal(problem.task_covariance),
        ...                 problem.domain, problem.rkhs_norm_bound, problem.noise_std,
        ...                 horizon=50)
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> policy.rule.width_function.task_widths(policy.rule.model).shape
        torch.Size([2])
    """
    task_variances = check_task_variances(task_variances)
    eps = check_eps(eps)
    accuracy = _accuracy(accuracy, eps, delta, horizon)
    if accuracy < 1:
        raise ValueError(f"accuracy (q_bar) must be >= 1, got {accuracy}")
    reference = _reference(domain)
    with torch.no_grad():
        prior = data_kernel(reference, reference, diag=True).to_dense()
    kernel_bounds = task_variances * float(prior.amax())  # kappa_i^2
    model = empty_model(
        NystromVectorValuedGP, domain, data_kernel, torch.diag(task_variances).to(reference),
        regularization, accuracy=max(accuracy / regularization, 1.0), seed=seed,
    )  # fmt: skip
    width = IndependentBKBWidth(
        rkhs_norm_bound, noise_std, delta, eps, regularization, kernel_bounds
    )
    rule = WidthRule(model, width, candidates=domain, settings={"accuracy": float(accuracy)})
    return _scalarized(rule, domain, name)


def mobo(
    data_kernel: Kernel,
    task_variances: Tensor,
    domain: Domain,
    regularization: float = 0.1,
    delta: float = 0.1,
    radius: Any = None,
    domain_size: int | None = None,
    name: str = "MOBO",
) -> ConfidencePolicy:
    r"""MOBO (Paria et al. 2019, UCB with random scalarizations) as a composition.

    Independent GPs: ``VectorValuedGP`` with ``Gamma = k diag(task_variances)`` and noise
    variance ``eta``; each round ``ScalarizedObjectiveUCB`` (the scalarization of the
    per-objective UCBs ``mu + w_t sigma``) with the round's scalarization and the radius
    ``w_t`` of the round ``t`` being chosen (module docstring).

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances of the objectives.
        domain: A ``FiniteDomain`` or ``BoxDomain``.
        regularization: The GPs' noise variance ``eta > 0`` (paper 000: 0.1).
        delta: Confidence level in (0, 1) of the GP-UCB radius.
        radius: ``model -> w_t``; default ``GPUCBRadius(domain_size, delta)``
            (Srinivas et al. 2010, Theorem 1); ``DragonflyRadius(d)`` is Paria et al.'s
            code's.
        domain_size: ``|X|`` for the default radius: default the number of points of
            a finite domain; required for a box (e.g. a discretization's size).
        name: Name used in results.

    Raises:
        ValueError: For non-positive task variances, or a box domain without
            ``domain_size`` under the default radius.
        TypeError: If ``radius`` is not callable, or ``domain`` is neither a
            ``FiniteDomain`` nor a ``BoxDomain``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
        >>> from botorch_mtucb.bandits.scalarized import mobo
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = mobo(problem.make_data_kernel(), torch.diagonal(problem.task_covariance),
        ...               problem.domain)
        >>> round(policy.rule.width, 4)  # sqrt(2 log(|X| t^2 pi^2 / (6 delta))), t = 1
        3.8511
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> policy.rule.model.train_X.shape
        torch.Size([3, 1])
    """
    task_variances = check_task_variances(task_variances)
    if radius is not None and not callable(radius):
        raise TypeError(
            "radius must be a function model -> w_t (GPUCBRadius(domain_size, delta), "
            f"DragonflyRadius(d)), got {radius!r}"
        )
    if domain_size is None and isinstance(domain, FiniteDomain):
        domain_size = domain.points.shape[0]
    if radius is None and domain_size is None:
        raise ValueError(
            "domain_size (|X|) is required for a BoxDomain with the GP-UCB radius "
            "(or pass radius=DragonflyRadius(d))"
        )
    if not isinstance(domain, (FiniteDomain, BoxDomain)):
        raise TypeError(f"domain must be a FiniteDomain or a BoxDomain, got {domain!r}")
    if radius is None:
        radius = GPUCBRadius(domain_size, delta)
    covariance = torch.diag(task_variances).to(_reference(domain))
    model = empty_model(VectorValuedGP, domain, data_kernel, covariance, regularization)
    rule = WidthRule(model, radius, ScalarizedObjectiveUCB, candidates=domain)
    return _scalarized(rule, domain, name)


def mt_cmm_ucb(
    data_kernel: Kernel | Sequence[Kernel],
    task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
    domain: Domain,
    rkhs_norm_bound: float,
    noise_std: float,
    delta: float = 0.1,
    alphas: float | Sequence[float] | Tensor | None = None,
    mixture_scale: float = 1.0,
    name: str | None = None,
) -> ConfidencePolicy:
    r"""MT-CMM-UCB / MT-DMM-UCB: Algorithm 1 of paper 000 with the multi-task
    martingale-mixture bound (``MultiTaskMartingaleMixtureRule``) in place of Theorem 2's
    width: MT-KB's protocol with another rule.

    Args:
        data_kernel, task_covariance: The multi-task kernel ``Gamma = k B`` (or a sum
            of separable terms, as ``MultiTaskMartingaleMixtureBound``).
        domain: A ``FiniteDomain`` or ``BoxDomain``.
        rkhs_norm_bound: ``B >= ||f||_Gamma``.
        noise_std: ``sigma``, the sub-Gaussian level of each task's noise.
        delta: Confidence level in ``(0, 1)`` (paper 000 uses 0.1).
        alphas: ``None`` for the exact bound (CMM), a grid of ``alpha > 0`` (DMM).
        mixture_scale: ``c > 0`` of paper 002's eq. (8) (1 for the RBF kernel, paper 002
            Section 6.2).
        name: Name used in results (default ``"MT-CMM-UCB"``, ``"MT-DMM-UCB"`` with
            ``alphas``).

    Raises:
        TypeError, ValueError: As ``MultiTaskMartingaleMixtureBound`` and
            ``check_alphas``.
        EmptyConfidenceSetError: In ``select`` once the data contradict
            ``rkhs_norm_bound`` and ``noise_std`` (the bound is never enlarged).

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
        >>> from botorch_mtucb.bandits.scalarized import mt_cmm_ucb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = mt_cmm_ucb(problem.make_data_kernel(), problem.task_covariance,
        ...     problem.domain, 10.0, problem.noise_std)  # 10 >= ||f||_Gamma = 6.55
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> policy.name, policy.rule.bound.num_observations  # 3 rounds x 2 tasks
        ('MT-CMM-UCB', 6)
    """
    alphas = None if alphas is None else check_alphas(alphas)
    reference = _reference(domain)
    num_tasks = SumOfSeparableKernels(data_kernel, task_covariance).num_tasks
    bound = MultiTaskMartingaleMixtureBound(
        reference.new_zeros(0, reference.shape[-1]),
        reference.new_zeros(0, num_tasks),
        data_kernel,
        task_covariance,
        rkhs_norm_bound,
        noise_std,
        delta,
        mixture_scale,
    )
    name = name or ("MT-CMM-UCB" if alphas is None else "MT-DMM-UCB")
    return _scalarized(MultiTaskMartingaleMixtureRule(bound, alphas), domain, name)


def it_cmm_ucb(
    data_kernel: Kernel,
    task_variances: Tensor,
    domain: Domain,
    rkhs_norm_bound: float,
    noise_std: float,
    delta: float = 0.1,
    alphas: float | Sequence[float] | Tensor | None = None,
    mixture_scale: float = 1.0,
    name: str | None = None,
) -> ConfidencePolicy:
    r"""IT-CMM-UCB: ``mt_cmm_ucb`` with independent tasks, the kernel ``k diag(B)``.

    The martingale-mixture counterpart of IT-KB: no information is shared between the
    tasks (the per-task bounds ``u_i`` read only task ``i``'s observations); one
    confidence set over all ``n t`` scalar observations with the norm bound of ``f`` in
    the RKHS of ``k diag(task_variances)``.

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances (the diagonal of ``B``).
        domain, rkhs_norm_bound, noise_std, delta, alphas, mixture_scale: As for
            ``mt_cmm_ucb`` (``rkhs_norm_bound`` in the independent-task RKHS).
        name: Name used in results (default ``"IT-CMM-UCB"``, ``"IT-DMM-UCB"`` with
            ``alphas``).

    Raises:
        ValueError: For non-positive task variances, and as ``mt_cmm_ucb``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits.scalarized import it_cmm_ucb
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = it_cmm_ucb(problem.make_data_kernel(),
        ...     torch.diagonal(problem.task_covariance), problem.domain, 10.0, problem.noise_std)
        >>> covariance = policy.rule.bound.kernel.task_covariances[0]
        >>> bool((covariance == torch.diag(torch.diagonal(covariance))).all())
        True
    """
    task_variances = check_task_variances(task_variances)
    name = name or ("IT-CMM-UCB" if alphas is None else "IT-DMM-UCB")
    return mt_cmm_ucb(
        data_kernel, torch.diag(task_variances), domain, rkhs_norm_bound, noise_std, delta,
        alphas, mixture_scale, name,
    )  # fmt: skip
