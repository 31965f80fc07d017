"""Bad input to ``certify`` and the adapters: named ``ValueError`` / ``TypeError`` /
``UnsupportedError``; the certificate's text."""

from __future__ import annotations

import pytest
import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models import SingleTaskGP
from certificate_cases import rbf
from gpytorch.kernels import PeriodicKernel

from botorch_mtucb.confidence import MartingaleMixtureBound, MultiTaskMartingaleMixtureBound
from botorch_mtucb.confidence.certificate import (
    MartingaleMixtureBounds,
    MTKBBounds,
    MultiTaskMartingaleMixtureBounds,
    certify,
)
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils import BoxDomain, FiniteDomain


@pytest.fixture
def bound():
    X = torch.rand(8, 2, dtype=torch.float64)
    return MartingaleMixtureBound(X, X[:, :1].sin(), rbf(), 2.0, 0.1, 0.1)


BOX = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64))


def test_bad_recommendations(bound):
    finite = FiniteDomain(torch.rand(5, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="recommendation must have shape \\(2,\\)"):
        certify(bound, BOX, recommendation=torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="recommendation must have shape"):
        certify(bound, BOX, recommendation=torch.zeros(2, 2))
    with pytest.raises(ValueError, match="recommendation .* lies outside the box"):
        certify(bound, BOX, recommendation=torch.tensor([0.5, 1.5]))
    with pytest.raises(ValueError, match="recommendation must be one of the finite domain"):
        certify(bound, finite, recommendation=torch.tensor([2.0, 2.0]))
    with pytest.raises(ValueError, match="recommendation must not contain NaN"):
        certify(bound, BOX, recommendation=torch.tensor([float("nan"), 0.0]))
    with pytest.raises(TypeError, match="recommendation must be a tensor"):
        certify(bound, BOX, recommendation=[0.5, 0.5])
    certificate = certify(bound, finite, recommendation=finite.points[2:3])  # 1 x d is fine
    assert torch.equal(certificate.recommendation, finite.points[2])


def test_bad_domains_and_bounds(bound):
    with pytest.raises(ValueError, match="bounds\\[0\\] must be <= bounds\\[1\\]"):
        BoxDomain(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(TypeError, match="domain must be a botorch_mtucb.utils.FiniteDomain"):
        certify(bound, torch.zeros(2, 2))
    with pytest.raises(ValueError, match="domain has d = 1"):
        certify(bound, BoxDomain(torch.tensor([[0.0], [1.0]])))
    with pytest.raises(TypeError, match="bounds must be ConfidenceBounds"):
        certify(SingleTaskGP(torch.rand(3, 2), torch.rand(3, 1)), BOX)
    with pytest.raises(ValueError, match="evaluated must be an m x 2 tensor"):
        certify(bound, BOX, evaluated=torch.zeros(3))
    with pytest.raises(ValueError, match="evaluated must not contain NaN"):
        certify(bound, BOX, evaluated=torch.full((1, 2), float("inf")))


def test_bad_options(bound):
    with pytest.raises(ValueError, match="tolerance must be >= 0"):
        certify(bound, BOX, tolerance=-1.0)
    with pytest.raises(ValueError, match="max_cells must be >= 1"):
        certify(bound, BOX, max_cells=0)
    with pytest.raises(ValueError, match="target_gap must be > 0"):
        certify(bound, BOX, target_gap=0.0)
    with pytest.raises(ValueError, match="target_gap must be finite"):
        certify(bound, BOX, target_gap=float("nan"))
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        certify(bound, FiniteDomain(torch.rand(3, 2)), chunk_size=0)


def test_unsupported_kernel_on_a_box_but_fine_on_a_finite_domain():
    X = torch.rand(6, 1, dtype=torch.float64)
    bound = MartingaleMixtureBound(X, X.sin(), PeriodicKernel(), 2.0, 0.1, 0.1)
    with pytest.raises(UnsupportedError, match="PeriodicKernel.*use a FiniteDomain"):
        certify(bound, BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64)))


def test_adapter_arguments():
    X = torch.rand(6, 1, dtype=torch.float64)
    B = torch.eye(2, dtype=torch.float64)
    mt = MultiTaskMartingaleMixtureBound(X, X.repeat(1, 2), rbf(), B, 2.0, 0.1, 0.1)
    with pytest.raises(TypeError, match="MultiTaskMartingaleMixtureBound"):
        MultiTaskMartingaleMixtureBounds(object(), task=0)
    with pytest.raises(ValueError, match="exactly one of weights"):
        MultiTaskMartingaleMixtureBounds(mt)
    with pytest.raises(ValueError, match="exactly one of weights"):
        MultiTaskMartingaleMixtureBounds(mt, weights=torch.ones(2), task=0)
    with pytest.raises(ValueError, match="task must lie in \\[0, 1\\]"):
        MultiTaskMartingaleMixtureBounds(mt, task=2)
    with pytest.raises(ValueError, match="weights must be a finite vector of n = 2"):
        MultiTaskMartingaleMixtureBounds(mt, weights=torch.ones(3))
    with pytest.raises(TypeError, match="MartingaleMixtureBound"):
        MartingaleMixtureBounds(mt)
    with pytest.raises(TypeError, match="VectorValuedGP"):
        MTKBBounds(SingleTaskGP(X, X), 1.0, delta=0.1, task=0)
    model = VectorValuedGP(X, X.repeat(1, 2), rbf(), B, 0.01)
    with pytest.raises(ValueError, match="delta"):
        MTKBBounds(model, 1.0, delta=1.5, task=0)


def test_from_model_labels_and_text():
    X = torch.rand(10, 1, dtype=torch.float64)
    model = SingleTaskGP(X, (5 * X).sin())
    practical = MartingaleMixtureBounds.from_model(model, delta=0.1)
    assert not practical.guaranteed and "fitted to the data" in practical.assumptions
    known = MartingaleMixtureBounds.from_model(
        model, rkhs_norm_bound=5.0, delta=0.1, hyperparameters_fixed=True
    )
    assert known.guaranteed
    certificate = certify(known, FiniteDomain(X))
    text = str(certificate)
    assert "guaranteed with probability >= 0.9" in text and "B = 5 (given)" in text
    # the evaluated points are read back in the user's space
    torch.testing.assert_close(known.evaluated_inputs(), X)
