r"""The posterior of a fixed-kernel model at a finite candidate set, kept incrementally.

On a finite domain ``D`` every round of a bandit asks for the posterior at the same
points. ``track_candidates(domain)`` attaches one ``CandidatePosterior`` to the model
(``VectorValuedGP``, ``NystromVectorValuedGP``; paper 001's regression attaches it to
its ``VectorValuedGP`` on the tasks' arm sets): the posterior at the candidates is then
kept as observations arrive, and read back without a kernel evaluation.

**Exact model.** With the lower Cholesky factor ``L`` of ``G_t + Lambda``
(``GrowingCholesky``) the posterior at the candidates is read off

.. math::
    V_t = L_t^{-1} G_t(D), \qquad
    \mu_t(D) = c + V_t^\top L_t^{-1} (Y_t - c), \qquad
    \Gamma_t(D, D) = \Gamma(D, D) - V_t^\top V_t \;\text{(blocks per point)},

and ``V`` only gains rows: when ``L`` is bordered by ``[W, L_S]`` for ``m`` new
observations with cross-covariances ``C = G(new, D)``,
``V_{t+m} = [V_t; L_S^{-1} (C - W V_t)]`` (``O(t m N)`` instead of the ``O(t^2 N)``
solve and ``t N`` kernel evaluations of a posterior from scratch). On the ICM eigen
route (paper 000, Section 3.3) there is one ``V`` per eigenvalue group (``L_g``
factorizes ``xi_g K_t + eta I``) and the candidates are points, all tasks at each.
On the general route the candidates are *columns*, scalar pairs ``(x, i)``: every
task at every point of one domain, or the arms of each task (one domain per task).
A scalar observation at a column ``c`` needs no solve at all (paper 001, eqs. (3)-(4)):
``W = V[:, c]^T``, ``L_S = sqrt(sigma_t^2(c) + lambda)`` from the kept variance, and
the chain rule gives the information gain increment ``1/2 log(1 + sigma_t^2(c) /
lambda)`` (paper 001, Section 2.1): ``O(t K)`` per observation for ``K`` columns.

**Sketch.** The dictionary of ``NystromVectorValuedGP`` is redrawn at every update,
so nothing like ``V`` survives an update; the candidates' kernel matrix, the number
of observations at each candidate and their summed targets make each redraw a matter
of gathers (``models.nystrom_sketch``), and the moments at every candidate are kept
after each redraw.

This module holds the object (the candidates, the lookup of query points among them,
``V`` in a growing buffer, the kept moments, the chain-rule information gain); each
model fills it from its own factorization (``models.candidate_tracking``), and
``models.candidate_samples`` draws joint posterior samples from it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from botorch.exceptions.errors import UnsupportedError
from torch import Tensor

from botorch_mtucb.utils.checks import check_kernel_values
from botorch_mtucb.utils.domains import FiniteDomain, RowIndex, find_rows
from botorch_mtucb.utils.linalg import GROWTH, HEADROOM, GrowingCholesky

# What track_candidates takes: one domain of every task, or one per task.
CandidateDomain = Tensor | FiniteDomain | Sequence[Tensor | FiniteDomain]


class CandidateSolves:
    r"""``V = L^{-1} C`` (``batch x t x K``) for a growing lower factor ``L``, kept in a
    preallocated ``batch x capacity x K`` buffer that grows geometrically (amortized
    ``O(K)`` copied entries per row), extended in place by ``extend``.

    Args:
        values: The initial ``batch x t x K`` values (``t`` may be 0).
        capacity: Rows reserved (default ``t + HEADROOM``).

    Raises:
        ValueError: If ``values`` has fewer than 2 dimensions or ``capacity < t``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.candidate_posterior import CandidateSolves
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> A = torch.tensor([[4.0, 2.0], [2.0, 5.0]], dtype=torch.float64)
        >>> C = torch.tensor([[1.0, 0.0, 2.0], [3.0, 1.0, 0.0]], dtype=torch.float64)
        >>> factor = GrowingCholesky(A[:1, :1])
        >>> solves = CandidateSolves(factor.solve(C[:1]))
        >>> factor.append(A[:1, 1:], A[1:, 1:])
        >>> solves.extend(factor, C[1:])  # now L^{-1} C for the 2 x 2 factor
        >>> torch.allclose(solves.values, torch.linalg.solve_triangular(
        ...     factor.factor, C, upper=False))
        True
    """

    def __init__(self, values: Tensor, capacity: int | None = None) -> None:
        if values.dim() < 2:
            raise ValueError(f"values must be batch x t x K, got shape {tuple(values.shape)}")
        size = values.shape[-2]
        capacity = self.initial_capacity(size) if capacity is None else capacity
        if capacity < size:
            raise ValueError(f"capacity must be at least t = {size}, got {capacity}")
        self.size = size
        self.buffer = values.new_zeros(*values.shape[:-2], capacity, values.shape[-1])
        self.buffer[..., :size, :] = values

    @staticmethod
    def initial_capacity(rows: int) -> int:
        """The rows a buffer built on ``rows`` rows reserves (``rows + HEADROOM``)."""
        return rows + HEADROOM

    @property
    def values(self) -> Tensor:
        """The active rows ``V`` (a view), ``batch x t x K``."""
        return self.buffer[..., : self.size, :]

    @property
    def capacity(self) -> int:
        """The rows the buffer holds before it must grow."""
        return self.buffer.shape[-2]

    def numel_after(self, rows: int) -> int:
        """Entries of the buffer once ``rows`` more rows are held (after any growth)."""
        size = self.size + rows
        capacity = self.capacity
        if size > capacity:
            capacity = max(size, math.ceil(GROWTH * capacity))
        return self.buffer[..., :1, :].numel() * capacity

    def append(self, rows: Tensor) -> None:
        """Append ``rows`` (``batch x m x K``) in place."""
        t, m = self.size, rows.shape[-2]
        if t + m > self.capacity:
            capacity = max(t + m, math.ceil(GROWTH * self.capacity))
            buffer = self.buffer.new_zeros(*self.buffer.shape[:-2], capacity, self.buffer.shape[-1])
            buffer[..., :t, :] = self.values
            self.buffer = buffer
        self.buffer[..., t : t + m, :] = rows
        self.size = t + m

    def extend(self, factor: GrowingCholesky, cross: Tensor) -> None:
        """Add the rows ``L_S^{-1} (C - W V)`` after ``factor`` grew by ``m`` rows
        ``[W, L_S]`` (``factor.size == t + m``); ``cross``: ``C``, ``batch x m x K``.

        Raises:
            ValueError: If ``factor`` does not hold ``t + m`` rows.
        """
        t, m = self.size, cross.shape[-2]
        if factor.size != t + m:
            raise ValueError(
                f"factor must hold t + m = {t + m} rows (t = {t} solved, m = {m} new), "
                f"got {factor.size}"
            )
        rows = factor.factor[..., t : t + m, :]  # batch x m x (t + m): [W, L_S]
        residual = cross - rows[..., :t] @ self.values if t else cross
        tail = torch.linalg.solve_triangular(rows[..., t:].contiguous(), residual, upper=False)
        self.append(tail)


class CandidatePosterior:
    r"""The posterior of a model at a finite candidate set, kept as observations arrive.

    One object for the three finite-domain caches of the package (module docstring):
    the exact model's ICM eigen route and its general route, and the Nystrom sketch.
    Built by the models' ``track_candidates``, which fill and update it; what a user
    reads is ``points``, ``locate`` and, on the general route, ``task_moments``.

    Attributes:
        domain: The ``track_candidates`` argument (tracked again after a rebuild).
        points: ``N x d`` candidate points (one domain per task: the tasks' arms one
            after the other).
        max_entries: The most entries the tracking may keep.
        offsets: ``None`` (every task at every point) or the ``n + 1`` boundaries of
            each task's arms in ``points`` (one domain per task).
        prior: Prior (co)variances at the candidates: ``N x 1 x 1`` (``k(p, p)``, exact
            eigen route), ``N`` (sketch), or ``K / b x b x b`` blocks of the columns
            (general route: ``b = n`` for every task at every point, else 1).
        mean: What the means are read from: ``N x n`` sums in the eigen basis (exact
            eigen route), ``N x n`` means (sketch) or ``K`` column sums (general).
        solves: ``V`` (exact model; ``None`` for the sketch).
        second: ``r x N`` sums ``sum_s V_g[s, p]^2`` (eigen route) or ``K / b x b x
            b`` blocks ``V[:, p]^T V[:, p]`` (general); ``None`` for the sketch.
        gram: ``K(D, D)`` of the candidates (eigen routes; ``None`` if not kept).
        observed: The candidate of each observation (long): the point of each row
            (sketch), the column of each scalar observation (general route; ``None``
            once an observation was not at a column).
        counts, sums, components: The sketch's observations per point, their summed
            rotated targets (``N x n``) and eq. (8) before the max (``N x n``).
        information_gain: ``1/2 log det(I + Lambda^{-1/2} G_t Lambda^{-1/2})`` by the
            chain rule (general route; ``None`` once an update was not a scalar one).
        prior_mean: The model's constant prior mean per task (general route).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> domain = FiniteDomain(torch.linspace(0, 1, 5, dtype=torch.float64).unsqueeze(-1))
        >>> X = torch.zeros(0, 1, dtype=torch.float64)
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> model = VectorValuedGP(X, X, RBFKernel(), B, 0.1,
        ...                        train_tasks=torch.zeros(0, dtype=torch.long))
        >>> model.track_candidates([domain, domain])  # the arms of each task
        True
        >>> _ = model.append_observations(domain.points[2:3], torch.ones(1, 1),
        ...                               train_tasks=torch.tensor([1]))
        >>> mean, variance = model.candidates.task_moments(0)  # task 0 at its 5 arms
        >>> mean.shape, bool(variance[2] < variance[0])
        (torch.Size([5]), True)
    """

    def __init__(
        self,
        domain: CandidateDomain,
        points: Tensor,
        max_entries: int,
        offsets: list[int] | None = None,
    ) -> None:
        self.domain = domain
        self.points = points
        self.max_entries = max_entries
        self.offsets = offsets
        self.prior: Tensor | None = None
        self.mean: Tensor | None = None
        self.solves: CandidateSolves | None = None
        self.second: Tensor | None = None
        self.gram: Tensor | None = None
        self.observed: Tensor | None = None
        self.counts: Tensor | None = None
        self.sums: Tensor | None = None
        self.components: Tensor | None = None
        self.information_gain: float | None = None
        self.prior_mean: Tensor | None = None  # the model's c (general route)
        # the general route's columns (point, task) and the distinct points
        self.num_tasks = 0
        self.column_point: Tensor | None = None
        self.column_task: Tensor | None = None
        self.unique_points: Tensor | None = None
        self.point_of_column: Tensor | None = None
        self.sample_roots: tuple[Tensor, Tensor] | None = None  # candidate_samples
        self._rows: RowIndex | None = None  # the lookup of points (_row_index)

    # ------------------------------------------------------------------ lookups
    def locate(self, X: Tensor) -> Tensor | None:
        """The candidates equal to the query points ``X`` (``b x 1 x d``): ``b`` indices
        into ``points``, or ``None`` (also for another shape, ``q > 1``, ``X`` that
        requires a gradient, or one domain per task: such queries take the plain route).
        """
        if self.offsets is not None or X.dim() != 3 or X.shape[-2] != 1 or X.requires_grad:
            return None
        if X.shape[-1] != self.points.shape[-1] or X.dtype != self.points.dtype:
            return None
        return self._row_index().find(X[:, 0, :])

    def locate_rows(self, X: Tensor) -> Tensor | None:
        """The candidates equal to the rows of ``X`` (``k x d``), or ``None``."""
        return self._row_index().find(X)

    def _row_index(self) -> RowIndex:
        """The lookup of ``points`` (rebuilt when they were moved)."""
        index = self._rows
        if index is None or index.points is not self.points:
            self._rows = index = RowIndex(self.points)
        return index

    def locate_columns(self, X: Tensor, tasks: Tensor) -> Tensor | None:
        """The columns of the scalar observations ``(X_j, tasks_j)`` (general route), or
        ``None`` if one of them is not a column."""
        if self.offsets is None:
            index = self._row_index().find(X)
            return None if index is None else index * self.num_tasks + tasks
        found = []
        for x, task in zip(X, tasks.tolist()):
            start, stop = self.offsets[task], self.offsets[task + 1]
            index = find_rows(self.points[start:stop], x)
            if index is None:
                return None
            found.append(index + start)
        return torch.cat(found) if found else tasks.new_zeros(0)

    def task_columns(self, task: int) -> slice | Tensor:
        """The columns of ``task`` (general route), in the order of its points."""
        if self.column_task is None:
            raise UnsupportedError("task_columns needs the general route's columns")
        if not 0 <= task < self.num_tasks:
            raise ValueError(f"task must lie in [0, {self.num_tasks - 1}], got {task}")
        if self.offsets is not None:
            return slice(self.offsets[task], self.offsets[task + 1])
        device = self.points.device
        return torch.arange(self.points.shape[0], device=device) * self.num_tasks + task

    # ---------------------------------------------------------- general route
    def set_columns(self, num_tasks: int) -> None:
        """Lay out the general route's columns: ``p n + i`` for every task ``i`` at
        every point ``p``, or the arms of each task one after the other."""
        device, N = self.points.device, self.points.shape[0]
        self.num_tasks = num_tasks
        if self.offsets is None:
            self.column_point = torch.arange(N, device=device).repeat_interleave(num_tasks)
            self.column_task = torch.arange(num_tasks, device=device).repeat(N)
        else:
            sizes = torch.tensor(
                [b - a for a, b in zip(self.offsets, self.offsets[1:])], device=device
            )
            self.column_point = torch.arange(N, device=device)
            self.column_task = torch.repeat_interleave(
                torch.arange(num_tasks, device=device), sizes
            )
        # distinct points: each data kernel is evaluated once per point
        self.unique_points, inverse = torch.unique(self.points, dim=0, return_inverse=True)
        self.point_of_column = inverse[self.column_point]

    @property
    def block(self) -> int:
        """Columns per block of ``prior`` / ``second``: ``n`` (every task at each
        point) or 1 (one domain per task)."""
        return self.num_tasks if self.offsets is None else 1

    @property
    def num_columns(self) -> int:
        """``K``, the general route's columns."""
        return 0 if self.column_point is None else int(self.column_point.numel())

    def column_prior(self, kernels: Sequence, task_covariances: Tensor) -> Tensor:
        """The prior blocks of the columns, ``K / b x b x b``: ``sum_j k_j(p, p) B_j``
        per point, or ``sum_j B_j[i, i] k_j(x, x)`` per arm."""
        diagonals = [k(self.points, self.points, diag=True).to(self.points) for k in kernels]
        for values in diagonals:
            check_kernel_values(values, self.points, "points")
        if self.offsets is None:
            blocks = [d[:, None, None] * B for d, B in zip(diagonals, task_covariances)]
        else:
            blocks = [
                B.diagonal()[self.column_task] * d[self.column_point]
                for d, B in zip(diagonals, task_covariances)
            ]
        total = blocks[0]
        for term in blocks[1:]:
            total = total + term
        return total.reshape(-1, self.block, self.block)

    def column_cross(self, kernels: Sequence, task_covariances: Tensor, X: Tensor, tasks: Tensor):
        """``Gamma(X_j, x_c)[tasks_j, i_c]`` between scalar observations and the
        columns: ``m x K``, each data kernel evaluated at the distinct points."""
        terms = []
        for kernel, B in zip(kernels, task_covariances):
            values = kernel(X, self.unique_points).to_dense().to(self.points)
            terms.append(B[tasks][:, self.column_task] * values[:, self.point_of_column])
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def column_variances(self, columns: slice | int | Tensor = slice(None)) -> Tensor:
        """The posterior variances of the columns ``columns`` (default all ``K``; not
        clamped)."""
        prior = self.prior.diagonal(dim1=-2, dim2=-1).reshape(-1)
        return prior[columns] - self.second.diagonal(dim1=-2, dim2=-1).reshape(-1)[columns]

    def observe(
        self,
        factor: GrowingCholesky,
        forward: Tensor,
        column: int,
        target: float,
        noise: float,
        cross: Tensor,
    ) -> Tensor:
        r"""Condition on one scalar observation at ``column`` (paper 001, eqs. (3)-(4)):
        border ``factor`` by ``[w^T, l]``, ``w = V[:, c]``, ``l = sqrt(sigma_t^2(c) +
        lambda)``, add the row ``(C - w^T V) / l`` to ``V`` and the chain rule's
        increment ``1/2 log(1 + sigma_t^2(c) / lambda)`` to ``information_gain``.

        Args:
            factor: The model's factor of ``G_t + Lambda`` (``t`` rows), bordered here.
            forward: ``L^{-1} (y - c)``, ``t``.
            column: The observation's column.
            target: ``y - c`` of the observation.
            noise: Its noise variance ``lambda``.
            cross: ``Gamma`` between the observation and every column, ``K``.

        Returns:
            The new entry of ``L^{-1} (y - c)`` (0-d).
        """
        V = self.solves.values  # t x K
        w = V[:, column]  # L^{-1} G(obs, c)
        variance = self.column_variances(column).clamp_min(0.0)
        pivot = torch.sqrt(variance + noise)
        row = (cross - w @ V) / pivot
        value = (target - w @ forward) / pivot
        factor.append_factor_rows(w.unsqueeze(0), pivot.reshape(1, 1))
        self.solves.append(row.unsqueeze(0))
        self.mean += row * value
        blocks = row.reshape(-1, self.block)
        self.second += blocks.unsqueeze(-1) * blocks.unsqueeze(-2)
        if self.information_gain is not None:
            self.information_gain += 0.5 * math.log1p(float(variance) / noise)
        if self.observed is not None:
            self.observed = torch.cat([self.observed, self.observed.new_tensor([column])])
        return value

    def task_moments(self, task: int) -> tuple[Tensor, Tensor]:
        """The posterior mean and variance (clamped at 0) of task ``task`` at its
        candidates (general route): two tensors of its number of points.

        Raises:
            UnsupportedError: Off the general route (the eigen routes keep the points'
                moments in the eigen basis: query ``model.posterior`` there).
            ValueError: For a task out of range.
        """
        columns = self.task_columns(task)
        mean, constant = self.mean[columns], float(self.prior_mean[task])
        if constant != 0.0:
            mean = mean + constant
        return mean, self.column_variances(columns).clamp_min(0.0)

    def block_moments(self, index: Tensor, prior_mean: Tensor) -> tuple[Tensor, Tensor]:
        """General route, every task at every point: the moments at the points
        ``index`` (``b``): mean ``b x 1 x n`` and covariance ``b x n x n``."""
        n = self.num_tasks
        mean = self.mean.reshape(-1, n)[index] + prior_mean
        return mean.unsqueeze(-2), self.prior[index] - self.second[index]

    # ------------------------------------------------------------ eigen routes
    def accumulate(self, rows: Tensor, forward_rows: Tensor, group_of: Tensor | None) -> None:
        """Add new rows of ``V`` (``rows``) and of ``L^{-1} (Y - c)``
        (``forward_rows``) to the sums the exact model's moments are read from.

        Eigen route (``rows``: ``r x m x N``, ``forward_rows``: ``m x n``, ``group_of``:
        the group of each direction): ``second[g, p] += sum_s V_g[s, p]^2`` and
        ``mean[p, i] += sum_s V_g(i)[s, p] (L_g(i)^{-1} Y^i)_s``. General route
        (``rows``: ``m x K``, ``forward_rows``: ``m``): ``mean += (L^{-1} y)^T V`` and
        the blocks ``second[p] += V[:, p]^T V[:, p]``.
        """
        if rows.shape[-2] == 0:
            return
        if group_of is not None:
            self.second += rows.square().sum(-2)
            per_group = torch.einsum("rsp,si->rpi", rows, forward_rows)  # r x N x n
            index = group_of.view(1, 1, -1).expand(1, per_group.shape[-2], -1)
            self.mean += per_group.gather(0, index).squeeze(0)
            return
        self.mean += forward_rows @ rows
        blocks = rows.reshape(rows.shape[0], -1, self.block)
        self.second += torch.einsum("spi,spj->pij", blocks, blocks)

    def eigen_moments(
        self, index: Tensor, xi: Tensor, U: Tensor, group_of: Tensor, prior_mean: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Exact eigen route: the moments at the candidates ``index`` (``b``) from the
        kept sums, ``O(b n^2)``: mean ``b x 1 x n`` and covariance ``b x n x n``
        (paper 000, eqs. (5)-(6), mapped back by ``U``)."""
        prior = self.prior[index]
        mean = self.mean[index]  # b x n
        quad = self.second[:, index][group_of].transpose(0, 1)  # b x n
        component = xi * (prior.reshape(-1, 1) - xi * quad)  # b x n, eq. (6) before the max
        mean = (mean * xi) @ U.transpose(0, 1) + prior_mean
        covariance = (U * component.unsqueeze(-2)) @ U.transpose(0, 1)  # b x n x n
        return mean.unsqueeze(-2), covariance

    def sketch_moments(self, index: Tensor, U: Tensor) -> tuple[Tensor, Tensor]:
        """Sketch: the kept moments at the candidates ``index`` (``b``): mean ``b x 1 x
        n`` and covariance ``U diag(components) U^T`` (``b x n x n``)."""
        component = self.components[index]  # b x n
        covariance = (U * component.unsqueeze(-2)) @ U.transpose(0, 1)  # b x n x n
        return self.mean[index].unsqueeze(-2), covariance

    def record(self, index: Tensor, rotated: Tensor) -> None:
        """Sketch: count new rows at their candidates ``index`` and add their rotated
        targets ``rotated`` (``k x n``) to the candidates' sums."""
        self.observed = torch.cat([self.observed, index])
        self.counts = self.counts.index_add(
            0, index, torch.ones_like(index, dtype=self.counts.dtype)
        )
        self.sums = self.sums.index_add(0, index, rotated)

    # ------------------------------------------------------------------ moving
    def apply(self, fn: Callable[[Tensor], Tensor]) -> None:
        """Apply ``fn`` to every tensor kept (``.to()`` of the model that holds it)."""
        for name, value in vars(self).items():
            if isinstance(value, Tensor) and name != "domain":
                setattr(self, name, fn(value))
        if self.solves is not None:
            self.solves.buffer = fn(self.solves.buffer)
        self.sample_roots = None
