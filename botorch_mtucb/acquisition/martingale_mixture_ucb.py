"""The martingale-mixture upper confidence bound as a BoTorch acquisition function.

Source: paper 002, Algorithm 1 (KernelUCB) with the bounds of Sections 5.3-5.5:
exact (Kernel CMM-UCB, eq. (10) / (12)), grid (Kernel DMM-UCB) and analytic (Kernel
AMM-UCB, Cor. 4.6).
"""

from __future__ import annotations

from collections.abc import Sequence

from botorch.acquisition.acquisition import AcquisitionFunction
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.acquisition.candidates import one_candidate_per_batch
from botorch_mtucb.confidence.martingale_mixture import MartingaleMixtureBound
from botorch_mtucb.utils.checks import check_alphas


class MartingaleMixtureUCB(AcquisitionFunction):
    r"""``u_t(x)``: the martingale-mixture upper confidence bound of paper 002.

    ``u_t(x) = min_{alpha in A} mu_alpha(x) + R~_alpha / sqrt(alpha) rho_alpha(x)``, with
    ``A = (0, inf)`` (``alphas=None``: the exact bound of eq. (10), CMM-UCB), a grid
    (DMM-UCB) or one ``alpha`` (the analytic bound of Cor. 4.6, AMM-UCB). Gradients with
    respect to ``X`` flow through the bound at the minimizing ``alpha``, so
    ``optimize_acqf`` can maximize it over a box; ``optimize_acqf_discrete`` over a
    finite set. Values have the dtype of ``X`` (float32 or float64; internally float64).

    The acquisition has no BoTorch ``Model``: the bound (a ``MartingaleMixtureBound``,
    kept as ``self.bound``) is what it maximizes, so it has no ``model`` attribute (like
    BoTorch's ``FixedFeatureAcquisitionFunction``). ``.to(device)`` moves the bound.

    Example:
        >>> import torch
        >>> from botorch.optim import optimize_acqf
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.acquisition import MartingaleMixtureUCB
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> train_Y = train_X.sum(-1, keepdim=True).sin()
        >>> bound = MartingaleMixtureBound(train_X, train_Y, RBFKernel(), 10.0, 0.1, 0.01)
        >>> acqf = MartingaleMixtureUCB(bound)
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> candidate, value = optimize_acqf(acqf, bounds, q=1, num_restarts=4,
        ...                                  raw_samples=64)
        >>> candidate.shape
        torch.Size([1, 2])
    """

    def __init__(
        self,
        bound: MartingaleMixtureBound,
        alphas: float | Sequence[float] | Tensor | None = None,
    ) -> None:
        r"""Build the acquisition.

        Args:
            bound: A ``MartingaleMixtureBound`` on the data seen so far.
            alphas: ``None`` for the exact bound, a grid of ``alpha > 0`` (DMM-UCB) or
                a single ``alpha`` (AMM-UCB). Kept as a float64 CPU tensor (not a
                buffer, so that ``.to(dtype)`` cannot round it).

        Raises:
            TypeError: If ``bound`` is not a ``MartingaleMixtureBound``.
            ValueError: For non-positive or non-finite ``alphas``.
        """
        if not isinstance(bound, MartingaleMixtureBound):
            raise TypeError(f"bound must be a MartingaleMixtureBound, got {type(bound).__name__}")
        Module.__init__(self)  # AcquisitionFunction.__init__ would set self.model
        self.bound = bound
        self.alphas = None if alphas is None else check_alphas(alphas)

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate ``u_t`` at ``X``.

        Args:
            X: ``batch x 1 x d`` candidates (``ValueError`` for another shape, naming
                it: ``q = 1`` is required).

        Returns:
            A ``batch`` tensor of upper confidence bounds (units of ``f``).
        """
        return self.bound.upper(X.squeeze(-2), alphas=self.alphas)  # batch

    def __repr__(self) -> str:
        kind = "exact" if self.alphas is None else f"alphas={self.alphas.tolist()}"
        return f"{type(self).__name__}({kind}, t={self.bound.num_observations})"
