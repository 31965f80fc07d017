"""Confidence widths of paper 000 (Chowdhury & Gopalan, multi-task Bayesian optimization).

* MT-KB: ``beta_t`` of Theorem 2 (``mt_kb_width``), for the package's models and for
  fitted BoTorch GPs (their likelihood's noise, per task and per point);
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
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.confidence.constant_checks import check_delta, check_eps
from botorch_mtucb.confidence.information_gain import observation_information_gain
from botorch_mtucb.models.botorch_readers import smallest_noise_variance, training_covariances
from botorch_mtucb.utils.checks import as_int, check_nonnegative, check_positive


def mt_kb_width(
    model,
    rkhs_norm_bound: float,
    noise_std: float | None = None,
    delta: float | None = None,
) -> Tensor:
    r"""MT-KB's width ``beta_t`` of Theorem 2 of paper 000.

    .. math::
        \beta_t = b + \frac{\sigma}{\sqrt{\eta}}
        \sqrt{2 \log(1/\delta) + \log\det(I_{nt} + \eta^{-1} G_t)},

    where ``log det(I + G_t / eta) = sum_s log det(I_n + Gamma_{s-1}(x_s, x_s) / eta)``
    (Lemma 4) is twice the model's information gain.

    * A model of this package (``VectorValuedGP``: ``information_gain()`` and
      ``regularization``): ``eta`` is its ``regularization``; ``noise_std=None`` takes
      ``sigma = sqrt(eta)`` (the regularization as the noise variance), so
      ``sigma / sqrt(eta) = 1``. With a prior mean ``c`` (``prior_mean``) the theorem
      is applied to ``f - c``: ``b`` bounds ``||f - c||_Gamma``, the width is unchanged
      and the model's mean includes ``c``. With a noise variance per task
      (``noise_variances``) it is applied to the whitened function ``g = S^{-1} (f -
      c)``, ``S = diag(sqrt(lambda_i / eta))``, ``eta = min_i lambda_i`` (the model's
      ``regularization``): kernel ``S^{-1} Gamma S^{-1}`` with the same RKHS norm, one
      noise level ``eta``, noise ``S^{-1} eps`` still ``sigma``-sub-Gaussian
      (``S >= I``). Theorem 1's proof writes ``g(x) - mu^g_t(x) = Phi_g(x)^T (V_t + eta
      I)^{-1/2} w``, so ``||f(x) - mu_t(x)|| = ||S (g(x) - mu^g_t(x))|| <= beta_t ||S
      Gamma^g_t(x, x) S||^{1/2}`` and ``S Gamma^g_t S`` is the model's ``Gamma_t``: the
      formula holds with ``eta = min_i lambda_i`` and the model's
      ``information_gain()``, the mutual information ``1/2 log det(I + Lambda^{-1/2} G_t
      Lambda^{-1/2})`` (``sigma`` bounds every task's noise). ``noise_std=None`` takes
      each task's ``sqrt(lambda_i)`` as its noise level (the whitened noise is
      ``sqrt(eta)``-sub-Gaussian): the factor is 1.
    * A fitted BoTorch GP (``SingleTaskGP`` with one or several outputs, batched or not,
      ``MultiTaskGP``, ``KroneckerMultiTaskGP``, ``ModelListGP``): the gain is
      ``information_gain(model)``, ``1/2 log det(I + Sigma^{-1/2} K Sigma^{-1/2})`` with
      the likelihood's noise covariance ``Sigma`` (per task and per point). With
      ``Sigma = eta I`` this is Theorem 2 with ``eta`` the noise variance. When the noise
      differs between tasks or points the theorem is applied to the whitened
      observations ``Sigma^{-1/2} y`` (the kernel ``Sigma^{-1/2} Gamma Sigma^{-1/2}``
      has the same RKHS norm ``||f||_Gamma``, regularization 1; the weighted least
      squares of Kirschner & Krause 2018, COLT, for heteroscedastic noise), which gives
      ``beta_t = b + sigma / sqrt(lambda_min(Sigma)) sqrt(2 log(1/delta) + 2 gamma)``:
      ``sigma`` is the noise's sub-Gaussian level in the model's outcome space (after
      its outcome transform) and ``lambda_min(Sigma)`` the smallest noise variance (the
      smallest eigenvalue of a correlated task noise). ``noise_std=None`` takes the
      likelihood's Gaussian noise itself as the noise: the whitened noise is
      ``1``-sub-Gaussian and ``beta_t = b + sqrt(2 log(1/delta) + 2 gamma)``. ``b``
      bounds the RKHS norm of the latent function minus the model's constant prior
      mean, in the model's outcome space; the
      width multiplies the standard deviation of the model's posterior (in its own
      units, or mapped back by an affine outcome transform such as ``Standardize``,
      which leaves the width unchanged).

    Args:
        model: A ``VectorValuedGP`` (anything with ``information_gain()`` and
            ``regularization``) or a fitted BoTorch GP as above.
        rkhs_norm_bound: ``b >= ||f||_Gamma``.
        noise_std: Sub-Gaussian noise level ``sigma >= 0``; ``None``: from the model
            (see above).
        delta: Confidence level in ``(0, 1)`` (required).

    Returns:
        The width (same units as ``f``): a 0-d tensor, or of the ``batch_shape`` of a
        batched BoTorch model.

    Raises:
        ValueError: If ``delta`` is outside (0, 1), ``rkhs_norm_bound`` or
            ``noise_std`` is negative, or a BoTorch model's noise covariance is not
            positive definite.
        TypeError: If ``model`` is neither kind of model (naming what is accepted), or
            a numeric argument is not a real number (a string, ``None`` for ``delta``,
            a bool ...).

    Example:
        >>> import math
        >>> import torch
        >>> from botorch.models import KroneckerMultiTaskGP
        >>> from botorch_mtucb.confidence import information_gain, mt_kb_width
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from gpytorch.kernels import RBFKernel
        >>> X = torch.rand(5, 2, dtype=torch.float64)
        >>> Y = torch.rand(5, 2, dtype=torch.float64)
        >>> model = VectorValuedGP(X, Y, RBFKernel(), torch.eye(2, dtype=torch.float64), 0.1)
        >>> width = mt_kb_width(model, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.05)
        >>> bool(width > 1.0)  # b plus a positive variance term
        True
        >>> gp = KroneckerMultiTaskGP(X, Y)  # a BoTorch model, its likelihood's noise
        >>> width = mt_kb_width(gp, rkhs_norm_bound=1.0, delta=0.05)
        >>> expected = 1.0 + math.sqrt(2 * math.log(20) + 2 * float(information_gain(gp)))
        >>> round(float(width), 10) == round(expected, 10)
        True
    """
    b = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound")
    sigma = None if noise_std is None else check_nonnegative(noise_std, "noise_std")
    delta = check_delta(delta)
    if _is_package_model(model) or not isinstance(model, Model):
        eta = _model_regularization(model, "information_gain", "VectorValuedGP")
        log_det = 2.0 * model.information_gain().detach()
        scale = 1.0 if sigma is None else sigma / math.sqrt(eta)
        return b + scale * torch.sqrt(2.0 * math.log(1.0 / delta) + log_det)
    groups = training_covariances(model)
    gains = [observation_information_gain(g.kernel_matrix, g.noise_covariance) for g in groups]
    log_det = 2.0 * sum(gains[1:], gains[0])
    scale = 1.0 if sigma is None else sigma / smallest_noise_variance(groups).sqrt()
    return b + scale * torch.sqrt(2.0 * math.log(1.0 / delta) + log_det)


def _is_package_model(model: object) -> bool:
    return hasattr(model, "information_gain") and hasattr(model, "regularization")


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
    ``regularization``. A prior mean ``c`` and per-task noise variances are treated as in
    ``mt_kb_width``: the sketch is Algorithm 2 on the whitened function ``S^{-1} (f -
    c)`` (``NystromVectorValuedGP``), Lemma 9's proof has the same form, and ``eta`` is
    the smallest noise variance; ``b`` bounds ``||f - c||_Gamma`` and ``sigma`` every
    task's noise.

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
        botorch = (
            " or be a fitted BoTorch GP (SingleTaskGP, MultiTaskGP, KroneckerMultiTaskGP, "
            "ModelListGP)"
            if statistic == "information_gain"
            else ""
        )
        raise TypeError(
            f"model must provide {statistic}{call} and regularization (e.g. {example})"
            f"{botorch}, got {type(model).__name__}"
        )
    return check_positive(model.regularization, "model.regularization")
