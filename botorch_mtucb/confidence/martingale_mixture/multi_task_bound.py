r"""Paper 002's martingale-mixture bounds for multi-task kernels.

A vector-valued RKHS with kernel ``Gamma(x, x') = sum_j k_j(x, x') B_j`` (paper 000,
Section 2) is a scalar RKHS on ``X x [n]`` with the kernel ``K((x, i), (x', j)) =
Gamma(x, x')_{ij}`` and the same norm (paper 000, Remark 2). Every observation, a full
vector (paper 000: all ``n`` tasks at ``x_s``) or one task (paper 001: task ``i_s`` at
``x_s``), is a scalar observation of that function at ``(x, i)``; with noise components
that are conditionally ``sigma``-sub-Gaussian (independent across the tasks of a round,
as in the papers' experiments), paper 002's radius (eq. (8)), confidence set (Lemma 4.2)
and dual (eq. (12)) apply unchanged to the ``M`` scalar observations.

For a linear functional ``L(f) = w^T f(x)`` the bound ``max_{f in F_t} L(f)`` is the same
one-dimensional dual (eq. (12)) with ``k_t(x)`` replaced by the functional's representer
evaluated at the data, ``(w^T Gamma(x, x_s) e_{i_s})_s``, and ``k(x, x)`` by ``w^T
Gamma(x, x) w`` (the representer of ``L`` is ``Gamma(., x) w``: ``L(f) = <f, Gamma(., x)
w>``, so the argument of Lemma 4.2 and Theorem 4.4 goes through with it): exact
(CMM), grid (DMM) and analytic (AMM) bounds on any ``w^T f(x)``, per-task bounds
``w = e_i`` included, lower bounds mirrored.

``MultiTaskMartingaleMixtureBound`` is the one bound (``bound_base.MartingaleMixtureBoundBase``)
with the scalar observations as data and the functionals ``w`` as weights; its spectrum
is that of ``K_t (x) B`` for one ICM term and full-vector data (``kronecker``:
``O(t^3 + n^3)`` per data set, never ``(n t)^3``) and the dense ``M x M`` Gram matrix
otherwise (``spectra.DenseSpectrum``: sums of separable terms, task-indexed data), both
folded over repeated inputs (``repeated_inputs``).

Source: paper 002, Section 4 (eqs. (8), (10), (12), Lemma 4.2, Cor. 4.3/4.6), applied
to the scalar kernel of paper 000, Section 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.bound_base import MartingaleMixtureBoundBase
from botorch_mtucb.confidence.martingale_mixture.gram_cache import check_alpha_grid
from botorch_mtucb.confidence.martingale_mixture.hallucination import PendingInputs
from botorch_mtucb.confidence.martingale_mixture.kronecker import KroneckerSpectrum
from botorch_mtucb.confidence.martingale_mixture.mixture_checks import (
    check_query_points,
    check_sum_of_squares,
)
from botorch_mtucb.confidence.martingale_mixture.spectra import DenseSpectrum, ObservationSpectrum
from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels, TaskCovarianceLike
from botorch_mtucb.kernels.task_checks import check_task_covariance, check_task_indices
from botorch_mtucb.utils.checks import check_finite_result, check_kernel_values, check_positive

_DTYPE = torch.float64


class MultiTaskMartingaleMixtureBound(MartingaleMixtureBoundBase):
    r"""Exact, grid and analytic martingale-mixture bounds on ``w^T f(x)`` for a
    multi-task kernel ``Gamma = sum_j k_j B_j`` (module docstring).

    With probability ``1 - delta`` (for all ``t`` at once), if ``||f||_Gamma <= B`` and
    the noise of each scalar observation is conditionally ``sigma``-sub-Gaussian:
    ``lower(x, w) <= w^T f(x) <= upper(x, w)`` for every ``x`` and ``w``.

    * ``alphas=None``: the exact bound ``max_{f in F_t} w^T f(x)`` (eq. (10) via the dual
      of eq. (12)), the multi-task CMM bound;
    * a grid of ``alphas``: the minimum of eq. (12) over it (DMM);
    * one ``alpha``: the analytic bound of Cor. 4.6 (AMM).

    Data are full-vector (``train_Y`` ``t x n``, ``train_tasks=None``; paper 000) or
    task-indexed (``train_Y`` ``t x 1`` with ``train_tasks``; paper 001); the bound keeps
    the kind it was built with (``append_observations`` takes the same kind).

    The one bound of ``bound_base`` with the scalar observations as data: its spectrum
    object (``gram_spectrum``) is ``kronecker.KroneckerSpectrum`` for one ICM term and
    full vectors (``kronecker_route``), ``spectra.DenseSpectrum`` otherwise.

    Pending points (``X_pending``, full-vector data): as GP-BUCB (Desautels et al. 2014)
    the mean and radius stay those of the real observations and only ``rho_alpha`` is
    computed as if all tasks had been observed at the pending points (kept for the last
    ``X_pending``); the result is a score for choosing the next point, not itself a bound.

    ``state_dict`` holds the kernel, the scalar observations and the defining numbers;
    ``load_state_dict`` rebuilds the rest (``state.py``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
        ...     MultiTaskMartingaleMixtureBound)
        >>> B = torch.tensor([[1.0, 0.8], [0.8, 1.0]], dtype=torch.float64)
        >>> X = torch.rand(15, 1, dtype=torch.float64)
        >>> Y = torch.cat([X.sin(), X.sin() + 0.1 * X], -1)  # full-vector data, 2 tasks
        >>> bound = MultiTaskMartingaleMixtureBound(X, Y, RBFKernel(), B, 5.0, 0.1, 0.01)
        >>> bound.kronecker_route, bound.num_observations
        (True, 30)
        >>> test_X = torch.rand(4, 1, dtype=torch.float64)
        >>> per_task = bound.upper(test_X)  # 4 x 2: u_t(x, i)
        >>> linear = bound.upper(test_X, weights=torch.tensor([0.5, 0.5], dtype=torch.float64))
        >>> bool((linear <= per_task.mean(-1) + 1e-9).all())  # one f for both tasks: tighter
        True
    """

    DATA_BUFFERS = ("train_X", "train_tasks", "train_Y")
    DEFINING_NUMBERS = ("rkhs_norm_bound", "noise_std", "delta", "mixture_scale", "full_vector")
    EMPTY_SET_PREFIX = "multi-task data: "
    RESULT_NAME = "multi-task martingale-mixture"

    def __init__(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        rkhs_norm_bound: float,
        noise_std: float,
        delta: float,
        mixture_scale: float = 1.0,
        train_tasks: Tensor | None = None,
    ) -> None:
        r"""Build the bound from data.

        Args:
            train_X: ``t x d`` inputs (``t`` may be 0).
            train_Y: ``t x n`` full-vector observations, or ``t x 1`` with
                ``train_tasks`` (units of ``f``).
            data_kernel: A GPyTorch kernel on ``x`` or a list of them (one per term).
            task_covariance: ``n x n`` PSD matrices (or task-kernel modules) matching
                ``data_kernel``: ``Gamma = sum_j k_j B_j`` (``SumOfSeparableKernels``;
                copied and frozen: paper 002 assumes a fixed kernel).
            rkhs_norm_bound: ``B > 0`` on ``||f||_Gamma``.
            noise_std: ``sigma > 0``, the sub-Gaussian level of each scalar noise.
            delta: Confidence level in ``(0, 1)``.
            mixture_scale: ``c > 0`` of eq. (8).
            train_tasks: ``t`` task indices in ``[0, n - 1]`` (task-indexed data).

        Raises:
            TypeError: For non-tensor data, a non-kernel ``data_kernel`` or bad task
                covariances, boolean task indices.
            ValueError: For mismatched shapes, NaN/inf data, task indices out of range,
                ``delta`` outside ``(0, 1)``, non-positive ``rkhs_norm_bound``,
                ``noise_std`` or ``mixture_scale``, or a kernel that overflows at the data.
            EmptyConfidenceSetError: If the data contradict ``B`` and ``sigma``.
        """
        super().__init__()
        kernel = SumOfSeparableKernels(data_kernel, task_covariance)
        self.kernel = self._frozen_copy(kernel, "kernel")
        self._set_defining_numbers({
            "rkhs_norm_bound": rkhs_norm_bound, "noise_std": noise_std, "delta": delta,
            "mixture_scale": mixture_scale, "full_vector": train_tasks is None,
        })  # fmt: skip
        X, Y, tasks = self._scalar_observations(train_X, train_Y, train_tasks, "train_X", "train_Y")
        self.register_buffer("train_X", X)  # M x d: the input of each scalar observation
        self.register_buffer("train_tasks", tasks)  # M
        self.register_buffer("train_Y", Y)  # M
        self._rebuild()
        self.check_nonempty()

    def _set_defining_numbers(self, numbers: Mapping[str, float | bool]) -> None:
        """Check and set ``B`` (not ``None``), ``sigma``, ``delta``, ``c`` and the kind of
        data (the constructor and a loaded state)."""
        check_positive(numbers["rkhs_norm_bound"], "rkhs_norm_bound")  # None: a TypeError
        super()._set_defining_numbers(numbers)
        self.full_vector = bool(numbers["full_vector"])

    def _check_state(self, state: Mapping[str, object], prefix: str) -> None:
        """Also refuse, before loading, task covariances that the constructor refuses
        (not symmetric PSD, NaN/inf, another size) and data kernels of other classes."""
        super()._check_state(state, prefix)
        key, n = "kernel.task_covariances", self.num_tasks
        for j, B in enumerate(state.get(key, ())):
            check_task_covariance(B, n, name=f"state_dict's {prefix}{key}[{j}]")
        structure = state.get("kernel._extra_state")
        self.kernel.check_loaded_structure(structure, f"state_dict's {prefix}kernel")

    def _prepare_data(self) -> None:
        """Check the loaded scalar observations (the kind of data, the task
        covariances) and cast them."""
        X, tasks, Y = self.train_X.to(_DTYPE), self.train_tasks.long(), self.train_Y.to(_DTYPE)
        self.kernel.to(dtype=_DTYPE)  # float64 also after load_state_dict(assign=True)
        for j, B in enumerate(self.kernel.task_covariances):  # as the constructor's
            check_task_covariance(B, name=f"kernel.task_covariances[{j}]")
        if X.dim() != 2 or tasks.shape != Y.shape or Y.shape != X.shape[:1]:
            raise ValueError(
                f"train_X, train_tasks and train_Y must be M x d, M and M, got "
                f"{tuple(X.shape)}, {tuple(tasks.shape)} and {tuple(Y.shape)}"
            )
        n = self.kernel.num_tasks
        if self.full_vector:  # the M = t n scalar observations of t full vectors
            compact_X, compact_Y, compact_tasks = X[::n], Y.reshape(-1, n), None
            if X.shape[0] % n or not torch.equal(X, compact_X.repeat_interleave(n, dim=0)):
                raise ValueError(
                    f"full-vector data must hold each input n = {n} times in a row (train_X "
                    f"of {X.shape[0]} rows); load the state of a bound of the same kind"
                )
        else:
            compact_X, compact_Y, compact_tasks = X, Y.unsqueeze(-1), tasks
        X, Y, tasks = self._scalar_observations(
            compact_X, compact_Y, compact_tasks, "train_X", "train_Y"
        )
        self.train_X, self.train_tasks, self.train_Y = X, tasks, Y

    def _make_spectrum(self) -> ObservationSpectrum:
        """``K_t (x) B`` for one ICM term and full-vector data, the dense Gram matrix of
        the scalar observations otherwise."""
        if self.full_vector and self.kernel.num_terms == 1:
            return KroneckerSpectrum(self)
        return DenseSpectrum(self)

    # ------------------------------------------------------------------ data
    @property
    def num_tasks(self) -> int:
        """``n``."""
        return self.kernel.num_tasks

    @property
    def kronecker_route(self) -> bool:
        """Whether the spectrum is that of ``K_t (x) B`` (one ICM term, full vectors)."""
        return isinstance(self.gram_spectrum, KroneckerSpectrum)

    def _scalar_observations(
        self, X, Y, tasks, x_name, y_name, dim: int | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """The checked scalar observations ``(x, task, y)`` of full vectors or
        task-indexed data (``M x d``, ``M``, ``M``; ``dim``: the columns ``X`` must have)."""
        n = self.kernel.num_tasks
        if not isinstance(X, Tensor) or not isinstance(Y, Tensor):
            raise TypeError(f"{x_name} and {y_name} must be torch.Tensors")
        if X.dim() != 2 or Y.dim() != 2 or X.shape[0] != Y.shape[0]:
            raise ValueError(
                f"{x_name} must be t x d and {y_name} t x {n if self.full_vector else 1} with "
                f"the same t, got {tuple(X.shape)} and {tuple(Y.shape)}"
            )
        if dim is not None and X.shape[-1] != dim:
            raise ValueError(f"{x_name} must have {dim} columns, got {X.shape[-1]}")
        for name, value in ((x_name, X), (y_name, Y)):
            if value.is_complex() or value.dtype == torch.bool:
                raise TypeError(f"{name} must be a real floating tensor, got {value.dtype}")
            if not torch.isfinite(value).all():
                raise ValueError(f"{name} must not contain NaN or inf")
        X, Y = X.detach().to(_DTYPE), Y.detach().to(device=X.device, dtype=_DTYPE)
        if self.full_vector:
            if tasks is not None:
                raise ValueError(
                    "this bound holds full-vector data: pass Y with one column per task and "
                    "no train_tasks"
                )
            if Y.shape[-1] != n:
                raise ValueError(
                    f"full-vector {y_name} must have n = {n} columns (one per task), got "
                    f"{Y.shape[-1]}; pass train_tasks for task-indexed data"
                )
            t = X.shape[0]
            scalar_X = X.repeat_interleave(n, dim=0)
            scalar_tasks = torch.arange(n, device=X.device).repeat(t)
            scalar_Y = Y.reshape(-1)
        else:
            if tasks is None:
                raise ValueError(
                    f"this bound holds task-indexed data: pass train_tasks, the task of each "
                    f"row of {y_name}"
                )
            if Y.shape[-1] != 1:
                raise ValueError(f"task-indexed {y_name} must be t x 1, got {tuple(Y.shape)}")
            scalar_tasks = check_task_indices(tasks, n, "train_tasks", num_rows=X.shape[0])
            scalar_tasks = scalar_tasks.to(X.device)
            scalar_X, scalar_Y = X, Y.reshape(-1)
        check_sum_of_squares(scalar_Y.unsqueeze(-1), y_name)
        return scalar_X, scalar_Y, scalar_tasks

    def append_observations(
        self, X: Tensor, Y: Tensor, train_tasks: Tensor | None = None
    ) -> MultiTaskMartingaleMixtureBound:
        """Add observations (the kind the bound holds) and return ``self``; the spectrum
        is recomputed at the next bound (``O(t^3 + n^3)`` on the Kronecker route).

        Args:
            X: ``m x d`` inputs.
            Y: ``m x n`` full vectors, or ``m x 1`` with ``train_tasks``.
            train_tasks: ``m`` task indices of ``Y`` (task-indexed data), as the
                constructor's ``train_tasks``.

        Raises:
            TypeError, ValueError: As the constructor, checked before anything is added.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
            ...     MultiTaskMartingaleMixtureBound)
            >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
            >>> X = torch.rand(4, 1, dtype=torch.float64)
            >>> tasks = torch.tensor([0, 1, 0, 1])  # task-indexed data
            >>> bound = MultiTaskMartingaleMixtureBound(
            ...     X, X.sin(), RBFKernel(), B, 5.0, 0.1, 0.01, train_tasks=tasks)
            >>> new_X = torch.rand(2, 1, dtype=torch.float64)
            >>> _ = bound.append_observations(new_X, new_X.sin(), train_tasks=torch.tensor([1, 1]))
            >>> bound.num_observations
            6
        """
        self._check_loaded()
        X, Y, tasks = self._scalar_observations(X, Y, train_tasks, "X", "Y", self.input_dim)
        spectra = self.gram_spectrum
        if not (isinstance(spectra, KroneckerSpectrum) and spectra.holds_candidates(X)):
            with torch.no_grad():  # (the kernel at tracked candidates was checked with them)
                values = self.kernel.observation_covariance(X, tasks, X, tasks)
            check_kernel_values(values, X, "X")
        check_sum_of_squares(torch.cat([self.train_Y, Y]).unsqueeze(-1), "Y")
        return self._append(X, tasks, Y)

    # ---------------------------------------------------------------- bounds
    def upper(
        self,
        X: Tensor,
        weights: Tensor | None = None,
        alphas: float | Sequence[float] | Tensor | None = None,
        X_pending: Tensor | None = None,
    ) -> Tensor:
        r"""Upper bound on ``w^T f(x)``.

        Args:
            X: ``batch x d`` points.
            weights: ``None`` for the per-task bounds (``w = e_i``, returns ``batch x
                n``); an ``n`` vector for one functional (``batch``); ``F x n`` for
                several (``batch x F``).
            alphas: ``None`` (exact), a grid (DMM) or one ``alpha`` (AMM).
            X_pending: ``m x d`` pending points (full-vector data only; GP-BUCB).

        Returns:
            The bounds in ``X``'s floating dtype (float64 for integer ``X``); gradients
            with respect to ``X`` flow through the bound at the minimizing ``alpha``.

        Raises:
            ValueError: For bad ``X``, ``weights`` not of ``n`` columns, NaN/inf, bad
                ``alphas`` (also more than ``MAX_ALPHAS`` of ``gram_cache``), or
                ``X_pending`` with task-indexed data.
            EmptyConfidenceSetError: If the data contradict the assumptions.
        """
        return self._evaluate(X, weights, alphas, 1.0, X_pending)[0]

    def lower(
        self,
        X: Tensor,
        weights: Tensor | None = None,
        alphas: float | Sequence[float] | Tensor | None = None,
        X_pending: Tensor | None = None,
    ) -> Tensor:
        """Lower bound on ``w^T f(x)``, the mirror image of ``upper`` (same arguments)."""
        return self._evaluate(X, weights, alphas, -1.0, X_pending)[0]

    # ------------------------------------------------------------ candidates
    def track_candidates(self, points: Tensor) -> bool:
        r"""Keep a finite candidate set ``D`` and its kernel matrix ``k(D, D)``, so that
        ``candidate_upper`` (and the spectrum, when every ``x_s`` is a candidate) read
        kernel values from it instead of evaluating the kernel (a fixed kernel on a
        finite domain). Kronecker route only (``kronecker_route``); calling it again with
        the same tensor costs nothing, another set replaces the first. The set is
        forgotten when the bound is rebuilt (``load_state_dict``): track it again.

        Args:
            points: ``N x d`` candidates (the bound's input space).

        Returns:
            Whether the candidates are tracked (``False`` off the Kronecker route).

        Raises:
            TypeError: If ``points`` is not a tensor.
            ValueError: If ``points`` is not ``N x d`` (``N >= 1``) or holds NaN/inf,
                or the kernel is not finite at them.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound
            >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
            >>> D = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)
            >>> bound = MultiTaskMartingaleMixtureBound(D[:3], D[:3].sin().repeat(1, 2),
            ...     RBFKernel(), B, 5.0, 0.1, 0.01)
            >>> bound.track_candidates(D)
            True
            >>> index = torch.tensor([4, 1])
            >>> torch.allclose(bound.candidate_upper(index), bound.upper(D[index]), rtol=1e-9)
            True
        """
        self._check_loaded()
        spectra = self.gram_spectrum
        if not isinstance(spectra, KroneckerSpectrum):
            return False
        if not spectra.tracks(points):
            check_query_points(points, self.input_dim, "points")
            if points.dim() != 2 or points.shape[0] == 0:
                raise ValueError(f"points must be N x d with N >= 1, got {tuple(points.shape)}")
            spectra.track_candidates(self, points)
        return True

    def candidate_upper(
        self,
        index: Tensor | None = None,
        weights: Tensor | None = None,
        alphas: float | Sequence[float] | Tensor | None = None,
    ) -> Tensor:
        r"""``upper(points[index], weights, alphas)`` at the candidates of
        ``track_candidates`` (the same bound, to round-off), with the kernel values read
        from ``k(D, D)``: no kernel evaluation and no check of the points (checked once,
        when tracked).

        Args:
            index: ``k`` candidate indices (long), or ``None`` for all ``N``.
            weights, alphas: As ``upper``.

        Returns:
            float64 bounds, ``k x n`` (per task), ``k`` (one functional as a vector) or
            ``k x F``.

        Raises:
            RuntimeError: If no candidates are tracked.
            ValueError: For bad ``weights`` or ``alphas`` (as ``upper``).
            EmptyConfidenceSetError: If the data contradict the assumptions.
        """
        self._check_loaded()
        spectra = self.gram_spectrum
        if not isinstance(spectra, KroneckerSpectrum) or spectra.candidate_points is None:
            raise RuntimeError("no candidates: call track_candidates(points) first")
        grid = None if alphas is None else check_alpha_grid(alphas)
        W, squeeze = self._functionals(weights)
        with torch.no_grad():
            self.check_nonempty()
        radius_tilde_sq = None if grid is None else self._grid_radius_tilde_squared(grid)
        value = spectra.candidate_values(self, index, W, 1.0, grid, radius_tilde_sq)
        points = spectra.candidate_points if index is None else spectra.candidate_points[index]
        check_finite_result(value, f"{self.RESULT_NAME} upper bound", points)
        return value[..., 0] if squeeze else value

    def _functionals(self, weights: Tensor | None) -> tuple[Tensor, bool]:
        """``W`` (``F x n``, float64; ``None``: the ``n`` unit vectors) and whether one
        functional was given as a vector."""
        n, device = self.num_tasks, self.train_Y.device
        if weights is None:
            return torch.eye(n, dtype=_DTYPE, device=device), False
        if not isinstance(weights, Tensor):
            try:
                weights = torch.as_tensor(weights, dtype=_DTYPE)
            except (TypeError, ValueError, RuntimeError) as error:
                raise TypeError(
                    f"weights must be None, a tensor or a sequence of n = {n} numbers (or F "
                    f"such rows), got {type(weights).__name__}"
                ) from error
        if weights.dim() not in (1, 2) or weights.shape[-1] != n:
            raise ValueError(f"weights must be n = {n} or F x {n}, got {tuple(weights.shape)}")
        if not torch.isfinite(weights).all():
            raise ValueError("weights must not contain NaN or inf")
        single = weights.dim() == 1
        return weights.detach().to(device=device, dtype=_DTYPE).reshape(-1, n), single

    def _pending_inputs(self, X_pending: Tensor | None) -> PendingInputs | None:
        if X_pending is not None and not self.full_vector:
            raise ValueError(
                "X_pending needs full-vector data (all tasks observed at a pending point)"
            )
        return super()._pending_inputs(X_pending)
