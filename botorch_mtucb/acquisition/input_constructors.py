"""BoTorch input constructors for the package's acquisitions (Ax's modular generator).

Registered with ``botorch.acquisition.input_constructors.acqf_input_constructor`` on
import of ``botorch_mtucb.acquisition``, so ``get_acqf_input_constructor(cls)`` and
Ax's ``botorch_acqf_class=cls`` work for every acquisition of the package. Ax calls a
constructor with ``model``, ``training_data``, ``bounds``, ``X_baseline``,
``X_pending``, ``posterior_transform`` (a ``ScalarizedPosteriorTransform`` with the
objective weights: ``weights=-1`` for a minimization) and the user's
``botorch_acqf_options``. The direction and the weights reach the acquisitions through
``posterior_transform`` (they take the upper bound of ``w^T f + c``). ``training_data``,
``bounds`` and ``X_baseline`` are not needed (the model holds its training data); an
``objective``, outcome ``constraints`` or a ``ref_point`` raise ``UnsupportedError``.
``ScalarizedMartingaleMixtureUCB`` is built on a bound, not a model: its constructor
raises ``UnsupportedError`` saying so.
"""

from __future__ import annotations

from typing import Any

from botorch.acquisition.input_constructors import acqf_input_constructor
from botorch.acquisition.objective import PosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.acquisition.martingale_mixture_ucb import MartingaleMixtureUCB
from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import (
    ScalarizedMartingaleMixtureUCB,
)
from botorch_mtucb.acquisition.scalarized_objective_ucb import ScalarizedObjectiveUCB
from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.single_task_ucb import AYGPUCB, IGPUCB
from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB
from botorch_mtucb.confidence import mt_kb_width

DEFAULT_DELTA = 0.01


def _refuse_unsupported(
    objective: object = None, constraints: object = None, ref_point: object = None
) -> None:
    """Raise ``UnsupportedError`` for an MC objective, outcome constraints or a
    multi-objective reference point (the confidence bounds take only an affine
    ``posterior_transform``)."""
    given = {"objective": objective, "constraints": constraints, "ref_point": ref_point}
    given = [name for name, value in given.items() if value is not None]
    if given:
        raise UnsupportedError(
            f"the acquisitions of botorch_mtucb do not support {', '.join(given)}: pass "
            "the objective's direction and weights as a ScalarizedPosteriorTransform "
            "(Ax does so for a single objective or a ScalarizedObjective)"
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
) -> dict[str, Any]:
    r"""Keyword arguments of ``MartingaleMixtureUCB`` (its constructor's arguments).

    Raises:
        UnsupportedError: For an ``objective``, outcome constraints or a ``ref_point``.

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


@acqf_input_constructor(ScalarizedMultiTaskUCB, ScalarizedObjectiveUCB)
def construct_inputs_scalarized_ucb(
    model: Model,
    posterior_transform: PosteriorTransform | None = None,
    X_pending: Tensor | None = None,
    scalarization: Any = None,
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
    r"""Keyword arguments of ``ScalarizedMultiTaskUCB`` and ``ScalarizedObjectiveUCB``.

    ``width`` or ``rkhs_norm_bound`` (then ``width = mt_kb_width(model,
    rkhs_norm_bound, noise_std, delta)``, paper 000, Theorem 2). Several objectives:
    Ax's ``ScalarizedPosteriorTransform`` with ``n`` weights is applied first (the
    ``scalarization`` then has one weight; ``None``: the identity).

    Raises:
        ValueError: Unless exactly one of ``width`` and ``rkhs_norm_bound`` is given.
        UnsupportedError: For an ``objective``, outcome constraints or a ``ref_point``.

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
    kwargs = _common(
        model, posterior_transform, X_pending, objective, constraints, constraints_tuple, ref_point,
        maximize,
    )  # fmt: skip
    kwargs["width"] = _width(model, width, rkhs_norm_bound, delta, noise_std)
    return kwargs | {"scalarization": scalarization}


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
