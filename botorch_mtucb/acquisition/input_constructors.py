"""BoTorch input constructors for the package's acquisitions (Ax's modular generator).

Registered with ``botorch.acquisition.input_constructors.acqf_input_constructor`` on
import of ``botorch_mtucb.acquisition``, so ``get_acqf_input_constructor(cls)`` and
Ax's ``botorch_acqf_class=cls`` work for every acquisition of the package. Ax calls a
constructor with ``model``, ``training_data``, ``bounds``, ``X_baseline``,
``X_pending``, ``posterior_transform`` (a ``ScalarizedPosteriorTransform`` with the
objective weights: ``weights=-1`` for a minimization) and the user's
``botorch_acqf_options``. The direction and the weights reach the acquisitions through
``posterior_transform`` (they take the upper bound of ``w^T f + c``). ``bounds`` and
``X_baseline`` are not needed (the model holds its training data).

A multi-objective experiment adds ``ref_point`` (the objective thresholds): the
scalarized UCBs then draw paper 000's random Chebyshev scalarization of the objectives
for each candidate (``acquisition.multi_objective``); the other acquisitions refuse it.
Outcome constraints (``constraints``, ``constraints_tuple``) and an MC ``objective``
raise ``UnsupportedError`` naming them. ``ScalarizedMartingaleMixtureUCB`` is built on
a bound, not a model: its constructor raises ``UnsupportedError`` saying so.
``ax_generation_strategy`` refuses all of these when the generation strategy is built.

Why this module is long: six registered constructors (for the package's eight
acquisition classes), each with a running example, sharing the refusal of unsupported Ax
arguments and the common inputs; they are registered together when
``botorch_mtucb.acquisition`` is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botorch.acquisition.input_constructors import acqf_input_constructor
from botorch.acquisition.objective import PosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.martingale_mixture_ucb import MartingaleMixtureUCB
from botorch_mtucb.acquisition.multi_objective import multi_objective_scalarization
from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import (
    ScalarizedMartingaleMixtureUCB,
)
from botorch_mtucb.acquisition.scalarized_objective_ucb import ScalarizedObjectiveUCB
from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.single_task_ucb import AYGPUCB, IGPUCB
from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB
from botorch_mtucb.confidence import mt_kb_width

DEFAULT_DELTA = 0.01
MEASUREMENT_NOISE_THROUGH_AX = (
    "measurement_noise_std is not supported through Ax's input constructor: Ax "
    "standardizes the outcomes before the model sees them, so a noise level in your units "
    "cannot be converted; give noise_std in the model's units instead (your noise level "
    "divided by the standard deviation of the observed outcomes)"
)


_MULTI_OBJECTIVE_ACQUISITIONS = ("ScalarizedMultiTaskUCB", "ScalarizedObjectiveUCB")


def _refuse_unsupported(
    objective: object = None,
    constraints: object = None,
    ref_point: object = None,
    multi_objective: bool = False,
) -> None:
    """Raise ``UnsupportedError`` naming what is given and unsupported: outcome
    constraints, an MC objective, a multi-objective ``ref_point`` (unless
    ``multi_objective``). The confidence bounds take only an affine
    ``posterior_transform``."""
    reasons = []
    if constraints is not None:
        reasons.append(
            "outcome constraints (constraints / constraints_tuple: Ax passes them for the "
            "experiment's outcome_constraints): the confidence bound is of the objective "
            "only; remove the outcome constraints"
        )
    if objective is not None:
        reasons.append(
            f"an MC objective (objective={type(objective).__name__}): pass the "
            "objective's direction and weights as a ScalarizedPosteriorTransform (Ax does "
            "so for a single objective or a weighted sum of metrics)"
        )
    if ref_point is not None and not multi_objective:
        reasons.append(
            "multi-objective optimization (ref_point: Ax's objective thresholds): use "
            f"{' or '.join(_MULTI_OBJECTIVE_ACQUISITIONS)}, which draw a random Chebyshev "
            "scalarization of the objectives for each trial (paper 000)"
        )
    if reasons:
        raise UnsupportedError(
            "the acquisitions of botorch_mtucb do not support " + "; nor ".join(reasons)
        )


def _common(
    model: Model,
    posterior_transform: PosteriorTransform | None,
    X_pending: Tensor | None,
    objective: object,
    constraints: object,
    constraints_tuple: object,
    ref_point: object,
    maximize: bool = True,
) -> dict[str, Any]:
    """The checked keyword arguments every acquisition takes (``maximize``: BoTorch's
    minimization switch, as ``construct_inputs_ucb`` passes it)."""
    _refuse_unsupported(
        objective, constraints if constraints is not None else constraints_tuple, ref_point
    )
    return {
        "posterior_transform": posterior_transform,
        "X_pending": X_pending,
        "model": model,
        "maximize": maximize,
    }


def _width(
    model: Model,
    width: float | Tensor | None,
    rkhs_norm_bound: float | None,
    delta: float,
    noise_std: float | None,
) -> float | Tensor:
    """``width``, or MT-KB's width (``mt_kb_width``) for ``rkhs_norm_bound``."""
    if (width is None) == (rkhs_norm_bound is None):
        raise ValueError(
            "give exactly one of width (the confidence width beta_t) and rkhs_norm_bound "
            "(the width is then mt_kb_width(model, rkhs_norm_bound, noise_std, delta)), "
            f"got width={width!r}, rkhs_norm_bound={rkhs_norm_bound!r}"
        )
    if width is not None:
        return width
    return mt_kb_width(model, rkhs_norm_bound=rkhs_norm_bound, noise_std=noise_std, delta=delta)


@acqf_input_constructor(MartingaleMixtureUCB)
def construct_inputs_martingale_mixture_ucb(
    model: Model,
    posterior_transform: PosteriorTransform | None = None,
    X_pending: Tensor | None = None,
    delta: float = DEFAULT_DELTA,
    rkhs_norm_bound: float | None = None,
    noise_std: float | None = None,
    alphas: Any = None,
    mixture_scale: float | None = None,
    objective: object = None,
    constraints: object = None,
    constraints_tuple: object = None,
    ref_point: object = None,
    maximize: bool = True,
    measurement_noise_std: float | None = None,
) -> dict[str, Any]:
    r"""Keyword arguments of ``MartingaleMixtureUCB`` (its constructor's arguments).

    ``measurement_noise_std`` is refused: Ax standardizes the outcomes before the model
    sees them, so a level in your units cannot be converted here; give ``noise_std`` in
    the model's units (your noise level divided by the standard deviation of the
    observed outcomes).

    Raises:
        UnsupportedError: For an ``objective``, outcome constraints, a ``ref_point`` or a
            ``measurement_noise_std``.

    Example:
        >>> import torch
        >>> from botorch.acquisition.input_constructors import get_acqf_input_constructor
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import MartingaleMixtureUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(train_X, train_X.sum(-1, keepdim=True).sin())
        >>> minimize = ScalarizedPosteriorTransform(-torch.ones(1, dtype=torch.float64))
        >>> kwargs = get_acqf_input_constructor(MartingaleMixtureUCB)(
        ...     model=gp, posterior_transform=minimize, delta=0.05)
        >>> acqf = MartingaleMixtureUCB(**kwargs)
        >>> acqf(torch.rand(4, 1, 2, dtype=torch.float64)).shape
        torch.Size([4])
    """
    kwargs = _common(
        model, posterior_transform, X_pending, objective, constraints, constraints_tuple, ref_point,
        maximize,
    )  # fmt: skip
    kwargs["model_or_bound"] = kwargs.pop("model")
    if measurement_noise_std is not None:
        raise UnsupportedError(MEASUREMENT_NOISE_THROUGH_AX)
    return kwargs | {
        "delta": delta,
        "rkhs_norm_bound": rkhs_norm_bound,
        "noise_std": noise_std,
        "alphas": alphas,
        "mixture_scale": mixture_scale,
    }


@acqf_input_constructor(IGPUCB, AYGPUCB)
def construct_inputs_single_task_ucb(
    model: Model,
    posterior_transform: PosteriorTransform | None = None,
    X_pending: Tensor | None = None,
    delta: float = DEFAULT_DELTA,
    rkhs_norm_bound: float | None = None,
    noise_std: float | None = None,
    eta: float | None = None,
    objective: object = None,
    constraints: object = None,
    constraints_tuple: object = None,
    ref_point: object = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of ``IGPUCB`` and ``AYGPUCB`` (``eta``: ``IGPUCB`` only).

    Raises:
        UnsupportedError: For an ``objective``, outcome constraints or a ``ref_point``.

    Example:
        >>> import torch
        >>> from botorch.acquisition.input_constructors import get_acqf_input_constructor
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import IGPUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(train_X, train_X.sum(-1, keepdim=True).sin())
        >>> acqf = IGPUCB(**get_acqf_input_constructor(IGPUCB)(model=gp))
        >>> acqf(torch.rand(4, 1, 2, dtype=torch.float64)).shape
        torch.Size([4])
    """
    kwargs = _common(
        model, posterior_transform, X_pending, objective, constraints, constraints_tuple, ref_point,
        maximize,
    )  # fmt: skip
    kwargs |= {"delta": delta, "rkhs_norm_bound": rkhs_norm_bound, "noise_std": noise_std}
    if eta is not None:
        kwargs["eta"] = eta  # AYGPUCB has no eta: its constructor raises a TypeError
    return kwargs


def _scalarized_inputs(
    model: Model,
    posterior_transform: PosteriorTransform | None,
    X_pending: Tensor | None,
    scalarization: Any,
    width: float | Tensor | None,
    rkhs_norm_bound: float | None,
    delta: float,
    noise_std: float | None,
    objective_names: Sequence[str] | None,
    seed: int | None,
    training_data: object,
    objective: object,
    constraints: object,
    ref_point: Tensor | None,
    allow_minimization: bool,
    maximize: bool = True,
) -> dict[str, Any]:
    """The keyword arguments of the scalarized UCBs, for one or several objectives."""
    multi_objective = ref_point is not None or objective_names is not None
    _refuse_unsupported(objective, constraints, ref_point, multi_objective=True)
    if multi_objective and maximize is not True:
        raise UnsupportedError(
            "maximize=False cannot be combined with several objectives: each objective's "
            "direction comes from the experiment (Ax's objective weights), got "
            f"maximize={maximize!r}"
        )
    kwargs = {"model": model, "X_pending": X_pending, "maximize": maximize}
    kwargs["width"] = _width(model, width, rkhs_norm_bound, delta, noise_std)
    if not multi_objective:
        if seed is not None:
            raise ValueError(
                "seed seeds the random scalarization of a multi-objective experiment (Ax "
                f"passes ref_point); this one has a single objective, got seed={seed!r}"
            )
        return kwargs | {"posterior_transform": posterior_transform, "scalarization": scalarization}
    if scalarization is not None:
        raise UnsupportedError(
            "scalarization cannot be given in a multi-objective experiment: each trial "
            "draws its own random Chebyshev scalarization of the objectives (paper 000); "
            "remove scalarization from botorch_acqf_options"
        )
    scalarization = multi_objective_scalarization(
        model,
        ref_point,
        objective_names,
        training_data,
        posterior_transform,
        X_pending,
        seed,
        allow_minimization=allow_minimization,
    )
    return kwargs | {"posterior_transform": None, "scalarization": scalarization}


@acqf_input_constructor(ScalarizedMultiTaskUCB)
def construct_inputs_scalarized_ucb(
    model: Model,
    posterior_transform: PosteriorTransform | None = None,
    X_pending: Tensor | None = None,
    scalarization: Any = None,
    width: float | Tensor | None = None,
    rkhs_norm_bound: float | None = None,
    delta: float = DEFAULT_DELTA,
    noise_std: float | None = None,
    objective_names: Sequence[str] | None = None,
    seed: int | None = None,
    training_data: object = None,
    objective: object = None,
    constraints: object = None,
    constraints_tuple: object = None,
    ref_point: Tensor | None = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of ``ScalarizedMultiTaskUCB`` (one or several objectives).

    ``width`` or ``rkhs_norm_bound`` (then ``width = mt_kb_width(model,
    rkhs_norm_bound, noise_std, delta)``, paper 000, Theorem 2).

    - One objective: Ax's ``ScalarizedPosteriorTransform`` with ``n`` weights is
      applied first (a weighted sum of metrics; the ``scalarization`` then has one
      weight; ``None``: the identity).
    - Several objectives (Ax passes ``ref_point``; ``objective_names`` names the
      objectives in the experiment's order): the ``scalarization`` is paper 000's
      random Chebyshev scalarization ``min_k lambda_k (sigma_k f_k - z_k)`` of the
      maximization-aligned objectives with a fresh ``lambda_t`` for each candidate
      (seeded by ``seed``) and ``z`` = Ax's thresholds
      (``multi_objective.multi_objective_scalarization``); ``posterior_transform`` is
      then ``None``.

    Raises:
        ValueError: Unless exactly one of ``width`` and ``rkhs_norm_bound`` is given;
            for a ``seed`` with one objective.
        UnsupportedError: For an ``objective`` or outcome constraints (named); for a
            ``scalarization`` with several objectives, or several objectives without
            ``objective_names`` or thresholds.

    Example:
        >>> import torch
        >>> from botorch.acquisition.input_constructors import get_acqf_input_constructor
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(train_X, torch.cat([train_X.sin(), train_X.cos()], -1))
        >>> weights = ScalarizedPosteriorTransform(torch.rand(4, dtype=torch.float64))
        >>> kwargs = get_acqf_input_constructor(ScalarizedMultiTaskUCB)(
        ...     model=gp, posterior_transform=weights, width=2.0)
        >>> ScalarizedMultiTaskUCB(**kwargs)(torch.rand(3, 1, 2, dtype=torch.float64)).shape
        torch.Size([3])
    """
    return _scalarized_inputs(
        model,
        posterior_transform,
        X_pending,
        scalarization,
        width,
        rkhs_norm_bound,
        delta,
        noise_std,
        objective_names,
        seed,
        training_data,
        objective,
        constraints if constraints is not None else constraints_tuple,
        ref_point,
        allow_minimization=True,
        maximize=maximize,
    )


@acqf_input_constructor(ScalarizedObjectiveUCB)
def construct_inputs_scalarized_objective_ucb(
    model: Model,
    posterior_transform: PosteriorTransform | None = None,
    X_pending: Tensor | None = None,
    scalarization: Any = None,
    width: float | Tensor | None = None,
    rkhs_norm_bound: float | None = None,
    delta: float = DEFAULT_DELTA,
    noise_std: float | None = None,
    objective_names: Sequence[str] | None = None,
    seed: int | None = None,
    training_data: object = None,
    objective: object = None,
    constraints: object = None,
    constraints_tuple: object = None,
    ref_point: Tensor | None = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of ``ScalarizedObjectiveUCB``: as
    ``construct_inputs_scalarized_ucb``, except that several objectives must all be
    maximized (it scalarizes the upper bounds ``mu + width * sigma``; the upper bound of
    a minimized ``-f`` is ``-(mu - width * sigma)``, which no scalarization of them
    gives).

    Raises:
        ValueError, UnsupportedError: As ``construct_inputs_scalarized_ucb``, and
            ``UnsupportedError`` naming the minimized objectives.

    Example:
        >>> import torch
        >>> from botorch.acquisition.input_constructors import get_acqf_input_constructor
        >>> from botorch.models import SingleTaskGP
        >>> from botorch.utils.datasets import SupervisedDataset
        >>> from botorch_mtucb.acquisition import ScalarizedObjectiveUCB
        >>> X = torch.rand(10, 2, dtype=torch.float64)
        >>> data = SupervisedDataset(X, X.sin(), feature_names=["x1", "x2"],
        ...                          outcome_names=["f1", "f2"])
        >>> kwargs = get_acqf_input_constructor(ScalarizedObjectiveUCB)(
        ...     model=SingleTaskGP(X, X.sin()), training_data=data, width=2.0, seed=0,
        ...     ref_point=torch.zeros(2, dtype=torch.float64), objective_names=["f1", "f2"])
        >>> kwargs["scalarization"].reference_point  # both maximized: thresholds 0
        tensor([0., 0.], dtype=torch.float64)
    """
    return _scalarized_inputs(
        model,
        posterior_transform,
        X_pending,
        scalarization,
        width,
        rkhs_norm_bound,
        delta,
        noise_std,
        objective_names,
        seed,
        training_data,
        objective,
        constraints if constraints is not None else constraints_tuple,
        ref_point,
        allow_minimization=False,
        maximize=maximize,
    )


@acqf_input_constructor(TaskConditionedUCB, TaskConditionedLCB)
def construct_inputs_task_conditioned(
    model: Model,
    posterior_transform: PosteriorTransform | None = None,
    X_pending: Tensor | None = None,
    task: int = 0,
    width: float | Tensor | None = None,
    rkhs_norm_bound: float | None = None,
    delta: float = DEFAULT_DELTA,
    noise_std: float | None = None,
    objective: object = None,
    constraints: object = None,
    constraints_tuple: object = None,
    ref_point: object = None,
    maximize: bool = True,
) -> dict[str, Any]:
    r"""Keyword arguments of ``TaskConditionedUCB`` and ``TaskConditionedLCB``.

    ``width`` or ``rkhs_norm_bound`` as in ``construct_inputs_scalarized_ucb`` (MT-KB's
    ellipsoid bounds every task: ``|f_i - mu_i| <= width * sigma_i``). The
    ``posterior_transform`` acts on the one output ``task`` (one weight; Ax passes one
    weight per model output, so use it with a single-objective experiment).

    Raises:
        ValueError: Unless exactly one of ``width`` and ``rkhs_norm_bound`` is given.
        UnsupportedError: For an ``objective``, outcome constraints or a ``ref_point``.

    Example:
        >>> import torch
        >>> from botorch.acquisition.input_constructors import get_acqf_input_constructor
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import TaskConditionedUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(train_X, torch.cat([train_X.sin(), train_X.cos()], -1))
        >>> kwargs = get_acqf_input_constructor(TaskConditionedUCB)(model=gp, task=1, width=2.0)
        >>> TaskConditionedUCB(**kwargs).task
        1
    """
    kwargs = _common(
        model, posterior_transform, X_pending, objective, constraints, constraints_tuple, ref_point,
        maximize,
    )  # fmt: skip
    kwargs["width"] = _width(model, width, rkhs_norm_bound, delta, noise_std)
    return kwargs | {"task": task}


@acqf_input_constructor(ScalarizedMartingaleMixtureUCB)
def construct_inputs_scalarized_martingale_mixture_ucb(
    model: Model,
    posterior_transform: PosteriorTransform | None = None,
    X_pending: Tensor | None = None,
    scalarization: Any = None,
    alphas: Any = None,
    chebyshev_lattice: int | None = None,
) -> dict[str, Any]:
    r"""Refuse: ``ScalarizedMartingaleMixtureUCB`` cannot be built from Ax's inputs.

    Ax passes a BoTorch model that it refits at every trial. The acquisition is built
    on a ``MultiTaskMartingaleMixtureBound``: a fixed multi-task kernel ``Gamma = sum_j
    k_j B_j``, a known RKHS norm bound and noise level (paper 002 needs all three
    fixed in advance), and the package has no route from a fitted model to such a
    bound. Build the bound from the data and optimize the acquisition with BoTorch's
    ``optimize_acqf``; with Ax, use ``ScalarizedMultiTaskUCB`` or
    ``ScalarizedObjectiveUCB``.

    Args:
        model: The model Ax passes; the other arguments are the acquisition's (all
            refused with it).

    Raises:
        UnsupportedError: Always, with the reason and what to use instead.

    Example:
        >>> import torch
        >>> from botorch.acquisition.input_constructors import get_acqf_input_constructor
        >>> from botorch.exceptions.errors import UnsupportedError
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import ScalarizedMartingaleMixtureUCB
        >>> train_X = torch.rand(10, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(train_X, torch.cat([train_X.sin(), train_X.cos()], -1))
        >>> try:
        ...     get_acqf_input_constructor(ScalarizedMartingaleMixtureUCB)(model=gp)
        ... except UnsupportedError as error:
        ...     print(str(error)[:64])
        ScalarizedMartingaleMixtureUCB is built on a MultiTaskMartingale
    """
    raise UnsupportedError(
        "ScalarizedMartingaleMixtureUCB is built on a MultiTaskMartingaleMixtureBound "
        "(a fixed multi-task kernel, RKHS norm bound and noise level), not on the fitted "
        f"model Ax passes ({type(model).__name__}), and no route from a model to such a "
        "bound exists: build the bound and call optimize_acqf directly, or use "
        "ScalarizedMultiTaskUCB or ScalarizedObjectiveUCB with Ax"
    )
