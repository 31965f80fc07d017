r"""The test problems of ``benchmark botorch-loop``: BoTorch's test functions, noise-free
and with Gaussian observation noise.

Each function is negated (the loop maximizes). The noisy variants add independent
``N(0, s^2)`` noise to every evaluation, with ``s`` about a tenth of the function's
standard deviation over its domain (Branin 51, Hartmann-6 0.39, Levy-4 28 for uniform
points): ``s = 5`` (Branin), ``0.04`` (Hartmann-6), ``3`` (Levy-4). The regret is
always measured on the noise-free function.

``measurement_noise_std`` is what a user states about the measurement (the argument of
``MartingaleMixtureUCB`` of the same name): the noise level for the noisy variants and
the precision ``MEASUREMENT_PRECISION`` of a deterministic evaluation for the
noise-free ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from botorch.test_functions import Branin, Hartmann, Levy
from botorch.test_functions.synthetic import SyntheticTestFunction
from torch import Tensor

MEASUREMENT_PRECISION = 1e-6  # the outcome units of a noise-free evaluation


@dataclass(frozen=True)
class LoopProblem:
    """A test function and its observation noise.

    Attributes:
        make: Builds the (negated) BoTorch test function.
        noise_std: ``s >= 0``, the standard deviation of the observation noise.

    Example:
        >>> from botorch_mtucb.benchmarks.loop_problems import PROBLEMS
        >>> problem = PROBLEMS["branin-noisy"]
        >>> problem.noise_std, problem.measurement_noise_std, problem.dim
        (5.0, 5.0, 2)
        >>> PROBLEMS["branin"].measurement_noise_std
        1e-06
    """

    make: Callable[[], SyntheticTestFunction]
    noise_std: float = 0.0

    @property
    def measurement_noise_std(self) -> float:
        """The noise level a user states: ``noise_std``, or the precision if 0."""
        return self.noise_std if self.noise_std > 0 else MEASUREMENT_PRECISION

    @property
    def dim(self) -> int:
        """``d``."""
        return self.function().bounds.shape[-1]

    def function(self) -> SyntheticTestFunction:
        """The noise-free function, float64."""
        return self.make().to(torch.float64)

    def observe(
        self, function: SyntheticTestFunction, X: Tensor, generator: torch.Generator
    ) -> Tensor:
        """``f(X) + s eps`` (``n x 1``), ``eps`` standard normal from ``generator``."""
        values = function(X).unsqueeze(-1)
        if self.noise_std == 0:
            return values
        noise = torch.randn(values.shape, generator=generator, dtype=values.dtype)
        return values + self.noise_std * noise


PROBLEMS: dict[str, LoopProblem] = {
    "branin": LoopProblem(lambda: Branin(negate=True)),
    "hartmann6": LoopProblem(lambda: Hartmann(dim=6, negate=True)),
    "levy4": LoopProblem(lambda: Levy(dim=4, negate=True)),
    "branin-noisy": LoopProblem(lambda: Branin(negate=True), 5.0),
    "hartmann6-noisy": LoopProblem(lambda: Hartmann(dim=6, negate=True), 0.04),
    "levy4-noisy": LoopProblem(lambda: Levy(dim=4, negate=True), 3.0),
}
