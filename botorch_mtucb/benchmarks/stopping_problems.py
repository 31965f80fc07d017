r"""The problems of the ``certified-stopping`` benchmark (maximization).

**Known norm** (the certificate's theorem holds): ``f`` a kernel expansion of RKHS norm
exactly ``B`` (``coverage_truths.sample_expansion``: 20 centres uniform in ``[0, 1]^d``)
for a fixed RBF kernel, Gaussian noise of the known ``sigma``; a new ``f`` per seed.

* ``rkhs-finite-{1,2,3}d``: ``N = 256`` points uniform in ``[0, 1]^d`` (new per seed);
  ``f* = max_D f`` exactly;
* ``rkhs-box-{1,2}d``: the box ``[0, 1]^d`` (the certificate by branch and bound); the
  acquisitions are maximized over 512 uniform points drawn each round; ``f*`` from a
  grid of ``GRID_POINTS`` per side refined by L-BFGS-B (SciPy) from its 5 best points.

**Standard noisy** (the rule is practical: ``B`` and the hyperparameters from the data):
BoTorch's ``Branin`` and ``Hartmann`` (6-D), negated, with Gaussian observation noise, on
512 scrambled Sobol points of the unit cube (new per seed) plus the functions' known
maximizers, so that ``f* = max_D f`` is the known optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from botorch.test_functions import Branin, Hartmann
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.kernels import Kernel
from scipy.optimize import minimize
from torch import Tensor

from botorch_mtucb.benchmarks.coverage_truths import sample_expansion
from botorch_mtucb.problems import make_kernel
from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain
from botorch_mtucb.utils.random import round_generator

DTYPE = torch.float64
TRUTH_STREAM = 3
NUM_FINITE, NUM_SOBOL, NUM_BOX_CANDIDATES = 256, 512, 512
GRID_POINTS = {1: 4001, 2: 201}


@dataclass(frozen=True)
class ProblemSpec:
    """What a problem is, before a seed draws its instance.

    Attributes:
        name: Its name on the command line.
        dim: ``d``.
        known_norm: Whether ``f`` has the known RKHS norm ``B`` (theory holds).
        box: Whether the domain is the unit box (else a finite set).
        noise_std: ``sigma`` of the Gaussian observation noise.
        epsilon: The regret accepted by every stopping rule.
        lengthscale: The RBF lengthscale (known-norm problems).
        rkhs_norm: ``B`` (known-norm problems).

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_problems import PROBLEMS
        >>> PROBLEMS["rkhs-finite-1d"].known_norm, PROBLEMS["branin"].known_norm
        (True, False)
    """

    name: str
    dim: int
    known_norm: bool
    box: bool
    noise_std: float
    epsilon: float
    lengthscale: float = 0.0
    rkhs_norm: float = 0.0


PROBLEMS: dict[str, ProblemSpec] = {
    spec.name: spec
    for spec in [
        ProblemSpec("rkhs-finite-1d", 1, True, False, 0.02, 0.1, 0.2, 1.0),
        ProblemSpec("rkhs-finite-2d", 2, True, False, 0.02, 0.1, 0.3, 1.0),
        ProblemSpec("rkhs-finite-3d", 3, True, False, 0.02, 0.1, 0.4, 1.0),
        ProblemSpec("rkhs-box-1d", 1, True, True, 0.02, 0.1, 0.2, 1.0),
        ProblemSpec("rkhs-box-2d", 2, True, True, 0.02, 0.1, 0.3, 1.0),
        ProblemSpec("branin", 2, False, False, 0.5, 2.0),
        ProblemSpec("hartmann6", 6, False, False, 0.05, 0.3),
    ]
}


@dataclass
class ProblemInstance:
    """One seed's problem: ``f`` (``N x d`` in the unit cube to ``N``, noise-free), the
    domain, ``f*``, and for known-norm problems the kernel and ``B``.

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_problems import make_instance
        >>> instance = make_instance("rkhs-finite-1d", seed=0)
        >>> instance.domain.points.shape, bool(instance.optimum >= instance.f(
        ...     instance.domain.points).max() - 1e-12)
        (torch.Size([256, 1]), True)
    """

    spec: ProblemSpec
    f: Callable[[Tensor], Tensor]
    domain: FiniteDomain | BoxDomain
    optimum: float
    kernel: Kernel | None = None

    def regret(self, x: Tensor) -> float:
        """``f* - f(x)`` for one point ``x`` (``d``)."""
        return self.optimum - float(self.f(x.reshape(1, -1).to(DTYPE))[0])


def make_instance(name: str, seed: int) -> ProblemInstance:
    """Problem ``name`` drawn from ``seed`` (module docstring).

    Raises:
        ValueError: For an unknown name.

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_problems import make_instance
        >>> instance = make_instance("branin", seed=0)
        >>> round(instance.optimum, 4), instance.domain.points.shape
        (-0.3979, torch.Size([515, 2]))
    """
    if name not in PROBLEMS:
        raise ValueError(f"problem must be one of {sorted(PROBLEMS)}, got {name!r}")
    spec = PROBLEMS[name]
    generator = round_generator(seed, 0, TRUTH_STREAM)
    if spec.known_norm:
        kernel = make_kernel("rbf", spec.lengthscale)
        truth = sample_expansion(
            kernel, spec.dim, spec.rkhs_norm, torch.eye(1, dtype=DTYPE), generator
        )

        def f(X: Tensor) -> Tensor:
            return truth(X.to(DTYPE)).squeeze(-1)

        if spec.box:
            domain = BoxDomain(torch.stack([torch.zeros(spec.dim), torch.ones(spec.dim)]).to(DTYPE))
            return ProblemInstance(spec, f, domain, box_maximum(f, spec.dim), kernel)
        points = torch.rand(NUM_FINITE, spec.dim, generator=generator, dtype=DTYPE)
        return ProblemInstance(spec, f, FiniteDomain(points), float(f(points).max()), kernel)
    function = (Branin(negate=True) if name == "branin" else Hartmann(dim=6, negate=True)).to(DTYPE)
    lower, width = function.bounds[0], function.bounds[1] - function.bounds[0]

    def f(X: Tensor) -> Tensor:
        return function(lower + width * X.to(DTYPE), noise=False)

    unit = torch.stack([torch.zeros(spec.dim), torch.ones(spec.dim)]).to(DTYPE)
    sobol = draw_sobol_samples(unit, n=NUM_SOBOL, q=1, seed=seed).squeeze(-2)
    optimizers = (torch.tensor(function._optimizers, dtype=DTYPE) - lower) / width
    points = torch.cat([sobol, optimizers])
    return ProblemInstance(spec, f, FiniteDomain(points), float(function.optimal_value))


def box_maximum(f: Callable[[Tensor], Tensor], dim: int) -> float:
    """``max_{[0, 1]^d} f``: the best of a grid, refined by L-BFGS-B from its 5 best
    points (the largest value found).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.stopping_problems import box_maximum
        >>> abs(box_maximum(lambda X: -((X - 0.123456) ** 2).sum(-1), 2)) < 1e-9
        True
    """
    side = torch.linspace(0, 1, GRID_POINTS.get(dim, 51), dtype=DTYPE)
    grid = torch.cartesian_prod(*[side] * dim).reshape(-1, dim)
    values = torch.cat([f(chunk) for chunk in grid.split(65536)])
    best = float(values.max())
    for start in grid[values.topk(5).indices]:

        def negative(x: np.ndarray) -> float:
            return -float(f(torch.as_tensor(x, dtype=DTYPE).reshape(1, dim))[0])

        result = minimize(negative, start.numpy(), method="L-BFGS-B", bounds=[(0, 1)] * dim)
        if math.isfinite(result.fun):
            best = max(best, -float(result.fun))
    return best
