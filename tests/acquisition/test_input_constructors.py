"""BoTorch input constructors of the package's acquisitions (one and several objectives),
and an Ax experiment."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.acquisition.input_constructors import (
    ACQF_INPUT_CONSTRUCTOR_REGISTRY,
    get_acqf_input_constructor,
)
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models import SingleTaskGP
from botorch.utils.datasets import SupervisedDataset

from botorch_mtucb.acquisition import (
    AYGPUCB,
    IGPUCB,
    MartingaleMixtureUCB,
    ScalarizedMartingaleMixtureUCB,
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedLCB,
    TaskConditionedUCB,
)
from botorch_mtucb.acquisition.multi_objective import SignedScalarization
from botorch_mtucb.confidence import mt_kb_width
from botorch_mtucb.scalarization import ChebyshevScalarization, sample_chebyshev_weights
from botorch_mtucb.utils.random import POLICY_STREAM, round_generator

DTYPES = [torch.float32, torch.float64]


def _data(dtype, num_outputs=1, n=12, d=2):
    generator = torch.Generator().manual_seed(3)
    train_X = torch.rand(n, d, generator=generator, dtype=torch.float64)
    columns = [(k + 1.0) * (3.0 * train_X).sin().sum(-1, keepdim=True) for k in range(num_outputs)]
    train_Y = 10.0 + torch.cat(columns, -1)
    return train_X.to(dtype), train_Y.to(dtype)


def _gp(dtype, num_outputs=1):
    train_X, train_Y = _data(dtype, num_outputs)
    return SingleTaskGP(train_X, train_Y), train_X, train_Y


def _ax_kwargs(model, train_X, train_Y, weights):
    """The keyword arguments Ax's modular generator passes to a constructor."""
    names = [f"x{i}" for i in range(train_X.shape[-1])]
    outcomes = [f"y{i}" for i in range(train_Y.shape[-1])]
    dataset = SupervisedDataset(train_X, train_Y, feature_names=names, outcome_names=outcomes)
    bounds = [(0.0, 1.0)] * train_X.shape[-1]
    return {
        "model": model,
        "training_data": dataset,
        "bounds": bounds,
        "X_baseline": train_X,
        "X_pending": train_X[:2] + 0.01,
        "posterior_transform": ScalarizedPosteriorTransform(weights.to(train_X)),
    }


CASES = [
    (MartingaleMixtureUCB, 1, {"delta": 0.05}),
    (IGPUCB, 1, {}),
    (IGPUCB, 1, {"eta": 0.1, "rkhs_norm_bound": 2.0}),
    (AYGPUCB, 1, {"rkhs_norm_bound": 2.0}),
    (ScalarizedMultiTaskUCB, 2, {"width": 2.0}),
    (ScalarizedObjectiveUCB, 2, {"width": 2.0}),
    (TaskConditionedUCB, 1, {"width": 2.0}),
    (TaskConditionedLCB, 1, {"width": 2.0}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("acqf_class", "num_outputs", "options"), CASES)
def test_every_constructor_builds_its_acquisition(dtype, acqf_class, num_outputs, options):
    gp, train_X, train_Y = _gp(dtype, num_outputs)
    weights = -torch.ones(num_outputs) if num_outputs == 1 else torch.tensor([-0.3, -0.7])
    kwargs = _ax_kwargs(gp, train_X, train_Y, weights)
    inputs = get_acqf_input_constructor(acqf_class)(**kwargs, **options)
    acqf = acqf_class(**inputs)
    assert acqf.posterior_transform is kwargs["posterior_transform"]
    assert torch.equal(acqf.X_pending, kwargs["X_pending"])
    value = acqf(torch.rand(5, 1, 2, dtype=dtype))
    assert value.shape == (5,) and value.dtype == dtype and torch.isfinite(value).all()


def test_minimization_is_the_lower_bound_negated():
    """Ax's ``weights=-1``: the acquisition is the upper bound of ``-f``, i.e. ``-l_t``."""
    gp, *_ = _gp(torch.float64)
    minimize = ScalarizedPosteriorTransform(-torch.ones(1, dtype=torch.float64))
    construct = get_acqf_input_constructor(MartingaleMixtureUCB)
    acqf = MartingaleMixtureUCB(**construct(model=gp, posterior_transform=minimize))
    X = torch.rand(7, 1, 2, dtype=torch.float64)
    expected = -acqf.bound.lower(X.squeeze(-2), alphas=acqf.alphas)
    torch.testing.assert_close(acqf(X), expected)
    maximize = MartingaleMixtureUCB(**construct(model=gp))
    assert torch.all(acqf(X) + maximize(X) > 0)  # u(-f) + u(f) = u - l = width sum > 0

    igp = IGPUCB(**get_acqf_input_constructor(IGPUCB)(model=gp, posterior_transform=minimize))
    posterior = gp.posterior(X)  # in the outcome units of train_Y
    mean, std = posterior.mean.reshape(-1), posterior.variance.reshape(-1).sqrt()
    torch.testing.assert_close(igp(X), -mean + igp.width * std)


def test_measurement_noise_is_refused_through_ax():
    """Ax standardizes the outcomes before the model: a level in the user's units cannot
    be converted by the constructor, so it says what to give instead."""
    gp, *_ = _gp(torch.float64)
    construct = get_acqf_input_constructor(MartingaleMixtureUCB)
    with pytest.raises(UnsupportedError, match="give noise_std in the model's units"):
        construct(model=gp, measurement_noise_std=0.3)
    assert "measurement_noise_std" not in construct(model=gp)


def test_several_objectives_weights_are_honoured():
    gp, *_ = _gp(torch.float64, num_outputs=2)
    weights = torch.tensor([-0.3, -0.7], dtype=torch.float64)
    transform = ScalarizedPosteriorTransform(weights, offset=1.5)
    inputs = get_acqf_input_constructor(ScalarizedMultiTaskUCB)(
        model=gp, posterior_transform=transform, width=2.0
    )
    acqf = ScalarizedMultiTaskUCB(**inputs)
    X = torch.rand(6, 1, 2, dtype=torch.float64)
    posterior = gp.posterior(X)  # batch x 1 x 2, covariance over the two outputs
    mean = posterior.mean.squeeze(-2) @ weights + 1.5
    covariance = posterior.mvn.covariance_matrix  # batch x 2 x 2 (one point, 2 outputs)
    std = (weights @ covariance @ weights).sqrt()
    torch.testing.assert_close(acqf(X), mean + 2.0 * std)

    construct = get_acqf_input_constructor(MartingaleMixtureUCB)
    one_output, *_ = _gp(torch.float64)
    with pytest.raises(ValueError, match="posterior_transform must have 1 weights"):
        MartingaleMixtureUCB(**construct(model=one_output, posterior_transform=transform))


def test_width_from_rkhs_norm_bound_is_mt_kb_width():
    gp, *_ = _gp(torch.float64, num_outputs=2)
    construct = get_acqf_input_constructor(ScalarizedMultiTaskUCB)
    inputs = construct(model=gp, scalarization=torch.tensor([0.5, 0.5]), rkhs_norm_bound=1.0)
    expected = mt_kb_width(gp, rkhs_norm_bound=1.0, delta=0.01)
    torch.testing.assert_close(torch.as_tensor(inputs["width"]), expected)


def test_bad_arguments_raise():
    gp, *_ = _gp(torch.float64)
    for acqf_class, options in [
        (MartingaleMixtureUCB, {}),
        (IGPUCB, {}),
        (TaskConditionedUCB, {"width": 1.0}),
        (ScalarizedObjectiveUCB, {"width": 1.0}),
    ]:
        construct = get_acqf_input_constructor(acqf_class)
        with pytest.raises(UnsupportedError, match="objective"):
            construct(model=gp, objective=object(), **options)
        with pytest.raises(UnsupportedError, match="constraints"):
            construct(model=gp, constraints_tuple=(None, None), **options)
        with pytest.raises(UnsupportedError, match="ref_point"):
            construct(model=gp, ref_point=torch.zeros(1), **options)
        with pytest.raises(TypeError, match="Unexpected keyword argument `beta`"):
            construct(model=gp, beta=0.2)
    with pytest.raises(ValueError, match="exactly one of width"):
        get_acqf_input_constructor(TaskConditionedUCB)(model=gp)
    with pytest.raises(TypeError, match="eta"):
        AYGPUCB(**get_acqf_input_constructor(AYGPUCB)(model=gp, eta=0.1))


def test_bound_based_acquisition_is_refused_with_the_reason():
    gp, train_X, train_Y = _gp(torch.float64, num_outputs=2)
    kwargs = _ax_kwargs(gp, train_X, train_Y, torch.tensor([0.3, 0.7]))
    construct = get_acqf_input_constructor(ScalarizedMartingaleMixtureUCB)
    for options in ({}, {"scalarization": torch.tensor([0.3, 0.7])}):
        with pytest.raises(
            UnsupportedError, match=r"MultiTaskMartingaleMixtureBound .*SingleTaskGP"
        ):
            construct(**kwargs, **options)


def _two_objectives(dtype, names=("a", "b")):
    """A 2-output GP and Ax's ``training_data`` naming its outputs."""
    train_X, _ = _data(dtype)
    train_Y = torch.cat(
        [(3.0 * train_X).sin().sum(-1, keepdim=True), train_X.prod(-1, keepdim=True)], -1
    )
    dataset = SupervisedDataset(
        train_X, train_Y, feature_names=["x0", "x1"], outcome_names=list(names)
    )
    return SingleTaskGP(train_X, train_Y), dataset


def _round_weights(seed, t, dtype=torch.float64):
    return sample_chebyshev_weights(
        2, generator=round_generator(seed, t, POLICY_STREAM), dtype=dtype
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_objective_route_is_the_chebyshev_ucb_of_the_aligned_objectives(dtype):
    """Objective ``"-b, a"`` (Ax orders the outputs a, b): thresholds ``b <= 0.4``,
    ``a >= -0.5`` reach the constructor as ``ref_point = [-0.4, -0.5]``."""
    gp, dataset = _two_objectives(dtype)
    weights = ScalarizedPosteriorTransform(torch.tensor([1.0, -1.0], dtype=dtype))  # a, b
    inputs = get_acqf_input_constructor(ScalarizedMultiTaskUCB)(
        model=gp,
        training_data=dataset,
        posterior_transform=weights,
        ref_point=torch.tensor([-0.4, -0.5], dtype=dtype),
        objective_names=["b", "a"],
        width=2.0,
        seed=7,
        X_baseline=dataset.X,
        bounds=[(0.0, 1.0)] * 2,
    )
    assert inputs["posterior_transform"] is None
    acqf = ScalarizedMultiTaskUCB(**inputs)
    X = torch.rand(6, 1, 2, dtype=dtype)
    lambda_b, lambda_a = _round_weights(7, t=12).tolist()  # 12 points, objective order
    with torch.no_grad():
        posterior = gp.posterior(X)
        mean = posterior.mean.squeeze(-2).double().numpy()  # 6 x 2 (a, b)
        covariance = posterior.mvn.covariance_matrix.double().numpy()  # 6 x 2 x 2
    chebyshev = np.minimum(lambda_a * (mean[:, 0] + 0.5), lambda_b * (-mean[:, 1] + 0.4))
    bonus = max(lambda_a, lambda_b) * 2.0 * np.sqrt(np.linalg.eigvalsh(covariance)[:, -1])
    tolerance = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {}
    np.testing.assert_allclose(acqf(X).detach().double().numpy(), chebyshev + bonus, **tolerance)


def test_multi_objective_weights_are_a_new_draw_for_each_round():
    gp, dataset = _two_objectives(torch.float64)
    construct = get_acqf_input_constructor(ScalarizedMultiTaskUCB)
    kwargs = {
        "model": gp,
        "training_data": dataset,
        "ref_point": torch.zeros(2, dtype=torch.float64),
        "objective_names": ["a", "b"],
        "width": 1.0,
    }

    def weights(**more):
        return construct(**kwargs, **more)["scalarization"].weights

    torch.testing.assert_close(weights(seed=3), _round_weights(3, t=12))
    torch.testing.assert_close(weights(seed=3), weights(seed=3))  # reproducible
    pending = torch.rand(2, 2, dtype=torch.float64)
    torch.testing.assert_close(weights(seed=3, X_pending=pending), _round_weights(3, t=14))
    assert not torch.allclose(weights(seed=3), weights(seed=3, X_pending=pending))
    # without a seed: torch's global generator, which Ax's Client(random_seed=...)
    # resets before each trial: the round still changes the draw
    torch.manual_seed(0)
    first = weights()
    torch.manual_seed(0)
    torch.testing.assert_close(weights(), first)
    torch.manual_seed(0)
    assert not torch.allclose(weights(X_pending=pending), first)


def test_multi_objective_thresholds_are_matched_to_the_outputs_by_name():
    """Ax models a tracking metric ``c`` too, then keeps the objectives' outputs only."""
    gp, _ = _two_objectives(torch.float64)
    train_X = gp.train_inputs[0][0]
    three = torch.cat([gp.train_targets.T[:, :1], train_X[:, :1], gp.train_targets.T[:, 1:]], -1)
    dataset = SupervisedDataset(
        train_X, three, feature_names=["x0", "x1"], outcome_names=["branin", "c", "currin"]
    )
    construct = get_acqf_input_constructor(ScalarizedMultiTaskUCB)
    kwargs = {"training_data": dataset, "width": 1.0, "seed": 0}
    minimize = ScalarizedPosteriorTransform(-torch.ones(2, dtype=torch.float64))
    scalarization = construct(
        model=gp,
        posterior_transform=minimize,
        ref_point=torch.tensor([-10.0, -50.0], dtype=torch.float64),
        objective_names=["currin", "branin"],
        **kwargs,
    )["scalarization"]
    assert isinstance(scalarization, SignedScalarization)
    torch.testing.assert_close(scalarization.signs, -torch.ones(2, dtype=torch.float64))
    chebyshev = scalarization.scalarization
    torch.testing.assert_close(chebyshev.reference_point, torch.tensor([-50.0, -10.0]).double())
    torch.testing.assert_close(chebyshev.weights, _round_weights(0, t=12).flip(0))

    model_of_three = SingleTaskGP(train_X, three)  # c is modeled but not an objective
    with pytest.raises(UnsupportedError, match=r"outputs \['c'\] are not objectives"):
        construct(
            model=model_of_three,
            ref_point=torch.zeros(2, dtype=torch.float64),
            objective_names=["branin", "currin"],
            **kwargs,
        )
    with pytest.raises(ValueError, match=r"objective_names \['branin', 'cost'\] must name"):
        construct(
            model=gp,
            ref_point=torch.zeros(2, dtype=torch.float64),
            objective_names=["branin", "cost"],
            **kwargs,
        )


def test_multi_objective_objective_ucb_scalarizes_the_upper_bounds():
    gp, dataset = _two_objectives(torch.float64)
    construct = get_acqf_input_constructor(ScalarizedObjectiveUCB)
    kwargs = {"model": gp, "training_data": dataset, "objective_names": ["a", "b"]}
    ref_point = torch.tensor([-0.5, 0.1], dtype=torch.float64)
    acqf = ScalarizedObjectiveUCB(**construct(**kwargs, ref_point=ref_point, width=1.5, seed=2))
    X = torch.rand(5, 1, 2, dtype=torch.float64)
    posterior = gp.posterior(X)
    upper = posterior.mean.squeeze(-2) + 1.5 * posterior.variance.squeeze(-2).sqrt()
    expected = (_round_weights(2, t=12) * (upper - ref_point)).amin(-1)
    torch.testing.assert_close(acqf(X), expected)

    minimize_b = ScalarizedPosteriorTransform(torch.tensor([1.0, -1.0], dtype=torch.float64))
    with pytest.raises(UnsupportedError, match=r"minimized objectives \['b'\] .*ScalarizedObj"):
        construct(**kwargs, ref_point=ref_point, width=1.0, posterior_transform=minimize_b)


def test_multi_objective_refusals_name_what_is_unsupported():
    gp, dataset = _two_objectives(torch.float64)
    construct = get_acqf_input_constructor(ScalarizedMultiTaskUCB)
    kwargs = {"model": gp, "training_data": dataset, "width": 1.0}
    ref_point = torch.zeros(2, dtype=torch.float64)
    names = ["a", "b"]
    constraint = (torch.tensor([[1.0, 0.0]]), torch.tensor([[0.5]]))
    with pytest.raises(UnsupportedError, match="outcome constraints") as error:
        construct(
            **kwargs, ref_point=ref_point, objective_names=names, constraints_tuple=constraint
        )
    assert "objective" not in str(error.value).split("outcome constraints")[0]
    with pytest.raises(UnsupportedError, match=r"an MC objective \(objective=object\)"):
        construct(**kwargs, ref_point=ref_point, objective_names=names, objective=object())
    with pytest.raises(UnsupportedError, match="needs objective_names"):
        construct(**kwargs, ref_point=ref_point)
    nan = torch.tensor([0.0, float("nan")], dtype=torch.float64)
    with pytest.raises(UnsupportedError, match=r"no objective threshold for \['b'\]"):
        construct(**kwargs, ref_point=nan, objective_names=names)
    with pytest.raises(UnsupportedError, match=r"no objective threshold for \['a', 'b'\]"):
        construct(**kwargs, objective_names=names)  # Ax could not infer any
    with pytest.raises(UnsupportedError, match="draws its own random Chebyshev"):
        construct(**kwargs, ref_point=ref_point, objective_names=names, scalarization=torch.ones(2))
    with pytest.raises(ValueError, match="seed seeds the random scalarization"):
        construct(**kwargs, scalarization=torch.ones(2), seed=0)
    for acqf_class, options in [(MartingaleMixtureUCB, {}), (TaskConditionedUCB, {"width": 1.0})]:
        with pytest.raises(UnsupportedError, match="multi-objective optimization .*ref_point"):
            get_acqf_input_constructor(acqf_class)(model=gp, ref_point=ref_point, **options)


@pytest.mark.parametrize("dtype", DTYPES)
def test_signed_scalarization_negates_the_given_outputs(dtype):
    weights = torch.tensor([0.2, 0.5, 0.3], dtype=dtype)
    reference_point = torch.tensor([-1.0, 0.5, 2.0], dtype=dtype)
    signs = torch.tensor([1.0, -1.0, -1.0], dtype=dtype)
    signed = SignedScalarization(ChebyshevScalarization(weights, reference_point), signs)
    Y = torch.randn(4, 5, 3, dtype=dtype)
    Y_np, w, z, sigma = (v.double().numpy() for v in (Y, weights, reference_point, signs))
    expected = (w * (sigma * Y_np - z)).min(-1)
    np.testing.assert_allclose(signed(Y).double().numpy(), expected, rtol=1e-6)
    assert signed(Y).shape == (4, 5) and signed(Y).dtype == dtype
    torch.testing.assert_close(signed.lipschitz_constant, weights.max())
    linear = SignedScalarization(weights, signs)  # weights: a linear scalarization
    torch.testing.assert_close(linear(Y), (Y * signs * weights).sum(-1))
    assert signed.to(torch.float64).signs.dtype == torch.float64
    for bad in (torch.tensor([1.0, 0.0, -1.0]), torch.ones(2)):
        with pytest.raises(ValueError, match="signs must hold 3 entries"):
            SignedScalarization(weights, bad)


def _branin(x1: float, x2: float) -> float:
    from botorch.test_functions import Branin

    return float(Branin()(torch.tensor([[x1, x2]], dtype=torch.float64)))


def test_ax_minimization_improves_on_sobol(monkeypatch):
    """10 Ax trials (5 Sobol, 5 BoTorch with ``MartingaleMixtureUCB``) minimizing Branin."""
    pytest.importorskip("ax")
    constructed = []  # the options the acquisition was built with
    construct = ACQF_INPUT_CONSTRUCTOR_REGISTRY[MartingaleMixtureUCB]

    def record(**kwargs):
        constructed.append(construct(**kwargs))
        return constructed[-1]

    monkeypatch.setitem(ACQF_INPUT_CONSTRUCTOR_REGISTRY, MartingaleMixtureUCB, record)
    from ax.adapter.registry import Generators
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig
    from ax.generation_strategy.generation_node import GenerationNode
    from ax.generation_strategy.generation_strategy import GenerationStrategy
    from ax.generation_strategy.generator_spec import GeneratorSpec
    from ax.generation_strategy.transition_criterion import MinTrials

    sobol = GeneratorSpec(generator_enum=Generators.SOBOL, generator_kwargs={"seed": 1})
    botorch = GeneratorSpec(
        generator_enum=Generators.BOTORCH_MODULAR,
        generator_kwargs={
            "botorch_acqf_class": MartingaleMixtureUCB,
            "botorch_acqf_options": {"delta": 0.05},  # not acquisition_options: Ax's own
        },
    )
    strategy = GenerationStrategy(
        name="Sobol+MartingaleMixtureUCB",
        nodes=[
            GenerationNode(
                name="Sobol",
                generator_specs=[sobol],
                transition_criteria=[MinTrials(threshold=5, transition_to="BoTorch")],
            ),
            GenerationNode(name="BoTorch", generator_specs=[botorch]),
        ],
    )
    client = Client(random_seed=0)
    client.configure_experiment(
        parameters=[
            RangeParameterConfig(name="x1", parameter_type="float", bounds=(-5.0, 10.0)),
            RangeParameterConfig(name="x2", parameter_type="float", bounds=(0.0, 15.0)),
        ]
    )
    client.configure_optimization(objective="-branin")  # minimize
    client.set_generation_strategy(strategy)
    values, nodes = [], []
    for _ in range(10):
        for index, parameters in client.get_next_trials(max_trials=1).items():
            values.append(_branin(parameters["x1"], parameters["x2"]))
            client.complete_trial(index, raw_data={"branin": values[-1]})
            nodes.append(client._experiment.trials[index].generator_runs[0]._generation_node_name)
    assert nodes == ["Sobol"] * 5 + ["BoTorch"] * 5
    assert [inputs["delta"] for inputs in constructed] == [0.05] * 5  # the options arrive
    sobol_values, botorch_values = values[:5], values[5:]
    assert min(botorch_values) <= min(sobol_values)
    # the direction is honoured: maximizing Branin would send the trials up, not down
    assert sum(botorch_values) / 5 < sum(sobol_values) / 5
