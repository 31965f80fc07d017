"""The scalarized vector of per-objective upper confidence bounds (MOBO's acquisition).

Source: B. Paria, K. Kandasamy, B. Poczos, "A flexible framework for multi-objective
Bayesian optimization using random scalarizations", UAI 2019, Algorithm 1 (UCB variant);
paper 000, Appendix E, uses it as a baseline.
"""

from __future__ import annotations

from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.candidates import one_candidate_per_batch
from botorch_mtucb.scalarization import Scalarization
from botorch_mtucb.utils.checks import check_width


class ScalarizedObjectiveUCB(AcquisitionFunction):
    r"""``s_lambda(mu(x) + width * sigma(x))``: the scalarization of per-objective UCBs.

    ``sigma(x)`` is the vector of marginal posterior standard deviations (cross-task
    covariances are ignored, as for independent GPs). The ``width`` multiplies the
    standard deviation directly (unlike BoTorch's ``UpperConfidenceBound(beta=...)``).

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.acquisition import ScalarizedObjectiveUCB
        >>> from botorch_mtucb.scalarization import LinearScalarization
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = ModelListGP(*[SingleTaskGP(train_X, train_X[:, i : i + 1]) for i in (0, 1)])
        >>> weights = torch.tensor([0.3, 0.7], dtype=torch.float64)
        >>> acqf = ScalarizedObjectiveUCB(model, LinearScalarization(weights), width=2.0)
        >>> acqf(torch.rand(5, 1, 2, dtype=torch.float64)).shape  # batch x 1 x d -> batch
        torch.Size([5])
    """

    def __init__(self, model: Model, scalarization: Scalarization, width: float) -> None:
        """Args:
            model: A BoTorch model with ``n`` outputs.
            scalarization: A ``Scalarization`` on ``n`` outputs with one weight vector.
            width: ``w_t >= 0``.

        Raises:
            TypeError: If ``scalarization`` is not a ``Scalarization`` or ``width``
                not a real number (a bool, a string ...).
            ValueError: For a size mismatch or a negative / non-finite width.
        """
        super().__init__(model=model)
        if not isinstance(scalarization, Scalarization):
            raise TypeError(
                f"scalarization must be a Scalarization, got {type(scalarization).__name__}"
            )
        if scalarization.num_tasks != model.num_outputs:
            raise ValueError(
                f"the scalarization has {scalarization.num_tasks} weights but the model has "
                f"{model.num_outputs} outputs"
            )
        self.scalarization = scalarization
        self.register_buffer("width", check_width(width))

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        """``X``: ``batch x 1 x d`` -> ``batch`` UCB values (``ValueError`` for another
        shape: ``q = 1`` is required)."""
        posterior = self.model.posterior(X)
        mean = posterior.mean.squeeze(-2)  # b x n
        std = posterior.variance.squeeze(-2).clamp_min(0.0).sqrt()  # b x n
        return self.scalarization(mean + self.width.to(mean) * std)  # b
