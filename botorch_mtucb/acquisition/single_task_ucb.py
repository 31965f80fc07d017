r"""IGP-UCB and AY-GP-UCB as ready acquisitions on a fitted single-output BoTorch GP.

BoTorch's ``UpperConfidenceBound(model, beta)`` needs a ``beta`` and has no
theory-backed schedule for it. These acquisitions compute the width of a theorem from
the model itself (its kernel on its own transformed training data, its likelihood
noise) and return ``mu(x) + width * sigma(x)`` in the user's units:

* ``IGPUCB``: IGP-UCB (Chowdhury & Gopalan 2017, ICML, "On kernelized multi-armed
  bandits", Theorem 2), ``confidence.igp_ucb_width``;
* ``AYGPUCB``: AY-GP-UCB (Abbasi-Yadkori 2012, Theorem 3.11; the name of paper 002,
  Appendix C.2), ``confidence.ay_gp_ucb_width``.

``mu`` and ``sigma`` are the model's posterior (with its outcome transform undone:
``Standardize`` scales both by the same ``std``, so the bound maps back exactly); the
widths are per unit of standard deviation, the same in both spaces. Pending points and
``posterior_transform`` are those of ``TaskConditionedUCB`` (task 0): GP-BUCB
(Desautels et al. 2014) and a ``ScalarizedPosteriorTransform`` with one weight.
"""

from __future__ import annotations

from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedUCB
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound
from botorch_mtucb.confidence.single_task_widths import ay_gp_ucb_width, igp_ucb_width
from botorch_mtucb.models.single_output_data import single_output_data
from botorch_mtucb.utils.checks import check_X_pending


def data_rkhs_norm_bound(model: Model, noise_std: float | None, delta: float) -> float:
    r"""``B`` chosen from a single-output model's data (``norm_choice``): ``max(
    ||mu_t||_H, sigma / sqrt(max k(x_i, x_i)))`` in transformed units, with ``mu_t`` the
    posterior mean of the zero-mean GP on the centered transformed targets and
    ``sigma`` the likelihood's noise level unless given (for fixed per-point noise the
    largest, as ``MartingaleMixtureBound.from_model``). A practical choice without
    the theorems' guarantee (they need ``B`` fixed in advance).

    Raises:
        TypeError, ValueError: For a model that ``models.single_output_data`` refuses,
            or no training data.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition.single_task_ucb import data_rkhs_norm_bound
        >>> X = torch.rand(10, 2, dtype=torch.float64)
        >>> B = data_rkhs_norm_bound(SingleTaskGP(X, X.sum(-1, keepdim=True)), None, 0.01)
        >>> B > 0
        True
    """
    data = single_output_data(model)
    if noise_std is None:
        noise_std = float(data.noise_variance.max()) ** 0.5  # valid for every point
    gram = data.gram().double()
    return choose_rkhs_norm_bound(gram, data.centered_Y.double(), noise_std, delta)


class _SingleTaskWidthUCB(TaskConditionedUCB):
    """``mu(x) + width * sigma(x)`` of a single-output model, the width of a theorem."""

    def _init_width(
        self,
        model: Model,
        width_of: object,
        rkhs_norm_bound: float | None,
        delta: float,
        noise_std: float | None,
        posterior_transform: PosteriorTransform | None,
        X_pending: Tensor | None,
    ) -> None:
        self._input_dim = single_output_data(model).input_dim  # the model checks first
        from_data = rkhs_norm_bound is None
        if from_data:
            rkhs_norm_bound = data_rkhs_norm_bound(model, noise_std, delta)
        width = width_of(rkhs_norm_bound)
        super().__init__(model, 0, width, posterior_transform, X_pending)
        self.rkhs_norm_bound = float(rkhs_norm_bound)
        self.rkhs_norm_bound_from_data = from_data

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        """Set (or clear, with ``None``) the ``m x d`` pending points (GP-BUCB).

        Raises:
            TypeError, ValueError: For ``X_pending`` that is not ``None`` or an
                ``m x d`` floating tensor without NaN/inf (``d``: the model's inputs).
        """
        super().set_X_pending(check_X_pending(X_pending, self._input_dim))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(width={float(self.width):.6g}, B={self.rkhs_norm_bound:.6g})"


class IGPUCB(_SingleTaskWidthUCB):
    r"""IGP-UCB on a fitted single-output GP: ``mu(x) + beta_t sigma(x)``.

    ``beta_t = B + sigma sqrt((1 + eta) / lambda) sqrt(2 gamma_t + t eta + 2 ln(1/delta))``
    with ``gamma_t = 1/2 ln det(I + K_t / lambda)`` from the model's kernel on its
    transformed training data and ``lambda`` its noise variance (``igp_ucb_width`` with a
    model; Chowdhury & Gopalan 2017, Theorem 2, for the kernel ``(1 + eta) k / lambda``).
    ``B`` and ``sigma`` are in the transformed units (after ``Standardize``);
    ``rkhs_norm_bound=None`` chooses ``B`` from the data (``data_rkhs_norm_bound``, a
    practical choice without the theorem's guarantee). The width multiplies the
    standard deviation directly (not BoTorch's ``sqrt(beta)``).

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch.optim import optimize_acqf
        >>> from botorch_mtucb.acquisition import IGPUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(train_X, 5.0 * train_X.sum(-1, keepdim=True).sin())
        >>> acqf = IGPUCB(gp, rkhs_norm_bound=2.0, delta=0.01)
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> batch, _ = optimize_acqf(acqf, bounds, q=3, num_restarts=4, raw_samples=64,
        ...                          sequential=True)  # GP-BUCB
        >>> batch.shape
        torch.Size([3, 2])
    """

    def __init__(
        self,
        model: Model,
        *,
        rkhs_norm_bound: float | None = None,
        delta: float = 0.01,
        noise_std: float | None = None,
        eta: float | None = None,
        X_pending: Tensor | None = None,
        posterior_transform: PosteriorTransform | None = None,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model: A fitted single-output exact GP, learned or fixed (also
                per-point) noise (``models.single_output_data``).
            rkhs_norm_bound: ``B > 0`` (transformed units); ``None``: from the data.
            delta: Confidence level in ``(0, 1)``.
            noise_std: ``sigma`` (transformed units); ``None``: ``sqrt(lambda)``.
            eta: IGP-UCB's ``eta > 0``; ``None``: ``2 / t`` (``igp_ucb_width``).
            X_pending: ``m x d`` points chosen but not yet observed (GP-BUCB).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                one weight.

        Raises:
            TypeError, ValueError: For a model the route refuses, bad numbers or a
                bad ``X_pending``.
            UnsupportedError: For another ``posterior_transform``.
        """

        def width_of(norm: float) -> Tensor:
            return igp_ucb_width(
                model, rkhs_norm_bound=norm, noise_std=noise_std, delta=delta, eta=eta
            )

        self._init_width(
            model, width_of, rkhs_norm_bound, delta, noise_std, posterior_transform, X_pending
        )


class AYGPUCB(_SingleTaskWidthUCB):
    r"""AY-GP-UCB on a fitted single-output GP: ``mu(x) + beta_t sigma(x)``.

    ``beta_t = B + sigma / sqrt(lambda) sqrt(2 gamma_t + 2 ln(1/delta))`` with
    ``gamma_t = 1/2 ln det(I + K_t / lambda)`` from the model's kernel on its
    transformed training data and ``lambda`` its noise variance (``ay_gp_ucb_width``
    with a model; Abbasi-Yadkori 2012, Theorem 3.11, in the form of paper 002,
    Appendix C.2). Units and ``rkhs_norm_bound=None`` as in ``IGPUCB``.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import AYGPUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(train_X, train_X.sum(-1, keepdim=True).sin())
        >>> acqf = AYGPUCB(gp, rkhs_norm_bound=2.0, delta=0.01)
        >>> acqf(torch.rand(5, 1, 2, dtype=torch.float64)).shape
        torch.Size([5])
    """

    def __init__(
        self,
        model: Model,
        *,
        rkhs_norm_bound: float | None = None,
        delta: float = 0.01,
        noise_std: float | None = None,
        X_pending: Tensor | None = None,
        posterior_transform: PosteriorTransform | None = None,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model: A fitted single-output exact GP, learned or fixed (also
                per-point) noise.
            rkhs_norm_bound: ``B > 0`` (transformed units); ``None``: from the data.
            delta: Confidence level in ``(0, 1)``.
            noise_std: ``sigma`` (transformed units); ``None``: ``sqrt(lambda)``.
            X_pending: ``m x d`` points chosen but not yet observed (GP-BUCB).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                one weight.

        Raises:
            TypeError, ValueError: As ``IGPUCB``.
            UnsupportedError: For another ``posterior_transform``.
        """

        def width_of(norm: float) -> Tensor:
            return ay_gp_ucb_width(model, rkhs_norm_bound=norm, noise_std=noise_std, delta=delta)

        self._init_width(
            model, width_of, rkhs_norm_bound, delta, noise_std, posterior_transform, X_pending
        )
