r"""Pending points in paper 002's bounds: hallucinated observations (GP-BUCB).

GP-BUCB (Desautels, Krause & Burdick 2014, JMLR 15, "Parallelizing
exploration-exploitation tradeoffs in Gaussian process bandit optimization", Section 4)
chooses the points of a batch one at a time and conditions on the points already chosen
with their posterior mean as "hallucinated" observations: the mean stays as it is and
only the uncertainty shrinks. In the martingale-mixture bound of eq. (12),

.. math::
    u^{P}_t(x) = \min_{\alpha} \mu_\alpha(x)
        + \frac{\widetilde R_\alpha}{\sqrt\alpha} \rho^{P}_\alpha(x),

the mean ``mu_alpha`` and the radius ``R~_alpha`` are those of the real observations (a
hallucinated value equal to the mean leaves ``mu_alpha`` unchanged), and ``rho^P_alpha``
is the posterior standard deviation with regularization ``alpha`` on the training
inputs *and* the pending points ``P``. ``PendingInputs`` holds what ``rho^P_alpha``
needs: the augmented Gram matrix, its spectrum (exact bounds; the multi-task bounds'
grid bounds too) and its regularized Cholesky factors (the single-task grid and
analytic bounds). A bound keeps the last one (``bound_base``), its spectrum object builds it
(``spectra``, ``kronecker``): the multi-task bounds hallucinate every task at a pending
point.
"""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.gram_cache import RegularizedGramCache
from botorch_mtucb.confidence.martingale_mixture.radius import GramSpectrum


class PendingInputs:
    r"""The training inputs followed by the pending points, for ``rho^P_alpha`` only.

    Args:
        key: The pending points as given (``m x d``, user space), to recognise them.
        inputs: The rows of the training and pending inputs in the kernel's space
            (``(t + m) x d``; for a spectrum object of scalar observations, their ``(x,
            task)`` rows).
        gram: Their Gram matrix (float64).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
        >>> inputs = torch.zeros(2, 1, dtype=torch.float64)
        >>> pending = PendingInputs(inputs[:1], inputs, torch.ones(2, 2, dtype=torch.float64))
        >>> pending.spectrum().eigenvalues.tolist()
        [0.0, 2.0]
        >>> pending.matches(torch.zeros(1, 1, dtype=torch.float64))
        True
    """

    def __init__(self, key: Tensor, inputs: Tensor, gram: Tensor) -> None:
        self.key = key.detach().clone()
        self.inputs = inputs
        self.cache = RegularizedGramCache(gram)
        self._spectrum: GramSpectrum | None = None

    def matches(self, X_pending: Tensor) -> bool:
        """Whether ``X_pending`` are the points this object was built for."""
        return (
            X_pending.shape == self.key.shape
            and X_pending.dtype == self.key.dtype
            and X_pending.device == self.key.device
            and torch.equal(X_pending, self.key)
        )

    def spectrum(self) -> GramSpectrum:
        """The spectrum of the augmented Gram matrix (``O((t + m)^3)``, cached)."""
        if self._spectrum is None:
            gram = self.cache.gram
            self._spectrum = GramSpectrum.from_gram(gram, gram.new_zeros(gram.shape[-1]))
        return self._spectrum

    def squared_projection(self, cross: Tensor) -> tuple[Tensor, Tensor]:
        """``(U_P^T k_P(x))^2`` (``N x (t + m)``) for ``cross = k_P(x)`` and the
        eigenvalues it refers to (``t + m``): the variance terms of ``SpectralDual``."""
        spectrum = self.spectrum()
        return (cross @ spectrum.eigenvectors) ** 2, spectrum.eigenvalues

    def explained_variance(self, alphas: Tensor, cross: Tensor) -> Tensor:
        """``k_P(x)^T (K_P + alpha I)^{-1} k_P(x)`` (``N x m``) for ``alphas`` (``m``)."""
        return self.cache.explained_variance(self.cache.ensure(alphas), cross)
