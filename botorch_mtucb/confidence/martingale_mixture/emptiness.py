r"""The empty-set test of paper 002's confidence set and the error that reports it.

The confidence set ``F_t = {f : ||f_t - y_t|| <= R_t, ||f||_H <= B}`` of Lemma 4.2 is
non-empty iff ``min_{alpha > 0} R~_alpha^2 >= 0`` (weak and strong duality for
``min_{||f|| <= B} ||f_t - y_t||^2``; ``R~_alpha`` of Cor. 4.3). ``R~_alpha^2`` is convex in
``alpha``: its derivative ``B^2 - sum_i z_i^2 lambda_i / (lambda_i + alpha)^2`` is
increasing, and its root is found with ``scipy.optimize.brentq`` in log-space
(``min_radius_tilde_squared``). When the set is empty, ``EmptyConfidenceSetError`` says
which assumption the data contradict, with the smallest norm bound and the smallest
noise level at which the set is not empty: both are roots of an increasing function,
bracketed by doubling and found with ``brentq`` to a relative tolerance of
``THRESHOLD_RTOL`` (``smallest_passing``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    radius_tilde_squared,
    spectral_radius_squared,
)

EMPTY_TOLERANCE = 1e-10  # R~^2 below -EMPTY_TOLERANCE R_t^2 means an empty set
THRESHOLD_RTOL = 1e-12  # relative accuracy of the thresholds and of the minimizing alpha
SEARCH_DECADES = 16  # the minimizing alpha is searched in 1e-16 ... 1e16 x the scale
MAX_GROWTH = 1e12  # thresholds above 1e12 x the start are reported as inf


class EmptyConfidenceSetError(ValueError):
    """The confidence set of paper 002 (Lemma 4.2) is empty.

    The data contradict the assumptions ``||f||_H <= rkhs_norm_bound`` and
    ``sigma``-sub-Gaussian noise with ``sigma = noise_std`` (an event of probability at
    most ``delta`` when the assumptions hold): the dual of eq. (11) is unbounded below
    and no finite bound exists. The message gives the smallest ``rkhs_norm_bound`` (at
    the given ``noise_std``) and the smallest ``noise_std`` (at the given
    ``rkhs_norm_bound``) for which the set is not empty.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound
        >>> X = torch.rand(10, 1, dtype=torch.float64)
        >>> try:  # observations of size 100 cannot come from ||f|| <= 1 with noise 0.1
        ...     MartingaleMixtureBound(X, torch.full((10, 1), 100.0), RBFKernel(), 1.0, 0.1, 0.01)
        ... except EmptyConfidenceSetError as error:
        ...     print(str(error)[:49])
        the martingale-mixture confidence set (paper 002,
    """


def contradicts(radius_tilde_sq: float, radius_sq: float) -> bool:
    """Whether ``R~^2`` is negative beyond round-off (``-EMPTY_TOLERANCE R_t^2``).

    Example:
        >>> from botorch_mtucb.confidence.martingale_mixture.emptiness import contradicts
        >>> contradicts(-1.0, 4.0), contradicts(-1e-12, 4.0)
        (True, False)
    """
    return radius_tilde_sq < -EMPTY_TOLERANCE * radius_sq


def min_radius_tilde_squared(
    spectrum: GramSpectrum, rkhs_norm_bound: float, radius_sq: Tensor, base_alpha: float
) -> float:
    r"""``min_{alpha > 0} R~_alpha^2`` for a norm bound and a radius ``R_t^2``.

    The root of the increasing derivative ``B^2 - sum_i z_i^2 lambda_i / (lambda_i +
    alpha)^2`` in ``log alpha``, searched with ``brentq`` in ``[1e-16, 1e16] x s``,
    ``s = max(lambda_max, base_alpha)`` (the end of that range where the derivative does
    not change sign in it), to ``THRESHOLD_RTOL`` in ``alpha``.

    Args:
        spectrum: The spectrum of ``K_t``.
        rkhs_norm_bound: ``B > 0``.
        radius_sq: ``R_t^2`` of eq. (8).
        base_alpha: ``sigma^2 / c`` (sets the search range with the spectrum).

    Returns:
        The minimum (a float, units of ``y^2``); ``R_t^2`` without data.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.emptiness import min_radius_tilde_squared
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum
        >>> spectrum = GramSpectrum.from_gram(torch.eye(1, dtype=torch.float64),
        ...                                   torch.full((1,), 2.0, dtype=torch.float64))
        >>> # R~^2 = 1 + alpha - 4 alpha / (1 + alpha), smallest at alpha = 1
        >>> round(min_radius_tilde_squared(spectrum, 1.0, torch.tensor(1.0), 1.0), 9)
        0.0
    """
    lam = spectrum.eigenvalues.detach().cpu().numpy()
    if lam.size == 0:
        return float(radius_sq)
    squared_y = spectrum.rotated_y.detach().cpu().numpy() ** 2
    weights = squared_y * lam
    b2 = rkhs_norm_bound**2
    scale = max(float(lam.max()), base_alpha)

    def slope(log_alpha: float) -> float:
        return b2 - float(np.sum(weights / (lam + math.exp(log_alpha)) ** 2))

    low = math.log(10.0**-SEARCH_DECADES * scale)
    high = math.log(10.0**SEARCH_DECADES * scale)
    if slope(low) >= 0:
        log_alpha = low
    elif slope(high) <= 0:
        log_alpha = high
    else:
        log_alpha = brentq(slope, low, high, xtol=THRESHOLD_RTOL)
    alpha = math.exp(log_alpha)
    data_fit = float(np.sum(alpha / (lam + alpha) * squared_y))  # spectral_data_fit
    return float(radius_tilde_squared(float(radius_sq), rkhs_norm_bound, alpha, data_fit))


def smallest_passing(margin: Callable[[float], float], start: float) -> float:
    """The smallest ``v >= start`` with ``margin(v) >= 0``, for an increasing ``margin``.

    ``start`` is doubled until the margin is non-negative (``inf`` if not before
    ``MAX_GROWTH x start``); the root in the last doubling is then found with ``brentq``
    in log-space, to a relative accuracy of ``THRESHOLD_RTOL``.

    Example:
        >>> from botorch_mtucb.confidence.martingale_mixture.emptiness import smallest_passing
        >>> round(smallest_passing(lambda v: v**2 - 10.0, 1.0), 9)
        3.16227766
    """
    if margin(start) >= 0:
        return start
    low, high = start, 2.0 * start
    while margin(high) < 0:
        low, high = high, 2.0 * high
        if high > MAX_GROWTH * start:
            return math.inf
    root = brentq(lambda u: margin(math.exp(u)), math.log(low), math.log(high), xtol=THRESHOLD_RTOL)
    return math.exp(root)


def empty_set_message(
    spectrum: GramSpectrum,
    radius_sq: Tensor,
    rkhs_norm_bound: float,
    noise_std: float,
    mixture_scale: float,
    delta: float,
) -> str:
    r"""Which assumption the data contradict, and by how much (``EmptyConfidenceSetError``).

    Args:
        spectrum: The spectrum of ``K_t``.
        radius_sq: ``R_t^2`` of eq. (8) at ``noise_std``.
        rkhs_norm_bound, noise_std, mixture_scale, delta: The bound's assumptions.

    Returns:
        The error message, with the smallest ``rkhs_norm_bound`` (at ``noise_std``) and
        the smallest ``noise_std`` (at ``rkhs_norm_bound``) of a non-empty set.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.emptiness import empty_set_message
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import (
        ...     GramSpectrum, spectral_radius_squared)
        >>> spectrum = GramSpectrum.from_gram(torch.eye(1, dtype=torch.float64),
        ...                                   torch.full((1,), 5.0, dtype=torch.float64))
        >>> radius_sq = spectral_radius_squared(spectrum, 0.1, 1.0, 0.01)
        >>> message = empty_set_message(spectrum, radius_sq, 1.0, 0.1, 1.0, 0.01)
        >>> message.split(". ")[1][:69]
        'The data contradict the assumed norm bound at this noise level: the s'
    """
    base_alpha = noise_std**2 / mixture_scale

    def norm_margin(norm: float) -> float:
        return min_radius_tilde_squared(spectrum, norm, radius_sq, base_alpha)

    def noise_margin(noise: float) -> float:
        radius = spectral_radius_squared(spectrum, noise, mixture_scale, delta)
        return min_radius_tilde_squared(spectrum, rkhs_norm_bound, radius, base_alpha)

    smallest_norm = smallest_passing(norm_margin, rkhs_norm_bound)
    smallest_noise = smallest_passing(noise_margin, noise_std)
    return (
        "the martingale-mixture confidence set (paper 002, Lemma 4.2) is empty: no "
        f"function with RKHS norm <= rkhs_norm_bound = {rkhs_norm_bound:g} fits the "
        f"{spectrum.eigenvalues.numel()} observations within the radius R_t = "
        f"{math.sqrt(float(radius_sq)):.6g} implied by noise_std = {noise_std:g} and "
        f"delta = {delta:g}. The data contradict the assumed norm bound at this noise "
        f"level: the set is non-empty only for rkhs_norm_bound >= {smallest_norm:.6g} "
        f"(with noise_std = {noise_std:g}) or for noise_std >= {smallest_noise:.6g} "
        f"(with rkhs_norm_bound = {rkhs_norm_bound:g}). Increase rkhs_norm_bound or "
        "noise_std, or check the data and the kernel."
    )
