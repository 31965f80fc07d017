r"""The result of ``certify``: a bound on the simple regret and what it rests on.

On the event of the confidence bounds (probability ``1 - delta``, all rounds at once),
``l_t(x) <= f(x) <= u_t(x)`` for every ``x``, hence for any recommendation ``x_hat``

.. math::
    \max_x f(x) - f(\hat x) \le \bar U_t - l_t(\hat x), \qquad
    \bar U_t \ge \max_x f(x),

with ``bar U_t = max_x u_t(x)`` on a finite domain and the branch-and-bound bound on a
box (``box``). Because the event holds for every round at once, the certificate may be
computed at every round and acted upon (stopping) without a union bound over rounds, and
whatever rule chose the points (paper 002, Lemma 4.2; paper 000, Theorem 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


@dataclass(frozen=True, eq=False)
class Certificate:
    r"""A certified optimality gap (module docstring).

    Attributes:
        gap: ``bar U_t - l_t(x_hat)``, an upper bound on ``max_x f(x) - f(x_hat)``.
        recommendation: ``x_hat`` (``d``).
        recommendation_lower: ``l_t(x_hat)``, a lower bound on ``f(x_hat)``.
        optimum_lower: A lower bound on ``max_x f(x)``: the largest ``l_t`` over the
            points examined (evaluated points, the finite domain, the box's cell centres).
        optimum_upper: ``bar U_t``, an upper bound on ``max_x f(x)``.
        candidates: ``k x d`` points (finite domain) or cell centres (box) that may still
            be optimal: ``u_t(x) >= optimum_lower`` (cells: their upper bound).
        candidate_half_widths: ``k x d`` half-widths of the candidate cells (box) or
            ``None`` (finite domain).
        lower_bound_range: ``max - min`` of ``l_t`` over the evaluated points (over the
            domain's points if none), the scale of a relative stopping rule.
        guaranteed: Whether the assumptions of the theorem are met (a known ``B``, a
            fixed kernel); ``False``: practical, not guaranteed.
        assumptions: What the bound assumes, in words.
        delta: The confidence level: the statement holds with probability ``>= 1 -
            delta`` (if ``guaranteed``).
        method: How ``bar U_t`` was obtained (exact over ``N`` points, or branch and
            bound with its cells and the refinement reached).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.certificate import Certificate
        >>> c = Certificate(0.2, torch.zeros(1), 0.7, 0.7, 0.9, torch.zeros(1, 1), None,
        ...                 0.5, True, "toy", 0.1, "finite domain")
        >>> print(c)  # doctest: +ELLIPSIS
        Certified optimality gap 0.2: max_x f(x) - f(x_hat) <= 0.2 at x_hat = [0.0], ...
    """

    gap: float
    recommendation: Tensor
    recommendation_lower: float
    optimum_lower: float
    optimum_upper: float
    candidates: Tensor
    candidate_half_widths: Tensor | None
    lower_bound_range: float
    guaranteed: bool
    assumptions: str
    delta: float
    method: str

    @property
    def num_candidates(self) -> int:
        """The number of points or cells that may still be optimal."""
        return int(self.candidates.shape[0])

    def __str__(self) -> str:
        x_hat = [round(v, 6) for v in self.recommendation.tolist()]
        status = (
            f"guaranteed with probability >= {1 - self.delta:g} (for all rounds at once)"
            if self.guaranteed
            else "PRACTICAL, NOT GUARANTEED (assumptions below not met)"
        )
        kind = "cells" if self.candidate_half_widths is not None else "points"
        return (
            f"Certified optimality gap {self.gap:.6g}: max_x f(x) - f(x_hat) <= "
            f"{self.gap:.6g} at x_hat = {x_hat}, {status}.\n"
            f"  f(x_hat) >= {self.recommendation_lower:.6g}; max_x f(x) in "
            f"[{self.optimum_lower:.6g}, {self.optimum_upper:.6g}]; "
            f"{self.num_candidates} {kind} may still be optimal.\n"
            f"  Method: {self.method}.\n"
            f"  Assumptions: {self.assumptions}."
        )
