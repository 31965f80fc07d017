r"""The one martingale-mixture bound: data, numbers, emptiness, pending points and state.

Paper 002 (Flynn, Reeb et al., *Tighter Confidence Bounds for Sequential Kernel
Regression*, Section 4) bounds a linear functional ``L(f)`` of an RKHS function from
scalar observations ``y_s = f(x_s) + eps_s``: with ``||f||_H <= B``, ``sigma``-sub-Gaussian
noise and probability ``1 - delta`` (for all ``t`` at once), ``L(f)`` lies between the
exact bounds ``min / max_{f in F_t} L(f)`` of the confidence set ``F_t`` (Lemma 4.2),
computed by the one-dimensional dual of eq. (12); a grid of ``alpha`` gives DMM's bound
and one ``alpha`` the analytic bound of Cor. 4.6. ``L(f) = f(x)`` is the single-task
bound; ``L(f) = w^T f(x)`` of a multi-task kernel ``Gamma`` (paper 000, Section 2: a
scalar RKHS on ``X x [n]``) is the multi-task bound.

``MartingaleMixtureBoundBase`` is that bound for any kernel and functional. It holds the
kernel (and an input transform), the data (``DATA_BUFFERS``), the defining numbers
(``B``, ``sigma``, ``delta``, ``c``, the outcome map) and checks them; tests ``F_t``
(``check_nonempty``); keeps the last pending points (GP-BUCB, ``hallucination``); saves
and rebuilds its state (``state.RebuiltOnLoad``); and evaluates ``upper`` / ``lower``
through its spectrum object (``spectra``: dense with the Gram cache, dense multi-task,
``kronecker``), which each subclass chooses. ``MartingaleMixtureBound`` (``bound``) is
the one-task case (``L(f) = f(x)``, ``F = 1``) and ``MultiTaskMartingaleMixtureBound``
(``multi_task_bound``) the multi-task one. All internal computations run in float64;
float32 inputs give float32 outputs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.confidence.martingale_mixture.emptiness import (
    EmptyConfidenceSetError,
    contradicts,
    empty_set_message,
    min_radius_tilde_squared,
)
from botorch_mtucb.confidence.martingale_mixture.gram_cache import check_alpha_grid
from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
from botorch_mtucb.confidence.martingale_mixture.mixture_checks import (
    check_mixture_numbers,
    check_query_points,
)
from botorch_mtucb.confidence.martingale_mixture.norm_choice import rkhs_norm_bound_from_spectrum
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    radius_tilde_squared,
    spectral_data_fit,
)
from botorch_mtucb.confidence.martingale_mixture.state import RebuiltOnLoad
from botorch_mtucb.utils.checks import (
    as_float,
    check_finite_result,
    check_X_pending,
    real_output_dtype,
)

_DTYPE = torch.float64


class MartingaleMixtureBoundBase(RebuiltOnLoad):
    r"""A martingale-mixture confidence bound of paper 002 on a growing data set (module
    docstring): the part that does not depend on the kernel's structure.

    Subclasses set ``DATA_BUFFERS``, ``DEFINING_NUMBERS`` (the first four are ``B``,
    ``sigma``, ``delta``, ``c``; ``outcome_shift`` / ``outcome_scale`` and
    ``rkhs_norm_bound_from_data`` are read when listed) and implement ``_prepare_data``
    (cast and check the data buffers), ``_make_spectrum`` (the spectrum object for the
    data and kernel) and ``_functionals`` (the checked weights of ``upper`` / ``lower``);
    their constructors set the kernel, the numbers and the data, then call ``_rebuild``
    and ``check_nonempty``. ``rkhs_norm_bound=None`` chooses ``B`` from the data
    (``norm_choice.rkhs_norm_bound_from_spectrum``) where a subclass accepts it.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import (
        ...     MartingaleMixtureBound, MultiTaskMartingaleMixtureBound)
        >>> from botorch_mtucb.confidence.martingale_mixture.bound_base import (
        ...     MartingaleMixtureBoundBase)
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> one = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 5.0, 0.1, 0.01)
        >>> many = MultiTaskMartingaleMixtureBound(X, X.sin(), RBFKernel(),
        ...     torch.ones(1, 1, dtype=torch.float64), 5.0, 0.1, 0.01)  # n = 1
        >>> isinstance(one, MartingaleMixtureBoundBase), isinstance(many, MartingaleMixtureBoundBase)
        (True, True)
        >>> bool(torch.allclose(one.upper(X), many.upper(X)[:, 0]))
        True
    """

    EMPTY_SET_PREFIX = ""  # what the EmptyConfidenceSetError message starts with
    RESULT_NAME = "martingale-mixture"  # "the {RESULT_NAME} upper bound is not finite"
    outcome_shift = 0.0  # the outcome map y = shift + scale * y_tilde (a subclass may set it)
    outcome_scale = 1.0
    rkhs_norm_bound_from_data = False

    def __init__(self) -> None:
        super().__init__()
        self.input_transform: Module | None = None
        self._pending: PendingInputs | None = None  # the last X_pending's inputs
        self._finite_radius: Tensor | None = None  # the last R_t^2 found finite

    # ------------------------------------------------------------ subclass hooks
    def _prepare_data(self) -> None:
        """Cast the data buffers (and modules) to float64 and check them (after the
        constructor and after ``load_state_dict``)."""
        raise NotImplementedError

    def _make_spectrum(self):
        """The spectrum object (``spectra.ObservationSpectrum``) for the data and kernel."""
        raise NotImplementedError

    def _functionals(self, weights) -> tuple[Tensor | None, bool]:
        """The functionals ``W`` (``F x n``; ``None``: ``f(x)`` itself) and whether the
        result drops its last dimension (one functional given as a vector)."""
        raise NotImplementedError

    # ------------------------------------------------------------ numbers and data
    def _set_defining_numbers(self, numbers: Mapping[str, float | bool | None]) -> None:
        """Check and set ``B`` (``None``: chosen by ``_rebuild``), ``sigma``, ``delta``,
        ``c`` and, where the subclass has them, the outcome map and whether ``B`` was
        chosen from the data (the constructor and a loaded state, whose ``B`` is kept
        as it is even if it was chosen from the data)."""
        self.rkhs_norm_bound, self.noise_std, self.delta, self.mixture_scale = (
            check_mixture_numbers(*(numbers[name] for name in self.DEFINING_NUMBERS[:4]))
        )
        if "outcome_scale" in self.DEFINING_NUMBERS:
            shift = as_float(numbers["outcome_shift"], "outcome_shift")
            scale = as_float(numbers["outcome_scale"], "outcome_scale")
            if scale == 0.0:
                raise ValueError("outcome_scale must be non-zero (y = shift + scale * y_tilde)")
            self.outcome_shift, self.outcome_scale = shift, scale
        if "rkhs_norm_bound_from_data" in self.DEFINING_NUMBERS:
            self.rkhs_norm_bound_from_data = bool(numbers["rkhs_norm_bound_from_data"])

    def _rebuild(self) -> None:
        """Everything derived from the kernel, the data and the numbers: the spectrum
        object (the Gram matrix or its factors, the distinct inputs) and ``B`` when it is
        chosen from the data (from the spectrum that the emptiness check and the exact
        bound share: one eigen-decomposition). Called by the constructor (which then
        checks emptiness) and by ``load_state_dict`` (the next bound checks it, as after
        ``append_observations``)."""
        self._prepare_data()
        self.gram_spectrum = self._make_spectrum()
        self._pending = None
        self._checked_nonempty = False
        if self.rkhs_norm_bound is None:
            if self.num_observations == 0:
                raise ValueError(
                    "rkhs_norm_bound=None chooses B from the data, and there are no "
                    "training points to choose it from; pass rkhs_norm_bound (with no data "
                    "the bound is the prior's, B sqrt(k(x, x)))"
                )
            self.rkhs_norm_bound = rkhs_norm_bound_from_spectrum(
                self.spectrum(), self.gram_spectrum.largest_prior_variance(self),
                self.noise_std, self.delta, self.mixture_scale,
            )  # fmt: skip

    @staticmethod
    def _frozen_copy(module: Module | None, name: str, device=None) -> Module | None:
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

    def _append(self, *new: Tensor) -> MartingaleMixtureBoundBase:
        """Add checked observations (one tensor per ``DATA_BUFFERS``, in the kernel's
        space and the bound's units) and return ``self``; the spectrum is recomputed at
        the next exact bound."""
        new = tuple(value.to(getattr(self, name)) for name, value in zip(self.DATA_BUFFERS, new))
        with torch.no_grad():
            self.gram_spectrum.add(self, *new)  # before the data grow
        for name, value in zip(self.DATA_BUFFERS, new):
            setattr(self, name, torch.cat([getattr(self, name), value]))
        self._pending = None
        self._checked_nonempty = False
        return self

    @property
    def num_observations(self) -> int:
        """The number of (scalar) observations: ``t`` for one task, ``M`` for several."""
        return self.train_X.shape[0]

    @property
    def input_dim(self) -> int:
        """``d``, the number of input columns."""
        return self.train_X.shape[-1]

    @property
    def base_alpha(self) -> float:
        """``sigma^2 / c``: the analytic bound's ``alpha`` of Section 6.2 / Section 7."""
        return self.noise_std**2 / self.mixture_scale

    def _apply(self, fn, recurse=True):
        """``.to()``, ``.cuda()`` etc. move the bound; its dtype stays float64 (and task
        indices ``long``)."""

        def move_only(tensor: Tensor) -> Tensor:
            return tensor.to(device=fn(tensor).device)

        self._pending = None  # rebuilt where the data now are (the spectrum object too)
        return super()._apply(move_only, recurse)

    # ------------------------------------------------------------ spectrum and radii
    def spectrum(self) -> GramSpectrum:
        """The spectrum of the observations' Gram matrix and ``U^T y`` (cached until new
        data; ``O(t^3)``). With repeated inputs it is folded over the distinct ones
        (``repeated_inputs``; ``eigenvectors`` is then ``None``), on the Kronecker route it
        comes from those of ``K_t`` and ``B`` (``eigenvectors`` ``None``: ``u_a (x) v_j``
        is never formed)."""
        return self.gram_spectrum.spectrum(self)

    @property
    def radius_squared(self) -> Tensor:
        r"""``R_t^2`` of eq. (8) (a 0-d float64 tensor, units of ``y^2``).

        ``y^T (I + c K / sigma^2)^{-1} y + sigma^2 ln det(I + c K / sigma^2) + 2 sigma^2
        ln(1 / delta)`` over the scalar observations (from the Cholesky factor of ``K_t +
        (sigma^2 / c) I`` for one task, from the spectrum for several).

        Raises:
            ValueError: If ``R_t^2`` overflows float64 (observations too large for
                ``noise_std``); the bounds would be NaN (``R~^2 = inf - inf``).
        """
        value = self.gram_spectrum.radius_squared(self)
        if value is self._finite_radius:  # the value kept with the spectrum, checked
            return value
        if not torch.isfinite(value):  # would give NaN bounds (R~^2 = inf - inf)
            raise ValueError(
                f"the radius R_t^2 of paper 002's eq. (8) is {float(value)}: the data fit "
                f"y^T (I + c K / sigma^2)^{{-1}} y overflows float64 for the observations "
                f"(train_Y and the Y of append_observations, largest |y| = "
                f"{float(self.train_Y.abs().max()):.3g}) at noise_std = {self.noise_std:g}; "
                "rescale them (and rkhs_norm_bound and noise_std by the same factor)"
            )
        self._finite_radius = value
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
        value = radius_tilde_squared(self.radius_squared, self.rkhs_norm_bound, alpha, fit)
        return value.reshape(shape)

    def check_nonempty(self) -> None:
        r"""Raise ``EmptyConfidenceSetError`` if the confidence set ``F_t`` is empty.

        ``F_t`` (Lemma 4.2) is non-empty iff ``min_{alpha > 0} R~_alpha^2 >= 0``
        (``emptiness.py``). Needs the spectrum (``O(t^3)`` after new data), unless the
        spectrum object shows ``F_t`` non-empty without it (``witnesses_nonempty``: a
        kernel ridge estimate inside ``F_t``); called by the constructor and by every
        exact bound (and every grid bound of the multi-task bound, which reads the
        spectrum anyway).
        """
        if self._checked_nonempty:
            return
        if self.gram_spectrum.witnesses_nonempty(self):  # without the spectrum
            self._checked_nonempty = True
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
        raise EmptyConfidenceSetError(self.EMPTY_SET_PREFIX + message)

    def _grid_radius_tilde_squared(self, alphas: Tensor) -> Tensor:
        """``R~_alpha^2`` at a grid bound's alphas (clipped at 0), from the spectrum
        object's data fit; ``EmptyConfidenceSetError`` where one is negative (the dual
        is unbounded below there)."""
        radius_sq = self.radius_squared
        fit = self.gram_spectrum.data_fit(self, alphas)
        value = radius_tilde_squared(radius_sq, self.rkhs_norm_bound, alphas, fit)
        if contradicts(float(value.min()), float(radius_sq)):
            self._raise_empty()
        return value.clamp_min(0.0)

    # ------------------------------------------------------------ evaluation
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
        """The data's inputs and ``X_pending`` (cached for the last ``X_pending``)."""
        X_pending = check_X_pending(X_pending, self.input_dim)
        if X_pending is None:
            return None
        if self._pending is None or not self._pending.matches(X_pending):
            with torch.no_grad():
                inputs = self._model_inputs(X_pending)
            self._pending = self.gram_spectrum.pending_inputs(self, X_pending, inputs)
        return self._pending

    def _evaluate(
        self,
        X: Tensor,
        weights: object,
        alphas: float | Sequence[float] | Tensor | None,
        sign: float,
        X_pending: Tensor | None,
    ) -> tuple[Tensor, Tensor | None]:
        """The bounds of the functionals ``weights`` at ``X`` (``batch x d``): values in
        ``X``'s floating dtype (``batch x F``, ``batch`` for one functional given as a
        vector or for ``f(x)`` itself) and the minimizing alphas (float64) where the
        route tracks them."""
        self._check_loaded()
        grid = None if alphas is None else check_alpha_grid(alphas)  # before any allocation
        check_query_points(X, self.input_dim)
        dtype = real_output_dtype(X)
        W, squeeze = self._functionals(weights)
        pending = self._pending_inputs(X_pending)
        batch_shape, d = X.shape[:-1], X.shape[-1]
        flat = self._model_inputs(X.reshape(-1, d))
        name = f"{self.RESULT_NAME} {'upper' if sign > 0 else 'lower'} bound"
        sign = sign if self.outcome_scale > 0 else -sign  # a negative scale swaps the bounds
        spectra = self.gram_spectrum
        if grid is None or not spectra.FACTORED_GRID:
            with torch.no_grad():
                self.check_nonempty()
        if grid is None:
            value, alpha = spectra.exact(self, flat, W, sign, pending)  # N x F
        else:
            grid = grid.to(flat.device)
            radius_tilde_sq = self._grid_radius_tilde_squared(grid)
            value, alpha = spectra.grid(self, flat, W, sign, grid, radius_tilde_sq, pending)
        if flat.requires_grad and not value.requires_grad:
            # a bound that does not depend on X (no data, stationary kernel): zero gradient
            value = value + 0.0 * flat.sum(-1, keepdim=True)
        if self._maps_outcomes:
            value = self.outcome_shift + self.outcome_scale * value
        check_finite_result(value.to(dtype), name, X.reshape(-1, d))
        value = value.reshape(*batch_shape, value.shape[-1]).to(dtype)
        if alpha is not None:
            alpha = alpha.reshape(*batch_shape, alpha.shape[-1])
        if squeeze:
            return value[..., 0], None if alpha is None else alpha[..., 0]
        return value, alpha
