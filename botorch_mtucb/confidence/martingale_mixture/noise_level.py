r"""The noise level ``sigma`` of a bound built from a model: fitted or the measurement precision.

Paper 002's confidence sets (Lemma 4.2, eq. (8)) hold for noise that is
``sigma``-sub-Gaussian given the past, and then for every larger ``sigma``: Gaussian
noise of standard deviation ``s`` has level ``s``, zero-mean noise bounded by ``[-s, s]``
has level ``s`` (Hoeffding's lemma), and exact observations have every level ``sigma >
0``. A fitted GP's likelihood noise is an estimate, not such a level: on exact data it
falls towards the likelihood's lower constraint (``1e-4`` in variance for BoTorch's
``SingleTaskGP``, 1% of the outcome's standard deviation after ``Standardize``; the noise
prior holds it somewhat above for small data sets), and that small value then drives the
radius ``R_t^2 = ... + sigma^2 ln det(I + c K / sigma^2) + 2 sigma^2 ln(1 / delta)``: the
bound is many posterior standard deviations wide although the data are exact.

``measurement_noise_std`` is what the user knows instead, in the user's outcome units: a
sub-Gaussian level of the measurement error (its standard deviation for Gaussian
noise). For exact evaluations every ``sigma > 0`` is valid and a small one is best
(for example the precision of the recorded numbers); rounding is a fixed function of
``x``, not noise, so the recorded function is what must have norm at most ``B``. The
bound works in the model's transformed units, so

.. math::
    \sigma = \max\Big(\frac{\sigma_{\mathrm{meas}}}{|b|},\;
    \epsilon \sqrt{\max_i k(x_i, x_i)}\Big), \qquad \epsilon = 10^{-4}
    \;(\text{``NUMERICAL_NOISE_FLOOR``}),

with ``y = a + b y~`` the outcome transform (``Standardize``: ``b`` the std of the
training outcomes). The floor keeps ``alpha = sigma^2 / c`` above the round-off of the
Gram matrix's eigenvalues; raising ``sigma`` keeps the guarantee (a larger
sub-Gaussian level is still one), so the floor costs width, never validity.

**What the guarantee then needs.** Paper 002's theorem with an explicit ``B`` fixed in
advance: the noise of every observation ``sigma_meas``-sub-Gaussian given the past (the
user's statement about the measurement, not an estimate from the data), and ``||f~||_H <=
B`` for the model's kernel. With ``B`` chosen from the data there is no probability
statement; the plain rule (``norm_choice.choose_rkhs_norm_bound``) would then be
degenerate for a small stated level (on exact data the confidence set shrinks to about
the minimum-norm interpolant, whose norm is that ``B``, and ``f`` escapes the bound on a
sizeable part of the domain), so with a stated level the data rule adds the largest
leave-one-out increment of the squared norm (``norm_choice.norm_bound_with_allowance``;
``benchmark width-candidates`` measures both, width and where ``f`` escapes).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.utils.checks import check_positive

NUMERICAL_NOISE_FLOOR = 1e-4
FLOOR_FACTOR = 1.5  # noise_at_likelihood_floor: within 50% of the likelihood's constraint


def noise_std_from_measurement(
    measurement_noise_std: float, outcome_scale: float, largest_prior_variance: float
) -> float:
    r"""``sigma`` in transformed units from the measurement precision in the user's units.

    ``max(sigma_meas / |b|, NUMERICAL_NOISE_FLOOR * sqrt(max_i k(x_i, x_i)))`` (module
    docstring).

    Args:
        measurement_noise_std: ``sigma_meas > 0``: a sub-Gaussian level of the
            measurement error in the user's outcome units.
        outcome_scale: ``b != 0`` of the outcome map ``y = a + b y~``.
        largest_prior_variance: ``max_i k(x_i, x_i) >= 0`` over the training inputs
            (transformed units squared); 0 (no data) leaves only ``sigma_meas / |b|``.

    Returns:
        ``sigma > 0`` (a float, transformed units).

    Raises:
        ValueError: For ``measurement_noise_std`` not positive and finite (or so large
            that its square in transformed units overflows), a zero or non-finite
            ``outcome_scale`` or a negative ``largest_prior_variance``.

    Example:
        >>> from botorch_mtucb.confidence.martingale_mixture.noise_level import (
        ...     noise_std_from_measurement)
        >>> noise_std_from_measurement(0.5, outcome_scale=10.0, largest_prior_variance=1.0)
        0.05
        >>> noise_std_from_measurement(1e-12, 10.0, 1.0)  # the numerical floor
        0.0001
    """
    sigma = check_positive(measurement_noise_std, "measurement_noise_std")  # finite too
    scale = float(outcome_scale)
    if scale == 0.0 or not math.isfinite(scale):
        raise ValueError(f"outcome_scale must be non-zero and finite, got {outcome_scale}")
    if not math.isfinite((sigma / abs(scale)) ** 2):
        raise ValueError(
            f"measurement_noise_std / |outcome_scale| = {sigma / abs(scale):.3g}: its square "
            "overflows float64; give a level in the outcome's units"
        )
    prior = float(largest_prior_variance)
    if not prior >= 0.0:
        raise ValueError(f"largest_prior_variance must be >= 0, got {largest_prior_variance}")
    return max(sigma / abs(scale), NUMERICAL_NOISE_FLOOR * math.sqrt(prior))


def resolve_noise_std(
    noise_std: float | None,
    measurement_noise_std: float | None,
    outcome_scale: float,
    train_X: Tensor,
    kernel: Kernel,
    fitted_noise_variance: Callable[[], float],
) -> float:
    r"""The ``sigma`` of a bound built from a model (transformed units).

    ``noise_std`` if given; else ``noise_std_from_measurement`` of
    ``measurement_noise_std`` (the prior variance read from ``kernel`` at ``train_X``);
    else the square root of ``fitted_noise_variance()`` (the likelihood's).

    Args:
        noise_std: ``sigma`` in transformed units, or ``None``.
        measurement_noise_std: ``sigma_meas`` in the user's units, or ``None``.
        outcome_scale: ``b`` of ``y = a + b y~``.
        train_X: ``t x d`` training inputs in the kernel's space.
        kernel: The model's kernel.
        fitted_noise_variance: Returns the likelihood's noise variance (transformed
            units); called only when neither level is given.

    Returns:
        ``sigma`` (a float; ``noise_std`` unchecked, the bound checks it).

    Raises:
        ValueError: If both ``noise_std`` and ``measurement_noise_std`` are given, or
            as ``noise_std_from_measurement``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence.martingale_mixture.noise_level import (
        ...     resolve_noise_std)
        >>> X = torch.rand(3, 1, dtype=torch.float64)
        >>> resolve_noise_std(None, 2.0, 4.0, X, RBFKernel(), lambda: 1e-4)
        0.5
        >>> resolve_noise_std(None, None, 4.0, X, RBFKernel(), lambda: 1e-4)
        0.01
    """
    if noise_std is not None and measurement_noise_std is not None:
        raise ValueError(
            "give noise_std (transformed units) or measurement_noise_std (the user's "
            "outcome units), not both"
        )
    if noise_std is not None:
        return noise_std
    if measurement_noise_std is None:
        return math.sqrt(fitted_noise_variance())
    prior = 0.0
    if train_X.shape[0] > 0:
        with torch.no_grad():
            diagonal = kernel(train_X.to(torch.float64), diag=True)
        prior = float(torch.as_tensor(diagonal).max())
    return noise_std_from_measurement(measurement_noise_std, outcome_scale, prior)


def noise_at_likelihood_floor(model: object, factor: float = FLOOR_FACTOR) -> bool:
    r"""Whether a fitted model's learned noise variance sits at its likelihood's lower
    constraint (within ``factor`` of it): the sign of data that look noise-free, where
    ``measurement_noise_std`` narrows the bound by orders of magnitude.

    Args:
        model: A BoTorch model (anything else, or a model without a learned
            homoskedastic noise with a ``GreaterThan`` constraint, gives ``False``).
        factor: How close counts as "at" the constraint (``noise <= factor * lower``).

    Returns:
        ``True`` if the noise variance is at most ``factor`` times the constraint's lower
        bound.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.confidence.martingale_mixture.noise_level import (
        ...     noise_at_likelihood_floor)
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> model = SingleTaskGP(X, X.sin())
        >>> model.likelihood.noise = 1.0001e-4  # what a fit on exact data ends with
        >>> noise_at_likelihood_floor(model)
        True
    """
    noise_covar = getattr(getattr(model, "likelihood", None), "noise_covar", None)
    constraint = getattr(noise_covar, "raw_noise_constraint", None)
    lower = getattr(constraint, "lower_bound", None)
    if lower is None or not hasattr(noise_covar, "noise"):
        return False
    with torch.no_grad():
        noise = torch.as_tensor(noise_covar.noise).detach()
        floor = torch.as_tensor(lower).detach()
    if noise.numel() == 0 or not bool((floor > 0).all()):
        return False
    return bool((noise <= factor * floor).all())
