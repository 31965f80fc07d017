"""The random baseline of paper 002 (Section 7, "Random")."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits.rounds import round_domain
from botorch_mtucb.utils.domains import Domain, FiniteDomain


class RandomPolicy:
    """Actions chosen uniformly at random from the round's action set (or the domain).

    Args:
        domain: Used when the context has no ``"_actions"`` (a ``FiniteDomain`` or
            ``BoxDomain``).
        name: Name used in results.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import RandomPolicy
        >>> actions = torch.rand(5, 2, dtype=torch.float64)
        >>> x = RandomPolicy().select({"_actions": actions}, torch.Generator().manual_seed(0))
        >>> bool((x == actions).all(-1).any())
        True
    """

    def __init__(self, domain: Domain | None = None, name: str = "Random") -> None:
        self.name = name
        self.domain = domain

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """A uniformly random action (or point of the box)."""
        domain = round_domain(context, self.domain)
        if isinstance(domain, FiniteDomain):
            index = int(torch.randint(domain.points.shape[0], (1,), generator=generator))
            return domain.points[index]
        bounds = domain.bounds.to(torch.float64)
        u = torch.rand(bounds.shape[-1], generator=generator, dtype=torch.float64)
        return (bounds[0] + u * (bounds[1] - bounds[0])).to(domain.bounds)

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Nothing to learn."""
