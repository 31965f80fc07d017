"""Scalarized multi-task UCB: the acquisition function of MT-KB and MT-BKB.

Source: paper 000, Section 3.1, eq. (2):
u_{t+1}(x) = s_lambda(mu_t(x)) + L_lambda * beta_t * ||Gamma_t(x, x)||^{1/2}.
"""

from __future__ import annotations

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.candidates import one_candidate_per_batch
from botorch_mtucb.scalarization import Scalarization
from botorch_mtucb.utils.checks import check_width, check_working_precision


def posterior_mean_and_covariance(model: Model, X: Tensor) -> tuple[Tensor, Tensor]:
    """Posterior mean ``b x n`` and task covariance ``b x n x n`` at ``X`` (``b x 1 x d``).

    Works for any BoTorch model whose posterior has ``n`` outputs: our models,
    ``MultiTaskGP`` and ``ModelListGP`` (then the covariance is diagonal). A posterior
    without a ``distribution`` falls back to its diagonal ``variance``.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.acquisition.scalarized_ucb import posterior_mean_and_covariance
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> gps = [SingleTaskGP(train_X, train_X[:, i : i + 1].sin()) for i in range(2)]
        >>> mean, covariance = posterior_mean_and_covariance(
        ...     ModelListGP(*gps), torch.rand(4, 1, 2, dtype=torch.float64))
        >>> mean.shape, covariance.shape  # independent outputs: diagonal covariances
        (torch.Size([4, 2]), torch.Size([4, 2, 2]))
    """
    posterior = model.posterior(X)
    mean = posterior.mean.squeeze(-2)  # b x n
    distribution = getattr(posterior, "distribution", None)
    if distribution is not None and hasattr(distribution, "covariance_matrix"):
        covariance = distribution.covariance_matrix  # b x n x n since q = 1
        if covariance.shape[-1] != mean.shape[-1]:
            covariance = torch.diag_embed(posterior.variance.squeeze(-2))
    else:
        covariance = torch.diag_embed(posterior.variance.squeeze(-2))
    return mean, covariance


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


class ScalarizedMultiTaskUCB(AcquisitionFunction):
    r"""Scalarized multi-task UCB (paper 000, eq. (2)).

    ``u(x) = s_lambda(mu(x)) + L_lambda * width * sqrt(lambda_max(Gamma_t(x, x)))``

    where ``L_lambda`` is the scalarization's ``lipschitz_constant`` and
    ``Gamma_t(x, x)`` the ``n x n`` posterior covariance of all tasks at ``x``. The
    ``width`` multiplies the standard deviation directly (the paper's ``beta_t``), unlike
    BoTorch's ``UpperConfidenceBound(beta=...)`` which multiplies ``sqrt(beta)``.

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
    """

    def __init__(self, model: Model, scalarization: Scalarization, width: float | Tensor) -> None:
        r"""Build the acquisition.

        Args:
            model: Any BoTorch model whose posterior has ``n`` outputs.
            scalarization: A ``LinearScalarization`` / ``ChebyshevScalarization`` (or
                any ``Scalarization``) on ``n`` outputs, with one weight vector.
            width: The width ``beta_t >= 0`` (e.g. ``mt_kb_width(...)``).

        Raises:
            TypeError: If ``model`` is not a BoTorch ``Model``, ``scalarization`` not
                a ``Scalarization``, or ``width`` not a real number (a string,
                ``None``, a bool, a complex number ...).
            ValueError: If its size differs from the model's number of outputs, or
                ``width`` is negative, not finite or not a single number.
        """
        if not isinstance(model, Model):
            raise TypeError(f"model must be a BoTorch Model, got {type(model).__name__}")
        super().__init__(model=model)
        if not isinstance(scalarization, Scalarization):
            raise TypeError(
                "scalarization must be a botorch_mtucb Scalarization "
                f"(LinearScalarization, ChebyshevScalarization), got {type(scalarization).__name__}"
            )
        if scalarization.num_tasks != model.num_outputs:
            raise ValueError(
                f"the scalarization has {scalarization.num_tasks} weights but the model has "
                f"{model.num_outputs} outputs"
            )
        if scalarization.weights.dim() != 1:
            raise ValueError(
                "scalarization must hold one weight vector (shape n), got weights of shape "
                f"{tuple(scalarization.weights.shape)}"
            )
        self.scalarization = scalarization
        self.register_buffer("width", check_width(width))

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate the UCB at ``X``.

        Args:
            X: ``batch x 1 x d`` candidates (``ValueError`` for another shape, naming
                it: ``q = 1`` is required).

        Returns:
            A ``batch`` tensor of UCB values.
        """
        mean, covariance = posterior_mean_and_covariance(self.model, X)  # b x n, b x n x n
        scale = self.scalarization.lipschitz_constant.to(mean) * self.width.to(mean)
        return self.scalarization(mean) + scale * largest_eigenvalue_sqrt(covariance)  # b
