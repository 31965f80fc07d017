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
    """A finite set of candidate points, ``points``: ``N x d``.

    Raises:
        ValueError: If ``points`` is not an ``N x d`` tensor with ``N >= 1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> domain = FiniteDomain(torch.linspace(0, 1, 5).unsqueeze(-1))
        >>> domain.dim, domain.points.shape[0]
        (1, 5)
    """

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
    """The box ``bounds[0] <= x <= bounds[1]`` (``bounds``: ``2 x d``).

    ``num_restarts``, ``raw_samples`` and ``options`` are passed to BoTorch's
    ``optimize_acqf``.

    Raises:
        ValueError: If ``bounds`` is not ``2 x d`` or ``bounds[0] > bounds[1]`` somewhere.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import BoxDomain
        >>> domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 2.0]]), num_restarts=4)
        >>> domain.dim
        2
    """

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
    """The maximizer (``d``) and the maximum (0-d) of ``acquisition`` over ``domain``.

    On a box the raw samples of ``optimize_acqf`` are drawn under a seed taken from
    ``generator`` so that runs are reproducible.

    Raises:
        TypeError: If ``domain`` is neither a ``FiniteDomain`` nor a ``BoxDomain``.

    Example:
        >>> import torch
        >>> from botorch.acquisition import PosteriorMean
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.utils import FiniteDomain, maximize_acquisition
        >>> X = torch.tensor([[0.2], [0.8]], dtype=torch.float64)
        >>> model = SingleTaskGP(X, torch.tensor([[0.0], [1.0]], dtype=torch.float64))
        >>> x, value = maximize_acquisition(PosteriorMean(model), FiniteDomain(X))
        >>> x
        tensor([0.8000], dtype=torch.float64)
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


def find_arm(arms: Tensor, x: Tensor) -> int:
    """Index of the first row of ``arms`` (``A x d``) equal to ``x`` (``d``).

    Raises:
        ValueError: If ``x`` has another size than ``d`` or is not one of the arms.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.domains import find_arm
        >>> find_arm(torch.tensor([[0.0, 1.0], [2.0, 3.0]]), torch.tensor([2.0, 3.0]))
        1
    """
    x = x.reshape(-1).to(arms)
    if x.shape[0] != arms.shape[-1]:
        raise ValueError(f"x must have {arms.shape[-1]} entries, got {x.shape[0]}")
    matches = (arms == x).all(-1).nonzero()
    if matches.numel() == 0:
        raise ValueError("x is not one of the arms of this task")
    return int(matches[0, 0])
