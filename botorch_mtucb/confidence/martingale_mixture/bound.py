r"""The single-task martingale-mixture bound of paper 002: ``f(x)`` from scalar data.

Source: paper 002 (Flynn, Reeb et al., *Tighter Confidence Bounds for Sequential Kernel
Regression*), Section 4 and Appendix E.2. ``MartingaleMixtureBound`` is the one-task
case of the one bound (``bound_base.MartingaleMixtureBoundBase``: data, numbers, emptiness,
pending points, state), with the spectrum of ``K_t`` and the Cholesky factors of ``K_t +
alpha I`` grown in place (``gram_cache_spectrum.GramCacheSpectrum``); it adds what is particular to
one output: the constructor's kernel, an input transform and the outcome map of a
BoTorch model (``from_model``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from botorch.models.model import Model
from gpytorch.kernels import Kernel
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.confidence.martingale_mixture.bound_base import MartingaleMixtureBoundBase
from botorch_mtucb.confidence.martingale_mixture.gram_cache_spectrum import GramCacheSpectrum
from botorch_mtucb.confidence.martingale_mixture.mixture_checks import (
    check_sum_of_squares,
    check_training_data,
    check_unbatched_kernel,
)
from botorch_mtucb.confidence.martingale_mixture.noise_level import resolve_noise_std
from botorch_mtucb.confidence.martingale_mixture.norm_choice import norm_bound_with_allowance
from botorch_mtucb.models.botorch_readers import single_output_data
from botorch_mtucb.utils.checks import check_kernel_values

_DTYPE = torch.float64


class MartingaleMixtureBound(MartingaleMixtureBoundBase):
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
    training inputs plus the pending points (``hallucination.py``; kept for the last
    ``X_pending``).

    The one bound of ``bound_base`` for one task: its spectrum object (``gram_spectrum``) is
    ``gram_cache_spectrum.GramCacheSpectrum``; ``MultiTaskMartingaleMixtureBound`` with one task and
    ``B = [[1]]`` gives the same bounds to round-off.

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
        self.kernel = self._frozen_copy(kernel, "kernel", train_X.device)
        self.input_transform = self._frozen_copy(input_transform, "input_transform", train_X.device)
        self.register_buffer("train_X", train_X.detach().to(_DTYPE).clone())
        self.register_buffer("train_Y", train_Y.detach().to(_DTYPE).clone())
        self._rebuild()
        self.check_nonempty()

    def _prepare_data(self) -> None:
        self.train_X, self.train_Y = self.train_X.to(_DTYPE), self.train_Y.to(_DTYPE)
        for module in (self.kernel, self.input_transform):  # float64 (load(assign=True))
            if module is not None:
                module.to(dtype=_DTYPE)
        check_training_data(self.train_X, self.train_Y)

    def _make_spectrum(self) -> GramCacheSpectrum:
        return GramCacheSpectrum(self)

    def _functionals(self, weights: None) -> tuple[None, bool]:
        return None, True  # f(x) itself

    @classmethod
    def from_model(
        cls,
        model: Model,
        rkhs_norm_bound: float | None = None,
        noise_std: float | None = None,
        delta: float = 0.01,
        mixture_scale: float = 1.0,
        measurement_noise_std: float | None = None,
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
            measurement_noise_std: A sub-Gaussian level of the measurement error in the
                user's outcome units (any level for exact evaluations), in place of the
                likelihood's fitted noise: ``sigma = max(sigma_meas / |b|, 1e-4
                sqrt(max_i k(x_i, x_i)))`` with ``b`` the outcome transform's scale
                (``noise_level``). Not with ``noise_std``. With ``rkhs_norm_bound=None``
                the data rule then adds the leave-one-out allowance
                (``norm_choice.norm_bound_with_allowance``).

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
                ``noise_std=None``), both ``noise_std`` and ``measurement_noise_std``,
                a ``measurement_noise_std`` not positive and finite, and as in the
                constructor.
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
        noise_std = resolve_noise_std(
            noise_std, measurement_noise_std, data.outcome_scale, train_X, data.kernel,
            data.largest_noise_variance,
        )  # fmt: skip
        allowed = rkhs_norm_bound is None and measurement_noise_std is not None
        if allowed and train_X.shape[0] > 0:  # the rule for a stated noise level
            gram = data.gram().to(_DTYPE)
            check_kernel_values(gram, train_X, f"{name}'s train_X")
            rkhs_norm_bound = norm_bound_with_allowance(
                gram, train_Y, noise_std, delta, mixture_scale
            )
        bound = cls(
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
        bound.rkhs_norm_bound_from_data = bound.rkhs_norm_bound_from_data or allowed
        return bound

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
        check_training_data(X, Y, dim=self.input_dim, names=("X", "Y"))
        Y = Y.detach().to(self.train_X)
        if self._maps_outcomes:
            Y = (Y - self.outcome_shift) / self.outcome_scale
        check_sum_of_squares(torch.cat([self.train_Y, Y]), "Y")
        with torch.no_grad():
            X = self._model_inputs(X.detach())
        with torch.no_grad():  # before anything is added: the kernel is finite at X
            values = self.kernel(torch.cat([self.train_X, X]), X).to_dense()
            check_kernel_values(values, X, "X")
        return self._append(X, Y)  # the factors bordered one row at a time

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
        value, _ = self._evaluate(X, None, alphas, 1.0, X_pending)
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
        value, _ = self._evaluate(X, None, alphas, -1.0, X_pending)
        return value

    def optimal_alpha(
        self,
        X: Tensor,
        alphas: float | Sequence[float] | Tensor | None = None,
        upper: bool = True,
    ) -> Tensor:
        """The ``alpha`` at which the bound at ``X`` is attained (``batch``, float64)."""
        _, alpha = self._evaluate(X, None, alphas, 1.0 if upper else -1.0, None)
        return alpha
