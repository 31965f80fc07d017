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
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.model import Model
from botorch.utils.transforms import t_batch_mode_transform
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.scalarized.policy import (
    ScalarizedUCBPolicy,
    check_task_variances,
    empty_model,
)
from botorch_mtucb.confidence.scalarized_widths import dragonfly_ucb_width, gp_ucb_width
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.scalarization import Scalarization
from botorch_mtucb.utils.domains import BoxDomain, Domain, FiniteDomain

RADII = ("srinivas", "dragonfly")


class ScalarizedObjectiveUCB(AcquisitionFunction):
    r"""``s_lambda(mu(x) + width * sigma(x))``: the scalarization of per-objective UCBs.

    ``sigma(x)`` is the vector of marginal posterior standard deviations (cross-task
    covariances are ignored, as for independent GPs). The ``width`` multiplies the
    standard deviation directly (unlike BoTorch's ``UpperConfidenceBound(beta=...)``).

    Example:
        >>> acqf = ScalarizedObjectiveUCB(model, LinearScalarization(w), width=2.0)
        >>> acqf(X)  # batch x 1 x d -> batch
    """

    def __init__(self, model: Model, scalarization: Scalarization, width: float) -> None:
        """Args:
            model: A BoTorch model with ``n`` outputs.
            scalarization: A ``Scalarization`` on ``n`` outputs with one weight vector.
            width: ``w_t >= 0``.

        Raises:
            TypeError: If ``scalarization`` is not a ``Scalarization``.
            ValueError: For a size mismatch or a negative / non-finite width.
        """
        super().__init__(model=model)
        if not isinstance(scalarization, Scalarization):
            raise TypeError(
                f"scalarization must be a Scalarization, got {type(scalarization).__name__}"
            )
        if scalarization.num_tasks != model.num_outputs:
            raise ValueError(
                f"the scalarization has {scalarization.num_tasks} weights but the model has "
                f"{model.num_outputs} outputs"
            )
        width = torch.as_tensor(width, dtype=torch.float64).detach()
        if width.numel() != 1 or not torch.isfinite(width) or width < 0:
            raise ValueError(f"width must be a finite number >= 0, got {width}")
        self.scalarization = scalarization
        self.register_buffer("width", width.reshape(()))

    @t_batch_mode_transform(expected_q=1)
    def forward(self, X: Tensor) -> Tensor:
        """``X``: ``batch x 1 x d`` -> ``batch`` UCB values."""
        posterior = self.model.posterior(X)
        mean = posterior.mean.squeeze(-2)  # b x n
        std = posterior.variance.squeeze(-2).clamp_min(0.0).sqrt()  # b x n
        return self.scalarization(mean + self.width.to(mean) * std)  # b


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
        noise_variance: The GPs' noise variance ``eta > 0`` (paper 000: 0.1).
        delta: Confidence level in (0, 1) of the Srinivas radius.
        radius: ``"srinivas"`` (default; Srinivas et al. 2010, Theorem 1, see the
            module docstring) or ``"dragonfly"`` (Paria et al.'s code).
        domain_size: ``|X|`` for the Srinivas radius: default the number of points of
            a finite domain; required for a box (e.g. a discretization's size).
        name: Name used in results.

    Raises:
        ValueError: For non-positive task variances, an unknown ``radius``, or a box
            domain without ``domain_size`` under the Srinivas radius.
    """

    acquisition_class = ScalarizedObjectiveUCB

    def __init__(
        self,
        data_kernel: Kernel,
        task_variances: Tensor,
        domain: Domain,
        noise_variance: float = 0.1,
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
        self.model = empty_model(VectorValuedGP, domain, data_kernel, covariance, noise_variance)
        self._width = self.width()

    def width(self) -> float:
        """``w_t`` for the next round ``t = (observations so far) + 1``."""
        t = self.model.train_X.shape[0] + 1
        if self.radius == "dragonfly":
            return dragonfly_ucb_width(t, self.domain.dim)
        return gp_ucb_width(t, int(self.domain_size), self.delta)
