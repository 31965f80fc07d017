r"""The Nystrom sketch of MT-BKB: dictionary draws, embeddings and variances at rows.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 3.2 and Algorithm 2 (dictionary
``D_t`` drawn with inclusion probabilities ``p_{t,i} = min(q ||Gamma~_{t-1}(x_i, x_i)||,
1)``, reweighted embeddings, ``mu~_t`` and ``Gamma~_t``); Section 3.3 and Appendix A,
eqs. (7)-(8) (one scalar embedding shared by all tasks for ICM kernels); Appendix D,
Lemma 8 (the sketch is the exact posterior of the features projected on the
dictionary's span).

The pseudo-inverse root ``(G~_t^{1/2})^+`` drops eigenvalues of ``G~_t`` below
``PSEUDO_INVERSE_RTOL`` times the largest, and the embedding is kept in the coordinates
of the kept eigenvectors (``r <= n m`` columns), which changes none of the formulas.

Why this module is long: the sketch's two routes (ICM and general) share the draws,
the rebuilds and the variances at rows; the general route's embedding per task
(``_task_embedding``) serves both the posterior and the rows' variances.

**Routes.** With a single separable (ICM) term ``k B`` and full-vector data the
embedding is the scalar one of Appendix A, ``phi~_t(x) = (K~^{1/2})^+ k~_t(x)``, shared
by all tasks, and each eigen-direction ``u_i`` of ``B`` is a scalar problem with matrix
``xi_i v~_t + eta I`` (eqs. (7)-(8)); an update costs ``O(m t (d + r) + g r^2 t + g
r^3)`` for ``g`` distinct eigenvalues of ``B`` (linear in ``t``; no ``t x t`` matrix is
formed). Otherwise (sums of separable kernels, task-indexed data) the embedding is built
on scalar observations ``(x, i)``: a full-vector row contributes its ``n`` columns to the
dictionary, a task-indexed observation its own column, with ``p = min(q Gamma~(x,
x)_{ii}, 1)``.

**Prior mean and per-task noise.** The sketch is that of the whitened function ``g =
S^{-1} (f - c)`` (one noise level ``eta = min_i lambda_i``, kernel ``S^{-1} Gamma
S^{-1}``): the draws use ``||S^{-1} Gamma~(x, x) S^{-1}||`` and ``sketched_log_det_sum``
sums ``log det(I + Lambda^{-1/2} Gamma~_{s-1}(x_s, x_s) Lambda^{-1/2})``; the posterior is
``c + S mu~_g`` and ``S Gamma~_g S`` (scaling a dictionary column does not change the
span). With one noise level and ``c = 0`` this is Algorithm 2 itself.

**Precision.** Run in float64 for the theory (the default of the problems). In float32
the embedding amplifies round-off by ``1 / sqrt`` of the smallest kept eigenvalue of
``G~_t`` (``PSEUDO_INVERSE_RTOL`` is ``1e-6`` there): posterior means are then accurate
to about ``1e-2`` on unit-scale data.
"""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.models.candidate_posterior import CandidatePosterior
from botorch_mtucb.utils.checks import check_kernel_values
from botorch_mtucb.utils.linalg import cholesky_factor
from botorch_mtucb.utils.random import stream_seed

# Eigenvalues of the reweighted dictionary Gram matrix below this fraction of the
# largest are dropped from its pseudo-inverse square root (duplicated or nearly
# collinear dictionary points); the loss in Phi~^T Phi~ is of that relative size.
PSEUDO_INVERSE_RTOL = {torch.float64: 1e-10, torch.float32: 1e-6}
# Task-indexed data: the variances at the rows are computed this many rows at a time
# (bounds the rows' ``k x n x r`` embedding in memory; each block is a few large
# operations, whatever the number of rows).
ROW_BLOCK = 4096


def _pinv_root(gram: Tensor) -> Tensor:
    r"""``(G^{1/2})^+`` restricted to its range: ``m x r`` with ``r`` kept eigenvalues.

    With ``G = V diag(s) V^T``, returns ``V_+ diag(s_+^{-1/2})``; eigenvalues below
    ``PSEUDO_INVERSE_RTOL * max(s)`` are dropped (at least one is kept).
    """
    s, vectors = torch.linalg.eigh(gram)
    rtol = PSEUDO_INVERSE_RTOL.get(gram.dtype, 1e-6)
    keep = s > rtol * s.amax().clamp_min(torch.finfo(s.dtype).tiny)
    keep[-1] = True
    return vectors[:, keep] / s[keep].clamp_min(torch.finfo(s.dtype).tiny).sqrt()


class NystromSketch:
    """The sketch of ``NystromVectorValuedGP`` (a mixin of the model: its kernel, data,
    noise and dictionary): draws (``_resample``), rebuilds of the embedding
    (``_rebuild``), the posterior (eqs. (7)-(8)), the variances at rows that the next
    draw uses, and the sketch kept at a finite candidate set (``_attach_candidates``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import NystromVectorValuedGP
        >>> from botorch_mtucb.models.nystrom_sketch import NystromSketch
        >>> X = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)
        >>> model = NystromVectorValuedGP(X, X.repeat(1, 2), RBFKernel(), torch.eye(2), 0.1)
        >>> isinstance(model, NystromSketch), model.embedding_dimension <= 6
        (True, True)
    """

    def _dictionary_generator(self, generator: torch.Generator | None) -> torch.Generator:
        if generator is not None:
            return generator
        seeded = torch.Generator()
        seeded.manual_seed(stream_seed(self.seed, self._num_resamplings))
        return seeded

    def _resample(self, norms: Tensor, generator: torch.Generator | None) -> None:
        """Draw ``D_t``: row ``i`` with probability ``min(q norms_i, 1)`` (never empty)."""
        probabilities = (self.accuracy * norms.clamp_min(0.0)).clamp_max(1.0)
        uniform = torch.rand(
            norms.shape[0], generator=self._dictionary_generator(generator), dtype=torch.float64
        )
        chosen = uniform.to(norms.device) < probabilities.to(torch.float64)
        if not chosen.any():  # keep the most informative row: never an empty dictionary
            chosen[int(torch.argmax(probabilities))] = True
        self._resamplings += 1
        self._dictionary = torch.nonzero(chosen).reshape(-1).to(norms.device)
        # Weights 1/sqrt(p); a zero-variance row (p = 0) kept above gets weight 1: the
        # posterior does not depend on the weights (Lemma 8), only the span matters.
        kept = probabilities[self._dictionary]
        self._probabilities = torch.where(kept > 0, kept, torch.ones_like(kept))

    def _dictionary_columns(self) -> tuple[Tensor, Tensor, Tensor]:
        """Scalar columns ``(x, task)`` of the dictionary and their weights ``1/sqrt(p)``."""
        weights = self._probabilities.rsqrt()
        X = self.train_X[self._dictionary]
        if self._full_vector:
            n = self.num_tasks
            tasks = torch.arange(n, device=X.device).repeat(X.shape[0])
            return X.repeat_interleave(n, 0), tasks, weights.repeat_interleave(n, 0)
        return X, self.train_tasks[self._dictionary], weights

    def _scalar_observations(
        self, X: Tensor | None = None, Y: Tensor | None = None, tasks: Tensor | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """``(x, task, y)`` of each scalar observation of the rows (default: the model's)."""
        if X is None:
            X, Y, tasks = self.train_X, self.train_Y, self.train_tasks
        if self._full_vector:
            n = self.num_tasks
            tasks = torch.arange(n, device=X.device).repeat(X.shape[0])
            return X.repeat_interleave(n, 0), tasks, Y.reshape(-1)
        return X, tasks, Y.reshape(-1)

    def _rebuild(self) -> None:
        """Embedding, ``chol(V~ + eta I)`` and weights for the current dictionary."""
        if self._use_icm:
            self._rebuild_icm()
        else:
            self._rebuild_general()

    def _rebuild_icm(self) -> None:
        kernel = self.kernel.kernels[0]
        weights = self._probabilities.rsqrt()
        if self._candidates is not None:
            self._rebuild_icm_tracked(weights)
            return
        D = self.train_X[self._dictionary]
        if getattr(self, "_building", False):
            self._rebuild_icm_merged(kernel, D, weights)
            return
        gram = weights[:, None] * kernel(D, D).to_dense() * weights  # K~_t, m x m
        # phi~(x) = (K~^{1/2})^+ k~_t(x) = root^T (w * k(D, x)): root is m x r
        self._root = weights[:, None] * _pinv_root(gram)
        phi = self._root.transpose(0, 1) @ kernel(D, self.train_X).to_dense()  # r x t
        self._finish_icm(phi)

    def _rebuild_icm_merged(self, kernel: Kernel, D: Tensor, weights: Tensor) -> None:
        """``_rebuild_icm`` with repeated dictionary rows merged (an adaptive build on a
        finite domain draws the same point many times): ``j`` copies with weights
        ``w_j`` span what one column with weight ``sqrt(sum_j w_j^2)`` spans, with the
        same Gram operator ``sum_j w_j^2 k(x, .) k(x, .)^T``, hence the same nonzero
        eigenvalues and posterior (to round-off). The root keeps one row per
        dictionary row (zeros for the later copies), so the posterior code is unchanged."""
        unique, inverse = torch.unique(D, dim=0, return_inverse=True)
        if unique.shape[0] == D.shape[0]:
            first = torch.arange(D.shape[0], device=D.device)
            merged = weights
        else:
            order = torch.arange(D.shape[0], device=D.device)
            first = torch.full((unique.shape[0],), D.shape[0], device=D.device)
            first = first.scatter_reduce(0, inverse, order, reduce="amin")
            merged = torch.zeros(unique.shape[0], dtype=weights.dtype, device=weights.device)
            merged = merged.index_add(0, inverse, weights.square()).sqrt()
        rows = D[first]
        gram = merged[:, None] * kernel(rows, rows).to_dense() * merged
        root = merged[:, None] * _pinv_root(gram)  # m' x r
        self._root = root.new_zeros(D.shape[0], root.shape[-1]).index_copy(0, first, root)
        self._finish_icm(root.transpose(0, 1) @ kernel(rows, self.train_X).to_dense())

    def _rebuild_icm_tracked(self, weights: Tensor) -> None:
        """``_rebuild_icm`` from the kept candidates (see ``track_candidates``)."""
        candidates = self._candidates
        cand = candidates.observed[self._dictionary]  # the dictionary's candidates, m
        unique, inverse = torch.unique(cand, return_inverse=True)
        m = cand.shape[0]
        order = torch.arange(m, device=cand.device)
        first = torch.full((unique.shape[0],), m, device=cand.device)
        first = first.scatter_reduce(0, inverse, order, reduce="amin")
        merged = torch.zeros(unique.shape[0], dtype=weights.dtype, device=weights.device)
        merged = merged.index_add(0, inverse, weights.square()).sqrt()
        rows = candidates.gram[unique]  # m' x N
        gram = merged[:, None] * rows[:, unique] * merged
        root = merged[:, None] * _pinv_root(gram)  # m' x r
        self._root = root.new_zeros(m, root.shape[-1]).index_copy(0, first, root)
        embedding = root.transpose(0, 1) @ rows  # r x N: phi~ at every candidate
        v = (embedding * candidates.counts) @ embedding.transpose(0, 1)
        self._finish_icm(embedding[:, candidates.observed], v, embedding @ candidates.sums)
        self._candidate_moments(candidates, embedding)

    def _finish_icm(
        self, phi: Tensor, v: Tensor | None = None, rotated: Tensor | None = None
    ) -> None:
        """``chol(xi_g v~ + eta I)`` per group and the weights, from ``phi~`` at the rows
        (``v~_t`` and ``sum_s phi~(x_s) y_s^T U``: computed from ``phi`` unless given)."""
        self._train_embedding = phi
        if v is None:
            v = phi @ phi.transpose(0, 1)  # v~_t, r x r
        eye = torch.eye(v.shape[0], dtype=v.dtype, device=v.device)
        self._chol = cholesky_factor(
            self._group_xi[:, None, None] * v + self.regularization * eye, self.regularization
        )  # g x r x r
        if rotated is None:  # r x n: sum_s (y_s^T u_i) phi~(x_s), y_s whitened
            rotated = phi @ (self._white_targets(self.train_Y, None) @ self._U)
        chol = self._chol.index_select(0, self._group_of)  # n x r x r
        alpha = torch.cholesky_solve(rotated.transpose(0, 1).unsqueeze(-1), chol)
        self._alpha = alpha.squeeze(-1).transpose(0, 1) * self._xi  # r x n, eq. (7)

    def _full_vector_covariance(self, X1: Tensor, X2: Tensor) -> Tensor:
        """``Gamma(X1_a, X2_b)[i, j]`` as ``(q1 n) x (q2 n)`` (row ``a n + i``): the
        ``observation_covariance`` of every task at every row, with each data kernel
        evaluated once per pair of rows instead of ``n^2`` times."""
        n = self.num_tasks
        return self.kernel.full_covariance(X1, X2).reshape(X1.shape[0] * n, X2.shape[0] * n)

    def _rebuild_general(self) -> None:
        D_X, D_tasks, weights = self._dictionary_columns()
        fast = getattr(self, "_building", False) and self._full_vector
        if fast:
            D = self.train_X[self._dictionary]
            gram = self._full_vector_covariance(D, D)
        else:
            gram = self.kernel.observation_covariance(D_X, D_tasks, D_X, D_tasks)
        gram = weights[:, None] * gram * weights  # G~_t, J x J
        self._root = weights[:, None] * _pinv_root(gram)  # J x r
        obs_X, obs_tasks, obs_y = self._scalar_observations()
        if fast:
            cross = self._full_vector_covariance(D, self.train_X)  # J x M
        else:
            cross = self.kernel.observation_covariance(D_X, D_tasks, obs_X, obs_tasks)  # J x M
        Z = self._root.transpose(0, 1) @ cross  # r x M: Phi~_t of each scalar observation
        self._train_embedding = Z
        Z, white_y = self._whitened(Z, obs_y, obs_tasks)
        eye = torch.eye(Z.shape[0], dtype=Z.dtype, device=Z.device)
        self._chol = cholesky_factor(
            Z @ Z.transpose(0, 1) + self.regularization * eye, self.regularization
        )
        self._moment = Z @ white_y  # sum_s Phi~(x_s) y_s (extensions add to it)
        self._alpha = torch.cholesky_solve(self._moment.unsqueeze(-1), self._chol).squeeze(-1)

    def _whitened(self, Z: Tensor, y: Tensor, tasks: Tensor) -> tuple[Tensor, Tensor]:
        """The embedding ``Z S^{-1}`` (``r x k``) of scalar observations ``y`` (``k``)
        of ``tasks`` and the observations ``S^{-1} (y - c)``: the sketch of ``g`` (one
        noise level ``eta``), whose span is that of ``f``'s dictionary."""
        white_y = self._white_targets(y.unsqueeze(-1), tasks).squeeze(-1)
        scale = self._noise_scale
        return (Z if scale is None else Z / scale[tasks]), white_y

    def _component_variances(self, phi: Tensor, prior: Tensor) -> Tensor:
        """ICM route, eq. (8) before the max: ``... x n`` for embeddings ``r x ...``."""
        r, groups = phi.shape[0], self._chol.shape[0]
        flat = phi.reshape(r, -1)
        eye = torch.eye(r, dtype=flat.dtype, device=flat.device).expand(groups, r, r)
        inverse = torch.linalg.solve_triangular(self._chol, eye, upper=False)  # L_g^{-1}
        # every group's L_g^{-1} phi~ in one product (not one triangular solve per group)
        solved = (inverse.reshape(groups * r, r) @ flat).reshape(groups, r, -1)  # g x r x P
        quad = solved.square().sum(-2)[self._group_of]  # n x P
        residual = prior.reshape(-1) - flat.square().sum(0)  # P
        components = self._xi[:, None] * (residual + self.regularization * quad)  # n x P
        return components.transpose(0, 1).reshape(*phi.shape[1:], -1)

    def _row_statistics(self, X: Tensor, tasks: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
        """At rows ``X`` (``k x d``): norms ``||Gamma~(x, x)||`` (or ``Gamma~_ii``),
        the diagonal ``k x n`` and ``log det(I + block / eta)`` (``k``)."""
        norms, diagonal, log_det, _ = self._row_information(X, tasks)
        return norms, diagonal, log_det

    def _row_information(
        self, X: Tensor, tasks: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``_row_statistics`` and the information of each row, ``k x h``: on the ICM
        route ``log(1 + c_i / eta)`` of each eigen-direction ``u_i`` of ``B`` (``h =
        n``; independent scalar problems, the ``log_det`` is their sum), otherwise the
        ``log_det`` itself (``h = 1``)."""
        eta = self.regularization
        candidates = self._candidates
        index = None if candidates is None else candidates.locate_rows(X)
        if index is not None:  # rows among the candidates: their variances are kept
            components = candidates.components[index].clamp_min(0.0)
            diagonal = components @ self._U_out.square().transpose(0, 1)
            information = torch.log1p(components / eta)
            return components.amax(-1), diagonal, information.sum(-1), information
        if self._use_icm:
            prior = self.kernel.kernels[0](X, X, diag=True)  # k
            if self._root is None:
                components = self._xi * prior[:, None]  # k x n
            else:
                phi = (
                    self._root.transpose(0, 1)
                    @ self.kernel.kernels[0](self.train_X[self._dictionary], X).to_dense()
                )
                components = self._component_variances(phi, prior)
            components = components.clamp_min(0.0)
            diagonal = components @ self._U_out.square().transpose(0, 1)
            information = torch.log1p(components / eta)
            return components.amax(-1), diagonal, information.sum(-1), information
        if not self._full_vector:  # task-indexed: each row's own variance, nothing else
            tasks = tasks.reshape(-1)
            own = self._white_own(self._indexed_row_variances(X, tasks), tasks)
            log_det = torch.log1p(own / eta)
            return own, None, log_det, log_det.unsqueeze(-1)
        blocks = self._blocks(X.unsqueeze(-2))[:, 0]  # k x n x n
        diagonal = blocks.diagonal(dim1=-2, dim2=-1).clamp_min(0.0)
        white = self._white_blocks(blocks)  # of g: the draws and the information use them
        eigenvalues = torch.linalg.eigvalsh(white).clamp_min(0.0)
        log_det = torch.log1p(eigenvalues / eta).sum(-1)
        return eigenvalues[:, -1], diagonal, log_det, log_det.unsqueeze(-1)

    def _white_own(self, own: Tensor, tasks: Tensor) -> Tensor:
        """Task-indexed rows' own variances of ``g = S^{-1} (f - c)`` (the draws and the
        information use them) from ``f``'s."""
        scale = self._noise_scale
        return own if scale is None else own / scale[tasks].square()

    def _indexed_row_variances(self, X: Tensor, tasks: Tensor | None = None) -> Tensor:
        r"""General route: ``Gamma~_t(x, x)_ii`` at the rows ``X`` (``k x d``), of every
        task (``tasks=None``: ``k x n``) or of each row's own task ``i = tasks_a``
        (``k``), from the embedding ``ROW_BLOCK`` rows at a time
        (``_task_embedding``, ``_embedding_variances``): no ``n x n`` block is formed."""
        prior = self.kernel.diagonal_blocks(X).diagonal(dim1=-2, dim2=-1)  # k x n
        if tasks is not None:
            prior = prior.gather(-1, tasks.reshape(-1, 1)).reshape(-1)
        if self._root is None:
            return prior.clamp_min(0.0)
        parts = []
        for start in range(0, X.shape[0], ROW_BLOCK):
            rows = slice(start, start + ROW_BLOCK)
            own = None if tasks is None else tasks[rows]
            phi = self._task_embedding(X[rows], point_tasks=own)  # b x n x r (b x r)
            parts.append(self._embedding_variances(phi, prior[rows]))
        return torch.cat(parts)

    def _embedding_variances(self, phi: Tensor, prior: Tensor) -> Tensor:
        r"""``prior - ||Phi~||^2 + eta ||L^{-1} Phi~||^2`` (``L = chol(V~_t + eta I)``)
        for embeddings ``phi`` (``... x r``) and their prior variances ``prior``
        (``...``): one ``r x r`` inverse of ``L``, then matrix products of
        ``ROW_BLOCK`` rows (few large operations, whatever the number of rows)."""
        r = phi.shape[-1]
        eye = torch.eye(r, dtype=phi.dtype, device=phi.device)
        inverse_t = torch.linalg.solve_triangular(self._chol, eye, upper=False).transpose(0, 1)
        flat = phi.reshape(-1, r)
        reductions = []
        for block in flat.split(ROW_BLOCK):
            solved = block @ inverse_t  # rows (L^{-1} Phi~)^T
            reductions.append(
                block.square().sum(-1) - self.regularization * solved.square().sum(-1)
            )
        return (prior - torch.cat(reductions).reshape(prior.shape)).clamp_min(0.0)

    def _task_embedding(
        self, X: Tensor, tasks: Tensor | None = None, point_tasks: Tensor | None = None
    ) -> Tensor:
        r"""General route: ``Phi~_t(x, i)`` for every point of ``X`` (``batch x q x d``)
        and task ``i`` of ``tasks`` (``h`` indices; ``None``: all ``n``), ``batch x q x
        h x r``; with ``point_tasks`` (``q`` indices, unbatched ``X``) the task of each
        point alone, ``q x r``:

        .. math::
            \tilde\Phi_t(x, i) = \sum_l \sum_j (B_l)_{ij}
                \sum_{b:\, \tau_b = j} k_l(x, d_b) R_b,

        ``R`` the ``J x r`` root and ``(d_b, tau_b)`` the dictionary's columns: the
        kernel's columns are multiplied by the root one task of the dictionary at a
        time, then mixed by ``B_l``; ``O(q J r + q n h r)`` per term instead of the
        ``O(q h J r)`` of the ``q x h x J`` cross-covariance times the root (the same
        numbers, to round-off)."""
        D_X, D_tasks, _ = self._dictionary_columns()
        order = torch.argsort(D_tasks, stable=True)
        counts = torch.bincount(D_tasks, minlength=self.num_tasks).tolist()
        D_X, roots = D_X[order], self._root[order].split(counts)
        D_X = D_X.expand(*X.shape[:-2], *D_X.shape)
        phi = None
        for kernel, B in zip(self.kernel.kernels, self.kernel.task_covariances):
            kx = kernel(X, D_X).to_dense()  # batch x q x J
            per_task = [part @ root for part, root in zip(kx.split(counts, -1), roots)]
            per_task = torch.stack(per_task, -1)  # batch x q x r x n
            if point_tasks is not None:  # q x r: B_l[tau_a, :] mixes row a's tasks
                term = (per_task * B[point_tasks].unsqueeze(-2)).sum(-1)
            else:  # batch x q x h x r: one folded product
                B = B if tasks is None else B[tasks]  # h x n
                term = (per_task @ B.transpose(0, 1)).transpose(-1, -2)
            phi = term if phi is None else phi + term
        return phi

    def _white_blocks(self, blocks: Tensor) -> Tensor:
        """``S^{-1} Gamma~ S^{-1}``: posterior blocks (``... x n x n``) of the whitened
        function, whose norms Algorithm 2 draws with and whose log-dets enter Theorem 3."""
        scale = self._noise_scale
        return blocks if scale is None else blocks / (scale[:, None] * scale)

    def _blocks(self, X: Tensor) -> Tensor:
        """General route: per-point ``n x n`` posterior blocks at ``X`` (``k x 1 x d``)."""
        _, covariance = self._general_mean_and_covariance(X)
        return covariance.reshape(X.shape[0], 1, self.num_tasks, self.num_tasks)

    def _refresh_row_statistics(self) -> None:
        """Variances at every training row under the current sketch (for the next draw)."""
        candidates = self._candidates
        if candidates is not None:  # the candidates' variances, read at the rows
            components = candidates.components.clamp_min(0.0)  # N x n
            index = candidates.observed
            self._unit_norms = components.amax(-1)[index]
            self._unit_task_variances = (components @ self._U_out.square().transpose(0, 1))[index]
            return
        if self._use_icm:
            prior = self.kernel.kernels[0](self.train_X, self.train_X, diag=True)
            components = self._component_variances(self._train_embedding, prior).clamp_min(0.0)
            self._unit_norms = components.amax(-1)
            self._unit_task_variances = components @ self._U_out.square().transpose(0, 1)
            return
        if getattr(self, "_building", False) and self._full_vector:
            # the embedding of every task at every row is the rebuild's Z: blocks
            # Gamma(x, x) - Phi~^T Phi~ + eta Phi~^T (V~ + eta I)^{-1} Phi~ from it
            n, Z = self.num_tasks, self._train_embedding  # r x (t n)
            solved = torch.linalg.solve_triangular(self._chol, Z, upper=False)
            Z, solved = Z.reshape(Z.shape[0], -1, n), solved.reshape(Z.shape[0], -1, n)
            blocks = (
                self.kernel.diagonal_blocks(self.train_X)
                - torch.einsum("rsa,rsb->sab", Z, Z)
                + self.regularization * torch.einsum("rsa,rsb->sab", solved, solved)
            )
            self._unit_task_variances = blocks.diagonal(dim1=-2, dim2=-1).clamp_min(0.0)
            white = self._white_blocks(blocks)
            self._unit_norms = torch.linalg.eigvalsh(white).clamp_min(0.0)[:, -1]
            return
        if not self._full_vector:  # the rebuild's Z is Phi~ of every observation
            tasks = self.train_tasks
            prior = self.kernel.diagonal_blocks(self.train_X).diagonal(dim1=-2, dim2=-1)
            prior = prior.gather(-1, tasks.reshape(-1, 1)).reshape(-1)
            own = self._embedding_variances(self._train_embedding.transpose(0, 1), prior)
            self._unit_norms = self._white_own(own, tasks)
            self._unit_task_variances = None  # every task's: computed when asked for
            return
        norms, diagonal, _ = self._row_statistics(self.train_X, self.train_tasks)
        self._unit_norms, self._unit_task_variances = norms, diagonal

    def _icm_mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        kernel = self.kernel.kernels[0]
        batch, q, n = X.shape[:-2], X.shape[-2], self.num_tasks
        prior_k = kernel(X, X).to_dense()  # b x q x q
        xi, U = self._xi, self._U
        if self._root is None:
            mean_rotated = X.new_zeros(*batch, q, n)
            component = xi[:, None, None] * prior_k.unsqueeze(-3)
        else:
            D = self.train_X[self._dictionary]
            phi = kernel(X, D.expand(*batch, *D.shape)).to_dense() @ self._root  # b x q x r
            mean_rotated = phi @ self._alpha  # eq. (7) in the eigen-basis
            r = phi.shape[-1]
            columns = phi.reshape(-1, r).transpose(0, 1)  # r x (B q)
            solved = torch.linalg.solve_triangular(
                self._chol, columns.expand(self._chol.shape[0], r, -1), upper=False
            ).reshape(self._chol.shape[0], r, -1, q)  # g x r x B x q
            quad = torch.einsum("grba,grbc->bgac", solved, solved)[:, self._group_of]
            quad = quad.reshape(*batch, n, q, q)
            residual = prior_k - phi @ phi.transpose(-1, -2)  # k(x, x') - phi~^T phi~
            # eq. (8) before the max, for every pair of points
            component = xi[:, None, None] * (residual.unsqueeze(-3) + self.regularization * quad)
        U = self._U_out  # f - c = S g
        mean = mean_rotated @ U.transpose(0, 1) + self.prior_mean
        covariance = torch.einsum("...iac,ji,ki->...ajck", component, U, U)
        return mean, covariance.reshape(*batch, q * n, q * n)

    def _general_mean_and_covariance(
        self, X: Tensor, tasks: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x h`` and interleaved covariance ``batch x (q h) x (q h)`` of
        the tasks ``tasks`` (``h`` indices; ``None``: all ``n``)."""
        batch, q = X.shape[:-2], X.shape[-2]
        prior = self.kernel.full_covariance(X, X)  # batch x q x n x q x n
        prior_mean = self.prior_mean
        if tasks is not None:
            prior = prior[..., tasks, :, :][..., tasks]
            prior_mean = prior_mean[tasks]
        h = prior.shape[-1]
        prior = prior.reshape(*batch, q * h, q * h)
        if self._root is None:
            return X.new_zeros(*batch, q, h) + prior_mean, prior
        phi = self._task_embedding(X, tasks).reshape(*batch, q * h, -1)  # Phi~_t(x)^T rows
        mean = (phi @ self._alpha).reshape(*batch, q, h) + prior_mean
        r = phi.shape[-1]
        flat = phi.reshape(-1, r)  # (B q h) x r
        solved = torch.linalg.solve_triangular(  # rows (L^{-1} Phi~)^T: X L^T = Phi~^T
            self._chol.transpose(0, 1), flat, upper=True, left=False
        ).reshape(*batch, q * h, r)
        if q * h == 1:  # one variance per batch: no batch of 1 x 1 products
            reduction = phi.square().sum(-1, keepdim=True)
            quad = solved.square().sum(-1, keepdim=True)
        else:
            reduction = phi @ phi.transpose(-1, -2)
            quad = solved @ solved.transpose(-1, -2)
        covariance = prior - reduction + self.regularization * quad
        return mean, covariance

    def _attach_candidates(self, candidates: CandidatePosterior) -> bool:
        r"""Keep the sketch at the candidates (the class docstring): their kernel matrix
        ``K = K(D, D)`` (``N x N``), the count ``c_p`` of rows at candidate ``p``, ``S_p =
        sum_{s: x_s = p} U^T y_s`` and eqs. (7)-(8) at every candidate. On a finite
        domain every training row is a candidate, so each redraw of the dictionary
        (Algorithm 2) merges repeated dictionary points (``j`` copies with weights ``w_j``
        span what one column with weight ``sqrt(sum_j w_j^2)`` spans, with the same Gram
        operator, hence the same posterior) and reads

        .. math::
            \tilde\phi_t(D) = R^\top K_{u, D}, \qquad
            \tilde v_t = \tilde\phi_t(D) \operatorname{diag}(c) \tilde\phi_t(D)^\top, \qquad
            \sum_s \tilde\phi_t(x_s) y_s^\top U = \tilde\phi_t(D) S,

        for the ``m' <= N`` distinct dictionary points ``u`` (``R``: their ``m' x r``
        root): ``O(m'^3 + g r^2 N + n^2 N)`` per update instead of ``O(m^3 + m t d + g r^2
        (t + N))`` (``m`` counts repeats). The variances at the training rows (the next
        draw's probabilities) and at a new row are read off the candidates'; the draws,
        hence MT-BKB's and IT-BKB's runs, are the plain route's.

        Only the ICM route (a single separable term, full-vector data) with one domain
        of every task is tracked, when ``K(D, D)`` fits in ``max_entries`` and every
        training row is a candidate; a later row outside the candidates stops the
        tracking (the plain route from that update on).
        """
        points, num_points = candidates.points, candidates.points.shape[0]
        if not self._use_icm or candidates.offsets is not None:
            return False
        if num_points**2 > candidates.max_entries:
            return False
        index = candidates.locate_rows(self.train_X)
        if index is None:
            return False
        kernel = self.kernel.kernels[0]
        query = points.unsqueeze(-2)  # N x 1 x d: the layout of a posterior query
        prior = kernel(query, query).to_dense().reshape(num_points)
        gram = kernel(points, points).to_dense()  # N x N
        check_kernel_values(gram, points, "points")
        check_kernel_values(prior, points, "points")
        counts = torch.zeros(num_points, dtype=points.dtype, device=points.device)
        sums = points.new_zeros(num_points, self.num_tasks)  # S_p = sum U^T y_s
        candidates.prior, candidates.gram, candidates.observed = prior, gram, index
        candidates.counts = counts.index_add(0, index, torch.ones_like(index, dtype=points.dtype))
        rotated = self._white_targets(self.train_Y, None) @ self._U
        candidates.sums = sums.index_add(0, index, rotated)
        embedding = None
        if self._root is not None:  # the current sketch at the candidates
            D = self.train_X[self._dictionary]
            embedding = self._root.transpose(0, 1) @ kernel(D, points).to_dense()
        self._candidate_moments(candidates, embedding)
        return True

    def _record_candidate_rows(self, X: Tensor, Y: Tensor) -> None:
        """Add new rows to the candidates' counts and sums, or stop tracking when one
        of them is not a candidate."""
        index = self._candidates.locate_rows(X)
        if index is None:
            self._candidates = None
            return
        self._candidates.record(index, self._white_targets(Y, None) @ self._U)

    def _candidate_moments(self, candidates: CandidatePosterior, embedding: Tensor | None) -> None:
        """Eq. (8) before the max (``components``, ``N x n``) and the mean (``N x n``)
        at every candidate, from ``phi~`` there (``r x N``; ``None``: the prior)."""
        prior = candidates.prior
        if embedding is None:
            candidates.components = self._xi * prior[:, None]
            candidates.mean = prior.new_zeros(prior.shape[0], self.num_tasks) + self.prior_mean
            return
        candidates.components = self._component_variances(embedding, prior)
        mean_rotated = embedding.transpose(0, 1) @ self._alpha  # eq. (7) in the eigen-basis
        candidates.mean = mean_rotated @ self._U_out.transpose(0, 1) + self.prior_mean
