"""Ax generation strategies for the package's acquisitions, checked when they are built.

``ax_generation_strategy`` builds Ax's usual two-step strategy (Sobol trials, then Ax's
modular BoTorch generator with one of the package's acquisitions as
``botorch_acqf_class``) and checks the experiment's optimization config against what
the acquisition supports: Ax itself calls the acquisition's input constructor only at
the first BoTorch trial, after the Sobol trials have been run. Refused, with the
unsupported part named: outcome constraints (every acquisition: the confidence bounds
are of the objective only); several objectives except with ``ScalarizedMultiTaskUCB``
and ``ScalarizedObjectiveUCB`` (paper 000's random Chebyshev scalarization, a new
``lambda_t`` per trial, reference point = the objective thresholds:
``acquisition.multi_objective``), and with them an objective that is a weighted sum of
metrics, or, for ``ScalarizedObjectiveUCB``, a minimized one; a weighted sum of metrics
as the single objective of a one-output acquisition; ``ScalarizedMartingaleMixtureUCB``
(built on a bound, not on a model); unknown, missing or out-of-range acquisition
options, and ``maximize`` (Ax sets the direction from the objective).

Ax is imported when the function is called (``pip install ".[ax]"``).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botorch.exceptions.errors import UnsupportedError
from torch import Tensor

from botorch_mtucb.acquisition import input_constructors as constructors
from botorch_mtucb.acquisition.martingale_mixture_ucb import MartingaleMixtureUCB
from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import (
    ScalarizedMartingaleMixtureUCB,
)
from botorch_mtucb.acquisition.scalarized_objective_ucb import ScalarizedObjectiveUCB
from botorch_mtucb.acquisition.scalarized_ucb import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.single_task_ucb import AYGPUCB, IGPUCB
from botorch_mtucb.acquisition.task_conditioned_ucb import TaskConditionedLCB, TaskConditionedUCB
from botorch_mtucb.confidence.constant_checks import check_delta
from botorch_mtucb.utils.checks import as_int, check_positive

if TYPE_CHECKING:  # pragma: no cover
    from ax.generation_strategy.generation_strategy import GenerationStrategy

_CONSTRUCTORS = {
    MartingaleMixtureUCB: constructors.construct_inputs_martingale_mixture_ucb,
    IGPUCB: constructors.construct_inputs_single_task_ucb,
    AYGPUCB: constructors.construct_inputs_single_task_ucb,
    ScalarizedMultiTaskUCB: constructors.construct_inputs_scalarized_ucb,
    ScalarizedObjectiveUCB: constructors.construct_inputs_scalarized_objective_ucb,
    TaskConditionedUCB: constructors.construct_inputs_task_conditioned,
    TaskConditionedLCB: constructors.construct_inputs_task_conditioned,
}
_MULTI_OUTPUT = (ScalarizedMultiTaskUCB, ScalarizedObjectiveUCB)
_WIDTH_OPTIONS = (
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedUCB,
    TaskConditionedLCB,
)
# what Ax passes itself, and what ax_generation_strategy sets
_AX_ARGUMENTS = {"model", "posterior_transform", "X_pending", "training_data", "objective"}
_AX_ARGUMENTS |= {"constraints", "constraints_tuple", "ref_point", "objective_names"}


def _optimization_config(experiment: Any) -> Any:
    """The ``OptimizationConfig`` of a ``Client``, an ``Experiment`` or itself."""
    from ax.api.client import Client
    from ax.core.experiment import Experiment
    from ax.core.optimization_config import OptimizationConfig

    if isinstance(experiment, Client):
        experiment = experiment._experiment  # the Client keeps its experiment private
    if isinstance(experiment, Experiment):
        experiment = experiment.optimization_config
        if experiment is None:
            raise ValueError(
                "the experiment has no optimization config: call "
                "client.configure_optimization(...) before building the generation strategy"
            )
    if not isinstance(experiment, OptimizationConfig):
        raise TypeError(
            "experiment must be an Ax Client, Experiment or OptimizationConfig, got "
            f"{type(experiment).__name__}"
        )
    return experiment


def _objectives(objective: Any) -> list[list[tuple[str, float]]]:
    """The (metric signature, weight) pairs of each objective, as Ax parses them."""
    from ax.utils.common.sympy import (
        extract_metric_weights_from_objective_expr,
        parse_objective_expression,
    )

    parsed = parse_objective_expression(objective.expression)
    signature = objective.metric_name_to_signature
    return [
        [
            (signature[name], weight)
            for name, weight in extract_metric_weights_from_objective_expr(e)
        ]
        for e in (parsed if isinstance(parsed, tuple) else (parsed,))
    ]


def _check_options(acqf_class: type, options: dict[str, Any]) -> None:
    if "objective_names" in options:
        raise ValueError("objective_names is set by ax_generation_strategy: remove it")
    if "maximize" in options:  # Ax passes the direction as the objective's weights
        raise ValueError(
            "maximize must not be given in botorch_acqf_options: Ax sets each objective's "
            "direction from the experiment (objective='-y' minimizes y), and maximize=False "
            f"would reverse it; remove maximize, got maximize={options['maximize']!r}"
        )
    accepted = set(inspect.signature(_CONSTRUCTORS[acqf_class]).parameters) - _AX_ARGUMENTS
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise TypeError(
            f"botorch_acqf_options {unknown} are not options of {acqf_class.__name__}; "
            f"accepted: {sorted(accepted)}"
        )
    if options.get("measurement_noise_std") is not None:
        raise UnsupportedError(constructors.MEASUREMENT_NOISE_THROUGH_AX)
    if "delta" in options:
        check_delta(options["delta"])
    for name in ("width", "rkhs_norm_bound", "noise_std", "mixture_scale", "eta"):
        if options.get(name) is not None and not isinstance(options[name], Tensor):
            check_positive(options[name], name)
    has_width = [name in options for name in ("width", "rkhs_norm_bound")]
    if acqf_class in _WIDTH_OPTIONS and sum(has_width) != 1:
        raise ValueError(
            f"{acqf_class.__name__} needs exactly one of width (the confidence width) and "
            "rkhs_norm_bound (then MT-KB's width of paper 000, Theorem 2) in "
            f"botorch_acqf_options, got {sorted(options)}"
        )


def _check_objectives(
    acqf_class: type,
    objectives: list[list[tuple[str, float]]],
    expression: str,
    options: dict[str, Any],
) -> None:
    name = acqf_class.__name__
    if len(objectives) == 1:
        if len(objectives[0]) > 1 and acqf_class not in _MULTI_OUTPUT:
            raise UnsupportedError(
                f"the objective {expression!r} is a weighted sum of metrics, which "
                f"{name} does not support (it bounds one output): use "
                "ScalarizedMultiTaskUCB or ScalarizedObjectiveUCB"
            )
        return
    if acqf_class not in _MULTI_OUTPUT:
        raise UnsupportedError(
            f"multi-objective optimization (objective {expression!r}) is not supported by "
            f"{name}: use ScalarizedMultiTaskUCB or ScalarizedObjectiveUCB, which draw a "
            "random Chebyshev scalarization of the objectives for each trial (paper 000)"
        )
    sums = [objective for objective in objectives if len(objective) > 1]
    if sums:
        raise UnsupportedError(
            f"the objective {expression!r} has weighted sums of metrics among its "
            f"objectives ({[[m for m, _ in s] for s in sums]}), which the multi-objective "
            f"route of {name} does not support: each objective must be one metric"
        )
    if "scalarization" in options:
        raise UnsupportedError(
            "scalarization cannot be given in a multi-objective experiment: each trial "
            "draws its own random Chebyshev scalarization of the objectives (paper 000); "
            "remove it from botorch_acqf_options"
        )
    minimized = [objective[0][0] for objective in objectives if objective[0][1] < 0]
    if minimized and acqf_class is ScalarizedObjectiveUCB:
        raise UnsupportedError(
            f"the minimized objectives {minimized} are not supported by "
            "ScalarizedObjectiveUCB, which scalarizes the upper bounds mu + width * sigma "
            "(that of -f is -(mu - width * sigma)): use ScalarizedMultiTaskUCB, or report "
            "-f as a metric and maximize it"
        )


def ax_generation_strategy(
    experiment: Any,
    acqf_class: type,
    botorch_acqf_options: Mapping[str, Any] | None = None,
    *,
    num_sobol_trials: int = 5,
    seed: int | None = None,
    optimizer_kwargs: Mapping[str, Any] | None = None,
) -> GenerationStrategy:
    r"""Ax's generation strategy: Sobol, then BoTorch with ``acqf_class``, checked now.

    ``num_sobol_trials`` Sobol trials, then Ax's ``Generators.BOTORCH_MODULAR`` with
    ``botorch_acqf_class=acqf_class`` and ``botorch_acqf_options`` (the input
    constructor's options: ``width`` or ``rkhs_norm_bound``, ``delta``, ...). For several
    objectives the scalarized UCBs maximize paper 000's random Chebyshev scalarization
    ``min_k lambda_k (sigma_k f_k(x) - z_k)`` of the maximization-aligned objectives
    (``sigma_k = -1`` if minimized), with ``z`` = the objective thresholds (inferred by
    Ax where not given) and a new ``lambda_t ~ P_lambda`` (paper 000, Section 5) for
    each trial; the strategy passes the objectives' names (``objective_names``) to match
    the thresholds to the model's outputs. The module docstring lists what is refused.

    Args:
        experiment: An Ax ``Client`` (after ``configure_optimization``), an
            ``Experiment`` or its ``OptimizationConfig``.
        acqf_class: One of the package's acquisitions (not
            ``ScalarizedMartingaleMixtureUCB``).
        botorch_acqf_options: The acquisition's input constructor's options.
        num_sobol_trials: Sobol trials before the first BoTorch trial, ``>= 1``.
        seed: Seeds the Sobol sequence and the scalarizations' weights (``seed`` in the
            options, unless given there); ``None``: random.
        optimizer_kwargs: BoTorch ``optimize_acqf`` options (``num_restarts``,
            ``raw_samples``, ...), or ``None`` for Ax's defaults.

    Returns:
        An Ax ``GenerationStrategy`` (``client.set_generation_strategy(...)``).

    Raises:
        UnsupportedError: For what ``acqf_class`` does not support (named).
        TypeError: For an ``experiment`` or ``acqf_class`` of another kind, or options
            the acquisition does not take.
        ValueError: Without an optimization config, without exactly one of ``width``
            and ``rkhs_norm_bound`` where needed, for ``num_sobol_trials < 1``, a
            ``seed`` with one objective, ``maximize`` among the options (Ax gives the
            direction), ``delta`` outside ``(0, 1)`` or a non-positive ``width``,
            ``rkhs_norm_bound``, ``noise_std``, ``mixture_scale`` or ``eta``.

    Example:
        >>> from ax.api.client import Client
        >>> from ax.api.configs import RangeParameterConfig
        >>> from botorch.exceptions.errors import UnsupportedError
        >>> from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB, ax_generation_strategy
        >>> client = Client(random_seed=0)
        >>> client.configure_experiment(parameters=[
        ...     RangeParameterConfig(name="x", parameter_type="float", bounds=(0.0, 1.0))])
        >>> client.configure_optimization(objective="-f1, -f2",
        ...                               outcome_constraints=["f1 <= 10", "f2 <= 5"])
        >>> strategy = ax_generation_strategy(
        ...     client, ScalarizedMultiTaskUCB, {"width": 1.0}, seed=0)
        >>> [node.name for node in strategy._nodes]
        ['Sobol', 'BoTorch']
        >>> client.configure_optimization(objective="-f1, -f2",
        ...                               outcome_constraints=["f1 <= 10", "g <= 1"])
        >>> try:
        ...     ax_generation_strategy(client, ScalarizedMultiTaskUCB, {"width": 1.0})
        ... except UnsupportedError as error:
        ...     print(str(error)[:72])
        outcome constraints (g <= 1) are not supported by ScalarizedMultiTaskUCB
    """
    from ax.adapter.registry import Generators
    from ax.generation_strategy.generation_node import GenerationNode
    from ax.generation_strategy.generation_strategy import GenerationStrategy
    from ax.generation_strategy.generator_spec import GeneratorSpec
    from ax.generation_strategy.transition_criterion import MinTrials

    optimization_config = _optimization_config(experiment)
    if acqf_class is ScalarizedMartingaleMixtureUCB:
        raise UnsupportedError(
            "ScalarizedMartingaleMixtureUCB is built on a MultiTaskMartingaleMixtureBound "
            "(a fixed multi-task kernel, RKHS norm bound and noise level), not on the model "
            "Ax fits at each trial: build the bound and call optimize_acqf directly, or use "
            "ScalarizedMultiTaskUCB or ScalarizedObjectiveUCB with Ax"
        )
    if acqf_class not in _CONSTRUCTORS:
        raise TypeError(
            "acqf_class must be one of botorch_mtucb's acquisitions "
            f"({', '.join(sorted(c.__name__ for c in _CONSTRUCTORS))}), got {acqf_class!r}"
        )
    num_sobol_trials = as_int(num_sobol_trials, "num_sobol_trials", minimum=1)
    options = dict(botorch_acqf_options or {})
    _check_options(acqf_class, options)
    constraints = optimization_config.outcome_constraints
    if constraints:
        described = ", ".join(getattr(c, "expression", repr(c)) for c in constraints)
        raise UnsupportedError(
            f"outcome constraints ({described}) are not supported by {acqf_class.__name__}: "
            "its confidence bound is of the objective only; remove them (thresholds on "
            "the objectives of a multi-objective experiment are supported)"
        )
    objective = optimization_config.objective
    objectives = _objectives(objective)
    _check_objectives(acqf_class, objectives, objective.expression, options)
    if len(objectives) > 1:
        options["objective_names"] = [metrics[0][0] for metrics in objectives]
        if seed is not None:
            options.setdefault("seed", seed)
    elif "seed" in options:
        raise ValueError(
            "seed seeds the random scalarization of a multi-objective experiment; this "
            f"one has the single objective {objective.expression!r}"
        )
    sobol = GeneratorSpec(
        generator_enum=Generators.SOBOL, generator_kwargs={} if seed is None else {"seed": seed}
    )
    botorch = GeneratorSpec(
        generator_enum=Generators.BOTORCH_MODULAR,
        generator_kwargs={"botorch_acqf_class": acqf_class, "botorch_acqf_options": options},
        generator_gen_kwargs=(
            {"model_gen_options": {"optimizer_kwargs": dict(optimizer_kwargs)}}
            if optimizer_kwargs
            else {}
        ),
    )
    return GenerationStrategy(
        name=f"Sobol+{acqf_class.__name__}",
        nodes=[
            GenerationNode(
                name="Sobol",
                generator_specs=[sobol],
                transition_criteria=[
                    MinTrials(threshold=num_sobol_trials, transition_to="BoTorch")
                ],
            ),
            GenerationNode(name="BoTorch", generator_specs=[botorch]),
        ],
    )
