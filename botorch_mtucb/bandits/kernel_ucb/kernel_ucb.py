r"""KernelUCB (Algorithm 1 of paper 002) with five confidence bounds, and a random baseline.

Each round ``x_t = argmax_{x in X_t} u_{t-1}(x)``, where ``X_t`` is the round's action
set (the context key ``"_actions"``, paper 002 Section 5.1) or a fixed domain, and
``u_{t-1}`` is one of

* ``"CMM"``: the exact martingale-mixture bound (Kernel CMM-UCB, Section 5.3);
* ``"DMM"``: its minimum over ``A = {0.1, 0.3, 1, 3, 10} sigma^2 / c`` (Section 5.4, 7);
* ``"AMM"``: the analytic bound of Cor. 4.6 with ``alpha = sigma^2 / c`` (Section 5.5);
* ``"AY"``: AY-GP-UCB, ``mu_lambda + beta^AY rho_lambda`` with ``lambda = sigma^2 / c``
  (Abbasi-Yadkori 2012, Theorem 3.11; paper 002, Appendix C.2 and Section 7);
* ``"IGP"``: IGP-UCB, ``mu_{1+eta} + beta^IGP rho_{1+eta}`` with ``eta = 2 / T``
  (Chowdhury & Gopalan 2017, Theorem 2; paper 002, Appendix C.2 and Section 7).

The martingale-mixture bounds share one ``MartingaleMixtureBound`` updated in ``O(t^2)``
per round (Appendix E.2; the exact bound adds one ``O(t^3)`` eigen-decomposition per
round); the baselines use ``VectorValuedGP`` (incremental Cholesky) and BoTorch's
``UpperConfidenceBound`` with ``beta = width^2`` (BoTorch multiplies ``sqrt(beta)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from botorch.acquisition import AcquisitionFunction, UpperConfidenceBound
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.acquisition.martingale_mixture_ucb import MartingaleMixtureUCB
from botorch_mtucb.confidence import MartingaleMixtureBound, ay_gp_ucb_width, igp_ucb_width
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils.checks import check_positive
from botorch_mtucb.utils.domains import BoxDomain, Domain, FiniteDomain, maximize_acquisition

CONFIDENCE_BOUNDS = ("CMM", "DMM", "AMM", "AY", "IGP")
METHOD_NAMES = {
    "CMM": "CMM-UCB",
    "DMM": "DMM-UCB",
    "AMM": "AMM-UCB",
    "AY": "AY-GP-UCB",
    "IGP": "IGP-UCB",
}
DMM_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)  # multiples of sigma^2 / c (paper 002, Section 7)


def default_mixture_scale(nu: float, dim: int, horizon: int) -> float:
    r"""Paper 002's covariance scale ``c`` (Section 6.2 and 7).

    ``c = 1`` for the RBF kernel (``nu = inf``) and ``c = T^{-d / (2 d + 2 nu)}`` for a
    Matern kernel of smoothness ``nu``.

    Raises:
        ValueError: If ``nu <= 0``, ``dim < 1`` or ``horizon < 1``.
    """
    if not nu > 0:
        raise ValueError(f"nu must be > 0 (math.inf for RBF), got {nu}")
    if dim < 1 or horizon < 1:
        raise ValueError(f"dim and horizon must be >= 1, got {dim} and {horizon}")
    if math.isinf(nu):
        return 1.0
    return float(horizon) ** (-dim / (2.0 * dim + 2.0 * nu))


class KernelUCB:
    r"""KernelUCB (paper 002, Algorithm 1) with a chosen confidence bound.

    Args:
        kernel: The (fixed, known) GPyTorch kernel.
        dim: The input dimension ``d``.
        confidence: One of ``"CMM"``, ``"DMM"``, ``"AMM"``, ``"AY"``, ``"IGP"``.
        rkhs_norm_bound: ``B > 0`` (paper 002 uses the true norm, 10).
        noise_std: ``sigma > 0`` (paper 002: 0.1).
        delta: Confidence level in (0, 1) (paper 002: 0.01).
        mixture_scale: ``c > 0``; also sets AY-GP-UCB's ``lambda = sigma^2 / c`` and the
            alphas of DMM / AMM (see ``default_mixture_scale``).
        eta: IGP-UCB's ``eta > 0`` (paper 002: ``2 / T``); required for ``"IGP"``.
        dmm_grid: DMM's grid as multiples of ``sigma^2 / c``.
        domain: Where to look when the context has no ``"_actions"`` (a
            ``FiniteDomain`` or ``BoxDomain``).
        name: Name used in results (default: the paper's, e.g. ``"DMM-UCB"``).

    Raises:
        ValueError: For an unknown ``confidence``, bad numbers, or ``"IGP"`` without
            ``eta``.
    """

    def __init__(
        self,
        kernel: Kernel,
        dim: int,
        confidence: str = "DMM",
        rkhs_norm_bound: float = 10.0,
        noise_std: float = 0.1,
        delta: float = 0.01,
        mixture_scale: float = 1.0,
        eta: float | None = None,
        dmm_grid: Sequence[float] = DMM_GRID,
        domain: Domain | None = None,
        name: str | None = None,
    ) -> None:
        if confidence not in CONFIDENCE_BOUNDS:
            raise ValueError(f"confidence must be one of {CONFIDENCE_BOUNDS}, got {confidence!r}")
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.confidence = confidence
        self.name = name or METHOD_NAMES[confidence]
        self.domain = domain
        self.rkhs_norm_bound = check_positive(rkhs_norm_bound, "rkhs_norm_bound")
        self.noise_std = check_positive(noise_std, "noise_std")
        self.delta = delta
        self.mixture_scale = check_positive(mixture_scale, "mixture_scale")
        empty_X = torch.zeros(0, dim, dtype=torch.float64)
        empty_Y = torch.zeros(0, 1, dtype=torch.float64)
        base_alpha = self.noise_std**2 / self.mixture_scale
        self.bound: MartingaleMixtureBound | None = None
        self.model: VectorValuedGP | None = None
        if confidence in ("CMM", "DMM", "AMM"):
            self.bound = MartingaleMixtureBound(
                empty_X, empty_Y, kernel, rkhs_norm_bound, noise_std, delta, mixture_scale
            )
            self.alphas = {
                "CMM": None,
                "DMM": torch.tensor([m * base_alpha for m in dmm_grid], dtype=torch.float64),
                "AMM": torch.tensor([base_alpha], dtype=torch.float64),
            }[confidence]
        else:
            if confidence == "IGP":
                if eta is None:
                    raise ValueError("IGP-UCB needs eta > 0 (paper 002 uses eta = 2 / T)")
                self.eta = check_positive(eta, "eta")
                self.regularization = 1.0 + self.eta
            else:
                self.regularization = base_alpha  # lambda = sigma^2 / c (Theorem 6.3)
            self.model = VectorValuedGP(
                empty_X,
                empty_Y,
                kernel,
                torch.ones(1, 1, dtype=torch.float64),
                regularization=self.regularization,
            )
        self._width = self.width()

    def width(self) -> Tensor | None:
        """The baselines' width (``None`` for the martingale-mixture bounds)."""
        if self.model is None:
            return None
        gamma = self.model.information_gain().detach()
        if self.confidence == "IGP":
            return igp_ucb_width(
                gamma,
                self.model.num_observations,
                self.rkhs_norm_bound,
                self.noise_std,
                self.delta,
                self.eta,
            )
        return ay_gp_ucb_width(
            gamma, self.rkhs_norm_bound, self.noise_std, self.delta, self.regularization
        )

    def acquisition(self) -> AcquisitionFunction:
        """``u_{t-1}`` as a BoTorch acquisition function."""
        if self.bound is not None:
            return MartingaleMixtureUCB(self.bound, self.alphas)
        return UpperConfidenceBound(self.model, beta=self._width**2)

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``x_t = argmax u_{t-1}(x)`` over the round's actions (or the domain)."""
        domain = _round_domain(context, self.domain)
        x, _ = maximize_acquisition(self.acquisition(), domain, generator)
        return x.detach()

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Add ``(x_t, y_t)`` (recursive updates, ``O(t^2)``)."""
        x = x.reshape(1, -1).to(torch.float64)
        y = y.reshape(1, 1).to(torch.float64)
        if self.bound is not None:
            self.bound.append_observations(x, y)
        else:
            self.model.append_observations(x, y)
            self._width = self.width()

    def diagnostics(self) -> dict[str, float]:
        """The radius ``R_t^2`` (martingale mixtures) or the width (baselines)."""
        if self.bound is not None:
            return {"radius_squared": float(self.bound.radius_squared)}
        return {"width": float(self._width)}


class RandomPolicy:
    """Actions chosen uniformly at random (paper 002, Section 7, "Random").

    Args:
        domain: Used when the context has no ``"_actions"``.
        name: Name used in results.
    """

    def __init__(self, domain: Domain | None = None, name: str = "Random") -> None:
        self.name = name
        self.domain = domain

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """A uniformly random action (or point of the box)."""
        domain = _round_domain(context, self.domain)
        if isinstance(domain, FiniteDomain):
            index = int(torch.randint(domain.points.shape[0], (1,), generator=generator))
            return domain.points[index]
        bounds = domain.bounds.to(torch.float64)
        u = torch.rand(bounds.shape[-1], generator=generator, dtype=torch.float64)
        return (bounds[0] + u * (bounds[1] - bounds[0])).to(domain.bounds)

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Nothing to learn."""


def _round_domain(context: dict[str, Any], domain: Domain | None) -> Domain:
    actions = context.get("_actions")
    if actions is not None:
        return FiniteDomain(actions)
    if domain is None:
        raise ValueError("the context has no '_actions' and the policy has no domain")
    if not isinstance(domain, (FiniteDomain, BoxDomain)):
        raise TypeError(f"domain must be a FiniteDomain or BoxDomain, got {type(domain).__name__}")
    return domain
