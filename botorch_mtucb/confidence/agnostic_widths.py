"""Agnostic multi-task confidence widths of paper 001 (Sessa et al., NeurIPS 2023).

Source: ``001_ce003bd28dd46059.txt``, Section 2.2 (Theorem 1: widths ``naive``,
``small-b`` and ``large-b``), Appendix A.2.2 (eqs. 24 and 26: the data-dependent
large-b width), Section 3.1 (Lemma 1 and Theorem 2: ``lambda = (N + b) / (N + bN)`` and
the choice of ``b``), Section 2.1 (``gamma_t^mt``) and Appendix A.2.2 (``gamma_t^st``).

The multi-task kernel is ``k((i, x), (j, x')) = [K_task(b)]_ij k_X(x, x')`` with
``K_task(b) = I / (1 + b) + b / (1 + b) 11^T / N`` (eq. 2), which is exactly
``UniformSimilarityTaskKernel.from_b(N, b)`` (``omega = 1 / (1 + b)``): no rescaling.

A width multiplies the posterior standard deviation directly (``mean + width * std``),
unlike BoTorch's ``UpperConfidenceBound(beta=...)`` which multiplies ``sqrt(beta)``.

Theorem 1 also assumes, through its proof (``Tr(K_{t_l}) <= t_l`` in eq. 26 and
``sigma_t^2 <= lambda`` in Lemma 1), a bounded input kernel ``k_X(x, x) <= 1``. The
data-dependent large-b width (eqs. 24 and 26) does not need that assumption.
"""

from __future__ import annotations

import math
import warnings

import torch
from gpytorch.kernels import Kernel
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from botorch_mtucb.confidence.information_gain import information_gain
from botorch_mtucb.utils.checks import (
    as_float,
    as_int,
    check_b,
    check_delta,
    check_nonnegative,
    check_nonnegative_tensor,
    check_num_tasks,
    check_positive,
    check_task_data,
    check_task_deviation,
    check_tensor,
)

WIDTH_NAMES = ("naive", "small_b", "large_b", "large_b_data_dependent", "new")


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

    Raises:
        TypeError: If ``num_tasks`` or ``horizon`` is not an int, or
            ``task_deviation`` not a real number.
        ValueError: For ``N < 1``, ``epsilon`` outside ``[0, 2]`` or ``T < 1``.
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

    (eq. 27 for the data-independent large-b bias). With ``effective_dimension``
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
        t: Number of observations ``t >= 0``.
        noise_std: Sub-Gaussian noise level ``sigma > 0`` (same units as ``f``).
        effective_dimension: ``S >= 0`` of eq. 26 (``task_effective_dimensions(...)
            .sum()``; a number or a tensor broadcastable with the information gains),
            or ``None`` to skip the data-dependent width.

    Returns:
        A dict with float64 tensors of the broadcast shape of the information gains
        (and ``effective_dimension``) under the keys ``"naive"``, ``"small_b"``, ``"large_b"``,
        (``"large_b_data_dependent"``) and ``"new"`` (their minimum); same units as
        ``f``. Values may be ``inf`` at ``b = inf``.

    Raises:
        TypeError: For a non-int ``num_tasks`` or any other argument that is not a
            real number (a string, ``None``, a bool, a complex number) or, for the
            information gains and ``S``, a real tensor.
        ValueError: For ``b < 0``, ``task_deviation`` outside ``[0, 2]``,
            ``regularization`` outside ``[1 / (1 + b), 1]``, ``delta`` outside
            ``(0, 1)``, negative ``B``, ``t``, information gains or ``S``,
            information gains and ``S`` of shapes that do not broadcast, or
            ``noise_std <= 0``.
    """
    n = check_num_tasks(num_tasks)
    b = check_b(b)
    eps = check_task_deviation(task_deviation)
    lam = check_positive(regularization, "regularization")
    delta = check_delta(delta)
    sigma = check_positive(noise_std, "noise_std")
    t = check_nonnegative(t, "t")
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
            + 2 * b * (1 + b * eps) ** 2 * t**2 / (n * lam**2 * (1 + b) ** 3)
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


# --------------------------------------------------------------- information gains
def task_kernel_matrix(
    num_tasks: int,
    b: float,
    dtype: torch.dtype = torch.float64,
    device: torch.device | None = None,
) -> Tensor:
    r"""``K_task(b) = I / (1 + b) + b / (1 + b) 11^T / N`` (paper 001, eq. 2): ``N x N``.

    The same matrix as ``UniformSimilarityTaskKernel.from_b(N, b).covar_matrix``, built
    directly in ``dtype`` (that module stores ``omega`` as a float32 parameter by
    default). ``b = inf`` gives ``11^T / N``.
    """
    num_tasks = check_num_tasks(num_tasks)
    b = check_b(b)
    eye = torch.eye(num_tasks, dtype=dtype, device=device)
    ones = torch.full_like(eye, 1.0 / num_tasks)
    if math.isinf(b):
        return ones
    return eye / (1 + b) + b / (1 + b) * ones


def multitask_information_gain(
    train_X: Tensor,
    train_tasks: Tensor,
    data_kernel: Kernel,
    num_tasks: int,
    b: float,
    regularization: float,
) -> Tensor:
    r"""``gamma_t^mt(b) = 1/2 ln det(I_t + K_t / lambda)`` (paper 001, Section 2.1).

    ``K_t = [K_task(b)]_{i_s i_s'} k_X(x_s, x_s')`` over the observations seen: the
    data-dependent stand-in for the maximum information gain that the reference
    experiments use.

    Args:
        train_X: ``t x d`` inputs.
        train_tasks: ``t`` task indices in ``[0, N - 1]``.
        data_kernel: The input kernel ``k_X`` (a GPyTorch kernel).
        num_tasks: ``N``.
        b: Kernel parameter (``math.inf`` allowed).
        regularization: ``lambda > 0``.

    Returns:
        A 0-d tensor (nats).

    Raises:
        ValueError, TypeError: For mismatched shapes, ``train_X`` holding NaN/inf,
            task indices out of range, ``b < 0`` or ``regularization <= 0``.
    """
    n = check_num_tasks(num_tasks)
    b = check_b(b)
    tasks = check_task_data(train_X, train_tasks, n)
    regularization = check_positive(regularization, "regularization")
    with torch.no_grad():
        task_matrix = task_kernel_matrix(n, b, train_X.dtype, train_X.device)
        gram = (
            data_kernel(train_X, train_X).to_dense() if tasks.numel() else train_X.new_zeros(0, 0)
        )
        gram = task_matrix[tasks][:, tasks] * gram
        return information_gain(gram, regularization)


def single_task_information_gains(
    train_X: Tensor,
    train_tasks: Tensor,
    data_kernel: Kernel,
    num_tasks: int,
    regularization: float,
) -> Tensor:
    r"""``1/2 ln det(I + K_{t_i} / lambda)`` for each task ``i`` (paper 001, eq. 30).

    ``K_{t_i}`` is the input-kernel Gram matrix of task ``i``'s own observations;
    ``gamma_t^st`` is the largest of these values (the data-dependent stand-in for the
    maximum single-task information gain).

    Args:
        train_X, train_tasks, data_kernel, num_tasks: As ``multitask_information_gain``.
        regularization: ``lambda > 0``.

    Returns:
        A tensor of shape ``N`` (nats; 0 for tasks without data).
    """
    n = check_num_tasks(num_tasks)
    tasks = check_task_data(train_X, train_tasks, n)
    check_positive(regularization, "regularization")
    gains = train_X.new_zeros(n)
    with torch.no_grad():
        for i in range(n):
            X_i = train_X[tasks == i]
            if X_i.shape[0]:
                gains[i] = information_gain(data_kernel(X_i, X_i).to_dense(), regularization)
    return gains


def effective_dimension(kernel_matrix: Tensor, regularization: float | Tensor) -> Tensor:
    r"""``Tr(K (K + c I)^{-1})`` of a PSD ``... x t x t`` matrix (paper 001, eq. 26).

    Computed as ``t - c ||L^{-1}||_F^2`` with ``L L^T = K + c I``; ``c = inf`` gives 0.

    Raises:
        TypeError: If ``K`` is not a real tensor or ``c`` not a real number.
        ValueError: If ``K`` is not square or holds NaN/inf, or ``c <= 0``.
    """
    c = as_float(regularization, "regularization", finite=False)
    if math.isnan(c) or c <= 0:
        raise ValueError(f"regularization must be > 0 (math.inf allowed), got {c}")
    check_tensor(kernel_matrix, "kernel_matrix")
    if kernel_matrix.dim() < 2 or kernel_matrix.shape[-1] != kernel_matrix.shape[-2]:
        raise ValueError(f"kernel_matrix must be ... x t x t, got {tuple(kernel_matrix.shape)}")
    t = kernel_matrix.shape[-1]
    if t == 0 or math.isinf(c):
        return kernel_matrix.new_zeros(kernel_matrix.shape[:-2])
    eye = torch.eye(t, dtype=kernel_matrix.dtype, device=kernel_matrix.device)
    chol = psd_safe_cholesky(kernel_matrix + c * eye)
    inverse_root = torch.linalg.solve_triangular(chol, eye.expand_as(chol), upper=False)
    return t - c * inverse_root.square().sum((-1, -2))


def task_effective_dimensions(
    train_X: Tensor,
    train_tasks: Tensor,
    data_kernel: Kernel,
    num_tasks: int,
    b: float,
    regularization: float,
) -> Tensor:
    r"""``Tr(K_{t_l} (K_{t_l} + lambda (1 + b) I)^{-1})`` for each task ``l`` (eq. 26).

    Their sum is the ``effective_dimension`` argument of ``multitask_widths``.

    Returns:
        A tensor of shape ``N`` (0 for tasks without data, and for ``b = inf``).
    """
    n = check_num_tasks(num_tasks)
    b = check_b(b)
    tasks = check_task_data(train_X, train_tasks, n)
    lam = check_positive(regularization, "regularization")
    dims = train_X.new_zeros(n)
    with torch.no_grad():
        for i in range(n):
            X_i = train_X[tasks == i]
            if X_i.shape[0]:
                dims[i] = effective_dimension(data_kernel(X_i, X_i).to_dense(), lam * (1 + b))
    return dims
