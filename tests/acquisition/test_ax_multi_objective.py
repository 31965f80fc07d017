"""Ax multi-objective experiments with the scalarized UCBs (paper 000's random Chebyshev
scalarization per trial), and what ``ax_generation_strategy`` refuses when it builds."""

from __future__ import annotations

import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.test_functions.multi_objective import BraninCurrin
from botorch.utils.multi_objective.hypervolume import Hypervolume
from botorch.utils.multi_objective.pareto import is_non_dominated

from botorch_mtucb.acquisition import (
    IGPUCB,
    MartingaleMixtureUCB,
    ScalarizedMartingaleMixtureUCB,
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedUCB,
    ax_generation_strategy,
    input_constructors,
)
from botorch_mtucb.acquisition.multi_objective import SignedScalarization

pytest.importorskip("ax")

THRESHOLDS = (50.0, 10.0)  # branin <= 50, currin <= 10: the reference point
FAST = {"num_restarts": 4, "raw_samples": 128}  # optimize_acqf


def _client(objective="-branin, -currin", constraints=("branin <= 50", "currin <= 10")):
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    client = Client(random_seed=0)
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name=name, parameter_type="float", bounds=(0.0, 1.0))
            for name in ("x1", "x2")
        ]
    )
    client.configure_optimization(objective=objective, outcome_constraints=list(constraints))
    return client


def _run(client, num_trials):
    """Minimize BraninCurrin; the observed outcomes ``num_trials x 2``, the nodes."""
    problem = BraninCurrin()
    outcomes, nodes = [], []
    for _ in range(num_trials):
        for index, parameters in client.get_next_trials(max_trials=1).items():
            x = torch.tensor([[parameters["x1"], parameters["x2"]]], dtype=torch.float64)
            outcomes.append(problem(x)[0])
            branin, currin = outcomes[-1].tolist()
            client.complete_trial(index, raw_data={"branin": branin, "currin": currin})
            nodes.append(client._experiment.trials[index].generator_runs[0]._generation_node_name)
    return torch.stack(outcomes), nodes


def _hypervolume(outcomes):
    """Of the minimized outcomes, with reference point ``THRESHOLDS`` (BoTorch's HV)."""
    Y = -outcomes  # maximization
    reference_point = -torch.tensor(THRESHOLDS, dtype=Y.dtype)
    Y = Y[(Y > reference_point).all(-1)]
    if Y.shape[0] == 0:
        return 0.0
    return Hypervolume(reference_point).compute(Y[is_non_dominated(Y)])


def test_multi_objective_experiment_improves_the_hypervolume_over_its_sobol_trials(monkeypatch):
    """12 trials (5 Sobol, 7 ``ScalarizedMultiTaskUCB``), both objectives minimized."""
    drawn = []  # the scalarization of each BoTorch trial
    build = input_constructors.multi_objective_scalarization

    def record(*args, **kwargs):
        drawn.append(build(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(input_constructors, "multi_objective_scalarization", record)
    client = _client()
    client.set_generation_strategy(
        ax_generation_strategy(
            client, ScalarizedMultiTaskUCB, {"width": 1.0}, seed=0, optimizer_kwargs=FAST
        )
    )
    outcomes, nodes = _run(client, 12)
    assert nodes == ["Sobol"] * 5 + ["BoTorch"] * 7
    sobol, final = _hypervolume(outcomes[:5]), _hypervolume(outcomes)
    assert final > sobol > 0.0

    # the same 5 Sobol trials followed by 7 more Sobol trials end lower
    sobol_only = _client()
    sobol_only.set_generation_strategy(
        ax_generation_strategy(
            sobol_only, ScalarizedMultiTaskUCB, {"width": 1.0}, seed=0, num_sobol_trials=12
        )
    )
    sobol_outcomes, _ = _run(sobol_only, 12)
    torch.testing.assert_close(sobol_outcomes[:5], outcomes[:5])
    assert final > _hypervolume(sobol_outcomes)

    # each BoTorch trial drew its own Chebyshev weights; both objectives minimized
    assert len(drawn) == 7 and all(isinstance(s, SignedScalarization) for s in drawn)
    weights = torch.stack([s.weights for s in drawn])
    assert torch.unique(weights, dim=0).shape[0] == 7
    assert all(torch.equal(s.signs, -torch.ones(2, dtype=torch.float64)) for s in drawn)


def test_outcome_constraints_are_refused_when_the_strategy_is_built():
    client = _client(constraints=("branin <= 50", "currin <= 10", "cost <= 0.5"))
    for acqf_class in (ScalarizedMultiTaskUCB, ScalarizedObjectiveUCB):
        with pytest.raises(UnsupportedError, match=r"outcome constraints \(cost <= 0.5\)"):
            ax_generation_strategy(client, acqf_class, {"width": 1.0})
    single = _client(objective="-branin", constraints=("currin <= 10",))
    with pytest.raises(
        UnsupportedError, match=r"outcome constraints \(currin <= 10\) .*MartingaleMixtureUCB"
    ):
        ax_generation_strategy(single, MartingaleMixtureUCB)
    assert len(single._experiment.trials) == 0  # refused before any trial


@pytest.mark.parametrize(
    ("objective", "acqf_class", "options", "match"),
    [
        ("-branin, -currin", MartingaleMixtureUCB, {}, "multi-objective optimization"),
        ("-branin, -currin", IGPUCB, {}, "multi-objective optimization"),
        ("-branin, -currin", TaskConditionedUCB, {"width": 1.0}, "multi-objective"),
        (
            "-branin, currin",
            ScalarizedObjectiveUCB,
            {"width": 1.0},
            r"minimized objectives \['branin'\]",
        ),
        ("-branin - currin", MartingaleMixtureUCB, {}, "weighted sum of metrics"),
        (
            "-branin, -currin",
            ScalarizedMultiTaskUCB,
            {"width": 1.0, "scalarization": None},
            "draws its own",
        ),
        ("-branin, -currin", ScalarizedMartingaleMixtureUCB, {}, "MultiTaskMartingaleMixtureBound"),
    ],
)
def test_unsupported_objectives_are_refused_when_the_strategy_is_built(
    objective, acqf_class, options, match
):
    if "," not in objective:
        constraints = []
    elif "-currin" in objective:
        constraints = ["branin <= 50", "currin <= 10"]
    else:
        constraints = ["branin <= 50", "currin >= 1"]
    client = _client(objective=objective, constraints=constraints)
    with pytest.raises(UnsupportedError, match=match):
        ax_generation_strategy(client, acqf_class, options)


def test_bad_arguments_are_refused_when_the_strategy_is_built():
    client = _client()
    with pytest.raises(ValueError, match="exactly one of width"):
        ax_generation_strategy(client, ScalarizedMultiTaskUCB)
    with pytest.raises(TypeError, match=r"\['beta'\] are not options of ScalarizedMultiTaskUCB"):
        ax_generation_strategy(client, ScalarizedMultiTaskUCB, {"width": 1.0, "beta": 0.2})
    with pytest.raises(ValueError, match="num_sobol_trials must be >= 1"):
        ax_generation_strategy(client, ScalarizedMultiTaskUCB, {"width": 1.0}, num_sobol_trials=0)
    with pytest.raises(ValueError, match="objective_names is set by"):
        ax_generation_strategy(
            client, ScalarizedMultiTaskUCB, {"width": 1.0, "objective_names": ["a", "b"]}
        )
    with pytest.raises(TypeError, match="acqf_class must be one of"):
        ax_generation_strategy(client, torch.nn.Module)
    with pytest.raises(TypeError, match="Client, Experiment or OptimizationConfig"):
        ax_generation_strategy("branin", MartingaleMixtureUCB)
    with pytest.raises(ValueError, match="configure_optimization"):
        ax_generation_strategy(_bare_experiment(), IGPUCB)
    single = _client(objective="-branin", constraints=())
    with pytest.raises(ValueError, match="single objective '-branin'"):
        ax_generation_strategy(single, ScalarizedMultiTaskUCB, {"width": 1.0, "seed": 0})
    # Ax gives the direction ("-branin" minimizes): maximize=False would reverse it.
    with pytest.raises(ValueError, match="maximize must not be given"):
        ax_generation_strategy(single, MartingaleMixtureUCB, {"maximize": False})
    # Options out of range are refused now, not at the first BoTorch trial.
    with pytest.raises(ValueError, match="delta"):
        ax_generation_strategy(single, MartingaleMixtureUCB, {"delta": 2.0})
    # Ax standardizes the outcomes first: a level in the user's units cannot be converted.
    with pytest.raises(UnsupportedError, match="measurement_noise_std is not supported"):
        ax_generation_strategy(single, MartingaleMixtureUCB, {"measurement_noise_std": 1.0})
    for name in ("rkhs_norm_bound", "noise_std"):
        with pytest.raises(ValueError, match=name):
            ax_generation_strategy(single, IGPUCB, {name: -1.0})
    with pytest.raises(ValueError, match="width"):
        ax_generation_strategy(client, ScalarizedMultiTaskUCB, {"width": 0.0})


def _bare_experiment():
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    client = Client()
    client.configure_experiment(
        parameters=[RangeParameterConfig(name="x", parameter_type="float", bounds=(0.0, 1.0))]
    )
    return client._experiment


def test_the_strategy_passes_the_objectives_in_their_order():
    client = _client(objective="-currin, branin", constraints=("currin <= 10", "branin >= 1"))
    strategy = ax_generation_strategy(
        client, ScalarizedMultiTaskUCB, {"rkhs_norm_bound": 2.0}, seed=3
    )
    spec = strategy._nodes[1].generator_specs[0]
    assert spec.generator_kwargs["botorch_acqf_class"] is ScalarizedMultiTaskUCB
    assert spec.generator_kwargs["botorch_acqf_options"] == {
        "rkhs_norm_bound": 2.0,
        "objective_names": ["currin", "branin"],
        "seed": 3,
    }
    assert strategy._nodes[0].generator_specs[0].generator_kwargs == {"seed": 3}
