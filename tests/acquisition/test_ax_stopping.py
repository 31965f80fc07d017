"""The Ax global stopping strategy stops an Ax experiment by itself on a tiny 1-D problem
(``AxClient`` raises ``OptimizationShouldStop``; the ``Client`` loop asks it), with the
certificate on the unit cube and the recommendation mapped back to the parameters."""

from __future__ import annotations

import logging
import math
import warnings

import pytest
from botorch.exceptions.errors import UnsupportedError

from botorch_mtucb.acquisition import certified_global_stopping_strategy


def _sobol_only():
    from ax.adapter.registry import Generators
    from ax.generation_strategy.generation_node import GenerationNode
    from ax.generation_strategy.generation_strategy import GenerationStrategy
    from ax.generation_strategy.generator_spec import GeneratorSpec

    spec = GeneratorSpec(generator_enum=Generators.SOBOL, generator_kwargs={"seed": 0})
    return GenerationStrategy(name="Sobol", nodes=[GenerationNode("Sobol", [spec])])


def test_ax_client_stops_by_itself():
    from ax.exceptions.core import OptimizationShouldStop
    from ax.service.ax_client import AxClient, ObjectiveProperties

    logging.getLogger("ax").setLevel(logging.ERROR)
    strategy = certified_global_stopping_strategy(epsilon=0.2, delta=0.1, min_trials=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        client = AxClient(
            generation_strategy=_sobol_only(),
            global_stopping_strategy=strategy,
            verbose_logging=False,
            random_seed=0,
        )
    client.create_experiment(
        name="certified",
        parameters=[{"name": "x", "type": "range", "bounds": [-1.0, 1.0]}],
        objectives={"y": ObjectiveProperties(minimize=True)},
    )
    stopped_at = None
    for trial in range(25):
        try:
            parameters, index = client.get_next_trial()
        except OptimizationShouldStop as stop:
            stopped_at, message = trial, stop.message
            break
        x = parameters["x"]
        client.complete_trial(index, raw_data={"y": ((x - 0.3) ** 2, 0.0)})
    assert stopped_at is not None and 4 <= stopped_at < 25
    assert "stop" in message and "certified gap" in message
    decision = strategy.last_decision
    assert decision.stop and decision.certificate.gap <= 0.2
    x_hat = strategy.last_recommendation["x"]
    assert -1.0 <= x_hat <= 1.0 and (x_hat - 0.3) ** 2 <= 0.2 + 1e-9  # epsilon-optimal
    assert "CertifiedGlobalStoppingStrategy(epsilon=0.2" in repr(strategy)


def test_client_loop_and_refused_experiments():
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    logging.getLogger("ax").setLevel(logging.ERROR)
    strategy = certified_global_stopping_strategy(epsilon=0.3, min_trials=3)
    client = Client(random_seed=0)
    client.configure_experiment(
        parameters=[RangeParameterConfig(name="x", parameter_type="float", bounds=(0.0, 2.0))]
    )
    client.configure_optimization(objective="y")
    client.set_generation_strategy(_sobol_only())
    assert strategy.should_stop_optimization(client) == (
        False,
        f"There are only 0 completed trials, but {strategy} has a minimum of 3.",
    )
    for _ in range(12):
        for index, parameters in client.get_next_trials(max_trials=1).items():
            client.complete_trial(index, raw_data={"y": math.sin(3 * parameters["x"])})
        stop, message = strategy.should_stop_optimization(client)
        if stop:
            break
    assert stop and "Recommendation (parameters)" in message

    client = Client(random_seed=0)
    client.configure_experiment(
        parameters=[RangeParameterConfig(name="x", parameter_type="int", bounds=(0, 5))]
    )
    client.configure_optimization(objective="y")
    client.set_generation_strategy(_sobol_only())
    for index, parameters in client.get_next_trials(max_trials=3).items():
        client.complete_trial(index, raw_data={"y": float(parameters["x"])})
    with pytest.raises(UnsupportedError, match="float RangeParameters"):
        strategy.should_stop_optimization(client)


def test_bad_arguments():
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        certified_global_stopping_strategy(epsilon=float("nan"))
    with pytest.raises(ValueError, match="min_trials must be >= 1"):
        certified_global_stopping_strategy(epsilon=0.1, min_trials=0)
    with pytest.raises(ValueError, match="delta must lie in"):
        certified_global_stopping_strategy(epsilon=0.1, delta=2.0)
