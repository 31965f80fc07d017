r"""Martingale-mixture confidence bounds for sequential kernel regression (paper 002).

Source: paper 002 (Flynn, Reeb et al., *Tighter Confidence Bounds for Sequential Kernel
Regression*), Section 4 and Appendix E.2:

* the radius ``R_t^2 = y^T (I + c K / sigma^2)^{-1} y + sigma^2 ln det(I + c K / sigma^2)
  + 2 sigma^2 ln(1 / delta)`` of eq. (8);
* the confidence set ``F_t = {f : ||f_t - y_t|| <= R_t, ||f||_H <= B}`` of Lemma 4.2 and
  ``R~_alpha^2 = R_t^2 + alpha B^2 - alpha y^T (K + alpha I)^{-1} y`` of Cor. 4.3 (with
  Lemma C.1);
* the exact upper bound ``max_{f in F_t} f(x)``: the SOCP of eq. (10), computed here
  through its one-dimensional dual, eq. (12),
  ``min_{alpha > 0} mu_alpha(x) + (R~_alpha / sqrt(alpha)) rho_alpha(x)``;
* the grid bound of DMM-UCB (Section 5.4) and the analytic bound of Cor. 4.6 (AMM-UCB).

Computation. With ``K_t = U diag(lambda) U^T``, ``z = U^T y`` and ``v = U^T k_t(x)``,
every quantity of eq. (12) is a sum over the spectrum,

.. math::
    \mu_\alpha = \sum_i \frac{v_i z_i}{\lambda_i + \alpha},\quad
    \rho_\alpha^2 = k(x, x) - \sum_i \frac{v_i^2}{\lambda_i + \alpha},\quad
    \widetilde R_\alpha^2 = R_t^2 + \alpha B^2 - \sum_i \frac{\alpha z_i^2}{\lambda_i + \alpha},

so one eigen-decomposition of ``K_t`` per data set makes each ``alpha`` cost ``O(t)``
per candidate. The minimizing ``alpha`` is found in log-space by a grid followed by a
golden-section search in the bracket of the best grid point (the objective is
empirically quasiconvex, Section 4.3; any ``alpha`` gives a valid bound, so a poor search
only loosens it). The grid and analytic bounds use ``(K_t + alpha I)^{-1}`` for their
fixed ``alpha``'s, updated recursively in ``O(t^2)`` when an observation is added
(Appendix E.2), together with ``ln det(I + K_t / alpha)``; the radius uses the same
update at ``alpha = sigma^2 / c``. The eigen-decomposition, which cannot be updated in
``O(t^2)``, is recomputed (``O(t^3)``) only when the exact bound is asked for.

All internal computations run in float64; float32 inputs give float32 outputs.
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

from botorch_mtucb.utils.checks import check_alphas, check_delta, check_positive

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0  # 0.618...
_GOLDEN_STEPS = 32  # brackets of two decades shrink to 2 * 0.618^32 = 4e-7 decades
_DTYPE = torch.float64


class EmptyConfidenceSetError(ValueError):
    """The confidence set of paper 002 (Lemma 4.2) is empty.

    The data contradict the assumptions ``||f||_H <= rkhs_norm_bound`` and
    ``sigma``-sub-Gaussian noise with ``sigma = noise_std`` (an event of probability at
    most ``delta`` when the assumptions hold): the dual of eq. (11) is unbounded below
    and no finite bound exists. The message gives the smallest ``rkhs_norm_bound`` (at
    the given ``noise_std``) and the smallest ``noise_std`` (at the given
    ``rkhs_norm_bound``) for which the set is not empty.
    """


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
    for the upper bound whenever the grid contains the analytic ``alpha``.

    Costs: the exact bound needs the eigen-decomposition of ``K_t`` (``O(t^3)``, once per
    data set), then ``O(t^2)`` per point for ``U^T k_t(x)`` and ``O(t)`` per ``alpha`` of the
    search. The grid and analytic bounds use ``(K_t + alpha I)^{-1}`` (``O(t^2)`` per point
    and ``alpha``), kept up to date in ``O(t^2)`` per added observation.

    Empty confidence set: the constructor and the exact bound check that ``F_t`` is not
    empty (``min_alpha R~_alpha^2 >= 0``) and raise ``EmptyConfidenceSetError`` otherwise;
    the grid and analytic bounds raise it when ``R~_alpha^2 < 0`` at one of their alphas
    (their dual is then unbounded below). At ``alpha = sigma^2 / c``, ``R~_alpha^2 > 0``
    always (Lemma C.2), so the analytic bound there is finite even for an empty ``F_t``
    (it bounds the larger set of Cor. 4.3); ``check_nonempty()`` tests ``F_t`` itself.

    Example:
        >>> bound = MartingaleMixtureBound(train_X, train_Y, RBFKernel(), 10.0, 0.1, 0.01)
        >>> ucb = bound.upper(test_X)                        # exact (CMM)
        >>> ucb_grid = bound.upper(test_X, alphas=[1e-3, 1e-2, 1e-1])  # DMM
        >>> bound.append_observations(x_new, y_new)          # O(t^2) for the grids
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
                NaN/inf data, a batched kernel, ``delta`` outside (0, 1), or
                ``rkhs_norm_bound``, ``noise_std`` or ``mixture_scale`` ``<= 0``.
            EmptyConfidenceSetError: If the data contradict ``rkhs_norm_bound`` and
                ``noise_std`` (the confidence set is empty).
        """
        super().__init__()
        if not isinstance(train_X, Tensor) or not isinstance(train_Y, Tensor):
            raise TypeError("train_X and train_Y must be torch.Tensors")
        if train_X.dim() != 2:
            raise ValueError(f"train_X must be t x d, got shape {tuple(train_X.shape)}")
        if train_Y.dim() != 2 or train_Y.shape[-1] != 1 or train_Y.shape[0] != train_X.shape[0]:
            raise ValueError(
                f"train_Y must be t x 1 with t = {train_X.shape[0]} (the rows of train_X), "
                f"got shape {tuple(train_Y.shape)}"
            )
        if not torch.isfinite(train_X).all() or not torch.isfinite(train_Y).all():
            raise ValueError("train_X and train_Y must not contain NaN or inf")
        if not isinstance(kernel, Kernel):
            raise TypeError(f"kernel must be a gpytorch Kernel, got {type(kernel).__name__}")
        if kernel.batch_shape != torch.Size([]):
            raise ValueError(f"kernel must not be batched, got batch_shape {kernel.batch_shape}")
        self.rkhs_norm_bound = check_positive(rkhs_norm_bound, "rkhs_norm_bound")
        self.noise_std = check_positive(noise_std, "noise_std")
        self.delta = check_delta(delta)
        self.mixture_scale = check_positive(mixture_scale, "mixture_scale")
        self.kernel = copy.deepcopy(kernel).to(device=train_X.device, dtype=_DTYPE)
        for parameter in self.kernel.parameters():
            parameter.requires_grad_(False)
        self.kernel.eval()
        self.register_buffer("train_X", train_X.detach().to(_DTYPE).clone())
        self.register_buffer("train_Y", train_Y.detach().to(_DTYPE).clone())
        t = self.train_X.shape[0]
        # Storage with spare capacity, so that an observation is added in place: the
        # leading t x t blocks are K_t and (K_t + alpha I)^{-1}.
        with torch.no_grad():
            gram = self._k(self.train_X, self.train_X) if t else self.train_X.new_zeros(0, 0)
        self.register_buffer("_gram_storage", gram)
        # Spectrum of K_t (recomputed lazily after appends).
        for name in ("_eigenvalues", "_eigenvectors", "_rotated_y"):
            self.register_buffer(name, None)
        self._eigen_valid = False
        self._checked_nonempty = False
        # Regularized inverses (K_t + alpha I)^{-1} for fixed alphas (Appendix E.2),
        # their weights (K_t + alpha I)^{-1} y and ln det(I + K_t / alpha).
        self.register_buffer("_cache_alphas", self.train_X.new_zeros(0))
        self.register_buffer("_inverse_storage", self.train_X.new_zeros(0, t, t))
        self.register_buffer("_weights_storage", self.train_X.new_zeros(0, t))
        self.register_buffer("_cache_logdet", self.train_X.new_zeros(0))
        self._ensure_cached(torch.tensor([self.base_alpha], dtype=_DTYPE))
        self.check_nonempty()

    # ------------------------------------------------------------------ basics
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
        """
        if getattr(model, "outcome_transform", None) is not None:
            raise ValueError(
                "model has an outcome transform: the bound must see the raw observations "
                "(paper 002 assumes y = f(x) + noise with ||f||_H <= B). Build the model "
                "with outcome_transform=None, or use MartingaleMixtureBound(train_X, "
                "train_Y, kernel, ...) directly"
            )
        if getattr(model, "input_transform", None) is not None:
            raise ValueError(
                "model has an input transform: build the model without it (the bound "
                "evaluates the kernel on raw inputs), or use MartingaleMixtureBound(...) "
                "directly on transformed inputs"
            )
        for attribute in ("train_inputs", "train_targets", "covar_module"):
            if getattr(model, attribute, None) is None:
                raise TypeError(
                    f"model must be a BoTorch exact GP with {attribute} (e.g. SingleTaskGP), "
                    f"got {type(model).__name__}"
                )
        if getattr(model, "num_outputs", 1) != 1:
            raise ValueError(f"model must have one output, got {model.num_outputs}")
        train_X = model.train_inputs[0]
        train_y = model.train_targets
        if train_X.dim() != 2 or train_y.dim() != 1:
            raise ValueError(
                "model must not be batched: expected train_inputs t x d and train_targets t, "
                f"got {tuple(train_X.shape)} and {tuple(train_y.shape)}"
            )
        if noise_std is None:
            noise = model.likelihood.noise.detach().reshape(-1)
            if noise.numel() != 1:
                raise ValueError(
                    "the model's likelihood noise is not a single value; pass noise_std"
                )
            noise_std = math.sqrt(float(noise))
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

    @property
    def _gram(self) -> Tensor:
        """``K_t`` (``t x t``, a view of the storage)."""
        t = self.num_observations
        return self._gram_storage[:t, :t]

    @property
    def _cache_inverse(self) -> Tensor:
        """``(K_t + alpha I)^{-1}`` for the cached alphas (``m x t x t``, a view)."""
        t = self.num_observations
        return self._inverse_storage[:, :t, :t]

    @property
    def _cache_weights(self) -> Tensor:
        """``(K_t + alpha I)^{-1} y`` for the cached alphas (``m x t``, a view)."""
        t = self.num_observations
        return self._weights_storage[:, :t]

    def _reserve(self, size: int) -> None:
        """Grow the storage (doubling) so that it holds ``size`` observations."""
        capacity = self._gram_storage.shape[-1]
        if size <= capacity:
            return
        capacity = max(size, 2 * capacity, 16)
        t, m = self.num_observations, self._cache_alphas.numel()
        gram = self.train_X.new_zeros(capacity, capacity)
        gram[:t, :t] = self._gram
        inverse = self.train_X.new_zeros(m, capacity, capacity)
        inverse[:, :t, :t] = self._cache_inverse
        weights = self.train_X.new_zeros(m, capacity)
        weights[:, :t] = self._cache_weights
        self._gram_storage, self._inverse_storage, self._weights_storage = gram, inverse, weights

    # ------------------------------------------------------------------ radius
    @property
    def radius_squared(self) -> Tensor:
        r"""``R_t^2`` of eq. (8) (a 0-d float64 tensor, units of ``y^2``).

        ``y^T (I + c K / sigma^2)^{-1} y + sigma^2 ln det(I + c K / sigma^2)
        + 2 sigma^2 ln(1 / delta)``, computed as ``s y^T (K + s I)^{-1} y + sigma^2
        ln det(I + K / s) + ...`` with ``s = sigma^2 / c``.
        """
        index = self._cache_index(self.base_alpha)
        s = self.base_alpha
        sigma2 = self.noise_std**2
        quadratic = s * (self.train_Y.reshape(-1) @ self._cache_weights[index])
        return (
            quadratic
            + sigma2 * self._cache_logdet[index]
            + 2.0 * sigma2 * math.log(1.0 / self.delta)
        )

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
        self._ensure_eigen()
        return self._radius_tilde_sq_spectral(alpha).reshape(shape)

    def _radius_tilde_sq_spectral(self, alpha: Tensor) -> Tensor:
        """``R~^2`` for ``alpha`` of any shape, from the spectrum."""
        lam, z2 = self._eigenvalues, self._rotated_y**2
        ratio = alpha.unsqueeze(-1) / (lam + alpha.unsqueeze(-1))
        return self.radius_squared + alpha * self.rkhs_norm_bound**2 - (ratio * z2).sum(-1)

    # ------------------------------------------------------------ eigen system
    def _ensure_eigen(self) -> None:
        if self._eigen_valid:
            return
        t = self.num_observations
        if t == 0:
            self._eigenvalues = self.train_X.new_zeros(0)
            self._eigenvectors = self.train_X.new_zeros(0, 0)
            self._rotated_y = self.train_X.new_zeros(0)
        else:
            gram = 0.5 * (self._gram + self._gram.transpose(0, 1))
            eigenvalues, eigenvectors = torch.linalg.eigh(gram)
            self._eigenvalues = eigenvalues.clamp_min(0.0)  # K_t is PSD
            self._eigenvectors = eigenvectors
            self._rotated_y = eigenvectors.transpose(0, 1) @ self.train_Y.reshape(-1)
        self._eigen_valid = True

    def _alpha_range(self) -> tuple[float, float]:
        """``[alpha_lo, alpha_hi]`` of the search: 8 decades around ``sigma^2 / c`` and the
        spectrum, floored at ``1e-10 lambda_max`` (round-off of the eigenvalues)."""
        lam_max = float(self._eigenvalues.max()) if self.num_observations else 0.0
        s = self.base_alpha
        low = max(1e-8 * min(s, lam_max if lam_max > 0 else s), 1e-10 * lam_max)
        high = 1e8 * max(s, lam_max)
        return low, high

    # ---------------------------------------------------------- emptiness
    def _min_radius_tilde_sq(self, norm_bound: float, radius_sq: Tensor) -> Tensor:
        r"""``min_{alpha > 0} R~_alpha^2`` for a norm bound and a radius (convex in alpha).

        ``d R~^2 / d alpha = B^2 - sum_i z_i^2 lambda_i / (lambda_i + alpha)^2`` is
        increasing; its root is found by bisection in log-space.
        """
        lam, z2 = self._eigenvalues, self._rotated_y**2
        if lam.numel() == 0:
            return radius_sq
        scale = max(float(lam.max()), self.base_alpha)
        low = torch.tensor(math.log(1e-16 * scale), dtype=_DTYPE, device=lam.device)
        high = torch.tensor(math.log(1e16 * scale), dtype=_DTYPE, device=lam.device)
        b2 = norm_bound**2

        def slope(log_alpha: Tensor) -> Tensor:
            alpha = log_alpha.exp()
            return b2 - (z2 * lam / (lam + alpha) ** 2).sum()

        for _ in range(80):
            middle = 0.5 * (low + high)
            if slope(middle) < 0:
                low = middle
            else:
                high = middle
        alpha = torch.stack([low.exp(), high.exp()])
        values = radius_sq + alpha * b2 - (alpha[:, None] / (lam + alpha[:, None]) * z2).sum(-1)
        return values.min()

    def _radius_sq_for_noise(self, noise_std: float) -> Tensor:
        """``R_t^2`` of eq. (8) for another noise level (same ``c`` and ``delta``)."""
        lam, z2 = self._eigenvalues, self._rotated_y**2
        ratio = self.mixture_scale * lam / noise_std**2
        return (
            (z2 / (1.0 + ratio)).sum()
            + noise_std**2 * torch.log1p(ratio).sum()
            + 2.0 * noise_std**2 * math.log(1.0 / self.delta)
        )

    def _empty_tolerance(self) -> float:
        return 1e-10 * float(self.radius_squared)

    def check_nonempty(self) -> None:
        r"""Raise ``EmptyConfidenceSetError`` if the confidence set ``F_t`` is empty.

        ``F_t`` (Lemma 4.2) is non-empty iff ``min_{alpha > 0} R~_alpha^2 >= 0`` (weak
        and strong duality for ``min_{||f|| <= B} ||f_t - y_t||^2``). Needs the
        eigen-decomposition of ``K_t`` (``O(t^3)``); called by the constructor and by
        every exact bound.
        """
        if self._checked_nonempty:
            return
        self._ensure_eigen()
        minimum = self._min_radius_tilde_sq(self.rkhs_norm_bound, self.radius_squared)
        if float(minimum) < -self._empty_tolerance():
            raise EmptyConfidenceSetError(self._empty_message())
        self._checked_nonempty = True

    def _empty_message(self) -> str:
        """Which assumptions the data contradict, and by how much."""
        self._ensure_eigen()
        radius_sq = self.radius_squared

        def nonempty_for_norm(norm: float) -> bool:
            return float(self._min_radius_tilde_sq(norm, radius_sq)) >= 0.0

        def nonempty_for_noise(noise: float) -> bool:
            radius = self._radius_sq_for_noise(noise)
            return float(self._min_radius_tilde_sq(self.rkhs_norm_bound, radius)) >= 0.0

        smallest_norm = _smallest_passing(nonempty_for_norm, self.rkhs_norm_bound)
        smallest_noise = _smallest_passing(nonempty_for_noise, self.noise_std)
        return (
            "the martingale-mixture confidence set (paper 002, Lemma 4.2) is empty: no "
            f"function with RKHS norm <= rkhs_norm_bound = {self.rkhs_norm_bound:g} fits the "
            f"{self.num_observations} observations within the radius R_t = "
            f"{math.sqrt(float(radius_sq)):.6g} implied by noise_std = {self.noise_std:g} and "
            f"delta = {self.delta:g}. The data contradict the assumed norm bound at this noise "
            f"level: the set is non-empty only for rkhs_norm_bound >= {smallest_norm:.6g} "
            f"(with noise_std = {self.noise_std:g}) or for noise_std >= {smallest_noise:.6g} "
            f"(with rkhs_norm_bound = {self.rkhs_norm_bound:g}). Increase rkhs_norm_bound or "
            "noise_std, or check the data and the kernel."
        )

    # ---------------------------------------------------- recursive inverses
    def _cache_index(self, alpha: float) -> int:
        matches = (self._cache_alphas == alpha).nonzero()
        if matches.numel() == 0:
            self._ensure_cached(torch.tensor([alpha], dtype=_DTYPE))
            matches = (self._cache_alphas == alpha).nonzero()
        return int(matches[0, 0])

    def _ensure_cached(self, alphas: Tensor) -> Tensor:
        """Indices of ``alphas`` in the cache; missing ones are added from the spectrum."""
        alphas = alphas.to(self.train_X.device)
        missing = [a for a in alphas.tolist() if not (self._cache_alphas == a).any()]
        if missing:
            new = torch.tensor(sorted(set(missing)), dtype=_DTYPE, device=self.train_X.device)
            self._ensure_eigen()
            lam, U, z = self._eigenvalues, self._eigenvectors, self._rotated_y
            inverse_diag = 1.0 / (lam + new[:, None])  # m x t
            inverse = (U * inverse_diag[:, None, :]) @ U.transpose(0, 1)  # m x t x t
            weights = (inverse_diag * z) @ U.transpose(0, 1)  # m x t
            logdet = torch.log1p(lam / new[:, None]).sum(-1)  # m
            capacity = self._gram_storage.shape[-1]
            t = self.num_observations
            inverse_storage = self.train_X.new_zeros(new.numel(), capacity, capacity)
            inverse_storage[:, :t, :t] = inverse
            weights_storage = self.train_X.new_zeros(new.numel(), capacity)
            weights_storage[:, :t] = weights
            self._cache_alphas = torch.cat([self._cache_alphas, new])
            self._inverse_storage = torch.cat([self._inverse_storage, inverse_storage])
            self._weights_storage = torch.cat([self._weights_storage, weights_storage])
            self._cache_logdet = torch.cat([self._cache_logdet, logdet])
        lookup = (self._cache_alphas[None, :] == alphas[:, None]).float().argmax(-1)
        return lookup

    # ---------------------------------------------------------------- updates
    def append_observations(self, X: Tensor, Y: Tensor) -> MartingaleMixtureBound:
        r"""Add observations in place and return ``self`` (Appendix E.2).

        For each new ``(x, y)``, with ``A = (K_t + alpha I)^{-1}``, ``a = A k_t(x)`` and
        ``s = k(x, x) + alpha - k_t(x)^T a`` (the Schur complement):

        ``(K_{t+1} + alpha I)^{-1} = [[A + a a^T / s, -a / s], [-a^T / s, 1 / s]]`` and
        ``ln det(I + K_{t+1} / alpha) = ln det(I + K_t / alpha) + ln(s / alpha)``,

        for every cached ``alpha`` (``sigma^2 / c`` and those of the grid bounds used
        so far): ``O(t^2)`` per observation and ``alpha``. The eigen-decomposition is
        recomputed at the next exact bound.

        Args:
            X: ``m x d`` new inputs.
            Y: ``m x 1`` new observations.

        Raises:
            ValueError: For wrong shapes or NaN/inf.
            EmptyConfidenceSetError: Not raised here; the next bound raises it.
        """
        if not isinstance(X, Tensor) or not isinstance(Y, Tensor):
            raise TypeError("X and Y must be torch.Tensors")
        d = self.train_X.shape[-1]
        if X.dim() != 2 or X.shape[-1] != d:
            raise ValueError(f"X must be m x {d}, got shape {tuple(X.shape)}")
        if Y.dim() != 2 or Y.shape != (X.shape[0], 1):
            raise ValueError(f"Y must be m x 1 with m = {X.shape[0]}, got {tuple(Y.shape)}")
        if not torch.isfinite(X).all() or not torch.isfinite(Y).all():
            raise ValueError("X and Y must not contain NaN or inf")
        X = X.detach().to(self.train_X)
        Y = Y.detach().to(self.train_X)
        with torch.no_grad():
            for x, y in zip(X, Y):
                self._append_one(x.unsqueeze(0), y.reshape(1))
        return self

    def _append_one(self, x: Tensor, y: Tensor) -> None:
        t = self.num_observations
        k_new = self._k(self.train_X, x).reshape(t) if t else self.train_X.new_zeros(0)
        kxx = self._k(x, x).reshape(())
        self._reserve(t + 1)
        alphas = self._cache_alphas  # m
        inverse, weights = self._cache_inverse, self._cache_weights  # views, t x t and t
        a = inverse @ k_new  # m x t
        schur = (kxx + alphas - a @ k_new).clamp_min(alphas)  # m, = alpha + rho^2 >= alpha
        residual = (y - weights @ k_new) / schur  # m: (y - mu_alpha(x)) / s
        # In place: [[A + a a^T / s, -a / s], [-a^T / s, 1 / s]] (Appendix E.2).
        inverse.baddbmm_(a.unsqueeze(-1), (a / schur[:, None]).unsqueeze(-2))
        self._inverse_storage[:, t, :t] = -a / schur[:, None]
        self._inverse_storage[:, :t, t] = -a / schur[:, None]
        self._inverse_storage[:, t, t] = 1.0 / schur
        weights.sub_(a * residual[:, None])
        self._weights_storage[:, t] = residual
        self._cache_logdet = self._cache_logdet + torch.log(schur / alphas)
        self._gram_storage[t, :t] = k_new
        self._gram_storage[:t, t] = k_new
        self._gram_storage[t, t] = kxx
        self.train_X = torch.cat([self.train_X, x])
        self.train_Y = torch.cat([self.train_Y, y.reshape(1, 1)])
        self._eigen_valid = False
        self._checked_nonempty = False

    # ------------------------------------------------------------------ bounds
    def upper(self, X: Tensor, alphas: float | Sequence[float] | Tensor | None = None) -> Tensor:
        r"""Upper confidence bound ``u_t(x) >= f(x)`` at ``X``.

        Args:
            X: ``batch x d`` points (any leading batch shape).
            alphas: ``None`` for the exact bound (eq. (10) via eq. (12), CMM-UCB); a
                grid of ``alpha > 0`` for ``min_{alpha in A}`` of eq. (12) (DMM-UCB); a
                single ``alpha`` for the analytic bound of Cor. 4.6 (AMM-UCB).

        Returns:
            A ``batch`` tensor in ``X``'s dtype (units of ``f``). Gradients with
            respect to ``X`` flow through the bound at the minimizing ``alpha``.

        Raises:
            ValueError: For ``X`` not ``... x d`` or with NaN/inf, or non-positive /
                non-finite ``alphas``.
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

    def _check_X(self, X: Tensor) -> Tensor:
        if not isinstance(X, Tensor):
            raise TypeError(f"X must be a torch.Tensor, got {type(X).__name__}")
        d = self.train_X.shape[-1]
        if X.dim() < 1 or X.shape[-1] != d:
            raise ValueError(f"X must have shape batch x {d}, got {tuple(X.shape)}")
        if not torch.isfinite(X).all():
            raise ValueError("X must not contain NaN or inf")
        return X

    def _evaluate(
        self, X: Tensor, alphas: float | Sequence[float] | Tensor | None, sign: float
    ) -> tuple[Tensor, Tensor]:
        X = self._check_X(X)
        batch_shape, d = X.shape[:-1], X.shape[-1]
        flat = X.reshape(-1, d).to(device=self.train_X.device, dtype=_DTYPE)
        if alphas is None:
            value, alpha = self._exact(flat, sign)
        else:
            value, alpha = self._grid(flat, check_alphas(alphas), sign)
        if flat.requires_grad and not value.requires_grad:
            # a bound that does not depend on X (no data, stationary kernel): zero gradient
            value = value + 0.0 * flat.sum(-1)
        return value.reshape(batch_shape).to(X.dtype), alpha.reshape(batch_shape)

    def _prior_terms(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """``k(x, x)`` (``N``) and ``k_t(x)`` (``N x t``)."""
        kxx = self.kernel(X, X, diag=True)
        t = self.num_observations
        cross = self._k(X, self.train_X) if t else X.new_zeros(X.shape[0], 0)
        return kxx, cross

    def _grid(self, X: Tensor, alphas: Tensor, sign: float) -> tuple[Tensor, Tensor]:
        """``min_{alpha in A}`` of eq. (12) with the cached inverses (``O(t^2)`` per
        point and alpha)."""
        with torch.no_grad():
            index = self._ensure_cached(alphas)
        alpha = self._cache_alphas[index]  # m
        rt2 = (
            self.radius_squared
            + alpha * self.rkhs_norm_bound**2
            - alpha * (self._cache_weights[index] @ self.train_Y.reshape(-1))
        )
        if float(rt2.min()) < -self._empty_tolerance():
            raise EmptyConfidenceSetError(self._empty_message())
        rt2 = rt2.clamp_min(0.0)
        kxx, cross = self._prior_terms(X)  # N, N x t
        mean = cross @ self._cache_weights[index].transpose(0, 1)  # N x m
        inverse = self._cache_inverse  # a view: no copy of the m x t x t storage
        quad = torch.stack(
            [((cross @ inverse[i]) * cross).sum(-1) for i in index.tolist()], dim=-1
        )  # N x m
        rho = _safe_sqrt(kxx.unsqueeze(-1) - quad)  # N x m
        objective = sign * mean + (rt2 / alpha).sqrt() * rho  # N x m
        best, which = objective.min(dim=-1)
        return sign * best, alpha[which]

    def _exact(self, X: Tensor, sign: float) -> tuple[Tensor, Tensor]:
        """``min_{alpha > 0}`` of eq. (12) from the spectrum of ``K_t``."""
        with torch.no_grad():
            self.check_nonempty()
        kxx, cross = self._prior_terms(X)
        if self.num_observations == 0:  # F_0 = {||f|| <= B}: alpha -> infinity
            value = self.rkhs_norm_bound * _safe_sqrt(kxx)
            return sign * value, torch.full_like(kxx, math.inf)
        projected = cross @ self._eigenvectors  # N x t, v = U^T k_t(x)
        vz, vv = sign * projected * self._rotated_y, projected**2
        with torch.no_grad():
            spectrum = (self._eigenvalues, self._rotated_y**2, self.radius_squared)
            alpha = self._search(spectrum, vz, vv, kxx)
        value = self._objective(spectrum, alpha, vz, vv, kxx)  # gradients at fixed alpha
        return sign * value, alpha

    def _objective(
        self, spectrum: tuple[Tensor, Tensor, Tensor], alpha: Tensor, vz: Tensor, vv: Tensor,
        kxx: Tensor,
    ) -> Tensor:  # fmt: skip
        r"""``sign mu_alpha + R~_alpha / sqrt(alpha) rho_alpha`` for ``alpha`` of shape
        ``N`` (one per point) or ``()``; ``spectrum = (lambda, z^2, R_t^2)``."""
        lam, z2, radius_sq = spectrum
        alpha_col = alpha.unsqueeze(-1) if alpha.dim() else alpha
        inverse = 1.0 / (lam + alpha_col)  # N x t or t
        mean = (vz * inverse).sum(-1)
        rho = _safe_sqrt(kxx - (vv * inverse).sum(-1))
        rt2 = radius_sq + alpha * self.rkhs_norm_bound**2 - alpha * (z2 * inverse).sum(-1)
        return mean + (rt2.clamp_min(0.0) / alpha).sqrt() * rho

    def _search(
        self, spectrum: tuple[Tensor, Tensor, Tensor], vz: Tensor, vv: Tensor, kxx: Tensor
    ) -> Tensor:
        """Per point, the ``alpha`` minimizing ``_objective``: a log-spaced grid (one
        point per decade) and a golden-section search in the grid minimizer's bracket;
        the best point evaluated is returned (``N``)."""
        low, high = self._alpha_range()
        num_grid = max(int(math.ceil(math.log10(high / low))) + 1, 3)
        grid = torch.linspace(
            math.log(low), math.log(high), num_grid, dtype=_DTYPE, device=vz.device
        )
        values = torch.stack(
            [self._objective(spectrum, g.exp(), vz, vv, kxx) for g in grid]
        )  # G x N
        best_value, j = values.min(dim=0)
        left = grid[(j - 1).clamp_min(0)]
        right = grid[(j + 1).clamp_max(num_grid - 1)]
        best_log = grid[j]
        x1 = right - _GOLDEN * (right - left)
        x2 = left + _GOLDEN * (right - left)
        f1 = self._objective(spectrum, x1.exp(), vz, vv, kxx)
        f2 = self._objective(spectrum, x2.exp(), vz, vv, kxx)
        for _ in range(_GOLDEN_STEPS):
            move_left = f1 < f2  # the minimum lies in [left, x2]
            right = torch.where(move_left, x2, right)
            left = torch.where(move_left, left, x1)
            new_x1 = right - _GOLDEN * (right - left)
            new_x2 = left + _GOLDEN * (right - left)
            probe = torch.where(move_left, new_x1, new_x2)
            f_probe = self._objective(spectrum, probe.exp(), vz, vv, kxx)
            x1, x2, f1, f2 = (
                torch.where(move_left, new_x1, x2),
                torch.where(move_left, x1, new_x2),
                torch.where(move_left, f_probe, f2),
                torch.where(move_left, f1, f_probe),
            )
            better = f_probe < best_value
            best_value = torch.where(better, f_probe, best_value)
            best_log = torch.where(better, probe, best_log)
        return best_log.exp()


def _safe_sqrt(value: Tensor) -> Tensor:
    """``sqrt(max(value, tiny))``: clips round-off below zero, finite gradient."""
    return value.clamp_min(torch.finfo(value.dtype).tiny).sqrt()


def _smallest_passing(predicate, start: float) -> float:
    """Smallest ``v >= start`` with ``predicate(v)`` for a monotone predicate (bisection in
    log-space after doubling); ``inf`` if none up to ``1e12 start``."""
    low, high = start, start
    while not predicate(high):
        low, high = high, 2.0 * high
        if high > 1e12 * start:
            return math.inf
    for _ in range(60):
        middle = math.sqrt(low * high)
        if predicate(middle):
            high = middle
        else:
            low = middle
    return high
