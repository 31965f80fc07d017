"""MOBO: multi-objective BO with random scalarizations (Paria, Kandasamy & Poczos 2019).

Source: B. Paria, K. Kandasamy, B. Poczos, "A flexible framework for multi-objective
Bayesian optimization using random scalarizations", UAI 2019 (PMLR 115:766-776,
arXiv:1805.12168), the UCB variant of their Algorithm 1: each objective is modelled
by an independent GP, a weight vector ``lambda_t`` is drawn every round and the point
maximizing the scalarized upper confidence bound

    ``s_{lambda_t}(mu_{t-1}(x) + w_t sigma_{t-1}(x))``

(the scalarization applied to the vector of per-objective UCBs) is queried. Paper 000
uses it as a baseline "with the radius as specified in" Paria et al. (Appendix E).

The radius. We could not retrieve the radius of Paria et al.'s theorem from the text
available to us. Their analysis builds on GP-UCB, so the default here is the GP-UCB
radius of Srinivas et al. 2010, Theorem 1, for a finite domain:
``w_t = sqrt(2 log(|X| t^2 pi^2 / (6 delta)))`` (``gp_ucb_width``). The radius of
their released code (Dragonfly, ``dragonfly/opt/multiobjective_gpb_acquisitions.py``,
``_get_ucb_beta_th``: ``sqrt(0.2 d log(2 d t + 1))``) is available as
``radius="dragonfly"``.
"""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.acquisition.scalarized_objective_ucb import ScalarizedObjectiveUCB
from botorch_mtucb.bandits.scalarized.policy import ScalarizedUCBPolicy, empty_model
from botorch_mtucb.confidence.single_task_widths import dragonfly_ucb_width, gp_ucb_width
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils.checks import check_task_variances
from botorch_mtucb.utils.domains import BoxDomain, Domain, FiniteDomain

RADII = ("srinivas", "dragonfly")


class RandomScalarizationUCB(ScalarizedUCBPolicy):
    r"""MOBO (Paria et al. 2019, UCB with random scalarizations) as a policy.

    Independent GPs: ``VectorValuedGP`` with ``Gamma = k diag(task_variances)`` and noise
    variance ``eta``; each round the acquisition ``ScalarizedObjectiveUCB`` with the
    round's scalarization (context key ``"_scalarization"``) and width ``w_t`` for the
    round ``t`` being chosen.

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances of the objectives.
        domain: A ``FiniteDomain`` or ``BoxDomain``.
        regularization: The GPs' noise variance ``eta > 0`` (paper 000: 0.1).
        delta: Confidence level in (0, 1) of the Srinivas radius.
        radius: ``"srinivas"`` (default; Srinivas et al. 2010, Theorem 1, see the
            module docstring) or ``"dragonfly"`` (Paria et al.'s code).
        domain_size: ``|X|`` for the Srinivas radius: default the number of points of
            a finite domain; required for a box (e.g. a discretization's size).
        name: Name used in results.

    Raises:
        ValueError: For non-positive task variances, an unknown ``radius``, or a box
            domain without ``domain_size`` under the Srinivas radius.
        TypeError: If ``domain`` is neither a ``FiniteDomain`` nor a ``BoxDomain``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import (
        ...     RandomScalarizationUCB, ScalarizedEnvironment, run_policy)
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = RandomScalarizationUCB(problem.make_data_kernel(),
        ...     torch.diagonal(problem.task_covariance), problem.domain)
        >>> round(policy.width(), 4)  # sqrt(2 log(|X| t^2 pi^2 / (6 delta))), t = 1
        3.8511
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> policy.model.train_X.shape
        torch.Size([3, 1])
    """

    acquisition_class = ScalarizedObjectiveUCB

    def __init__(
        self,
        data_kernel: Kernel,
        task_variances: Tensor,
        domain: Domain,
        regularization: float = 0.1,
        delta: float = 0.1,
        radius: str = "srinivas",
        domain_size: int | None = None,
        name: str = "MOBO",
    ) -> None:
        task_variances = check_task_variances(task_variances)
        if radius not in RADII:
            raise ValueError(f"radius must be one of {RADII}, got {radius!r}")
        if domain_size is None and isinstance(domain, FiniteDomain):
            domain_size = domain.points.shape[0]
        if radius == "srinivas" and domain_size is None:
            raise ValueError("domain_size (|X|) is required for a BoxDomain with radius='srinivas'")
        if not isinstance(domain, (FiniteDomain, BoxDomain)):
            raise TypeError(f"domain must be a FiniteDomain or a BoxDomain, got {domain!r}")
        self.name = name
        self.domain = domain
        self.delta = delta
        self.radius = radius
        self.domain_size = domain_size
        reference = domain.points if isinstance(domain, FiniteDomain) else domain.bounds
        covariance = torch.diag(task_variances).to(reference)
        self.model = empty_model(VectorValuedGP, domain, data_kernel, covariance, regularization)
        self._width = self.width()

    def width(self) -> float:
        """``w_t`` for the next round ``t = (observations so far) + 1``."""
        t = self.model.train_X.shape[0] + 1
        if self.radius == "dragonfly":
            return dragonfly_ucb_width(t, self.domain.dim)
        return gp_ucb_width(t, int(self.domain_size), self.delta)
