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
widths are per unit of standard deviation, the same in both spaces. Pending points,
``posterior_transform`` and ``maximize`` are those of ``TaskConditionedUCB`` (task 0):
GP-BUCB (Desautels et al. 2014), a ``ScalarizedPosteriorTransform`` with one weight, and
``maximize=False`` for ``-(mu - width * sigma)``, the upper bound of ``-f``.

**One output of a multi-output wrapper**: ``mu`` and ``sigma`` stay BoTorch's posterior
(with the transform), and the width is the theorem's for the scalar GP whose functional
that output is (``models.botorch_readers.wrapped_outputs``). The self-normalized bounds of both theorems
hold for every linear functional ``L`` of the RKHS function at once, ``|L(f) - L(mu_t)|
<= width * sigma_t(L)``, with ``sigma_t(L)`` the posterior standard deviation of ``L``:

* a ``ModelListGP`` of one single-output model: that model;
* ``MultiTaskGP(..., output_tasks=[i])``: the scalar GP on ``X x [n]`` with the model's
  product kernel and all tasks' observations (``L``: evaluation at ``(x, i)``); ``B``
  bounds the RKHS norm of ``(x, a) -> f~_a(x) - c_a`` (transformed outcome minus the
  task's fitted constant mean);
* a multi-output ``SingleTaskGP`` with a ``ScalarizedPosteriorTransform(w, offset)`` of
  one weight per output: the scalar GP on ``X x [n]`` with the block-diagonal kernel
  ``k((x, a), (x', b)) = 1[a = b] k_a(x, x')`` and all outputs' observations (``L =
  sum_i w_i s_i`` evaluations at ``(x, i)``: BoTorch's posterior of ``w^T f``); ``B``
  bounds ``(sum_i ||f~_i - c_i||_{k_i}^2)^{1/2}`` (transformed units; it also bounds the
  scalarized GP's norm that ``MartingaleMixtureUCB`` uses).

The per-observation noise variances ``Sigma`` (per task or per output) enter through the
whitened form of the widths (``confidence.single_task_widths``): ``gamma_t = 1/2 log
det(I + Sigma^{-1/2} K_t Sigma^{-1/2})`` over all ``t`` scalar observations and the noise
level ``noise_std / sqrt(min Sigma)`` (``1``: the likelihood's noise, for
``noise_std=None``).
"""

from __future__ import annotations

import math

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.candidates import model_input_dim
from botorch_mtucb.acquisition.posterior_moments import (
    check_posterior_transform,
    check_single_output,
    model_posterior,
)
from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedUCB
from botorch_mtucb.confidence.constant_checks import check_delta
from botorch_mtucb.confidence.information_gain import observation_information_gain
from botorch_mtucb.confidence.martingale_mixture.mixture_checks import check_sum_of_squares
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound
from botorch_mtucb.confidence.single_task_widths import ay_gp_ucb_width, igp_ucb_width
from botorch_mtucb.models.botorch_readers import (
    is_scalarized_multi_output,
    is_single_task_multi_task_gp,
    joint_training_data,
    single_output_data,
    unwrap_model_list,
)
from botorch_mtucb.utils.checks import check_nonnegative, check_positive, check_X_pending


def joint_width(
    family: str,
    model: Model,
    rkhs_norm_bound: float,
    noise_std: float | None,
    delta: float,
    eta: float | None = None,
) -> Tensor:
    r"""IGP-UCB's or AY-GP-UCB's width for the scalar GP of all scalar observations of
    ``model`` (``joint_training_data``: ``K`` block-diagonal over a-priori independent
    outputs, ``Sigma`` the noise covariance), in the whitened form:

    ``IGP: B + s sqrt(1 + eta) sqrt(2 gamma + t eta + 2 ln(1/delta))``, ``AY: B + s
    sqrt(2 gamma + 2 ln(1/delta))``, ``gamma = 1/2 log det(I + Sigma^{-1/2} K
    Sigma^{-1/2})``, ``t`` the number of scalar observations, ``s = noise_std /
    sqrt(min Sigma)`` (``1`` for ``noise_std=None``), ``eta = 2 / t`` unless given
    (Chowdhury & Gopalan 2017, Theorem 2; Abbasi-Yadkori 2012, Theorem 3.11; the form of
    ``confidence.single_task_widths``).

    Args:
        family: ``"IGP"`` or ``"AY"``.
        model: An unbatched exact GP (``MultiTaskGP``, multi-output ``SingleTaskGP``, ...).
        rkhs_norm_bound: ``B >= 0`` (transformed units).
        noise_std: ``sigma >= 0`` (transformed units) or ``None``.
        delta: Confidence level in ``(0, 1)``.
        eta: IGP-UCB's ``eta > 0`` (``None``: ``2 / t``).

    Returns:
        A 0-d float64 tensor (``t = 0``: ``gamma_0 = 0``).

    Raises:
        ValueError: For bad numbers, or ``noise_std`` with no training data (no noise
            variance to measure it against: pass ``noise_std=None``).

    Example:
        >>> import torch
        >>> from botorch.models import MultiTaskGP
        >>> from botorch_mtucb.acquisition.single_task_ucb import joint_width
        >>> from botorch_mtucb.confidence import igp_ucb_width
        >>> X = torch.rand(8, 2, dtype=torch.float64)
        >>> X[:, -1] = torch.tensor([0.0, 1.0]).repeat(4)
        >>> model = MultiTaskGP(X, X[:, :1].sin(), task_feature=-1)
        >>> bool(torch.isclose(joint_width("IGP", model, 2.0, None, 0.01),
        ...                    igp_ucb_width(model, rkhs_norm_bound=2.0, delta=0.01)))
        True
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    delta = check_delta(delta)
    K, Sigma, _ = joint_training_data(model)
    K, Sigma = K.to(torch.float64), Sigma.to(torch.float64)
    t = K.shape[-1]
    gamma = observation_information_gain(K, Sigma)  # 0 for t = 0
    scale = 1.0  # the noise level of the whitened observations Sigma^{-1/2} y
    if noise_std is not None:
        if t == 0:
            raise ValueError(
                f"{type(model).__name__} has no training data, so no noise variance to "
                "measure noise_std against (the width's sigma / sqrt(lambda_min)); pass "
                "noise_std=None, which takes the likelihood's noise as the noise level"
            )
        smallest = float(torch.linalg.eigvalsh(Sigma)[0])
        scale = check_nonnegative(noise_std, "noise_std") / math.sqrt(smallest)
    if family == "IGP":
        eta = check_positive(2.0 / max(t, 1) if eta is None else eta, "eta")
        noise = scale * math.sqrt(1.0 + eta)
        return igp_ucb_width(gamma, t, rkhs_norm_bound=b, noise_std=noise, delta=delta, eta=eta)
    return ay_gp_ucb_width(
        gamma, rkhs_norm_bound=b, noise_std=scale, delta=delta, regularization=1.0
    )


def _check_targets(y: Tensor, num_observations: int, from_data: bool) -> None:
    """Training targets the width and the posterior mean can use: data to choose ``B``
    from, a sum of squares that does not overflow (as ``MartingaleMixtureUCB``)."""
    if from_data and num_observations == 0:
        raise ValueError(
            "rkhs_norm_bound=None chooses B from the data, and the model has no training "
            "points to choose it from; pass rkhs_norm_bound (with no data the width is "
            "the theorem's at t = 0, gamma_0 = 0)"
        )
    consequence = "the posterior mean (and a norm bound chosen from the data)"
    check_sum_of_squares(y, "train_Y", consequence)


class _SingleTaskWidthUCB(TaskConditionedUCB):
    """``mu(x) + width * sigma(x)`` of a single-output model, the width of a theorem."""

    def _init_width(
        self,
        model: Model,
        family: str,
        rkhs_norm_bound: float | None,
        delta: float,
        noise_std: float | None,
        eta: float | None,
        posterior_transform: PosteriorTransform | None,
        X_pending: Tensor | None,
        maximize: bool,
    ) -> None:
        if not isinstance(model, Model):
            raise TypeError(
                "model must be a fitted single-output exact GP of BoTorch (e.g. SingleTaskGP), "
                f"got {type(model).__name__}"
            )
        member = unwrap_model_list(model)
        scalarized = is_scalarized_multi_output(member, posterior_transform)
        check_posterior_transform(posterior_transform, member.num_outputs if scalarized else 1)
        from_data = rkhs_norm_bound is None
        joint = scalarized or is_single_task_multi_task_gp(member)
        if joint:  # one scalar GP on X x [n]
            input_dim = model_input_dim(member)
            K, Sigma, y = joint_training_data(member)
            noise_variance, gram = Sigma.diagonal(), lambda: K
        else:
            check_single_output(member, "model")
            data = single_output_data(member)  # the model checks first
            input_dim, y, noise_variance, gram = (
                data.input_dim, data.centered_Y, data.noise_variance, data.gram,
            )  # fmt: skip
        _check_targets(y, y.numel(), from_data)
        if from_data:  # B from the data: norm_choice, sigma the largest noise level if not given
            sigma = math.sqrt(float(noise_variance.max())) if noise_std is None else noise_std
            rkhs_norm_bound = choose_rkhs_norm_bound(gram().double(), y.double(), sigma, delta)
        if joint:
            width = joint_width(family, member, rkhs_norm_bound, noise_std, delta, eta)
        else:
            width = self._model_width(member, family, rkhs_norm_bound, noise_std, delta, eta)
        self.input_dim = input_dim
        super().__init__(model, 0, width, None, X_pending, maximize)
        self._scalarized = scalarized
        outputs = member.num_outputs if scalarized else 1
        self.posterior_transform = check_posterior_transform(posterior_transform, outputs)
        self.rkhs_norm_bound = float(rkhs_norm_bound)
        self.rkhs_norm_bound_from_data = from_data

    @staticmethod
    def _model_width(
        model: Model,
        family: str,
        rkhs_norm_bound: float,
        noise_std: float | None,
        delta: float,
        eta: float | None,
    ) -> Tensor:
        """The width of ``confidence.single_task_widths`` for a single-output model."""
        settings = {"rkhs_norm_bound": rkhs_norm_bound, "noise_std": noise_std, "delta": delta}
        if family == "IGP":
            return igp_ucb_width(model, eta=eta, **settings)
        return ay_gp_ucb_width(model, **settings)

    def _mean_and_variance(self, model: Model, X: Tensor) -> tuple[Tensor, Tensor]:
        """Task 0's posterior, or BoTorch's posterior of ``w^T f + offset`` (scalarized)."""
        if not self._scalarized:
            return super()._mean_and_variance(model, X)
        posterior = model_posterior(model, X, self.posterior_transform)
        batch_shape = X.shape[:-2]
        return posterior.mean.reshape(batch_shape), posterior.variance.reshape(batch_shape)

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        """Set (or clear, with ``None``) the ``m x d`` pending points (GP-BUCB).

        Raises:
            TypeError, ValueError: For ``X_pending`` that is not ``None`` or an
                ``m x d`` floating tensor without NaN/inf (``d``: the model's inputs).
        """
        super().set_X_pending(check_X_pending(X_pending, self.input_dim))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(width={float(self.width):.6g}, B={self.rkhs_norm_bound:.6g})"


class IGPUCB(_SingleTaskWidthUCB):
    r"""IGP-UCB on a fitted single-output GP: ``mu(x) + beta_t sigma(x)``.

    ``beta_t = B + sigma sqrt((1 + eta) / lambda) sqrt(2 gamma_t + t eta + 2 ln(1/delta))``
    with ``gamma_t = 1/2 ln det(I + K_t / lambda)`` from the model's kernel on its
    transformed training data and ``lambda`` its noise variance (``igp_ucb_width`` with a
    model; Chowdhury & Gopalan 2017, Theorem 2, for the kernel ``(1 + eta) k / lambda``).
    ``B`` and ``sigma`` are in the transformed units (after ``Standardize``);
    ``rkhs_norm_bound=None`` chooses ``B`` from the data (``norm_choice.choose_rkhs_norm_bound``
    on the model's Gram matrix and centered targets, ``sigma`` the largest noise level: a
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
        maximize: bool = True,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model: A fitted single-output exact GP, learned or fixed (also
                per-point) noise (``models.botorch_readers.single_output``), or one output of a
                multi-output wrapper (module docstring).
            rkhs_norm_bound: ``B > 0`` (transformed units); ``None``: from the data.
            delta: Confidence level in ``(0, 1)``.
            noise_std: ``sigma`` (transformed units); ``None``: ``sqrt(lambda)``.
            eta: IGP-UCB's ``eta > 0``; ``None``: ``2 / t`` (``igp_ucb_width``).
            X_pending: ``m x d`` points chosen but not yet observed (GP-BUCB).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                one weight (``n`` for a multi-output ``SingleTaskGP``).
            maximize: ``False``: ``-(mu - width * sigma)``, the upper bound of ``-f``.

        Raises:
            TypeError, ValueError: For a model the route refuses (several outputs
                without a transform of one weight per output, ...), bad numbers, NaN/inf
                transform weights or offset, or a bad ``X_pending``.
            UnsupportedError: For another ``posterior_transform``.
        """
        self._init_width(
            model, "IGP", rkhs_norm_bound, delta, noise_std, eta, posterior_transform,
            X_pending, maximize,
        )  # fmt: skip


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
        maximize: bool = True,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model: A fitted single-output exact GP, learned or fixed (also
                per-point) noise, or one output of a multi-output wrapper (module
                docstring).
            rkhs_norm_bound: ``B > 0`` (transformed units); ``None``: from the data.
            delta: Confidence level in ``(0, 1)``.
            noise_std: ``sigma`` (transformed units); ``None``: ``sqrt(lambda)``.
            X_pending: ``m x d`` points chosen but not yet observed (GP-BUCB).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                one weight (``n`` for a multi-output ``SingleTaskGP``).
            maximize: ``False``: ``-(mu - width * sigma)``, the upper bound of ``-f``.

        Raises:
            TypeError, ValueError: As ``IGPUCB``.
            UnsupportedError: For another ``posterior_transform``.
        """
        self._init_width(
            model, "AY", rkhs_norm_bound, delta, noise_std, None, posterior_transform,
            X_pending, maximize,
        )  # fmt: skip
