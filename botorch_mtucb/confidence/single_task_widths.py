r"""Widths of the single-task GP-UCB baselines that the papers compare against.

* IGP-UCB (Chowdhury & Gopalan 2017, Theorem 2) and AY-GP-UCB (Abbasi-Yadkori 2012,
  Theorem 3.11), in the form of paper 002, Appendix C.2 (``igp_ucb_width``,
  ``ay_gp_ucb_width``); IGP-UCB is also paper 000's IT-KB;
* BKB (Calandriello et al. 2019, COLT, "Gaussian process optimization with adaptive
  sketching: scalable and no regret", Theorem 1): paper 000's IT-BKB (``bkb_width``);
* GP-UCB (Srinivas et al. 2010, Theorem 1) and the heuristic of MOBO's Dragonfly code
  (``gp_ucb_width``, ``dragonfly_ucb_width``): paper 000's MOBO baseline.

A width multiplies the posterior standard deviation directly: ``mean + width * std``.
This is *not* BoTorch's ``UpperConfidenceBound(beta=...)``, which multiplies
``sqrt(beta)``.

``igp_ucb_width`` and ``ay_gp_ucb_width`` also take a fitted BoTorch model in place of
the information gain: a single-output GP, a multi-output ``SingleTaskGP`` or a
``ModelListGP`` (one width per output), a ``MultiTaskGP`` or ``KroneckerMultiTaskGP``
(one joint width for all tasks: the multi-task kernel ``Gamma(x, x')_{ij}`` is a scalar
kernel on ``X x [n]`` with the same RKHS norm, and each observation of task ``i`` at
``x`` a scalar observation at ``(x, i)``). The gain is computed from the model's kernel
on its own transformed training data and its likelihood noise covariance ``Sigma`` (per
task, per point; ``models.botorch_readers.moments``), and the width multiplies the model's own
posterior standard deviation. When ``Sigma`` is not ``lambda I`` the theorems are applied
to the whitened observations ``Sigma^{-1/2} y`` (kernel ``Sigma^{-1/2} K Sigma^{-1/2}``,
the same RKHS norm, regularization 1; the weighted least squares of Kirschner & Krause
2018, COLT, as in ``mt_kb_width``):

.. math::
    \beta^{IGP}_t = B + \sigma_w \sqrt{1 + \eta}
        \sqrt{2 \gamma_t + t \eta + 2 \ln(1/\delta)},\qquad
    \beta^{AY}_t = B + \sigma_w \sqrt{2 \gamma_t + 2 \ln(1/\delta)},

with ``gamma_t = 1/2 ln det(I + Sigma^{-1/2} K_t Sigma^{-1/2})``, ``t`` the number of
scalar observations and ``sigma_w = sigma / sqrt(lambda_min(Sigma))`` (``1`` for
``noise_std=None``: the likelihood's Gaussian noise taken as the noise). For
``Sigma = lambda I`` these are the formulas of the two functions with regularization
``lambda`` (IGP-UCB for the kernel ``(1 + eta) k / lambda``). ``rkhs_norm_bound`` and
``noise_std`` are in the model's transformed outcome units (after ``Standardize``);
``rkhs_norm_bound`` bounds the norm of the latent function minus the model's constant
prior mean (the posterior mean includes it). The package's own models
(``VectorValuedGP``) take ``confidence.mt_kb_width`` instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from botorch.models.model import Model
from botorch.models.model_list_gp_regression import ModelListGP
from torch import Tensor

from botorch_mtucb.confidence.constant_checks import check_delta
from botorch_mtucb.confidence.information_gain import observation_information_gain
from botorch_mtucb.confidence.scalarized_widths import sketch_distortion
from botorch_mtucb.models.botorch_readers import (
    TrainingCovariance,
    is_multi_task_model,
    output_data,
    smallest_noise_variance,
    training_covariances,
)
from botorch_mtucb.utils.checks import (
    as_int,
    check_nonnegative,
    check_nonnegative_tensor,
    check_positive,
)


def igp_ucb_width(
    information_gain: float | Tensor | Model,
    num_observations: int | None = None,
    rkhs_norm_bound: float | None = None,
    noise_std: float | None = None,
    delta: float | None = None,
    eta: float | None = None,
) -> Tensor:
    r"""IGP-UCB's width (Chowdhury & Gopalan 2017, Theorem 2), in the form of paper 002.

    .. math::
        \beta_t = B + \sigma \sqrt{\ln\det(I + K_t / (1 + \eta)) + t \eta + 2 \ln(1/\delta)}
                = B + \sigma \sqrt{2 \gamma_t + t \eta + 2 \ln(1/\delta)},

    to multiply the posterior standard deviation computed with regularization
    ``lambda = 1 + eta`` (paper 002, Appendix C.2, proof of Theorem 6.3; with the
    recommended ``eta = 2 / T`` the ``t eta`` term is at most 2, giving the
    ``2 (gamma + 1 + ln(1/delta))`` of the original theorem).

    From a model whose posterior has regularization (noise variance) ``lambda``: the
    theorem applied to the kernel ``k' = (1 + eta) k / lambda`` (whose posterior mean is
    the model's, whose standard deviation is ``sqrt((1 + eta) / lambda)`` times the
    model's and whose norm is ``||f||_{k'} = sqrt(lambda / (1 + eta)) ||f||_k``) gives

    .. math::
        \beta_t = B + \sigma \sqrt{\tfrac{1 + \eta}{\lambda}}
                 \sqrt{2 \gamma^\lambda_t + t \eta + 2 \ln(1/\delta)},\qquad
        \gamma^\lambda_t = \tfrac12 \ln\det(I + K_t / \lambda),

    to multiply the model's own posterior standard deviation (the formula above for
    ``lambda = 1 + eta``; per-task or per-point noise and multi-task models: the
    whitened form of the module docstring).

    Args:
        information_gain: ``gamma_t = 1/2 log det(I + K_t / (1 + eta))`` of the data
            seen (nats, ``>= 0``), as the reference code does instead of the maximum
            information gain; or a fitted BoTorch model (module docstring).
        num_observations: ``t``, the number of observations (an int ``>= 0``); not
            given with a model (its ``t``).
        rkhs_norm_bound: ``B >= ||f||_k`` (with a model: of the transformed outcome).
        noise_std: Sub-Gaussian noise level ``sigma >= 0``; with a model, ``None``
            takes the likelihood's noise (``sqrt(lambda)`` for one noise variance,
            transformed units).
        delta: Confidence level in (0, 1).
        eta: IGP-UCB's ``eta > 0`` (the regularization is ``1 + eta``); with a model,
            ``None`` takes ``2 / t`` (C&G's ``2 / T`` with the current ``t`` for the
            horizon ``T``: ``t eta = 2``, the original theorem's form; pass a fixed
            ``eta`` for the theorem's guarantee over all ``t``).

    Returns:
        A 0-d float64 tensor (or the dtype of ``information_gain``); with a model, a
        0-d tensor for a single-output model and for the joint width of a
        ``MultiTaskGP`` / ``KroneckerMultiTaskGP``, one width per output (``m``) for a
        multi-output ``SingleTaskGP`` or a ``ModelListGP``. A model (or output)
        without training data has ``t = 0`` and ``gamma_0 = 0``.

    Raises:
        ValueError: For ``delta`` outside (0, 1), negative ``B``, ``sigma``, ``t`` or
            information gain, ``eta <= 0``, ``num_observations`` given with a model,
            or ``noise_std`` given with a model without training data whose noise
            variance is not a learned homoskedastic one (fixed noise, multi-task).
        TypeError: If a numeric argument is not a real number (a string, ``None``,
            a bool, a complex number ...), ``num_observations`` not an int (``2.5``)
            or ``information_gain`` neither a real tensor nor a model the route reads
            (``models.output_data``).

    Example:
        >>> from botorch_mtucb.confidence import igp_ucb_width
        >>> width = igp_ucb_width(2.0, 50, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05,
        ...                       eta=0.02)
        >>> round(float(width), 6)  # 1 + 0.1 sqrt(4 + 1 + 2 log 20)
        1.331534
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> X = torch.rand(10, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(X, X.sum(-1, keepdim=True))
        >>> igp_ucb_width(model, rkhs_norm_bound=2.0, delta=0.05, eta=0.1).shape
        torch.Size([])
    """
    if isinstance(information_gain, Model):
        _no_model_argument(num_observations, "num_observations")
        b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
        delta = check_delta(delta)

        def width(gamma: Tensor, t: int, sigma_w: Tensor) -> Tensor:
            step = check_positive(2.0 / max(t, 1) if eta is None else eta, "eta")
            log_term = 2.0 * gamma + t * step + 2.0 * math.log(1.0 / delta)
            return b + sigma_w * math.sqrt(1.0 + step) * torch.sqrt(log_term)

        return _widths_of_model(information_gain, noise_std, width)
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    eta = check_positive(eta, "eta")
    t = as_int(num_observations, "num_observations", 0)
    gamma = check_nonnegative_tensor(information_gain, "information_gain").to(torch.float64)
    return b + sigma * torch.sqrt(2.0 * gamma + t * eta + 2.0 * math.log(1.0 / delta))


def ay_gp_ucb_width(
    information_gain: float | Tensor | Model,
    rkhs_norm_bound: float | None = None,
    noise_std: float | None = None,
    delta: float | None = None,
    regularization: float | None = None,
) -> Tensor:
    r"""AY-GP-UCB's width (Abbasi-Yadkori 2012, Theorem 3.11), in the form of paper 002.

    .. math::
        \beta_t = \frac{\widetilde R^{AY}_{\lambda, t}}{\sqrt{\lambda}}
                = B + \frac{\sigma}{\sqrt{\lambda}}
                  \sqrt{\ln\det(I + K_t / \lambda) + 2 \ln(1/\delta)}
                = B + \frac{\sigma}{\sqrt{\lambda}} \sqrt{2 \gamma_t + 2 \ln(1/\delta)},

    to multiply the posterior standard deviation ``rho_lambda(x)`` computed with
    regularization (noise variance) ``lambda`` (paper 002, Appendix C.2, proof of Theorem
    6.3). Paper 002's parameter mapping (Theorem 6.3, Section 7): ``lambda = sigma^2 / c``
    for the mixture scale ``c``, i.e. ``lambda = sigma^2`` for the RBF kernel and
    ``lambda = sigma^2 T^{d / (2 d + 2 nu)}`` for Matern kernels. From a model,
    ``lambda`` is its likelihood noise variance (the regularization of its posterior).

    Args:
        information_gain: ``gamma_t = 1/2 ln det(I + K_t / lambda)`` of the data seen
            (nats, ``>= 0``), or a fitted BoTorch model (module docstring).
        rkhs_norm_bound: ``B >= ||f||_k`` (with a model: of the transformed outcome).
        noise_std: Sub-Gaussian noise level ``sigma >= 0``; with a model, ``None``
            takes the likelihood's noise (``sqrt(lambda)`` for one noise variance,
            transformed units).
        delta: Confidence level in (0, 1).
        regularization: ``lambda > 0``; not given with a model (its noise variance).

    Returns:
        A float64 tensor of the shape of ``information_gain`` (units of ``f`` per unit
        of standard deviation); with a model, as ``igp_ucb_width``.

    Raises:
        ValueError: For ``delta`` outside (0, 1), negative ``B`` or ``sigma``, negative
            or non-finite information gain, ``regularization <= 0``,
            ``regularization`` given with a model, or ``noise_std`` with a model as
            ``igp_ucb_width`` refuses it (no data, fixed noise).
        TypeError: If a numeric argument is not a real number (a string, ``None``,
            a bool, a complex number ...) or ``information_gain`` neither a real tensor
            nor a model the route reads (``models.output_data``).

    Example:
        >>> from botorch_mtucb.confidence import ay_gp_ucb_width
        >>> width = ay_gp_ucb_width(2.0, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05,
        ...                         regularization=0.01)
        >>> round(float(width), 6)  # 1 + sqrt(4 + 2 log 20)
        4.160928
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> X = torch.rand(10, 2, dtype=torch.float64)
        >>> models = ModelListGP(SingleTaskGP(X, X[:, :1]), SingleTaskGP(X, X[:, 1:]))
        >>> ay_gp_ucb_width(models, rkhs_norm_bound=2.0, delta=0.05).shape
        torch.Size([2])
    """
    if isinstance(information_gain, Model):
        _no_model_argument(regularization, "regularization")
        b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
        delta = check_delta(delta)

        def width(gamma: Tensor, t: int, sigma_w: Tensor) -> Tensor:
            return b + sigma_w * torch.sqrt(2.0 * gamma + 2.0 * math.log(1.0 / delta))

        return _widths_of_model(information_gain, noise_std, width)
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    lam = check_positive(regularization, "regularization")
    gamma = check_nonnegative_tensor(information_gain, "information_gain").to(torch.float64)
    return b + sigma / math.sqrt(lam) * torch.sqrt(2.0 * gamma + 2.0 * math.log(1.0 / delta))


def _no_model_argument(value: object, name: str) -> None:
    if value is not None:
        raise ValueError(f"{name} is read from the model; do not pass it with a model")


def _widths_of_model(
    model: Model,
    noise_std: float | None,
    width: Callable[[Tensor, int, Tensor], Tensor],
) -> Tensor:
    r"""``width(gamma, t, sigma_w)`` for each output of ``model`` (module docstring).

    Per a-priori independent group of scalar observations (``training_covariances``):
    ``gamma = 1/2 log det(I + Sigma^{-1/2} K Sigma^{-1/2})``, ``t`` its number of scalar
    observations and ``sigma_w = sigma / sqrt(lambda_min(Sigma))`` (``1`` for
    ``noise_std=None``), the noise level of the whitened observations. A 0-d tensor for
    a single-output model and for the joint width of a ``MultiTaskGP`` or
    ``KroneckerMultiTaskGP``; one width per output (``m``) for a multi-output
    ``SingleTaskGP`` and a ``ModelListGP`` (a multi-task member's joint width repeated
    for each of its outputs).
    """
    sigma = None if noise_std is None else check_nonnegative(noise_std, "noise_std")
    members = model.models if isinstance(model, ModelListGP) else [model]
    widths = []
    for member in members:
        joint = is_multi_task_model(member)
        outputs = None if joint else output_data(member)  # the single-output checks
        groups = training_covariances(member)
        for i, group in enumerate(groups):
            K = group.kernel_matrix.detach().to(torch.float64)
            Sigma = group.noise_covariance.detach().to(torch.float64)
            gamma = observation_information_gain(K, Sigma)  # 0 without data
            if sigma is None:
                sigma_w = torch.ones_like(gamma)
            elif K.shape[-1] == 0:  # t = 0: the likelihood's noise variance
                sigma_w = sigma / math.sqrt(_noise_without_data(member, outputs, i))
                sigma_w = torch.full_like(gamma, sigma_w)
            else:
                lam_min = smallest_noise_variance([TrainingCovariance(K, Sigma, K[..., 0])])
                sigma_w = sigma / lam_min.sqrt()
            value = width(gamma, K.shape[-1], sigma_w).reshape(-1)
            if joint:
                value = value.expand(member.num_outputs)
            widths.append(value)
    stacked = torch.cat(widths)
    single = (model.num_outputs == 1 or is_multi_task_model(model)) and not isinstance(
        model, ModelListGP
    )
    return stacked[0] if single else stacked


def _noise_without_data(member: Model, outputs: list | None, index: int) -> float:
    """``lambda`` of an output without training data: its likelihood's homoskedastic
    noise variance (what ``noise_std`` is measured against at ``t = 0``)."""
    learned = None if outputs is None else outputs[index].learned_noise_variance
    if learned is None or not learned > 0.0:
        raise ValueError(
            f"{type(member).__name__} has no training data and no homoskedastic noise "
            "variance lambda (fixed noise, or a multi-task model) to measure noise_std "
            "against (the width's sigma / sqrt(lambda)); pass noise_std=None, which takes "
            "the likelihood's noise as the noise level"
        )
    return learned


def bkb_width(
    variance_sum: float | Tensor,
    num_observations: int,
    rkhs_norm_bound: float,
    noise_std: float,
    delta: float,
    eps: float,
    regularization: float,
    kernel_bound: float,
) -> Tensor:
    r"""BKB's width (Calandriello et al. 2019, Theorem 1), per unit of posterior std.

    BKB's upper confidence bound is ``mu~_t(x) + beta~_t sigma~_t(x)`` with the
    *normalized* variance ``sigma~_t^2(x) = Gamma~_t(x, x) / lambda`` and

    .. math::
        \tilde\beta_t = 2 \xi \sqrt{\alpha \log(\kappa^2 t)
        \sum_{s=1}^t \tilde\sigma_t^2(x_s) + \log(1/\delta)}
        + \Big(1 + \frac{1}{\sqrt{1 - \varepsilon}}\Big) \sqrt{\lambda} F,
        \qquad \alpha = \frac{1 + \varepsilon}{1 - \varepsilon},

    where the sum is over every queried point with the *current* sketch and
    ``kappa^2 = sup_x k(x, x)``. This function returns ``beta~_t / sqrt(lambda)``,
    which multiplies the posterior standard deviation ``sqrt(Gamma~_t(x, x))``.
    ``log(kappa^2 t)`` is clipped at 0 (for ``kappa^2 t < 1`` the theorem's term
    would be negative). The theorem's text was not available to us in full; this
    form is the one of the paper as we read it, and its authors' reference code
    (LCSL ``bkb``) uses the same structure without the constants 2, ``alpha``,
    ``kappa^2`` and ``1 + 1/sqrt(1 - eps)``.

    Args:
        variance_sum: ``sum_s Gamma~_t(x_s, x_s) / lambda`` over the ``t`` queried
            points (``>= 0``; one value or a tensor of per-task values).
        num_observations: ``t >= 0``.
        rkhs_norm_bound: ``F >= ||f||_k``.
        noise_std: Sub-Gaussian noise level ``xi >= 0``.
        delta: Confidence level in (0, 1).
        eps: Accuracy of the sketch in (0, 1).
        regularization: ``lambda > 0``.
        kernel_bound: ``kappa^2 = sup_x k(x, x) > 0``.

    Returns:
        A float64 tensor of the shape of ``variance_sum``.

    Raises:
        ValueError: For ``delta`` / ``eps`` outside (0, 1), negative ``F``, ``xi``,
            ``t`` or variance sum, or non-positive ``lambda`` / ``kappa^2``.

    Example:
        >>> from botorch_mtucb.confidence import bkb_width
        >>> width = bkb_width(3.0, 10, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05,
        ...                   eps=0.5, regularization=1.0, kernel_bound=1.0)
        >>> round(float(width), 4)  # 0.2 sqrt(9 log 10 + log 20) + 1 + sqrt(2)
        3.3883
    """
    F = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    xi = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    alpha = sketch_distortion(eps)
    lam = check_positive(regularization, "regularization")
    kappa2 = check_positive(kernel_bound, "kernel_bound")
    t = as_int(num_observations, "num_observations", 0)
    total = check_nonnegative_tensor(variance_sum, "variance_sum").to(torch.float64)
    log_factor = max(math.log(kappa2 * t), 0.0) if t > 0 else 0.0
    beta = 2.0 * xi * torch.sqrt(alpha * log_factor * total + math.log(1.0 / delta))
    beta = beta + (1.0 + 1.0 / math.sqrt(1.0 - eps)) * math.sqrt(lam) * F
    return beta / math.sqrt(lam)


def gp_ucb_width(round_index: int, domain_size: int, delta: float) -> float:
    r"""GP-UCB's width ``sqrt(beta_t)`` for a finite domain (Srinivas et al. 2010, Thm. 1).

    .. math::
        \beta_t = 2 \log\big(|\mathcal{X}| \, t^2 \pi^2 / (6 \delta)\big),

    used by MOBO (Paria et al. 2019), which builds on GP-UCB for each objective.

    Args:
        round_index: ``t >= 1``, the round whose point is being chosen.
        domain_size: ``|X| >= 1``.
        delta: Confidence level in (0, 1).

    Returns:
        ``sqrt(beta_t)`` (multiplies the posterior standard deviation).

    Raises:
        ValueError: If ``t < 1``, ``|X| < 1`` or ``delta`` is outside (0, 1).

    Example:
        >>> from botorch_mtucb.confidence import gp_ucb_width
        >>> round(gp_ucb_width(round_index=10, domain_size=100, delta=0.1), 4)
        4.9011
    """
    t = as_int(round_index, "round_index", 1)
    size = as_int(domain_size, "domain_size", 1)
    delta = check_delta(delta)
    return math.sqrt(2.0 * math.log(size * t**2 * math.pi**2 / (6.0 * delta)))


def dragonfly_ucb_width(round_index: int, dim: int) -> float:
    r"""The width of MOBO's released code: ``sqrt(0.2 d log(2 d t + 1))``.

    Paria et al.'s implementation in Dragonfly
    (``dragonfly/opt/multiobjective_gpb_acquisitions.py``, ``_get_ucb_beta_th``)
    multiplies each objective's posterior std by this value (a heuristic, not the
    theorem's radius).

    Args:
        round_index: ``t >= 1``, the round whose point is being chosen.
        dim: The input dimension ``d >= 1``.

    Returns:
        The width (a float; multiplies the posterior standard deviation).

    Raises:
        ValueError: If ``t < 1`` or ``d < 1``.

    Example:
        >>> from botorch_mtucb.confidence import dragonfly_ucb_width
        >>> round(dragonfly_ucb_width(round_index=10, dim=2), 4)  # sqrt(0.4 log 41)
        1.2188
    """
    t = as_int(round_index, "round_index", 1)
    d = as_int(dim, "dim", 1)
    return math.sqrt(0.2 * d * math.log(2 * d * t + 1))
