"""The martingale-mixture upper confidence bound as a BoTorch acquisition function.

Source: paper 002, Algorithm 1 (KernelUCB) with the bounds of Sections 5.3-5.5:
exact (Kernel CMM-UCB, eq. (10) / (12)), grid (Kernel DMM-UCB) and analytic (Kernel
AMM-UCB, Cor. 4.6). Built from a fitted BoTorch GP it is a drop-in for BoTorch's
``UpperConfidenceBound``; pending points follow GP-BUCB (Desautels, Krause & Burdick
2014, JMLR 15).

**One output of a multi-output wrapper** (``models.botorch_readers.wrapped_outputs``): each is paper
002's bound on one scalar GP, with the guarantee for an explicit ``B``:

* a ``ModelListGP`` of one single-output model: that model's bound;
* ``MultiTaskGP(..., output_tasks=[i])``: the bound at ``(x, i)`` of the scalar GP on
  ``X x [n]`` with the model's product kernel, learned from the observations of all
  tasks; ``B`` bounds the RKHS norm (of that kernel) of ``(x, a) -> f~_a(x) - c_a``,
  the transformed outcome minus each task's fitted constant mean. Its noise level
  (``noise_std=None``) is the largest noise variance of the rows (the noisiest
  task's), a sub-Gaussian level valid for every observation;
* a multi-output ``SingleTaskGP`` (independent outputs on shared inputs) with a
  ``ScalarizedPosteriorTransform(w, offset)`` of one weight per output: the bound of
  ``w^T f(x) + offset`` from the scalarized GP ``g~ = sum_i (a_i / S) (f~_i - c_i)``
  (``a_i = w_i s_i`` with ``Standardize``'s stds ``s_i``, ``S = ||a||_2``), observed as
  ``z~ = sum_i (a_i / S) (y~_i - c_i)`` with kernel ``sum_i (a_i / S)^2 k_i``; ``B``
  bounds ``||g~||`` in that kernel's RKHS (at most ``(sum_i ||f~_i - c_i||_{k_i}^2)^{1/2}``,
  transformed units), and the noise level is ``max_s (sum_i (a_i / S)^2
  sigma_{s,i}^2)^{1/2}`` (independent noise across outputs). The bound conditions on
  ``z~`` only, so it can be wider than BoTorch's posterior of ``w^T f``, which
  conditions on every output (they agree when the ``k_i / sigma_i^2`` are proportional).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence

import torch
from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.acquisition.candidates import check_maximize, one_candidate_per_batch
from botorch_mtucb.acquisition.posterior_moments import (
    check_posterior_transform,
    check_single_output,
)
from botorch_mtucb.confidence.martingale_mixture import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.gram_cache import check_alpha_grid
from botorch_mtucb.confidence.martingale_mixture.noise_level import (
    noise_at_likelihood_floor,
    resolve_noise_std,
)
from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
    choose_rkhs_norm_bound,
    norm_bound_with_allowance,
)
from botorch_mtucb.models.botorch_readers import (
    ScalarGPData,
    is_scalarized_multi_output,
    is_single_task_multi_task_gp,
    multi_task_output_data,
    scalarized_output_data,
    unwrap_model_list,
)
from botorch_mtucb.utils.checks import check_kernel_values, check_X_pending

DEFAULT_DELTA = 0.01
DMM_MULTIPLES = (0.1, 0.3, 1.0, 3.0, 10.0)  # DMM-UCB's grid / (sigma^2 / c) (paper 002, Sec. 7)


class MartingaleMixtureUCB(AnalyticAcquisitionFunction):
    r"""``u_t(x)``: the martingale-mixture upper confidence bound of paper 002.

    ``u_t(x) = min_{alpha in A} mu_alpha(x) + R~_alpha / sqrt(alpha) rho_alpha(x)``, with
    ``A = (0, inf)`` (``alphas=None``: the exact bound of eq. (10), CMM-UCB), a grid
    (DMM-UCB) or one ``alpha`` (the analytic bound of Cor. 4.6, AMM-UCB). Gradients with
    respect to ``X`` flow through the bound at the minimizing ``alpha``, so
    ``optimize_acqf`` can maximize it over a box; ``optimize_acqf_discrete`` over a
    finite set. Values have the dtype of ``X`` (float32 or float64; internally float64).

    **From a fitted BoTorch GP** (the one-line swap for ``UpperConfidenceBound(gp,
    beta=...)``): ``MartingaleMixtureUCB(gp, delta=0.01)`` builds the bound with
    ``MartingaleMixtureBound.from_model`` in the model's transformed space (its input
    transform, ``Standardize``, its kernel and likelihood noise) and returns values in
    the user's outcome units, maximized over the user's input space. The acquisition
    is a snapshot: build a new one after refitting the model (as BoTorch's loop does).
    ``rkhs_norm_bound=None`` chooses ``B`` from the data (``norm_choice``: the
    confidence set is never empty; a practical choice without the theorem's
    guarantee); an explicit ``B`` (transformed units) keeps paper 002's guarantee and
    raises ``EmptyConfidenceSetError`` when the data contradict it.

    **The noise level** is the likelihood's fitted noise unless you state it:
    ``measurement_noise_std=s`` (the user's outcome units; a sub-Gaussian level of the
    measurement error, e.g. the noise's standard deviation for Gaussian noise; any
    ``s > 0`` for exact evaluations) replaces it
    (``confidence.martingale_mixture.noise_level``). On exact data the fitted noise falls
    towards the likelihood's lower constraint, and its ``sigma^2 ln det(I + K /
    sigma^2)`` term then makes the bound several to tens of posterior standard
    deviations wide (a ``UserWarning`` says so when the fit reaches the constraint).
    With an explicit ``B`` the stated level keeps the theorem (if it is at least the
    true one) and narrows the bound. With ``B`` chosen from the data the plain rule
    would make the set nearly one function (the minimum-norm interpolant) and the bound
    nearly the posterior mean, so the rule then adds the largest leave-one-out increment
    of the squared norm (``norm_choice.norm_bound_with_allowance``: the next observation
    may add as much as the most surprising past one did; no probability statement). For a multi-output
    ``SingleTaskGP`` with a ``ScalarizedPosteriorTransform`` it is the level of the
    scalarized observation ``w^T y``: ``(sum_i w_i^2 s_i^2)^{1/2}`` for independent noises
    of levels ``s_i``.

    **From a prebuilt bound**: ``MartingaleMixtureUCB(bound)`` or
    ``MartingaleMixtureUCB.from_bound(bound, alphas)``; the acquisition's ``model`` is
    then ``None`` (the bound is not a BoTorch ``Model``).

    **One output of a multi-output wrapper** (a ``ModelListGP`` of one model,
    ``MultiTaskGP(..., output_tasks=[i])``, a multi-output ``SingleTaskGP`` with a
    ``ScalarizedPosteriorTransform`` of one weight per output): paper 002's bound on one
    scalar GP; what ``B`` and the noise level then mean is in the module docstring.

    **maximize=False** (BoTorch's minimization switch): the upper bound of ``-f``, i.e.
    ``-l_t(x)`` (minus the lower bound); with a ``posterior_transform``, of ``-(w f + c)``.
    Valid with the same probability as ``u_t`` (the confidence set bounds ``f`` on both
    sides).

    **Pending points** (``X_pending``, ``set_X_pending``; ``optimize_acqf(q=k,
    sequential=True)`` and ``optimize_acqf_discrete(q=k)``): GP-BUCB (Desautels et al.
    2014, Section 4): the mean and the radius of the bound are those of the real
    observations; only ``rho_alpha`` is computed as if the pending points had been
    observed, which pushes the next point away from them. Why the batch is still
    covered: paper 002's confidence sets hold with probability ``1 - delta`` for *any*
    sequence of query points that is predictable (each ``x_s`` chosen before ``y_s``
    is seen; Assumption 6.1's filtration). A batch chosen from the data up to ``t`` is
    such a sequence, so the sets built after its observations arrive (real data only;
    hallucinated values never enter them) stay valid, and so does every bound
    reported with them. The hallucinated score used to rank the 2nd, ..., k-th point is
    smaller than ``u_t(x)`` and is not itself a bound on ``f(x)``; it changes only
    which points are chosen. (Paper 002's regret bounds are for ``q = 1``; GP-BUCB's
    batch regret analysis needs a width inflated by ``exp(C)``, which is not applied.)
    Joint ``q > 1`` batches (``sequential=False``) raise a ``ValueError``.

    **posterior_transform**: ``None`` or a ``ScalarizedPosteriorTransform`` with one
    weight ``w`` and offset ``c`` (Ax passes ``w = -1`` for a minimization): the value
    is the upper bound of ``w f + c``, i.e. ``c + w u_t(x)`` for ``w > 0`` and ``c + w
    l_t(x)`` (the lower bound) for ``w < 0``; another transform raises
    ``UnsupportedError``.

    ``.to(device)`` moves the bound (it stays float64).

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch.optim import optimize_acqf
        >>> from botorch_mtucb.acquisition import MartingaleMixtureUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> train_Y = 50.0 + 10.0 * train_X.sum(-1, keepdim=True).sin()
        >>> gp = SingleTaskGP(train_X, train_Y)  # Standardize by default
        >>> acqf = MartingaleMixtureUCB(gp, delta=0.01)
        >>> bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> candidate, value = optimize_acqf(acqf, bounds, q=1, num_restarts=4,
        ...                                  raw_samples=64)
        >>> candidate.shape, bool(value > 40.0)  # in the units of train_Y
        (torch.Size([1, 2]), True)
        >>> batch, _ = optimize_acqf(acqf, bounds, q=3, num_restarts=4, raw_samples=64,
        ...                          sequential=True)  # GP-BUCB
        >>> batch.shape
        torch.Size([3, 2])
    """

    def __init__(
        self,
        model_or_bound: object,
        *,
        delta: float | None = None,
        rkhs_norm_bound: float | None = None,
        noise_std: float | None = None,
        alphas: float | Sequence[float] | Tensor | str | None = None,
        X_pending: Tensor | None = None,
        posterior_transform: PosteriorTransform | None = None,
        mixture_scale: float | None = None,
        maximize: bool = True,
        measurement_noise_std: float | None = None,
    ) -> None:
        r"""Build the acquisition.

        Args:
            model_or_bound: A fitted single-output exact BoTorch GP (``SingleTaskGP``
                with or without outcome and input transforms, fixed or learned noise;
                see ``models.botorch_readers.single_output``), one inside a multi-output wrapper
                (class docstring), or a ``MartingaleMixtureBound``.
            delta: Confidence level in ``(0, 1)``; ``None``: 0.01 for a model. Not
                given with a bound (it has its own).
            rkhs_norm_bound: ``B > 0`` on ``||f_tilde||_H`` (transformed units);
                ``None`` chooses it from the data. Model only.
            noise_std: ``sigma > 0`` (transformed units); ``None`` takes the model's
                likelihood noise. Model only.
            alphas: ``None`` for the exact bound, a grid of ``alpha > 0`` (DMM-UCB) or
                a single ``alpha`` (AMM-UCB), in the bound's (transformed) units, or
                ``"DMM"`` (the grid ``{0.1, 0.3, 1, 3, 10} sigma^2 / c`` of paper 002,
                Section 7) or ``"AMM"`` (``alpha = sigma^2 / c``). Kept as a float64
                CPU tensor (not a buffer, so that ``.to(dtype)`` cannot round it).
            X_pending: ``m x d`` points chosen but not yet observed (GP-BUCB).
            posterior_transform: ``None`` or a ``ScalarizedPosteriorTransform`` with
                one weight (``n`` for a multi-output ``SingleTaskGP``: the scalarized
                GP).
            mixture_scale: ``c > 0`` of eq. (8) for a model (``None``: 1). Model only.
            maximize: ``False``: the upper bound of ``-f`` (class docstring).
            measurement_noise_std: A sub-Gaussian level of the measurement error in the
                user's outcome units (a deterministic simulator: its precision), in
                place of the likelihood's fitted noise, which collapses to its lower
                constraint on noise-free data and makes the bound many posterior
                standard deviations wide (``confidence.martingale_mixture.noise_level``).
                Not with ``noise_std``. Model only.

        Raises:
            TypeError: For a ``model_or_bound`` that is neither a bound nor a model the
                route reads (naming its type and what is accepted), or ``maximize``
                not a bool.
            ValueError: For non-positive or non-finite ``alphas`` or more than
                ``MAX_ALPHAS`` (100, ``gram_cache``) of them, an unknown string, a transform with NaN/inf
                weights or offset, a model with several outputs and no transform of
                one weight per output,
                ``delta``, ``rkhs_norm_bound``, ``noise_std``, ``mixture_scale`` or
                ``measurement_noise_std`` given with a bound, both ``noise_std`` and
                ``measurement_noise_std``, a bad ``X_pending`` (shape ``m x d``, NaN/inf) or
                a model the route refuses (``MartingaleMixtureBound.from_model``).
            UnsupportedError: For a ``posterior_transform`` other than a
                ``ScalarizedPosteriorTransform``.
            EmptyConfidenceSetError: For an explicit ``rkhs_norm_bound`` that the
                model's data contradict.
        """
        Module.__init__(self)  # AcquisitionFunction.__init__ would need a Model
        self.maximize = check_maximize(maximize)
        input_map, scalarized = None, False
        if isinstance(model_or_bound, MartingaleMixtureBound):
            given = {"delta": delta, "rkhs_norm_bound": rkhs_norm_bound, "noise_std": noise_std}
            given["mixture_scale"] = mixture_scale
            given["measurement_noise_std"] = measurement_noise_std
            extra = [name for name, value in given.items() if value is not None]
            if extra:
                raise ValueError(
                    f"{', '.join(extra)} must not be given with a MartingaleMixtureBound "
                    "(the bound fixes them); pass a BoTorch model to build a new bound"
                )
            bound = model_or_bound
            input_dim = bound.train_X.shape[-1]
            self.model = None  # no BoTorch Model (optimize_acqf(sequential=True) reads it)
        else:
            if not isinstance(model_or_bound, Model):
                raise TypeError(
                    "model_or_bound must be a fitted single-output BoTorch GP (e.g. "
                    "SingleTaskGP) or a MartingaleMixtureBound, got "
                    f"{type(model_or_bound).__name__}"
                )
            model = unwrap_model_list(model_or_bound)
            scalarized = is_scalarized_multi_output(model, posterior_transform)
            outputs = model.num_outputs if scalarized else 1
            check_posterior_transform(posterior_transform, outputs)  # before any work
            settings = {
                "rkhs_norm_bound": rkhs_norm_bound,
                "noise_std": noise_std,
                "delta": DEFAULT_DELTA if delta is None else delta,
                "mixture_scale": 1.0 if mixture_scale is None else mixture_scale,
                "measurement_noise_std": measurement_noise_std,
            }
            if scalarized or is_single_task_multi_task_gp(model):
                data = (
                    scalarized_output_data(model, posterior_transform)
                    if scalarized
                    else multi_task_output_data(model)
                )
                bound = bound_from_data(data, **settings)
                input_map, input_dim = data.input_map, data.input_dim
            else:
                check_single_output(model, "model_or_bound")
                bound = MartingaleMixtureBound.from_model(model, **settings)
                if noise_std is None and measurement_noise_std is None:
                    _warn_if_noise_at_floor(model)
                input_dim = bound.train_X.shape[-1]
            self.model = model_or_bound
        self.bound = bound
        self.input_map = input_map  # the user's points -> the bound's rows (None: same)
        self.input_dim = input_dim
        self.alphas = _resolve_alphas(alphas, bound)
        outputs = self.model.num_outputs if scalarized else 1
        self.posterior_transform = check_posterior_transform(posterior_transform, outputs)
        weight, offset = 1.0, 0.0  # the affine map applied to the bound's value
        if self.posterior_transform is not None and not scalarized:  # else in the bound
            weight = float(self.posterior_transform.weights.reshape(()))
            offset = float(self.posterior_transform.offset)
        direction = 1.0 if self.maximize else -1.0  # maximize=False: the bound of -f
        self._affine = (direction * weight, direction * offset)
        self.set_X_pending(X_pending)

    @classmethod
    def from_bound(
        cls,
        bound: MartingaleMixtureBound,
        alphas: float | Sequence[float] | Tensor | str | None = None,
        X_pending: Tensor | None = None,
    ) -> MartingaleMixtureUCB:
        r"""The acquisition of a prebuilt ``MartingaleMixtureBound``.

        Args:
            bound: A ``MartingaleMixtureBound`` on the data seen so far.
            alphas, X_pending: As in the constructor.

        Raises:
            TypeError: If ``bound`` is not a ``MartingaleMixtureBound``.
            ValueError: For bad ``alphas`` or ``X_pending``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.acquisition import MartingaleMixtureUCB
            >>> from botorch_mtucb.confidence import MartingaleMixtureBound
            >>> train_X = torch.rand(10, 2, dtype=torch.float64)
            >>> bound = MartingaleMixtureBound(train_X, train_X[:, :1].sin(), RBFKernel(),
            ...                                10.0, 0.1, 0.01)
            >>> acqf = MartingaleMixtureUCB.from_bound(bound, alphas="DMM")
            >>> [round(a, 6) for a in acqf.alphas.tolist()]  # multiples of 0.1^2
            [0.001, 0.003, 0.01, 0.03, 0.1]
        """
        if not isinstance(bound, MartingaleMixtureBound):
            raise TypeError(f"bound must be a MartingaleMixtureBound, got {type(bound).__name__}")
        return cls(bound, alphas=alphas, X_pending=X_pending)

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        """Set (or clear, with ``None``) the ``m x d`` pending points (GP-BUCB).

        Raises:
            TypeError, ValueError: For ``X_pending`` that is not ``None`` or an
                ``m x d`` floating tensor without NaN/inf.
        """
        self.X_pending = check_X_pending(X_pending, self.input_dim)

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate ``u_t`` at ``X``.

        Args:
            X: ``batch x 1 x d`` candidates (``ValueError`` for another shape, naming
                it: ``q = 1`` is required).

        Returns:
            A ``batch`` tensor of upper confidence bounds (the user's units of ``f``).
        """
        rows, pending = X.squeeze(-2), self.X_pending  # batch x d
        if self.input_map is not None:  # the bound's rows (a task column, the transform)
            rows = self.input_map(rows.to(torch.float64))
            if pending is not None:
                with torch.no_grad():
                    pending = self.input_map(pending.to(torch.float64))
        weight, offset = self._affine
        side = self.bound.upper if weight >= 0 else self.bound.lower  # w l_t for w < 0
        value = side(rows, alphas=self.alphas, X_pending=pending)  # batch
        if (weight, offset) != (1.0, 0.0):
            value = offset + weight * value
        return value.to(X.dtype)

    def __repr__(self) -> str:
        kind = "exact" if self.alphas is None else f"alphas={self.alphas.tolist()}"
        return f"{type(self).__name__}({kind}, t={self.bound.num_observations})"


def bound_from_data(
    data: ScalarGPData,
    rkhs_norm_bound: float | None,
    noise_std: float | None,
    delta: float,
    mixture_scale: float,
    measurement_noise_std: float | None = None,
) -> MartingaleMixtureBound:
    r"""``MartingaleMixtureBound`` on a scalar GP's data (``models.botorch_readers.wrapped_outputs``), as
    ``MartingaleMixtureBound.from_model`` builds it from a model: in the kernel's space
    (rows, centered targets), ``noise_std=None`` the square root of the largest noise
    variance (or ``measurement_noise_std`` in the data's outcome units, ``noise_level``), ``rkhs_norm_bound=None`` chosen from the data (``norm_choice``), and the
    affine map of the data's outcome. The bound takes rows (``data.kernel_inputs(X)``).

    Example:
        >>> import torch
        >>> from botorch.models import MultiTaskGP
        >>> from botorch_mtucb.acquisition.martingale_mixture_ucb import bound_from_data
        >>> from botorch_mtucb.models.botorch_readers import multi_task_output_data
        >>> X = torch.rand(8, 2, dtype=torch.float64)
        >>> X[:, -1] = torch.tensor([0.0, 1.0]).repeat(4)
        >>> data = multi_task_output_data(
        ...     MultiTaskGP(X, X[:, :1].sin(), task_feature=-1, output_tasks=[0]))
        >>> bound = bound_from_data(data, None, None, 0.01, 1.0)
        >>> bound.num_observations, bound.rkhs_norm_bound_from_data
        (8, True)
    """
    train_X = data.train_X.detach().to(torch.float64)
    train_Y = data.train_Y.detach().to(torch.float64)
    noise_std = resolve_noise_std(
        noise_std, measurement_noise_std, data.outcome_scale, train_X, data.kernel,
        lambda: float(data.noise_variance.max()),
    )  # fmt: skip
    chosen = rkhs_norm_bound is None
    if chosen:
        kernel = copy.deepcopy(data.kernel).to(device=train_X.device, dtype=torch.float64)
        with torch.no_grad():
            gram = kernel(train_X).to_dense()
        check_kernel_values(gram, train_X, "train_X")
        rule = (
            choose_rkhs_norm_bound if measurement_noise_std is None else norm_bound_with_allowance
        )
        rkhs_norm_bound = rule(gram, train_Y, noise_std, delta, mixture_scale)
    bound = MartingaleMixtureBound(
        train_X,
        train_Y,
        data.kernel,
        rkhs_norm_bound=rkhs_norm_bound,
        noise_std=noise_std,
        delta=delta,
        mixture_scale=mixture_scale,
        outcome_shift=data.outcome_shift,
        outcome_scale=data.outcome_scale,
    )
    bound.rkhs_norm_bound_from_data = chosen
    return bound


def _warn_if_noise_at_floor(model: Model) -> None:
    """A ``UserWarning`` (once per call site) when the model's fitted noise sits at its
    likelihood's lower constraint: the bound then uses that floor as ``sigma``."""
    if noise_at_likelihood_floor(model):
        warnings.warn(
            "the model's fitted noise variance sits at its likelihood's lower constraint "
            "(the data look noise-free), and the bound uses it as the noise level, which "
            "makes it many posterior standard deviations wide; pass "
            "measurement_noise_std=<your measurement precision, outcome units> for a "
            "bound as tight as exact data allow",
            UserWarning,
            stacklevel=3,
        )


def _resolve_alphas(
    alphas: float | Sequence[float] | Tensor | str | None, bound: MartingaleMixtureBound
) -> Tensor | None:
    """``None``, the checked alphas, or DMM's / AMM's alphas of ``bound``."""
    if isinstance(alphas, str):
        multiples = {"DMM": DMM_MULTIPLES, "AMM": (1.0,)}.get(alphas)
        if multiples is None:
            raise ValueError(
                f"alphas must be None, 'DMM', 'AMM', a positive number or a sequence of "
                f"them, got {alphas!r}"
            )
        alphas = [m * bound.base_alpha for m in multiples]
    if alphas is None:
        return None
    return check_alpha_grid(alphas)  # at most MAX_ALPHAS, counted before anything is built
