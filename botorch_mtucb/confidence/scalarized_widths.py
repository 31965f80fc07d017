"""Widths of the sketched and independent-task baselines of paper 000.

* MT-BKB: ``beta~_t`` of Theorem 3 of paper 000 and its dictionary accuracy ``q``;
* IT-BKB: the width of BKB (Calandriello et al. 2019, COLT, "Gaussian process
  optimization with adaptive sketching: scalable and no regret", Theorem 1);
* MOBO: the GP-UCB width of Srinivas et al. 2010 (Theorem 1), see ``gp_ucb_width``.

A width multiplies the posterior standard deviation directly: ``mean + width * std``.
This is *not* BoTorch's ``UpperConfidenceBound(beta=...)``, which multiplies
``sqrt(beta)``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.utils.checks import (
    as_int,
    check_delta,
    check_eps,
    check_nonnegative,
    check_nonnegative_tensor,
    check_positive,
)


def sketch_distortion(eps: float) -> float:
    r"""``rho = (1 + eps) / (1 - eps)`` of Theorem 3 (BKB's ``alpha``), ``eps in (0, 1)``.

    Raises:
        ValueError: If ``eps`` is outside (0, 1).
    """
    eps = check_eps(eps)
    return (1.0 + eps) / (1.0 - eps)


def mt_bkb_accuracy(eps: float, delta: float, horizon: int) -> float:
    r"""Theorem 3's dictionary accuracy ``q = 6 rho log(4 T / delta) / eps^2``.

    The same expression is BKB's ``q_bar`` (Calandriello et al. 2019, Theorem 1), which
    multiplies the variance *divided by the regularization* there.

    Args:
        eps: Accuracy of the sketch in (0, 1) (paper 000's experiments: 0.5).
        delta: Confidence level in (0, 1).
        horizon: ``T >= 1``.

    Returns:
        ``q`` (a float ``>= 1``).

    Raises:
        ValueError: If ``eps`` or ``delta`` is outside (0, 1) or ``horizon < 1``.
    """
    rho = sketch_distortion(eps)
    delta = check_delta(delta)
    horizon = as_int(horizon, "horizon", 1)
    return 6.0 * rho * math.log(4.0 * horizon / delta) / eps**2


def mt_bkb_width(
    model, rkhs_norm_bound: float, noise_std: float, delta: float, eps: float
) -> Tensor:
    r"""MT-BKB's width ``beta~_t`` of Theorem 3 of paper 000.

    .. math::
        \tilde\beta_t = b \left(1 + \frac{1}{\sqrt{1 - \varepsilon}}\right)
        + \frac{\sigma}{\sqrt{\eta}} \sqrt{2 \log(2/\delta)
        + \rho \sum_{s=1}^t \log\det\big(I_n + \eta^{-1} \tilde\Gamma_{s-1}(x_s, x_s)\big)},
        \qquad \rho = \frac{1 + \varepsilon}{1 - \varepsilon},

    where the sum of log-dets is the model's ``sketched_log_det_sum`` (each queried
    point's block under the sketch it was chosen with) and ``eta`` its
    ``regularization``.

    Args:
        model: A ``NystromVectorValuedGP`` (anything with ``sketched_log_det_sum``
            and ``regularization``).
        rkhs_norm_bound: ``b >= ||f||_Gamma``.
        noise_std: Sub-Gaussian noise level ``sigma >= 0``.
        delta: Confidence level in (0, 1).
        eps: Accuracy of the sketch in (0, 1).

    Returns:
        A 0-d tensor, the width (multiplies ``||Gamma~_t(x, x)||^{1/2}``).

    Raises:
        ValueError: If ``delta`` or ``eps`` is outside (0, 1), or ``b`` or ``sigma``
            is negative.
        TypeError: If ``model`` lacks ``sketched_log_det_sum`` / ``regularization``.
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    rho = sketch_distortion(eps)
    if not hasattr(model, "sketched_log_det_sum") or not hasattr(model, "regularization"):
        raise TypeError(
            "model must provide sketched_log_det_sum and regularization "
            f"(e.g. NystromVectorValuedGP), got {type(model).__name__}"
        )
    eta = check_positive(model.regularization, "model.regularization")
    log_det = torch.as_tensor(model.sketched_log_det_sum).detach().clamp_min(0.0)
    c_eps = 1.0 + 1.0 / math.sqrt(1.0 - eps)
    return b * c_eps + sigma / math.sqrt(eta) * torch.sqrt(
        2.0 * math.log(2.0 / delta) + rho * log_det
    )


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

    Raises:
        ValueError: If ``t < 1`` or ``d < 1``.
    """
    t = as_int(round_index, "round_index", 1)
    d = as_int(dim, "dim", 1)
    return math.sqrt(0.2 * d * math.log(2 * d * t + 1))
