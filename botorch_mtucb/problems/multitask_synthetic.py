"""Paper 001's synthetic multi-task linear bandit (Section 5 and Appendix D).

Tasks ``f_i(x) = <theta_i, x>`` with ``theta_i = (1 - delta) theta_bar + delta
theta_dev^i``, where ``theta_bar`` and the ``theta_dev^i`` are random unit vectors
(a common model and individual deviations), ``10^4`` actions on the sphere of radius
10 in ``R^d`` shared by all tasks, unit normal observation noise and a linear input
kernel ``k_X(x, x') = x^T x'``.

``delta`` here is the *deviation weight* of Section 5 (not the confidence level).

Note: with actions of norm 10 the linear kernel has ``k_X(x, x) = 100``, while the
proof of Theorem 1's large-b width (eq. 27) and Lemma 1 use ``k_X(x, x) <= 1``; this is
the paper's own set-up (``B = max_i ||theta_i|| <= 1``) and is kept as is. The bandits'
widths stay valid: eq. 27 takes the trace of the data's kernel matrix
(``multitask_widths(kernel_trace=...)``), not ``t``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.problems.task_arms import MultiTaskArmProblem


class MultiTaskLinearProblem(MultiTaskArmProblem):
    """A ``MultiTaskArmProblem`` whose task ``i`` is linear: ``f_i(x) = <theta_i, x>``.

    Attributes:
        task_vectors: ``N x d``, row ``i`` is ``theta_i``.
        rkhs_norm_bound: ``B = max_i ||theta_i||`` (the RKHS norm for the linear kernel).
        task_deviation: ``epsilon = max_i ||theta_i - theta_avg|| / B`` (paper 001, eq. 5).

    Args:
        task_vectors: ``N x d`` task vectors ``theta_i``.
        actions: ``A x d`` actions shared by all tasks.
        noise_std: Standard deviation of the Gaussian noise.

    Raises:
        ValueError: If the shapes are not ``N x d`` and ``A x d`` with the same ``d``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems import MultiTaskLinearProblem
        >>> theta = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
        >>> problem = MultiTaskLinearProblem(theta, torch.eye(2, dtype=torch.float64))
        >>> problem.rkhs_norm_bound, round(problem.task_deviation, 4)  # sqrt(2) / 2
        (1.0, 0.7071)
    """

    def __init__(self, task_vectors: Tensor, actions: Tensor, noise_std: float = 1.0) -> None:
        if task_vectors.dim() != 2 or actions.dim() != 2:
            raise ValueError("task_vectors must be N x d and actions A x d")
        if task_vectors.shape[-1] != actions.shape[-1]:
            raise ValueError("task_vectors and actions must have the same dimension d")
        self.task_vectors = task_vectors.to(actions)
        values = [actions @ theta for theta in self.task_vectors]
        super().__init__([actions] * task_vectors.shape[0], values, noise_std)
        norms = self.task_vectors.norm(dim=-1)
        self.rkhs_norm_bound = float(norms.max())
        deviations = (self.task_vectors - self.task_vectors.mean(0)).norm(dim=-1)
        self.task_deviation = (
            float(deviations.max()) / self.rkhs_norm_bound if self.rkhs_norm_bound > 0 else 0.0
        )

    def objective(self, task: int, x: Tensor) -> float:
        """``<theta_i, x>`` (defined for any ``x``, not only the actions)."""
        task = self._check_task(task)
        return float(x.reshape(-1).to(self.task_vectors) @ self.task_vectors[task])


def _unit_vectors(count: int, dim: int, generator: torch.Generator) -> Tensor:
    vectors = torch.randn(count, dim, generator=generator, dtype=torch.float64)
    return vectors / vectors.norm(dim=-1, keepdim=True)


def multitask_synthetic_problem(
    num_tasks: int,
    deviation_weight: float,
    dim: int = 4,
    num_actions: int = 10_000,
    radius: float = 10.0,
    noise_std: float = 1.0,
    seed: int = 0,
) -> MultiTaskLinearProblem:
    r"""Paper 001's synthetic tasks ``f_i = (1 - delta) f_bar + delta f_dev^i`` (Section 5).

    Args:
        num_tasks: ``N >= 1`` (the paper uses 3, 5 and 10).
        deviation_weight: ``delta`` in ``[0, 1]`` (the paper uses 0.2 and 0.4; larger
            means less similar tasks).
        dim: ``d`` (the paper uses 4).
        num_actions: Number of actions shared by all tasks (``10^4``).
        radius: Norm of every action (10).
        noise_std: Standard deviation of the Gaussian noise (1).
        seed: Seed of the task vectors and actions (actions are uniform on the sphere).

    Returns:
        A ``MultiTaskLinearProblem`` with ``rkhs_norm_bound`` and the exact
        ``task_deviation`` of its tasks.

    Raises:
        ValueError: For ``num_tasks < 1``, ``dim < 1``, ``num_actions < 1``,
            ``deviation_weight`` outside ``[0, 1]``, ``radius <= 0`` or negative noise.

    Example:
        >>> from botorch_mtucb.problems import multitask_synthetic_problem
        >>> problem = multitask_synthetic_problem(3, deviation_weight=0.2, num_actions=100)
        >>> problem.num_tasks, problem.dim, round(float(problem.arms[0][0].norm()), 6)
        (3, 4, 10.0)
    """
    if isinstance(num_tasks, bool) or not isinstance(num_tasks, int) or num_tasks < 1:
        raise ValueError(f"num_tasks must be a positive int, got {num_tasks!r}")
    if not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim must be a positive int, got {dim!r}")
    if not isinstance(num_actions, int) or num_actions < 1:
        raise ValueError(f"num_actions must be a positive int, got {num_actions!r}")
    deviation_weight = float(deviation_weight)
    if not 0.0 <= deviation_weight <= 1.0:
        raise ValueError(f"deviation_weight must lie in [0, 1], got {deviation_weight}")
    if not math.isfinite(radius) or radius <= 0:
        raise ValueError(f"radius must be > 0, got {radius}")
    generator = torch.Generator().manual_seed(int(seed))
    common = _unit_vectors(1, dim, generator)
    deviations = _unit_vectors(num_tasks, dim, generator)
    task_vectors = (1 - deviation_weight) * common + deviation_weight * deviations
    actions = radius * _unit_vectors(num_actions, dim, generator)
    return MultiTaskLinearProblem(task_vectors, actions, noise_std=noise_std)
