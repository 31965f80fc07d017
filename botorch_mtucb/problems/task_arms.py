"""Multi-task problems with a finite set of arms per task and known values.

Source: paper 001 (Sessa et al. 2023), Sections 3-5: task-indexed observations
``y = f^mt(i, x) + xi`` where each task ``i`` has its own finite set of strategies (the
MHC-I peptides of one allele, or the 10^4 actions of the synthetic problem).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_mtucb.utils.domains import FiniteDomain, find_rows


class MultiTaskArmProblem:
    r"""``N`` tasks, task ``i`` with arms ``X_i`` (``A_i x d``) and values ``f_i(X_i)``.

    Observations add Gaussian noise of standard deviation ``noise_std``.

    Args:
        arms: One ``A_i x d`` tensor per task (``A_i >= 1``; tasks may share arms).
        values: One ``A_i`` tensor of noise-free values ``f_i`` per task.
        noise_std: Standard deviation of the Gaussian observation noise (``>= 0``).
        task_names: Optional names of the tasks (default ``"task-0"``, ...).

    Raises:
        ValueError: For no task, an empty arm set, mismatched sizes or dimensions,
            non-finite values or a negative ``noise_std``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems import MultiTaskArmProblem
        >>> arms = [torch.tensor([[0.0], [1.0]]), torch.tensor([[0.5]])]
        >>> values = [torch.tensor([0.25, 0.75]), torch.tensor([0.5])]
        >>> problem = MultiTaskArmProblem(arms, values, noise_std=0.0)
        >>> problem.optimum(0), problem.objective(0, torch.tensor([0.0]))
        (0.75, 0.25)
        >>> problem.observe(1, torch.tensor([0.5])).shape
        torch.Size([1])
    """

    def __init__(
        self,
        arms: Sequence[Tensor],
        values: Sequence[Tensor],
        noise_std: float,
        task_names: Sequence[str] | None = None,
    ) -> None:
        if len(arms) == 0:
            raise ValueError("a multi-task problem needs at least one task")
        if len(values) != len(arms):
            raise ValueError(f"got {len(arms)} arm sets but {len(values)} value vectors")
        dims = set()
        for i, (points, value) in enumerate(zip(arms, values)):
            if not isinstance(points, Tensor) or points.dim() != 2:
                raise ValueError(f"arms[{i}] must be an A_i x d tensor")
            if points.shape[0] == 0:
                raise ValueError(f"task {i} has no arms")
            if value.reshape(-1).shape[0] != points.shape[0]:
                raise ValueError(f"values[{i}] must have {points.shape[0]} entries")
            if not torch.isfinite(points).all() or not torch.isfinite(value).all():
                raise ValueError(f"arms[{i}] and values[{i}] must be finite")
            dims.add(points.shape[-1])
        if len(dims) != 1:
            raise ValueError(f"all arm sets must have the same dimension, got {sorted(dims)}")
        noise_std = float(noise_std)
        if not math.isfinite(noise_std) or noise_std < 0:
            raise ValueError(f"noise_std must be finite and >= 0, got {noise_std}")
        self.arms = [a.detach() for a in arms]
        self.values = [v.detach().reshape(-1).to(a) for v, a in zip(values, self.arms)]
        self.noise_std = noise_std
        self.task_names = (
            list(task_names) if task_names is not None else [f"task-{i}" for i in range(len(arms))]
        )
        if len(self.task_names) != len(self.arms):
            raise ValueError("task_names must have one name per task")

    @property
    def num_tasks(self) -> int:
        """The number of tasks ``N``."""
        return len(self.arms)

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.arms[0].shape[-1]

    def domain(self, task: int) -> FiniteDomain:
        """The arms of ``task`` as a ``FiniteDomain``."""
        return FiniteDomain(self.arms[self._check_task(task)])

    def domains(self) -> list[FiniteDomain]:
        """One ``FiniteDomain`` per task."""
        return [self.domain(i) for i in range(self.num_tasks)]

    def optimum(self, task: int) -> float:
        """``max_x f_i(x)`` over the arms of ``task``."""
        return float(self.values[self._check_task(task)].max())

    def objective(self, task: int, x: Tensor) -> float:
        """The noise-free value ``f_i(x)`` of an arm ``x`` (``d``) of ``task``.

        Raises:
            ValueError: If ``x`` is not one of the arms of ``task``.
        """
        task = self._check_task(task)
        index = find_rows(self.arms[task], x.reshape(-1))
        if index is None:
            raise ValueError(f"x is not one of the arms of task {task}")
        return float(self.values[task][index[0]])

    def observe(self, task: int, x: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """A noisy observation ``f_i(x) + noise_std * N(0, 1)`` (a 1-element tensor)."""
        value = self.objective(task, x)
        noise = torch.randn(1, generator=generator, dtype=torch.float64)
        return torch.tensor([value], dtype=torch.float64) + self.noise_std * noise

    def _check_task(self, task: int) -> int:
        task = int(task)
        if not 0 <= task < self.num_tasks:
            raise ValueError(f"task must lie in [0, {self.num_tasks - 1}], got {task}")
        return task
