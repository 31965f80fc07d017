r"""The exact posterior's general route: the Gram matrix of the scalar observations.

For sums of separable kernels ``sum_j k_j(x, x') B_j`` and task-indexed data (paper 001)
the ``M x M`` Gram matrix ``G_t + Lambda`` of the ``M`` scalar observations ``(x, i)`` is
factorized (``GrowingCholesky``; each observation's own noise variance on the diagonal)
and ``mu_t(x) = c + G_t(x)^T (G_t + Lambda)^{-1} (Y_t - c)``, ``Gamma_t(x, x') = Gamma(x,
x') - G_t(x)^T (G_t + Lambda)^{-1} G_t(x')`` (paper 000, eq. (1); paper 001, eqs. (3)-(4)).

At a finite candidate set (``CandidatePosterior``) the candidates are scalar columns
``(x, i)``: every task at every point of one domain, or each task's arms. A scalar
observation at a column is bordered onto the factor from the kept variance
(``CandidatePosterior.observe``: ``O(t K)``, no solve, the chain rule's information gain
increment); other observations go through one block update and extend ``V``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_mtucb.models.candidate_posterior import CandidatePosterior, CandidateSolves
from botorch_mtucb.utils.checks import check_kernel_values
from botorch_mtucb.utils.linalg import GrowingCholesky


class ExactGeneralRoute:
    """The general route of ``VectorValuedGP`` (a mixin of the model: its kernel, data,
    noise, factor and candidates); the model takes it unless ``uses_eigen_route``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.models.general_route import ExactGeneralRoute
        >>> X = torch.rand(3, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X, RBFKernel(), torch.eye(2), 0.1, torch.tensor([0, 1, 1]))
        >>> isinstance(model, ExactGeneralRoute), model.uses_eigen_route, model._factor.size
        (True, False, 3)
    """

    def _factorize_general(self) -> None:
        obs_X, obs_tasks, obs_y = self._scalar_observations(
            self.train_X, self.train_Y, self.train_tasks
        )
        self._obs_X, self._obs_tasks, self._obs_y = obs_X, obs_tasks, obs_y
        gram = self.kernel.observation_covariance(obs_X, obs_tasks, obs_X, obs_tasks)
        check_kernel_values(gram, self.train_X, "train_X")
        gram = gram + torch.diag(self._observation_noise(obs_tasks))  # G_t + Lambda
        self._factor = GrowingCholesky(gram, regularization=self.regularization)
        centered = obs_y - self.prior_mean[obs_tasks]
        self._forward_y = self._factor.solve(centered.unsqueeze(-1)).squeeze(-1)  # L^{-1} (y - c)

    def _general_mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        batch, q, n = X.shape[:-2], X.shape[-2], self.num_tasks
        prior = self.kernel.full_covariance(X, X).reshape(*batch, q * n, q * n)
        if self._obs_y.numel() == 0:
            return self._general_moments(None, prior, batch, q)
        solved = self._factor.solve(self._general_columns(X))  # L^{-1} G_t(x)
        return self._general_moments(solved, prior, batch, q)

    def _task_moments(self, X: Tensor, tasks: Tensor) -> tuple[Tensor, Tensor] | None:
        """Moments of the ``h`` tasks ``tasks`` alone: ``G_t`` of ``(x, i)`` for those
        tasks only, ``M x (B q h)`` (a ``1 / n`` share of the solve for one task)."""
        if self._use_icm or self._candidates is not None:
            return None
        batch, q, h = X.shape[:-2], X.shape[-2], tasks.numel()
        prior = self.kernel.full_covariance(X, X)[..., tasks, :, :][..., tasks]
        prior = prior.reshape(*batch, q * h, q * h)
        if self._obs_y.numel() == 0:
            return self._general_moments(None, prior, batch, q, tasks)
        points, point_tasks = X.repeat_interleave(h, -2), tasks.repeat(q)  # (x_a, i) rows
        cross = self.kernel.observation_covariance(
            points, point_tasks, self._obs_X, self._obs_tasks
        )  # batch x (q h) x M
        solved = self._factor.solve(cross.reshape(-1, self._obs_y.numel()).transpose(0, 1))
        return self._general_moments(solved, prior, batch, q, tasks)

    def _general_columns(self, X: Tensor) -> Tensor:
        """``G_t(x)``: the covariances of the observations with every task at ``X``,
        ``M x (B q n)``."""
        cross = self.kernel.task_block_covariance(X, self._obs_X, self._obs_tasks)  # b x q x n x M
        return cross.reshape(-1, self._obs_y.numel()).transpose(0, 1)

    def _general_moments(
        self,
        solved: Tensor | None,
        prior: Tensor,
        batch: torch.Size,
        q: int,
        tasks: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """Moments from ``L^{-1} G_t(x)`` (``M x (B q n)``; ``None``: no data) and the
        prior covariance ``batch x (q n) x (q n)`` (``n``: the ``h`` tasks ``tasks``)."""
        prior_mean = self.prior_mean if tasks is None else self.prior_mean[tasks]
        n = prior_mean.numel()
        num_obs = self._obs_y.numel()
        if solved is None or num_obs == 0:
            return prior.new_zeros(*batch, q, n) + prior_mean, prior
        mean = (self._forward_y @ solved).reshape(*batch, q, n) + prior_mean
        solved = solved.reshape(num_obs, -1, q * n)  # M x B x (q n)
        if q * n == 1:  # one variance per batch: a column sum, no batch of 1 x 1 products
            reduction = solved.square().sum(0).reshape(*batch, 1, 1)
        else:
            reduction = torch.einsum("mbi,mbj->bij", solved, solved)
            reduction = reduction.reshape(*batch, q * n, q * n)
        return mean, prior - reduction

    def _attach_columns(self, candidates: CandidatePosterior) -> bool:
        """General route: ``V = L^{-1} G(obs, columns)`` (``M x K``), the columns' prior
        blocks, the column of each observation and the information gain so far."""
        candidates.set_columns(self.num_tasks)
        rows, K = self._obs_y.numel(), candidates.num_columns
        if CandidateSolves.initial_capacity(rows) * K > candidates.max_entries:
            return False
        kernels, covariances = self.kernel.kernels, self.kernel.task_covariances
        prior = candidates.column_prior(kernels, covariances)
        if rows:
            cross = candidates.column_cross(kernels, covariances, self._obs_X, self._obs_tasks)
            check_kernel_values(cross, candidates.points, "points")
            values = self._factor.solve(cross)  # M x K
        else:
            values = prior.new_zeros(0, K)
        check_kernel_values(values, candidates.points, "points")
        candidates.information_gain = float(self._core_information_gain())
        candidates.prior_mean = self.prior_mean
        candidates.prior = prior
        candidates.solves = CandidateSolves(values)
        candidates.mean = prior.new_zeros(K)
        candidates.second = torch.zeros_like(prior)
        candidates.observed = candidates.locate_columns(self._obs_X, self._obs_tasks)
        candidates.accumulate(values, self._forward_y, None)
        return True

    def _append_general(self, X: Tensor, Y: Tensor, tasks: Tensor | None) -> None:
        new_X, new_tasks, new_y = self._scalar_observations(X, Y, tasks)
        candidates = self._candidates
        columns = None
        if candidates is not None:
            columns = candidates.locate_columns(new_X, new_tasks)
            if candidates.solves.numel_after(new_y.numel()) > candidates.max_entries:
                self._candidates = columns = None
        if columns is not None:
            self._observe_columns(X, new_X, new_tasks, new_y, columns)
        else:
            self._append_general_rows(X, new_X, new_tasks, new_y)
        self._obs_X = torch.cat([self._obs_X, new_X])
        self._obs_tasks = torch.cat([self._obs_tasks, new_tasks])
        self._obs_y = torch.cat([self._obs_y, new_y])
        self.train_X = torch.cat([self.train_X, X])
        self.train_Y = torch.cat([self.train_Y, Y])
        if tasks is not None:
            self.train_tasks = torch.cat([self.train_tasks, tasks])

    def _observe_columns(
        self, X: Tensor, new_X: Tensor, new_tasks: Tensor, new_y: Tensor, columns: Tensor
    ) -> None:
        """Scalar observations at tracked columns, one at a time
        (``CandidatePosterior.observe``): no solve, no Gram block."""
        candidates = self._candidates
        kernels, covariances = self.kernel.kernels, self.kernel.task_covariances
        cross = candidates.column_cross(kernels, covariances, new_X, new_tasks)  # m x K
        check_kernel_values(cross, X, "X")  # before any state changes
        centered = (new_y - self.prior_mean[new_tasks]).tolist()
        noise = self._observation_noise(new_tasks).tolist()
        forward = self._forward_y
        for j, column in enumerate(columns.tolist()):
            value = candidates.observe(
                self._factor, forward, column, centered[j], noise[j], cross[j]
            )
            forward = torch.cat([forward, value.reshape(1)])
        self._forward_y = forward

    def _append_general_rows(
        self, X: Tensor, new_X: Tensor, new_tasks: Tensor, new_y: Tensor
    ) -> None:
        """Scalar observations bordered onto the factor as one block (``O(t^2 m)``);
        tracked columns extended by ``L_S^{-1} (C - W V)``."""
        new_block = self.kernel.observation_covariance(new_X, new_tasks, new_X, new_tasks)
        new_block = new_block + torch.diag(self._observation_noise(new_tasks))
        check_kernel_values(new_block, X, "X")
        cross = self.kernel.observation_covariance(self._obs_X, self._obs_tasks, new_X, new_tasks)
        check_kernel_values(cross, X, "X")
        self._factor.append(cross, new_block)
        candidates = self._candidates
        if candidates is not None:
            kernels, covariances = self.kernel.kernels, self.kernel.task_covariances
            columns = candidates.column_cross(kernels, covariances, new_X, new_tasks)  # m x K
            candidates.solves.extend(self._factor, columns)
            candidates.information_gain = candidates.observed = None  # not kept past this
        num_obs = self._forward_y.numel()
        centered = (new_y - self.prior_mean[new_tasks]).unsqueeze(-1)
        self._forward_y = self._extend_forward(self._forward_y.unsqueeze(-1), centered)
        self._forward_y = self._forward_y.squeeze(-1)
        if candidates is not None:
            solves = candidates.solves
            candidates.accumulate(solves.values[num_obs:], self._forward_y[num_obs:], None)
