"""one_candidate_per_batch: the analytic acquisitions take ``batch_shape x 1 x d``."""

from __future__ import annotations

import pytest
import torch
from botorch.exceptions import UnsupportedError
from botorch.models import ModelListGP, SingleTaskGP
from gpytorch.kernels import RBFKernel

from botorch_mtucb.acquisition import (
    MartingaleMixtureUCB,
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedLCB,
    TaskConditionedUCB,
)
from botorch_mtucb.acquisition.candidates import JointBatchError, candidate_dimension
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.scalarization import LinearScalarization

D = 2


def _acquisitions():
    generator = torch.Generator().manual_seed(0)
    train_X = torch.rand(8, D, generator=generator, dtype=torch.float64)
    train_Y = torch.randn(8, 2, generator=generator, dtype=torch.float64)
    model = VectorValuedGP(train_X, train_Y, RBFKernel(), torch.eye(2, dtype=torch.float64), 0.1)
    weights = LinearScalarization(torch.tensor([0.5, 0.5], dtype=torch.float64))
    bound = MartingaleMixtureBound(train_X, train_Y[:, :1], RBFKernel(), 10.0, 0.1, 0.01)
    botorch_model = ModelListGP(SingleTaskGP(train_X, train_Y[:, :1]))
    return {
        "ScalarizedMultiTaskUCB": ScalarizedMultiTaskUCB(model, weights, 2.0),
        "ScalarizedObjectiveUCB": ScalarizedObjectiveUCB(model, weights, 2.0),
        "TaskConditionedUCB": TaskConditionedUCB(model, 0, 2.0),
        "TaskConditionedLCB": TaskConditionedLCB(botorch_model, 0, 2.0),
        "MartingaleMixtureUCB": MartingaleMixtureUCB(bound),
    }


ACQUISITIONS = _acquisitions()


@pytest.mark.parametrize("name", ACQUISITIONS)
def test_q_greater_than_one_and_wrong_shapes(name):
    # These used to raise BoTorch's bare AssertionError ("Expected X to be `batch_shape x
    # q=1 x d`") for q != 1.
    acqf = ACQUISITIONS[name]
    d = "d" if name == "TaskConditionedLCB" else D  # a BoTorch model: d is not known
    shape = rf"batch_shape x 1 x {d}"
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
    if name != "TaskConditionedLCB":
        with pytest.raises(ValueError, match=r"batch_shape x 1 x 2 \(d = 2, the dimension"):
            acqf(torch.rand(5, 1, 3, dtype=torch.float64))


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


def test_candidate_dimension():
    assert candidate_dimension(ACQUISITIONS["MartingaleMixtureUCB"]) == D
    assert candidate_dimension(ACQUISITIONS["TaskConditionedUCB"]) == D
    assert candidate_dimension(ACQUISITIONS["TaskConditionedLCB"]) is None
