r"""Building MT-BKB's sketch from data: the rows replayed in chunks (``chunk_size``).

The constructor of ``NystromVectorValuedGP`` replays its rows in order, in chunks; each
chunk is added in one update (one redraw of the dictionary, Algorithm 2 of paper 000),
the probabilities of all rows computed with the sketch of the rows before the chunk.

* ``chunk_size=1`` is Algorithm 2 exactly (the dictionary MT-BKB would hold after
  playing the rows): ``N`` redraws, each rebuilding the sketch on all rows so far.
* ``chunk_size="adaptive"`` (the default), after Calandriello et al. 2020 (adaptive
  batching): a chunk is the longest run of the next rows whose information under the
  current sketch, ``sum_s log(1 + c_i(x_s) / eta)`` in every eigen-direction ``u_i`` of
  ``B`` on the ICM route (``sum_s log det(I + Gamma~(x_s, x_s) / eta)`` otherwise), is at
  most ``ADAPTIVE_CHUNK_INFORMATION = log 2``; but at least ``t / 8`` rows for ``t`` rows
  already in, at least one and at most ``max(64, t)``: ``O(log N)`` redraws. During the
  build the kernels are evaluated eagerly, repeated dictionary points are merged (ICM)
  and the general route evaluates each data kernel once per pair of points. It is the
  default because building from data is about the model, not about replaying a bandit:
  nothing is chosen between the rows, and one redraw per row costs ``O(N^2)`` kernel
  evaluations for nothing the model uses (benchmark ``mt-bkb-scaling``).
* an int ``c > 1``: fixed chunks of ``c`` rows.

*What a chunked build guarantees.* Posterior variances only shrink with data, so a
row's batched probability ``min(q ||Gamma~_prev(x_i, x_i)||, 1)`` is at least the one
Algorithm 2 would use at the chunk's last row, up to the factors ``rho = (1 + eps) / (1 -
eps)`` of the accuracy event (Lemma 10). The accuracy argument of Lemma 7 / Theorem 3
only needs probabilities of at least ``q`` times (approximate) posterior variances, so
it carries over with the same ``q``, one event per redraw (at most ``N <= T`` redraws:
``q`` for the horizon ``T`` covers them). Likewise ``sketched_log_det_sum`` sums stale,
larger variances, so eq. (21) and Theorem 3's width stay valid (conservative, slightly
wider). What is lost is the size bound on ``m_t``: the probabilities can exceed
Algorithm 2's by the factor ``exp(L)``, ``L`` the chunk's information under the previous
sketch (for Gaussian conditioning ``Var_prev / Var_after <= det(I + K_chunk / eta) <=
exp(L)``, Fischer's inequality; per eigen-direction on the ICM route; exact for a fixed
dictionary, up to ``rho`` across redraws), so Lemma 7's bound on ``m_t`` holds with an
extra factor ``exp(L) <= 2`` while the information threshold closes the chunks; where
the ``t / 8`` floor extends a chunk (late in a build, when each row adds little
information) ``L`` is larger and no factor is guaranteed. These are arguments from the
paper's proofs, not a re-derived theorem; Theorem 3's regret bound is about the bandit,
which plays one row at a time, and is not claimed for a build from data. With fixed
chunks no size factor is guaranteed.

*On features of the distinct rows* (``models.nystrom_features``). On the ICM route in
float64 the adaptive build runs its redraws on a low-rank factor ``k(P, P) = F F^T`` of
the data kernel on the ``u`` distinct rows (pivoted Cholesky): the same chunks and the
same draws (one uniform per row from the seeded stream, with the rows' variances equal
to the row route's up to round-off), each redraw in a few operations on ``u x rho``
tensors instead of kernel evaluations and solves on all ``t`` rows; the last redraw's
sketch is the model's (the root ``S_+^{-1} phi~(x_j) / p_j`` of each dictionary row: the
posterior of the same dictionary). Other builds (float32, sums of separable kernels,
task-indexed data, or no factor of at most ``FEATURE_MAX_RANK`` columns) run on the
rows.

*Appends between redraws* (``update_schedule="adaptive"`` of the model; the default
``"every"`` is Algorithm 2, one redraw per ``append_observations``). On the general route
without tracked candidates an append keeps the dictionary while the information added
since the last redraw, the sum of the new rows' ``log det(I + Gamma~(x_s, x_s) / eta)``
under the sketch current at their arrival, stays within ``ADAPTIVE_CHUNK_INFORMATION``;
the first append past it redraws (from every row's variances: the stored ones of the
older rows, stale hence larger, as in a chunked build). Between redraws the sketch is
extended, not approximated: the new rows' embedding ``Phi~_t(x_s)`` under the kept root
joins ``V~_t`` by a rank-one update of ``chol(V~_t + eta I)`` per scalar observation
(``O(r^2)`` each, ``r <= m``) and ``sum_s Phi~_t(x_s) y_s``, so the posterior is that of a
rebuild from the same data and dictionary, to round-off. For a fixed dictionary the
sketched posterior is a Gaussian posterior (of the projected features), so the sum of
the arrivals' information is the joint ``log det(I + K_chunk / eta)`` of the rows since
the redraw under the sketch before them (chain rule): the factor ``exp(L) <= 2`` above
applies to these chunks, with no ``t / 8`` floor (an append never waits for more rows).
"""

from __future__ import annotations

import math

import gpytorch
import torch
from torch import Tensor

from botorch_mtucb.models.nystrom_features import (
    FEATURE_GRAM_POINTS,
    FEATURE_MAX_RANK,
    FeatureSketch,
    pivoted_features,
    small_product,
)
from botorch_mtucb.utils.checks import as_int, check_kernel_values

# A chunk of new rows is closed before its information under the sketch it is drawn
# from, sum_s log det(I + Gamma~(x_s, x_s) / eta), exceeds this many nats, so that no
# variance the chunk's draw uses is more than e^(this) = 2 times stale (module docstring).
ADAPTIVE_CHUNK_INFORMATION = math.log(2.0)
# A chunk has at least this fraction of the rows already in (at most 1 / this redraws
# per doubling of the data: O(log N) in all), even past ADAPTIVE_CHUNK_INFORMATION.
ADAPTIVE_MIN_CHUNK_FRACTION = 1.0 / 8.0
# Rows whose statistics the adaptive schedule evaluates before it picks the first chunk,
# and at least afterwards (twice the last chunk, at most the rows already in).
ADAPTIVE_MIN_WINDOW = 64


class NystromBuild:
    """The adaptive build of ``NystromVectorValuedGP`` from data (a mixin of the model).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import NystromVectorValuedGP
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> Y = X.sin().repeat(1, 2)
        >>> adaptive = NystromVectorValuedGP(X, Y, RBFKernel(), torch.eye(2), 0.1)
        >>> replay = NystromVectorValuedGP(X, Y, RBFKernel(), torch.eye(2), 0.1, chunk_size=1)
        >>> adaptive.num_resamplings < replay.num_resamplings == 30
        True
    """

    def _build_adaptive(self, X: Tensor, Y: Tensor, tasks: Tensor | None) -> None:
        """The adaptive schedule on the constructor's checked rows: each chunk is the
        longest run of the next rows whose information under the current sketch stays
        within ``ADAPTIVE_CHUNK_INFORMATION`` in every direction (``_row_information``;
        at least one row, at most ``max(ADAPTIVE_MIN_WINDOW, rows already in)``); one
        redraw per chunk. Kernels are evaluated eagerly (no lazy kernel tensors: the
        same values, less overhead). On the ICM route in float64 the redraws run on
        features of the distinct rows (``_build_on_features``) when the kernel has a
        small enough factor there."""
        if X.shape[0] == 0:
            return
        self._building = True
        try:
            with torch.no_grad(), gpytorch.settings.lazily_evaluate_kernels(False):
                points, inverse = torch.unique(X, dim=0, return_inverse=True)
                if self._use_icm and X.dtype == torch.float64:
                    found = self._features_of(points)  # the kernel checked on the points
                    if found is not None:
                        self._build_on_features(X, Y, inverse, *found)
                        return
                else:
                    self._check_new_rows(points, "train_X")  # the distinct rows, in blocks
                start, last = 0, 0
                while start < X.shape[0]:
                    last = self._add_adaptive_chunk(X, Y, tasks, start, last)
                    start += last
        finally:
            self._building = False

    def _features_of(self, points: Tensor) -> tuple[Tensor, Tensor] | None:
        """The data kernel's factor on the distinct rows ``points`` (``u x d``) and its
        diagonal (``pivoted_features``), or ``None``; either way the kernel is checked
        on the points and the corners of their box, as ``_check_new_rows`` does: in the
        same evaluation as the factor's columns for ``u <= FEATURE_GRAM_POINTS``."""
        kernel, num_points = self.kernel.kernels[0], points.shape[0]
        if num_points > FEATURE_GRAM_POINTS:
            self._check_new_rows(points, "train_X")
            prior = kernel(points, points, diag=True)
            factor = pivoted_features(
                lambda j: kernel(points, points[j : j + 1]).to_dense()[:, 0],
                prior,
                max_rank=FEATURE_MAX_RANK,
            )
        else:
            corners = torch.cat([points.amin(0, keepdim=True), points.amax(0, keepdim=True)])
            probe = torch.cat([points, corners])
            values = kernel(probe, probe).to_dense()
            check_kernel_values(values, points, "train_X")
            gram = values[:num_points, :num_points]
            prior = gram.diagonal()
            factor = pivoted_features(lambda j: gram[:, j], prior, max_rank=FEATURE_MAX_RANK)
        return None if factor is None else (factor, prior)

    def _build_on_features(
        self, X: Tensor, Y: Tensor, inverse: Tensor, features: Tensor, prior: Tensor
    ) -> None:
        """The adaptive schedule of ``_build_adaptive`` with each redraw's variances read
        at the distinct rows from their features (``models.nystrom_features``: the same
        chunks and draws); the last redraw's sketch is the model's."""
        sketch = FeatureSketch(
            features, prior, self._xi, self._group_xi, self._group_of, self.regularization
        )
        # First what has the rows' size (t x n), next to the kernel's evaluation: the rows
        # stored, the whitened targets summed per point and each row's cell in a u x n
        # table; the redraws then work on the u points alone.
        self.train_X, self.train_Y = torch.cat([self.train_X, X]), torch.cat([self.train_Y, Y])
        targets = self._white_targets(Y, None).transpose(0, 1)  # n x t
        n, u = targets.shape[0], features.shape[0]
        sums = targets.new_zeros(n, u).index_add_(1, inverse, targets).transpose(0, 1)  # u x n
        cells = (inverse.unsqueeze(-1) * n + torch.arange(n, device=inverse.device)).reshape(-1)
        components = sketch.prior_components()  # u x n, under the current sketch
        start, last = 0, 0
        while start < X.shape[0]:
            stop = _window_stop(X.shape[0], start, last)
            information = sketch.information(components).index_select(0, inverse[start:stop])
            last = _chunk_rows(information, start, stop)
            self._log_det_sum = self._log_det_sum + information[:last].sum()
            sketch.add_rows(inverse[start : start + last])
            start += last
            # Algorithm 2's draw from every row's variance under the previous sketch
            self._resample(components.amax(-1).index_select(0, inverse[:start]), None)
            dictionary = inverse.index_select(0, self._dictionary)
            components = sketch.redraw(dictionary, self._probabilities.reciprocal())
        # the last redraw's sketch in the eigenbasis of v~_t, where each xi_g v~_t + eta I
        # is diagonal: its Cholesky factor is the root of its diagonal, eq. (7) a division
        self._root = sketch.root(dictionary, self._probabilities)  # m x r
        diagonal = self._group_xi[:, None] * sketch.eigenvalues + self.regularization  # g x r
        self._chol = torch.diag_embed(diagonal * diagonal.rsqrt())
        rotated = small_product(sketch.embedding(), small_product(sums, self._U))  # r x n
        self._alpha = rotated / diagonal.index_select(0, self._group_of).transpose(0, 1) * self._xi
        # phi~ at every row is read only after a rebuild, which recomputes it
        self._train_embedding = None
        self._unit_norms = components.amax(-1).index_select(0, inverse)
        variances = small_product(components, self._U_out.square().transpose(0, 1))  # u x n
        self._unit_task_variances = variances.reshape(-1).index_select(0, cells).reshape(-1, n)

    def _extends(self, log_det: Tensor) -> bool:
        """Whether an append of rows with these ``log det`` (``k``) keeps the dictionary
        (``update_schedule="adaptive"``): general route, no tracked candidates, a
        sketch to extend, and the information since the last redraw within
        ``ADAPTIVE_CHUNK_INFORMATION`` (module docstring)."""
        if self._use_icm or self._candidates is not None or self._root is None:
            return False
        total = self._pending_information + float(log_det.sum())
        return total <= ADAPTIVE_CHUNK_INFORMATION

    def _extend_rows(
        self, X: Tensor, Y: Tensor, tasks: Tensor | None, statistics: tuple[Tensor, Tensor, Tensor]
    ) -> None:
        """Add checked rows with the dictionary kept: their embedding under the current
        root joins ``chol(V~ + eta I)`` (rank-one updates) and ``sum Phi~ y``; the
        older rows' variances are not refreshed (module docstring)."""
        D_X, D_tasks, _ = self._dictionary_columns()
        obs_X, obs_tasks, obs_y = self._scalar_observations(X, Y, tasks)
        cross = self.kernel.observation_covariance(D_X, D_tasks, obs_X, obs_tasks)  # J x k
        Z = self._root.transpose(0, 1) @ cross  # r x k: Phi~_t of each new observation
        # Z of every row is read only after a rebuild (_refresh_row_statistics), which
        # recomputes it: not kept in between (a copy of r x t numbers per append)
        self._train_embedding = None
        Z, white_y = self._whitened(Z, obs_y, obs_tasks)
        self._chol = _cholesky_update(self._chol, Z)
        self._moment = self._moment + Z @ white_y
        self._alpha = torch.cholesky_solve(self._moment.unsqueeze(-1), self._chol).squeeze(-1)
        self._pending_information += float(statistics[2].sum())
        self._store_rows(X, Y, tasks, statistics)

    def _store_rows(
        self, X: Tensor, Y: Tensor, tasks: Tensor | None, statistics: tuple[Tensor, Tensor, Tensor]
    ) -> None:
        """Append the rows and their statistics under the current sketch to the state."""
        norms, diagonal, log_det = statistics
        self._log_det_sum = self._log_det_sum + log_det.sum()
        self.train_X = torch.cat([self.train_X, X])
        self.train_Y = torch.cat([self.train_Y, Y])
        if tasks is not None:
            self.train_tasks = torch.cat([self.train_tasks, tasks])
        self._unit_norms = torch.cat([self._unit_norms, norms])
        if diagonal is None or self._unit_task_variances is None:  # task-indexed rows
            self._unit_task_variances = None  # refreshed or computed when asked
        else:
            self._unit_task_variances = torch.cat([self._unit_task_variances, diagonal])

    def _add_adaptive_chunk(
        self, X: Tensor, Y: Tensor, tasks: Tensor | None, start: int, last: int
    ) -> int:
        """Add the next chunk from row ``start`` (``last``: the previous chunk's size);
        returns its size."""
        stop = _window_stop(X.shape[0], start, last)
        window = None if tasks is None else tasks[start:stop]
        norms, diagonal, log_det, information = self._row_information(X[start:stop], window)
        count = _chunk_rows(information, start, stop)
        end = start + count
        self._add_rows(
            X[start:end],
            Y[start:end],
            None if tasks is None else tasks[start:end],
            (norms[:count], None if diagonal is None else diagonal[:count], log_det[:count]),
            None,
        )
        return count


def _window_stop(num_rows: int, start: int, last: int) -> int:
    """The end of the rows whose information the next chunk (from row ``start``, after
    a chunk of ``last`` rows) is chosen among: twice the last chunk, at least
    ``ADAPTIVE_MIN_WINDOW`` and at most ``max(start, ADAPTIVE_MIN_WINDOW)`` rows."""
    width = min(max(2 * last, ADAPTIVE_MIN_WINDOW), max(start, ADAPTIVE_MIN_WINDOW))
    return min(num_rows, start + width)


def _chunk_rows(information: Tensor, start: int, stop: int) -> int:
    """The rows of the chunk from row ``start``: the longest run whose running
    information (``information``: ``(stop - start) x h``, nats) stays within
    ``ADAPTIVE_CHUNK_INFORMATION`` in every direction, at least ``start *
    ADAPTIVE_MIN_CHUNK_FRACTION`` rows and one, at most ``stop - start``."""
    # information >= 0: the running sums are non-decreasing
    within = (torch.cumsum(information, 0) <= ADAPTIVE_CHUNK_INFORMATION).all(-1)
    floor = math.ceil(start * ADAPTIVE_MIN_CHUNK_FRACTION)
    return min(max(int(within.sum()), floor, 1), stop - start)


def _cholesky_update(chol: Tensor, columns: Tensor) -> Tensor:
    """The lower Cholesky factor of ``L L^T + C C^T`` (``L = chol``: ``r x r``; ``C =
    columns``: ``r x k``), by ``k`` rank-one updates (Givens-like rotations of ``L``'s
    columns; ``O(k r^2)``, no downdate hence no loss of positive definiteness)."""
    L, x = chol.clone(), columns.clone()
    for j in range(x.shape[-1]):
        v = x[:, j]
        for i in range(L.shape[0]):
            diagonal = L[i, i]
            radius = torch.hypot(diagonal, v[i])
            c, s = radius / diagonal, v[i] / diagonal
            L[i, i] = radius
            if i + 1 < L.shape[0]:
                below = (L[i + 1 :, i] + s * v[i + 1 :]) / c
                v[i + 1 :] = c * v[i + 1 :] - s * below
                L[i + 1 :, i] = below
    return L


def check_chunk_size(chunk_size: int | str) -> int | str:
    """``"adaptive"`` or an int ``>= 1`` (the constructor's ``chunk_size``).

    Raises:
        ValueError: For a string other than ``"adaptive"`` or an int ``< 1``.
        TypeError: For anything else.

    Example:
        >>> from botorch_mtucb.models.nystrom_build import check_chunk_size
        >>> check_chunk_size("adaptive"), check_chunk_size(8)
        ('adaptive', 8)
    """
    if isinstance(chunk_size, str):
        if chunk_size != "adaptive":
            raise ValueError(f"chunk_size must be an int >= 1 or 'adaptive', got {chunk_size!r}")
        return chunk_size
    return as_int(chunk_size, "chunk_size", 1)


def check_update_schedule(update_schedule: str) -> str:
    """``"every"`` or ``"adaptive"`` (the constructor's ``update_schedule``).

    Raises:
        ValueError: For anything else.

    Example:
        >>> from botorch_mtucb.models.nystrom_build import check_update_schedule
        >>> check_update_schedule("adaptive")
        'adaptive'
    """
    if update_schedule not in ("every", "adaptive"):
        raise ValueError(f"update_schedule must be 'every' or 'adaptive', got {update_schedule!r}")
    return update_schedule
