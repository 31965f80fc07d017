"""Scalarized multi-task UCB: the acquisition function of MT-KB and MT-BKB.

Source: paper 000, Section 3.1, eq. (2):
u_{t+1}(x) = s_lambda(mu_t(x)) + L_lambda * beta_t * ||Gamma_t(x, x)||^{1/2};
pending points as in GP-BUCB (Desautels et al. 2014, ``acquisition.pending``).
"""

from __future__ import annotations

import torch
from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.candidates import check_maximize, one_candidate_per_batch
from botorch_mtucb.acquisition.input_checks import check_width
from botorch_mtucb.acquisition.pending import PendingPointsMixin
from botorch_mtucb.acquisition.posterior_moments import (
    check_posterior_transform,
    posterior_mean_and_covariance,
)
from botorch_mtucb.confidence import mt_kb_width
from botorch_mtucb.scalarization import LinearScalarization, Scalarization, as_scalarization
from botorch_mtucb.utils.checks import check_working_precision

__all__ = [
    "ScalarizedAcquisition",
    "ScalarizedMultiTaskUCB",
    "check_scalarized_arguments",
    "largest_eigenvalue_sqrt",
    "posterior_mean_and_covariance",
    "scalarized_ucb_values",
]


def largest_eigenvalue_sqrt(covariance: Tensor) -> Tensor:
    r"""``||Gamma||^{1/2}``: square root of the largest eigenvalue of ``... x n x n``.

    Negative round-off is clipped; the gradient is finite (zero where clipped). A
    half-precision ``covariance`` raises a ``TypeError`` (no half-precision ``eigvalsh``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.acquisition.scalarized_ucb import largest_eigenvalue_sqrt
        >>> largest_eigenvalue_sqrt(torch.tensor([[4.0, 0.0], [0.0, 1.0]]))
        tensor(2.)
    """
    check_working_precision(covariance, "covariance")
    if covariance.shape[-1] == 1:
        largest = covariance[..., 0, 0]
    else:
        largest = torch.linalg.eigvalsh(covariance)[..., -1]
    tiny = torch.finfo(covariance.dtype).tiny
    return largest.clamp_min(tiny).sqrt()


def scalarized_ucb_values(
    mean: Tensor,
    covariance: Tensor,
    scalarization: Scalarization,
    width: Tensor,
    maximize: bool = True,
) -> Tensor:
    r"""Paper 000's eq. (2) from the posterior moments: ``s(mu) + L width
    ||Gamma||^{1/2}`` (``-s(mu) + ...`` with ``maximize=False``), ``ScalarizedMultiTaskUCB``'s
    value without its checks (the moments of checked candidates, the width a 0-d tensor).

    Args:
        mean: ``b x n`` posterior means.
        covariance: ``b x n x n`` task covariances.
        scalarization: ``s`` with one weight vector of ``n``.
        width: ``beta_t`` (a 0-d tensor).
        maximize: As ``ScalarizedMultiTaskUCB``.

    Returns:
        ``b`` values.

    Example:
        >>> import torch
        >>> from botorch_mtucb.acquisition.scalarized_ucb import scalarized_ucb_values
        >>> from botorch_mtucb.scalarization import LinearScalarization
        >>> s = LinearScalarization(torch.tensor([0.6, 0.8]))
        >>> scalarized_ucb_values(torch.ones(1, 2), 4.0 * torch.eye(2).unsqueeze(0), s,
        ...                       torch.tensor(0.5))  # 1.4 + 1.0 * 0.5 * 2
        tensor([2.4000])
    """
    scale = scalarization.lipschitz_constant.to(mean) * width.to(mean)
    scalarized = scalarization(mean) if maximize else -scalarization(mean)
    return scalarized + scale * largest_eigenvalue_sqrt(covariance)  # b


def check_scalarized_arguments(
    model: object,
    scalarization: Scalarization | Tensor | None,
    posterior_transform: object,
) -> tuple[Scalarization, PosteriorTransform | None]:
    """The checked ``(scalarization, posterior_transform)`` of a scalarized UCB.

    Without a ``posterior_transform``, the scalarization acts on the ``n`` outputs of
    ``model``. With a ``ScalarizedPosteriorTransform`` (``n`` weights: one output
    ``w^T f + offset``) it acts on that one output, and ``scalarization=None`` means
    the identity ``LinearScalarization(torch.ones(1))``.

    Raises:
        TypeError: If ``model`` is not a BoTorch ``Model`` or ``scalarization`` neither
            a ``Scalarization`` nor a weight tensor (nor ``None`` with a transform).
        ValueError: If its size differs from the number of outputs it acts on, or it
            holds more than one weight vector.
        UnsupportedError: For a ``posterior_transform`` that is not a
            ``ScalarizedPosteriorTransform``.

    Example:
        >>> import torch
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition.scalarized_ucb import check_scalarized_arguments
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(train_X, torch.cat([train_X.sin(), train_X.cos()], -1))
        >>> minimize_sum = ScalarizedPosteriorTransform(-torch.ones(4, dtype=torch.float64))
        >>> scalarization, _ = check_scalarized_arguments(model, None, minimize_sum)
        >>> scalarization.weights
        tensor([1.], dtype=torch.float64)
    """
    if not isinstance(model, Model):
        raise TypeError(f"model must be a BoTorch Model, got {type(model).__name__}")
    posterior_transform = check_posterior_transform(posterior_transform, model.num_outputs)
    if posterior_transform is None:
        num_outputs, outputs = model.num_outputs, "the model has"
    else:
        num_outputs, outputs = 1, "the posterior_transform gives"
        if scalarization is None:
            scalarization = LinearScalarization(posterior_transform.weights.new_ones(1))
    scalarization = as_scalarization(scalarization)
    if scalarization.num_tasks != num_outputs:
        raise ValueError(
            f"the scalarization has {scalarization.num_tasks} weights but {outputs} "
            f"{num_outputs} outputs"
            + ("" if posterior_transform is None else " (it scalarizes w^T f + offset)")
        )
    if scalarization.weights.dim() != 1:
        raise ValueError(
            "scalarization must hold one weight vector (shape n), got weights of shape "
            f"{tuple(scalarization.weights.shape)}"
        )
    return scalarization, posterior_transform


class ScalarizedAcquisition(PendingPointsMixin, AnalyticAcquisitionFunction):
    r"""What the scalarized UCBs share: a model with ``n`` outputs, a scalarization, a
    width, ``posterior_transform``, ``X_pending`` (GP-BUCB) and ``maximize``, all checked.

    An ``AnalyticAcquisitionFunction`` whose ``set_X_pending`` keeps GP-BUCB's pending
    points (BoTorch's base class refuses them).

    Subclasses (``ScalarizedMultiTaskUCB``, ``ScalarizedObjectiveUCB``) implement
    ``forward``.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import ScalarizedObjectiveUCB
        >>> from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedAcquisition
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(train_X, torch.cat([train_X.sin(), train_X.cos()], -1))
        >>> acqf = ScalarizedObjectiveUCB(model, torch.ones(4, dtype=torch.float64), 1.0)
        >>> isinstance(acqf, ScalarizedAcquisition), acqf.X_pending, float(acqf.width)
        (True, None, 1.0)
    """

    def __init__(
        self,
        model: Model,
        scalarization: Scalarization | Tensor | None,
        width: float | Tensor,
        posterior_transform: PosteriorTransform | None = None,
        X_pending: Tensor | None = None,
        maximize: bool = True,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model: Any BoTorch model whose posterior has ``n`` outputs (the package's
                models, ``SingleTaskGP``, ``MultiTaskGP``, ``KroneckerMultiTaskGP``,
                ``ModelListGP``).
            scalarization: A ``LinearScalarization`` / ``ChebyshevScalarization`` (or
                any ``Scalarization``) on ``n`` outputs with one weight vector, or its
                ``n`` linear weights as a tensor; ``None`` only with a
                ``posterior_transform``.
            width: The width ``beta_t >= 0`` (e.g. ``mt_kb_width(...)``).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                ``n`` weights.
            X_pending: ``m x d`` points chosen but not yet evaluated (GP-BUCB).
            maximize: ``False``: the upper bound of ``-s(f)`` (BoTorch's minimization
                switch; see the subclass).

        Raises:
            TypeError: If ``model`` is not a BoTorch ``Model``, ``scalarization`` not
                a ``Scalarization`` or weight tensor, ``width`` not a real number (a
                string, ``None``, a bool, a complex number ...) or ``maximize`` not a
                bool.
            ValueError: If the scalarization's size differs from the number of outputs
                it acts on, ``width`` is negative, not finite or not a single number,
                the transform's weights or offset are not finite, or ``X_pending`` is
                not ``m x d`` or holds NaN/inf.
            UnsupportedError: For another kind of ``posterior_transform``, or pending
                points on a model that cannot be conditioned.
        """
        scalarization, posterior_transform = check_scalarized_arguments(
            model, scalarization, posterior_transform
        )
        AnalyticAcquisitionFunction.__init__(self, model=model, allow_multi_output=True)
        self.scalarization = scalarization
        self.posterior_transform = posterior_transform
        self.register_buffer("width", check_width(width))
        self.maximize = check_maximize(maximize)
        self.set_X_pending(X_pending)


class ScalarizedMultiTaskUCB(ScalarizedAcquisition):
    r"""Scalarized multi-task UCB (paper 000, eq. (2)).

    ``u(x) = s_lambda(mu(x)) + L_lambda * width * sqrt(lambda_max(Gamma_t(x, x)))``

    where ``L_lambda`` is the scalarization's ``lipschitz_constant`` and
    ``Gamma_t(x, x)`` the ``n x n`` posterior covariance of all tasks at ``x``. The
    ``width`` multiplies the standard deviation directly (the paper's ``beta_t``), unlike
    BoTorch's ``UpperConfidenceBound(beta=...)`` which multiplies ``sqrt(beta)``.

    - ``posterior_transform``: a ``ScalarizedPosteriorTransform`` ``T(y) = w^T y + c``
      (e.g. Ax's ``weights=-1`` for a minimization) is applied first:
      ``u(x) = s(T(mu(x))) + L_lambda * width * sqrt(w^T Gamma_t(x, x) w)``, still an
      upper bound of ``s(T(f(x)))`` on the confidence set (an affine map sends the
      ellipsoid ``||Gamma^{-1/2}(f - mu)|| <= width`` to one of radius
      ``width * sqrt(w^T Gamma w)``). The scalarization then has one weight
      (``None``: the identity).
    - ``X_pending`` (or ``set_X_pending``): GP-BUCB (Desautels et al. 2014): the mean
      from ``model``, ``Gamma_t`` from ``model`` conditioned on the pending points at
      their mean (``condition_on_pending``). ``optimize_acqf(q=k, sequential=True)``
      and ``optimize_acqf_discrete(q=k)`` use it; joint ``q > 1`` batches raise an
      ``UnsupportedError``.
    - ``maximize=False`` (BoTorch's minimization switch): ``-s(mu(x)) + L_lambda * width *
      ||Gamma_t(x, x)||^{1/2}``, minus the matching lower bound of ``s(f(x))``. On the
      confidence ellipsoid ``s(f) >= s(mu) - L_lambda ||f - mu|| >= s(mu) - L_lambda *
      width * ||Gamma_t||^{1/2}`` (``s`` is ``L_lambda``-Lipschitz), so it is an upper
      bound of ``-s(f(x))`` wherever the ``maximize=True`` value bounds ``s(f(x))``;
      maximizing it looks for the minimizer of ``s(f)``.
    - Maximization over a box: ``optimize_acqf`` starts L-BFGS-B from raw samples drawn
      at random (Boltzmann weights), which can miss the best basin of a min-over-tasks
      (Chebyshev) bound; ``botorch_mtucb.utils.maximize_acquisition(acqf,
      BoxDomain(bounds))`` also starts it from the best raw samples and never returns
      less than the best raw sample it evaluated.

    Example:
        >>> import torch
        >>> from botorch.optim import optimize_acqf
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.scalarization import ChebyshevScalarization
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> train_Y = torch.randn(8, 2, dtype=torch.float64)
        >>> task_covariance = 0.5 * torch.eye(2, dtype=torch.float64) + 0.5
        >>> model = VectorValuedGP(train_X, train_Y, RBFKernel(), task_covariance,
        ...                        regularization=0.1)
        >>> weights = torch.tensor([0.3, 0.7], dtype=torch.float64)
        >>> reference_point = torch.tensor([-3.0, -3.0], dtype=torch.float64)
        >>> acqf = ScalarizedMultiTaskUCB(
        ...     model, ChebyshevScalarization(weights, reference_point), width=2.0)
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> candidate, value = optimize_acqf(acqf, bounds, q=1, num_restarts=4,
        ...                                  raw_samples=64)
        >>> candidate.shape
        torch.Size([1, 2])
        >>> batch, _ = optimize_acqf(acqf, bounds, q=3, num_restarts=4, raw_samples=64,
        ...                          sequential=True)  # GP-BUCB
        >>> batch.shape
        torch.Size([3, 2])
    """

    @classmethod
    def from_model(
        cls,
        model: Model,
        scalarization: Scalarization | Tensor | None,
        rkhs_norm_bound: float,
        delta: float,
        noise_std: float | None = None,
        **kwargs,
    ) -> ScalarizedMultiTaskUCB:
        r"""The acquisition with MT-KB's width of Theorem 2 of paper 000 for ``model``.

        ``width = mt_kb_width(model, rkhs_norm_bound=..., noise_std=..., delta=...)``:
        ``b + sigma / sqrt(eta) * sqrt(2 log(1/delta) + log det(I + G_t / eta))``
        from the model's kernel, noise ``eta`` and training data.

        Args:
            model: A model ``mt_kb_width`` accepts (``VectorValuedGP``, and the BoTorch
                models it reads: see ``botorch_mtucb.confidence.mt_kb_width``).
            scalarization: As in the constructor.
            rkhs_norm_bound: ``b >= ||f||_Gamma``.
            delta: Confidence level in ``(0, 1)``.
            noise_std: Sub-Gaussian noise level ``sigma``; ``None``: the model's noise
                (where ``mt_kb_width`` reads it from the model).
            **kwargs: ``posterior_transform``, ``X_pending``, ``maximize`` (as in the
                constructor).

        Raises:
            TypeError, ValueError: As ``mt_kb_width`` and the constructor.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
            >>> from botorch_mtucb.confidence import mt_kb_width
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> train_X = torch.rand(8, 2, dtype=torch.float64)
            >>> model = VectorValuedGP(train_X, torch.randn(8, 2, dtype=torch.float64),
            ...                        RBFKernel(), torch.eye(2, dtype=torch.float64), 0.1)
            >>> weights = torch.tensor([0.5, 0.5], dtype=torch.float64)
            >>> acqf = ScalarizedMultiTaskUCB.from_model(
            ...     model, weights, rkhs_norm_bound=1.0, delta=0.05, noise_std=0.1)
            >>> bool(acqf.width == mt_kb_width(model, 1.0, 0.1, 0.05))
            True
        """
        width = mt_kb_width(
            model, rkhs_norm_bound=rkhs_norm_bound, noise_std=noise_std, delta=delta
        )
        return cls(model, scalarization, width, **kwargs)

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate the UCB at ``X``.

        Args:
            X: ``batch x 1 x d`` candidates (``ValueError`` for another shape, naming
                it; ``UnsupportedError`` for ``q > 1``).

        Returns:
            A ``batch`` tensor of UCB values.
        """
        mean, covariance = posterior_mean_and_covariance(
            self.model, X, self.posterior_transform
        )  # b x n, b x n x n
        if self.pending_model is not None:
            _, covariance = posterior_mean_and_covariance(
                self.pending_model, X, self.posterior_transform
            )
        return scalarized_ucb_values(
            mean, covariance, self.scalarization, self.width, self.maximize
        )
