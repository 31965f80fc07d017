"""Confidence widths (the papers' beta_t): MT-KB (paper 000), IGP-UCB and AY-GP-UCB.

A width multiplies the posterior standard deviation directly: ``mean + width * std``.
This is *not* BoTorch's ``UpperConfidenceBound(beta=...)``, which multiplies
``sqrt(beta)``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.utils.checks import (
    check_delta,
    check_nonnegative,
    check_nonnegative_tensor,
    check_positive,
)


def mt_kb_width(model, rkhs_norm_bound: float, noise_std: float, delta: float) -> Tensor:
    r"""MT-KB's width ``beta_t`` of Theorem 2 of paper 000.

    .. math::
        \beta_t = b + \frac{\sigma}{\sqrt{\eta}}
        \sqrt{2 \log(1/\delta) + \log\det(I_{nt} + \eta^{-1} G_t)},

    where ``log det(I + G_t / eta) = sum_s log det(I_n + Gamma_{s-1}(x_s, x_s) / eta)``
    (Lemma 4) is twice the model's ``information_gain()`` and ``eta`` its
    ``regularization``.

    Args:
        model: A ``VectorValuedGP`` (anything with ``information_gain()`` and
            ``regularization``).
        rkhs_norm_bound: ``b >= ||f||_Gamma``.
        noise_std: Sub-Gaussian noise level ``sigma >= 0``.
        delta: Confidence level in ``(0, 1)``.

    Returns:
        A 0-d tensor, the width (same units as ``f``).

    Raises:
        ValueError: If ``delta`` is outside (0, 1) or ``rkhs_norm_bound`` or
            ``noise_std`` is negative.
        TypeError: If ``model`` lacks ``information_gain`` / ``regularization``, or
            a numeric argument is not a real number (a string, ``None``, a bool ...).
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    if not hasattr(model, "information_gain") or not hasattr(model, "regularization"):
        raise TypeError(
            "model must provide information_gain() and regularization (e.g. VectorValuedGP), "
            f"got {type(model).__name__}"
        )
    eta = check_positive(model.regularization, "model.regularization")
    log_det = 2.0 * model.information_gain().detach()
    return b + sigma / math.sqrt(eta) * torch.sqrt(2.0 * math.log(1.0 / delta) + log_det)


def igp_ucb_width(
    information_gain: float | Tensor,
    num_observations: int,
    rkhs_norm_bound: float,
    noise_std: float,
    delta: float,
    eta: float,
) -> Tensor:
    r"""IGP-UCB's width (Chowdhury & Gopalan 2017, Theorem 2), in the form of paper 002.

    .. math::
        \beta_t = B + \sigma \sqrt{\ln\det(I + K_t / (1 + \eta)) + t \eta + 2 \ln(1/\delta)}
                = B + \sigma \sqrt{2 \gamma_t + t \eta + 2 \ln(1/\delta)},

    to multiply the posterior standard deviation computed with regularization
    ``lambda = 1 + eta`` (paper 002, Appendix C.2, proof of Theorem 6.3; with the
    recommended ``eta = 2 / T`` the ``t eta`` term is at most 2, giving the
    ``2 (gamma + 1 + ln(1/delta))`` of the original theorem).

    Args:
        information_gain: ``gamma_t = 1/2 log det(I + K_t / (1 + eta))`` of the data
            seen (nats, ``>= 0``), as the reference code does instead of the maximum
            information gain.
        num_observations: ``t``, the number of observations.
        rkhs_norm_bound: ``B >= ||f||_k``.
        noise_std: Sub-Gaussian noise level ``sigma >= 0``.
        delta: Confidence level in (0, 1).
        eta: IGP-UCB's ``eta > 0`` (the model's regularization is ``1 + eta``).

    Returns:
        A 0-d float64 tensor (or the dtype of ``information_gain``).

    Raises:
        ValueError: For ``delta`` outside (0, 1), negative ``B``, ``sigma``, ``t`` or
            information gain, or ``eta <= 0``.
        TypeError: If a numeric argument is not a real number (a string, ``None``,
            a bool, a complex number ...) or ``information_gain`` not a real tensor.
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    eta = check_positive(eta, "eta")
    t = check_nonnegative(num_observations, "num_observations")
    gamma = check_nonnegative_tensor(information_gain, "information_gain").to(torch.float64)
    return b + sigma * torch.sqrt(2.0 * gamma + t * eta + 2.0 * math.log(1.0 / delta))


def ay_gp_ucb_width(
    information_gain: float | Tensor,
    rkhs_norm_bound: float,
    noise_std: float,
    delta: float,
    regularization: float,
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
    ``lambda = sigma^2 T^{d / (2 d + 2 nu)}`` for Matern kernels.

    Args:
        information_gain: ``gamma_t = 1/2 ln det(I + K_t / lambda)`` of the data seen
            (nats, ``>= 0``).
        rkhs_norm_bound: ``B >= ||f||_k``.
        noise_std: Sub-Gaussian noise level ``sigma >= 0``.
        delta: Confidence level in (0, 1).
        regularization: ``lambda > 0``.

    Returns:
        A float64 tensor of the shape of ``information_gain`` (units of ``f`` per unit
        of standard deviation).

    Raises:
        ValueError: For ``delta`` outside (0, 1), negative ``B`` or ``sigma``, negative
            or non-finite information gain, or ``regularization <= 0``.
        TypeError: If a numeric argument is not a real number (a string, ``None``,
            a bool, a complex number ...) or ``information_gain`` not a real tensor.
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    lam = check_positive(regularization, "regularization")
    gamma = check_nonnegative_tensor(information_gain, "information_gain").to(torch.float64)
    return b + sigma / math.sqrt(lam) * torch.sqrt(2.0 * gamma + 2.0 * math.log(1.0 / delta))
