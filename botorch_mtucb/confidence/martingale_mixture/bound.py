r"""The martingale-mixture confidence bounds of paper 002 on a growing data set.

Source: paper 002 (Flynn, Reeb et al., *Tighter Confidence Bounds for Sequential Kernel
Regression*), Section 4 and Appendix E.2. ``MartingaleMixtureBound`` holds the data and
the kernel, and composes the radii (``radius.py``), the dual of eq. (12) and its alpha
search (``alpha_search.py``), the factors of ``K_t + alpha I`` for fixed alphas
(``gram_cache.py``) and the empty-set test (``emptiness.py``). All internal computations
run in float64; float32 inputs give float32 outputs.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch
from botorch.models.model import Model
from gpytorch.kernels import Kernel
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    SpectralDual,
    minimize_over_grid,
    posterior_std,
)
from botorch_mtucb.confidence.martingale_mixture.emptiness import (
    EmptyConfidenceSetError,
    contradicts,
    empty_set_message,
    min_radius_tilde_squared,
)
from botorch_mtucb.confidence.martingale_mixture.gram_cache import RegularizedGramCache
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    radius_squared,
    radius_tilde_squared,
    spectral_data_fit,
)
from botorch_mtucb.utils.checks import (
    check_alphas,
    check_delta,
    check_exact_gp,
    check_kernel_values,
    check_normal_floats,
    check_positive,
    check_query_points,
    check_sum_of_squares,
    check_training_data,
    check_unbatched_kernel,
    homoskedastic_noise_std,
    real_output_dtype,
)

_DTYPE = torch.float64


class MartingaleMixtureBound(Module):
    r"""Exact, grid and analytic martingale-mixture confidence bounds (paper 002).

    For data ``(x_s, y_s)_{s <= t}`` with ``y_s = f(x_s) + eps_s``, ``||f||_H <= B`` and
    ``sigma``-sub-Gaussian noise, with probability ``1 - delta`` (for all ``t`` at once)
    ``lower(x) <= f(x) <= upper(x)`` for every ``x``:

    * ``alphas=None``: the exact bound ``max_{f in F_t} f(x)`` (Lemma 4.2, eq. (10)),
      computed as ``min_{alpha > 0} mu_alpha(x) + R~_alpha / sqrt(alpha) rho_alpha(x)``
      (eq. (12)); Kernel CMM-UCB (Section 5.3);
    * a tensor of ``alphas``: the minimum over that grid (Kernel DMM-UCB, Section 5.4);
    * one ``alpha``: the analytic bound of Cor. 4.6 (Kernel AMM-UCB, Section 5.5).

    The lower bounds are the mirror images (``max`` over ``alpha`` of
    ``mu_alpha - R~_alpha / sqrt(alpha) rho_alpha``). Exact ``<=`` grid ``<=`` analytic
    for the upper bound whenever the grid contains the analytic ``alpha`` and lies in the
    exact bound's search range (``alpha_search.search_range``: it holds DMM's grid
    ``{0.1, ..., 10} sigma^2 / c`` unless ``sigma^2 / c < 1e-10 lambda_max``), up to the
    round-off of the two routes (eigen-decomposition and Cholesky factors).

    Costs: the exact bound needs the eigen-decomposition of ``K_t`` (``O(t^3)``, once per
    data set), then ``O(t^2)`` per point for ``U^T k_t(x)`` and ``O(t)`` per ``alpha`` of the
    search. The grid and analytic bounds use the Cholesky factor of ``K_t + alpha I``
    (``O(t^2)`` per point and ``alpha``), bordered in ``O(t^2)`` per added observation.

    Empty confidence set: the constructor and the exact bound check that ``F_t`` is not
    empty (``min_alpha R~_alpha^2 >= 0``) and raise ``EmptyConfidenceSetError`` otherwise;
    the grid and analytic bounds raise it when ``R~_alpha^2 < 0`` at one of their alphas
    (their dual is then unbounded below). At ``alpha = sigma^2 / c``, ``R~_alpha^2 > 0``
    always (Lemma C.2), so the analytic bound there is finite even for an empty ``F_t``
    (it bounds the larger set of Cor. 4.3); ``check_nonempty()`` tests ``F_t`` itself.

    ``.to(device)`` moves the data and caches; the dtype stays float64.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> train_X = torch.rand(20, 2, dtype=torch.float64)
        >>> train_Y = torch.sin(6 * train_X[:, :1]) + 0.1 * torch.randn(20, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(train_X, train_Y, RBFKernel(), 10.0, 0.1, 0.01)
        >>> test_X = torch.rand(5, 2, dtype=torch.float64)
        >>> ucb = bound.upper(test_X)  # exact (CMM-UCB)
        >>> ucb_grid = bound.upper(test_X, alphas=[1e-3, 1e-2, 1e-1])  # DMM-UCB
        >>> bool((bound.lower(test_X) <= ucb).all() and (ucb <= ucb_grid + 1e-9).all())
        True
        >>> _ = bound.append_observations(test_X[:1], torch.zeros(1, 1, dtype=torch.float64))
        >>> bound.num_observations
        21
    """

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        kernel: Kernel,
        rkhs_norm_bound: float,
        noise_std: float,
        delta: float,
        mixture_scale: float = 1.0,
    ) -> None:
        r"""Build the bound from data.

        Args:
            train_X: ``t x d`` inputs (``t`` may be 0).
            train_Y: ``t x 1`` observations (same units as ``f``).
            kernel: A GPyTorch kernel without batch shape; it is copied, cast to
                float64 and frozen (paper 002 assumes a fixed, known kernel).
            rkhs_norm_bound: ``B > 0``, an upper bound on ``||f||_H``.
            noise_std: ``sigma > 0``, the sub-Gaussian noise level (units of ``y``).
            delta: Confidence level in ``(0, 1)``.
            mixture_scale: ``c > 0``, the covariance scale of the mixture
                ``N(0, c K_t)`` of eq. (8) (paper 002 uses ``c = 1`` for RBF and
                ``T^{-d / (2 d + 2 nu)}`` for Matern kernels).

        Raises:
            TypeError: If ``train_X`` / ``train_Y`` are not tensors or ``kernel`` is not
                a GPyTorch ``Kernel``.
            ValueError: For ``train_X`` not ``t x d``, ``train_Y`` not ``t x 1``,
                NaN/inf data, a batched kernel, ``delta`` outside (0, 1),
                ``rkhs_norm_bound``, ``noise_std`` or ``mixture_scale`` ``<= 0``, a
                ``train_Y`` whose sum of squares overflows float64 (or a radius
                ``R_t^2`` that does), or ``rkhs_norm_bound^2``, ``noise_std^2`` or
                ``noise_std^2 / mixture_scale`` outside float64's normal range (each
                would give NaN bounds), or a ``train_X`` at which the kernel overflows
                (``1e300 * X``).
            EmptyConfidenceSetError: If the data contradict ``rkhs_norm_bound`` and
                ``noise_std`` (the confidence set is empty).
        """
        super().__init__()
        check_training_data(train_X, train_Y)
        check_unbatched_kernel(kernel)
        self.rkhs_norm_bound = check_positive(rkhs_norm_bound, "rkhs_norm_bound")
        self.noise_std = check_positive(noise_std, "noise_std")
        self.delta = check_delta(delta)
        self.mixture_scale = check_positive(mixture_scale, "mixture_scale")
        check_normal_floats({
            "rkhs_norm_bound**2": self.rkhs_norm_bound * self.rkhs_norm_bound,
            "noise_std**2": self.noise_std * self.noise_std,
            "noise_std**2 / mixture_scale": self.noise_std * self.noise_std / self.mixture_scale,
        })  # fmt: skip
        check_sum_of_squares(train_Y, "train_Y")
        self.kernel = copy.deepcopy(kernel).to(device=train_X.device, dtype=_DTYPE)
        for parameter in self.kernel.parameters():
            parameter.requires_grad_(False)
        self.kernel.eval()
        self.register_buffer("train_X", train_X.detach().to(_DTYPE).clone())
        self.register_buffer("train_Y", train_Y.detach().to(_DTYPE).clone())
        t = self.train_X.shape[0]
        with torch.no_grad():
            gram = self._k(self.train_X, self.train_X) if t else self.train_X.new_zeros(0, 0)
        check_kernel_values(gram, self.train_X, "train_X")
        # K_t and, for fixed alphas, the factors of K_t + alpha I (Appendix E.2), grown in place.
        self.cache = RegularizedGramCache(gram)
        self._spectrum: GramSpectrum | None = None  # of K_t, recomputed after appends
        self._checked_nonempty = False
        self.cache.ensure(torch.tensor([self.base_alpha], dtype=_DTYPE))
        self.check_nonempty()

    @classmethod
    def from_model(
        cls,
        model: Model,
        rkhs_norm_bound: float,
        noise_std: float | None,
        delta: float,
        mixture_scale: float = 1.0,
    ) -> MartingaleMixtureBound:
        r"""The bound on the data and kernel of a single-output BoTorch GP.

        Args:
            model: A BoTorch single-output exact GP (e.g. ``SingleTaskGP``) whose kernel
                is taken as fixed (its ``covar_module``); it must have neither an
                outcome transform nor an input transform, so that the bound sees the
                raw data.
            rkhs_norm_bound, delta, mixture_scale: As in the constructor.
            noise_std: ``sigma > 0``; ``None`` takes the square root of the model's
                homoskedastic likelihood noise variance.

        Returns:
            A ``MartingaleMixtureBound`` on ``model``'s training data.

        Raises:
            TypeError: If ``model`` is not an exact GP with ``train_inputs``,
                ``train_targets`` and ``covar_module``.
            ValueError: For a model with an outcome or input transform, more than one
                output or batch dimensions, a non-scalar likelihood noise when
                ``noise_std`` is ``None``, and as in the constructor.

        Example:
            >>> import torch
            >>> from botorch.models import SingleTaskGP
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.confidence import MartingaleMixtureBound
            >>> X = torch.rand(8, 1, dtype=torch.float64)
            >>> model = SingleTaskGP(X, X.sin(), covar_module=RBFKernel(), outcome_transform=None)
            >>> bound = MartingaleMixtureBound.from_model(model, 10.0, 0.1, 0.01)
            >>> bound.num_observations
            8
        """
        train_X, train_y = check_exact_gp(model)
        if noise_std is None:
            noise_std = homoskedastic_noise_std(model)
        return cls(
            train_X,
            train_y.unsqueeze(-1),
            model.covar_module,
            rkhs_norm_bound=rkhs_norm_bound,
            noise_std=noise_std,
            delta=delta,
            mixture_scale=mixture_scale,
        )

    @property
    def num_observations(self) -> int:
        """The number of observations ``t``."""
        return self.train_X.shape[0]

    @property
    def base_alpha(self) -> float:
        """``sigma^2 / c``: the analytic bound's ``alpha`` of Section 6.2 / Section 7."""
        return self.noise_std**2 / self.mixture_scale

    def _k(self, X1: Tensor, X2: Tensor) -> Tensor:
        return self.kernel(X1, X2).to_dense()

    def spectrum(self) -> GramSpectrum:
        """The spectrum of ``K_t`` and ``U^T y`` (``O(t^3)`` after new data, cached)."""
        if self._spectrum is None:
            self._spectrum = GramSpectrum.from_gram(self.cache.gram, self.train_Y.reshape(-1))
        return self._spectrum

    def _apply(self, fn, recurse=True):
        """``.to()``, ``.cuda()`` etc. move the bound; its dtype stays float64."""

        def move_only(tensor: Tensor) -> Tensor:
            return tensor.to(device=fn(tensor).device)

        self._spectrum = None  # recomputed where the data now are
        return super()._apply(move_only, recurse)

    # ------------------------------------------------------------------ radius
    @property
    def radius_squared(self) -> Tensor:
        r"""``R_t^2`` of eq. (8) (a 0-d float64 tensor, units of ``y^2``).

        ``y^T (I + c K / sigma^2)^{-1} y + sigma^2 ln det(I + c K / sigma^2)
        + 2 sigma^2 ln(1 / delta)``, computed as ``s y^T (K + s I)^{-1} y + sigma^2
        ln det(I + K / s) + ...`` with ``s = sigma^2 / c``.

        Raises:
            ValueError: If ``R_t^2`` overflows float64 (observations too large for
                ``noise_std``); the bounds would be NaN (``R~^2 = inf - inf``).
        """
        index = self.cache.index(self.base_alpha)
        fit = self.cache.data_fit(self.train_Y, index)[0]  # s y^T (K + s I)^{-1} y
        value = radius_squared(fit, self.cache.log_det(index)[0], self.noise_std, self.delta)
        if not torch.isfinite(value):  # would give NaN bounds (R~^2 = inf - inf)
            raise ValueError(
                f"the radius R_t^2 of paper 002's eq. (8) is {float(value)}: the data fit "
                f"y^T (I + c K / sigma^2)^{{-1}} y (computed as s ||L_s^{{-1}} y||^2, s = "
                f"sigma^2 / c) overflows float64 for the observations "
                f"(train_Y and the Y of append_observations, largest |y| = "
                f"{float(self.train_Y.abs().max()):.3g}) at noise_std = {self.noise_std:g}; "
                "rescale them (and rkhs_norm_bound and noise_std by the same factor)"
            )
        return value

    def radius_tilde_squared(self, alphas: float | Sequence[float] | Tensor) -> Tensor:
        r"""``R~_alpha^2`` of Cor. 4.3 for each ``alpha`` (float64, shape of ``alphas``).

        ``R_t^2 + alpha B^2 - y^T y + y^T Phi (V + alpha I)^{-1} Phi^T y = R_t^2 + alpha B^2
        - alpha y^T (K + alpha I)^{-1} y`` (Lemma C.1). Negative values mean that the
        confidence set is empty.

        Raises:
            ValueError: For non-positive or non-finite ``alphas``.
        """
        shape = torch.as_tensor(alphas).shape
        alpha = check_alphas(alphas).to(self.train_X.device)
        fit = spectral_data_fit(self.spectrum(), alpha)
        return radius_tilde_squared(self.radius_squared, self.rkhs_norm_bound, alpha, fit).reshape(
            shape
        )

    def check_nonempty(self) -> None:
        r"""Raise ``EmptyConfidenceSetError`` if the confidence set ``F_t`` is empty.

        ``F_t`` (Lemma 4.2) is non-empty iff ``min_{alpha > 0} R~_alpha^2 >= 0``
        (``emptiness.py``). Needs the eigen-decomposition of ``K_t`` (``O(t^3)``);
        called by the constructor and by every exact bound.
        """
        if self._checked_nonempty:
            return
        spectrum, radius_sq = self.spectrum(), self.radius_squared
        minimum = min_radius_tilde_squared(
            spectrum, self.rkhs_norm_bound, radius_sq, self.base_alpha
        )
        if contradicts(minimum, float(radius_sq)):
            self._raise_empty()
        self._checked_nonempty = True

    def _raise_empty(self) -> None:
        message = empty_set_message(
            self.spectrum(), self.radius_squared, self.rkhs_norm_bound, self.noise_std,
            self.mixture_scale, self.delta,
        )  # fmt: skip
        raise EmptyConfidenceSetError(message)

    # ---------------------------------------------------------------- updates
    def append_observations(self, X: Tensor, Y: Tensor) -> MartingaleMixtureBound:
        r"""Add observations in place and return ``self`` (Appendix E.2).

        Every cached ``alpha`` (``sigma^2 / c`` and those of the grid bounds used so
        far) is updated in ``O(t^2)`` per observation (``RegularizedGramCache``); the
        eigen-decomposition is recomputed at the next exact bound. Bordering the
        Cholesky factors is as accurate as factorizing ``K_t + alpha I`` afresh. Both
        are limited by the round-off of ``K_t`` itself (about ``eps lambda_max``), which
        ``R_t^2`` and the analytic bound feel relative to ``alpha``: with ``alpha`` ten
        or more decades below ``lambda_max`` (tiny noise, smooth kernels) they move by
        more than ``1e-8`` relative under that round-off, whichever way they are built.

        Args:
            X: ``m x d`` new inputs.
            Y: ``m x 1`` new observations.

        Returns:
            ``self``.

        Raises:
            ValueError: For wrong shapes, NaN/inf, observations whose sum of squares
                overflows float64, or inputs at which the kernel overflows (``1e300 *
                X``), all checked before anything is added.
            EmptyConfidenceSetError: Not raised here; the next bound raises it.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.confidence import MartingaleMixtureBound
            >>> empty = torch.zeros(0, 1, dtype=torch.float64)
            >>> bound = MartingaleMixtureBound(empty, empty, RBFKernel(), 1.0, 0.1, 0.01)
            >>> X = torch.tensor([[0.2], [0.7]], dtype=torch.float64)
            >>> bound.append_observations(X, X.sin()).num_observations
            2
        """
        check_training_data(X, Y, dim=self.train_X.shape[-1], names=("X", "Y"))
        check_sum_of_squares(torch.cat([self.train_Y, Y.detach().to(self.train_Y)]), "Y")
        X = X.detach().to(self.train_X)
        Y = Y.detach().to(self.train_X)
        with torch.no_grad():  # before anything is added: the kernel is finite at X
            check_kernel_values(self._k(torch.cat([self.train_X, X]), X), X, "X")
            for x, y in zip(X, Y):
                x = x.unsqueeze(0)
                t = self.num_observations
                cross = self._k(self.train_X, x).reshape(t) if t else self.train_X.new_zeros(0)
                self.cache.append(cross, self._k(x, x).reshape(()))
                self.train_X = torch.cat([self.train_X, x])
                self.train_Y = torch.cat([self.train_Y, y.reshape(1, 1)])
        self._spectrum = None
        self._checked_nonempty = False
        return self

    # ------------------------------------------------------------------ bounds
    def upper(self, X: Tensor, alphas: float | Sequence[float] | Tensor | None = None) -> Tensor:
        r"""Upper confidence bound ``u_t(x) >= f(x)`` at ``X``.

        Args:
            X: ``batch x d`` points (any leading batch shape).
            alphas: ``None`` for the exact bound (eq. (10) via eq. (12), CMM-UCB); a
                grid of ``alpha > 0`` for ``min_{alpha in A}`` of eq. (12) (DMM-UCB); a
                single ``alpha`` for the analytic bound of Cor. 4.6 (AMM-UCB).

        Returns:
            A ``batch`` tensor in ``X``'s floating dtype, float64 for integer ``X``
            (units of ``f``). Gradients with respect to ``X`` flow through the bound at
            the minimizing ``alpha``.

        Raises:
            TypeError: For boolean or complex ``X``.
            ValueError: For ``X`` not ``... x d`` or with NaN/inf, or non-positive /
                non-finite ``alphas``, or an ``X`` at which the kernel overflows.
            EmptyConfidenceSetError: If the data contradict the assumptions (the
                grid bounds detect it when ``R~_alpha^2 < 0`` at one of their alphas).
        """
        value, _ = self._evaluate(X, alphas, sign=1.0)
        return value

    def lower(self, X: Tensor, alphas: float | Sequence[float] | Tensor | None = None) -> Tensor:
        r"""Lower confidence bound ``l_t(x) <= f(x)``: the mirror image of ``upper``,
        ``max_{alpha} mu_alpha(x) - R~_alpha / sqrt(alpha) rho_alpha(x)``. Same
        arguments, returns and errors as ``upper``."""
        value, _ = self._evaluate(X, alphas, sign=-1.0)
        return value

    def optimal_alpha(
        self,
        X: Tensor,
        alphas: float | Sequence[float] | Tensor | None = None,
        upper: bool = True,
    ) -> Tensor:
        """The ``alpha`` at which the bound at ``X`` is attained (``batch``, float64)."""
        _, alpha = self._evaluate(X, alphas, sign=1.0 if upper else -1.0)
        return alpha

    def _evaluate(
        self, X: Tensor, alphas: float | Sequence[float] | Tensor | None, sign: float
    ) -> tuple[Tensor, Tensor]:
        check_query_points(X, self.train_X.shape[-1])
        dtype = real_output_dtype(X)
        batch_shape, d = X.shape[:-1], X.shape[-1]
        flat = X.reshape(-1, d).to(device=self.train_X.device, dtype=_DTYPE)
        if alphas is None:
            value, alpha = self._exact(flat, sign)
        else:
            value, alpha = self._grid(flat, check_alphas(alphas), sign)
        if flat.requires_grad and not value.requires_grad:
            # a bound that does not depend on X (no data, stationary kernel): zero gradient
            value = value + 0.0 * flat.sum(-1)
        return value.reshape(batch_shape).to(dtype), alpha.reshape(batch_shape)

    def _prior_terms(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """``k(x, x)`` (``N``) and ``k_t(x)`` (``N x t``)."""
        kxx = self.kernel(X, X, diag=True)
        t = self.num_observations
        cross = self._k(X, self.train_X) if t else X.new_zeros(X.shape[0], 0)
        check_kernel_values(cross.detach(), X.detach(), "X")
        return kxx, cross

    def _grid(self, X: Tensor, alphas: Tensor, sign: float) -> tuple[Tensor, Tensor]:
        """``min_{alpha in A}`` of eq. (12) with the cached factors (``O(t^2)`` per
        point and alpha)."""
        with torch.no_grad():
            index = self.cache.ensure(alphas)
            alpha = self.cache.alphas[index]  # m
            weights = self.cache.weights(self.train_Y, index)  # m x t
            fit = self.cache.data_fit(self.train_Y, index)
        rt2 = radius_tilde_squared(self.radius_squared, self.rkhs_norm_bound, alpha, fit)
        if contradicts(float(rt2.min()), float(self.radius_squared)):
            self._raise_empty()
        rt2 = rt2.clamp_min(0.0)
        kxx, cross = self._prior_terms(X)  # N, N x t
        mean = cross @ weights.transpose(0, 1)  # N x m
        std = posterior_std(kxx.unsqueeze(-1), self.cache.explained_variance(index, cross))
        best, best_alpha = minimize_over_grid(sign * mean, std, rt2, alpha)
        return sign * best, best_alpha

    def _exact(self, X: Tensor, sign: float) -> tuple[Tensor, Tensor]:
        """``min_{alpha > 0}`` of eq. (12) from the spectrum of ``K_t``."""
        with torch.no_grad():
            self.check_nonempty()
        kxx, cross = self._prior_terms(X)
        if self.num_observations == 0:  # F_0 = {||f|| <= B}: alpha -> infinity
            value = self.rkhs_norm_bound * posterior_std(kxx, torch.zeros_like(kxx))
            return sign * value, torch.full_like(kxx, math.inf)
        spectrum = self.spectrum()
        projected = cross @ spectrum.eigenvectors  # N x t, v = U^T k_t(x)
        dual = SpectralDual(
            spectrum, self.radius_squared, self.rkhs_norm_bound,
            sign * projected * spectrum.rotated_y, projected**2, kxx,
        )  # fmt: skip
        with torch.no_grad():
            alpha, _ = dual.minimize(self.base_alpha)
        return sign * dual(alpha), alpha  # gradients at the fixed alpha
