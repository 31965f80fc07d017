"""MT-KB (Algorithm 1 of paper 000) and its independent-task baseline IT-KB.

Both choose ``x_t = argmax_x s_{lambda_t}(mu_{t-1}(x)) + L_lambda * width *
||Gamma_{t-1}(x, x)||^{1/2}`` (paper 000, eq. (2)) and differ in the kernel and the
width:

* MT-KB: the multi-task kernel ``Gamma`` and the width of Theorem 2;
* IT-KB: independent tasks (``Gamma = k diag(B_11, ..., B_nn)``), each learned as in
  IGP-UCB (Chowdhury & Gopalan 2017: regularization ``1 + eta``, width of their Theorem 2)
  and the width scaled by ``sqrt(n)`` (paper 000, Section 5 and Appendix E).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import gpytorch
import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.scalarized.policy import ScalarizedUCBPolicy, empty_model
from botorch_mtucb.confidence import igp_ucb_width, information_gain_increment, mt_kb_width
from botorch_mtucb.kernels.separable_sum import TaskCovarianceLike
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils.checks import check_task_variances
from botorch_mtucb.utils.domains import Domain


class MultiTaskKernelizedBandit(ScalarizedUCBPolicy):
    r"""MT-KB, Algorithm 1 of paper 000.

    Each round: ``beta_{t-1}`` of Theorem 2 (``mt_kb_width``), the acquisition
    ``ScalarizedMultiTaskUCB`` with the round's scalarization (the context key
    ``"_scalarization"``), maximized over the domain; then the exact posterior is
    updated incrementally.

    Args:
        data_kernel, task_covariance: The multi-task kernel (as in ``VectorValuedGP``).
        domain: A ``FiniteDomain`` or ``BoxDomain``.
        rkhs_norm_bound: ``b >= ||f||_Gamma``.
        noise_std: Sub-Gaussian noise level ``sigma``.
        regularization: The regularization ``eta > 0`` (paper 000 uses 0.1).
        delta: Confidence level in (0, 1) (paper 000 uses 0.1).
        name: Name used in results.

    Example:
        >>> from botorch_mtucb.bandits import (
        ...     MultiTaskKernelizedBandit, ScalarizedEnvironment, run_policy)
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = MultiTaskKernelizedBandit(problem.make_data_kernel(),
        ...     problem.task_covariance, problem.domain, problem.rkhs_norm_bound,
        ...     problem.noise_std)
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> sorted(records[-1].diagnostics)
        ['information_gain', 'width']
    """

    def __init__(
        self,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        domain: Domain,
        rkhs_norm_bound: float,
        noise_std: float,
        regularization: float = 0.1,
        delta: float = 0.1,
        name: str = "MT-KB",
    ) -> None:
        self.name = name
        self.domain = domain
        self.rkhs_norm_bound = rkhs_norm_bound
        self.noise_std = noise_std
        self.delta = delta
        self.model = empty_model(
            VectorValuedGP, domain, data_kernel, task_covariance, regularization
        )
        self._width = self.width()

    def width(self) -> Tensor:
        """``beta_t`` of Theorem 2 for the data seen so far."""
        return mt_kb_width(self.model, self.rkhs_norm_bound, self.noise_std, self.delta)

    def diagnostics(self) -> dict[str, float]:
        """The current width and information gain."""
        return {
            "width": float(self._width),
            "information_gain": float(self.model.information_gain()),
        }


class IndependentTaskKernelizedBandit(ScalarizedUCBPolicy):
    r"""IT-KB: independent tasks learned with IGP-UCB, width scaled by ``sqrt(n)``.

    The baseline of paper 000 (Section 5, Appendix E). Task ``i`` is a scalar GP with
    kernel ``task_variances[i] * k`` and regularization ``1 + eta`` (IGP-UCB, Chowdhury &
    Gopalan 2017). With ``|f_i - mu_i| <= beta_i sigma_i`` for each task,
    ``||f - mu||_2 <= sqrt(n) max_i beta_i max_i sigma_i``, so the acquisition is eq. (2)
    with the diagonal posterior and ``width = sqrt(n) max_i beta_i``, where ``beta_i`` is
    ``igp_ucb_width`` with task ``i``'s information gain ``1/2 log det(I + K_i / (1 + eta))``
    (accumulated exactly by the chain rule from the posterior variances at the queried
    points).

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances (the diagonal of ``B``); ``n`` ones for
            unit-variance tasks.
        domain, rkhs_norm_bound, noise_std, delta: As for MT-KB.
        eta: IGP-UCB's ``eta > 0`` (paper 000 uses the same 0.1 for every method).
        name: Name used in results.

    Raises:
        ValueError: For non-positive task variances.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import IndependentTaskKernelizedBandit, ScalarizedEnvironment
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = IndependentTaskKernelizedBandit(problem.make_data_kernel(),
        ...     torch.diagonal(problem.task_covariance), problem.domain,
        ...     problem.rkhs_norm_bound, problem.noise_std)
        >>> environment, generator = ScalarizedEnvironment(problem), torch.Generator()
        >>> context = environment.context(1, generator)
        >>> x = policy.select(context, generator)
        >>> policy.update(x, environment.observe(x, context, generator), context, generator)
        >>> policy.num_observations
        1
    """

    def __init__(
        self,
        data_kernel: Kernel,
        task_variances: Tensor,
        domain: Domain,
        rkhs_norm_bound: float,
        noise_std: float,
        eta: float = 0.1,
        delta: float = 0.1,
        name: str = "IT-KB",
    ) -> None:
        task_variances = check_task_variances(task_variances)
        self.name = name
        self.domain = domain
        self.rkhs_norm_bound = rkhs_norm_bound
        self.noise_std = noise_std
        self.delta = delta
        self.eta = eta
        self.num_tasks = task_variances.numel()
        self.model = empty_model(
            VectorValuedGP, domain, data_kernel, torch.diag(task_variances), 1.0 + eta
        )
        self.task_information_gain = torch.zeros(self.num_tasks, dtype=torch.float64)
        self.num_observations = 0
        self._width = self.width()

    def width(self) -> Tensor:
        """``sqrt(n) * max_i beta_i`` (IGP-UCB widths of the tasks)."""
        widths = igp_ucb_width(
            self.task_information_gain,
            self.num_observations,
            self.rkhs_norm_bound,
            self.noise_std,
            self.delta,
            self.eta,
        )
        return math.sqrt(self.num_tasks) * widths.amax()

    def _observe(self, X: Tensor, Y: Tensor, generator: torch.Generator) -> None:
        """Add ``1/2 log(1 + sigma_i^2(x_t) / (1 + eta))`` to each task's gain, then
        condition the posterior."""
        with torch.no_grad():
            _, covariance = self.model.point_moments(X.unsqueeze(0))  # 1 x n x n
            variance = covariance.diagonal(dim1=-2, dim2=-1).reshape(-1)
            # as the posterior's variance (GPyTorch's floor, min_variance)
            variance = variance.clamp_min(gpytorch.settings.min_variance.value(variance.dtype))
        self.task_information_gain += information_gain_increment(
            variance.to(torch.float64), 1.0 + self.eta
        )
        self.num_observations += 1
        self.model.append_observations(X, Y)

    def diagnostics(self) -> dict[str, float]:
        """The current width and largest per-task information gain."""
        return {
            "width": float(self._width),
            "information_gain": float(self.task_information_gain.max()),
        }
