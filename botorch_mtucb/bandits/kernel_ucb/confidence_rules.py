r"""The confidence rules of KernelUCB (paper 002): one small object per way of building
the round's upper confidence bound ``u_{t-1}``.

A rule holds the data seen so far and has three methods: ``acquisition()`` (``u_{t-1}``
as a BoTorch acquisition function), ``update(X, Y)`` (add observations) and
``diagnostics()`` (numbers recorded with each round). ``KernelUCB`` maximizes the
acquisition and feeds back the observation; it never asks which rule it holds.

* ``MartingaleMixtureRule``: the martingale-mixture bound of paper 002 with a set of
  alphas: exact (``None``, Kernel CMM-UCB, Section 5.3), a grid (Kernel DMM-UCB,
  Section 5.4) or one alpha (Kernel AMM-UCB, Cor. 4.6, Section 5.5); updated in
  ``O(t^2)`` per round (Appendix E.2).
* ``WidthRule``: ``mu + width * rho`` on a ``VectorValuedGP`` with a width function of
  the model: ``AYGPUCBWidth`` (Abbasi-Yadkori 2012, Theorem 3.11) or ``IGPUCBWidth``
  (Chowdhury & Gopalan 2017, Theorem 2), the baselines of paper 002 (Appendix C.2).

``confidence_rule`` (``methods.py``) builds the rule of each of paper 002's methods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from botorch.acquisition import AcquisitionFunction, UpperConfidenceBound
from torch import Tensor

from botorch_mtucb.acquisition import MartingaleMixtureUCB
from botorch_mtucb.confidence import MartingaleMixtureBound, ay_gp_ucb_width, igp_ucb_width
from botorch_mtucb.models import VectorValuedGP


@runtime_checkable
class ConfidenceRule(Protocol):
    """What ``KernelUCB`` needs from a confidence rule.

    Example:
        >>> from botorch_mtucb.bandits import ConfidenceRule, confidence_rule
        >>> from botorch_mtucb.problems import make_kernel
        >>> isinstance(confidence_rule("DMM-UCB", make_kernel("rbf", 0.5), 2), ConfidenceRule)
        True
    """

    def acquisition(self) -> AcquisitionFunction:
        """``u_{t-1}`` on the data seen so far."""

    def update(self, X: Tensor, Y: Tensor) -> None:
        """Add the observations ``Y`` (``n x 1``) at ``X`` (``n x d``)."""

    def diagnostics(self) -> dict[str, float]:
        """Numbers recorded with each round."""


class MartingaleMixtureRule:
    r"""``u_t(x) = min_{alpha in A} mu_alpha(x) + R~_alpha / sqrt(alpha) rho_alpha(x)``.

    The martingale-mixture bound of paper 002 (eq. (12)) as ``MartingaleMixtureUCB``:
    ``alphas=None`` for the exact bound (``A = (0, inf)``, CMM-UCB), a grid (DMM-UCB) or
    one alpha (AMM-UCB).

    Args:
        bound: A ``MartingaleMixtureBound`` on the data seen so far (updated in place).
        alphas: ``None``, or a ``k`` tensor of ``alpha > 0`` (checked by
            ``MartingaleMixtureUCB``).

    Raises:
        TypeError: If ``bound`` is not a ``MartingaleMixtureBound``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import MartingaleMixtureRule
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.problems import make_kernel
        >>> X, Y = torch.rand(5, 2, dtype=torch.float64), torch.zeros(5, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, Y, make_kernel("rbf", 0.5), 10.0, 0.1, 0.01)
        >>> rule = MartingaleMixtureRule(bound, torch.tensor([0.01], dtype=torch.float64))
        >>> test_X = torch.rand(3, 2, dtype=torch.float64)
        >>> torch.equal(rule.acquisition()(test_X.unsqueeze(-2)), bound.upper(test_X, 0.01))
        True
    """

    def __init__(self, bound: MartingaleMixtureBound, alphas: Tensor | None = None) -> None:
        if not isinstance(bound, MartingaleMixtureBound):
            raise TypeError(f"bound must be a MartingaleMixtureBound, got {type(bound).__name__}")
        self.bound = bound
        self.alphas = alphas

    def acquisition(self) -> MartingaleMixtureUCB:
        """``MartingaleMixtureUCB.from_bound(bound, alphas)``."""
        return MartingaleMixtureUCB.from_bound(self.bound, self.alphas)

    def update(self, X: Tensor, Y: Tensor) -> None:
        """Append ``(X, Y)`` to the bound (``O(t^2)`` per observation)."""
        self.bound.append_observations(X, Y)

    def diagnostics(self) -> dict[str, float]:
        """The radius ``R_t^2`` of the mixture (eq. (9))."""
        return {"radius_squared": float(self.bound.radius_squared)}


class WidthRule:
    r"""``u_t(x) = mu_t(x) + width_t * rho_t(x)`` with ``width_t = width_function(model)``.

    The acquisition is BoTorch's ``UpperConfidenceBound`` with ``beta = width^2``
    (BoTorch multiplies ``sqrt(beta)``; our widths multiply the standard deviation).
    The width is recomputed after every update.

    Args:
        model: A single-output ``VectorValuedGP`` on the data seen so far (its
            ``regularization`` is the ``lambda`` of ``rho_lambda``), updated in place.
        width_function: ``model -> width`` (a 0-d tensor), e.g. ``AYGPUCBWidth`` or
            ``IGPUCBWidth``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import AYGPUCBWidth, WidthRule
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.problems import make_kernel
        >>> X, Y = torch.zeros(0, 2, dtype=torch.float64), torch.zeros(0, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, Y, make_kernel("rbf", 0.5), torch.ones(1, 1,
        ...                        dtype=torch.float64), regularization=0.01)
        >>> rule = WidthRule(model, AYGPUCBWidth(10.0, 0.1, 0.01, regularization=0.01))
        >>> rule.update(torch.rand(1, 2, dtype=torch.float64), torch.ones(1, 1, dtype=torch.float64))
        >>> float(rule.width) > 10.0
        True
    """

    def __init__(self, model: VectorValuedGP, width_function: Callable[[VectorValuedGP], Tensor]):
        self.model = model
        self.width_function = width_function
        self.width = width_function(model)

    def acquisition(self) -> UpperConfidenceBound:
        """``UpperConfidenceBound(model, beta=width^2)``."""
        return UpperConfidenceBound(self.model, beta=self.width**2)

    def update(self, X: Tensor, Y: Tensor) -> None:
        """Condition the model on ``(X, Y)`` (incremental Cholesky), recompute the width."""
        self.model.append_observations(X, Y)
        self.width = self.width_function(self.model)

    def diagnostics(self) -> dict[str, float]:
        """The current width."""
        return {"width": float(self.width)}


@dataclass(frozen=True)
class AYGPUCBWidth:
    r"""AY-GP-UCB's width of a model: ``ay_gp_ucb_width(gamma_t, B, sigma, delta, lambda)``.

    ``gamma_t`` is the model's information gain ``1/2 ln det(I + K_t / lambda)``
    (Abbasi-Yadkori 2012, Theorem 3.11; paper 002, Appendix C.2), with ``lambda`` the
    model's regularization, given again here as ``regularization``.

    Example:
        >>> from botorch_mtucb.bandits import AYGPUCBWidth
        >>> width = AYGPUCBWidth(rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05,
        ...                      regularization=0.01)
        >>> width.rkhs_norm_bound
        1.0
    """

    rkhs_norm_bound: float
    noise_std: float
    delta: float
    regularization: float

    def __call__(self, model: VectorValuedGP) -> Tensor:
        """The width for the data of ``model`` (0-d float64 tensor)."""
        gamma = model.information_gain().detach()
        return ay_gp_ucb_width(
            gamma, self.rkhs_norm_bound, self.noise_std, self.delta, self.regularization
        )


@dataclass(frozen=True)
class IGPUCBWidth:
    r"""IGP-UCB's width of a model: ``igp_ucb_width(gamma_t, t, B, sigma, delta, eta)``.

    ``gamma_t`` is the model's information gain with regularization ``1 + eta`` and ``t``
    its number of observations (Chowdhury & Gopalan 2017, Theorem 2; paper 002,
    Appendix C.2).

    Example:
        >>> from botorch_mtucb.bandits import IGPUCBWidth
        >>> width = IGPUCBWidth(rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05, eta=0.02)
        >>> width.eta
        0.02
    """

    rkhs_norm_bound: float
    noise_std: float
    delta: float
    eta: float

    def __call__(self, model: VectorValuedGP) -> Tensor:
        """The width for the data of ``model`` (0-d float64 tensor)."""
        gamma = model.information_gain().detach()
        return igp_ucb_width(
            gamma,
            model.num_observations,
            self.rkhs_norm_bound,
            self.noise_std,
            self.delta,
            self.eta,
        )
