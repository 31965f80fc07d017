"""The random baseline of paper 002: uniform over the round's actions or the box."""

from __future__ import annotations

import pytest
import torch

from botorch_mtucb.bandits import RandomPolicy
from botorch_mtucb.utils import BoxDomain, FiniteDomain


def test_uniform_over_the_actions_and_the_box():
    box = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64), num_restarts=2,
                    raw_samples=32)  # fmt: skip
    random_policy = RandomPolicy(domain=box)
    point = random_policy.select({}, torch.Generator().manual_seed(2))
    assert point.shape == (2,) and ((point >= 0) & (point <= 1)).all()
    actions = torch.rand(5, 2, dtype=torch.float64)
    picks = {int((RandomPolicy().select({"_actions": actions}, torch.Generator().manual_seed(s))
                  == actions).all(-1).nonzero()) for s in range(40)}  # fmt: skip
    assert picks == set(range(5))
    # a fixed finite domain is used when the context has no action set
    finite = RandomPolicy(domain=FiniteDomain(actions))
    assert (finite.select({}, torch.Generator().manual_seed(0)) == actions).all(-1).any()
    assert random_policy.name == "Random"
    random_policy.update(point, torch.zeros(1), {}, torch.Generator())  # nothing to learn


def test_no_domain():
    with pytest.raises(ValueError, match="_actions"):
        RandomPolicy().select({}, torch.Generator())
