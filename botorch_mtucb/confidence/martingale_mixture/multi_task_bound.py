r"""Paper 002's martingale-mixture bounds for multi-task kernels (issue 12).

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

**Structure.** Everything is computed from the spectrum of the ``M x M`` Gram matrix of
the scalar observations (``GramSpectrum``; the dual, the radius and the empty-set test
read only the eigenvalues, ``U^T y`` and the projections ``U^T k_L``). For one ICM term
``k(x, x') B`` and full-vector data the Gram matrix is ``K_t (x) B`` (observation ``(s,
i)`` at row ``s n + i``), whose eigen-decomposition is that of ``K_t`` and of ``B``:
eigenvalues ``lambda_a mu_j``, eigenvectors ``u_a (x) v_j``, ``U^T y = vec(U_K^T Y
U_B)`` and, for the functional ``w`` at ``x``, ``U^T k_L = (U_K^T k_t(x)) (x) (U_B^T B
w)``: ``O(t^3 + n^3)`` per data set and ``O(t^2 + n^2 + t n)`` per point and functional,
never ``(n t)^3`` (``kronecker_route``); the exact bounds' 1-D duals are solved by
matrix products at shared ``alpha`` and power series around them
(``KroneckerSpectralDual``: ``O(t n + n F)`` per point and ``alpha`` for ``F``
functionals, never the ``(N F) x (n t)`` projections). Other kernels (sums of separable
terms) and task-indexed data use the dense ``M x M`` Gram matrix (``O(M^3)``, ``M`` the
number of scalar observations: ``t`` for task-indexed data). Repeated inputs (a finite
domain: the same ``x_s``, or the same ``(x_s, i_s)``, observed again) are folded
(``repeated_inputs.input_spectrum``): the spectrum comes from the ``u`` distinct ones,
``O(u^3)`` instead of ``O(t^3)``, with the same values to round-off (issue 14).

Source: paper 002, Section 4 (eqs. (8), (10), (12), Lemma 4.2, Cor. 4.3/4.6), applied
to the scalar kernel of paper 000, Section 2; the combination is issue 12's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.alpha_search import (
    KroneckerSpectralDual,
    SpectralDual,
    posterior_std,
)
from botorch_mtucb.confidence.martingale_mixture.emptiness import (
    EmptyConfidenceSetError,
    contradicts,
    empty_set_message,
    min_radius_tilde_squared,
)
from botorch_mtucb.confidence.martingale_mixture.gram_cache import check_alpha_grid
from botorch_mtucb.confidence.martingale_mixture.radius import (
    GramSpectrum,
    radius_tilde_squared,
    spectral_data_fit,
    spectral_radius_squared,
)
from botorch_mtucb.confidence.martingale_mixture.repeated_inputs import (
    DistinctInputs,
    input_spectrum,
)
from botorch_mtucb.confidence.martingale_mixture.state import RebuiltOnLoad
from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels, TaskCovarianceLike
from botorch_mtucb.utils.checks import (
    check_finite_result,
    check_kernel_values,
    check_mixture_numbers,
    check_positive,
    check_query_points,
    check_sum_of_squares,
    check_task_covariance,
    check_task_indices,
    real_output_dtype,
)

_DTYPE = torch.float64
GRID_CHUNK = 2**20  # grid bounds on the Kronecker route: alphas x t x n per batch


class MultiTaskMartingaleMixtureBound(RebuiltOnLoad):
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

    Pending points (``X_pending``, full-vector data): as GP-BUCB (Desautels et al. 2014)
    the mean and radius stay those of the real observations and only ``rho_alpha`` is
    computed as if all tasks had been observed at the pending points; the result is a
    score for choosing the next point, not itself a bound.

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
        self.kernel = copy.deepcopy(kernel).to(dtype=_DTYPE)
        for parameter in self.kernel.parameters():
            parameter.requires_grad_(False)
        self.kernel.eval()
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
        """Check and set ``B``, ``sigma``, ``delta``, ``c`` and the kind of data (the
        constructor and a loaded state)."""
        check_positive(numbers["rkhs_norm_bound"], "rkhs_norm_bound")  # None: a TypeError
        self.rkhs_norm_bound, self.noise_std, self.delta, self.mixture_scale = (
            check_mixture_numbers(*(numbers[name] for name in self.DEFINING_NUMBERS[:4]))
        )
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

    def _rebuild(self) -> None:
        """Everything derived from the kernel, the data and the numbers (the constructor
        and ``load_state_dict``): the eigen-decomposition of ``B`` on the Kronecker route
        and the distinct inputs; the spectrum and the emptiness check at the next bound."""
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
        self.input_dim = X.shape[-1]
        X, Y, tasks = self._scalar_observations(
            compact_X, compact_Y, compact_tasks, "train_X", "train_Y"
        )
        self.train_X, self.train_tasks, self.train_Y = X, tasks, Y
        # eigen-decomposition of B for the Kronecker route (one ICM term, full vectors)
        self.kronecker_route = self.full_vector and self.kernel.num_terms == 1
        if self.kronecker_route:
            mu, U_B = torch.linalg.eigh(self.kernel.task_covariances[0])
            self.register_buffer("_task_eigenvalues", mu.clamp_min(0.0), persistent=False)
            self.register_buffer("_task_eigenvectors", U_B, persistent=False)
        self._spectrum: GramSpectrum | None = None
        self._data_eigenvectors: Tensor | None = None  # U_K (Kronecker route)
        self._distinct = DistinctInputs()  # the distinct x_s (Kronecker) or (x, task) rows
        self._distinct.add(self._distinct_rows(self.train_X, self.train_tasks))
        self._checked_nonempty = False

    # ------------------------------------------------------------------ data
    @property
    def num_tasks(self) -> int:
        """``n``."""
        return self.kernel.num_tasks

    @property
    def num_observations(self) -> int:
        """``M``, the number of scalar observations (``n t`` for full-vector data)."""
        return self.train_Y.shape[0]

    @property
    def base_alpha(self) -> float:
        """``sigma^2 / c`` (the analytic bound's ``alpha``)."""
        return self.noise_std**2 / self.mixture_scale

    def _scalar_observations(self, X, Y, tasks, x_name, y_name) -> tuple[Tensor, Tensor, Tensor]:
        n = self.kernel.num_tasks
        if not isinstance(X, Tensor) or not isinstance(Y, Tensor):
            raise TypeError(f"{x_name} and {y_name} must be torch.Tensors")
        if X.dim() != 2 or Y.dim() != 2 or X.shape[0] != Y.shape[0]:
            raise ValueError(
                f"{x_name} must be t x d and {y_name} t x {n if self.full_vector else 1} with "
                f"the same t, got {tuple(X.shape)} and {tuple(Y.shape)}"
            )
        if hasattr(self, "input_dim") and X.shape[-1] != self.input_dim:
            raise ValueError(f"{x_name} must have {self.input_dim} columns, got {X.shape[-1]}")
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
        X, Y, tasks = self._scalar_observations(X, Y, train_tasks, "X", "Y")
        with torch.no_grad():
            values = self.kernel.observation_covariance(X, tasks, X, tasks)
        check_kernel_values(values, X, "X")
        check_sum_of_squares(torch.cat([self.train_Y, Y]).unsqueeze(-1), "Y")
        self.train_X = torch.cat([self.train_X, X.to(self.train_X)])
        self.train_tasks = torch.cat([self.train_tasks, tasks.to(self.train_tasks)])
        self.train_Y = torch.cat([self.train_Y, Y.to(self.train_Y)])
        self._distinct.add(self._distinct_rows(X.to(self.train_X), tasks.to(self.train_tasks)))
        self._spectrum, self._data_eigenvectors = None, None
        self._checked_nonempty = False
        return self

    def _apply(self, fn, recurse=True):
        """``.to()``, ``.cuda()`` etc. move the bound; its dtype stays float64 (and the
        task indices ``long``)."""

        def move_only(tensor: Tensor) -> Tensor:
            return tensor.to(device=fn(tensor).device)

        self._spectrum, self._data_eigenvectors = None, None  # recomputed where the data are
        return super()._apply(move_only, recurse)

    # -------------------------------------------------------------- spectrum
    def _data_inputs(self) -> Tensor:
        """The ``t`` distinct inputs of full-vector data (every ``n``-th scalar input)."""
        return self.train_X[:: self.num_tasks]

    def _distinct_rows(self, X: Tensor, tasks: Tensor) -> Tensor:
        """The rows whose repeats the spectrum folds: the data inputs ``x_s`` on the
        Kronecker route, the scalar observations' ``(x, task)`` otherwise."""
        if self.kronecker_route:
            return X[:: self.num_tasks]
        return torch.cat([X, tasks.unsqueeze(-1).to(X)], dim=-1)

    def _pair_covariance(self, A: Tensor, B: Tensor) -> Tensor:
        """``K((x, i), (x', j))`` between ``(x, task)`` rows (``_distinct_rows``)."""
        return self.kernel.observation_covariance(
            A[:, :-1], A[:, -1].long(), B[:, :-1], B[:, -1].long()
        )

    def _distinct_groups(self) -> tuple[Tensor, Tensor, Tensor]:
        """The distinct data inputs, each input's index and the counts, on the bound's
        device."""
        inputs, inverse, counts = self._distinct.groups()
        device = self.train_X.device
        return inputs.to(device), inverse.to(device), counts.to(device)

    def spectrum(self) -> GramSpectrum:
        """The spectrum of the scalar observations' Gram matrix and ``U^T y`` (cached;
        on the Kronecker route ``eigenvectors`` is ``None``: ``u_a (x) v_j`` is never
        formed)."""
        if self._spectrum is not None:
            return self._spectrum
        with torch.no_grad():
            if self.num_observations == 0:
                empty = self.train_Y.new_zeros(0)
                self._spectrum = GramSpectrum(empty, empty.reshape(0, 0), empty)
            elif self.kronecker_route:
                Y = self.train_Y.reshape(-1, self.num_tasks)
                # repeated inputs (a finite domain): the spectrum from the distinct ones
                kernel = self.kernel.kernels[0]
                data = input_spectrum(
                    lambda A, B: kernel(A, B).to_dense(),
                    self._data_inputs(),
                    Y,
                    self._task_eigenvectors,
                    self._distinct_groups(),
                )
                eigenvalues = (data.eigenvalues[:, None] * self._task_eigenvalues).reshape(-1)
                self._spectral_inputs = data.inputs
                self._data_eigenvectors = data.basis
                self._data_eigenvalues = data.eigenvalues
                self._spectrum = GramSpectrum(eigenvalues, None, data.rotated.reshape(-1))
            elif self._distinct.num_distinct < self.num_observations:  # repeated (x, task)
                rows = self._distinct_rows(self.train_X, self.train_tasks)
                data = input_spectrum(
                    self._pair_covariance, rows, self.train_Y.unsqueeze(-1), None,
                    self._distinct_groups(),
                )  # fmt: skip
                self._spectral_inputs, self._data_eigenvectors = data.inputs, data.basis
                self._spectrum = GramSpectrum(data.eigenvalues, None, data.rotated[:, 0])
            else:
                X, tasks = self.train_X, self.train_tasks
                gram = self.kernel.observation_covariance(X, tasks, X, tasks)
                self._spectrum = GramSpectrum.from_gram(gram, self.train_Y)
        return self._spectrum

    @property
    def radius_squared(self) -> Tensor:
        """``R_t^2`` of eq. (8) over the ``M`` scalar observations (0-d float64)."""
        return spectral_radius_squared(
            self.spectrum(), self.noise_std, self.mixture_scale, self.delta
        )

    def radius_tilde_squared(self, alphas: float | Sequence[float] | Tensor) -> Tensor:
        """``R~_alpha^2`` of Cor. 4.3 for each ``alpha`` (negative: the set is empty)."""
        alpha = check_alpha_grid(alphas).to(self.train_Y.device)
        shape = torch.as_tensor(alphas).shape
        fit = spectral_data_fit(self.spectrum(), alpha)
        value = radius_tilde_squared(self.radius_squared, self.rkhs_norm_bound, alpha, fit)
        return value.reshape(shape)

    def check_nonempty(self) -> None:
        """Raise ``EmptyConfidenceSetError`` if ``F_t`` is empty (Lemma 4.2)."""
        if self._checked_nonempty:
            return
        spectrum, radius_sq = self.spectrum(), self.radius_squared
        minimum = min_radius_tilde_squared(
            spectrum, self.rkhs_norm_bound, radius_sq, self.base_alpha
        )
        if contradicts(minimum, float(radius_sq)):
            raise EmptyConfidenceSetError(self._empty_message())
        self._checked_nonempty = True

    def _empty_message(self) -> str:
        return "multi-task data: " + empty_set_message(
            self.spectrum(), self.radius_squared, self.rkhs_norm_bound, self.noise_std,
            self.mixture_scale, self.delta,
        )  # fmt: skip

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
        return self._evaluate(X, weights, alphas, 1.0, X_pending)

    def lower(
        self,
        X: Tensor,
        weights: Tensor | None = None,
        alphas: float | Sequence[float] | Tensor | None = None,
        X_pending: Tensor | None = None,
    ) -> Tensor:
        """Lower bound on ``w^T f(x)``, the mirror image of ``upper`` (same arguments)."""
        return self._evaluate(X, weights, alphas, -1.0, X_pending)

    def _check_weights(self, weights: Tensor | None, device) -> tuple[Tensor, bool]:
        n = self.num_tasks
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

    def _evaluate(self, X, weights, alphas, sign, X_pending) -> Tensor:
        self._check_loaded()
        if alphas is not None:
            alphas = check_alpha_grid(alphas)  # before any allocation
        check_query_points(X, self.input_dim)
        dtype = real_output_dtype(X)
        W, single = self._check_weights(weights, self.train_Y.device)
        batch_shape = X.shape[:-1]
        flat = X.reshape(-1, self.input_dim).to(device=self.train_Y.device, dtype=_DTYPE)
        value = self._bound(flat, W, sign, alphas, X_pending)  # N x F
        if flat.requires_grad and not value.requires_grad:
            value = value + 0.0 * flat.sum(-1, keepdim=True)
        name = f"multi-task martingale-mixture {'upper' if sign > 0 else 'lower'} bound"
        check_finite_result(value.to(dtype), name, flat)
        value = value.reshape(*batch_shape, W.shape[0])
        return (value[..., 0] if single else value).to(dtype)

    def _prior_variance(self, X: Tensor, W: Tensor) -> Tensor:
        """``w^T Gamma(x, x) w`` (``N x F``)."""
        blocks = self.kernel.diagonal_blocks(X)  # N x n x n
        return torch.einsum("fi,nij,fj->nf", W, blocks, W)

    def _kronecker_factors(
        self, X: Tensor, W: Tensor, inputs: Tensor, eigenvectors: Tensor
    ) -> tuple[Tensor, Tensor]:
        """``p = U^T k(inputs, x)`` (``N x t``, ``U`` the eigenvectors of ``k`` on
        ``inputs``) and ``q = U_B^T B w`` (``F x n``): the projection of the functional
        ``w`` at ``x`` is ``p (x) q`` on the Kronecker route."""
        k = self.kernel.kernels[0](X, inputs).to_dense()
        check_kernel_values(k.detach(), X.detach(), "X")
        q = W @ self.kernel.task_covariances[0] @ self._task_eigenvectors
        return k @ eigenvectors, q

    def _projection(self, X: Tensor, W: Tensor) -> Tensor:
        """``U^T k_L`` (``N x F x M``) of the functionals ``W`` at ``X``."""
        if self.num_observations == 0:
            return X.new_zeros(X.shape[0], W.shape[0], 0)
        if self.kronecker_route:
            self.spectrum()  # the eigenvectors of K_t
            p, q = self._kronecker_factors(X, W, self._spectral_inputs, self._data_eigenvectors)
            return (p[:, None, :, None] * q[None, :, None, :]).reshape(X.shape[0], W.shape[0], -1)
        spectrum = self.spectrum()
        if spectrum.eigenvectors is None:  # repeated (x, task): through the distinct rows
            rows = self._spectral_inputs
            inputs, tasks, basis = rows[:, :-1], rows[:, -1].long(), self._data_eigenvectors
        else:
            inputs, tasks, basis = self.train_X, self.train_tasks, spectrum.eigenvectors
        representer = self.kernel.functional_covariance(X, W, inputs, tasks)  # N x F x (M|u)
        check_kernel_values(representer.detach(), X.detach(), "X")
        return representer @ basis

    def _pending_variance(self, X: Tensor, W: Tensor, X_pending: Tensor) -> tuple[Tensor, Tensor]:
        """``(U'^T k'_L)^2`` and the eigenvalues of the Gram matrix of the data plus all
        tasks at ``X_pending`` (the variance of GP-BUCB's hallucinated update)."""
        if not self.full_vector:
            raise ValueError(
                "X_pending needs full-vector data (all tasks observed at a pending point)"
            )
        check_query_points(X_pending, self.input_dim, "X_pending")
        if X_pending.dim() != 2:
            raise ValueError(
                f"X_pending must be m x {self.input_dim}, got {tuple(X_pending.shape)}"
            )
        pending = X_pending.detach().to(device=self.train_Y.device, dtype=_DTYPE)
        inputs = torch.cat([self._data_inputs(), pending])
        n = self.num_tasks
        if self.kronecker_route:
            with torch.no_grad():
                K = self.kernel.kernels[0](inputs, inputs).to_dense()
                lam, U = torch.linalg.eigh(0.5 * (K + K.mT))
            eigenvalues = (lam.clamp_min(0.0)[:, None] * self._task_eigenvalues).reshape(-1)
            p, q = self._kronecker_factors(X, W, inputs, U)
            squared = (p[:, None, :, None] ** 2 * q[None, :, None, :] ** 2).reshape(
                X.shape[0], W.shape[0], -1
            )
            return squared, eigenvalues
        scalar_X = inputs.repeat_interleave(n, dim=0)
        scalar_tasks = torch.arange(n, device=inputs.device).repeat(inputs.shape[0])
        with torch.no_grad():
            gram = self.kernel.observation_covariance(
                scalar_X, scalar_tasks, scalar_X, scalar_tasks
            )
            lam, U = torch.linalg.eigh(0.5 * (gram + gram.mT))
        cross = self.kernel.task_block_covariance(X, scalar_X, scalar_tasks)
        representer = torch.einsum("fi,nim->nfm", W, cross)
        return (representer @ U) ** 2, lam.clamp_min(0.0)

    def _bound(self, X, W, sign, alphas, X_pending) -> Tensor:
        N, F = X.shape[0], W.shape[0]
        with torch.no_grad():
            self.check_nonempty()
        prior = self._prior_variance(X, W)
        grid = None
        if alphas is not None:
            grid = check_alpha_grid(alphas).to(X.device)
            if self.num_observations > 0:
                rt2 = self.radius_tilde_squared(grid)
                if contradicts(float(rt2.min()), float(self.radius_squared)):
                    raise EmptyConfidenceSetError(self._empty_message())
                if self.kronecker_route and X_pending is None:  # no N x F x M projection
                    return sign * self._kronecker_grid(X, W, sign, grid, rt2.clamp_min(0.0), prior)
        if self.num_observations == 0 and X_pending is None:
            value = self.rkhs_norm_bound * posterior_std(prior, torch.zeros_like(prior))
            return sign * value
        if grid is None and self.kronecker_route and X_pending is None:
            return sign * self._kronecker_exact(X, W, sign, prior)
        projected = self._projection(X, W)
        if X_pending is not None:
            squared, variance_eigenvalues = self._pending_variance(X, W, X_pending)
        else:
            squared, variance_eigenvalues = projected**2, None
        if self.num_observations == 0:  # pending points only: B rho at sigma^2 / c
            inverse = 1.0 / (variance_eigenvalues + self.base_alpha)
            explained = (squared.reshape(N * F, -1) * inverse).sum(-1)
            std = posterior_std(prior.reshape(-1), explained)
            return sign * (self.rkhs_norm_bound * std).reshape(N, F)
        spectrum = self.spectrum()
        dual = SpectralDual(
            spectrum,
            self.radius_squared,
            self.rkhs_norm_bound,
            sign * (projected * spectrum.rotated_y).reshape(N * F, -1),
            squared.reshape(N * F, -1),
            prior.reshape(-1),
            variance_eigenvalues,
        )
        if grid is None:
            with torch.no_grad():
                alpha, _ = dual.minimize(self.base_alpha)
            return sign * dual(alpha).reshape(N, F)
        values = torch.stack([dual(a) for a in grid], -1)  # (N F) x m
        return sign * values.min(-1).values.reshape(N, F)

    def _kronecker_exact(self, X, W, sign, prior) -> Tensor:
        r"""The exact bound (eq. (12), one ``alpha`` per point and functional) on the
        Kronecker route (``KroneckerSpectralDual``: matrix products at shared ``alpha``,
        ``O(t n + n F)`` per point and ``alpha``), ``N x F`` signed values."""
        spectrum = self.spectrum()  # and the eigenvectors of K_t
        p, q = self._kronecker_factors(X, W, self._spectral_inputs, self._data_eigenvectors)
        dual = KroneckerSpectralDual(
            spectrum, self.radius_squared, self.rkhs_norm_bound, sign, p, q,
            self._data_eigenvalues, self._task_eigenvalues, prior,
        )  # fmt: skip
        with torch.no_grad():
            alpha, _ = dual.minimize(self.base_alpha)
        return dual(alpha).reshape(X.shape[0], W.shape[0])

    def _kronecker_grid(self, X, W, sign, grid, rt2, prior) -> Tensor:
        r"""``min_{alpha in A}`` of eq. (12) for every point and functional on the
        Kronecker route, by matrix products: with ``G_{aj} = 1 / (lambda_a mu_j + alpha)``
        the mean is ``p (G o Z) q^T`` and the explained variance ``p^2 G (q^2)^T``
        (``p = U_K^T k_t(x)``, ``q = U_B^T B w``, ``Z = U_K^T Y U_B``): ``O(t n + n F)``
        per point and ``alpha`` instead of ``O(t n F)`` (linear in ``n`` for the ``n``
        per-task bounds)."""
        Z = self.spectrum().rotated_y.reshape(-1, self.num_tasks)  # t x n
        p, q = self._kronecker_factors(X, W, self._spectral_inputs, self._data_eigenvectors)
        products = self._data_eigenvalues[:, None] * self._task_eigenvalues  # t x n
        best = None
        step = max(1, GRID_CHUNK // products.numel())  # alphas at once: G_chunk x t x n
        for start in range(0, grid.shape[0], step):
            alpha = grid[start : start + step, None, None]
            G = 1.0 / (products + alpha)
            mean = (p @ (G * Z)) @ q.mT  # G_chunk x N x F
            explained = (p**2 @ G) @ (q**2).mT
            std = posterior_std(prior, explained)
            value = sign * mean + (rt2[start : start + step, None, None] / alpha).sqrt() * std
            value = value.min(dim=0).values
            best = value if best is None else torch.minimum(best, value)
        return best
