"""The candidates of every acquisition of the package: ``batch_shape x 1 x d``, float32 or
float64, finite (``one_candidate_per_batch``), and finite posterior transforms."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.exceptions import UnsupportedError
from botorch.models import ModelListGP, MultiTaskGP, SingleTaskGP
from gpytorch.kernels import RBFKernel

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
from botorch_mtucb.acquisition.candidates import (
    JointBatchError,
    candidate_dimension,
    model_input_dim,
)
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.scalarization import ChebyshevScalarization, LinearScalarization

D = 2


def _data():
    generator = torch.Generator().manual_seed(0)
    train_X = torch.rand(8, D, generator=generator, dtype=torch.float64)
    train_Y = torch.randn(8, 2, generator=generator, dtype=torch.float64)
    return train_X, train_Y


def _acquisitions():
    """One acquisition of every class, on BoTorch models where the class takes them (the
    models that let NaN and a wrong ``d`` through before)."""
    train_X, train_Y = _data()
    gp = SingleTaskGP(train_X, train_Y[:, :1])
    two = SingleTaskGP(train_X, train_Y)
    listed = ModelListGP(gp, SingleTaskGP(train_X, train_Y[:, 1:]))
    rows = torch.cat([train_X, torch.tensor([0.0, 1.0]).repeat(4)[:, None].double()], -1)
    multi_task = MultiTaskGP(rows, train_Y[:, :1], task_feature=-1)
    weights = torch.tensor([0.5, 0.5], dtype=torch.float64)
    chebyshev = ChebyshevScalarization(weights, torch.full((2,), -3.0, dtype=torch.float64))
    task_covariance = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
    bound = MultiTaskMartingaleMixtureBound(
        train_X, train_Y, RBFKernel(), task_covariance, 20.0, 0.5, 0.01
    )
    model = VectorValuedGP(train_X, train_Y, RBFKernel(), task_covariance, 0.1)
    return {
        "ScalarizedMultiTaskUCB": ScalarizedMultiTaskUCB(two, LinearScalarization(weights), 2.0),
        "ScalarizedMultiTaskUCB-VectorValuedGP": ScalarizedMultiTaskUCB(model, chebyshev, 2.0),
        "ScalarizedObjectiveUCB": ScalarizedObjectiveUCB(listed, chebyshev, 2.0),
        "TaskConditionedUCB": TaskConditionedUCB(listed, 1, 2.0),
        "TaskConditionedLCB": TaskConditionedLCB(multi_task, 0, 2.0),
        "IGPUCB": IGPUCB(gp, rkhs_norm_bound=2.0),
        "AYGPUCB": AYGPUCB(gp, rkhs_norm_bound=2.0),
        "MartingaleMixtureUCB": MartingaleMixtureUCB(gp),
        "MartingaleMixtureUCB-bound": MartingaleMixtureUCB(
            MartingaleMixtureBound(train_X, train_Y[:, :1], RBFKernel(), 10.0, 0.1, 0.01)
        ),
        "ScalarizedMartingaleMixtureUCB": ScalarizedMartingaleMixtureUCB(bound, chebyshev),
    }


ACQUISITIONS = _acquisitions()


@pytest.mark.parametrize("name", ACQUISITIONS)
def test_q_greater_than_one_and_wrong_shapes(name):
    # These used to raise BoTorch's bare AssertionError ("Expected X to be `batch_shape x
    # q=1 x d`") for q != 1.
    acqf = ACQUISITIONS[name]
    shape = rf"batch_shape x 1 x {D}"
    cases = [
        (torch.rand(5, 3, D), rf"X must have shape {shape}: q = 1 is required .*got q = 3"),
        (torch.rand(4, D), r"q = 1 is required .*got q = 4 in shape \(4, 2\).*unsqueeze"),
        (torch.rand(5, 0, D), r"q = 1 is required .*got q = 0"),
        (torch.rand(D), rf"X must have shape {shape} .*got shape \(2,\)"),
    ]
    for X, match in cases:
        with pytest.raises(ValueError, match=match):
            acqf(X.double())
    # q > 1: BoTorch's UnsupportedError (also a ValueError), naming the sequential route
    for X in (torch.rand(5, 3, D), torch.rand(4, D)):
        with pytest.raises(UnsupportedError, match=r"q = 1 is required.*sequential=True"):
            acqf(X.double())
    with pytest.raises(ValueError) as error:
        acqf(torch.rand(5, 0, D).double())
    assert not isinstance(error.value, JointBatchError)  # q = 0 is a plain shape error
    with pytest.raises(TypeError, match=rf"X must be a torch.Tensor of shape {shape}, got list"):
        acqf([0.1, 0.2])


@pytest.mark.parametrize("name", ACQUISITIONS)
def test_nan_inf_and_wrong_dimension_raise_naming_x(name):
    """A NaN or inf candidate gave NaN silently (``IGPUCB``, ``AYGPUCB``, the scalarized
    UCBs and ``TaskConditionedUCB`` on BoTorch models), a wrong ``d`` a GPyTorch error
    that does not name ``X`` (``ModelListGP``, ``MultiTaskGP``, ``SingleTaskGP``)."""
    acqf = ACQUISITIONS[name]
    shape = rf"batch_shape x 1 x {D}"
    for bad in (float("nan"), float("inf"), -float("inf")):
        X = torch.rand(4, 1, D, dtype=torch.float64)
        X[2, 0, 1] = bad
        with pytest.raises(
            ValueError, match=rf"X must be finite \(no NaN or inf\) of shape {shape}"
        ):
            acqf(X)
    for d in (D - 1, D + 1):
        with pytest.raises(ValueError, match=rf"X must have shape {shape} \(d = 2, the dimension"):
            acqf(torch.rand(5, 1, d, dtype=torch.float64))


@pytest.mark.parametrize("name", ACQUISITIONS)
def test_half_precision_and_integer_candidates_raise(name):
    """Half precision gave half-precision values (``MartingaleMixtureUCB``) or float64
    values from rounded inputs (the others)."""
    acqf = ACQUISITIONS[name]
    for dtype in (torch.float16, torch.bfloat16, torch.int64):
        X = torch.rand(3, 1, D).mul(4).to(dtype)
        with pytest.raises(TypeError, match=rf"X must be a float32 or float64 tensor .*{dtype}"):
            acqf(X)
    for dtype in (torch.float32, torch.float64):  # accepted
        assert acqf(torch.rand(3, 1, D, dtype=dtype)).shape == (3,)


@pytest.mark.parametrize("name", ACQUISITIONS)
def test_every_acquisition_is_analytic(name):
    """``isinstance(acqf, AnalyticAcquisitionFunction)`` holds, and pending points still
    work (BoTorch's base class refuses them)."""
    acqf = ACQUISITIONS[name]
    assert isinstance(acqf, AnalyticAcquisitionFunction)
    X = torch.rand(4, 1, D, dtype=torch.float64)
    before = acqf(X)
    acqf.set_X_pending(X[0])
    try:
        assert acqf.X_pending.shape == (1, D)
        assert not torch.allclose(acqf(X), before)  # GP-BUCB: the variance at X[0] shrinks
    finally:
        acqf.set_X_pending(None)


@pytest.mark.parametrize("name", ACQUISITIONS)
def test_valid_candidates_keep_values_and_gradients(name):
    acqf = ACQUISITIONS[name]
    X = torch.rand(6, 1, D, dtype=torch.float64, requires_grad=True)
    values = acqf(X)
    assert values.shape == (6,)
    values.sum().backward()
    assert X.grad is not None and torch.isfinite(X.grad).all() and X.grad.abs().sum() > 0
    # one point given as q x d = 1 x d: a batch of one, as BoTorch's t-batch transform does
    single = acqf(X[0].detach())
    torch.testing.assert_close(single, values[:1].detach(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ACQUISITIONS)
def test_an_empty_batch_gives_no_values(name):
    """``0 x 1 x d`` (and ``2 x 0 x 1 x d``): an empty tensor of the batch shape, also on
    the multi-output models whose posterior cannot reshape zero rows."""
    for shape in ((0, 1, D), (2, 0, 1, D)):
        values = ACQUISITIONS[name](torch.empty(*shape, dtype=torch.float64))
        assert values.shape == shape[:-2]


def test_candidate_dimension():
    for name, acqf in ACQUISITIONS.items():
        assert candidate_dimension(acqf) == D, name
    train_X, train_Y = _data()
    own = ModelListGP(SingleTaskGP(train_X, train_Y[:, :1]), SingleTaskGP(train_X[:, :1], train_Y))
    assert model_input_dim(own) is None  # the models disagree: they check d themselves
    assert model_input_dim(object()) is None


def _transform_cases():
    """``(build(transform), n)`` for every acquisition that takes a posterior_transform."""
    train_X, train_Y = _data()
    gp = SingleTaskGP(train_X, train_Y[:, :1])
    two = SingleTaskGP(train_X, train_Y)
    return {
        "ScalarizedMultiTaskUCB": (lambda t: ScalarizedMultiTaskUCB(two, None, 1.0, t), 2),
        "ScalarizedObjectiveUCB": (lambda t: ScalarizedObjectiveUCB(two, None, 1.0, t), 2),
        "TaskConditionedUCB": (lambda t: TaskConditionedUCB(two, 0, 1.0, t), 1),
        "TaskConditionedLCB": (lambda t: TaskConditionedLCB(two, 1, 1.0, t), 1),
        "IGPUCB": (lambda t: IGPUCB(gp, rkhs_norm_bound=1.0, posterior_transform=t), 1),
        "AYGPUCB": (lambda t: AYGPUCB(two, rkhs_norm_bound=1.0, posterior_transform=t), 2),
        "MartingaleMixtureUCB": (lambda t: MartingaleMixtureUCB(gp, posterior_transform=t), 1),
        "MartingaleMixtureUCB-scalarized": (
            lambda t: MartingaleMixtureUCB(two, posterior_transform=t),
            2,
        ),
    }


TRANSFORMS = _transform_cases()


@pytest.mark.parametrize("name", TRANSFORMS)
def test_posterior_transform_must_be_finite(name):
    """A NaN weight gave NaN from ``MartingaleMixtureUCB`` and ``TaskConditionedUCB``
    (and a Cholesky error from the scalarized UCBs); now a ValueError at construction."""
    build, n = TRANSFORMS[name]
    ones = torch.ones(n, dtype=torch.float64)
    for bad in (float("nan"), float("inf")):
        weights = ones.clone()
        weights[-1] = bad
        with pytest.raises(ValueError, match="posterior_transform's weights must be finite"):
            build(ScalarizedPosteriorTransform(weights))
        with pytest.raises(ValueError, match="posterior_transform's offset must be finite"):
            build(ScalarizedPosteriorTransform(ones, offset=bad))
    value = build(ScalarizedPosteriorTransform(-ones, offset=2.0))(
        torch.rand(3, 1, D, dtype=torch.float64)
    )
    assert torch.isfinite(value).all()
