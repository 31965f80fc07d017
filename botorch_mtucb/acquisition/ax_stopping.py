r"""An Ax global stopping strategy: stop when the certified optimality gap is small.

``certified_global_stopping_strategy(epsilon, ...)`` returns an instance of
``CertifiedGlobalStoppingStrategy``, a subclass of Ax's ``BaseGlobalStoppingStrategy``
(``ax.global_stopping.strategies.base``). At each check it

1. reads the completed trials' objective means from ``experiment.lookup_data()`` (one
   objective, maximized or minimized; every parameter a float ``RangeParameter`` on a
   linear scale) and maps the parameters to the unit cube of the search space;
2. fits a ``SingleTaskGP`` (``Standardize``) to them with ``fit_gpytorch_mll`` (the
   hyperparameters are refitted each time: the decision is practical, not guaranteed,
   unless ``rkhs_norm_bound`` is given and the kernel fixed: see ``CertifiedStopping``);
3. certifies the gap on the unit cube (``CertifiedStopping``, branch and bound) and
   stops when it is at most ``epsilon`` (in the objective's units; for a minimized
   objective the certificate is that of ``-y``, the same regret).

``AxClient(global_stopping_strategy=...)`` and Ax's ``Orchestrator`` call
``should_stop_optimization(experiment)`` before each new trial (``AxClient`` raises
``OptimizationShouldStop``); in a loop with Ax's ``Client``, call
``strategy.should_stop_optimization(client)`` yourself.

Ax is imported when the function is called (``pip install ".[ax]"``).
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from botorch.exceptions.errors import UnsupportedError

from botorch_mtucb.acquisition.stopping import CertifiedStopping
from botorch_mtucb.utils.checks import as_int
from botorch_mtucb.utils.domains import BoxDomain

_DTYPE = torch.float64


def _unit_cube_data(experiment: Any) -> tuple[torch.Tensor, torch.Tensor, str, Any]:
    """``X`` (``n x d`` in the unit cube), ``Y`` (``n x 1``, maximized), the metric and
    the map from the unit cube back to the parameters."""
    from ax.core.parameter import ParameterType, RangeParameter
    from ax.core.trial_status import TrialStatus

    config = experiment.optimization_config
    if config is None or not config.objective.is_single_objective:
        raise UnsupportedError(
            "CertifiedGlobalStoppingStrategy needs one objective (a single metric)"
        )
    if config.outcome_constraints:
        raise UnsupportedError(
            "CertifiedGlobalStoppingStrategy does not support outcome constraints"
        )
    metric = config.objective.metric_names[0]
    parameters = list(experiment.search_space.parameters.values())
    for p in parameters:
        if (
            not isinstance(p, RangeParameter)
            or p.parameter_type != ParameterType.FLOAT
            or p.log_scale
            or p.logit_scale
        ):
            raise UnsupportedError(
                f"parameter {p.name!r}: CertifiedGlobalStoppingStrategy needs float "
                "RangeParameters on a linear scale (the certificate is on a box)"
            )
    lower = torch.tensor([float(p.lower) for p in parameters], dtype=_DTYPE)
    width = torch.tensor([float(p.upper) - float(p.lower) for p in parameters], dtype=_DTYPE)
    completed = {t.index for t in experiment.trials_by_status[TrialStatus.COMPLETED]}
    df = experiment.lookup_data().df
    df = df[(df["metric_name"] == metric) & df["trial_index"].isin(completed)]
    rows, values = [], []
    for arm_name, mean in zip(df["arm_name"], df["mean"]):
        arm = experiment.arms_by_name[arm_name]
        rows.append([float(arm.parameters[p.name]) for p in parameters])
        values.append(float(mean))
    X = (torch.tensor(rows, dtype=_DTYPE).reshape(-1, len(parameters)) - lower) / width
    Y = torch.tensor(values, dtype=_DTYPE).reshape(-1, 1)

    def to_parameters(x: torch.Tensor) -> dict[str, float]:
        values = (lower + width * x.to(_DTYPE)).tolist()
        return {p.name: value for p, value in zip(parameters, values)}

    return X, (-Y if config.objective.minimize else Y), metric, to_parameters


@functools.cache
def _strategy_class() -> type:
    from ax.global_stopping.strategies.base import BaseGlobalStoppingStrategy

    class CertifiedGlobalStoppingStrategy(BaseGlobalStoppingStrategy):
        """Ax global stopping on the certified optimality gap (``ax_stopping``)."""

        def __init__(self, rule: CertifiedStopping, min_trials: int, inactive: bool) -> None:
            super().__init__(min_trials=min_trials, inactive_when_pending_trials=inactive)
            self.rule = rule
            self.last_decision = None
            self.last_recommendation: dict[str, float] | None = None

        def __repr__(self) -> str:
            return (
                f"CertifiedGlobalStoppingStrategy(epsilon={self.rule.epsilon}, "
                f"relative={self.rule.relative}, delta={self.rule.delta}, "
                f"min_trials={self.min_trials})"
            )

        def should_stop_optimization(self, experiment: Any, **kwargs: Any) -> tuple[bool, str]:
            from ax.api.client import Client

            if isinstance(experiment, Client):
                experiment = experiment._experiment  # the Client keeps it private
            return super().should_stop_optimization(experiment, **kwargs)

        def _should_stop_optimization(self, experiment: Any, **kwargs: Any) -> tuple[bool, str]:
            from botorch.fit import fit_gpytorch_mll
            from botorch.models import SingleTaskGP
            from botorch.models.transforms.outcome import Standardize
            from gpytorch.mlls import ExactMarginalLogLikelihood

            X, Y, metric, to_parameters = _unit_cube_data(experiment)
            if X.shape[0] < 2:
                return False, f"only {X.shape[0]} completed observations of {metric!r}"
            model = SingleTaskGP(X, Y, outcome_transform=Standardize(1))
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            d = X.shape[-1]
            cube = BoxDomain(torch.stack([torch.zeros(d), torch.ones(d)]).to(_DTYPE))
            decision = self.rule.should_stop(model, cube)
            self.last_decision = decision
            self.last_recommendation = to_parameters(decision.certificate.recommendation)
            return decision.stop, (
                f"{metric}: {decision.message}\n  Recommendation (parameters): "
                f"{self.last_recommendation} (the certificate's x_hat is in the unit cube)"
            )

    return CertifiedGlobalStoppingStrategy


def certified_global_stopping_strategy(
    epsilon: float,
    relative: bool = False,
    delta: float = 0.01,
    min_trials: int = 5,
    inactive_when_pending_trials: bool = True,
    **rule_options: Any,
):
    r"""An Ax ``BaseGlobalStoppingStrategy`` that stops when the certified gap of the
    experiment's single objective is at most ``epsilon`` (module docstring).

    Args:
        epsilon: ``> 0`` in the objective's units (or relative: ``CertifiedStopping``).
        relative: As in ``CertifiedStopping``.
        delta: Confidence level in ``(0, 1)``.
        min_trials: Completed trials before the strategy is consulted (Ax's).
        inactive_when_pending_trials: Ax's: never stop while trials are running.
        rule_options: Passed to ``CertifiedStopping`` (``rkhs_norm_bound``,
            ``max_cells``, ...).

    Returns:
        A ``CertifiedGlobalStoppingStrategy``; its ``last_decision`` holds the last
        ``StoppingDecision`` (certificate included, on the unit cube) and
        ``last_recommendation`` the recommendation as parameters.

    Raises:
        ValueError, TypeError: As ``CertifiedStopping``; ``min_trials`` below 1.
        UnsupportedError: At a check, for several objectives, outcome constraints or
            parameters other than linear float ranges.

    Example:
        >>> from ax.global_stopping.strategies.base import BaseGlobalStoppingStrategy
        >>> from botorch_mtucb.acquisition import certified_global_stopping_strategy
        >>> strategy = certified_global_stopping_strategy(epsilon=0.05, delta=0.1)
        >>> isinstance(strategy, BaseGlobalStoppingStrategy)
        True
    """
    rule = CertifiedStopping(epsilon, relative=relative, delta=delta, **rule_options)
    min_trials = as_int(min_trials, "min_trials", minimum=1)
    return _strategy_class()(rule, min_trials, bool(inactive_when_pending_trials))


def __getattr__(name: str):
    if name == "CertifiedGlobalStoppingStrategy":  # the class, built when Ax is imported
        return _strategy_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
