"""measurement_noise_std: sigma in transformed units from the user's units (Standardize's
std read independently from the model), the numerical floor, the same bound as an explicit
noise_std, on the acquisition and on a wrapped output, and the argument checks."""

from __future__ import annotations

import math

import pytest
import torch
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.transforms import Normalize
from gpytorch.kernels import RBFKernel

from botorch_mtucb.acquisition import MartingaleMixtureUCB
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.noise_level import (
    NUMERICAL_NOISE_FLOOR,
    noise_at_likelihood_floor,
    noise_std_from_measurement,
    resolve_noise_std,
)


def fitted_like_model(dtype=torch.float64):
    generator = torch.Generator().manual_seed(0)
    X = 4.0 * torch.rand(12, 2, generator=generator, dtype=dtype)
    Y = 300.0 + 40.0 * X.sin().sum(-1, keepdim=True)
    return SingleTaskGP(X, Y, input_transform=Normalize(2)).eval(), X, Y


def test_conversion_and_floor():
    assert noise_std_from_measurement(3.0, -6.0, 4.0) == 0.5  # |b|
    floor = NUMERICAL_NOISE_FLOOR * math.sqrt(4.0)
    assert noise_std_from_measurement(1e-9, 6.0, 4.0) == floor
    assert noise_std_from_measurement(1e-9, 6.0, 0.0) == pytest.approx(1e-9 / 6.0)


@pytest.mark.parametrize(
    "arguments, match",
    [
        ((0.0, 1.0, 1.0), "measurement_noise_std must be > 0"),
        ((float("nan"), 1.0, 1.0), "measurement_noise_std"),
        ((1.0, 0.0, 1.0), "outcome_scale must be non-zero"),
        ((1.0, float("inf"), 1.0), "outcome_scale"),
        ((1.0, 1.0, -1.0), "largest_prior_variance must be >= 0"),
        ((1e300, 1e-10, 1.0), "measurement_noise_std / \\|outcome_scale\\| = inf"),
    ],
)
def test_bad_arguments(arguments, match):
    with pytest.raises(ValueError, match=match):
        noise_std_from_measurement(*arguments)


def test_resolve_order_and_both_given():
    X = torch.rand(3, 1, dtype=torch.float64)
    assert resolve_noise_std(0.3, None, 2.0, X, RBFKernel(), lambda: 1.0) == 0.3
    assert resolve_noise_std(None, None, 2.0, X, RBFKernel(), lambda: 0.09) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="not both"):
        resolve_noise_std(0.3, 1.0, 2.0, X, RBFKernel(), lambda: 1.0)


def test_acquisition_matches_an_explicit_transformed_noise(dtype):
    model, X, Y = fitted_like_model()
    std = float(Y.std())  # Standardize's scale, computed here from the data
    acqf = MartingaleMixtureUCB(model, measurement_noise_std=2.0)
    assert acqf.bound.noise_std == pytest.approx(2.0 / std, rel=1e-10)
    B = acqf.bound.rkhs_norm_bound  # the data rule with the allowance, tested elsewhere
    reference = MartingaleMixtureUCB(model, noise_std=2.0 / std, rkhs_norm_bound=B)
    test_X = (4.0 * torch.rand(7, 1, 2, dtype=torch.float64)).to(dtype)
    assert torch.allclose(acqf(test_X), reference(test_X))
    bound = MartingaleMixtureBound.from_model(model, measurement_noise_std=2.0)
    assert bound.noise_std == acqf.bound.noise_std


def test_noise_free_precision_uses_the_floor_and_narrows_the_bound():
    model, X, _ = fitted_like_model()
    precise = MartingaleMixtureUCB(model, measurement_noise_std=1e-9)
    outputscale = float(model.covar_module(model.train_inputs[0][:1]).to_dense().detach().squeeze())
    assert precise.bound.noise_std == pytest.approx(NUMERICAL_NOISE_FLOOR * math.sqrt(outputscale))
    fitted = MartingaleMixtureUCB(model)
    width = {}
    for name, acqf in (("precise", precise), ("fitted", fitted)):  # at the exact data
        width[name] = acqf.bound.upper(X) - acqf.bound.lower(X)
    assert bool((width["precise"] >= 0).all())
    assert float(width["precise"].mean()) < 0.5 * float(width["fitted"].mean())


def test_wrapped_output_and_prebuilt_bound():
    model, X, Y = fitted_like_model()
    wrapped = MartingaleMixtureUCB(ModelListGP(model), measurement_noise_std=2.0)
    assert wrapped.bound.noise_std == pytest.approx(2.0 / float(Y.std()), rel=1e-10)
    bound = MartingaleMixtureBound(X, Y - Y.mean(), RBFKernel(), None, 1.0, 0.01)
    with pytest.raises(ValueError, match="measurement_noise_std must not be given"):
        MartingaleMixtureUCB(bound, measurement_noise_std=1.0)
    with pytest.raises(ValueError, match="not both"):
        MartingaleMixtureUCB(model, noise_std=0.1, measurement_noise_std=1.0)


def test_a_noise_at_the_floor_warns_and_measurement_noise_silences_it(recwarn):
    model, X, _ = fitted_like_model()
    floor = float(model.likelihood.noise_covar.raw_noise_constraint.lower_bound)
    model.likelihood.noise = 1.2 * floor  # what a fit on exact data ends with
    assert noise_at_likelihood_floor(model)
    with pytest.warns(UserWarning, match="measurement_noise_std"):
        MartingaleMixtureUCB(model)
    recwarn.clear()
    MartingaleMixtureUCB(model, measurement_noise_std=1e-6)
    MartingaleMixtureUCB(model, noise_std=0.1)
    assert not [w for w in recwarn if "lower constraint" in str(w.message)]
    model.likelihood.noise = 10.0 * floor
    assert not noise_at_likelihood_floor(model)
    assert not noise_at_likelihood_floor(object())


def test_scalarized_route_adds_the_allowance_with_a_stated_noise():
    from botorch.acquisition.objective import ScalarizedPosteriorTransform

    from botorch_mtucb.confidence.martingale_mixture.norm_choice import (
        choose_rkhs_norm_bound,
        leave_one_out_allowance,
    )

    generator = torch.Generator().manual_seed(2)
    X = torch.rand(14, 2, generator=generator, dtype=torch.float64)
    Y = torch.cat([X.sin().sum(-1, keepdim=True), X.cos().prod(-1, keepdim=True)], -1)
    model = SingleTaskGP(X, Y).eval()
    transform = ScalarizedPosteriorTransform(torch.tensor([0.6, 0.4], dtype=torch.float64))
    acqf = MartingaleMixtureUCB(model, posterior_transform=transform, measurement_noise_std=1e-3)
    bound = acqf.bound
    K = bound.kernel(bound.train_X).to_dense().detach()
    rule = choose_rkhs_norm_bound(K, bound.train_Y, bound.noise_std, 0.01)
    allowance = leave_one_out_allowance(K, bound.train_Y, bound.base_alpha)
    assert bound.rkhs_norm_bound == pytest.approx(math.sqrt(rule**2 + allowance), rel=1e-9)
