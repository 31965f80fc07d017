"""Task-conditioned confidence bounds of paper 001: ucb_t(i, x) and lcb_t(i, x).

Source: paper 001 (Sessa et al. 2023), eq. (7):
ucb_t(i, x | b) = mu_t(i, x | b) + beta_t(b) * sigma_t(i, x | b), and Appendix B.4:
lcb_t(i, x) = mu_t(i, x) - beta_t * sigma_t(i, x). Pending points as in GP-BUCB
(Desautels et al. 2014, ``acquisition.pending``).
"""

from __future__ import annotations

from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.candidates import check_maximize, one_candidate_per_batch
from botorch_mtucb.acquisition.input_checks import check_width
from botorch_mtucb.acquisition.pending import PendingPointsMixin
from botorch_mtucb.acquisition.posterior_moments import (
    check_posterior_transform,
    task_mean_and_variance,
)
from botorch_mtucb.utils.checks import as_int


class TaskConditionedUCB(PendingPointsMixin, AnalyticAcquisitionFunction):
    r"""Upper confidence bound of one task of a multi-task model (paper 001, eq. 7).

    ``ucb(x) = mu(i, x) + width * sigma(i, x)`` for the fixed task ``i``. The ``width``
    multiplies the standard deviation directly (the paper's ``beta_t``), unlike
    BoTorch's ``UpperConfidenceBound(beta=...)`` which multiplies ``sqrt(beta)``.

    Works with any BoTorch model with ``n`` outputs (``VectorValuedGP`` with
    task-indexed data, ``SingleTaskGP`` with ``n`` outputs, ``MultiTaskGP``,
    ``KroneckerMultiTaskGP``, ``ModelListGP``): only output ``task`` (an index into the
    model's outputs) is read.

    - ``posterior_transform``: a ``ScalarizedPosteriorTransform`` with one weight
      ``w`` acts on the task's output, ``T(y) = w y + c``: ``ucb(x) = w mu(i, x) + c +
      width |w| sigma(i, x)``, the upper bound of ``T(f(i, x))`` (``weights=-1``, as Ax
      passes for a minimization, gives the optimistic bound of ``-f``).
    - ``X_pending`` (or ``set_X_pending``): GP-BUCB (Desautels et al. 2014): ``mu`` from
      ``model``, ``sigma`` from ``model`` conditioned on evaluations of task ``i`` at
      the pending points (of the full vector for models trained on full vectors).
      ``optimize_acqf(q=k, sequential=True)`` and ``optimize_acqf_discrete(q=k)`` use
      it; joint ``q > 1`` batches raise an ``UnsupportedError``.
    - ``maximize=False`` (BoTorch's ``UpperConfidenceBound`` switch): the upper bound of
      ``-f``, ``-(mu(i, x) - width * sigma(i, x))``, i.e. minus the lower bound; with a
      transform, of ``-T(f(i, x))``. Maximizing it minimizes ``f`` optimistically.

    An ``AnalyticAcquisitionFunction`` whose ``set_X_pending`` keeps GP-BUCB's pending
    points (BoTorch's base class refuses them).

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch.optim import optimize_acqf, optimize_acqf_discrete
        >>> from botorch_mtucb.acquisition import TaskConditionedUCB
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> task_data = [train_X.sum(-1, keepdim=True) * k for k in (1.0, 2.0, 3.0)]
        >>> model = ModelListGP(*[SingleTaskGP(train_X, y) for y in task_data])  # 3 tasks
        >>> acqf = TaskConditionedUCB(model, task=2, width=3.0)
        >>> arms_of_task_2 = torch.rand(10, 2, dtype=torch.float64)
        >>> x, value = optimize_acqf_discrete(acqf, q=1, choices=arms_of_task_2)
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> x, value = optimize_acqf(acqf, bounds, q=1, num_restarts=4, raw_samples=64)
        >>> x.shape
        torch.Size([1, 2])
    """

    _sign = 1.0

    def __init__(
        self,
        model: Model,
        task: int,
        width: float | Tensor,
        posterior_transform: PosteriorTransform | None = None,
        X_pending: Tensor | None = None,
        maximize: bool = True,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model: A BoTorch model whose posterior has ``n`` outputs (tasks).
            task: The task index ``i`` in ``[0, n - 1]``.
            width: The width ``beta_t >= 0`` (e.g. ``multitask_widths(...)["new"]``).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                one weight (on the task's output).
            X_pending: ``m x d`` points chosen for task ``i`` but not yet evaluated.
            maximize: ``False``: the bound of ``-f`` (class docstring).

        Raises:
            TypeError: If ``model`` is not a BoTorch ``Model``, ``task`` not an int,
                ``width`` not a real number (a string, ``None``, a bool, a complex
                number ...) or ``maximize`` not a bool.
            ValueError: If ``task`` is out of range, ``width`` is negative, not
                finite, or not a single number, the transform has another number of
                weights or NaN/inf weights or offset, or ``X_pending`` is not ``m x d``
                or holds NaN/inf.
            UnsupportedError: For another kind of ``posterior_transform``, or pending
                points on a model that cannot be conditioned.
        """
        if not isinstance(model, Model):
            raise TypeError(f"model must be a BoTorch Model, got {type(model).__name__}")
        AnalyticAcquisitionFunction.__init__(self, model=model, allow_multi_output=True)
        task = as_int(task, "task")
        if not 0 <= task < model.num_outputs:
            raise ValueError(f"task must lie in [0, {model.num_outputs - 1}], got {task}")
        self.task = task
        self.register_buffer("width", check_width(width))
        self.maximize = check_maximize(maximize)
        self.posterior_transform = check_posterior_transform(
            posterior_transform, 1, outputs="the task's one output"
        )
        self.set_X_pending(X_pending)

    def _mean_and_variance(self, model: Model, X: Tensor) -> tuple[Tensor, Tensor]:
        """The posterior mean and variance (each ``batch``) of the bounded output."""
        return task_mean_and_variance(model, X, self.task, self.posterior_transform)

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        """``X``: ``batch x 1 x d`` -> the ``batch`` bounds (``ValueError`` for another
        shape, naming it; ``UnsupportedError`` for ``q > 1``)."""
        mean, variance = self._mean_and_variance(self.model, X)  # batch
        if self.pending_model is not None:
            _, variance = self._mean_and_variance(self.pending_model, X)
        std = variance.clamp_min(0.0).sqrt()  # batch
        direction = 1.0 if self.maximize else -1.0  # maximize=False: the bound of -f
        return direction * mean + self._sign * self.width.to(mean) * std


class TaskConditionedLCB(TaskConditionedUCB):
    r"""Lower confidence bound of one task: ``lcb(x) = mu(i, x) - width * sigma(i, x)``.

    The matching lower bound of ``TaskConditionedUCB`` (paper 001, Appendix B.4, used
    by AdaMT-UCB's misspecification test and by AE-LSVI's task choice). Maximizing it
    gives ``max_x lcb_t(i, x)``. ``maximize=False`` gives the lower bound of ``-f``,
    ``-(mu(i, x) + width * sigma(i, x))``.

    Example:
        >>> import torch
        >>> from botorch.optim import optimize_acqf_discrete
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.acquisition import TaskConditionedLCB, TaskConditionedUCB
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> train_Y = torch.randn(8, 3, dtype=torch.float64)
        >>> task_covariance = 0.5 * torch.eye(3, dtype=torch.float64) + 0.5
        >>> model = VectorValuedGP(train_X, train_Y, RBFKernel(), task_covariance,
        ...                        regularization=0.1)
        >>> arms = torch.rand(10, 2, dtype=torch.float64)
        >>> lcb = TaskConditionedLCB(model, task=0, width=3.0)
        >>> _, best_lower_bound = optimize_acqf_discrete(lcb, q=1, choices=arms)
        >>> ucb = TaskConditionedUCB(model, task=0, width=3.0)
        >>> bool(best_lower_bound <= ucb(arms.unsqueeze(-2)).max())
        True
    """

    _sign = -1.0
