"""Agnostic multi-task confidence widths of paper 001 (Sessa et al., NeurIPS 2023).

Source: ``001_ce003bd28dd46059.txt``, Section 2.2 (Theorem 1: widths ``naive``,
``small-b`` and ``large-b``), Appendix A.2.2 (eqs. 24 and 26: the data-dependent
large-b width) and Section 3.1 (Lemma 1 and Theorem 2: ``lambda = (N + b) / (N + bN)``
and the choice of ``b``). The information gains ``gamma_t^mt``, ``gamma_t^st`` and the
effective dimension that the widths take are in ``information_gain.py``.

The multi-task kernel is ``k((i, x), (j, x')) = [K_task(b)]_ij k_X(x, x')`` with
``K_task(b) = I / (1 + b) + b / (1 + b) 11^T / N`` (eq. 2), which is exactly
``UniformSimilarityTaskKernel.from_b(N, b)`` (``omega = 1 / (1 + b)``): no rescaling.

A width multiplies the posterior standard deviation directly (``mean + width * std``),
unlike BoTorch's ``UpperConfidenceBound(beta=...)`` which multiplies ``sqrt(beta)``.

Theorem 1's large-b width (eq. 27) bounds ``sum_l Tr(K_{t_l})`` by ``t``, which holds
only for an input kernel with ``k_X(x, x) <= 1``; ``multitask_widths`` takes the trace
itself (``kernel_trace``), so that eq. 27 stays valid for any kernel. (Lemma 1's
``sigma_t^2 <= lambda`` also assumes ``k_X(x, x) <= 1``; it enters the regret bound, not
the widths.) The data-dependent large-b width (eqs. 24 and 26) needs neither.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import Tensor

from botorch_mtucb.confidence.constant_checks import check_delta, check_task_deviation
from botorch_mtucb.kernels.task_checks import check_b, check_num_tasks
from botorch_mtucb.utils.checks import (
    as_int,
    check_nonnegative,
    check_nonnegative_tensor,
    check_positive,
)

WIDTH_RULES = ("new", "naive", "small_b", "large_b", "large_b_data_dependent")
"""The keys of ``multitask_widths``: the choices of ``width_rule`` in paper 001's bandits."""


def multitask_regularization(num_tasks: int, b: float) -> float:
    r"""The regularization ``lambda = (N + b) / (N + b N)`` of Theorem 2 of paper 001.

    It equals the prior variance ``[K_task(b)]_ii`` of one task (Lemma 1 needs
    ``lambda >= (N + b) / (N + bN)``), is ``1`` at ``b = 0`` and ``1 / N`` as
    ``b -> inf``.

    Args:
        num_tasks: ``N >= 1``.
        b: Kernel parameter ``b >= 0`` (``math.inf`` allowed).

    Returns:
        ``lambda`` as a float in ``[1 / N, 1]``.

    Raises:
        TypeError: If ``num_tasks`` is not an int or ``b`` not a number.
        ValueError: If ``num_tasks < 1`` or ``b < 0`` / NaN.

    Example:
        >>> from botorch_mtucb.confidence import multitask_regularization
        >>> multitask_regularization(4, 2.0)  # (4 + 2) / (4 + 8)
        0.5
    """
    n = check_num_tasks(num_tasks)
    b = check_b(b)
    if math.isinf(b):
        return 1.0 / n
    return (n + b) / (n + b * n)


def theorem2_kernel_parameter(num_tasks: int, task_deviation: float, horizon: int) -> float:
    r"""The kernel parameter ``b`` that Theorem 2 of paper 001 prescribes.

    ``b = N / eps^2`` if ``T <= N``; ``b = 1 / eps^2`` if ``T >= N`` and
    ``eps <= N^{-1/4} T^{-1/2}``; ``b = 0`` otherwise (``b = inf`` when ``eps = 0``
    and one of the first two cases applies).

    Args:
        num_tasks: ``N >= 1``.
        task_deviation: ``epsilon`` in ``[0, 2]`` (eq. 5).
        horizon: ``T >= 1``.

    Returns:
        ``b`` as a float in ``[0, inf]``.

    Raises:
        TypeError: If ``num_tasks`` or ``horizon`` is not an int, or
            ``task_deviation`` not a real number.
        ValueError: For ``N < 1``, ``epsilon`` outside ``[0, 2]`` or ``T < 1``.

    Example:
        >>> from botorch_mtucb.confidence import theorem2_kernel_parameter
        >>> theorem2_kernel_parameter(num_tasks=10, task_deviation=0.5, horizon=5)  # N / eps^2
        40.0
    """
    n = check_num_tasks(num_tasks)
    eps = check_task_deviation(task_deviation)
    horizon = as_int(horizon, "horizon", 1)
    if horizon <= n:
        return math.inf if eps == 0 else n / eps**2
    if eps <= n**-0.25 * horizon**-0.5:
        return math.inf if eps == 0 else 1.0 / eps**2
    return 0.0


def multitask_widths(
    num_tasks: int,
    b: float,
    rkhs_norm_bound: float,
    task_deviation: float,
    regularization: float,
    delta: float,
    info_gain_mt: float | Tensor,
    info_gain_st: float | Tensor,
    t: int,
    noise_std: float = 1.0,
    effective_dimension: float | Tensor | None = None,
    kernel_trace: float | None = None,
) -> dict[str, Tensor]:
    r"""The confidence widths of Theorem 1 of paper 001 and their minimum.

    With ``B' = B / sigma`` (Theorem 1 assumes 1-sub-Gaussian noise; the widths for
    ``sigma``-sub-Gaussian noise are ``sigma`` times those for ``y / sigma``):

    .. math::
        \beta^{naive} &= B'\sqrt{N(1 + b\epsilon^2)}
            + \lambda^{-1/2}\sqrt{2(\gamma^{mt}_t + \ln(1/\delta))} \\
        \beta^{small} &= B'(1 + b\epsilon)\sqrt{\tfrac{1 + bN}{1 + b}}
            + \lambda^{-1/2}\sqrt{2(1 + bN)(\gamma^{st}_t + \ln(N/\delta))} \\
        \beta^{large} &= B'\sqrt{\tfrac{(1 + b\epsilon)^2}{1 + b} + \tfrac{2bN}{1 + b}
            + \tfrac{2b(1 + b\epsilon)^2}{N\lambda^2(1 + b)^3} t^2}
            + \lambda^{-1/2}\sqrt{2(\gamma^{mt}_t + \ln(1/\delta))}

    (eq. 27 for the data-independent large-b bias), where ``t`` in the large-b bias is
    ``kernel_trace`` ``= sum_l Tr(K_{t_l})`` when it is given: the proof of eq. 27
    bounds that trace by ``t``, true only when ``k_X(x, x) <= 1``; the trace keeps the
    width valid for any kernel (``large_b`` is then never below
    ``large_b_data_dependent``). With ``effective_dimension``
    ``S = sum_l Tr(K_{t_l} (K_{t_l} + lambda (1 + b) I)^{-1})`` (eq. 26), the
    data-dependent large-b width of eqs. 24 and 26 is also returned:

    .. math::
        \beta^{large, dd} = B'\sqrt{\tfrac{(1 + b\epsilon)^2}{1 + b}
            + \tfrac{b (N + (1 + b\epsilon) S)^2}{N (1 + b)}}
            + \lambda^{-1/2}\sqrt{2(\gamma^{mt}_t + \ln(1/\delta))},

    and ``new`` is the minimum of all the widths returned. ``b = inf`` gives the
    limits (finite only for ``epsilon = 0``, where ``naive`` is ``sqrt(N)`` times the
    single-task IGP-UCB width on the pooled data).

    Args:
        num_tasks: ``N >= 1``.
        b: Kernel parameter ``b >= 0`` of ``K_task(b)`` (``math.inf`` allowed).
        rkhs_norm_bound: ``B >= max_i ||f_i||``.
        task_deviation: ``epsilon = max_i ||f_i - f_avg|| / B`` in ``[0, 2]`` (eq. 5).
        regularization: ``lambda`` of the regression (eqs. 3-4); Theorem 1 needs
            ``1 / (1 + b) <= lambda <= 1``; a warning is issued if it is below
            ``(N + b) / (N + bN)`` (Lemma 1's condition for the regret bound).
        delta: Confidence level in ``(0, 1)`` (the bound holds w.p. ``1 - 2 delta``).
        info_gain_mt: ``gamma_t^mt`` (nats, a number or a tensor of any shape
            broadcastable with ``info_gain_st``), e.g. ``multitask_information_gain``.
        info_gain_st: ``gamma_t^st`` (nats, a number or a tensor broadcastable with
            ``info_gain_mt``), e.g. the maximum of ``single_task_information_gains``.
        t: Number of observations, an int ``t >= 0``.
        noise_std: Sub-Gaussian noise level ``sigma > 0`` (same units as ``f``).
        effective_dimension: ``S >= 0`` of eq. 26 (``task_effective_dimensions(...)
            .sum()``; a number or a tensor broadcastable with the information gains),
            or ``None`` to skip the data-dependent width.
        kernel_trace: ``sum_l Tr(K_{t_l}) = sum_s k_X(x_s, x_s) >= 0`` over the ``t``
            observations (a number), used for ``t`` in eq. 27; ``None`` takes ``t``, which
            is valid only for an input kernel with ``k_X(x, x) <= 1`` (paper 001's
            assumption; a normalized kernel).

    Returns:
        A dict with float64 tensors of the broadcast shape of the information gains
        (and ``effective_dimension``) under the keys ``"naive"``, ``"small_b"``, ``"large_b"``,
        (``"large_b_data_dependent"``) and ``"new"`` (their minimum); same units as
        ``f``. Values may be ``inf`` at ``b = inf``.

    Raises:
        TypeError: For a non-int ``num_tasks`` or ``t`` (``2.5``), or any other argument that is not a
            real number (a string, ``None``, a bool, a complex number) or, for the
            information gains and ``S``, a real tensor.
        ValueError: For ``b < 0``, ``task_deviation`` outside ``[0, 2]``,
            ``regularization`` outside ``[1 / (1 + b), 1]``, ``delta`` outside
            ``(0, 1)``, negative ``B``, ``t``, ``kernel_trace``, information gains or ``S``,
            information gains and ``S`` of shapes that do not broadcast, or
            ``noise_std <= 0``.

    Example:
        >>> from botorch_mtucb.confidence import multitask_regularization, multitask_widths
        >>> lam = multitask_regularization(3, 1.0)
        >>> widths = multitask_widths(3, 1.0, rkhs_norm_bound=1.0, task_deviation=0.2,
        ...                           regularization=lam, delta=0.05, info_gain_mt=2.0,
        ...                           info_gain_st=1.0, t=20)
        >>> sorted(widths)
        ['large_b', 'naive', 'new', 'small_b']
        >>> bool(widths["new"] == min(widths["naive"], widths["small_b"], widths["large_b"]))
        True
    """
    n = check_num_tasks(num_tasks)
    b = check_b(b)
    eps = check_task_deviation(task_deviation)
    lam = check_positive(regularization, "regularization")
    delta = check_delta(delta)
    sigma = check_positive(noise_std, "noise_std")
    t = as_int(t, "t", 0)
    trace = float(t) if kernel_trace is None else check_nonnegative(kernel_trace, "kernel_trace")
    bound = check_nonnegative(rkhs_norm_bound, "rkhs_norm_bound") / sigma
    lower = 0.0 if math.isinf(b) else 1.0 / (1.0 + b)
    tolerance = 1e-9
    if lam < lower * (1 - tolerance) or lam > 1.0 + tolerance:
        raise ValueError(
            f"regularization must lie in [1 / (1 + b), 1] = [{lower:.6g}, 1] (Theorem 1 of "
            f"paper 001), got {lam}"
        )
    lemma1 = multitask_regularization(n, b)
    if lam < lemma1 * (1 - tolerance):
        warnings.warn(
            f"regularization {lam:.6g} is below (N + b) / (N + bN) = {lemma1:.6g}: the "
            "widths are valid (Theorem 1) but Lemma 1's regret bound does not apply",
            stacklevel=2,
        )
    gains = {
        "info_gain_mt": check_nonnegative_tensor(info_gain_mt, "info_gain_mt"),
        "info_gain_st": check_nonnegative_tensor(info_gain_st, "info_gain_st"),
    }
    if effective_dimension is not None:
        gains["effective_dimension"] = check_nonnegative_tensor(
            effective_dimension, "effective_dimension"
        )
    try:
        shape = torch.broadcast_shapes(*(gain.shape for gain in gains.values()))
    except RuntimeError as error:
        shapes = ", ".join(f"{name} {tuple(gain.shape)}" for name, gain in gains.items())
        raise ValueError(
            f"{' and '.join(gains)} must have broadcastable shapes, got {shapes}"
        ) from error
    gamma_mt = gains["info_gain_mt"].expand(shape)
    gamma_st = gains["info_gain_st"].expand(shape)
    dtype = torch.promote_types(gamma_mt.dtype, torch.float64)
    gamma_mt, gamma_st = gamma_mt.to(dtype), gamma_st.to(dtype)
    variance_mt = lam**-0.5 * torch.sqrt(2.0 * (gamma_mt + math.log(1.0 / delta)))
    inf = torch.full_like(gamma_mt, math.inf)
    if math.isinf(b):  # closed-form limits b -> inf
        naive = bound * math.sqrt(n) + variance_mt if eps == 0 else inf
        small_b = inf
        large_b = bound * math.sqrt(2 * n) + variance_mt if eps == 0 else inf
    else:
        naive = bound * math.sqrt(n * (1 + b * eps**2)) + variance_mt
        small_b = bound * (1 + b * eps) * math.sqrt((1 + b * n) / (1 + b)) + lam**-0.5 * (
            torch.sqrt(2.0 * (1 + b * n) * (gamma_st + math.log(n / delta)))
        )
        bias_sq = (
            (1 + b * eps) ** 2 / (1 + b)
            + 2 * b * n / (1 + b)
            + 2 * b * (1 + b * eps) ** 2 * trace**2 / (n * lam**2 * (1 + b) ** 3)
        )
        large_b = bound * math.sqrt(bias_sq) + variance_mt
    widths = {"naive": naive, "small_b": small_b, "large_b": large_b}
    if effective_dimension is not None:
        s = gains["effective_dimension"].to(dtype)
        if math.isinf(b):
            # S -> 0 as lambda (1 + b) -> inf; the bias tends to B' sqrt(N) (eps = 0).
            data_dependent = bound * math.sqrt(n) + variance_mt if eps == 0 else inf
        else:
            bias_sq = (1 + b * eps) ** 2 / (1 + b) + b * (n + (1 + b * eps) * s) ** 2 / (
                n * (1 + b)
            )
            data_dependent = bound * torch.sqrt(bias_sq) + variance_mt
        widths["large_b_data_dependent"] = data_dependent
    widths = {
        k: sigma * torch.as_tensor(v, dtype=dtype).expand(gamma_mt.shape).clone()
        for k, v in widths.items()
    }
    widths["new"] = torch.stack(list(widths.values())).amin(0)
    return widths
