r"""The exact posterior's eigen route for ICM kernels (paper 000, Section 3.3, Appendix A).

With a single separable term ``k(x, x') B`` and full-vector data, ``B = sum_i xi_i u_i
u_i^T`` and the outputs rotated onto the eigenvectors split the problem into independent
scalar problems with matrices ``xi_i K_t + eta I`` (eqs. (3)-(4)), one per distinct
positive eigenvalue (``eigen_groups``; components with ``xi_i = 0`` have zero mean and
variance). Each is kept as a Cholesky factor ``L_g`` rather than through one
eigen-decomposition of ``K_t`` (as in Appendix A): a Cholesky factor is extended in
``O(t^2)`` when an observation arrives, an eigen-decomposition would be recomputed; the
numbers are the same. The mean and covariance are eqs. (5)-(6) before the max, mapped
back by ``S U`` (per-task noise: the whitened function of ``FixedKernelMultiTaskModel``).

At a finite candidate set (``CandidatePosterior``) there is one ``V_g = L_g^{-1} K(X_t,
D)`` per group; a new input that is a candidate gets its factor row from ``V``
(``W_g = xi_g V_g[:, j]^T``, no ``O(t^2)`` solve).
"""

from __future__ import annotations

import torch
from torch import Tensor

from botorch_mtucb.models.base import eigen_groups
from botorch_mtucb.models.candidate_posterior import CandidatePosterior, CandidateSolves
from botorch_mtucb.utils.checks import check_kernel_values
from botorch_mtucb.utils.linalg import GrowingCholesky, cholesky_factor


class ExactEigenRoute:
    """The eigen route of ``VectorValuedGP`` (a mixin of the model: its kernel, data,
    noise, factor and candidates); the model takes it when ``uses_eigen_route``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.models.eigen_route import ExactEigenRoute
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> model = VectorValuedGP(X, X.repeat(1, 2), RBFKernel(), B, 0.1)
        >>> isinstance(model, ExactEigenRoute), model.uses_eigen_route, model._group_xi.numel()
        (True, True, 2)
    """

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

        # One group at a time, straight into the factor's buffer.
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

    def _attach_eigen(self, candidates: CandidatePosterior) -> bool:
        """Eigen route: ``V_g = L_g^{-1} K(X_t, D)`` (``r x t x N``), ``k(p, p)`` and, for
        a small ``N``, ``K(D, D)`` (the rows of ``V`` at new candidates)."""
        points, max_entries = candidates.points, candidates.max_entries
        num_points = points.shape[0]
        batch, rows = self._factor.buffer.shape[0], self.train_X.shape[0]
        if batch * CandidateSolves.initial_capacity(rows) * num_points > max_entries:
            return False  # checked before anything is computed
        kernel = self.kernel.kernels[0]
        query = points.unsqueeze(-2)  # N x 1 x d: the layout of a posterior query
        prior = kernel(query, query).to_dense()  # N x 1 x 1
        if num_points**2 <= max_entries // 8:  # k(D_p, D_s), as a query at D
            gram = kernel(query, points.expand(num_points, -1, -1)).to_dense().squeeze(-2)
            check_kernel_values(gram, points, "points")
            candidates.gram = gram  # N x N
        if rows:
            values = self._factor.solve(self._icm_columns(query))
        else:
            values = points.new_zeros(batch, 0, num_points)
        check_kernel_values(prior, points, "points")
        check_kernel_values(values, points, "points")
        candidates.prior = prior
        candidates.solves = CandidateSolves(values)
        candidates.mean = points.new_zeros(num_points, self.num_tasks)
        candidates.second = points.new_zeros(batch, num_points)  # sum_s V_g[s, p]^2
        candidates.accumulate(values, self._forward_y, self._group_of)
        return True

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
        candidates = self._candidates
        index = None if candidates is None else candidates.locate_rows(X)
        eye = torch.eye(m, dtype=X.dtype, device=X.device)
        if index is not None and m == 1:
            k_new = candidates.prior[index].reshape(1, 1)  # k(x, x), as kernel(X, X)
        else:
            k_new = kernel(X, X).to_dense()
        new_block = xi * k_new + self.regularization * eye  # r x m x m
        check_kernel_values(new_block, X, "X")
        if index is not None:  # W_g^T = L_g^{-1} (xi_g k(X_t, X)) = xi_g V_g[:, j]
            self._append_factor_rows(xi * candidates.solves.values[..., index], new_block)
        else:
            cross = xi * kernel(self.train_X, X).to_dense() if t else X.new_zeros(1, 0, m)
            check_kernel_values(cross, X, "X")
            self._factor.append(cross.expand(new_block.shape[0], t, -1), new_block)
        r = new_block.shape[0]
        if candidates is not None:
            gram = candidates.gram
            if index is not None and gram is not None:
                cross = gram[:, index].transpose(0, 1)  # m x N
            else:  # k(D_p, x) in the layout of a posterior query at D (same numbers)
                points = candidates.points.unsqueeze(-2)  # N x 1 x d
                cross = kernel(points, X.expand(points.shape[0], m, X.shape[-1])).to_dense()
                cross = cross.reshape(points.shape[0], m).transpose(0, 1)  # m x N
            self._extend_candidates(cross.expand(r, m, -1))
        rotated = self._white_targets(Y, None) @ self._U  # m x n
        extended = self._extend_forward(
            self._forward_y.expand(r, t, -1), rotated.expand(r, *rotated.shape)
        )  # r x (t + m) x n, only each component's own group is meaningful
        self._forward_y = self._pick_groups(extended)
        candidates = self._candidates  # None if V outgrew max_entries
        if candidates is not None:
            values = candidates.solves.values[..., t:, :]
            candidates.accumulate(values, self._forward_y[t:], self._group_of)
        self._rotated_Y = torch.cat([self._rotated_Y, rotated])
        self.train_X = torch.cat([self.train_X, X])
        self.train_Y = torch.cat([self.train_Y, Y])

    def _extend_candidates(self, cross: Tensor) -> None:
        """Extend ``V`` after the factor grew (``cross``: ``G(new, D)``, ``batch x m x K``),
        or stop tracking when ``V`` would outgrow ``max_entries``."""
        candidates = self._candidates
        if candidates.solves.numel_after(cross.shape[-2]) > candidates.max_entries:
            self._candidates = None
            return
        candidates.solves.extend(self._factor, cross)
