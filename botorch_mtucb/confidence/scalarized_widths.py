"""Confidence widths of paper 000 (Chowdhury & Gopalan, multi-task Bayesian optimization).

* MT-KB: ``beta_t`` of Theorem 2 (``mt_kb_width``);
* MT-BKB: ``beta~_t`` of Theorem 3 (``mt_bkb_width``), the dictionary accuracy ``q``
  (``mt_bkb_accuracy``) and the sketch distortion ``rho`` (``sketch_distortion``).

A width multiplies the posterior standard deviation directly: ``mean + width * std``.
This is *not* BoTorch's ``UpperConfidenceBound(beta=...)``, which multiplies
``sqrt(beta)``. The single-task baselines of paper 000's experiments (IT-KB / IT-BKB,
MOBO) are in ``single_task_widths.py``.
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

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence import mt_kb_width
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from gpytorch.kernels import RBFKernel
        >>> X = torch.rand(5, 2, dtype=torch.float64)
        >>> Y = torch.rand(5, 2, dtype=torch.float64)
        >>> model = VectorValuedGP(X, Y, RBFKernel(), torch.eye(2, dtype=torch.float64), 0.1)
        >>> width = mt_kb_width(model, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05)
        >>> bool(width > 1.0)  # b plus a positive variance term
        True
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    eta = _model_regularization(model, "information_gain", "VectorValuedGP")
    log_det = 2.0 * model.information_gain().detach()
    return b + sigma / math.sqrt(eta) * torch.sqrt(2.0 * math.log(1.0 / delta) + log_det)


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

    Example:
        >>> from types import SimpleNamespace
        >>> from botorch_mtucb.confidence import mt_bkb_width
        >>> model = SimpleNamespace(sketched_log_det_sum=0.0, regularization=1.0)
        >>> width = mt_bkb_width(model, rkhs_norm_bound=0.0, noise_std=1.0, delta=0.5, eps=0.5)
        >>> round(float(width), 6)  # no data: sqrt(2 log(2 / delta))
        1.665109
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    rho = sketch_distortion(eps)
    eta = _model_regularization(model, "sketched_log_det_sum", "NystromVectorValuedGP")
    log_det = torch.as_tensor(model.sketched_log_det_sum).detach().clamp_min(0.0)
    c_eps = 1.0 + 1.0 / math.sqrt(1.0 - eps)
    return b * c_eps + sigma / math.sqrt(eta) * torch.sqrt(
        2.0 * math.log(2.0 / delta) + rho * log_det
    )


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

    Example:
        >>> from botorch_mtucb.confidence import mt_bkb_accuracy
        >>> round(mt_bkb_accuracy(eps=0.5, delta=0.1, horizon=100), 3)  # 72 log(4000)
        597.172
    """
    rho = sketch_distortion(eps)
    delta = check_delta(delta)
    horizon = as_int(horizon, "horizon", 1)
    return 6.0 * rho * math.log(4.0 * horizon / delta) / eps**2


def sketch_distortion(eps: float) -> float:
    r"""``rho = (1 + eps) / (1 - eps)`` of Theorem 3 (BKB's ``alpha``), ``eps in (0, 1)``.

    Args:
        eps: Accuracy of the sketch in (0, 1).

    Returns:
        ``rho > 1`` (a float).

    Raises:
        ValueError: If ``eps`` is outside (0, 1).

    Example:
        >>> from botorch_mtucb.confidence import sketch_distortion
        >>> sketch_distortion(0.5)
        3.0
    """
    eps = check_eps(eps)
    return (1.0 + eps) / (1.0 - eps)


def _model_regularization(model, statistic: str, example: str) -> float:
    """The ``regularization`` of a model that also provides ``statistic``."""
    if not hasattr(model, statistic) or not hasattr(model, "regularization"):
        call = "()" if statistic == "information_gain" else ""
        raise TypeError(
            f"model must provide {statistic}{call} and regularization (e.g. {example}), "
            f"got {type(model).__name__}"
        )
    return check_positive(model.regularization, "model.regularization")
