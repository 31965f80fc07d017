"""Exact multi-task posterior on fixed finite arm sets, updated in O(M A) per round.

The bandits of paper 001 score every arm of a task each round. Evaluating
``VectorValuedGP.posterior`` on all arms costs ``O(M^2 A)`` per round (``M``
observations, ``A`` arms). Because the arm sets are fixed and every observation is one
of the arms, this module keeps instead the exact posterior on all ``A`` (task, arm)
pairs:

* ``V = L^{-1} K(obs, arms)`` (``M x A``), with ``L L^T = K_t + lambda I`` the Cholesky
  factor of the observations' kernel matrix (a ``GrowingCholesky``);
* ``z = L^{-1} y``, the mean ``mu = V^T z`` and the variance ``k(a, a) - ||V[:, a]||^2``.

A new observation ``(i, x)`` at arm column ``c`` extends the factor by the row
``[w^T, l]`` with ``w = V[:, c]`` and ``l = sqrt(sigma^2(c) + lambda)``, and ``V`` by the
row ``(k(o, arms) - w^T V) / l``: ``O(M A)`` and no approximation. The numbers equal
those of ``VectorValuedGP`` (paper 001, eqs. 3-4), which the tests check.

Source: paper 001, eqs. (3)-(4) (task-indexed kernel ridge regression) and Section 2.1
(``gamma_t^mt`` as the sum of ``1/2 ln(1 + sigma_{s-1}^2 / lambda)``, the chain rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from gpytorch.kernels import Kernel, LinearKernel
from torch import Tensor

from botorch_mtucb.kernels.task_checks import check_task_covariance
from botorch_mtucb.utils.checks import check_kernel_values, check_positive, check_working_precision
from botorch_mtucb.utils.domains import find_arm
from botorch_mtucb.utils.linalg import GrowingCholesky


class TaskArmPosterior:
    r"""Exact posterior of ``f^mt`` on per-task finite arm sets (paper 001, eqs. 3-4).

    Kernel ``k((i, x), (j, x')) = B_ij k_X(x, x')`` and regularization ``lambda``.

    Args:
        arms: One ``A_i x d`` tensor of arms per task (tasks may share points).
        data_kernel: The input kernel ``k_X`` (a GPyTorch kernel; parameters fixed).
        task_covariance: ``N x N`` PSD task covariance ``B`` (e.g.
            ``UniformSimilarityTaskKernel.from_b(N, b).covar_matrix``).
        regularization: ``lambda > 0``.

    Raises:
        TypeError: If ``regularization`` is not a real number, or an arm set is
            half precision (float32 and float64 are accepted).
        ValueError: For an empty arm set, mismatched dimensions, a task covariance of
            the wrong size or not PSD, or ``regularization <= 0``; arms so large
            that the kernel overflows (``1e300 * X``) raise it here or at ``update``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.models import TaskArmPosterior
        >>> arms = [torch.eye(2, dtype=torch.float64)] * 2  # two tasks, two arms each
        >>> B = torch.eye(2, dtype=torch.float64)  # independent tasks
        >>> kernel = LinearKernel().initialize(variance=1.0)
        >>> posterior = TaskArmPosterior(arms, kernel, B, regularization=1.0)
        >>> posterior.update(task=0, arm=1, y=2.0)
        >>> posterior.mean(0)
        tensor([0.0000, 1.0000], dtype=torch.float64)
        >>> posterior.variance(0)
        tensor([1.0000, 0.5000], dtype=torch.float64)
        >>> round(posterior.information_gain, 4)  # 1/2 log(1 + 1 / 1)
        0.3466
    """

    def __init__(
        self,
        arms: Sequence[Tensor],
        data_kernel: Kernel,
        task_covariance: Tensor,
        regularization: float,
    ) -> None:
        if len(arms) == 0:
            raise ValueError("arms must hold one arm set per task")
        dims = {a.shape[-1] for a in arms}
        if any(a.dim() != 2 or a.shape[0] == 0 for a in arms) or len(dims) != 1:
            raise ValueError("each arm set must be a non-empty A_i x d tensor, same d for all")
        for i, arm_set in enumerate(arms):
            check_working_precision(arm_set, f"arms[{i}]")
        regularization = check_positive(regularization, "regularization")
        self.num_tasks = len(arms)
        self.arms = [a.detach() for a in arms]
        reference = self.arms[0]
        self.dtype, self.device = reference.dtype, reference.device
        task_covariance = torch.as_tensor(task_covariance).to(reference)
        if task_covariance.shape != (self.num_tasks, self.num_tasks):
            raise ValueError(
                f"task_covariance must be {self.num_tasks} x {self.num_tasks}, got "
                f"{tuple(task_covariance.shape)}"
            )
        self.task_covariance = check_task_covariance(task_covariance, name="task_covariance")
        self.data_kernel = data_kernel.to(reference)
        for parameter in data_kernel.parameters():
            parameter.requires_grad_(False)
        self.regularization = float(regularization)
        sizes = [a.shape[0] for a in self.arms]
        self.offsets = [0, *torch.tensor(sizes).cumsum(0).tolist()]
        self.points = torch.cat(self.arms)  # A x d
        # Distinct points (tasks may share arms): the kernel is evaluated once per point.
        self._unique_points, self._point_of_column = torch.unique(
            self.points, dim=0, return_inverse=True
        )
        self.column_task = torch.repeat_interleave(
            torch.arange(self.num_tasks, device=self.device),
            torch.tensor(sizes, device=self.device),
        )  # A
        with torch.no_grad():
            prior_diag = data_kernel(self.points, self.points, diag=True).to(reference)
        check_kernel_values(prior_diag, self.points, "arms")
        self._prior_variance = self.task_covariance.diagonal()[self.column_task] * prior_diag
        self._mean = torch.zeros_like(self._prior_variance)
        self._reduction = torch.zeros_like(self._prior_variance)  # ||V[:, a]||^2
        self._factor = GrowingCholesky(reference.new_zeros(0, 0))  # L, L L^T = K_t + lambda I
        self._rows = reference.new_zeros(self._factor.capacity, self.points.shape[0])  # V
        self._z = reference.new_zeros(self._factor.capacity)  # L^{-1} y
        self.observed_columns: list[int] = []
        self.observed_y: list[float] = []
        self.information_gain = 0.0  # 1/2 log det(I + K_t / lambda), by the chain rule
        self._prior_root: Tensor | None = None
        self._task_root: Tensor | None = None

    # ------------------------------------------------------------------ queries
    @property
    def num_observations(self) -> int:
        """The number of observations ``M``."""
        return len(self.observed_columns)

    def _slice(self, task: int) -> slice:
        if not 0 <= task < self.num_tasks:
            raise ValueError(f"task must lie in [0, {self.num_tasks - 1}], got {task}")
        return slice(self.offsets[task], self.offsets[task + 1])

    def mean(self, task: int) -> Tensor:
        """Posterior mean ``mu_t(i, x)`` at the arms of ``task``: ``A_i``."""
        return self._mean[self._slice(task)]

    def variance(self, task: int) -> Tensor:
        """Posterior variance ``sigma_t^2(i, x)`` at the arms of ``task``: ``A_i`` (``>= 0``)."""
        s = self._slice(task)
        return (self._prior_variance[s] - self._reduction[s]).clamp_min(0.0)

    def std(self, task: int) -> Tensor:
        """Posterior standard deviation at the arms of ``task``: ``A_i``."""
        return self.variance(task).sqrt()

    def arm_index(self, task: int, x: Tensor) -> int:
        """Index of ``x`` among the arms of ``task`` (``ValueError`` if absent).

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import TaskArmPosterior
            >>> arms = [torch.tensor([[0.0], [1.0]], dtype=torch.float64)]
            >>> posterior = TaskArmPosterior(arms, RBFKernel(), torch.eye(1), 0.1)
            >>> posterior.arm_index(0, torch.tensor([1.0]))
            1
        """
        self._slice(task)
        return find_arm(self.arms[task], x)

    # ------------------------------------------------------------------ update
    def update(self, task: int, arm: int, y: float | Tensor) -> None:
        """Condition on the observation ``y`` of ``task`` at its arm number ``arm``.

        Raises:
            ValueError: If ``task`` or ``arm`` is out of range or ``y`` is not finite.
        """
        s = self._slice(task)
        if not 0 <= arm < s.stop - s.start:
            raise ValueError(f"arm must lie in [0, {s.stop - s.start - 1}], got {arm}")
        y = float(y)
        if not math.isfinite(y):
            raise ValueError(f"y must be finite, got {y}")
        column = s.start + arm
        m = self.num_observations
        with torch.no_grad():
            w = self._rows[:m, column]  # L^{-1} k(obs, o)
            variance = (self._prior_variance[column] - self._reduction[column]).clamp_min(0.0)
            pivot = torch.sqrt(variance + self.regularization)
            x = self.points[column].unsqueeze(0)
            k_x = self.data_kernel(x, self._unique_points).to_dense().reshape(-1)
            k_x = k_x.to(self.points)[self._point_of_column]  # A
            check_kernel_values(k_x, self.points, "arms")  # before any state changes
            k_new = self.task_covariance[task][self.column_task] * k_x  # A
            row = (k_new - w @ self._rows[:m]) / pivot
            z_new = (y - w @ self._z[:m]) / pivot
            self._factor.append_factor_rows(w.unsqueeze(0), pivot.reshape(1, 1))
            self._reserve_rows()
            self._rows[m] = row
            self._z[m] = z_new
            self._mean += row * z_new
            self._reduction += row.square()
        self.information_gain += 0.5 * math.log1p(float(variance) / self.regularization)
        self.observed_columns.append(column)
        self.observed_y.append(y)

    def _reserve_rows(self) -> None:
        """Give ``V`` and ``z`` as many rows as the factor's buffer (zero padding)."""
        missing = self._factor.capacity - self._rows.shape[0]
        if missing > 0:
            self._rows = torch.nn.functional.pad(self._rows, (0, 0, 0, missing))
            self._z = torch.nn.functional.pad(self._z, (0, missing))

    # ---------------------------------------------------------------- sampling
    def _root(self) -> Tensor:
        """A root ``R`` with ``R R^T = k_X(points, points)`` (``A x r``), consistent
        across duplicated points: the features of a ``LinearKernel``, otherwise an
        eigen-decomposition over the distinct points (at most 5000)."""
        if self._prior_root is not None:
            return self._prior_root
        kernel = self.data_kernel
        with torch.no_grad():
            if isinstance(kernel, LinearKernel) and kernel.active_dims is None:
                root = self.points * kernel.variance.to(self.points).reshape(()).sqrt()
            else:
                unique, inverse = self._unique_points, self._point_of_column
                if unique.shape[0] > 5000:
                    raise ValueError(
                        f"posterior sampling needs a root of the kernel over {unique.shape[0]} "
                        "distinct points; more than 5000 is only supported for LinearKernel"
                    )
                gram = kernel(unique, unique).to_dense().to(self.points)
                eigenvalues, eigenvectors = torch.linalg.eigh(gram)
                root = (eigenvectors * eigenvalues.clamp_min(0.0).sqrt())[inverse]
        self._prior_root = root
        return root

    def sample(self, task: int, generator: torch.Generator | None = None) -> Tensor:
        r"""One exact joint posterior sample of ``f(i, .)`` at the arms of ``task``: ``A_i``.

        Matheron's rule: ``f_post = f_prior + V^T L^{-1} (y - f_prior(obs) - e)`` with a
        joint prior sample ``f_prior(j, x) = sum_k [B^{1/2}]_jk g_k(x)``, ``g_k`` i.i.d.
        ``GP(0, k_X)`` draws, and ``e ~ N(0, lambda I)``.

        Raises:
            ValueError: If ``task`` is out of range, or the kernel is not a
                ``LinearKernel`` and the arms hold more than 5000 distinct points.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import TaskArmPosterior
            >>> arms = [torch.linspace(0, 1, 4, dtype=torch.float64).unsqueeze(-1)]
            >>> posterior = TaskArmPosterior(arms, RBFKernel(), torch.eye(1), 0.1)
            >>> posterior.sample(0, torch.Generator().manual_seed(0)).shape
            torch.Size([4])
        """
        s = self._slice(task)
        root = self._root()  # A x r
        m = self.num_observations
        with torch.no_grad():
            if self._task_root is None:  # the symmetric square root B^{1/2}
                eigenvalues, eigenvectors = torch.linalg.eigh(self.task_covariance)
                scaled = eigenvectors * eigenvalues.clamp_min(0.0).sqrt()
                self._task_root = scaled @ eigenvectors.T
            task_root = self._task_root
            draws = torch.randn(
                root.shape[-1], self.num_tasks, generator=generator, dtype=torch.float64
            ).to(root)
            columns = torch.arange(s.start, s.stop, device=self.device)
            obs = torch.tensor(self.observed_columns, dtype=torch.long, device=self.device)
            wanted = torch.cat([columns, obs])
            latent = root[wanted] @ draws  # (A_i + m) x N: g_k at the points
            prior = (latent * task_root[self.column_task[wanted]]).sum(-1)
            sample = prior[: columns.numel()]
            if m:
                noise = torch.randn(m, generator=generator, dtype=torch.float64).to(root)
                y = torch.tensor(self.observed_y, dtype=root.dtype, device=root.device)
                residual = y - prior[columns.numel() :] - noise * math.sqrt(self.regularization)
                # A column-major copy of L: the same solve whatever the buffer's capacity.
                factor = self._factor.factor.mT.contiguous().mT
                u = torch.linalg.solve_triangular(
                    factor, residual.unsqueeze(-1), upper=False
                ).squeeze(-1)
                sample = sample + u @ self._rows[:m, s]
        return sample
