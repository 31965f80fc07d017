r"""A norm bound ``B`` chosen from the data, for when no ``||f||_H <= B`` is known.

Paper 002's bounds need ``B >= ||f||_H``, which a BoTorch user never knows. With
``rkhs_norm_bound=None`` (``MartingaleMixtureBound`` and its ``from_model``) the bound
takes, from the spectrum of ``K_t`` it computes anyway (``rkhs_norm_bound_from_spectrum``:
one eigen-decomposition for the choice, the emptiness check and the exact bound),

.. math::
    B = c_B \max\Big(\|\mu_t\|_{\mathcal H},\; \frac{\sigma}{\sqrt{\max_i k(x_i, x_i)}}\Big),
    \qquad c_B = 1 \;(\text{``DEFAULT_NORM_FACTOR``}),

where ``mu_t = k_t(.)^T (K_t + s I)^{-1} y_t`` is the kernel ridge (GP posterior) mean
with ``s = sigma^2 / c`` and

.. math::
    \|\mu_t\|_{\mathcal H}^2 = y^\top (K + sI)^{-1} K (K + sI)^{-1} y
    = \sum_i \frac{\lambda_i z_i^2}{(\lambda_i + s)^2}

(``K = U diag(lambda) U^T``, ``z = U^T y``).

**Why the confidence set is never empty.** ``mu_t`` lies in ``F_t`` as soon as
``B >= ||mu_t||_H``: its residual is ``mu_t - y = -s (K + sI)^{-1} y``, so
``||mu_t - y||^2 = s^2 y^T (K + sI)^{-2} y <= s y^T (K + sI)^{-1} y <= R_t^2`` (eq. (8)
has ``s y^T (K + sI)^{-1} y`` as its first term). Hence the smallest ``B`` of a non-empty
set (the one ``EmptyConfidenceSetError`` reports, ``emptiness.smallest_passing``) is at
most ``||mu_t||_H``, and the rule's ``B`` is at least ``c_B`` times it. The rule checks
this after round-off and raises ``B`` to ``c_B`` times that smallest ``B`` if ever needed.

**Why these terms.** ``mu_t`` is the model's own estimate of ``f`` (the GP posterior
mean for ``c = 1`` and ``sigma^2`` its noise variance), so ``||mu_t||_H`` is the norm
that the fitted model itself attributes to ``f``; it grows as the data reveal more of
``f``, and with it the exploration. For noise-free data it is an estimate from below
(the minimum-norm interpolant has norm at most ``||f||_H``), so the bound is optimistic
about the part of ``f`` not yet seen; ``factor > 1`` widens it (every bound grows with
``B``: more exploration). ``c_B = 1`` is the narrowest choice with this guarantee; a
``B`` below the norm of every fit of the data empties the set, and ``B`` just above
the smallest non-empty one leaves a set of almost one function (bounds of almost zero
width). The second term keeps ``B`` above
the level of functions no larger than the noise (``|f(x)| <= B sqrt(k(x, x))``) when
the mean is shrunk to zero (data all zero, or noise as large as the signal).

**This is a practical choice, not the theorem.** ``B`` depends on the data, so the
probability-``1 - delta`` guarantee of paper 002 (which needs ``B`` fixed in advance)
does not hold for it; the bound then describes the functions of norm up to ``B`` that
fit the data, with ``B`` growing as needed. Pass an explicit ``rkhs_norm_bound`` for the
theorem (and an ``EmptyConfidenceSetError`` when the data contradict it).

**The choices of B and what each keeps.**

* ``B`` fixed before the data (``rkhs_norm_bound=B``): paper 002's theorem, with
  probability ``1 - delta`` for all rounds at once, if ``||f||_H <= B`` for the kernel
  used (in BoTorch's loop the kernel is refit each round, so the statement is about each
  round's kernel).
* This rule: no probability statement; the set is the functions no more complex than
  the data demand. Under a GP fitted by marginal likelihood ``||mu_t||_H^2`` grows about
  like ``t`` (the outputscale makes ``y^T K^{-1} y ~ t``), so with a fitted noise the
  width is about ``sqrt(t)`` posterior standard deviations; with a stated measurement
  precision on exact data the set shrinks to the minimum-norm interpolant and the
  width to what the remaining radius allows (``noise_level``).
* The smallest ``B`` with a non-empty set: the set is a single function and the bound
  the mean, no exploration at all; not offered.
* Estimates that over-estimate ``||f||_H`` with a stated probability (Tokmak et al.,
  AISTATS 2025; Fiedler et al., 2024) rest on assumptions about how ``f`` behaves
  between the data (random functions of the RKHS as a model for it). They aim above
  ``||f||_H``, which on exact data is at least the minimum-norm interpolant's norm (this
  rule's ``B`` in the limit of no noise), so there they widen the bound, never narrow
  it; not implemented.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.confidence.constant_checks import check_delta
from botorch_mtucb.confidence.martingale_mixture.emptiness import (
    contradicts,
    min_radius_tilde_squared,
    smallest_passing,
)
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    spectral_radius_squared,
)
from botorch_mtucb.utils.checks import check_positive, check_square_matrix

DEFAULT_NORM_FACTOR = 1.0


def posterior_mean_norm(spectrum: GramSpectrum, regularization: float) -> float:
    r"""``||mu_t||_H`` of the kernel ridge mean ``mu_t = k_t^T (K_t + s I)^{-1} y``.

    ``sqrt(sum_i lambda_i z_i^2 / (lambda_i + s)^2)`` from the spectrum of ``K_t``.

    Args:
        spectrum: The spectrum of ``K_t`` and ``z = U^T y``.
        regularization: ``s > 0`` (``sigma^2 / c``; the GP's noise variance for
            ``c = 1``).

    Returns:
        The norm (a float, units of ``y`` per unit of ``sqrt(k)``; 0 without data).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
        ...     posterior_mean_norm)
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum
        >>> spectrum = GramSpectrum.from_gram(torch.eye(1, dtype=torch.float64),
        ...                                   torch.full((1,), 2.0, dtype=torch.float64))
        >>> posterior_mean_norm(spectrum, 1.0)  # mu = k(., x) * 2 / (1 + 1)
        1.0
    """
    s = check_positive(regularization, "regularization")
    lam = spectrum.eigenvalues
    return math.sqrt(float((lam * spectrum.rotated_y**2 / (lam + s) ** 2).sum()))


def choose_rkhs_norm_bound(
    gram: Tensor,
    train_Y: Tensor,
    noise_std: float,
    delta: float,
    mixture_scale: float = 1.0,
    factor: float = DEFAULT_NORM_FACTOR,
) -> float:
    r"""``B = factor * max(||mu_t||_H, sigma / sqrt(max_i k(x_i, x_i)))`` (module docstring).

    The confidence set of paper 002 (Lemma 4.2) at this ``B`` is never empty: it
    contains ``mu_t``. A practical choice without the theorem's guarantee. Computes the
    eigen-decomposition of ``gram`` (``O(t^3)``); with a spectrum at hand, use
    ``rkhs_norm_bound_from_spectrum``.

    Args:
        gram: ``t x t`` Gram matrix ``K_t`` (``t >= 1``; float64 recommended).
        train_Y: ``t x 1`` (or ``t``) observations, zero prior mean (units of ``y``).
        noise_std: ``sigma > 0`` (units of ``y``).
        delta: Confidence level in ``(0, 1)`` (for the radius of the emptiness check).
        mixture_scale: ``c > 0`` of eq. (8) (``s = sigma^2 / c``).
        factor: ``c_B >= 1``.

    Returns:
        ``B > 0`` (a float, units of ``y``).

    Raises:
        ValueError: For no data (``t = 0``: nothing to choose ``B`` from), a non-square
            ``gram``, ``train_Y`` with another number of rows, NaN/inf in ``gram`` or
            ``train_Y``, ``noise_std``, ``mixture_scale`` ``<= 0``, ``factor < 1`` or
            ``delta`` outside ``(0, 1)``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
        ...     choose_rkhs_norm_bound)
        >>> gram = torch.eye(2, dtype=torch.float64)
        >>> Y = torch.tensor([[2.0], [0.0]], dtype=torch.float64)
        >>> choose_rkhs_norm_bound(gram, Y, noise_std=1.0, delta=0.01)  # max(2 / (1 + 1), 1)
        1.0
    """
    t = check_square_matrix(gram, "gram")
    check_positive(noise_std, "noise_std")
    check_delta(delta)
    check_positive(mixture_scale, "mixture_scale")
    if check_positive(factor, "factor") < 1.0:
        raise ValueError(f"factor must be >= 1 (B at least ||mu_t||_H), got {factor}")
    gram, y = _checked_data(gram, t, train_Y)
    return rkhs_norm_bound_from_spectrum(
        GramSpectrum.from_gram(gram, y), float(gram.diagonal().max()), noise_std, delta,
        mixture_scale, factor,
    )  # fmt: skip


def _checked_data(gram: Tensor, t: int, train_Y: Tensor) -> tuple[Tensor, Tensor]:
    """``gram`` (float64, on ``train_Y``'s device) and ``y`` (``t``) of a data rule,
    checked: at least one observation, one per row, no NaN/inf."""
    if t == 0:
        raise ValueError(
            "choosing rkhs_norm_bound from the data needs at least one observation; "
            "pass rkhs_norm_bound"
        )
    y = train_Y.detach().to(torch.float64).reshape(-1)
    if y.numel() != t:
        raise ValueError(f"train_Y must have {t} rows (one per row of gram), got {y.numel()}")
    for name, value in (("gram", gram), ("train_Y", y)):
        if not bool(torch.isfinite(value).all()):
            raise ValueError(f"{name} must not contain NaN or inf")
    return gram.detach().to(device=y.device, dtype=torch.float64), y


def rkhs_norm_bound_from_spectrum(
    spectrum: GramSpectrum,
    largest_prior_variance: float,
    noise_std: float,
    delta: float,
    mixture_scale: float = 1.0,
    factor: float = DEFAULT_NORM_FACTOR,
) -> float:
    r"""``choose_rkhs_norm_bound`` from the spectrum of ``K_t`` (no eigen-decomposition).

    ``B = factor * max(||mu_t||_H, sigma / sqrt(max_i k(x_i, x_i)))``, raised to
    ``factor`` times the smallest ``B`` of a non-empty set if round-off ever needs it.
    The spectrum may be folded over repeated inputs (``repeated_inputs``): every term
    reads only the eigenvalues and ``z = U^T y``.

    Args:
        spectrum: The spectrum of ``K_t`` and ``z = U^T y`` (``t >= 1`` observations).
        largest_prior_variance: ``max_i k(x_i, x_i)`` over the training inputs.
        noise_std, delta, mixture_scale, factor: As ``choose_rkhs_norm_bound``.

    Returns:
        ``B > 0`` (a float, units of ``y``).

    Raises:
        ValueError: For an empty spectrum, NaN/inf in it, or the arguments of
            ``choose_rkhs_norm_bound``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
        ...     rkhs_norm_bound_from_spectrum)
        >>> from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum
        >>> spectrum = GramSpectrum.from_gram(torch.eye(2, dtype=torch.float64),
        ...                                   torch.tensor([2.0, 0.0], dtype=torch.float64))
        >>> rkhs_norm_bound_from_spectrum(spectrum, 1.0, noise_std=1.0, delta=0.01)
        1.0
    """
    sigma = check_positive(noise_std, "noise_std")
    delta = check_delta(delta)
    c = check_positive(mixture_scale, "mixture_scale")
    factor = check_positive(factor, "factor")
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1 (B at least ||mu_t||_H), got {factor}")
    if spectrum.eigenvalues.numel() == 0:
        raise ValueError(
            "choosing rkhs_norm_bound from the data needs at least one observation; "
            "pass rkhs_norm_bound"
        )
    if not all(bool(torch.isfinite(v).all()) for v in (spectrum.eigenvalues, spectrum.rotated_y)):
        raise ValueError("the spectrum (eigenvalues and U^T y) must not contain NaN or inf")
    base_alpha = sigma**2 / c
    noise_level = sigma / math.sqrt(largest_prior_variance) if largest_prior_variance > 0 else sigma
    bound = factor * max(posterior_mean_norm(spectrum, base_alpha), noise_level)
    radius_sq = spectral_radius_squared(spectrum, sigma, c, delta)

    def margin(norm: float) -> float:
        return min_radius_tilde_squared(spectrum, norm, radius_sq, base_alpha)

    if contradicts(margin(bound), float(radius_sq)):  # round-off only (mu_t is in F_t)
        bound = factor * smallest_passing(margin, bound)
    return bound


def leave_one_out_allowance(gram: Tensor, train_Y: Tensor, regularization: float) -> float:
    r"""The largest leave-one-out increment of the squared norm of the kernel ridge mean.

    With ``A = (K + s I)^{-1}``, the mean fitted without observation ``i`` misses ``y_i``
    by ``e_i = (A y)_i / A_ii`` where its (regularized) posterior variance is
    ``r_i = 1 / A_ii - s``; adding the observation back moves the mean by ``e_i / (r_i +
    s)`` times the posterior covariance function at ``x_i``, whose squared norm is
    ``r_i``, and

    .. math::
        \Delta_i = \frac{e_i^2\, r_i}{(r_i + s)^2}, \qquad
        \text{allowance} = \max_i \Delta_i .

    For ``s -> 0`` (exact data) ``Delta_i = e_i^2 / r_i = ||mu_t||_H^2 - ||mu_{t \setminus
    i}||_H^2`` exactly: what observation ``i`` added to the norm of the interpolant; for
    noisy data the noise's share of ``e_i`` is damped by ``r_i / (r_i + s)``. The data rule
    with a stated noise level (``B^2 = ||mu_t||_H^2 + allowance``) lets the next
    observation add as much as the most surprising past one did. **What it keeps**: no
    probability statement under adaptive sampling; if the next point were exchangeable
    with the data, its increment would exceed the largest of the ``t`` leave-one-out
    ones with probability at most ``1 / (t + 1)`` (a conformal argument), and with exact
    data ``f(x)`` lies inside the bound at ``x`` exactly when its increment is within
    the allowance.

    Args:
        gram: ``t x t`` Gram matrix ``K_t`` (``t >= 2``).
        train_Y: ``t x 1`` (or ``t``) observations, zero prior mean.
        regularization: ``s > 0`` (``sigma^2 / c``).

    Returns:
        The allowance (a float ``>= 0``, units of ``y^2`` per unit of ``k``).

    Raises:
        ValueError: For fewer than two observations, a non-square ``gram``, ``train_Y``
            of another length, NaN/inf or ``regularization <= 0``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
        ...     leave_one_out_allowance)
        >>> gram = torch.eye(2, dtype=torch.float64)  # independent points: mu_{-i}(x_i) = 0
        >>> y = torch.tensor([3.0, 1.0], dtype=torch.float64)
        >>> round(leave_one_out_allowance(gram, y, 1e-9), 6)  # y_i^2 / k(x_i, x_i)
        9.0
    """
    t = check_square_matrix(gram, "gram")
    s = check_positive(regularization, "regularization")
    if t < 2:
        raise ValueError(f"the leave-one-out allowance needs at least 2 observations, got {t}")
    y = train_Y.detach().to(torch.float64).reshape(-1)
    if y.numel() != t:
        raise ValueError(f"train_Y must have {t} rows (one per row of gram), got {y.numel()}")
    K = gram.detach().to(device=y.device, dtype=torch.float64)
    if not (bool(torch.isfinite(K).all()) and bool(torch.isfinite(y).all())):
        raise ValueError("gram and train_Y must not contain NaN or inf")
    return _spectral_allowance(GramSpectrum.from_gram(K, y), s)


def _spectral_allowance(spectrum: GramSpectrum, s: float) -> float:
    """``max_i Delta_i`` from the spectrum of ``K`` (its eigenvectors and ``U^T y``):
    ``A = U diag(1 / (lambda + s)) U^T``."""
    U, inverse = spectrum.eigenvectors, 1.0 / (spectrum.eigenvalues + s)
    A_y = U @ (inverse * spectrum.rotated_y)
    A_diagonal = (U**2) @ inverse
    variance = (1.0 / A_diagonal - s).clamp_min(0.0)  # r_i
    residual = A_y / A_diagonal  # e_i
    return float((residual**2 * variance / (variance + s) ** 2).max())


def norm_bound_with_allowance(
    gram: Tensor, train_Y: Tensor, noise_std: float, delta: float, mixture_scale: float = 1.0
) -> float:
    r"""``B = (B_rule^2 + leave_one_out_allowance)^{1/2}``: the data rule for a stated noise
    level (``measurement_noise_std``).

    ``B_rule`` is ``choose_rkhs_norm_bound``'s ``B``. With a small stated level the plain
    rule's confidence set is about one function (the minimum-norm interpolant, whose norm
    is ``B_rule``), so its bound is about the posterior mean and ``f`` escapes it on a
    sizeable part of the domain; the allowance gives the next observation room to add as
    much norm as the most surprising past one did (``leave_one_out_allowance``, which
    states what this keeps). With one observation the allowance is 0.

    Args:
        gram, train_Y, noise_std, delta, mixture_scale: As ``choose_rkhs_norm_bound``.

    Returns:
        ``B > 0`` (a float).

    Raises:
        ValueError: As ``choose_rkhs_norm_bound``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
        ...     choose_rkhs_norm_bound, norm_bound_with_allowance)
        >>> X = torch.linspace(0, 1, 6, dtype=torch.float64)
        >>> gram = torch.exp(-(X[:, None] - X[None, :]) ** 2 / 0.1)
        >>> y = (3 * X).sin()
        >>> plain = choose_rkhs_norm_bound(gram, y, noise_std=1e-3, delta=0.01)
        >>> norm_bound_with_allowance(gram, y, noise_std=1e-3, delta=0.01) > plain
        True
    """
    t = check_square_matrix(gram, "gram")
    check_positive(noise_std, "noise_std")
    check_delta(delta)
    check_positive(mixture_scale, "mixture_scale")
    gram, y = _checked_data(gram, t, train_Y)
    spectrum = GramSpectrum.from_gram(gram, y)  # one eigen-decomposition for both terms
    rule = rkhs_norm_bound_from_spectrum(
        spectrum, float(gram.diagonal().max()), noise_std, delta, mixture_scale
    )
    if t < 2:
        return rule
    return math.sqrt(rule**2 + _spectral_allowance(spectrum, noise_std**2 / mixture_scale))
