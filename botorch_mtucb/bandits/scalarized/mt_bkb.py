"""MT-BKB (Algorithm 2 of paper 000) and its independent-task baseline IT-BKB.

Both choose ``x_t = argmax_x s_{lambda_t}(mu~_{t-1}(x)) + L_lambda * width *
||Gamma~_{t-1}(x, x)||^{1/2}`` with a Nystrom-sketched posterior whose dictionary is
redrawn after every observation (``NystromVectorValuedGP``), and differ in the kernel,
the dictionary accuracy and the width:

* MT-BKB: the multi-task kernel, ``q`` and width ``beta~_t`` of Theorem 3;
* IT-BKB: independent tasks (``Gamma = k diag(B_11, ..., B_nn)``), each learned as in
  BKB (Calandriello et al. 2019: regularization ``lambda``, dictionary drawn with
  ``min(q_bar sigma~^2 / lambda, 1)``, width of their Theorem 1), the width scaled by
  ``sqrt(n)`` (paper 000, Section 5 and Appendix E).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.bandits.scalarized.policy import ScalarizedUCBPolicy, empty_model
from botorch_mtucb.confidence.scalarized_widths import mt_bkb_accuracy, mt_bkb_width
from botorch_mtucb.confidence.single_task_widths import bkb_width
from botorch_mtucb.kernels.separable_sum import TaskCovarianceLike
from botorch_mtucb.models.nystrom_vector_valued_gp import NystromVectorValuedGP
from botorch_mtucb.utils.checks import as_float, check_eps, check_task_variances
from botorch_mtucb.utils.domains import Domain, FiniteDomain


def _accuracy(accuracy: float | None, eps: float, delta: float, horizon: int | None) -> float:
    if accuracy is not None:
        return as_float(accuracy, "accuracy")
    if horizon is None:
        raise ValueError("give either accuracy (q >= 1) or the horizon T to compute it")
    return mt_bkb_accuracy(eps, delta, horizon)


class MultiTaskBudgetedKernelizedBandit(ScalarizedUCBPolicy):
    r"""MT-BKB, Algorithm 2 of paper 000.

    Each round: the acquisition ``ScalarizedMultiTaskUCB`` on the sketched posterior
    with width ``beta~_{t-1}`` of Theorem 3 (``mt_bkb_width``) and the round's
    scalarization (context key ``"_scalarization"``), maximized over the domain; then
    the observation is added and the dictionary redrawn with inclusion probabilities
    ``min(q ||Gamma~_{t-1}(x_i, x_i)||, 1)`` using the round's policy generator (so a
    resumed run draws the same dictionaries).

    Args:
        data_kernel, task_covariance: The multi-task kernel (as ``VectorValuedGP``).
        domain: A ``FiniteDomain`` or ``BoxDomain``.
        rkhs_norm_bound: ``b >= ||f||_Gamma``.
        noise_std: Sub-Gaussian noise level ``sigma``.
        regularization: The regularization ``eta > 0`` (paper 000: 0.1).
        delta: Confidence level in (0, 1) (paper 000: 0.1).
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
        >>> from botorch_mtucb.bandits import (
        ...     MultiTaskBudgetedKernelizedBandit, ScalarizedEnvironment, run_policy)
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = MultiTaskBudgetedKernelizedBandit(problem.make_data_kernel(),
        ...     problem.task_covariance, problem.domain, problem.rkhs_norm_bound,
        ...     problem.noise_std, horizon=50)
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> sorted(records[-1].diagnostics)
        ['dictionary_size', 'log_det_sum', 'width']
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
        eps: float = 0.5,
        accuracy: float | None = None,
        horizon: int | None = None,
        seed: int = 0,
        name: str = "MT-BKB",
    ) -> None:
        self.name = name
        self.domain = domain
        self.rkhs_norm_bound = rkhs_norm_bound
        self.noise_std = noise_std
        self.delta = delta
        self.eps = check_eps(eps)
        self.accuracy = _accuracy(accuracy, self.eps, delta, horizon)
        self.model = empty_model(
            NystromVectorValuedGP,
            domain,
            data_kernel,
            task_covariance,
            regularization,
            accuracy=self.accuracy,
            seed=seed,
        )
        self._width = self.width()

    def settings(self) -> dict[str, float]:
        """The dictionary accuracy ``q`` (it depends on the horizon): recorded with the
        runs so that a run made with another ``q`` is never resumed."""
        return {"accuracy": float(self.accuracy)}

    def width(self) -> Tensor:
        """``beta~_t`` of Theorem 3 for the data seen so far."""
        return mt_bkb_width(self.model, self.rkhs_norm_bound, self.noise_std, self.delta, self.eps)

    def _observe(self, X: Tensor, Y: Tensor, generator: torch.Generator) -> None:
        """Add ``(x_t, y_t)`` and redraw the dictionary with the round's generator."""
        self.model.append_observations(X, Y, generator=generator)

    def diagnostics(self) -> dict[str, float]:
        """Width, dictionary size ``m_t`` and the sum of sketched log-dets."""
        return {
            "width": float(self._width),
            "dictionary_size": float(self.model.dictionary_size),
            "log_det_sum": float(self.model.sketched_log_det_sum),
        }


class IndependentTaskBudgetedKernelizedBandit(ScalarizedUCBPolicy):
    r"""IT-BKB: independent tasks learned with BKB, width scaled by ``sqrt(n)``.

    The baseline of paper 000 (Section 5, Appendix E). Task ``i`` is a scalar GP with
    kernel ``task_variances[i] * k`` and regularization ``lambda``, sketched as in
    BKB (Calandriello et al. 2019): the dictionary is redrawn after every observation
    with probabilities ``min(q_bar sigma~^2(x_s) / lambda, 1)``, ``q_bar`` from BKB's
    Theorem 1 (``6 alpha log(4 T / delta) / eps^2``). The tasks share one dictionary
    drawn with the largest of their probabilities (so each task's row is drawn at least
    as often as in its own BKB run; the tasks see the same inputs). Each task's
    width ``w_i`` is ``bkb_width`` with ``sum_s Gamma~_t(x_s, x_s)_ii / lambda`` and
    ``kappa_i^2 = task_variances[i] * max_x k(x, x)``; as for IT-KB, the acquisition is
    eq. (2) with the (diagonal) sketched posterior and ``width = sqrt(n) max_i w_i``.

    Args:
        data_kernel: The scalar kernel ``k``.
        task_variances: ``n`` prior variances (the diagonal of ``B``).
        domain, rkhs_norm_bound, noise_std, delta, eps: As for MT-BKB.
        regularization: BKB's regularization ``lambda > 0`` (paper 000 uses 0.1 for every method).
        accuracy: BKB's ``q_bar >= 1`` (default from ``eps``, ``delta`` and
            ``horizon``); the sketch uses ``q = max(q_bar / lambda, 1)`` on
            unnormalized variances.
        horizon, seed, name: As for MT-BKB.

    Raises:
        TypeError: If ``accuracy`` is not a real number (a bool, a string ...).
        ValueError: For non-positive task variances, ``eps`` outside (0, 1),
            ``accuracy < 1`` (or not finite) or neither ``accuracy`` nor ``horizon``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import (
        ...     IndependentTaskBudgetedKernelizedBandit, ScalarizedEnvironment, run_policy)
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> policy = IndependentTaskBudgetedKernelizedBandit(problem.make_data_kernel(),
        ...     torch.diagonal(problem.task_covariance), problem.domain,
        ...     problem.rkhs_norm_bound, problem.noise_std, horizon=50)
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> policy.task_widths().shape
        torch.Size([2])
    """

    def __init__(
        self,
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
    ) -> None:
        task_variances = check_task_variances(task_variances)
        self.name = name
        self.domain = domain
        self.rkhs_norm_bound = rkhs_norm_bound
        self.noise_std = noise_std
        self.delta = delta
        self.eps = check_eps(eps)
        self.regularization = regularization
        self.accuracy = _accuracy(accuracy, self.eps, delta, horizon)
        if self.accuracy < 1:
            raise ValueError(f"accuracy (q_bar) must be >= 1, got {self.accuracy}")
        self.num_tasks = task_variances.numel()
        reference = domain.points if isinstance(domain, FiniteDomain) else domain.bounds
        with torch.no_grad():
            prior = data_kernel(reference, reference, diag=True).to_dense()
        self.kernel_bounds = task_variances * float(prior.amax())  # kappa_i^2
        self.model = empty_model(
            NystromVectorValuedGP,
            domain,
            data_kernel,
            torch.diag(task_variances).to(reference),
            regularization,
            accuracy=max(self.accuracy / regularization, 1.0),
            seed=seed,
        )
        self._width = self.width()

    def settings(self) -> dict[str, float]:
        """BKB's ``q_bar`` (it depends on the horizon), recorded with the runs."""
        return {"accuracy": float(self.accuracy)}

    def task_widths(self) -> Tensor:
        """BKB's width of each task (per unit of its posterior std), ``n``."""
        variance_sum = self.model.train_variances.sum(0).to(torch.float64) / self.regularization
        t = self.model.train_X.shape[0]
        widths = [
            bkb_width(
                variance_sum[i],
                t,
                self.rkhs_norm_bound,
                self.noise_std,
                self.delta,
                self.eps,
                self.regularization,
                float(self.kernel_bounds[i]),
            )
            for i in range(self.num_tasks)
        ]
        return torch.stack(widths)

    def width(self) -> Tensor:
        """``sqrt(n) * max_i w_i`` (BKB widths of the tasks)."""
        return math.sqrt(self.num_tasks) * self.task_widths().amax()

    def _observe(self, X: Tensor, Y: Tensor, generator: torch.Generator) -> None:
        """Add ``(x_t, y_t)`` and redraw the dictionary with the round's generator."""
        self.model.append_observations(X, Y, generator=generator)

    def diagnostics(self) -> dict[str, float]:
        """Width and dictionary size ``m_t``."""
        return {
            "width": float(self._width),
            "dictionary_size": float(self.model.dictionary_size),
        }
