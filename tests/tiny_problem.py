"""A tiny two-task problem on a finite 1-d grid, for the bandit tests."""

from __future__ import annotations

import torch
from torch import Tensor


class TinyProblem:
    """``f(x) = (sin(3 x), cos(2 x) - x)`` on 12 points of [0, 1]; Gaussian noise."""

    num_tasks = 2

    def __init__(self, noise_std: float = 0.1, num_points: int = 12) -> None:
        self.noise_std = noise_std
        self.points = torch.linspace(0.0, 1.0, num_points, dtype=torch.float64).unsqueeze(-1)
        self.reference_point = torch.tensor([-1.5, -1.5], dtype=torch.float64)

    def objective(self, X: Tensor) -> Tensor:
        x = X[..., 0].to(torch.float64)
        return torch.stack([torch.sin(3 * x), torch.cos(2 * x) - x], dim=-1)

    def observe(self, X: Tensor, generator: torch.Generator) -> Tensor:
        value = self.objective(X.reshape(1, -1))[0]
        noise = torch.randn(2, generator=generator, dtype=torch.float64)
        return value + self.noise_std * noise

    @property
    def regret_points(self) -> Tensor:
        return self.points
