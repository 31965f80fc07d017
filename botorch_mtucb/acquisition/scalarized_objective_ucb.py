"""The scalarized vector of per-objective upper confidence bounds (MOBO's acquisition).

Source: B. Paria, K. Kandasamy, B. Poczos, "A flexible framework for multi-objective
Bayesian optimization using random scalarizations", UAI 2019, Algorithm 1 (UCB variant);
paper 000, Appendix E, uses it as a baseline. Pending points as in GP-BUCB (Desautels
et al. 2014, ``acquisition.pending``).
"""

from __future__ import annotations

from torch import Tensor

from botorch_mtucb.acquisition.candidates import one_candidate_per_batch
from botorch_mtucb.acquisition.posterior_moments import model_posterior
from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedAcquisition


class ScalarizedObjectiveUCB(ScalarizedAcquisition):
    r"""``s_lambda(mu(x) + width * sigma(x))``: the scalarization of per-objective UCBs.

    ``sigma(x)`` is the vector of marginal posterior standard deviations (cross-task
    covariances are ignored, as for independent GPs). The ``width`` multiplies the
    standard deviation directly (unlike BoTorch's ``UpperConfidenceBound(beta=...)``).
    A ``ScalarizedPosteriorTransform`` ``T`` is applied to the posterior first (the
    scalarization then has one weight, ``None``: the identity); ``X_pending`` takes
    ``sigma`` from the model conditioned on the pending points (GP-BUCB), as
    ``ScalarizedMultiTaskUCB`` does. The constructor's arguments and errors are those of
    ``ScalarizedAcquisition`` (``model``, ``scalarization`` or weights, ``width``,
    ``posterior_transform``, ``X_pending``, ``maximize``).

    ``maximize=False`` (BoTorch's minimization switch): ``-s_lambda(mu(x) - width *
    sigma(x))``, minus the scalarization of the per-objective lower bounds. For a
    scalarization that is non-decreasing in each objective (non-negative weights, linear or
    Chebyshev), it bounds ``-s_lambda(f(x))`` from above whenever every ``f_i(x)`` lies in
    ``[mu_i - width sigma_i, mu_i + width sigma_i]`` (as the ``maximize=True`` value bounds
    ``s_lambda(f(x))``). For a Chebyshev scalarization over a box, see
    ``ScalarizedMultiTaskUCB`` on ``maximize_acquisition``.

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

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        """``X``: ``batch x 1 x d`` -> ``batch`` UCB values (``ValueError`` for another
        shape, ``UnsupportedError`` for ``q > 1``)."""
        posterior = model_posterior(self.model, X, self.posterior_transform)
        mean = posterior.mean.squeeze(-2)  # b x n
        if self.pending_model is not None:
            posterior = model_posterior(self.pending_model, X, self.posterior_transform)
        std = posterior.variance.squeeze(-2).clamp_min(0.0).sqrt()  # b x n
        if not self.maximize:  # the upper bound of -s(f) from the lower bounds of f
            return -self.scalarization(mean - self.width.to(mean) * std)  # b
        return self.scalarization(mean + self.width.to(mean) * std)  # b
