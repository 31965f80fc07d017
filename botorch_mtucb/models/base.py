"""What the exact and the sketched multi-task posteriors share: BoTorch's ``Model``.

Both models take the data of paper 000 (full-vector rows, ``train_Y``: ``N x n``) or
of paper 001 (task-indexed rows, ``train_Y``: ``N x 1`` with ``train_tasks``), a fixed
multi-task kernel ``sum_j k_j(x, x') B_j`` and a noise variance ``eta``; both return
BoTorch posteriors with the full cross-task covariance and can be conditioned on new
rows.

Why this module is long: this module is BoTorch's ``Model`` contract for both models in one
place (data checks, ``posterior`` with ``output_indices``, ``observation_noise`` and
``posterior_transform``, per-point moments, ``subset_output``, the checks of appended
rows) plus ``eigen_groups``, which both models' ICM routes use. The abilities that are
not the ``Model`` contract already live in their own modules (conditioning, candidate
tracking, per-task noise, state loading); splitting the contract further would spread
one ``posterior`` over several files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models.model import FantasizeMixin, Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from gpytorch.kernels import Kernel
from linear_operator.operators import DenseLinearOperator, LinearOperator
from torch import Tensor

from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels, TaskCovarianceLike
from botorch_mtucb.kernels.task_checks import check_task_indices
from botorch_mtucb.models.candidate_posterior import CandidatePosterior
from botorch_mtucb.models.candidate_tracking import CandidateTrackingMixin
from botorch_mtucb.models.conditioning import ConditioningMixin, ConditioningObservations
from botorch_mtucb.models.state_loading import RebuildOnLoadMixin
from botorch_mtucb.models.task_noise import TaskNoiseMixin, per_task_values, task_noise_variances
from botorch_mtucb.utils.checks import (
    as_int,
    check_kernel_values,
    check_tensor,
    check_working_precision,
)


def eigen_groups(
    task_covariance: Tensor | LinearOperator,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Eigen-system of ``B`` with numerically equal positive eigenvalues grouped.

    Paper 000, Section 3.3: ``B = sum_i xi_i u_i u_i^T``. Eigenvalues below ``1e-10``
    (float64) / ``1e-5`` (float32) of the largest count as zero.

    A dense ``B`` is decomposed by ``torch.linalg.eigh`` (the models pass their dense,
    whitened task covariance, so their factors keep ``eigh``'s rounding); a
    ``LinearOperator`` by its own ``eigh``, in closed form where its structure gives
    one (``UniformSimilarityLinearOperator``: ``omega`` on the Helmert vectors, ``1`` on
    ``1 / sqrt(n)``, so the repeated eigenvalue is one group exactly).

    Returns:
        ``xi`` (``n``, ascending, zero for null directions), ``U`` (``n x n``, columns
        ``u_i``), ``group_of`` (``n``: the group of each direction) and ``group_xi``
        (the distinct positive values; ``[1.0]`` if ``B = 0``).

    Raises:
        TypeError: For a half-precision ``task_covariance`` (float32 / float64 only).

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels import UniformSimilarityTaskKernel
        >>> from botorch_mtucb.models.base import eigen_groups
        >>> B = torch.diag(torch.tensor([2.0, 2.0, 0.0], dtype=torch.float64))
        >>> xi, U, group_of, group_xi = eigen_groups(B)
        >>> xi, group_xi
        (tensor([0., 2., 2.], dtype=torch.float64), tensor([2.], dtype=torch.float64))
        >>> B = UniformSimilarityTaskKernel(3, 0.4, dtype=torch.float64).covar_matrix
        >>> xi, U, group_of, group_xi = eigen_groups(B.detach())  # closed form
        >>> xi, group_of
        (tensor([0.4000, 0.4000, 1.0000], dtype=torch.float64), tensor([0, 0, 1]))
    """
    if isinstance(task_covariance, LinearOperator):
        eigenvalues, eigenvectors = task_covariance.eigh()
        check_working_precision(eigenvalues, "task_covariance")
        eigenvalues, order = eigenvalues.sort(stable=True)
        eigenvectors = eigenvectors.to_dense()[..., order]
    else:
        check_working_precision(task_covariance, "task_covariance")
        eigenvalues, eigenvectors = torch.linalg.eigh(task_covariance)
    rel_tol = 1e-10 if eigenvalues.dtype == torch.float64 else 1e-5
    scale = float(eigenvalues.amax().clamp_min(torch.finfo(eigenvalues.dtype).tiny))
    positive = eigenvalues > rel_tol * scale
    values: list[float] = []
    group_of = torch.zeros(eigenvalues.shape[0], dtype=torch.long, device=eigenvalues.device)
    for i, (value, keep) in enumerate(zip(eigenvalues.tolist(), positive.tolist())):
        if not keep:
            continue
        match = [g for g, v in enumerate(values) if abs(value - v) <= rel_tol * scale]
        if match:
            group_of[i] = match[0]
        else:
            group_of[i] = len(values)
            values.append(value)
    if not values:  # B = 0
        values.append(1.0)
    xi = torch.where(positive, eigenvalues, torch.zeros_like(eigenvalues))
    group_xi = torch.tensor(values, dtype=eigenvalues.dtype, device=eigenvalues.device)
    return xi, eigenvectors, group_of, group_xi


class FixedKernelMultiTaskModel(
    CandidateTrackingMixin,
    ConditioningMixin,
    RebuildOnLoadMixin,
    TaskNoiseMixin,
    Model,
    FantasizeMixin,
):
    """The one home of BoTorch's ``Model`` contract for ``VectorValuedGP`` and
    ``NystromVectorValuedGP``: data checks, the BoTorch posterior, conditioning and
    fantasies (``ConditioningMixin``), output subsets, finite candidate sets
    (``CandidateTrackingMixin``) and state loading (``RebuildOnLoadMixin``).

    A subclass builds its posterior state after ``_setup`` and implements
    ``_mean_and_covariance(X)`` (mean ``batch x q x n``, interleaved covariance
    ``batch x (q n) x (q n)``), ``append_observations`` and ``_attach_candidates``.

    **One model, whichever route built it.** A subclass's own factorization holds the
    model's *own data*: unbatched, each observation of task ``i`` with the task's noise
    variance ``lambda_i`` (``noise_variances``). ``condition_on_observations`` extends a
    copy of it for rows of that kind, and otherwise keeps it and conditions its
    posterior on the new observations exactly (``models.conditioning``: batches, other
    noise variances; the model then has a ``batch_shape``). Both routes give a model
    with the same abilities: ``append_observations`` adds rows to its own data (a
    conditioned model stays conditioned on its further observations, fitted again),
    ``information_gain`` counts every observation (the further ones by the chain rule),
    ``track_candidates`` keeps the posterior of its own data at a candidate set.
    ``subset_output`` keeps every observation and restricts the outputs; those three
    work on the full model.

    **Prior mean and per-task noise** (``models.task_noise``). The prior is ``f ~ GP(c,
    Gamma)`` with a constant mean ``c`` per task (``prior_mean``, zero by default) and
    the observations of task ``i`` carry noise of variance ``lambda_i``: ``mu(x) = c +
    G_t(x)^T (G_t + Lambda)^{-1} (Y_t - c)`` and ``Gamma_t(x, x') = Gamma(x, x') -
    G_t(x)^T (G_t + Lambda)^{-1} G_t(x')`` (paper 000, eq. (1), ``Lambda`` in place of
    ``eta I``). The routes that need one noise level work on the whitened function
    ``g = S^{-1} (f - c)``, ``S = diag(sqrt(lambda_i / eta))``, ``eta = min_i
    lambda_i`` (the model's ``regularization``), exactly.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.models.base import FixedKernelMultiTaskModel
        >>> X = torch.zeros(0, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
        >>> isinstance(model, FixedKernelMultiTaskModel), model.num_outputs
        (True, 2)
    """

    _num_outputs: int

    def _setup(
        self,
        train_X: Tensor,
        train_Y: Tensor,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
        regularization: float | None,
        train_tasks: Tensor | None,
        prior_mean: float | Sequence[float] | Tensor | None = None,
        noise_variances: float | Sequence[float] | Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Check the data, build the kernel, the prior mean and the noise variances,
        cast the module to ``train_X``'s dtype and freeze the kernel. Returns the
        checked ``(train_X, train_Y, train_tasks)``.

        Raises:
            TypeError, ValueError: See ``VectorValuedGP``.
        """
        self._conditioning: ConditioningObservations | None = None
        self._candidates: CandidatePosterior | None = None  # track_candidates
        self._register_rebuild_on_load()
        self.register_buffer("_output_tasks", None)  # subset_output: the tasks kept
        train_X = check_working_precision(check_tensor(train_X, "train_X", dim=2), "train_X")
        train_Y = check_working_precision(check_tensor(train_Y, "train_Y", dim=2), "train_Y")
        train_Y = train_Y.to(train_X)
        self.kernel = SumOfSeparableKernels(data_kernel, task_covariance)
        num_tasks = self.kernel.num_tasks
        noise, self.regularization = task_noise_variances(
            regularization, noise_variances, num_tasks
        )
        mean = torch.zeros(num_tasks, dtype=torch.float64)
        if prior_mean is not None:
            mean = per_task_values(prior_mean, num_tasks, "prior_mean", positive=False)
        self.register_buffer("prior_mean", mean)  # c, n
        self.register_buffer("noise_variances", noise)  # lambda_i, n
        self.register_buffer("_noise_scale", None, persistent=False)  # S, n (or None)
        self._num_outputs = num_tasks
        self._full_vector = train_tasks is None
        train_tasks = self._check_training_data(train_X, train_Y, train_tasks)
        self._use_icm = self._full_vector and self.kernel.num_terms == 1
        self._input_dim = train_X.shape[-1]
        self.to(device=train_X.device, dtype=train_X.dtype)
        self._set_noise_scale()
        for parameter in self.kernel.parameters():
            parameter.requires_grad_(False)
        return train_X.detach(), train_Y.detach(), train_tasks

    def _check_training_data(
        self, train_X: Tensor, train_Y: Tensor, train_tasks: Tensor | None
    ) -> Tensor | None:
        """Rows, columns and task indices of the training data (the model's kind of
        data, ``n`` tasks); returns the checked task indices on ``train_X``'s device."""
        num_tasks = self.kernel.num_tasks
        if train_Y.shape[0] != train_X.shape[0]:
            raise ValueError(
                f"train_X and train_Y must have the same number of rows, got "
                f"{train_X.shape[0]} and {train_Y.shape[0]}"
            )
        if train_tasks is None:
            if train_Y.shape[-1] != num_tasks:
                raise ValueError(
                    f"train_Y must be N x {num_tasks} (one column per task of the "
                    f"{num_tasks} x {num_tasks} task covariance) for full-vector data, got "
                    f"{tuple(train_Y.shape)}; pass train_tasks for task-indexed data"
                )
        else:
            if train_Y.shape[-1] != 1:
                raise ValueError(
                    f"train_Y must be N x 1 when train_tasks is given, got {tuple(train_Y.shape)}"
                )
            train_tasks = check_task_indices(
                train_tasks, num_tasks, "train_tasks", num_rows=train_X.shape[0]
            )
            train_tasks = train_tasks.to(train_X.device)
        return train_tasks

    # ------------------------------------------------------------------ properties
    @property
    def num_outputs(self) -> int:
        """The number of outputs: the tasks ``n``, or those kept by ``subset_output``."""
        if self._output_tasks is not None:
            return int(self._output_tasks.numel())
        return self._num_outputs

    @property
    def num_tasks(self) -> int:
        """The number of tasks ``n`` of the kernel (all of them, whatever the outputs)."""
        return self._num_outputs

    @property
    def batch_shape(self) -> torch.Size:
        """``torch.Size([])``, or the batch shape of the observations the model was
        conditioned on beyond its own data (``condition_on_observations``, ``fantasize``)."""
        if self._conditioning is None:
            return torch.Size([])
        return self._conditioning.batch_shape

    @property
    def output_tasks(self) -> Tensor:
        """The task (``0 .. n-1``) of each output, ``num_outputs`` (long)."""
        if self._output_tasks is not None:
            return self._output_tasks
        return torch.arange(self._num_outputs, device=self.train_X.device)

    @property
    def uses_eigen_route(self) -> bool:
        """Whether the ICM eigen-decomposition route of 000 Section 3.3 is in use."""
        return self._use_icm

    # ------------------------------------------------------------------ posterior
    def _mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x n`` and covariance ``batch x (q n) x (q n)`` (interleaved)."""
        raise NotImplementedError  # pragma: no cover

    def _posterior_moments(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """The core's moments at ``X``, conditioned on the further observations if any."""
        if self._conditioning is None:
            return self._mean_and_covariance(X)
        try:
            torch.broadcast_shapes(X.shape[:-2], self.batch_shape)
        except RuntimeError as error:
            raise ValueError(
                f"X's batch shape {tuple(X.shape[:-2])} must broadcast with the model's "
                f"batch_shape {tuple(self.batch_shape)}"
            ) from error
        joint = self._conditioning.joint_points(X)
        mean, covariance = self._mean_and_covariance(joint)
        return self._conditioning.update(mean, covariance, X.shape[-2])

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        r"""The posterior over all outputs at ``X`` (differentiable in ``X``).

        Args:
            X: ``batch x q x d`` (or ``q x d``) inputs; cast to the model's dtype. A
                batched model (``batch_shape``) broadcasts with ``batch``.
            output_indices: Outputs to keep (default: all ``num_outputs``).
            observation_noise: ``True``: add each output's task noise variance
                ``lambda_i`` (``noise_variances``; ``eta`` when the tasks share one) to
                its variance; a tensor: the noise variances to add (BoTorch semantics),
                broadcastable to ``batch x q x m`` (for ``m = 1``: ``batch x q``).
            posterior_transform: Applied as BoTorch's models do,
                ``posterior_transform(posterior=posterior, X=X)``.

        Returns:
            A ``GPyTorchPosterior`` over a ``MultitaskMultivariateNormal`` with mean
            ``batch x q x m`` (``m = num_outputs``, or the number of
            ``output_indices``) and the full ``(q m) x (q m)`` covariance, cross-task
            terms included (interleaved: index ``a * m + i`` is point ``a``, output
            ``i``); for ``m = 1`` a ``MultivariateNormal`` with mean ``batch x q``.

        Raises:
            TypeError: If ``X`` is not a tensor, or for another keyword argument.
            ValueError: If ``X`` is not at least 2-d, its last dimension differs from
                ``d``, it has no point (``q = 0``) or an empty batch dimension, it
                holds NaN/inf or values so large that the kernel overflows
                (``1e300 * X``), ``output_indices`` are out of range, or a tensor
                ``observation_noise`` does not broadcast or holds negative values.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.zeros(0, 1, dtype=torch.float64)  # the prior
            >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> test_X = torch.zeros(4, 3, 1, dtype=torch.float64)  # batch x q x d
            >>> model.posterior(test_X).mean.shape  # batch x q x n
            torch.Size([4, 3, 2])
            >>> model.posterior(test_X, output_indices=[1]).mean.shape  # one task
            torch.Size([4, 3, 1])
        """
        if kwargs:
            raise TypeError(
                f"posterior() got unexpected keyword arguments {sorted(kwargs)}; it takes "
                "X, output_indices, observation_noise and posterior_transform"
            )
        X = self._check_X(X)
        mean, covariance = self._output_moments(X, output_indices)
        q, n = mean.shape[-2], mean.shape[-1]
        if isinstance(observation_noise, Tensor):
            noise = self._noise_levels(observation_noise, mean, output_indices)
            covariance = covariance + torch.diag_embed(noise.reshape(*noise.shape[:-2], -1))
        elif isinstance(observation_noise, bool):
            if observation_noise:
                tasks = self._selected_tasks(output_indices, X.device)
                noise = self.noise_variances if tasks is None else self.noise_variances[tasks]
                covariance = covariance + torch.diag(noise.repeat(q))
        else:
            raise TypeError(
                "observation_noise must be a bool or a tensor of noise variances, got "
                f"{type(observation_noise).__name__}"
            )
        # A lazy covariance: a dense tensor would make torch factorize it at once, which
        # fails for singular posteriors (rank-deficient B, repeated points).
        covariance = DenseLinearOperator(covariance)
        if n == 1:
            distribution = MultivariateNormal(mean.squeeze(-1), covariance)
        else:
            distribution = MultitaskMultivariateNormal(mean, covariance, interleaved=True)
        posterior = GPyTorchPosterior(distribution)
        if posterior_transform is not None:
            return posterior_transform(posterior=posterior, X=X)
        return posterior

    def _output_moments(self, X: Tensor, output_indices: list[int] | None) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x m`` and interleaved covariance ``batch x (q m) x (q m)``
        of the outputs kept (``output_indices`` among the model's outputs) at the
        checked ``X``: the numbers of ``posterior`` before it builds a distribution."""
        index = self._selected_tasks(output_indices, X.device)
        selected = None
        if index is not None and self._conditioning is None:
            selected = self._task_moments(X, index)
        mean, covariance = self._posterior_moments(X) if selected is None else selected
        for values in (mean, covariance):  # finite training data: only X can overflow
            check_kernel_values(values, X, "X")
        q, n = mean.shape[-2], mean.shape[-1]
        if index is not None and selected is None:
            flat = (torch.arange(q, device=X.device)[:, None] * n + index).reshape(-1)
            mean = mean[..., index]
            covariance = covariance[..., flat, :][..., :, flat]
        return mean, covariance

    def _task_moments(self, X: Tensor, tasks: Tensor) -> tuple[Tensor, Tensor] | None:
        """Mean ``batch x q x h`` and covariance ``batch x (q h) x (q h)`` of the ``h``
        tasks ``tasks`` alone, where a route computes fewer tasks for less; ``None``
        (this default): all tasks are computed, then selected."""
        return None

    def point_moments(self, X: Tensor) -> tuple[Tensor, Tensor]:
        r"""Mean ``batch x m`` and output covariance ``batch x m x m`` at one point per
        batch (``X``: ``batch x 1 x d``), without building a posterior object.

        The same numbers as ``posterior(X).mean.squeeze(-2)`` and
        ``posterior(X).distribution.covariance_matrix`` (``m = num_outputs``), for the
        acquisition functions that evaluate many candidates each round
        (``acquisition.posterior_moments.posterior_mean_and_covariance``: building the
        distribution costs about as much as the moments themselves).

        Raises:
            TypeError, ValueError: As ``posterior``; also a ``ValueError`` if ``X``
                holds more than one point per batch (``q > 1``).

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.rand(4, 1, dtype=torch.float64)
            >>> model = VectorValuedGP(X, X.repeat(1, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> mean, covariance = model.point_moments(torch.rand(5, 1, 1, dtype=torch.float64))
            >>> mean.shape, covariance.shape
            (torch.Size([5, 2]), torch.Size([5, 2, 2]))
        """
        X = self._check_X(X)
        if X.shape[-2] != 1:
            raise ValueError(
                f"X must hold one point per batch (batch x 1 x {self._input_dim}), got "
                f"{tuple(X.shape)}"
            )
        mean, covariance = self._output_moments(X, None)
        return mean.squeeze(-2), covariance

    def _selected_tasks(self, output_indices: list[int] | None, device) -> Tensor | None:
        """The tasks a posterior keeps (``None``: all ``n``, in order), from the model's
        outputs and ``output_indices`` (positions among them)."""
        if output_indices is None:
            return self._output_tasks
        index = torch.as_tensor(output_indices, dtype=torch.long, device=device)
        m = self.num_outputs
        if index.numel() == 0 or index.min() < 0 or index.max() >= m:
            raise ValueError(f"output_indices must lie in [0, {m - 1}], got {output_indices}")
        return index if self._output_tasks is None else self._output_tasks[index]

    def _noise_levels(
        self, observation_noise: Tensor, mean: Tensor, output_indices: list[int] | None
    ) -> Tensor:
        """``observation_noise`` (variances, BoTorch's ``batch x q x m``) broadcast to
        ``mean``'s ``batch x q x n`` (the kept outputs' columns if it has all ``n``)."""
        noise = observation_noise.to(dtype=mean.dtype, device=mean.device)
        if output_indices is not None and noise.dim() >= 1 and noise.shape[-1] == self.num_outputs:
            noise = noise[..., torch.as_tensor(output_indices, device=mean.device)]
        if mean.shape[-1] == 1 and noise.dim() >= 1 and noise.shape[-1] == mean.shape[-2] > 1:
            noise = noise.unsqueeze(-1)  # single output given as batch x q
        try:
            noise = torch.broadcast_to(noise, mean.shape)
        except RuntimeError as error:
            raise ValueError(
                f"observation_noise must broadcast to batch x q x n = {tuple(mean.shape)}, "
                f"got shape {tuple(observation_noise.shape)}"
            ) from error
        if not torch.isfinite(noise).all() or (noise < 0).any():
            raise ValueError("observation_noise must hold finite variances >= 0")
        return noise

    def _check_X(self, X: Tensor) -> Tensor:
        if not isinstance(X, Tensor):
            raise TypeError(f"X must be a torch.Tensor, got {type(X).__name__}")
        if X.dim() < 2 or X.shape[-1] != self._input_dim:
            raise ValueError(
                f"X must have shape batch x q x {self._input_dim}, got {tuple(X.shape)}"
            )
        if X.shape[-2] < 1:
            raise ValueError(
                f"X must hold q >= 1 points (shape batch x q x {self._input_dim}), got "
                f"{tuple(X.shape)}"
            )
        if 0 in X.shape[:-2]:
            raise ValueError(
                f"X must not have an empty batch dimension (shape batch x q x "
                f"{self._input_dim}), got {tuple(X.shape)}"
            )
        if not torch.isfinite(X).all():
            raise ValueError("X contains NaN or inf")
        return X.to(dtype=self.train_X.dtype, device=self.train_X.device)

    # ------------------------------------------------------ finite candidate sets

    # ----------------------------------------------------------- conditioning
    def _require_all_outputs(self, method: str) -> None:
        """``method`` works on all the tasks of the model: refuse ``subset_output`` models."""
        if self._output_tasks is not None:
            raise UnsupportedError(
                f"{method} works on all tasks of the model, and this model is a "
                f"subset_output of it; call {method} on the full model"
            )

    def _check_new_data(
        self, X: Tensor, Y: Tensor, train_tasks: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Check rows to append (same kind of data as the model's); returns them cast
        to the model's dtype and device, and the task indices (``None`` for
        full-vector data)."""
        self._require_all_outputs("append_observations")
        X = check_tensor(X, "X", dim=2)
        Y = check_tensor(Y, "Y", dim=2)
        if X.shape[-1] != self._input_dim:
            raise ValueError(f"X must be m x {self._input_dim}, got {tuple(X.shape)}")
        if X.shape[0] != Y.shape[0]:
            raise ValueError(
                f"X and Y must have the same number of rows, got {X.shape[0]} and {Y.shape[0]}"
            )
        X = X.to(self.train_X).detach()
        Y = Y.to(self.train_X).detach()
        if self._full_vector:
            if train_tasks is not None:
                raise ValueError("train_tasks must be None for a model built on full-vector data")
            if Y.shape[-1] != self.num_tasks:
                raise ValueError(f"Y must be m x {self.num_tasks}, got {tuple(Y.shape)}")
            return X, Y, None
        if train_tasks is None:
            raise ValueError("train_tasks is required for a model built on task-indexed data")
        if Y.shape[-1] != 1:
            raise ValueError(f"Y must be m x 1 for task-indexed data, got {tuple(Y.shape)}")
        tasks = check_task_indices(train_tasks, self.num_tasks, "train_tasks", num_rows=X.shape[0])
        return X, Y, tasks.to(self.train_X.device)

    def append_observations(self, X: Tensor, Y: Tensor, train_tasks: Tensor | None = None):
        """Condition ``self`` on ``(X, Y)`` in place and return it."""
        raise NotImplementedError  # pragma: no cover

    # ----------------------------------------------------- fantasies, subsets

    def subset_output(self, idcs: list[int]) -> FixedKernelMultiTaskModel:
        r"""The model restricted to the outputs ``idcs`` (BoTorch's ``subset_output``).

        Its prior over the kept tasks is the kernel with the task covariance blocks
        ``B_j[idcs][:, idcs]``; its posterior keeps *every* observation, those of the
        other tasks included: they inform the kept tasks through the cross blocks
        ``B_j[idcs, rest]`` (paper 000, Section 2), and a model built on the kept
        tasks' data alone would differ whenever the tasks are correlated. So
        ``subset_output(idcs).posterior(X)`` equals ``posterior(X,
        output_indices=idcs)`` exactly, for the exact and the sketched model alike (the
        sketch keeps its dictionary). Fantasies and ``condition_on_observations`` of
        the subset observe its outputs (``Y``'s columns are ``idcs``).

        Args:
            idcs: Distinct output indices in ``[0, num_outputs - 1]`` (a list of ints).

        Returns:
            A model of the same type with ``num_outputs == len(idcs)``.

        Raises:
            TypeError: If ``idcs`` is not a list / tuple of ints.
            ValueError: If it is empty, repeats an index or is out of range.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> B = torch.tensor([[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])
            >>> X = torch.rand(4, 1, dtype=torch.float64)
            >>> Y = torch.rand(4, 3, dtype=torch.float64)
            >>> model = VectorValuedGP(X, Y, RBFKernel(), B, 0.1)
            >>> sub = model.subset_output([2, 0])
            >>> test_X = torch.rand(3, 1, dtype=torch.float64)
            >>> sub.num_outputs, torch.equal(
            ...     sub.posterior(test_X).mean, model.posterior(test_X, output_indices=[2, 0]).mean
            ... )
            (2, True)
        """
        if not isinstance(idcs, (list, tuple)):
            raise TypeError(f"idcs must be a list of output indices, got {type(idcs).__name__}")
        m = self.num_outputs
        chosen = [as_int(i, f"idcs[{k}]") for k, i in enumerate(idcs)]
        if not chosen or len(set(chosen)) != len(chosen) or min(chosen) < 0 or max(chosen) >= m:
            raise ValueError(f"idcs must be distinct indices in [0, {m - 1}], got {list(idcs)}")
        tasks = self.output_tasks[torch.tensor(chosen, device=self.train_X.device)]
        model = self._copy()
        everything = torch.arange(self.num_tasks, device=tasks.device)
        full = tasks.numel() == self.num_tasks and torch.equal(tasks, everything)
        model._output_tasks = None if full else tasks
        return model
