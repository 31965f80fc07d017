"""MT-BKB's Nystrom-sketched posterior of a multi-task GP, with a resampled dictionary.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 3.2 and Algorithm 2; the sketch
itself (draws, embeddings, eqs. (7)-(8), variances at rows) is ``models.nystrom_sketch``,
the build from data ``models.nystrom_build``, the candidates kept on a finite domain
``CandidatePosterior``.

Why this module is long: one model class whose public API (constructor, properties,
BoTorch's model methods, appends, conditioning) is documented with examples here.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import gpytorch
import torch
from botorch.exceptions.errors import UnsupportedError
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.kernels.separable_sum import TaskCovarianceLike
from botorch_mtucb.models.base import FixedKernelMultiTaskModel, eigen_groups
from botorch_mtucb.models.nystrom_build import (
    NystromBuild,
    check_chunk_size,
    check_update_schedule,
)
from botorch_mtucb.models.nystrom_sketch import NystromSketch
from botorch_mtucb.utils.checks import as_float, as_int, check_kernel_values

# The kernel-range check probes at most this many new rows at once (with the corners).
CHECK_BLOCK_ROWS = 256


class NystromVectorValuedGP(NystromSketch, NystromBuild, FixedKernelMultiTaskModel):
    r"""MT-BKB's sketched posterior with a dictionary resampled at every update.

    Given the dictionary ``D_t = {x_{i_1}, ..., x_{i_m}}`` with inclusion
    probabilities ``p``, the reweighted embedding ``G~_t(x)`` (``n m x n``, block ``j``:
    ``Gamma(x_{i_j}, x) / sqrt(p_{i_j})``) and Gram matrix ``G~_t`` give the Nystrom
    embedding ``Phi~_t(x) = (G~_t^{1/2})^+ G~_t(x)`` and (paper 000, Section 3.2)

    .. math::
        \tilde\mu_t(x) = \tilde\Phi_t(x)^\top (\tilde V_t + \eta I)^{-1}
            \sum_s \tilde\Phi_t(x_s) y_s, \qquad
        \tilde\Gamma_t(x, x') = \Gamma(x, x') - \tilde\Phi_t(x)^\top \tilde\Phi_t(x')
            + \eta \tilde\Phi_t(x)^\top (\tilde V_t + \eta I)^{-1} \tilde\Phi_t(x'),

    with ``V~_t = sum_s Phi~_t(x_s) Phi~_t(x_s)^T`` (the embedding, its routes and
    precision: ``models.nystrom_sketch``).

    **Dictionary (Algorithm 2).** Each update with new rows redraws the whole
    dictionary: every row ``x_i`` seen so far enters independently with probability
    ``p_i = min(q ||Gamma~(x_i, x_i)||, 1)``, where ``Gamma~`` is the posterior before
    the update and ``q = accuracy``. If no row is drawn, the row with the largest
    ``p_i`` is kept, so that **the dictionary is never empty** once there are data.
    Draws are reproducible: the ``k``-th resampling uses a generator seeded from
    ``(seed, k)`` unless a ``generator`` is passed to ``append_observations``. With
    every ``p_i = 1`` (large ``accuracy``) the sketch is the exact posterior of
    ``VectorValuedGP``. ``append_observations`` (MT-BKB's online update, one redraw per
    call) is Algorithm 2; the constructor replays its rows in chunks (``chunk_size``,
    ``models.nystrom_build``: what a chunked build guarantees).

    **Finite candidate sets.** ``track_candidates`` attaches a ``CandidatePosterior``
    with the candidates' kernel matrix, the rows' counts per candidate and the sketch's
    moments at every candidate: each redraw then costs ``O(m'^3 + g r^2 N)`` for ``m'
    <= N`` distinct dictionary points instead of the ``m x m`` ``eigh`` of the
    dictionary with its repeats and ``O(m t)`` kernel evaluations; the draws (hence
    MT-BKB's and IT-BKB's runs) are unchanged. Paper 000's policies attach it on a
    ``FiniteDomain``.

    **Prior mean and per-task noise.** The sketch is that of the whitened function ``g =
    S^{-1} (f - c)`` of ``FixedKernelMultiTaskModel``: Algorithm 2 run on ``g``, the
    exact posterior (mean ``c``, noise ``Lambda``) of the features projected on the
    dictionary's span (Lemma 8).

    **State.** ``state_dict`` holds the kernel, the data, ``prior_mean``,
    ``noise_variances``, the dictionary (indices and probabilities), the number of
    draws and ``sketched_log_det_sum`` (the history of the draws, which the state
    cannot recompute). ``load_state_dict`` rebuilds the sketch from the loaded
    dictionary exactly (no new draw); later draws continue the loaded stream
    (``seed``, ``accuracy`` and ``chunk_size`` are the receiving model's).

    **BoTorch's model API.** As ``VectorValuedGP``. ``condition_on_observations`` is
    MT-BKB's update (dictionary redrawn) for unbatched rows with the model's noise;
    batches (``fantasize``) and other noise variances keep the dictionary and condition
    the sketched posterior exactly (``condition_on_observations`` says why a redraw
    cannot serve them). A model of either route keeps ``append_observations`` and
    ``track_candidates``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import NystromVectorValuedGP
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> Y = torch.cat([torch.sin(6 * X), torch.cos(6 * X)], -1)  # 20 x 2
        >>> model = NystromVectorValuedGP(X, Y, RBFKernel(), B, 0.1, accuracy=2.0, seed=0)
        >>> 1 <= model.dictionary_size <= 20, model.num_resamplings  # adaptive chunks
        (True, 14)
        >>> replay = NystromVectorValuedGP(X, Y, RBFKernel(), B, 0.1, accuracy=2.0, chunk_size=1)
        >>> replay.num_resamplings  # Algorithm 2: one redraw per row
        20
        >>> model.posterior(torch.rand(3, 1, dtype=torch.float64)).mean.shape
        torch.Size([3, 2])
    """

    _num_outputs: int
    # Buffers whose size follows the data (load_state_dict accepts other sizes).
    _RESIZABLE_BUFFERS = ("train_X", "train_Y", "train_tasks", "_dictionary", "_probabilities")
    # Buffers computed from the state: carried by .to() and deepcopy, not by state_dict.
    _DERIVED_BUFFERS = (
        "_xi",
        "_U",
        "_group_of",
        "_group_xi",
        "_U_out",
        "_root",
        "_chol",
        "_alpha",
        "_train_embedding",
        "_moment",
        "_unit_norms",
        "_unit_task_variances",
    )

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        regularization: float | None = None,
        train_tasks: Tensor | None = None,
        accuracy: float = 100.0,
        seed: int = 0,
        chunk_size: int | str = "adaptive",
        *,
        update_schedule: str = "every",
        prior_mean: float | Sequence[float] | Tensor | None = None,
        noise_variances: float | Sequence[float] | Tensor | None = None,
    ) -> None:
        r"""Build the sketch from data, replaying MT-BKB's dictionary updates.

        Args:
            train_X: ``N x d`` inputs (``N`` may be 0: the prior).
            train_Y: ``N x n`` outputs (full-vector data) or ``N x 1`` with
                ``train_tasks`` (task-indexed data).
            data_kernel: A GPyTorch kernel, or a list of them (as ``VectorValuedGP``).
            task_covariance: ``n x n`` PSD tensor(s) or task-kernel module(s).
            regularization: The regularization ``eta > 0`` (required unless
                ``noise_variances`` is given).
            train_tasks: ``N`` task indices for task-indexed data, else ``None``.
            accuracy: ``q >= 1`` of Algorithm 2 (Theorem 3's value:
                ``botorch_mtucb.confidence.mt_bkb_accuracy(eps, delta, T)``).
            seed: Seed of the dictionary draws (an ``int``).
            chunk_size: How the rows are replayed when building from data (see
                "Building from data" above): ``"adaptive"`` (the default: chunks
                closed at ``ADAPTIVE_CHUNK_INFORMATION`` nats), or an int ``>= 1``
                of rows per redraw (``1``: Algorithm 2 exactly, one redraw per row).
                Later ``append_observations`` calls are not affected.
            update_schedule: When ``append_observations`` redraws the dictionary:
                ``"every"`` (the default: every call, Algorithm 2) or ``"adaptive"``
                (general route without tracked candidates: only once the information
                since the last redraw passes ``ADAPTIVE_CHUNK_INFORMATION``; in between
                the sketch is extended with the new rows, ``models.nystrom_build``).
            prior_mean: The constant prior mean ``c_i`` of each task (a number or
                ``n`` values; default zero).
            noise_variances: The noise variance ``lambda_i > 0`` of each task, in place
                of ``regularization`` (see "Prior mean and per-task noise" above).

        Raises:
            TypeError: As ``VectorValuedGP``, or a non-int ``seed``, or a
                ``chunk_size`` that is neither an int nor a string.
            ValueError: As ``VectorValuedGP`` (rows so far apart that the kernel
                overflows included, checked on the rows and the corners of their
                bounding box); also ``accuracy < 1`` (or not finite), and
                ``chunk_size < 1`` or a string other than ``"adaptive"``, and an
                ``update_schedule`` other than ``"every"`` or ``"adaptive"``.
        """
        super().__init__()
        accuracy = as_float(accuracy, "accuracy", finite=False)
        if not math.isfinite(accuracy) or accuracy < 1.0:
            raise ValueError(f"accuracy (the paper's q) must be finite and >= 1, got {accuracy}")
        seed = as_int(seed, "seed")
        chunk_size = check_chunk_size(chunk_size)
        check_update_schedule(update_schedule)
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
        self.accuracy = accuracy
        self.seed = seed
        self.chunk_size = chunk_size
        self.update_schedule = update_schedule
        self._pending_information = 0.0  # nats added since the last redraw (extensions)
        self._building = False  # True during an adaptive build (its faster routes)
        # The state: the data, the dictionary and the history of the draws (state_dict).
        empty_tasks = None if self._full_vector else train_X.new_zeros(0, dtype=torch.long)
        self.register_buffer("train_X", train_X.new_zeros(0, train_X.shape[-1]))
        self.register_buffer("train_Y", train_Y.new_zeros(0, train_Y.shape[-1]))
        self.register_buffer("train_tasks", empty_tasks)
        self.register_buffer("_dictionary", torch.zeros(0, dtype=torch.long, device=train_X.device))
        self.register_buffer("_probabilities", train_X.new_zeros(0))
        self.register_buffer("_log_det_sum", train_X.new_zeros(()))
        self.register_buffer(
            "_resamplings", torch.zeros((), dtype=torch.long, device=train_X.device)
        )
        # What the sketch computes from the state (rebuilt by load_state_dict).
        for name in self._DERIVED_BUFFERS:
            self.register_buffer(name, None, persistent=False)
        self._init_eigen_system()
        self._unit_norms = train_X.new_zeros(0)
        self._unit_task_variances = train_X.new_zeros(0, self.num_tasks)
        if chunk_size == "adaptive":
            self._build_adaptive(train_X, train_Y, train_tasks)
            return
        for start in range(0, train_X.shape[0], chunk_size):
            stop = start + chunk_size
            tasks = None if train_tasks is None else train_tasks[start:stop]
            self._append(train_X[start:stop], train_Y[start:stop], tasks, None, "train_X")

    def _init_eigen_system(self) -> None:
        """ICM route: the eigen-system of the whitened task covariance ``S^{-1} B S^{-1}``
        (``B`` with one noise level) and ``S U`` (``FixedKernelMultiTaskModel``)."""
        if not self._use_icm:
            return
        B = self._white_task_covariance(self.kernel.task_covariances[0])
        self._xi, self._U, self._group_of, self._group_xi = eigen_groups(B)
        self._U_out = self._output_basis(self._U)

    def _rebuild_state(self) -> None:
        """The sketch of the loaded state (``load_state_dict``): the loaded dictionary
        and its probabilities with the loaded kernel, data, mean and noise; the
        variances at the rows recomputed; a tracked candidate set tracked again."""
        t = self.train_X.shape[0]
        index, probabilities = self._dictionary, self._probabilities
        if index.dim() != 1 or probabilities.shape != index.shape:
            raise ValueError(
                "state_dict's _dictionary and _probabilities must be m indices and their m "
                f"probabilities, got shapes {tuple(index.shape)} and {tuple(probabilities.shape)}"
            )
        if (index.numel() == 0) != (t == 0) or (t and (index.min() < 0 or index.max() >= t)):
            raise ValueError(
                f"state_dict's _dictionary must hold indices in [0, {t - 1}] of the training "
                f"rows (at least one once there are rows), got {index.tolist()}"
            )
        if not ((probabilities > 0) & (probabilities <= 1)).all():
            raise ValueError("state_dict's _probabilities must lie in (0, 1]")
        candidates = self._candidates
        self._candidates = None
        self._pending_information = 0.0  # the loaded sketch: a fresh rebuild
        with torch.no_grad(), gpytorch.settings.lazily_evaluate_kernels(False):
            self._init_eigen_system()
            if t:
                self._rebuild()
                self._refresh_row_statistics()
            else:
                self._root = self._chol = self._alpha = self._train_embedding = None
                self._unit_norms = self.train_X.new_zeros(0)
                self._unit_task_variances = self.train_X.new_zeros(0, self.num_tasks)
        self._track_again(candidates)

    # ------------------------------------------------------------------ properties
    @property
    def dictionary_size(self) -> int:
        """``m_t``: the number of rows (full-vector data) or scalar observations
        (task-indexed data) in the dictionary; ``>= 1`` once there are data."""
        return int(self._dictionary.numel())

    @property
    def dictionary(self) -> Tensor:
        """Indices (into the training rows) of the dictionary, ``m_t`` (long)."""
        return self._dictionary

    @property
    def inclusion_probabilities(self) -> Tensor:
        """``p_{t, i}`` of the dictionary's rows, ``m_t`` (in ``(0, 1]``)."""
        return self._probabilities

    @property
    def embedding_dimension(self) -> int:
        """``r``: the number of kept eigen-directions of ``G~_t`` (0 without data)."""
        return 0 if self._root is None else int(self._root.shape[-1])

    @property
    def num_resamplings(self) -> int:
        """How many times the dictionary has been drawn."""
        return self._num_resamplings

    @property
    def _num_resamplings(self) -> int:
        return int(self._resamplings)

    @property
    def sketched_log_det_sum(self) -> Tensor:
        r"""``sum_s log det(I_n + Gamma~_{s-1}(x_s, x_s) / eta)`` (a 0-d tensor, nats).

        The data-dependent term of Theorem 3's width: each row's ``n x n`` posterior
        block (``1 x 1`` for task-indexed data) under the model before the update that
        added it (rows added together use the same earlier model).
        """
        return self._log_det_sum

    @property
    def train_variances(self) -> Tensor:
        r"""``diag(Gamma~_t(x_s, x_s))`` at the training rows: ``N x n`` (the outputs'
        variances, ``S^2`` times the whitened function's with per-task noise)."""
        if self._unit_task_variances is None:  # task-indexed data: computed when asked
            with torch.no_grad(), gpytorch.settings.lazily_evaluate_kernels(False):
                self._unit_task_variances = self._indexed_row_variances(self.train_X)
        return self._unit_task_variances

    # ------------------------------------------------------ finite candidate sets

    # ------------------------------------------------------------- dictionary

    # ---------------------------------------------------------------- sketches

    # ------------------------------------------------------- variances at rows

    # ------------------------------------------------------------------ posterior
    def _mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x n`` and covariance ``batch x (q n) x (q n)`` (interleaved)."""
        candidates = self._candidates
        index = None if candidates is None else candidates.locate(X)
        if index is not None:
            return candidates.sketch_moments(index, self._U_out)
        if self._use_icm:
            return self._icm_mean_and_covariance(X)
        return self._general_mean_and_covariance(X)

    def _task_moments(self, X: Tensor, tasks: Tensor) -> tuple[Tensor, Tensor] | None:
        """The general route computes the embedding of the selected tasks alone."""
        if self._candidates is not None or self._use_icm:
            return None
        return self._general_mean_and_covariance(X, tasks)

    def condition_on_observations(
        self,
        X: Tensor,
        Y: Tensor,
        *,
        noise: Tensor | None = None,
        train_tasks: Tensor | None = None,
        generator: torch.Generator | None = None,
        resample_dictionary: bool | None = None,
    ) -> NystromVectorValuedGP:
        r"""A new model conditioned on ``(X, Y)`` as well; ``self`` is not modified.

        Two updates (``resample_dictionary``):

        * ``True`` (the default for unbatched rows of the model's kind with the model's
          noise, ``eta`` or each task's ``lambda_i``): MT-BKB's update of Algorithm 2 on
          a copy (``append_observations``: the dictionary is redrawn with the current
          variances, the sketch rebuilt).
        * ``False`` (the default otherwise: batched ``X`` / ``Y`` such as BoTorch's
          fantasies, other ``noise`` variances, rows of the other kind): the
          dictionary is kept and the sketched posterior ``(mu~_t, Gamma~_t)``, a
          Gaussian process, is conditioned on the new observations exactly (Gaussian
          conditioning, ``models.conditioning``; the same code as ``VectorValuedGP``).
          A redraw cannot serve a batch: each batch element (each fantasy, each
          candidate set of ``qKnowledgeGradient``) would draw its own dictionary of its
          own size, at random and not differentiably in ``X``; and Algorithm 2's
          embedding assumes the model's noise variances.

        Fantasies (``fantasize``) use the second update: they are drawn from
        ``Gamma~_t`` plus noise and conditioned under the same process, so they are
        consistent with the sketched posterior. The model's own sketch (dictionary,
        ``sketched_log_det_sum``) stays that of its rows.

        Args:
            X, Y, noise, train_tasks: As ``VectorValuedGP.condition_on_observations``.
            generator: Replaces the seeded stream of the redraw (``True`` only).
            resample_dictionary: ``None``: as above; ``True`` / ``False`` to choose.

        Raises:
            UnsupportedError: For ``resample_dictionary=True`` with batched rows, other
                noise variances or rows of the other kind.
            TypeError, ValueError: As ``VectorValuedGP.condition_on_observations``,
                and a ``generator`` without a redraw.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import NystromVectorValuedGP
            >>> X = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)
            >>> model = NystromVectorValuedGP(X, X.repeat(1, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> model.condition_on_observations(X[:1], X[:1].repeat(1, 2)).num_resamplings
            7
            >>> batched = model.condition_on_observations(  # 3 batches, dictionary kept
            ...     torch.rand(3, 2, 1, dtype=torch.float64),
            ...     torch.rand(3, 2, 2, dtype=torch.float64),
            ... )
            >>> batched.batch_shape, batched.num_resamplings
            (torch.Size([3]), 6)
        """
        own_kind = self._updates_in_place(X, Y, noise, train_tasks)
        if resample_dictionary is None:
            resample_dictionary = own_kind
        if resample_dictionary:
            if not own_kind:
                raise UnsupportedError(
                    "resample_dictionary=True (MT-BKB's update, Algorithm 2) takes unbatched "
                    "rows of the model's kind with its own noise, on a model that is not "
                    "conditioned or subset already; pass resample_dictionary=False to "
                    "condition the sketched posterior exactly with the dictionary kept"
                )
            return copy.deepcopy(self).append_observations(X, Y, train_tasks, generator)
        if generator is not None:
            raise ValueError(
                "generator is used only when the dictionary is redrawn (resample_dictionary=True)"
            )
        return self._conditioned(X, Y, noise, train_tasks)

    def append_observations(
        self,
        X: Tensor,
        Y: Tensor,
        train_tasks: Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> NystromVectorValuedGP:
        r"""One MT-BKB update in place: add the rows, redraw ``D_t`` with the current
        variances, rebuild the sketch. Returns ``self``.

        Same arguments and errors as ``condition_on_observations``; ``generator``
        (optional) replaces the model's own seeded stream for this draw.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import NystromVectorValuedGP
            >>> X = torch.linspace(0, 1, 4, dtype=torch.float64).unsqueeze(-1)
            >>> model = NystromVectorValuedGP(X, X.repeat(1, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> generator = torch.Generator().manual_seed(0)  # instead of the seeded stream
            >>> model = model.append_observations(X[:1], X[:1].repeat(1, 2), generator=generator)
            >>> model.num_resamplings, model.train_X.shape[0]
            (5, 5)
        """
        return self._append(X, Y, train_tasks, generator, "X", self.update_schedule == "adaptive")

    def _append(
        self,
        X: Tensor,
        Y: Tensor,
        train_tasks: Tensor | None,
        generator: torch.Generator | None,
        name: str,
        adaptive: bool = False,
    ) -> NystromVectorValuedGP:
        """``append_observations``; ``name`` is the argument that errors about the
        kernel's range blame (``train_X`` when the constructor replays its rows);
        ``adaptive``: redraw only past the information threshold (``_extends``)."""
        X, Y, tasks = self._check_new_data(X, Y, train_tasks)
        if X.shape[0] == 0:
            return self
        with torch.no_grad():
            self._check_new_rows(X, name)
            statistics = self._row_statistics(X, tasks)
            if adaptive and self._extends(statistics[2]):
                self._extend_rows(X, Y, tasks, statistics)
            else:
                self._add_rows(X, Y, tasks, statistics, generator)
            self._refit_conditioning()
        return self

    def _add_rows(
        self,
        X: Tensor,
        Y: Tensor,
        tasks: Tensor | None,
        statistics: tuple[Tensor, Tensor, Tensor],
        generator: torch.Generator | None,
    ) -> None:
        """Add checked rows with their ``_row_statistics`` under the current sketch,
        redraw the dictionary from every row's variances and rebuild the sketch."""
        if self._candidates is not None:
            self._record_candidate_rows(X, Y)
        self._store_rows(X, Y, tasks, statistics)
        self._pending_information = 0.0
        self._resample(self._unit_norms, generator)
        self._rebuild()
        self._refresh_row_statistics()

    def _check_new_rows(self, X: Tensor, name: str) -> None:
        """Before any state changes, the kernel is finite on the new rows ``X`` and the
        corners of the box spanned by every row (``1e300 * X`` overflows): an
        ``(m + 2) x (m + 2)`` evaluation per kernel term, in place of the ``t x t``
        matrix the sketch never forms. The new rows are probed ``CHECK_BLOCK_ROWS`` at
        a time (with the corners), so that a large chunk costs linear time. Skipped
        when the candidates are tracked and ``X`` is among them: every row is then a
        candidate, and ``track_candidates`` checked the kernel on every pair of them."""
        candidates = self._candidates
        if candidates is not None and candidates.locate_rows(X) is not None:
            return
        rows = torch.cat([self.train_X, X])
        corners = torch.cat([rows.amin(0, keepdim=True), rows.amax(0, keepdim=True)])
        for block in X.split(CHECK_BLOCK_ROWS):
            probe = torch.cat([block, corners])
            for kernel in self.kernel.kernels:
                check_kernel_values(kernel(probe, probe).to_dense(), X, name)
