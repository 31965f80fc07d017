"""Where a policy looks for its next point: a finite set or a box.

Maximization uses BoTorch's optimizers: ``optimize_acqf_discrete`` on a finite set,
``optimize_acqf`` (multi-start L-BFGS-B with gradients) on a box.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from botorch.utils.sampling import manual_seed
from torch import Tensor


@dataclass
class FiniteDomain:
    """A finite set of candidate points, ``points``: ``N x d``."""

    points: Tensor

    def __post_init__(self) -> None:
        if not isinstance(self.points, Tensor) or self.points.dim() != 2:
            raise ValueError("points must be an N x d tensor")
        if self.points.shape[0] == 0:
            raise ValueError("a finite domain needs at least one point")

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.points.shape[-1]


@dataclass
class BoxDomain:
    """The box ``bounds[0] <= x <= bounds[1]`` (``bounds``: ``2 x d``)."""

    bounds: Tensor
    num_restarts: int = 8
    raw_samples: int = 256
    options: dict = field(default_factory=lambda: {"maxiter": 100})

    def __post_init__(self) -> None:
        if (
            not isinstance(self.bounds, Tensor)
            or self.bounds.dim() != 2
            or self.bounds.shape[0] != 2
        ):
            raise ValueError("bounds must be a 2 x d tensor")
        if (self.bounds[0] > self.bounds[1]).any():
            raise ValueError("bounds[0] must be <= bounds[1]")

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.bounds.shape[-1]


Domain = FiniteDomain | BoxDomain


def maximize_acquisition(
    acquisition: AcquisitionFunction, domain: Domain, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """The maximizer ``d`` and the maximum (0-d) of ``acquisition`` over ``domain``.

    On a box the raw samples of ``optimize_acqf`` are drawn under a seed taken from
    ``generator`` so that runs are reproducible.
    """
    if isinstance(domain, FiniteDomain):
        candidate, value = optimize_acqf_discrete(
            acquisition, q=1, choices=domain.points, unique=False
        )
        return candidate.reshape(-1), value.reshape(())
    if isinstance(domain, BoxDomain):
        seed = None
        if generator is not None:
            seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        options = dict(domain.options)
        if seed is not None:
            options["seed"] = seed
        # Also fix the global RNG during the call: BoTorch draws some initial conditions
        # from it (e.g. at random when the acquisition is flat, as under the prior).
        with manual_seed(seed) if seed is not None else contextlib.nullcontext():
            candidate, value = optimize_acqf(
                acquisition,
                bounds=domain.bounds,
                q=1,
                num_restarts=domain.num_restarts,
                raw_samples=domain.raw_samples,
                options=options,
            )
        return candidate.reshape(-1), value.reshape(())
    raise TypeError(f"domain must be a FiniteDomain or a BoxDomain, got {type(domain).__name__}")
