r"""The radii of paper 002's confidence sets and the spectrum they are computed from.

Source: paper 002 (Flynn, Reeb et al., *Tighter Confidence Bounds for Sequential Kernel
Regression*), Section 4:

* eq. (8): the martingale-mixture radius
  ``R_t^2 = y^T (I + c K / sigma^2)^{-1} y + sigma^2 ln det(I + c K / sigma^2)
  + 2 sigma^2 ln(1 / delta)``, which bounds ``||f*_t - y_t||^2`` for all ``t`` with
  probability ``1 - delta``;
* Cor. 4.3 with Lemma C.1: ``R~_alpha^2 = R_t^2 + alpha B^2 - alpha y^T (K + alpha I)^{-1} y``,
  the radius of the dual problem at the regularization ``alpha``.

With ``K_t = U diag(lambda) U^T`` and ``z = U^T y`` (``GramSpectrum``) both radii are sums
over the spectrum: ``y^T (K + alpha I)^{-1} y = sum_i z_i^2 / (lambda_i + alpha)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor


class GramSpectrum(NamedTuple):
    r"""``K_t = U diag(lambda) U^T`` and ``z = U^T y``: the spectrum that the exact bound,
    the alpha search and the empty-set test read.

    Attributes:
        eigenvalues: ``lambda`` (``t``, clipped at 0: ``K_t`` is PSD).
        eigenvectors: ``U`` (``t x t``).
        rotated_y: ``z = U^T y`` (``t``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum
        >>> gram = torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
        >>> spectrum = GramSpectrum.from_gram(gram, torch.tensor([1.0, 3.0], dtype=torch.float64))
        >>> spectrum.eigenvalues.tolist(), spectrum.rotated_y.abs().tolist()
        ([1.0, 2.0], [3.0, 1.0])
    """

    eigenvalues: Tensor
    eigenvectors: Tensor
    rotated_y: Tensor

    @classmethod
    def from_gram(cls, gram: Tensor, y: Tensor) -> GramSpectrum:
        """The spectrum of the symmetric part of ``gram`` (``t x t``) and ``U^T y`` (``t``)."""
        if gram.shape[-1] == 0:
            return cls(gram.new_zeros(0), gram.new_zeros(0, 0), gram.new_zeros(0))
        eigenvalues, eigenvectors = torch.linalg.eigh(0.5 * (gram + gram.transpose(0, 1)))
        return cls(eigenvalues.clamp_min(0.0), eigenvectors, eigenvectors.transpose(0, 1) @ y)


def radius_squared(
    normalized_fit: Tensor, log_det: Tensor, noise_std: float, delta: float
) -> Tensor:
    r"""``R_t^2`` of eq. (8) from its two data terms.

    .. math::
        R_t^2 = y^\top (I + c K / \sigma^2)^{-1} y + \sigma^2 \ln\det(I + c K / \sigma^2)
        + 2 \sigma^2 \ln(1 / \delta).

    Args:
        normalized_fit: ``y^T (I + c K / sigma^2)^{-1} y`` (units of ``y^2``).
        log_det: ``ln det(I + c K / sigma^2)`` (nats).
        noise_std: ``sigma > 0``.
        delta: Confidence level in ``(0, 1)``.

    Returns:
        ``R_t^2`` (a tensor of the broadcast shape of the data terms, units of ``y^2``).

    Example:
        >>> import math
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import radius_squared
        >>> value = radius_squared(torch.tensor(0.0), torch.tensor(0.0), 1.0, math.exp(-1))
        >>> float(value)  # no data: 2 sigma^2 ln(1 / delta)
        2.0
    """
    sigma2 = noise_std**2
    return normalized_fit + sigma2 * log_det + 2.0 * sigma2 * math.log(1.0 / delta)


def spectral_radius_squared(
    spectrum: GramSpectrum, noise_std: float, mixture_scale: float, delta: float
) -> Tensor:
    r"""``R_t^2`` of eq. (8) from the spectrum, for any ``noise_std`` (a 0-d tensor).

    ``sum_i z_i^2 / (1 + c lambda_i / sigma^2) + sigma^2 sum_i ln(1 + c lambda_i / sigma^2)
    + 2 sigma^2 ln(1 / delta)``; the empty-set test evaluates it at other noise levels.

    Example:
        >>> import math
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import (
        ...     GramSpectrum, spectral_radius_squared)
        >>> spectrum = GramSpectrum.from_gram(torch.eye(1, dtype=torch.float64),
        ...                                   torch.ones(1, dtype=torch.float64))
        >>> value = spectral_radius_squared(spectrum, 1.0, 1.0, math.exp(-1))
        >>> round(float(value), 6)  # 1/2 + ln 2 + 2
        3.193147
    """
    ratio = mixture_scale * spectrum.eigenvalues / noise_std**2
    normalized_fit = (spectrum.rotated_y**2 / (1.0 + ratio)).sum()
    return radius_squared(normalized_fit, torch.log1p(ratio).sum(), noise_std, delta)


def radius_tilde_squared(
    radius_sq: Tensor, rkhs_norm_bound: float, alpha: Tensor, data_fit: Tensor
) -> Tensor:
    r"""``R~_alpha^2 = R_t^2 + alpha B^2 - alpha y^T (K + alpha I)^{-1} y`` (Cor. 4.3).

    Negative values mean that the confidence set is empty (the dual of eq. (11) is
    unbounded below at that ``alpha``).

    Args:
        radius_sq: ``R_t^2`` of eq. (8).
        rkhs_norm_bound: ``B > 0``.
        alpha: Regularizations ``alpha > 0`` (any shape).
        data_fit: ``alpha y^T (K + alpha I)^{-1} y`` for each ``alpha`` (the caller's
            route: the spectrum or a cached solve).

    Returns:
        ``R~_alpha^2`` of the shape of ``alpha`` (units of ``y^2``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import radius_tilde_squared
        >>> alpha = torch.tensor([0.5, 2.0])
        >>> radius_tilde_squared(torch.tensor(1.0), 1.0, alpha, torch.zeros(2)).tolist()
        [1.5, 3.0]
    """
    return radius_sq + alpha * rkhs_norm_bound**2 - data_fit


def spectral_data_fit(spectrum: GramSpectrum, alpha: Tensor) -> Tensor:
    r"""``alpha y^T (K + alpha I)^{-1} y = sum_i alpha z_i^2 / (lambda_i + alpha)``.

    Args:
        spectrum: The spectrum of ``K_t``.
        alpha: Regularizations ``alpha > 0`` of any shape.

    Returns:
        A tensor of the shape of ``alpha``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum, spectral_data_fit
        >>> spectrum = GramSpectrum.from_gram(torch.eye(1, dtype=torch.float64),
        ...                                   torch.ones(1, dtype=torch.float64))
        >>> spectral_data_fit(spectrum, torch.tensor([1.0], dtype=torch.float64)).tolist()
        [0.5]
    """
    ratio = alpha.unsqueeze(-1) / (spectrum.eigenvalues + alpha.unsqueeze(-1))
    return (ratio * spectrum.rotated_y**2).sum(-1)
