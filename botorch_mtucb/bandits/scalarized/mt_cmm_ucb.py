r"""MT-CMM-UCB, MT-DMM-UCB and IT-CMM-UCB: paper 000's Algorithm 1 with the multi-task
martingale-mixture bound of paper 002 in place of Theorem 2's width (issue 12).

Each round, for the round's scalarization ``s_lambda`` (context key
``"_scalarization"``), the policy plays the maximizer over the domain of an upper bound
on ``s_lambda(f(x))`` that holds on the confidence set ``F_t`` of
``MultiTaskMartingaleMixtureBound`` (paper 002, Lemma 4.2, for the scalar kernel
``K((x, i), (x', j)) = Gamma(x, x')_{ij}`` of paper 000, Remark 2):

* linear ``s(y) = lambda^T y``: ``u(x) = max_{f in F_t} lambda^T f(x)``, the bound on
  the linear functional ``lambda^T f(x)`` itself (``upper(x, weights=lambda)``);
* Chebyshev ``s(y) = min_i lambda_i (y_i - z_i)``: ``u(x) = min_i lambda_i (u_i(x) -
  z_i)`` with the per-task bounds ``u_i(x) = max_{f in F_t} f_i(x)`` (valid since
  ``lambda_i >= 0``: ``s`` is non-decreasing in every ``y_i``).

The bound is exact (``alphas=None``: CMM, paper 002 Section 5.3) or the minimum over a
grid of ``alpha`` (DMM, Section 5.4); after each round the full vector ``y_t`` is
appended to it (``append_observations``). The acquisition is
``ScalarizedMartingaleMixtureUCB`` (Chebyshev: its per-task form). IT-CMM-UCB is the
same with independent tasks: the kernel ``k diag(B)`` (no transfer between the tasks),
as IT-KB.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.acquisition import ScalarizedMartingaleMixtureUCB
from botorch_mtucb.confidence.martingale_mixture.alpha_search import search_range
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels, TaskCovarianceLike
from botorch_mtucb.scalarization import Scalarization
from botorch_mtucb.utils.checks import check_alphas, check_task_variances
from botorch_mtucb.utils.domains import Domain, FiniteDomain, maximize_acquisition


class MultiTaskMartingaleMixtureBandit:
    r"""MT-CMM-UCB / MT-DMM-UCB: Algorithm 1 of paper 000 with the multi-task
    martingale-mixture bound (module docstring).

    Each round ``x_t = argmax_x u_{t-1}(x)`` of ``ScalarizedMartingaleMixtureUCB`` for
    the round's scalarization (``maximize_acquisition``: the first maximizer on a
    finite domain, as MT-KB), then ``y_t`` (all ``n`` tasks) is appended to the bound.

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
        name: Name used in results.

    Raises:
        TypeError, ValueError: As ``MultiTaskMartingaleMixtureBound`` and
            ``check_alphas``.
        EmptyConfidenceSetError: In ``select`` once the data contradict
            ``rkhs_norm_bound`` and ``noise_std`` (the bound is never enlarged).

    Example:
        >>> from botorch_mtucb.bandits import (
        ...     MultiTaskMartingaleMixtureBandit, ScalarizedEnvironment, run_policy)
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = MultiTaskMartingaleMixtureBandit(problem.make_data_kernel(),
        ...     problem.task_covariance, problem.domain, 10.0,  # >= ||f||_Gamma = 6.55
        ...     problem.noise_std)
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> policy.bound.num_observations  # 3 rounds x 2 tasks
        6
        >>> sorted(records[-1].diagnostics)
        ['radius_squared']
    """

    def __init__(
        self,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        domain: Domain,
        rkhs_norm_bound: float,
        noise_std: float,
        delta: float = 0.1,
        alphas: float | Sequence[float] | Tensor | None = None,
        mixture_scale: float = 1.0,
        name: str = "MT-CMM-UCB",
    ) -> None:
        self.name = name
        self.domain = domain
        self.alphas = None if alphas is None else check_alphas(alphas)
        reference = domain.points if isinstance(domain, FiniteDomain) else domain.bounds
        num_tasks = SumOfSeparableKernels(data_kernel, task_covariance).num_tasks
        self.bound = MultiTaskMartingaleMixtureBound(
            reference.new_zeros(0, reference.shape[-1]),
            reference.new_zeros(0, num_tasks),
            data_kernel,
            task_covariance,
            rkhs_norm_bound,
            noise_std,
            delta,
            mixture_scale,
        )

    def acquisition(self, scalarization: Scalarization) -> ScalarizedMartingaleMixtureUCB:
        """``u_{t-1}`` for ``scalarization`` on the data seen so far."""
        return ScalarizedMartingaleMixtureUCB(self.bound, scalarization, alphas=self.alphas)

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``x_t``: the maximizer of ``u_{t-1}`` for the round's scalarization (on a
        finite domain with the exact bound: ``screened_argmax``, the same point)."""
        scalarization = context["_scalarization"]
        exact_on_points = self.alphas is None and isinstance(self.domain, FiniteDomain)
        if exact_on_points and self.bound.num_observations > 0:
            return self.screened_argmax(scalarization)
        x, _ = maximize_acquisition(self.acquisition(scalarization), self.domain, generator)
        return x.detach()

    def screened_argmax(self, scalarization: Scalarization, chunk: int = 8) -> Tensor:
        r"""The first maximizer over the finite domain of the exact ``u_{t-1}``,
        computed where it can win only.

        Every ``alpha`` gives a valid bound (eq. (12) holds for each ``alpha``), so the
        minimum over a grid ``A`` is an upper bound of the exact one: ``u^A(x) >=
        u(x)``. The points are visited in decreasing ``u^A`` (``chunk`` at a time, the
        grid bound costs ``O(t n)`` per point and ``alpha`` on the Kronecker route) and
        the exact bound is computed until the next ``u^A`` falls below the best exact
        value found: no point left can reach it. The result is the first maximizer of
        the exact bound over all points (the tie-breaking of
        ``optimize_acqf_discrete``), as evaluating it everywhere would give. The grid
        ``A``: three points per decade over ``alpha_search.search_range``.

        Returns:
            The chosen point (``d``).
        """
        points = self.domain.points
        low, high = search_range(self.bound.spectrum().eigenvalues, self.bound.base_alpha)
        decades = math.log10(high / low)
        grid = torch.logspace(
            math.log10(low), math.log10(high), max(int(3 * decades) + 1, 3), dtype=torch.float64
        )
        with torch.no_grad():
            screen = ScalarizedMartingaleMixtureUCB(self.bound, scalarization, alphas=grid)
            exact = ScalarizedMartingaleMixtureUCB(self.bound, scalarization, alphas=None)
            upper = screen(points.unsqueeze(-2)).to(torch.float64)
            order = torch.argsort(upper, descending=True, stable=True)
            values = torch.full_like(upper, -math.inf)
            best = -math.inf
            for start in range(0, len(order), chunk):
                if float(upper[order[start]]) < best:
                    break
                which = order[start : start + chunk]
                values[which] = exact(points[which].unsqueeze(-2)).to(torch.float64)
                best = max(best, float(values[which].max()))
        return points[int(values.argmax())].detach()

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Append ``y_t`` (all ``n`` tasks) at ``x_t`` to the bound."""
        self.bound.append_observations(x.reshape(1, -1), y.reshape(1, -1))

    def diagnostics(self) -> dict[str, float]:
        """``R_t^2`` of the mixture over the scalar observations (paper 002, eq. (8))."""
        return {"radius_squared": float(self.bound.radius_squared)}

    def settings(self) -> dict[str, Any]:
        """The bound's parameters (stored in the run file's header)."""
        bound = self.bound
        return {
            "rkhs_norm_bound": bound.rkhs_norm_bound,
            "noise_std": bound.noise_std,
            "delta": bound.delta,
            "mixture_scale": bound.mixture_scale,
            "alphas": None if self.alphas is None else self.alphas.tolist(),
        }


class IndependentTaskMartingaleMixtureBandit(MultiTaskMartingaleMixtureBandit):
    r"""IT-CMM-UCB: MT-CMM-UCB with independent tasks, the kernel ``k diag(B)``.

    The martingale-mixture counterpart of IT-KB: no information is shared between the
    tasks (the per-task bounds ``u_i`` read only task ``i``'s observations); one
    confidence set over all ``n t`` scalar observations with the norm bound of ``f`` in
    the RKHS of ``k diag(task_variances)``.

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances (the diagonal of ``B``).
        domain, rkhs_norm_bound, noise_std, delta, alphas, mixture_scale: As for
            ``MultiTaskMartingaleMixtureBandit`` (``rkhs_norm_bound`` in the
            independent-task RKHS).
        name: Name used in results.

    Raises:
        ValueError: For non-positive task variances, and as the parent.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import IndependentTaskMartingaleMixtureBandit
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = IndependentTaskMartingaleMixtureBandit(problem.make_data_kernel(),
        ...     torch.diagonal(problem.task_covariance), problem.domain, 10.0,
        ...     problem.noise_std)
        >>> covariance = policy.bound.kernel.task_covariances[0]
        >>> bool((covariance == torch.diag(torch.diagonal(covariance))).all())
        True
    """

    def __init__(
        self,
        data_kernel: Kernel,
        task_variances: Tensor,
        domain: Domain,
        rkhs_norm_bound: float,
        noise_std: float,
        delta: float = 0.1,
        alphas: float | Sequence[float] | Tensor | None = None,
        mixture_scale: float = 1.0,
        name: str = "IT-CMM-UCB",
    ) -> None:
        task_variances = check_task_variances(task_variances)
        super().__init__(
            data_kernel,
            torch.diag(task_variances),
            domain,
            rkhs_norm_bound,
            noise_std,
            delta,
            alphas,
            mixture_scale,
            name,
        )
