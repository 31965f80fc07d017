r"""A stopping rule for any BoTorch loop: stop when the certified optimality gap is small.

``CertifiedStopping(epsilon).should_stop(model_or_bound, domain)`` computes the
certificate of ``confidence.certificate`` (``max_x f(x) - f(x_hat) <= max_x u_t(x) -
l_t(x_hat)``) and stops when the gap is at most ``epsilon`` (absolute), or at most
``epsilon`` times the range of the lower bounds over the evaluated points
(``relative=True``).

What it guarantees: the confidence bounds hold for all rounds at once with probability
``1 - delta`` (paper 002, Lemma 4.2; paper 000, Theorem 1), so checking the rule at every
round and stopping at the first success keeps the guarantee, whatever acquisition chose
the points: with probability ``1 - delta`` the recommendation is ``epsilon``-optimal when
the rule stops. This holds when the bound's assumptions hold (``||f||_H <= B`` known,
``sigma``-sub-Gaussian noise, a kernel fixed before the data); with a fitted BoTorch
model (hyperparameters refitted each round) or ``B`` chosen from the data the decision is
labelled practical, not guaranteed (``Certificate.guaranteed``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.confidence.certificate import (
    Certificate,
    MartingaleMixtureBounds,
    as_confidence_bounds,
    certify,
)
from botorch_mtucb.confidence.certificate.inputs import evaluated_lower, lower_range
from botorch_mtucb.confidence.constant_checks import check_delta
from botorch_mtucb.utils.checks import as_float
from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain


@dataclass(frozen=True, eq=False)
class StoppingDecision:
    """The result of ``CertifiedStopping.should_stop``.

    Attributes:
        stop: Whether ``certificate.gap <= threshold``.
        certificate: The ``Certificate`` (gap, recommendation, bounds on the optimum,
            assumptions).
        threshold: The absolute threshold compared with the gap (``epsilon``, or
            ``epsilon`` times the range of the lower bounds).
        message: The decision, the number and what it certifies, in words.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import CertifiedStopping
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> X = torch.linspace(0, 1, 8, dtype=torch.float64).unsqueeze(-1)
        >>> decision = CertifiedStopping(epsilon=10.0).should_stop(
        ...     SingleTaskGP(X, X.sin()), FiniteDomain(X))
        >>> decision.stop, decision.certificate.guaranteed
        (True, False)
    """

    stop: bool
    certificate: Certificate
    threshold: float
    message: str


class CertifiedStopping:
    r"""Stop when the certified optimality gap is at most ``epsilon`` (module docstring).

    Args:
        epsilon: ``> 0``: the largest simple regret accepted (units of ``f``), or with
            ``relative=True`` a fraction of the range of the lower bounds ``l_t`` over
            the evaluated points.
        relative: See ``epsilon``.
        delta: Confidence level in ``(0, 1)`` of the bound built from a model (a
            prebuilt bound keeps its own).
        rkhs_norm_bound: ``B`` for a model's bound, in its transformed units (``None``:
            chosen from the data, practical).
        noise_std: ``sigma`` for a model's bound (``None``: its likelihood's).
        alphas: ``None`` (exact), a grid (DMM) or one ``alpha`` (AMM).
        hyperparameters_fixed: Whether a model's kernel was fixed before the data
            (``False``: practical, not guaranteed).
        early_exit: On a box, stop refining as soon as the decision is known
            (``certify``'s ``target_gap = threshold``): faster, and the gap reported is
            then a valid but coarser bound. ``False``: refine to ``certify``'s tolerance.
        certify_options: Passed to ``certify`` (``max_cells``, ``tolerance``, ...).

    Raises:
        ValueError: For ``epsilon`` not ``> 0`` (NaN included) or ``delta`` outside
            ``(0, 1)``.
        TypeError: For a non-number ``epsilon`` or ``delta``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.acquisition import CertifiedStopping
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.utils import BoxDomain
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> kernel = RBFKernel()
        >>> kernel.lengthscale = 0.3
        >>> bound = MartingaleMixtureBound(X, (3 * X).sin(), kernel, 2.0, 0.01, 0.1)
        >>> box = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
        >>> decision = CertifiedStopping(epsilon=0.5).should_stop(bound, box)
        >>> decision.stop, decision.certificate.guaranteed
        (True, True)
    """

    def __init__(
        self,
        epsilon: float,
        relative: bool = False,
        delta: float = 0.01,
        rkhs_norm_bound: float | None = None,
        noise_std: float | None = None,
        alphas: float | Sequence[float] | Tensor | None = None,
        hyperparameters_fixed: bool = False,
        early_exit: bool = False,
        **certify_options,
    ) -> None:
        epsilon = as_float(epsilon, "epsilon", finite=False)
        if not epsilon > 0 or math.isnan(epsilon):
            raise ValueError(f"epsilon must be > 0, got {epsilon}")
        self.epsilon, self.relative = epsilon, bool(relative)
        self.delta = check_delta(delta)
        self.rkhs_norm_bound, self.noise_std = rkhs_norm_bound, noise_std
        self.alphas, self.hyperparameters_fixed = alphas, bool(hyperparameters_fixed)
        self.early_exit = bool(early_exit)
        self.certify_options = certify_options

    def bounds(self, model_or_bound):
        """The ``ConfidenceBounds`` of a fitted single-output BoTorch GP
        (``MartingaleMixtureBounds.from_model``) or of a prebuilt bound.

        Raises:
            TypeError: For anything else, or a model the bound cannot read.

        Example:
            >>> import torch
            >>> from botorch.models import SingleTaskGP
            >>> from botorch_mtucb.acquisition import CertifiedStopping
            >>> X = torch.rand(5, 1, dtype=torch.float64)
            >>> CertifiedStopping(0.1).bounds(SingleTaskGP(X, X)).guaranteed
            False
        """
        if isinstance(model_or_bound, Model):
            return MartingaleMixtureBounds.from_model(
                model_or_bound,
                rkhs_norm_bound=self.rkhs_norm_bound,
                noise_std=self.noise_std,
                delta=self.delta,
                alphas=self.alphas,
                hyperparameters_fixed=self.hyperparameters_fixed,
            )
        try:
            options = {} if self.alphas is None else {"alphas": self.alphas}
            return as_confidence_bounds(model_or_bound, **options)
        except TypeError as error:
            raise TypeError(
                f"model_or_bound must be a fitted single-output BoTorch GP or a bound ({error})"
            ) from error

    def should_stop(
        self,
        model_or_bound,
        domain: FiniteDomain | BoxDomain,
        recommendation: Tensor | None = None,
        evaluated: Tensor | None = None,
    ) -> StoppingDecision:
        r"""Certify and decide: ``stop = gap <= threshold``.

        Args:
            model_or_bound: A fitted single-output BoTorch GP, a
                ``MartingaleMixtureBound`` or any ``ConfidenceBounds``.
            domain: A ``FiniteDomain`` or ``BoxDomain`` (the model's input space).
            recommendation: ``x_hat`` (``d``), or ``None``: the evaluated point with the
                largest lower bound.
            evaluated: ``m x d`` evaluated points (``None``: the bound's training inputs).

        Returns:
            A ``StoppingDecision``.

        Raises:
            TypeError, ValueError, UnsupportedError: As ``certify`` and ``bounds``.

        Example:
            >>> import torch
            >>> from botorch.models import SingleTaskGP
            >>> from botorch_mtucb.acquisition import CertifiedStopping
            >>> from botorch_mtucb.utils import FiniteDomain
            >>> X = torch.rand(6, 1, dtype=torch.float64)
            >>> rule = CertifiedStopping(1e-6)
            >>> rule.should_stop(SingleTaskGP(X, X.cos()), FiniteDomain(X)).stop
            False
        """
        bounds = self.bounds(model_or_bound)
        threshold = self.epsilon
        if self.relative:
            _, lowers = evaluated_lower(bounds, evaluated)
            threshold = self.epsilon * lower_range(lowers)
        options = dict(self.certify_options)
        if self.early_exit and isinstance(domain, BoxDomain) and threshold > 0:
            options.setdefault("target_gap", threshold)
        certificate = certify(bounds, domain, recommendation, evaluated, **options)
        stop = certificate.gap <= threshold
        label = "" if certificate.guaranteed else " (practical, not guaranteed)"
        scale = " (relative to the range of the lower bounds)" if self.relative else ""
        verdict = "stop" if stop else "continue"
        message = (
            f"{verdict}{label}: certified gap {certificate.gap:.6g} "
            f"{'<=' if stop else '>'} threshold {threshold:.6g}{scale}\n{certificate}"
        )
        return StoppingDecision(stop, certificate, threshold, message)
