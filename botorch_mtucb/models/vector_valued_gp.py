"""The exact posterior of a multi-task GP with a fixed multi-task kernel.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 3.1: vector-valued kernel ridge
regression, mu_t(x) = G_t(x)^T (G_t + eta I)^{-1} Y_t and eq. (1),
Gamma_t(x, x') = Gamma(x, x') - G_t(x)^T (G_t + eta I)^{-1} G_t(x'); Section 3.3 and
Appendix A (eqs. 3-6) for ICM kernels; paper 001, Section 3, for task-indexed data. A
constant prior mean per task and a noise variance per task generalize these exactly
(``FixedKernelMultiTaskModel``: ``c + ...`` and ``Lambda`` in place of ``eta I``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import gpytorch
import torch
from botorch.models.model import Model
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.kernels.separable_sum import TaskCovarianceLike
from botorch_mtucb.models.base import FixedKernelMultiTaskModel, eigen_groups
from botorch_mtucb.models.candidate_posterior import CandidateSolves, match_candidates
from botorch_mtucb.utils.checks import check_kernel_values
from botorch_mtucb.utils.linalg import GrowingCholesky, cholesky_factor

MAX_CANDIDATE_ENTRIES = 2**25  # entries of V kept by track_candidates (256 MiB in float64)


def _eager_kernels():
    """GPyTorch kernels evaluated at once inside the block (no lazy kernel tensors),
    the caller's setting restored after it."""
    return gpytorch.settings.lazily_evaluate_kernels(False)


class VectorValuedGP(FixedKernelMultiTaskModel):
    r"""Exact multi-task GP posterior with a fixed kernel ``sum_j k_j(x, x') B_j``.

    The posterior mean and covariance are the vector-valued kernel ridge regression
    estimate and its uncertainty (paper 000, Section 3.1, eq. (1)):

    .. math::
        \mu_t(x) = G_t(x)^\top (G_t + \eta I)^{-1} Y_t, \qquad
        \Gamma_t(x, x') = \Gamma(x, x') - G_t(x)^\top (G_t + \eta I)^{-1} G_t(x').

    The kernel is fixed (its parameters are frozen). The noise variance ``eta`` is the
    papers' regularization and the prior mean is zero, as the theory assumes, unless
    ``prior_mean`` (a constant ``c_i`` per task) and ``noise_variances`` (``lambda_i``
    per task) are given: then ``mu_t(x) = c + G_t(x)^T (G_t + Lambda)^{-1} (Y_t - c)``
    and ``Lambda`` replaces ``eta I`` (``FixedKernelMultiTaskModel``; how the widths
    treat them: ``confidence.mt_kb_width``). No outcome transform is applied.

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
    ``M x M`` Gram matrix of the ``M`` scalar observations is factorized. With noise
    variances that differ between tasks the eigen route runs on the whitened function
    (task covariance ``S^{-1} B S^{-1}``, one noise level ``eta``; exact, see
    ``FixedKernelMultiTaskModel``) and the general route puts each observation's own
    noise variance on the diagonal.

    ``condition_on_observations`` / ``append_observations`` extend these Cholesky
    factors by a Schur-complement block written in place into a preallocated buffer
    (``GrowingCholesky``: ``O(t^2)`` per new row, no refactorization, no copy of the
    factor). The model keeps ``L^{-1} Y`` (also extended in place) instead of
    ``(G_t + eta I)^{-1} Y_t``: the mean ``G_t(x)^T (G_t + eta I)^{-1} Y_t`` is
    ``(L^{-1} G_t(x))^T (L^{-1} Y_t)``, and ``L^{-1} G_t(x)`` is needed for the
    covariance anyway.

    **Finite candidate sets.** ``track_candidates(points)`` keeps the posterior at a
    fixed set of ``N`` candidates incrementally (``V = L^{-1} G_t(D)`` extended by a row
    per observation: ``O(r t N)`` per round instead of ``O(r t^2 N)`` and ``N t``
    kernel evaluations); paper 000's policies turn it on over a ``FiniteDomain``
    (issue 14, item 1). Kernels are evaluated eagerly inside the model's own calls
    (GPyTorch's ``lazily_evaluate_kernels`` is switched off there and restored after).

    **BoTorch's model API.** ``condition_on_observations`` takes batches and
    per-observation ``noise`` (honoured exactly by Gaussian conditioning of the
    posterior, ``models.conditioning``; the in-place route above whenever the rows are
    unbatched with the model's noise), ``fantasize`` makes ``num_fantasies x batch`` models
    (so BoTorch's ``qKnowledgeGradient`` and ``qNegIntegratedPosteriorVariance`` run),
    ``subset_output`` keeps all observations and restricts the outputs, and ``.to()``
    moves and casts every factor and buffer. ``VectorValuedGP.from_model`` converts a
    fitted BoTorch model (its constant means and per-task noise included).
    ``state_dict`` holds the kernel, the data, ``prior_mean`` and ``noise_variances``;
    ``load_state_dict`` accepts the state of a model of the same structure with any
    number of rows and rebuilds every factor from it.

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
    # The data: persistent buffers (``state_dict``, ``.to()``, ``deepcopy``).
    _DATA_BUFFERS = ("train_X", "train_Y", "train_tasks")
    # What is computed from the kernel, the data and the noise: buffers that ``.to()``
    # and ``deepcopy`` carry but ``state_dict`` leaves out (``load_state_dict``
    # rebuilds them).
    _DERIVED_BUFFERS = (
        "_obs_X",
        "_obs_tasks",
        "_obs_y",
        "_forward_y",
        "_rotated_Y",
        "_xi",
        "_U",
        "_group_of",
        "_group_xi",
        "_U_out",
    )

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        regularization: float | None = None,
        train_tasks: Tensor | None = None,
        *,
        prior_mean: float | Sequence[float] | Tensor | None = None,
        noise_variances: float | Sequence[float] | Tensor | None = None,
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
            regularization: The regularization / noise variance ``eta > 0`` of every
                task (required unless ``noise_variances`` is given).
            train_tasks: ``N`` (or ``N x 1``) task indices in ``[0, n - 1]`` for
                task-indexed data; ``None`` for full-vector data.
            prior_mean: The constant prior mean ``c_i`` of each task: a number or ``n``
                values (default: zero).
            noise_variances: The noise variance ``lambda_i > 0`` of each task's
                observations: a number or ``n`` values, in place of
                ``regularization``; the model's ``regularization`` is then
                ``eta = min_i lambda_i``.

        Raises:
            TypeError: For a non-tensor input, a non-kernel ``data_kernel``, a bad
                ``task_covariance`` type, half-precision ``train_X`` / ``train_Y``
                (float32 and float64 are accepted) or boolean ``train_tasks``.
            ValueError: For NaN/inf in ``train_X`` / ``train_Y``, inputs so large that
                the kernel overflows (``1e300 * X``), mismatched rows, a wrong number
                of output columns, ``regularization <= 0``, a task covariance that is
                not PSD or of the wrong size, or a task index out of range or not a
                whole number; ``prior_mean`` / ``noise_variances`` not finite, not
                ``n`` values or (noise) not ``> 0``; both ``regularization`` and
                ``noise_variances`` given (``TypeError`` for neither).
        """
        super().__init__()
        self._candidates: dict | None = None  # track_candidates
        for name in self._DATA_BUFFERS:
            self.register_buffer(name, None)
        for name in self._DERIVED_BUFFERS:
            self.register_buffer(name, None, persistent=False)
        train_X, train_Y, train_tasks = self._setup(
            train_X,
            train_Y,
            data_kernel,
            task_covariance,
            regularization,
            train_tasks,
            prior_mean=prior_mean,
            noise_variances=noise_variances,
        )
        self.train_X = train_X.clone()
        self.train_Y = train_Y.clone()
        self.train_tasks = train_tasks
        self._rebuild_state()

    def _rebuild_state(self) -> None:
        """Factorize the data from scratch with the current kernel, prior mean and noise
        variances (the constructor, ``load_state_dict``); a tracked candidate set is
        tracked again."""
        candidates = self._candidates
        self._candidates = None
        with torch.no_grad(), _eager_kernels():
            if self._use_icm:
                self._init_eigen_system()
                self._factorize_icm()
            else:
                self._factorize_general()
        if candidates is not None:
            self.track_candidates(candidates["points"], candidates["max_entries"])

    @classmethod
    def from_model(cls, model: Model) -> VectorValuedGP:
        """A ``VectorValuedGP`` with the kernels and noise of a fitted BoTorch model.

        A thin wrapper of ``botorch_mtucb.models.conversion.vector_valued_gp_from_model``
        (see there for the models accepted, the prior mean and the noise carried over).

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
        gram = gram + torch.diag(self._observation_noise(obs_tasks))  # G_t + Lambda
        self._factor = GrowingCholesky(gram, regularization=self.regularization)
        centered = obs_y - self.prior_mean[obs_tasks]
        self._forward_y = self._factor.solve(centered.unsqueeze(-1)).squeeze(-1)  # L^{-1} (y - c)

    def _init_eigen_system(self) -> None:
        """The eigen-system of the whitened task covariance ``S^{-1} B S^{-1}`` (``B``
        itself when the tasks share one noise variance) and ``S U``."""
        B = self._white_task_covariance(self.kernel.task_covariances[0])
        xi, U, group_of, group_xi = eigen_groups(B)
        self._xi, self._U, self._group_of, self._group_xi = xi, U, group_of, group_xi
        self._U_out = self._output_basis(U)

    def _factorize_icm(self) -> None:
        kernel = self.kernel.kernels[0]
        t = self.train_X.shape[0]
        gram = kernel(self.train_X, self.train_X).to_dense() if t else self.train_X.new_zeros(0, 0)
        check_kernel_values(gram, self.train_X, "train_X")
        group_xi = self._group_xi.tolist()

        def fill(block: Tensor, g: int) -> None:  # xi_g K_t + eta I, in place
            block.copy_(gram).mul_(group_xi[g]).diagonal().add_(self.regularization)

        # One group at a time, straight into the factor's buffer (issue 14, item 3).
        self._factor = GrowingCholesky.from_blocks(
            fill, len(group_xi), t, gram, regularization=self.regularization
        )
        self._rotated_Y = self._white_targets(self.train_Y, None) @ self._U  # Y_t^i of App. A
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
        candidates = getattr(self, "_candidates", None)
        if candidates is not None:
            for key in ("points", "prior", "gram", "mean", "second"):
                if candidates[key] is not None:
                    candidates[key] = fn(candidates[key])
            candidates["solves"].apply(fn)
        return self

    # ------------------------------------------------------------------ posterior
    def _mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x n`` and covariance ``batch x (q n) x (q n)`` (interleaved)."""
        candidates = self._candidates
        if candidates is not None:
            index = match_candidates(X, candidates["points"])
            if index is not None:
                return self._candidate_mean_and_covariance(index)
        with _eager_kernels():
            if self._use_icm:
                return self._icm_mean_and_covariance(X)
            return self._general_mean_and_covariance(X)

    def _general_mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        batch, q, n = X.shape[:-2], X.shape[-2], self.num_tasks
        prior = self.kernel.full_covariance(X, X).reshape(*batch, q * n, q * n)
        if self._obs_y.numel() == 0:
            return self._general_moments(None, prior, batch, q)
        solved = self._factor.solve(self._general_columns(X))  # L^{-1} G_t(x)
        return self._general_moments(solved, prior, batch, q)

    def _general_columns(self, X: Tensor) -> Tensor:
        """``G_t(x)``: the covariances of the observations with every task at ``X``,
        ``M x (B q n)``."""
        cross = self.kernel.task_block_covariance(X, self._obs_X, self._obs_tasks)  # b x q x n x M
        return cross.reshape(-1, self._obs_y.numel()).transpose(0, 1)

    def _general_moments(
        self, solved: Tensor | None, prior: Tensor, batch: torch.Size, q: int
    ) -> tuple[Tensor, Tensor]:
        """Moments from ``L^{-1} G_t(x)`` (``M x (B q n)``; ``None``: no data) and the
        prior covariance ``batch x (q n) x (q n)``."""
        n = self.num_tasks
        num_obs = self._obs_y.numel()
        if solved is None or num_obs == 0:
            return prior.new_zeros(*batch, q, n) + self.prior_mean, prior
        mean = (self._forward_y @ solved).reshape(*batch, q, n) + self.prior_mean
        solved = solved.reshape(num_obs, -1, q * n)  # M x B x (q n)
        reduction = torch.einsum("mbi,mbj->bij", solved, solved).reshape(*batch, q * n, q * n)
        return mean, prior - reduction

    def _icm_mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        kernel = self.kernel.kernels[0]
        batch, q = X.shape[:-2], X.shape[-2]
        prior_k = kernel(X, X).to_dense()  # b x q x q
        if self.train_X.shape[0] == 0:
            return self._icm_moments(None, prior_k, batch, q)
        solved = self._factor.solve(self._icm_columns(X))  # r x t x (B q): L_g^{-1} k_t(x)
        return self._icm_moments(solved, prior_k, batch, q)

    def _icm_columns(self, X: Tensor) -> Tensor:
        """``k_t(x)`` for each point of ``X`` (``batch x q x d``): ``t x (B q)``."""
        t = self.train_X.shape[0]
        batch = X.shape[:-2]
        train_X = self.train_X.expand(*batch, t, self.train_X.shape[-1])
        k_x = self.kernel.kernels[0](X, train_X).to_dense()  # b x q x t
        return k_x.reshape(-1, t).transpose(0, 1)

    def _icm_moments(
        self, solved: Tensor | None, prior_k: Tensor, batch: torch.Size, q: int
    ) -> tuple[Tensor, Tensor]:
        """Moments (paper 000, eqs. (5)-(6)) from ``L_g^{-1} k_t(x)`` (``r x t x (B q)``;
        ``None``: no data) and ``k(x, x')`` (``batch x q x q``); mapped back from the
        whitened function by ``c + S U`` (``_U_out``)."""
        n = self.num_tasks
        xi, U = self._xi, self._U_out
        if solved is None:
            quad = prior_k.new_zeros(*batch, n, q, q)
            mean_rotated = prior_k.new_zeros(*batch, q, n)
        else:
            t = solved.shape[-2]
            # eq. (5): xi_i k_t(x)^T (xi_i K_t + eta I)^{-1} Y_t^i, with L_g(i)^{-1} Y_t^i kept
            mean_rotated = torch.einsum("rtp,ti->rpi", solved, self._forward_y)  # r x Bq x n
            mean_rotated = self._pick_groups(mean_rotated) * xi  # Bq x n
            mean_rotated = mean_rotated.reshape(*batch, q, n)
            solved = solved.reshape(solved.shape[0], t, -1, q)  # r x t x B x q
            quad = torch.einsum("rtba,rtbc->brac", solved, solved)  # B x r x q x q
            quad = quad[:, self._group_of].reshape(*batch, n, q, q)
        # eq. (6) before the max: xi_i (k(x, x') - xi_i k_t(x)^T (xi_i K_t + eta I)^{-1} k_t(x'))
        component = xi[:, None, None] * (prior_k.unsqueeze(-3) - xi[:, None, None] * quad)
        mean = mean_rotated @ U.transpose(0, 1) + self.prior_mean
        covariance = torch.einsum("...iac,ji,ki->...ajck", component, U, U)
        return mean, covariance.reshape(*batch, q * n, q * n)

    # ------------------------------------------------------- finite candidate set
    def track_candidates(
        self, points: Tensor | None, max_entries: int = MAX_CANDIDATE_ENTRIES
    ) -> bool:
        r"""Keep the posterior at the fixed candidates ``points`` incrementally.

        On a finite domain ``D`` (``N`` points) a bandit loop asks for the posterior
        at the same points every round. The model then keeps ``V = L^{-1} G_t(D)``
        (``r x t x N`` on the ICM eigen route: one ``L_g^{-1} K(X_t, D)`` per
        eigenvalue group; ``M x N n`` otherwise) and extends it by ``L_S^{-1} (C - W V)``
        whenever ``append_observations`` borders the factor ``L`` by ``[W, L_S]``
        (``models.candidate_posterior``): an update costs ``O(r t N)`` and ``N``
        kernel evaluations per new input, and a posterior at ``D`` (or at any batch of
        ``b x 1 x d`` candidates, e.g. one chosen point) costs ``O(r t N)`` with no
        kernel evaluation, instead of ``O(r t^2 N)`` and ``N t`` kernel evaluations.
        On the eigen route a new input that is a candidate also gets its factor row
        from ``V`` (``W_g = xi_g V_g[:, j]^T``, no ``O(t^2)`` solve). The numbers are
        those of the plain posterior to round-off (issue 14, item 1); any other query
        (``q > 1``, other points, gradients) takes the plain route.

        The tracking stops (and the method returns ``False``) when ``V`` would hold
        more than ``max_entries`` entries, now or at a later update.

        Args:
            points: ``N x d`` candidates (cast to the model's dtype); ``None`` stops
                tracking.
            max_entries: The most entries ``V`` may hold (default ``2**25``: 256 MiB
                in float64).

        Returns:
            Whether the candidates are tracked.

        Raises:
            TypeError: If ``points`` is not a tensor or ``max_entries`` not an int.
            ValueError: If ``points`` is not ``N x d`` (``N >= 1``, the model's ``d``)
                or holds NaN/inf, or ``max_entries < 1``.
            UnsupportedError: For a model conditioned beyond its own data or a
                ``subset_output`` (track on the model it came from).

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
            >>> D = torch.linspace(0, 1, 11, dtype=torch.float64).unsqueeze(-1)
            >>> model = VectorValuedGP(D[:2], torch.rand(2, 2, dtype=torch.float64),
            ...                        RBFKernel(), B, regularization=0.1)
            >>> plain = model.posterior(D.unsqueeze(-2)).variance
            >>> model.track_candidates(D)
            True
            >>> torch.allclose(model.posterior(D.unsqueeze(-2)).variance, plain)
            True
            >>> _ = model.append_observations(D[5:6], torch.rand(1, 2, dtype=torch.float64))
            >>> tracked = model.posterior(D.unsqueeze(-2)).mean
            >>> _ = model.track_candidates(None)
            >>> torch.allclose(model.posterior(D.unsqueeze(-2)).mean, tracked)
            True
        """
        if points is None:
            self._candidates = None
            return False
        points = self._check_candidates(points, max_entries)
        points = points.detach().to(self.train_X).clone()
        num_points, n = points.shape[0], self.num_tasks
        if self._use_icm:  # V: r x t x N (one block per eigenvalue group)
            batch, rows, columns = self._factor.buffer.shape[0], self.train_X.shape[0], num_points
        else:  # V: M x (N n)
            batch, rows, columns = 1, self._obs_y.numel(), num_points * n
        if batch * CandidateSolves.initial_capacity(rows) * columns > max_entries:
            self._candidates = None  # checked before anything is computed
            return False
        candidates = points.unsqueeze(-2)  # N x 1 x d: the layout of a posterior query
        gram = None  # eigen route, small N: K(D, D) for the rows of V at new candidates
        with torch.no_grad(), _eager_kernels():
            if self._use_icm:
                kernel = self.kernel.kernels[0]
                prior = kernel(candidates, candidates).to_dense()  # N x 1 x 1
                if num_points**2 <= max_entries // 8:  # k(D_p, D_s), as a query at D
                    gram = kernel(candidates, points.expand(num_points, -1, -1)).to_dense()
                    gram = gram.squeeze(-2)  # N x N
                    check_kernel_values(gram, points, "points")
                if rows:
                    values = self._factor.solve(self._icm_columns(candidates))
                else:
                    values = points.new_zeros(batch, 0, num_points)
                second = points.new_zeros(batch, num_points)  # sum_s V_g[s, p]^2
            else:
                prior = self.kernel.full_covariance(candidates, candidates).reshape(-1, n, n)
                if rows:
                    values = self._factor.solve(self._general_columns(candidates))
                else:
                    values = points.new_zeros(0, num_points * n)
                second = points.new_zeros(num_points, n, n)  # V[:, p]^T V[:, p]
            check_kernel_values(prior, points, "points")
            check_kernel_values(values, points, "points")
        self._candidates = {
            "points": points,
            "prior": prior,
            "solves": CandidateSolves(values),
            "max_entries": max_entries,
            "gram": gram,
            "mean": points.new_zeros(num_points, n),
            "second": second,
        }
        self._accumulate_candidates(values, self._forward_y)
        return True

    @property
    def tracks_candidates(self) -> bool:
        """Whether ``track_candidates`` keeps the posterior at a candidate set."""
        return self._candidates is not None

    def _accumulate_candidates(self, rows: Tensor, forward_rows: Tensor) -> None:
        """Add the contributions of new rows of ``V`` (``rows``) and of ``L^{-1} Y``
        (``forward_rows``) to the sums the moments at the candidates are read from.

        Eigen route (``rows``: ``r x m x N``, ``forward_rows``: ``m x n``):
        ``second[g, p] += sum_s V_g[s, p]^2`` and
        ``mean[p, i] += sum_s V_g(i)[s, p] (L_g(i)^{-1} Y^i)_s``. General route (``rows``:
        ``m x N n``, ``forward_rows``: ``m``): ``mean += (L^{-1} y)^T V`` and
        ``second[p] += V[:, p]^T V[:, p]`` (``n x n`` per point).
        """
        candidates = self._candidates
        if rows.shape[-2] == 0:
            return
        if self._use_icm:
            candidates["second"] += rows.square().sum(-2)
            per_group = torch.einsum("rsp,si->rpi", rows, forward_rows)  # r x N x n
            index = self._group_of.view(1, 1, -1).expand(1, per_group.shape[-2], -1)
            candidates["mean"] += per_group.gather(0, index).squeeze(0)
        else:
            num_points, n = candidates["mean"].shape
            candidates["mean"] += (forward_rows @ rows).reshape(num_points, n)
            per_point = rows.reshape(rows.shape[0], num_points, n)
            candidates["second"] += torch.einsum("spi,spj->pij", per_point, per_point)

    def _candidate_mean_and_covariance(self, index: Tensor | slice) -> tuple[Tensor, Tensor]:
        """The moments at candidates ``index`` (``b x 1 x d`` queries) from the sums
        ``_accumulate_candidates`` keeps: ``O(b n^2)``, independent of ``t``."""
        candidates = self._candidates
        prior = candidates["prior"][index]
        mean = candidates["mean"][index]  # b x n
        if self._use_icm:
            xi, U = self._xi, self._U_out
            quad = candidates["second"][:, index][self._group_of].transpose(0, 1)  # b x n
            component = xi * (prior.reshape(-1, 1) - xi * quad)  # b x n, eq. (6) before the max
            mean = (mean * xi) @ U.transpose(0, 1) + self.prior_mean
            covariance = (U * component.unsqueeze(-2)) @ U.transpose(0, 1)  # b x n x n
            return mean.unsqueeze(-2), covariance
        mean = mean + self.prior_mean
        return mean.unsqueeze(-2), prior - candidates["second"][index]

    def _candidate_index(self, X: Tensor) -> Tensor | None:
        """The candidates equal to the rows of ``X`` (``m x d``), or ``None``."""
        if self._candidates is None:
            return None
        index = match_candidates(X.unsqueeze(-2), self._candidates["points"])
        if isinstance(index, slice):
            return torch.arange(X.shape[0], device=X.device)
        return index

    def _extend_candidates(self, cross: Tensor) -> None:
        """Extend ``V`` after the factor grew (``cross``: ``G(new, D)``, ``batch x m x K``),
        or stop tracking when ``V`` would outgrow ``max_entries``."""
        candidates = self._candidates
        solves = candidates["solves"]
        if solves.numel_after(cross.shape[-2]) > candidates["max_entries"]:
            self._candidates = None
            return
        solves.extend(self._factor, cross)

    # ---------------------------------------------------------- information gain
    def information_gain(self) -> Tensor:
        r"""``1/2 log det(I + G_t / eta)`` over the observations seen (a 0-d tensor).

        Equals ``1/2 sum_s log det(I_n + Gamma_{s-1}(x_s, x_s) / eta)`` (paper 000,
        Theorem 2 and Lemma 4): the mutual information between ``f`` and the data.
        With per-task noise (``noise_variances``) it is the mutual information
        ``1/2 log det(I + Lambda^{-1/2} G_t Lambda^{-1/2})``, ``Lambda`` the diagonal of
        the observations' noise variances (the whitened function's ``1/2 log det(I +
        G'_t / eta)``); the prior mean does not enter.

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
        if not self.has_task_noise:
            return half_logdet - 0.5 * self._obs_y.numel() * log_eta
        return half_logdet - 0.5 * self._observation_noise(self._obs_tasks).log().sum()

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
        with torch.no_grad(), _eager_kernels():
            if self._use_icm:
                self._append_icm(X, Y)
            else:
                self._append_general(X, Y, tasks)
        return self

    def _append_general(self, X: Tensor, Y: Tensor, tasks: Tensor | None) -> None:
        new_X, new_tasks, new_y = self._scalar_observations(X, Y, tasks)
        new_block = self.kernel.observation_covariance(new_X, new_tasks, new_X, new_tasks)
        new_block = new_block + torch.diag(self._observation_noise(new_tasks))
        check_kernel_values(new_block, X, "X")
        index = self._candidate_index(new_X)
        if index is not None:  # W^T = L^{-1} G(obs, new) is a set of columns of V
            columns = index * self.num_tasks + new_tasks
            self._append_factor_rows(self._candidates["solves"].values[:, columns], new_block)
        else:
            cross = self.kernel.observation_covariance(
                self._obs_X, self._obs_tasks, new_X, new_tasks
            )
            check_kernel_values(cross, X, "X")
            self._factor.append(cross, new_block)
        if self._candidates is not None:
            points = self._candidates["points"].unsqueeze(-2)
            cross = self.kernel.task_block_covariance(points, new_X, new_tasks)  # N x 1 x n x m
            self._extend_candidates(cross.reshape(-1, new_y.numel()).transpose(0, 1))
        num_obs = self._forward_y.numel()
        centered = (new_y - self.prior_mean[new_tasks]).unsqueeze(-1)
        self._forward_y = self._extend_forward(self._forward_y.unsqueeze(-1), centered)
        self._forward_y = self._forward_y.squeeze(-1)
        if self._candidates is not None:
            solves = self._candidates["solves"]
            self._accumulate_candidates(solves.values[num_obs:], self._forward_y[num_obs:])
        self._obs_X = torch.cat([self._obs_X, new_X])
        self._obs_tasks = torch.cat([self._obs_tasks, new_tasks])
        self._obs_y = torch.cat([self._obs_y, new_y])
        self.train_X = torch.cat([self.train_X, X])
        self.train_Y = torch.cat([self.train_Y, Y])
        if tasks is not None:
            self.train_tasks = torch.cat([self.train_tasks, tasks])

    def _append_factor_rows(self, solved_cross: Tensor, new_block: Tensor) -> None:
        """Border the factor with ``new_block`` when ``L^{-1} C`` (``batch x t x m``) is
        known: ``W = (L^{-1} C)^T``, ``L_S = chol(D - W W^T)`` (``GrowingCholesky.append``
        without its solve)."""
        lower_left = solved_cross.transpose(-1, -2)  # batch x m x t
        schur = new_block - lower_left @ lower_left.transpose(-1, -2)
        size = self._factor.size + new_block.shape[-1]
        lower_right = cholesky_factor(schur, self.regularization, size=size)
        self._factor.append_factor_rows(lower_left, lower_right)

    def _append_icm(self, X: Tensor, Y: Tensor) -> None:
        kernel = self.kernel.kernels[0]
        xi = self._group_xi[:, None, None]
        t, m = self.train_X.shape[0], X.shape[0]
        index = self._candidate_index(X)
        eye = torch.eye(m, dtype=X.dtype, device=X.device)
        if index is not None and m == 1:
            k_new = self._candidates["prior"][index].reshape(1, 1)  # k(x, x), as kernel(X, X)
        else:
            k_new = kernel(X, X).to_dense()
        new_block = xi * k_new + self.regularization * eye  # r x m x m
        check_kernel_values(new_block, X, "X")
        if index is not None:  # W_g^T = L_g^{-1} (xi_g k(X_t, X)) = xi_g V_g[:, j]
            self._append_factor_rows(xi * self._candidates["solves"].values[..., index], new_block)
        else:
            cross = xi * kernel(self.train_X, X).to_dense() if t else X.new_zeros(1, 0, m)
            check_kernel_values(cross, X, "X")
            self._factor.append(cross.expand(new_block.shape[0], t, -1), new_block)
        r = new_block.shape[0]
        if self._candidates is not None:
            gram = self._candidates["gram"]
            if index is not None and gram is not None:
                cross = gram[:, index].transpose(0, 1)  # m x N
            else:  # k(D_p, x) in the layout of a posterior query at D (same numbers)
                points = self._candidates["points"].unsqueeze(-2)  # N x 1 x d
                cross = kernel(points, X.expand(points.shape[0], m, X.shape[-1])).to_dense()
                cross = cross.reshape(points.shape[0], m).transpose(0, 1)  # m x N
            self._extend_candidates(cross.expand(r, m, -1))
        rotated = self._white_targets(Y, None) @ self._U  # m x n
        extended = self._extend_forward(
            self._forward_y.expand(r, t, -1), rotated.expand(r, *rotated.shape)
        )  # r x (t + m) x n, only each component's own group is meaningful
        self._forward_y = self._pick_groups(extended)
        if self._candidates is not None:
            solves = self._candidates["solves"]
            self._accumulate_candidates(solves.values[..., t:, :], self._forward_y[t:])
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
