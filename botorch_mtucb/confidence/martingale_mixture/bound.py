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
from collections.abc import Mapping, Sequence

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
from botorch_mtucb.confidence.martingale_mixture.gram_cache import (
    RegularizedGramCache,
    check_alpha_grid,
)
from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
from botorch_mtucb.confidence.martingale_mixture.norm_choice import rkhs_norm_bound_from_spectrum
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    radius_squared,
    radius_tilde_squared,
    spectral_data_fit,
)
from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import (
    DistinctInputs,
    input_spectrum,
)
from botorch_mtucb.confidence.martingale_mixture.state import RebuiltOnLoad
from botorch_mtucb.models.botorch_readers import single_output_data
from botorch_mtucb.utils.checks import (
    as_float,
    check_finite_result,
    check_kernel_values,
    check_mixture_numbers,
    check_query_points,
    check_sum_of_squares,
    check_training_data,
    check_unbatched_kernel,
    check_X_pending,
    real_output_dtype,
)

_DTYPE = torch.float64


class MartingaleMixtureBound(RebuiltOnLoad):
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

    The model's space and the user's units: a bound built by ``from_model`` holds the
    data in the model's transformed space (inputs after its input transform, outcomes
    after its outcome transform, minus a constant prior mean) and the affine map back,
    ``y = outcome_shift + outcome_scale * y_tilde``. ``upper``, ``lower`` and
    ``append_observations`` take the user's inputs and outcomes: the inputs go through
    the input transform (gradients flow through it) and the bounds are mapped back,
    ``upper = outcome_shift + outcome_scale * upper_tilde`` (for a negative scale,
    ``outcome_scale * lower_tilde``: the map reverses the order). ``train_X``,
    ``train_Y``, ``rkhs_norm_bound``, ``noise_std`` and the radii are in the transformed
    space. Built from data (the constructor), the map is the identity unless given.

    Pending points (``X_pending``): as GP-BUCB (Desautels et al. 2014), the mean and
    radius stay those of the real observations and only ``rho_alpha`` is computed on the
    training inputs plus the pending points (``hallucination.py``).

    ``.to(device)`` moves the data and caches; the dtype stays float64. ``state_dict``
    holds the kernel, the input transform, the data and the defining numbers (``B``,
    ``sigma``, ``delta``, ``c``, the outcome map); ``load_state_dict`` rebuilds the
    rest from them, so a loaded bound gives the values of the bound it was saved from
    (``state.py``).

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

    DATA_BUFFERS = ("train_X", "train_Y")
    STRUCTURE_MODULES = ("kernel", "input_transform")
    DEFINING_NUMBERS = (
        "rkhs_norm_bound", "noise_std", "delta", "mixture_scale", "outcome_shift",
        "outcome_scale", "rkhs_norm_bound_from_data",
    )  # fmt: skip

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        kernel: Kernel,
        rkhs_norm_bound: float | None,
        noise_std: float,
        delta: float,
        mixture_scale: float = 1.0,
        input_transform: Module | None = None,
        outcome_shift: float = 0.0,
        outcome_scale: float = 1.0,
    ) -> None:
        r"""Build the bound from data.

        Args:
            train_X: ``t x d`` inputs (``t`` may be 0), in the kernel's space (after
                ``input_transform`` if one is given).
            train_Y: ``t x 1`` observations (same units as ``f``).
            kernel: A GPyTorch kernel without batch shape; it is copied, cast to
                float64 and frozen (paper 002 assumes a fixed, known kernel).
            rkhs_norm_bound: ``B > 0``, an upper bound on ``||f||_H``; ``None`` chooses
                ``B`` from the data (``norm_choice.rkhs_norm_bound_from_spectrum``: a
                confidence set that is never empty, a practical choice without the
                theorem's guarantee; needs ``t >= 1``) and sets
                ``rkhs_norm_bound_from_data``. ``B`` stays fixed as data are appended.
            noise_std: ``sigma > 0``, the sub-Gaussian noise level (units of ``y``).
            delta: Confidence level in ``(0, 1)``.
            mixture_scale: ``c > 0``, the covariance scale of the mixture
                ``N(0, c K_t)`` of eq. (8) (paper 002 uses ``c = 1`` for RBF and
                ``T^{-d / (2 d + 2 nu)}`` for Matern kernels).
            input_transform: An optional module mapping the user's ``... x d`` inputs to
                the kernel's ``... x d`` space (a BoTorch input transform); it is
                copied, cast to float64, frozen and put in ``eval`` mode.
            outcome_shift, outcome_scale: The map ``y = outcome_shift + outcome_scale *
                y_tilde`` from ``train_Y``'s units to the user's (``outcome_scale != 0``).

        Raises:
            TypeError: If ``train_X`` / ``train_Y`` are not tensors or ``kernel`` is not
                a GPyTorch ``Kernel``.
            ValueError: For ``train_X`` not ``t x d``, ``train_Y`` not ``t x 1``,
                NaN/inf data, a batched kernel, ``delta`` outside (0, 1),
                ``rkhs_norm_bound``, ``noise_std`` or ``mixture_scale`` ``<= 0``, a
                ``train_Y`` whose sum of squares overflows float64 (or a radius
                ``R_t^2`` that does), or ``rkhs_norm_bound^2``, ``noise_std^2`` or
                ``noise_std^2 / mixture_scale`` outside float64's normal range (each
                would give NaN bounds), a ``train_X`` at which the kernel overflows
                (``1e300 * X``), or ``rkhs_norm_bound=None`` without data.
            EmptyConfidenceSetError: If the data contradict ``rkhs_norm_bound`` and
                ``noise_std`` (the confidence set is empty).
        """
        super().__init__()
        check_training_data(train_X, train_Y)
        check_unbatched_kernel(kernel)
        self._set_defining_numbers({
            "rkhs_norm_bound": rkhs_norm_bound, "noise_std": noise_std, "delta": delta,
            "mixture_scale": mixture_scale, "outcome_shift": outcome_shift,
            "outcome_scale": outcome_scale, "rkhs_norm_bound_from_data": rkhs_norm_bound is None,
        })  # fmt: skip
        check_sum_of_squares(train_Y, "train_Y")
        self.kernel = _frozen_copy(kernel, train_X.device, "kernel")
        self.input_transform = _frozen_copy(input_transform, train_X.device, "input_transform")
        self.register_buffer("train_X", train_X.detach().to(_DTYPE).clone())
        self.register_buffer("train_Y", train_Y.detach().to(_DTYPE).clone())
        self._rebuild()
        self.check_nonempty()

    def _set_defining_numbers(self, numbers: Mapping[str, float | bool | None]) -> None:
        """Check and set ``B`` (``None``: chosen by ``_rebuild``), ``sigma``, ``delta``,
        ``c`` and the outcome map (the constructor and a loaded state, whose ``B`` is
        kept as it is even if it was chosen from the data)."""
        self.rkhs_norm_bound, self.noise_std, self.delta, self.mixture_scale = (
            check_mixture_numbers(*(numbers[name] for name in self.DEFINING_NUMBERS[:4]))
        )
        shift = as_float(numbers["outcome_shift"], "outcome_shift")
        scale = as_float(numbers["outcome_scale"], "outcome_scale")
        if scale == 0.0:
            raise ValueError("outcome_scale must be non-zero (y = shift + scale * y_tilde)")
        self.outcome_shift, self.outcome_scale = shift, scale
        self.rkhs_norm_bound_from_data = bool(numbers["rkhs_norm_bound_from_data"])

    def _rebuild(self) -> None:
        """Everything derived from the kernel, the data and the numbers: ``K_t`` (one
        kernel evaluation), the factor of ``K_t + (sigma^2 / c) I``, the distinct
        inputs and ``B`` when it is chosen from the data (from the spectrum that the
        emptiness check and the exact bound share: one eigen-decomposition). Called by
        the constructor (which then checks emptiness) and by ``load_state_dict`` (the
        next bound checks it, as after ``append_observations``)."""
        self.train_X, self.train_Y = self.train_X.to(_DTYPE), self.train_Y.to(_DTYPE)
        for module in (self.kernel, self.input_transform):  # float64 (load(assign=True))
            if module is not None:
                module.to(dtype=_DTYPE)
        check_training_data(self.train_X, self.train_Y)
        t = self.train_X.shape[0]
        with torch.no_grad():
            gram = self._k(self.train_X, self.train_X) if t else self.train_X.new_zeros(0, 0)
        check_kernel_values(gram, self.train_X, "train_X")
        # K_t and, for fixed alphas, the factors of K_t + alpha I (Appendix E.2), grown in place.
        self.cache = RegularizedGramCache(gram)
        self._spectrum: GramSpectrum | None = None  # of K_t, recomputed after appends
        self._distinct = DistinctInputs()  # repeated inputs fold into the distinct ones
        self._distinct.add(self.train_X)
        self._pending: PendingInputs | None = None  # the last X_pending's inputs
        self._checked_nonempty = False
        self.cache.ensure(torch.tensor([self.base_alpha], dtype=_DTYPE))
        if self.rkhs_norm_bound is None:
            if t == 0:
                raise ValueError(
                    "rkhs_norm_bound=None chooses B from the data, and there are no "
                    "training points to choose it from; pass rkhs_norm_bound (with no data "
                    "the bound is the prior's, B sqrt(k(x, x)))"
                )
            self.rkhs_norm_bound = rkhs_norm_bound_from_spectrum(
                self.spectrum(), float(gram.diagonal().max()), self.noise_std, self.delta,
                self.mixture_scale,
            )  # fmt: skip

    @classmethod
    def from_model(
        cls,
        model: Model,
        rkhs_norm_bound: float | None = None,
        noise_std: float | None = None,
        delta: float = 0.01,
        mixture_scale: float = 1.0,
    ) -> MartingaleMixtureBound:
        r"""The bound on the data, kernel and noise of a fitted single-output BoTorch GP.

        The bound lives in the model's transformed space (``single_output_data``):
        inputs after the model's input transform, outcomes after its outcome transform
        (``Standardize``) minus the constant of its prior mean; ``upper`` and ``lower``
        take the user's inputs and return the user's units (the affine map of the
        outcome transform, exact). The kernel is the model's ``covar_module`` (fixed).
        The transforms are taken as fixed maps: ``Standardize`` computes its mean and
        std from the same data, so an explicit ``B``'s guarantee is about the outcome
        standardized with those constants.

        Args:
            model: A fitted single-output exact GP (``SingleTaskGP`` with or without
                ``Standardize`` and input transforms, learned or fixed noise); see
                ``single_output_data`` for what is accepted. Input transforms must keep
                the number of input columns.
            rkhs_norm_bound: ``B > 0`` on ``||f_tilde||_H`` in transformed units, which
                keeps paper 002's guarantee (and ``EmptyConfidenceSetError`` when the
                data contradict it); ``None`` chooses ``B`` from the data as the
                constructor does (a confidence set that is never empty; a practical
                choice without the theorem's guarantee), and sets
                ``rkhs_norm_bound_from_data``. A model without training data needs an
                explicit ``B`` (its bound is the prior's, ``B sqrt(k(x, x))`` for the
                exact bound).
            noise_std: ``sigma > 0`` in transformed units; ``None`` takes the model's
                likelihood: the square root of its noise variance (for fixed noise, the
                largest ``train_Yvar``, a sub-Gaussian level valid for every point;
                without training data only a learned noise has one).
            delta: Confidence level in ``(0, 1)``.
            mixture_scale: As in the constructor.

        Returns:
            A ``MartingaleMixtureBound`` on ``model``'s transformed training data.

        Raises:
            TypeError: For a model that is not a BoTorch single-output exact GP, a mean
                other than zero or constant, or a heteroskedastic likelihood (naming the
                model's type and what is accepted).
            ValueError: For more outputs or batch dimensions, a non-affine outcome
                transform (``Log``, ...), an input transform that changes the number of
                columns, NaN/inf training data (naming the model), no training data
                with ``rkhs_norm_bound=None`` (or with fixed noise and
                ``noise_std=None``), and as in the constructor.
            EmptyConfidenceSetError: For an explicit ``rkhs_norm_bound`` that the data
                contradict.

        Example:
            >>> import torch
            >>> from botorch.models import SingleTaskGP
            >>> from botorch.models.transforms import Normalize
            >>> from botorch_mtucb.confidence import MartingaleMixtureBound
            >>> X = 5.0 * torch.rand(12, 1, dtype=torch.float64)
            >>> model = SingleTaskGP(X, 100.0 + 10.0 * X.sin(), input_transform=Normalize(1))
            >>> bound = MartingaleMixtureBound.from_model(model, delta=0.01)
            >>> bound.num_observations, bound.rkhs_norm_bound_from_data
            (12, True)
            >>> test_X = 5.0 * torch.rand(4, 1, dtype=torch.float64)  # user units
            >>> bool((bound.lower(test_X) < bound.upper(test_X)).all())
            True
        """
        data = single_output_data(model)
        if data.train_X.shape[-1] != data.input_dim:
            raise ValueError(
                f"{data.model_name}'s input transform maps {data.input_dim} input columns to "
                f"{data.train_X.shape[-1]}; the bound needs one that keeps the number of "
                "columns (Normalize, InputStandardize, Warp, Round, ...)"
            )
        train_X = data.train_X.to(_DTYPE)
        train_Y = data.centered_Y.to(_DTYPE)
        name = data.model_name
        check_training_data(train_X, train_Y, names=(
            f"{name}'s train_X (after its input transform)",
            f"{name}'s train_Y (after its outcome transform, minus its prior mean)",
        ))  # fmt: skip
        if noise_std is None:
            noise_std = math.sqrt(data.largest_noise_variance())
        return cls(
            train_X,
            train_Y,
            data.kernel,
            rkhs_norm_bound=rkhs_norm_bound,  # None: chosen from the data (one eigh)
            noise_std=noise_std,
            delta=delta,
            mixture_scale=mixture_scale,
            input_transform=data.input_transform,
            outcome_shift=data.outcome_shift + data.outcome_scale * data.prior_mean,
            outcome_scale=data.outcome_scale,
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
        """The spectrum of ``K_t`` and ``U^T y`` (``O(t^3)`` after new data, cached).

        When inputs repeat (a finite domain), from the ``u`` distinct ones
        (``repeated_inputs.input_spectrum``: ``O(u^3)``, the same values to round-off;
        ``eigenvectors`` is then ``None`` and projections go through
        ``_spectral_inputs`` and ``_spectral_basis``)."""
        if self._spectrum is None:
            if self._distinct.num_distinct < self.num_observations:
                inputs, inverse, counts = self._distinct.groups()
                device = self.train_X.device
                data = input_spectrum(
                    self._k, self.train_X, self.train_Y, None,
                    (inputs.to(device), inverse.to(device), counts.to(device)),
                )  # fmt: skip
                self._spectral_inputs, self._spectral_basis = data.inputs, data.basis
                self._spectrum = GramSpectrum(data.eigenvalues, None, data.rotated[:, 0])
            else:
                self._spectrum = GramSpectrum.from_gram(self.cache.gram, self.train_Y.reshape(-1))
        return self._spectrum

    def _apply(self, fn, recurse=True):
        """``.to()``, ``.cuda()`` etc. move the bound; its dtype stays float64."""

        def move_only(tensor: Tensor) -> Tensor:
            return tensor.to(device=fn(tensor).device)

        self._spectrum = None  # recomputed where the data now are
        self._pending = None
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
            ValueError: For non-positive or non-finite ``alphas``, or more than
                ``MAX_ALPHAS`` (``gram_cache``) of them.
        """
        alpha = check_alpha_grid(alphas).to(self.train_X.device)
        shape = torch.as_tensor(alphas).shape
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
            X: ``m x d`` new inputs (the user's space: they go through the bound's
                input transform, if any).
            Y: ``m x 1`` new observations (the user's units: mapped to ``(Y -
                outcome_shift) / outcome_scale``).

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
        self._check_loaded()
        check_training_data(X, Y, dim=self.train_X.shape[-1], names=("X", "Y"))
        Y = Y.detach().to(self.train_X)
        if self._maps_outcomes:
            Y = (Y - self.outcome_shift) / self.outcome_scale
        check_sum_of_squares(torch.cat([self.train_Y, Y]), "Y")
        with torch.no_grad():
            X = self._model_inputs(X.detach())
        with torch.no_grad():  # before anything is added: the kernel is finite at X
            check_kernel_values(self._k(torch.cat([self.train_X, X]), X), X, "X")
            for x, y in zip(X, Y):
                x = x.unsqueeze(0)
                t = self.num_observations
                cross = self._k(self.train_X, x).reshape(t) if t else self.train_X.new_zeros(0)
                self.cache.append(cross, self._k(x, x).reshape(()))
                self.train_X = torch.cat([self.train_X, x])
                self._distinct.add(x)
                self.train_Y = torch.cat([self.train_Y, y.reshape(1, 1)])
        self._spectrum = None
        self._pending = None
        self._checked_nonempty = False
        return self

    # ------------------------------------------------------------------ bounds
    def upper(
        self,
        X: Tensor,
        alphas: float | Sequence[float] | Tensor | None = None,
        X_pending: Tensor | None = None,
    ) -> Tensor:
        r"""Upper confidence bound ``u_t(x) >= f(x)`` at ``X``.

        Args:
            X: ``batch x d`` points (any leading batch shape; the user's space).
            alphas: ``None`` for the exact bound (eq. (10) via eq. (12), CMM-UCB); a
                grid of ``alpha > 0`` for ``min_{alpha in A}`` of eq. (12) (DMM-UCB); a
                single ``alpha`` for the analytic bound of Cor. 4.6 (AMM-UCB).
            X_pending: ``m x d`` points chosen but not yet observed: ``rho_alpha`` is
                computed as if they had been observed (GP-BUCB), the mean and radius
                from the real observations only (module ``hallucination``). The
                result is then a score for choosing the next point, smaller than the
                bound without them, not itself a bound on ``f``.

        Returns:
            A ``batch`` tensor in ``X``'s floating dtype, float64 for integer ``X``
            (the user's units of ``f``). Gradients with respect to ``X`` flow through
            the input transform and the bound at the minimizing ``alpha``.

        Raises:
            TypeError: For boolean or complex ``X``.
            ValueError: For ``X`` not ``... x d`` or with NaN/inf, ``X_pending`` not
                ``m x d`` or with NaN/inf, non-positive / non-finite ``alphas``, more
                than ``MAX_ALPHAS`` of them or new ones whose factors would hold more
                than ``MAX_FACTOR_ENTRIES`` entries (``gram_cache``; checked before
                anything is computed), or an ``X`` at which the kernel overflows.
            EmptyConfidenceSetError: If the data contradict the assumptions (the
                grid bounds detect it when ``R~_alpha^2 < 0`` at one of their alphas).
        """
        value, _ = self._evaluate(X, alphas, 1.0, X_pending)
        return value

    def lower(
        self,
        X: Tensor,
        alphas: float | Sequence[float] | Tensor | None = None,
        X_pending: Tensor | None = None,
    ) -> Tensor:
        r"""Lower confidence bound ``l_t(x) <= f(x)``: the mirror image of ``upper``,
        ``max_{alpha} mu_alpha(x) - R~_alpha / sqrt(alpha) rho_alpha(x)``. Same
        arguments, returns and errors as ``upper``."""
        value, _ = self._evaluate(X, alphas, -1.0, X_pending)
        return value

    def optimal_alpha(
        self,
        X: Tensor,
        alphas: float | Sequence[float] | Tensor | None = None,
        upper: bool = True,
    ) -> Tensor:
        """The ``alpha`` at which the bound at ``X`` is attained (``batch``, float64)."""
        _, alpha = self._evaluate(X, alphas, 1.0 if upper else -1.0, None)
        return alpha

    @property
    def _maps_outcomes(self) -> bool:
        return self.outcome_shift != 0.0 or self.outcome_scale != 1.0

    def _model_inputs(self, X: Tensor) -> Tensor:
        """``X`` (``N x d``) in float64 on the bound's device, through the input transform."""
        X = X.to(device=self.train_X.device, dtype=_DTYPE)
        if self.input_transform is None:
            return X
        transformed = self.input_transform(X)
        if transformed.shape != X.shape:
            raise ValueError(
                f"the input transform {type(self.input_transform).__name__} maps inputs "
                f"of shape {tuple(X.shape)} to {tuple(transformed.shape)}; the bound needs "
                "one that keeps the shape"
            )
        return transformed

    def _pending_inputs(self, X_pending: Tensor | None) -> PendingInputs | None:
        """The training inputs and ``X_pending`` (cached for the last ``X_pending``)."""
        X_pending = check_X_pending(X_pending, self.train_X.shape[-1])
        if X_pending is None:
            return None
        if self._pending is None or not self._pending.matches(X_pending):
            with torch.no_grad():
                inputs = torch.cat([self.train_X, self._model_inputs(X_pending)])
                gram = self._k(inputs, inputs)
            check_kernel_values(gram, inputs, "X_pending")
            self._pending = PendingInputs(X_pending, inputs, gram)
        return self._pending

    def _evaluate(
        self,
        X: Tensor,
        alphas: float | Sequence[float] | Tensor | None,
        sign: float,
        X_pending: Tensor | None,
    ) -> tuple[Tensor, Tensor]:
        self._check_loaded()
        grid = None if alphas is None else check_alpha_grid(alphas)  # before any allocation
        check_query_points(X, self.train_X.shape[-1])
        dtype = real_output_dtype(X)
        pending = self._pending_inputs(X_pending)
        batch_shape, d = X.shape[:-1], X.shape[-1]
        flat = self._model_inputs(X.reshape(-1, d))
        name = "upper bound" if sign > 0 else "lower bound"
        sign = sign if self.outcome_scale > 0 else -sign  # a negative scale swaps the bounds
        if alphas is None:
            value, alpha = self._exact(flat, sign, pending)
        else:
            value, alpha = self._grid(flat, grid, sign, pending)
        if flat.requires_grad and not value.requires_grad:
            # a bound that does not depend on X (no data, stationary kernel): zero gradient
            value = value + 0.0 * flat.sum(-1)
        if self._maps_outcomes:
            value = self.outcome_shift + self.outcome_scale * value
        check_finite_result(value.to(dtype), f"martingale-mixture {name}", X.reshape(-1, d))
        return value.reshape(batch_shape).to(dtype), alpha.reshape(batch_shape)

    def _prior_terms(
        self, X: Tensor, pending: PendingInputs | None = None
    ) -> tuple[Tensor, Tensor]:
        """``k(x, x)`` (``N``) and ``k_t(x)`` (``N x t``); with pending points, ``k(x, .)``
        on the training inputs followed by the pending points (``N x (t + m)``)."""
        kxx = self.kernel(X, X, diag=True)
        inputs = self.train_X if pending is None else pending.inputs
        cross = self._k(X, inputs) if len(inputs) else X.new_zeros(X.shape[0], 0)
        check_kernel_values(cross.detach(), X.detach(), "X")
        return kxx, cross

    def _grid(
        self, X: Tensor, alphas: Tensor, sign: float, pending: PendingInputs | None
    ) -> tuple[Tensor, Tensor]:
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
        kxx, augmented = self._prior_terms(X, pending)  # N, N x (t [+ m])
        cross = augmented[:, : self.num_observations]  # N x t
        mean = cross @ weights.transpose(0, 1)  # N x m
        if pending is None:
            explained = self.cache.explained_variance(index, cross)
        else:
            explained = pending.explained_variance(alpha, augmented)
        std = posterior_std(kxx.unsqueeze(-1), explained)
        best, best_alpha = minimize_over_grid(sign * mean, std, rt2, alpha)
        return sign * best, best_alpha

    def _exact(
        self, X: Tensor, sign: float, pending: PendingInputs | None
    ) -> tuple[Tensor, Tensor]:
        """``min_{alpha > 0}`` of eq. (12) from the spectrum of ``K_t``."""
        with torch.no_grad():
            self.check_nonempty()
        kxx, augmented = self._prior_terms(X, pending)
        cross = augmented[:, : self.num_observations]
        if self.num_observations == 0:  # F_0 = {||f|| <= B}: alpha -> infinity
            value = self.rkhs_norm_bound * posterior_std(kxx, torch.zeros_like(kxx))
            return sign * value, torch.full_like(kxx, math.inf)
        spectrum = self.spectrum()
        if spectrum.eigenvectors is None:  # repeated inputs: through the distinct ones
            distinct = self._k(X, self._spectral_inputs)
            check_kernel_values(distinct.detach(), X.detach(), "X")
            projected = distinct @ self._spectral_basis
        else:
            projected = cross @ spectrum.eigenvectors  # N x t, v = U^T k_t(x)
        if pending is None:
            squared, variance_eigenvalues = projected**2, None
        else:
            squared, variance_eigenvalues = pending.squared_projection(augmented)
        dual = SpectralDual(
            spectrum, self.radius_squared, self.rkhs_norm_bound,
            sign * projected * spectrum.rotated_y, squared, kxx, variance_eigenvalues,
        )  # fmt: skip
        with torch.no_grad():
            alpha, _ = dual.minimize(self.base_alpha)
        return sign * dual(alpha), alpha  # gradients at the fixed alpha


def _frozen_copy(module: Module | None, device: torch.device, name: str) -> Module | None:
    """A float64 copy of a kernel or input transform, in ``eval`` mode, with frozen
    parameters (the bound's own: later changes to the original do not reach it)."""
    if module is None:
        return None
    if not isinstance(module, Module):
        raise TypeError(
            f"{name} must be a torch Module (a BoTorch input transform) or None, "
            f"got {type(module).__name__}"
        )
    module = copy.deepcopy(module).to(device=device, dtype=_DTYPE)
    for parameter in module.parameters():
        parameter.requires_grad_(False)
    return module.eval()
