"""What the exact and the sketched multi-task posteriors share.

Both models take the data of paper 000 (full-vector rows, ``train_Y``: ``N x n``) or
of paper 001 (task-indexed rows, ``train_Y``: ``N x 1`` with ``train_tasks``), a fixed
multi-task kernel ``sum_j k_j(x, x') B_j`` and a noise variance ``eta``; both return
BoTorch posteriors with the full cross-task covariance and can be conditioned on new
rows. Subclasses implement ``_mean_and_covariance(X)`` and ``append_observations``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from gpytorch.kernels import Kernel
from linear_operator.operators import DenseLinearOperator
from torch import Tensor

from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels, TaskCovarianceLike
from botorch_mtucb.utils.checks import (
    check_kernel_values,
    check_positive,
    check_task_indices,
    check_tensor,
    check_working_precision,
)


def eigen_groups(task_covariance: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Eigen-system of ``B`` with numerically equal positive eigenvalues grouped.

    Paper 000, Section 3.3: ``B = sum_i xi_i u_i u_i^T``. Eigenvalues below ``1e-10``
    (float64) / ``1e-5`` (float32) of the largest count as zero.

    Returns:
        ``xi`` (``n``, zero for null directions), ``U`` (``n x n``, columns ``u_i``),
        ``group_of`` (``n``: the group of each direction) and ``group_xi`` (the
        distinct positive values; ``[1.0]`` if ``B = 0``).

    Raises:
        TypeError: For a half-precision ``task_covariance`` (float32 / float64 only).

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.base import eigen_groups
        >>> B = torch.diag(torch.tensor([2.0, 2.0, 0.0], dtype=torch.float64))
        >>> xi, U, group_of, group_xi = eigen_groups(B)
        >>> xi, group_xi
        (tensor([0., 2., 2.], dtype=torch.float64), tensor([2.], dtype=torch.float64))
    """
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


class FixedKernelMultiTaskModel(Model):
    """Base class of ``VectorValuedGP`` and ``NystromVectorValuedGP``: data checks,
    BoTorch posterior assembly and conditioning.

    A subclass builds its posterior state after ``_setup`` and implements
    ``_mean_and_covariance(X)`` (mean ``batch x q x n``, interleaved covariance
    ``batch x (q n) x (q n)``) and ``append_observations``.

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
        regularization: float,
        train_tasks: Tensor | None,
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Check the data, build the kernel, cast the module to ``train_X``'s dtype and
        freeze the kernel. Returns the checked ``(train_X, train_Y, train_tasks)``.

        Raises:
            TypeError, ValueError: See ``VectorValuedGP``.
        """
        train_X = check_working_precision(check_tensor(train_X, "train_X", dim=2), "train_X")
        train_Y = check_working_precision(check_tensor(train_Y, "train_Y", dim=2), "train_Y")
        train_Y = train_Y.to(train_X)
        if train_Y.shape[0] != train_X.shape[0]:
            raise ValueError(
                f"train_X and train_Y must have the same number of rows, got "
                f"{train_X.shape[0]} and {train_Y.shape[0]}"
            )
        self.kernel = SumOfSeparableKernels(data_kernel, task_covariance)
        num_tasks = self.kernel.num_tasks
        self.regularization = check_positive(regularization, "regularization")
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
        self._num_outputs = num_tasks
        self._full_vector = train_tasks is None
        self._use_icm = self._full_vector and self.kernel.num_terms == 1
        self._input_dim = train_X.shape[-1]
        self.to(device=train_X.device, dtype=train_X.dtype)
        for parameter in self.kernel.parameters():
            parameter.requires_grad_(False)
        return train_X.detach(), train_Y.detach(), train_tasks

    # ------------------------------------------------------------------ properties
    @property
    def num_outputs(self) -> int:
        """The number of tasks ``n``."""
        return self._num_outputs

    @property
    def num_tasks(self) -> int:
        """The number of tasks ``n``."""
        return self._num_outputs

    @property
    def batch_shape(self) -> torch.Size:
        """Models are not batched: ``torch.Size([])``."""
        return torch.Size([])

    @property
    def uses_eigen_route(self) -> bool:
        """Whether the ICM eigen-decomposition route of 000 Section 3.3 is in use."""
        return self._use_icm

    # ------------------------------------------------------------------ posterior
    def _mean_and_covariance(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Mean ``batch x q x n`` and covariance ``batch x (q n) x (q n)`` (interleaved)."""
        raise NotImplementedError  # pragma: no cover

    def posterior(
        self,
        X: Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | Tensor = False,
        posterior_transform: PosteriorTransform | None = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        r"""The posterior over all tasks at ``X`` (differentiable in ``X``).

        Args:
            X: ``batch x q x d`` (or ``q x d``) inputs; cast to the model's dtype.
            output_indices: Tasks to keep (default: all ``n``).
            observation_noise: ``True``: add the model's ``eta`` to each output's
                variance; a tensor: the noise variances to add (BoTorch semantics),
                broadcastable to ``batch x q x n`` (for ``n = 1``: ``batch x q``).
            posterior_transform: Applied to the posterior if given (BoTorch semantics).

        Returns:
            A ``GPyTorchPosterior`` over a ``MultitaskMultivariateNormal`` with mean
            ``batch x q x n`` and the full ``(q n) x (q n)`` covariance, cross-task
            terms included (interleaved: index ``a * n + i`` is point ``a``, task
            ``i``); for ``n = 1`` (or one output index) a ``MultivariateNormal`` with
            mean ``batch x q``.

        Raises:
            TypeError: If ``X`` is not a tensor.
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
        X = self._check_X(X)
        mean, covariance = self._mean_and_covariance(X)
        for values in (mean, covariance):  # finite training data: only X can overflow
            check_kernel_values(values, X, "X")
        q, n = mean.shape[-2], mean.shape[-1]
        if output_indices is not None:
            index = torch.as_tensor(output_indices, dtype=torch.long, device=X.device)
            if index.numel() == 0 or index.min() < 0 or index.max() >= n:
                raise ValueError(f"output_indices must lie in [0, {n - 1}], got {output_indices}")
            flat = (torch.arange(q, device=X.device)[:, None] * n + index).reshape(-1)
            mean = mean[..., index]
            covariance = covariance[..., flat, :][..., :, flat]
            n = index.numel()
        if isinstance(observation_noise, Tensor):
            noise = self._noise_levels(observation_noise, mean, output_indices)
            covariance = covariance + torch.diag_embed(noise.reshape(*noise.shape[:-2], -1))
        elif isinstance(observation_noise, bool):
            if observation_noise:
                eye = torch.eye(q * n, dtype=covariance.dtype, device=covariance.device)
                covariance = covariance + self.regularization * eye
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
            return posterior_transform(posterior)
        return posterior

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

    # ----------------------------------------------------------- conditioning
    def _check_new_data(
        self, X: Tensor, Y: Tensor, train_tasks: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Check rows to append (same kind of data as the model's); returns them cast
        to the model's dtype and device, and the task indices (``None`` for
        full-vector data)."""
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

    def condition_on_observations(
        self, X: Tensor, Y: Tensor, train_tasks: Tensor | None = None, **kwargs: Any
    ) -> FixedKernelMultiTaskModel:
        r"""A new model conditioned on ``(X, Y)`` as well (BoTorch semantics);
        ``self`` is not modified.

        Args:
            X: ``m x d`` new inputs (fantasy batches are not supported).
            Y: ``m x n`` new outputs (full-vector data) or ``m x 1`` with
                ``train_tasks`` (task-indexed data).
            train_tasks: ``m`` task indices, required for task-indexed models.
            **kwargs: Passed to ``append_observations``.

        Raises:
            ValueError, TypeError: As in the constructor; also for batched ``X`` or
                data of the other kind.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.zeros(0, 1, dtype=torch.float64)
            >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> new = model.condition_on_observations(torch.ones(1, 1), torch.ones(1, 2))
            >>> model.num_observations, new.num_observations
            (0, 2)
        """
        new_model = copy.deepcopy(self)
        return new_model.append_observations(X, Y, train_tasks=train_tasks, **kwargs)
