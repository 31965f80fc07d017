"""Paper 000's bandit protocol: random scalarizations of a vector-valued objective.

Source: paper 000, Section 2 ("Performance metric"): at round t a weight vector
lambda_t ~ P_lambda is drawn; the scalarized regret of x_t is
s_{lambda_t}(f(x*_{lambda_t})) - s_{lambda_t}(f(x_t)); R_C(T) is their sum and the
Bayes regret R_B(T) = E_lambda[s_lambda(f(x*_lambda)) - max_{x in X_T} s_lambda(f(x))].
"""

from __future__ import annotations

from typing import Any, Protocol

import torch
from torch import Tensor

from botorch_mtucb.scalarization import (
    ChebyshevScalarization,
    LinearScalarization,
    Scalarization,
    sample_chebyshev_weights,
    sample_linear_weights,
)

SCALARIZATIONS = ("chebyshev", "linear")


class VectorObjective(Protocol):
    """What ``ScalarizedEnvironment`` needs from a problem.


    num_tasks: int
    reference_point: Tensor  # n

    Example:
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)  # a MultiTaskProblem is a VectorObjective
        >>> problem.objective(problem.regret_points).shape
        torch.Size([101, 2])
    """

    def objective(self, X: Tensor) -> Tensor:
        """Noise-free ``f(X)``: ``... x d`` -> ``... x n``."""

    def observe(self, X: Tensor, generator: torch.Generator) -> Tensor:
        """A noisy observation ``y = f(x) + eps``: ``d`` -> ``n``."""

    @property
    def regret_points(self) -> Tensor:
        """``M x d`` points over which ``max_x s_lambda(f(x))`` is taken."""


class ScalarizedEnvironment:
    """Random scalarizations of a vector objective (paper 000's protocol).

    Args:
        problem: A vector objective (``objective``, ``observe``, ``reference_point``,
            ``regret_points``, ``num_tasks``), e.g. any problem of
            ``botorch_mtucb.problems`` for paper 000.
        scalarization: ``"chebyshev"`` (Section 5) or ``"linear"`` (Appendix E).
        num_bayes_weights: Size of the fixed Monte Carlo sample of weights used for
            the Bayes regret.
        bayes_seed: Seed of that sample.

    Raises:
        ValueError: For an unknown scalarization or ``num_bayes_weights < 1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> environment = ScalarizedEnvironment(problem, "chebyshev")
        >>> context = environment.context(1, torch.Generator().manual_seed(0))
        >>> context["weights"].shape
        torch.Size([2])
        >>> environment.regret(problem.domain.points[0], context) >= 0.0
        True
    """

    def __init__(
        self,
        problem: VectorObjective,
        scalarization: str = "chebyshev",
        num_bayes_weights: int = 256,
        bayes_seed: int = 12345,
    ) -> None:
        if scalarization not in SCALARIZATIONS:
            raise ValueError(
                f"scalarization must be one of {SCALARIZATIONS}, got {scalarization!r}"
            )
        if num_bayes_weights < 1:
            raise ValueError(f"num_bayes_weights must be >= 1, got {num_bayes_weights}")
        self.problem = problem
        self.scalarization = scalarization
        self._sampler = (
            sample_chebyshev_weights if scalarization == "chebyshev" else sample_linear_weights
        )
        with torch.no_grad():
            self._values = problem.objective(problem.regret_points).to(torch.float64)  # M x n
        generator = torch.Generator().manual_seed(bayes_seed)
        self.bayes_weights = self._sampler(
            problem.num_tasks, torch.Size([num_bayes_weights]), generator=generator
        )
        bayes = self.make_scalarization(self.bayes_weights.unsqueeze(-2))  # W x 1 x n
        self._bayes_optimum = bayes(self._values).amax(-1)  # W

    def make_scalarization(self, weights: Tensor) -> Scalarization:
        """The scalarization ``s_lambda`` for ``weights`` (``... x n``)."""
        if self.scalarization == "chebyshev":
            return ChebyshevScalarization(weights, self.problem.reference_point.to(weights))
        return LinearScalarization(weights)

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """``{"weights": lambda_t, "_scalarization": s_{lambda_t}}``."""
        weights = self._sampler(self.problem.num_tasks, generator=generator)
        return {"weights": weights, "_scalarization": self.make_scalarization(weights)}

    def observe(self, x: Tensor, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``y_t = f(x_t) + eps_t`` (``n``)."""
        return self.problem.observe(x.reshape(-1), generator).reshape(-1)

    def regret(self, x: Tensor, context: dict[str, Any]) -> float:
        """``s_lambda(f(x*_lambda)) - s_lambda(f(x))``, with the optimum over the regret
        points (and ``x`` itself, so that the value is never negative)."""
        scalarization = context["_scalarization"]
        with torch.no_grad():
            value = self.problem.objective(x.reshape(1, -1).detach()).to(torch.float64)
            scalarized = scalarization(torch.cat([self._values, value]))  # M + 1
            value = scalarized[-1]
            best = torch.maximum(scalarized[:-1].amax(), value)
        return float(best - value)

    def bayes_regret_curve(self, X: Tensor) -> Tensor:
        """``R_B(t)`` for ``t = 1..T`` given the queried points ``X`` (``T x d``)."""
        bayes = self.make_scalarization(self.bayes_weights.unsqueeze(-2))  # W x 1 x n
        with torch.no_grad():
            values = bayes(self.problem.objective(X).to(torch.float64))  # W x T
        best_so_far = values.cummax(dim=-1).values
        optimum = torch.maximum(self._bayes_optimum[:, None], best_so_far)
        return (optimum - best_so_far).mean(0)
