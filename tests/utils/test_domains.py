"""Domains and the maximization of an acquisition over them (BoTorch's optimizers)."""

from __future__ import annotations

import pytest
import torch
from botorch.acquisition import AcquisitionFunction

from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain, find_arm, maximize_acquisition


class Quadratic(AcquisitionFunction):
    """``-||x - centre||^2`` for ``batch x 1 x d`` inputs (no model needed)."""

    def __init__(self, centre: torch.Tensor) -> None:
        super().__init__(model=None)
        self.centre = centre

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return -(X.squeeze(-2) - self.centre).square().sum(-1)


def test_domains_check_their_arguments():
    assert FiniteDomain(torch.zeros(3, 2)).dim == 2
    assert BoxDomain(torch.tensor([[0.0], [1.0]])).dim == 1
    with pytest.raises(ValueError, match="N x d"):
        FiniteDomain(torch.zeros(3))
    with pytest.raises(ValueError, match="at least one point"):
        FiniteDomain(torch.zeros(0, 2))
    with pytest.raises(ValueError, match="2 x d"):
        BoxDomain(torch.zeros(3, 2))
    with pytest.raises(ValueError, match="<= bounds"):
        BoxDomain(torch.tensor([[1.0], [0.0]]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_finite_domain_maximum_is_the_brute_force_one(dtype):
    generator = torch.Generator().manual_seed(0)
    points = torch.rand(50, 3, generator=generator, dtype=torch.float64).to(dtype)
    acquisition = Quadratic(torch.full((3,), 0.5, dtype=dtype))
    x, value = maximize_acquisition(acquisition, FiniteDomain(points))
    values = acquisition(points.unsqueeze(-2))
    assert torch.equal(x, points[values.argmax()])
    assert value.shape == () and torch.isclose(value, values.max())


def test_box_maximum_is_reproducible_and_inside_the_box():
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    domain = BoxDomain(bounds, num_restarts=2, raw_samples=16)
    acquisition = Quadratic(torch.tensor([0.3, 1.4], dtype=torch.float64))  # outside in x2
    first = maximize_acquisition(acquisition, domain, torch.Generator().manual_seed(1))
    again = maximize_acquisition(acquisition, domain, torch.Generator().manual_seed(1))
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
    torch.testing.assert_close(first[0], torch.tensor([0.3, 1.0], dtype=torch.float64))
    assert ((first[0] >= bounds[0]) & (first[0] <= bounds[1])).all()


def test_other_domains_are_refused_and_arms_are_found():
    with pytest.raises(TypeError, match="FiniteDomain or a BoxDomain"):
        maximize_acquisition(Quadratic(torch.zeros(1)), torch.zeros(2, 1))
    arms = torch.tensor([[0.0, 1.0], [2.0, 3.0], [2.0, 3.0]])
    assert find_arm(arms, torch.tensor([[2.0, 3.0]])) == 1  # the first match, any shape
    with pytest.raises(ValueError, match="2 entries"):
        find_arm(arms, torch.tensor([2.0]))
    with pytest.raises(ValueError, match="not one of the arms"):
        find_arm(arms, torch.tensor([2.0, 3.5]))
