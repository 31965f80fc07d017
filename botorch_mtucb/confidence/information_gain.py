"""Information gain 1/2 log det(I + K / eta) of a set of observations.

Source: paper 000, Section 4 (after Theorem 1) and Lemma 4: the mutual information
between f ~ GP(0, Gamma) and observations with N(0, eta I) noise; paper 001, Section 3
(gamma_t^mt and gamma_t^st); paper 002, Section 6 (log det terms of the radii).
"""

from __future__ import annotations

import math

import torch
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from botorch_mtucb.utils.checks import check_positive, check_tensor


def information_gain(kernel_matrix: Tensor, regularization: float) -> Tensor:
    r"""``1/2 log det(I + K / eta)`` for a PSD kernel matrix ``K``.

    Args:
        kernel_matrix: ``... x t x t`` PSD matrix (``t`` may be 0).
        regularization: ``eta > 0``.

    Returns:
        A tensor of shape ``...`` (nats).

    Raises:
        TypeError: If ``K`` is not a real floating-point tensor or
            ``regularization`` not a real number.
        ValueError: If ``K`` is not square or holds NaN/inf, or
            ``regularization <= 0``.
    """
    eta = check_positive(regularization, "regularization")
    check_tensor(kernel_matrix, "kernel_matrix")
    if kernel_matrix.dim() < 2 or kernel_matrix.shape[-1] != kernel_matrix.shape[-2]:
        raise ValueError(f"kernel_matrix must be ... x t x t, got {tuple(kernel_matrix.shape)}")
    t = kernel_matrix.shape[-1]
    if t == 0:
        return kernel_matrix.new_zeros(kernel_matrix.shape[:-2])
    eye = torch.eye(t, dtype=kernel_matrix.dtype, device=kernel_matrix.device)
    chol = psd_safe_cholesky(kernel_matrix + eta * eye)
    return chol.diagonal(dim1=-2, dim2=-1).log().sum(-1) - 0.5 * t * math.log(eta)


def information_gain_increment(posterior_variance: Tensor, regularization: float) -> Tensor:
    r"""``1/2 log(1 + sigma_{t-1}^2(x_t) / eta)``: one step of the chain rule.

    Summed over the queried points, these increments equal ``information_gain`` of
    their kernel matrix (paper 000, Lemma 4 with n = 1; for ``n x n`` posterior blocks
    pass their eigenvalues and sum). ``posterior_variance``: any shape, ``>= 0``.

    Raises:
        TypeError: If ``posterior_variance`` is not a real floating-point tensor or
            ``regularization`` not a real number.
        ValueError: If ``posterior_variance`` holds NaN/inf or ``regularization <= 0``.
    """
    eta = check_positive(regularization, "regularization")
    check_tensor(posterior_variance, "posterior_variance")
    return 0.5 * torch.log1p(posterior_variance.clamp_min(0.0) / eta)
