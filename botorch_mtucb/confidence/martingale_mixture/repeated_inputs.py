r"""The spectrum of a Gram matrix whose inputs repeat, from the distinct inputs only.

On a finite domain a bandit observes the same points again and again: after ``t``
rounds on ``u`` distinct inputs the ``t x t`` Gram matrix ``K_t = S K_u S^T`` (``S`` the
``t x u`` selection matrix, ``K_u`` the kernel on the distinct inputs) has rank at most
``u``. With the counts ``C = S^T S = diag(c)`` and ``C^{1/2} K_u C^{1/2} = W diag(lambda)
W^T`` (a ``u x u`` eigen-decomposition), an orthonormal eigenbasis of ``K_t`` is ``U =
[S C^{-1/2} W, U_0]`` with ``U_0`` spanning the null space of ``S^T``. Everything paper
002's bounds read from the spectrum follows without the ``t x t`` matrix:

* the eigenvalues ``lambda`` (and ``t - u`` zeros);
* ``U^T y``: ``W^T C^{1/2} ybar`` on the range (``ybar`` the per-input means) and, on the
  null space, only the norm ``||y - S ybar||`` matters (every sum over the spectrum reads
  a null component through ``z_i^2`` at ``lambda_i = 0``, and the projections of
  ``k_t(x) = S k_u(x)`` vanish there), so the ``t - u`` zeros are folded into one
  eigenvalue ``0`` carrying that norm;
* ``U^T k_t(x) = W^T C^{1/2} k_u(x)``: ``basis^T k(inputs, x)`` with ``basis = C^{1/2}
  W`` (and a zero for the folded null slot).

The cost is ``O(u^3 + t d)`` per spectrum instead of ``O(t^3)``; the values are those
of the ``t x t`` route to round-off (the finite-domain loop of MT-CMM-UCB).
When the inputs are all distinct the ``t x t`` route is taken unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor


class InputSpectrum(NamedTuple):
    r"""The spectrum of ``K_t = k(X_t, X_t)`` read through its distinct inputs.

    Attributes:
        inputs: The inputs at which projections are taken (``u x d``: the distinct
            inputs, or ``X_t`` itself when none repeats).
        eigenvalues: ``lambda`` (``r``: ``u``, plus one folded ``0`` when inputs repeat;
            clipped at 0).
        basis: ``u x r``: ``U^T k_t(x) = basis^T k(inputs, x)``.
        rotated: ``U^T Y R`` (``r x m``; the folded slot holds the column norms of the
            residual ``(Y - S ybar) R``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import (
        ...     InputSpectrum, input_spectrum)
        >>> X = torch.tensor([[0.0], [0.0]], dtype=torch.float64)  # one input, twice
        >>> spectrum = input_spectrum(lambda A, B: torch.ones(len(A), len(B),
        ...     dtype=torch.float64), X, torch.tensor([[1.0], [3.0]], dtype=torch.float64))
        >>> isinstance(spectrum, InputSpectrum), spectrum.eigenvalues.round(decimals=12).tolist()
        (True, [2.0, 0.0])
        >>> [round(v, 12) for v in spectrum.rotated[:, 0].tolist()]  # 4 / sqrt 2, |1 - 3| / sqrt 2
        [2.828427124746, 1.414213562373]
    """

    inputs: Tensor
    eigenvalues: Tensor
    basis: Tensor
    rotated: Tensor


class DistinctInputs:
    r"""The distinct rows of a growing ``t x d`` input matrix, kept as rows arrive.

    ``add`` costs ``O(m d)`` for ``m`` rows (a dictionary keyed by each row's values:
    equal floats are one input, as ``torch.unique`` has them); ``groups`` gives the
    distinct rows in order of first appearance, each row's index among them and the
    counts, what ``input_spectrum`` would otherwise sort for (``torch.unique(dim=0)``,
    ``O(t log t)`` per call).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import (
        ...     DistinctInputs)
        >>> inputs = DistinctInputs()
        >>> inputs.add(torch.tensor([[0.5], [0.25], [0.5]]))
        >>> distinct, inverse, counts = inputs.groups()
        >>> distinct.tolist(), inverse.tolist(), counts.tolist()
        ([[0.5], [0.25]], [0, 1, 0], [2, 1])
    """

    def __init__(self) -> None:
        self._index: dict[tuple[float, ...], int] = {}
        self._rows: list[Tensor] = []
        self._inverse: list[int] = []

    def __len__(self) -> int:
        return len(self._inverse)

    @property
    def num_distinct(self) -> int:
        """``u``, the number of distinct rows."""
        return len(self._rows)

    def add(self, X: Tensor) -> None:
        """Record the rows of ``X`` (``m x d``)."""
        for row, key in zip(X, map(tuple, X.tolist())):
            index = self._index.setdefault(key, len(self._rows))
            if index == len(self._rows):
                self._rows.append(row)
            self._inverse.append(index)

    def groups(self) -> tuple[Tensor, Tensor, Tensor]:
        """The distinct rows (``u x d``), each row's index (``t``) and the counts
        (``u``)."""
        inverse = torch.tensor(self._inverse, dtype=torch.long, device=self._rows[0].device)
        counts = torch.bincount(inverse, minlength=len(self._rows))
        return torch.stack(self._rows), inverse, counts


def input_spectrum(
    covariance: Callable[[Tensor, Tensor], Tensor],
    X: Tensor,
    Y: Tensor,
    right: Tensor | None = None,
    groups: tuple[Tensor, Tensor, Tensor] | None = None,
) -> InputSpectrum:
    r"""The spectrum of ``k(X, X)`` and ``U^T Y R``, through the distinct rows of ``X``.

    Args:
        covariance: ``(A, B) -> k(A, B)``, a dense ``|A| x |B|`` matrix (e.g. a GPyTorch
            kernel's ``to_dense()``, or the scalar kernel of ``(x, task)`` rows).
        X: ``t x d`` inputs (``t >= 1``); rows that are equal are one input.
        Y: ``t x m`` observations.
        right: An optional ``m x m`` matrix ``R`` applied on the right (the task
            eigenvectors on the Kronecker route); ``None``: the identity.
        groups: The distinct rows of ``X``, each row's index among them and the counts
            (``DistinctInputs.groups``); ``None``: ``torch.unique`` finds them.

    Returns:
        ``InputSpectrum`` (module docstring). Without repeated inputs: the eigenpairs
        of ``K_t`` itself, ``basis = U`` and ``rotated = (U^T Y) R``, as before.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import (
        ...     input_spectrum)
        >>> X = torch.tensor([[0.0], [1.0], [0.0]], dtype=torch.float64)
        >>> Y = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)
        >>> kernel = RBFKernel()
        >>> spectrum = input_spectrum(lambda A, B: kernel(A, B).to_dense(), X, Y)
        >>> spectrum.inputs.shape[0], spectrum.eigenvalues.shape[0]  # 2 inputs + the null
        (2, 3)
        >>> full = torch.linalg.eigvalsh(kernel(X, X).to_dense().detach())
        >>> torch.allclose(spectrum.eigenvalues.sort().values, full.clamp_min(0), atol=1e-12)
        True
        >>> round(float((spectrum.rotated**2).sum()), 12)  # U orthonormal: ||U^T y|| = ||y||
        14.0
    """
    if groups is None:
        groups = torch.unique(X, dim=0, return_inverse=True, return_counts=True)
    inputs, inverse, counts = groups
    if inputs.shape[0] == X.shape[0]:  # nothing repeats: the t x t route
        K = covariance(X, X)
        lam, U = torch.linalg.eigh(0.5 * (K + K.mT))
        rotated = U.mT @ Y
        if right is not None:
            rotated = rotated @ right
        return InputSpectrum(X, lam.clamp_min(0.0), U, rotated)
    root = counts.to(Y.dtype).sqrt()
    K = covariance(inputs, inputs)
    scaled = root[:, None] * K * root[None, :]  # C^1/2 K_u C^1/2
    lam, W = torch.linalg.eigh(0.5 * (scaled + scaled.mT))
    sums = Y.new_zeros(inputs.shape[0], Y.shape[-1]).index_add_(0, inverse, Y)
    means = sums / counts.to(Y.dtype)[:, None]
    residual = Y - means[inverse]
    rotated = W.mT @ (root[:, None] * means)
    if right is not None:
        rotated, residual = rotated @ right, residual @ right
    null = torch.linalg.vector_norm(residual, dim=0, keepdim=True)  # 1 x m
    eigenvalues = torch.cat([lam.clamp_min(0.0), lam.new_zeros(1)])
    basis = torch.cat([root[:, None] * W, W.new_zeros(W.shape[0], 1)], dim=-1)
    return InputSpectrum(inputs, eigenvalues, basis, torch.cat([rotated, null]))
