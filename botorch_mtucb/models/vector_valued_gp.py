"""The exact posterior of a zero-mean multi-task GP with a fixed multi-task kernel.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 3.1: vector-valued kernel ridge
regression, mu_t(x) = G_t(x)^T (G_t + eta I)^{-1} Y_t and eq. (1),
Gamma_t(x, x') = Gamma(x, x') - G_t(x)^T (G_t + eta I)^{-1} G_t(x'); Section 3.3 and
Appendix A (eqs. 3-6) for ICM kernels; paper 001, Section 3, for task-indexed data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from botorch.models.model import Model
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.kernels.separable_sum import TaskCovarianceLike
from botorch_mtucb.models.base import FixedKernelMultiTaskModel, eigen_groups
from botorch_mtucb.utils.checks import check_kernel_values
from botorch_mtucb.utils.linalg import GrowingCholesky


class VectorValuedGP(FixedKernelMultiTaskModel):
    r"""Exact multi-task GP posterior with a fixed kernel ``sum_j k_j(x, x') B_j``.

    The posterior mean and covariance are the vector-valued kernel ridge regression
    estimate and its uncertainty (paper 000, Section 3.1, eq. (1)):

    .. math::
        \mu_t(x) = G_t(x)^\top (G_t + \eta I)^{-1} Y_t, \qquad
        \Gamma_t(x, x') = \Gamma(x, x') - G_t(x)^\top (G_t + \eta I)^{-1} G_t(x').

    The prior mean is zero and the kernel is fixed (its parameters are frozen). The
    noise variance ``eta`` is the papers' regularization; no outcome transform is applied.

    Two kinds of data:

    * full-vector (paper 000): ``train_Y`` is ``N x n``, every task is observed at each
      row of ``train_X``;
    * task-indexed (paper 001): ``train_Y`` is ``N x 1`` and ``train_tasks`` gives the
      task (``0 .. n-1``) of each row.

    With a single separable (ICM) term and full-vector data the model uses the
    eigen-decomposition ``B = sum_i xi_i u_i u_i^T`` of paper 000, Section 3.3 /
    Appendix A: outputs are rotated onto the eigenvectors and the problem splits into
    independent scalar problems with matrices ``xi_i K_t + eta I`` (eq. (3)-(4)), one per
    distinct positive eigenvalue (components with ``xi_i = 0`` have zero mean and
    variance). Each of these is kept as a Cholesky factor rather than through one
    eigen-decomposition of ``K_t`` (as in Appendix A), because a Cholesky factor can be
    extended in ``O(t^2)`` when an observation arrives while an eigen-decomposition of
    ``K_t`` would have to be recomputed; the numbers are the same. Otherwise the full
    ``M x M`` Gram matrix of the ``M`` scalar observations is factorized.

    ``condition_on_observations`` / ``append_observations`` extend these Cholesky
    factors by a Schur-complement block written in place into a preallocated buffer
    (``GrowingCholesky``: ``O(t^2)`` per new row, no refactorization, no copy of the
    factor). The model keeps ``L^{-1} Y`` (also extended in place) instead of
    ``(G_t + eta I)^{-1} Y_t``: the mean ``G_t(x)^T (G_t + eta I)^{-1} Y_t`` is
    ``(L^{-1} G_t(x))^T (L^{-1} Y_t)``, and ``L^{-1} G_t(x)`` is needed for the
    covariance anyway.

    **BoTorch's model API.** ``condition_on_observations`` takes batches and
    per-observation ``noise`` (honoured exactly by Gaussian conditioning of the
    posterior, ``models.conditioning``; the in-place route above whenever the rows are
    unbatched with noise ``eta``), ``fantasize`` makes ``num_fantasies x batch`` models
    (so BoTorch's ``qKnowledgeGradient`` and ``qNegIntegratedPosteriorVariance`` run),
    ``subset_output`` keeps all observations and restricts the outputs, and ``.to()``
    moves and casts every factor and buffer. ``VectorValuedGP.from_model`` converts a
    fitted BoTorch model.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> train_X = torch.linspace(0, 1, 5, dtype=torch.float64).unsqueeze(-1)
        >>> train_Y = torch.cat([torch.sin(6 * train_X), torch.cos(6 * train_X)], -1)  # 5 x 2
        >>> model = VectorValuedGP(train_X, train_Y, RBFKernel(), B, regularization=0.1)
        >>> posterior = model.posterior(torch.rand(3, 1, dtype=torch.float64))
        >>> posterior.mean.shape, posterior.distribution.covariance_matrix.shape
        (torch.Size([3, 2]), torch.Size([6, 6]))
        >>> tasks = torch.tensor([0, 1, 1])  # task-indexed data (paper 001)
        >>> single = VectorValuedGP(train_X[:3], train_Y[:3, :1], RBFKernel(), B, 0.1, tasks)
        >>> single.posterior(train_X).mean.shape
        torch.Size([5, 2])
    """

    _num_outputs: int
    # Tensors of the posterior state, registered as buffers so that ``.to()``,
    # ``state_dict`` and ``deepcopy`` carry them.
    _STATE_BUFFERS = (
        "train_X",
        "train_Y",
        "train_tasks",
        "_obs_X",
        "_obs_tasks",
        "_obs_y",
        "_forward_y",
        "_rotated_Y",
        "_xi",
        "_U",
        "_group_of",
        "_group_xi",
    )

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        regularization: float,
        train_tasks: Tensor | None = None,
    ) -> None:
        r"""Build the posterior from data.

        Args:
            train_X: ``N x d`` inputs (``N`` may be 0: the prior).
            train_Y: ``N x n`` outputs (full-vector data) or ``N x 1`` outputs with
                ``train_tasks`` (task-indexed data).
            data_kernel: A GPyTorch kernel on ``x``, or a list of them.
            task_covariance: An ``n x n`` PSD tensor or a task-kernel module (e.g.
                ``UniformSimilarityTaskKernel``), or a list matching ``data_kernel``.
                A list gives a sum of separable kernels; ``[e_i e_i^T]`` with per-task
                kernels gives independent tasks.
            regularization: The regularization / noise variance ``eta > 0``.
            train_tasks: ``N`` (or ``N x 1``) task indices in ``[0, n - 1]`` for
                task-indexed data; ``None`` for full-vector data.

        Raises:
            TypeError: For a non-tensor input, a non-kernel ``data_kernel``, a bad
                ``task_covariance`` type, half-precision ``train_X`` / ``train_Y``
                (float32 and float64 are accepted) or boolean ``train_tasks``.
            ValueError: For NaN/inf in ``train_X`` / ``train_Y``, inputs so large that
                the kernel overflows (``1e300 * X``), mismatched rows, a wrong number
                of output columns, ``regularization <= 0``, a task covariance that is
                not PSD or of the wrong size, or a task index out of range or not a
                whole number.
        """
        super().__init__()
        for name in self._STATE_BUFFERS:
            self.register_buffer(name, None)
        train_X, train_Y, train_tasks = self._setup(
            train_X, train_Y, data_kernel, task_covariance, regularization, train_tasks
        )
        self.train_X = train_X.clone()
        self.train_Y = train_Y.clone()
        self.train_tasks = train_tasks
        with torch.no_grad():
            if self._use_icm:
                self._init_eigen_system()
                self._factorize_icm()
            else:
                self._factorize_general()

    @classmethod
    def from_model(cls, model: Model) -> VectorValuedGP:
        """A ``VectorValuedGP`` with the kernels and noise of a fitted BoTorch model.

        A thin wrapper of ``botorch_mtucb.models.conversion.vector_valued_gp_from_model``
        (see there for the models accepted, the zero prior mean and the noise used).

        Example:
            >>> import torch
            >>> from botorch.models import SingleTaskGP
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.rand(6, 1, dtype=torch.float64)
            >>> gp = SingleTaskGP(X, torch.cat([X.sin(), X.cos()], -1), outcome_transform=None)
            >>> VectorValuedGP.from_model(gp).num_outputs
            2
        """
        from botorch_mtucb.models.conversion import vector_valued_gp_from_model

        return vector_valued_gp_from_model(model)

    # ------------------------------------------------------------------ properties
    @property
    def num_observations(self) -> int:
        """The number of scalar observations ``M`` (``N n`` for full-vector data) of the
        model's own data (not those of a batched ``condition_on_observations``)."""
        if self._full_vector:
            return self.train_Y.numel()
        return self.train_Y.shape[0]

    # ------------------------------------------------------------ factorizations
    def _scalar_observations(self, X: Tensor, Y: Tensor, tasks: Tensor | None):
        """Flatten rows into scalar observations ``(x, task, y)``."""
        if tasks is None:
            n = self.num_tasks
            obs_X = X.repeat_interleave(n, dim=0)
            obs_tasks = torch.arange(n, device=X.device).repeat(X.shape[0])
            return obs_X, obs_tasks, Y.reshape(-1)
        return X, tasks, Y.reshape(-1)

    def _factorize_general(self) -> None:
        obs_X, obs_tasks, obs_y = self._scalar_observations(
            self.train_X, self.train_Y, self.train_tasks
        )
        self._obs_X, self._obs_tasks, self._obs_y = obs_X, obs_tasks, obs_y
        gram = self.kernel.observation_covariance(obs_X, obs_tasks, obs_X, obs_tasks)
        check_kernel_values(gram, self.train_X, "train_X")
        gram = gram + self.regularization * torch.eye(
            gram.shape[-1], dtype=gram.dtype, device=gram.device
        )
        self._factor = GrowingCholesky(gram, regularization=self.regularization)
        self._forward_y = self._factor.solve(obs_y.unsqueeze(-1)).squeeze(-1)  # L^{-1} y

    def _init_eigen_system(self) -> None:
        xi, U, group_of, group_xi = eigen_groups(self.kernel.task_covariances[0])
        self._xi, self._U, self._group_of, self._group_xi = xi, U, group_of, group_xi

    def _factorize_icm(self) -> None:
        kernel = self.kernel.kernels[0]
        t = self.train_X.shape[0]
        gram = kernel(self.train_X, self.train_X).to_dense() if t else self.train_X.new_zeros(0, 0)
        check_kernel_values(gram, self.train_X, "train_X")
        eye = torch.eye(t, dtype=gram.dtype, device=gram.device)
        scaled = self._group_xi[:, None, None] * gram + self.regularization * eye  # r x t x t
        self._factor = GrowingCholesky(scaled, regularization=self.regularization)
        self._rotated_Y = self.train_Y @ self._U  # t x n, the Y_t^i of Appendix A
        # Component i uses the factor of its eigenvalue group: L_g(i)^{-1} Y_t^i.
        solved = self._factor.solve(self._rotated_Y.expand(self._factor.buffer.shape[0], t, -1))
        self._forward_y = self._pick_groups(solved)  # t x n

    def _pick_groups(self, per_group: Tensor) -> Tensor:
        """From ``r x t x n`` (every group, every component) keep component ``i``'s own
        group ``g(i)``: ``t x n``."""
        index = self._group_of.view(1, 1, -1).expand(1, per_group.shape[-2], -1)
        return per_group.gather(0, index).squeeze(0)

    def _apply(self, fn, recurse: bool = True):
        # The factor lives outside the module's buffers: move / cast it as well.
        super()._apply(fn, recurse)
        factor = getattr(self, "_factor", None)
        if factor is not None:
            factor.buffer = fn(factor.buffer)
        return self

    # ------------------------------------------------------------------ posterior
    def _mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x n`` and covariance ``batch x (q n) x (q n)`` (interleaved)."""
        if self._use_icm:
            return self._icm_mean_and_covariance(X)
        return self._general_mean_and_covariance(X)

    def _general_mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        batch, q, n = X.shape[:-2], X.shape[-2], self.num_tasks
        prior = self.kernel.full_covariance(X, X).reshape(*batch, q * n, q * n)
        num_obs = self._obs_y.numel()
        if num_obs == 0:
            return X.new_zeros(*batch, q, n), prior
        cross = self.kernel.task_block_covariance(X, self._obs_X, self._obs_tasks)  # b x q x n x M
        columns = cross.reshape(-1, num_obs).transpose(0, 1)  # M x (B q n)
        solved = self._factor.solve(columns)  # L^{-1} G_t(x)
        mean = (self._forward_y @ solved).reshape(*batch, q, n)
        solved = solved.reshape(num_obs, -1, q * n)  # M x B x (q n)
        reduction = torch.einsum("mbi,mbj->bij", solved, solved).reshape(*batch, q * n, q * n)
        return mean, prior - reduction

    def _icm_mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        kernel = self.kernel.kernels[0]
        batch, q, n = X.shape[:-2], X.shape[-2], self.num_tasks
        t = self.train_X.shape[0]
        train_X = self.train_X.expand(*batch, t, self.train_X.shape[-1])
        prior_k = kernel(X, X).to_dense()  # b x q x q
        xi, U = self._xi, self._U
        if t == 0:
            quad = prior_k.new_zeros(*batch, n, q, q)
            mean_rotated = X.new_zeros(*batch, q, n)
        else:
            k_x = kernel(X, train_X).to_dense()  # b x q x t
            columns = k_x.reshape(-1, t).transpose(0, 1)  # t x (B q)
            solved = self._factor.solve(columns)  # r x t x (B q): L_g^{-1} k_t(x)
            # eq. (5): xi_i k_t(x)^T (xi_i K_t + eta I)^{-1} Y_t^i, with L_g(i)^{-1} Y_t^i kept
            mean_rotated = torch.einsum("rtp,ti->rpi", solved, self._forward_y)  # r x Bq x n
            mean_rotated = self._pick_groups(mean_rotated) * xi  # Bq x n
            mean_rotated = mean_rotated.reshape(*batch, q, n)
            solved = solved.reshape(solved.shape[0], t, -1, q)  # r x t x B x q
            quad = torch.einsum("rtba,rtbc->brac", solved, solved)  # B x r x q x q
            quad = quad[:, self._group_of].reshape(*batch, n, q, q)
        # eq. (6) before the max: xi_i (k(x, x') - xi_i k_t(x)^T (xi_i K_t + eta I)^{-1} k_t(x'))
        component = xi[:, None, None] * (prior_k.unsqueeze(-3) - xi[:, None, None] * quad)
        mean = mean_rotated @ U.transpose(0, 1)
        covariance = torch.einsum("...iac,ji,ki->...ajck", component, U, U)
        return mean, covariance.reshape(*batch, q * n, q * n)

    # ---------------------------------------------------------- information gain
    def information_gain(self) -> Tensor:
        r"""``1/2 log det(I + G_t / eta)`` over the observations seen (a 0-d tensor).

        Equals ``1/2 sum_s log det(I_n + Gamma_{s-1}(x_s, x_s) / eta)`` (paper 000,
        Theorem 2 and Lemma 4): the mutual information between ``f`` and the data.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X, Y = torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)
            >>> kernel = LinearKernel().initialize(variance=1.0)
            >>> model = VectorValuedGP(X, Y, kernel, torch.eye(1), regularization=1.0)
            >>> round(float(model.information_gain()), 4)  # 1/2 log(1 + 1 / 1)
            0.3466
        """
        self._require_core("information_gain")
        log_eta = math.log(self.regularization)
        if self._use_icm:
            t = self.train_X.shape[0]
            if t == 0:
                return self.train_Y.new_zeros(())
            half_logdet = self._factor.half_log_det()  # r
            per_component = half_logdet[self._group_of] - 0.5 * t * log_eta
            return (per_component * (self._xi > 0)).sum()
        if self._obs_y.numel() == 0:
            return self._obs_y.new_zeros(())
        half_logdet = self._factor.half_log_det()
        return half_logdet - 0.5 * self._obs_y.numel() * log_eta

    # ----------------------------------------------------------- conditioning
    def append_observations(
        self, X: Tensor, Y: Tensor, train_tasks: Tensor | None = None
    ) -> VectorValuedGP:
        r"""Condition ``self`` on ``(X, Y)`` in place and return it.

        The in-place version of ``condition_on_observations`` for bandit loops (no
        copy of the factorization). Same arguments and errors.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.zeros(0, 1, dtype=torch.float64)  # no data: the prior
            >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> model.append_observations(torch.ones(1, 1), torch.ones(1, 2)).num_observations
            2
        """
        X, Y, tasks = self._check_new_data(X, Y, train_tasks)
        if X.shape[0] == 0:
            return self
        with torch.no_grad():
            if self._use_icm:
                self._append_icm(X, Y)
            else:
                self._append_general(X, Y, tasks)
        return self

    def _append_general(self, X: Tensor, Y: Tensor, tasks: Tensor | None) -> None:
        new_X, new_tasks, new_y = self._scalar_observations(X, Y, tasks)
        new_block = self.kernel.observation_covariance(new_X, new_tasks, new_X, new_tasks)
        new_block = new_block + self.regularization * torch.eye(
            new_block.shape[-1], dtype=new_block.dtype, device=new_block.device
        )
        cross = self.kernel.observation_covariance(self._obs_X, self._obs_tasks, new_X, new_tasks)
        for values in (new_block, cross):
            check_kernel_values(values, X, "X")
        self._factor.append(cross, new_block)
        self._forward_y = self._extend_forward(self._forward_y.unsqueeze(-1), new_y.unsqueeze(-1))
        self._forward_y = self._forward_y.squeeze(-1)
        self._obs_X = torch.cat([self._obs_X, new_X])
        self._obs_tasks = torch.cat([self._obs_tasks, new_tasks])
        self._obs_y = torch.cat([self._obs_y, new_y])
        self.train_X = torch.cat([self.train_X, X])
        self.train_Y = torch.cat([self.train_Y, Y])
        if tasks is not None:
            self.train_tasks = torch.cat([self.train_tasks, tasks])

    def _append_icm(self, X: Tensor, Y: Tensor) -> None:
        kernel = self.kernel.kernels[0]
        xi = self._group_xi[:, None, None]
        eye = torch.eye(X.shape[0], dtype=X.dtype, device=X.device)
        new_block = xi * kernel(X, X).to_dense() + self.regularization * eye  # r x m x m
        t = self.train_X.shape[0]
        cross = xi * kernel(self.train_X, X).to_dense() if t else X.new_zeros(1, 0, X.shape[0])
        for values in (new_block, cross):
            check_kernel_values(values, X, "X")
        self._factor.append(cross.expand(new_block.shape[0], t, -1), new_block)
        rotated = Y @ self._U  # m x n
        r = new_block.shape[0]
        extended = self._extend_forward(
            self._forward_y.expand(r, t, -1), rotated.expand(r, *rotated.shape)
        )  # r x (t + m) x n, only each component's own group is meaningful
        self._forward_y = self._pick_groups(extended)
        self._rotated_Y = torch.cat([self._rotated_Y, rotated])
        self.train_X = torch.cat([self.train_X, X])
        self.train_Y = torch.cat([self.train_Y, Y])

    def _extend_forward(self, forward: Tensor, new_values: Tensor) -> Tensor:
        """Extend ``v = L^{-1} y`` after ``m`` rows were appended to ``L``:
        ``v_new = L_S^{-1} (y_new - W v)`` (``O(t m)``).

        ``forward``: ``batch x t x k``; ``new_values``: ``batch x m x k``.
        """
        t, m = forward.shape[-2], new_values.shape[-2]
        rows = self._factor.factor[..., t : t + m, :]  # batch x m x (t + m): [W, L_S]
        residual = new_values - rows[..., :t] @ forward
        tail = torch.linalg.solve_triangular(rows[..., t:].contiguous(), residual, upper=False)
        return torch.cat([forward, tail], dim=-2)
