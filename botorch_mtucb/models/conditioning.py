r"""Gaussian conditioning of a fixed-kernel multi-task posterior on further observations.

Conditioning a Gaussian process posterior (mean ``m``, covariance ``C``) on new scalar
observations ``y_j = f_{i_j}(p_j) + eps_j``, ``eps_j ~ N(0, s_j)`` independent, gives the
posterior on all the data (Bayes' rule applied twice; paper 000, Section 3.1, eq. (1)
with the old posterior as the prior; Rasmussen & Williams 2006, eqs. (2.22)-(2.24)):

.. math::
    m'(x) = m(x) + C(x, P) (C(P, P) + S)^{-1} (y - m(P)), \qquad
    C'(x, x') = C(x, x') - C(x, P) (C(P, P) + S)^{-1} C(P, x'),

with ``S = diag(s)``. The models of the package keep their own data in factorizations
that grow in place; what those cannot hold goes through this module: batches of
observations (BoTorch's fantasies make ``num_fantasies x batch`` models), noise
variances other than the model's regularization, and observations of the other kind
of data (all tasks at a point for a task-indexed model, and the reverse).

Why this module is long: the module holds the conditioned observations with their fitted
factor (``ConditioningObservations``) and the one place that decides between the
model's in-place update and this conditioning (``ConditioningMixin``:
``condition_on_observations`` and ``fantasize``); the mixin is the object's only user,
and the choice of route is what keeps a conditioned model's abilities the same as an
updated one's, so the two stay together.
"""

from __future__ import annotations

import copy
from typing import Any, Self

import torch
from botorch.models.model import FantasizeMixin
from botorch.sampling.base import MCSampler
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.kernels.task_checks import check_task_indices
from botorch_mtucb.utils.checks import check_kernel_values, check_tensor
from botorch_mtucb.utils.linalg import cholesky_factor


def _cat_batched(first: Tensor, second: Tensor, trailing: int) -> Tensor:
    """Concatenate along dimension ``-trailing`` after broadcasting the batch dimensions
    (all but the last ``trailing``)."""
    batch = torch.broadcast_shapes(first.shape[:-trailing], second.shape[:-trailing])
    first = first.expand(*batch, *first.shape[-trailing:])
    second = second.expand(*batch, *second.shape[-trailing:])
    return torch.cat([first, second], dim=-trailing)


def _noise_variances(noise: Tensor | None, Y: Tensor, default: float | Tensor) -> Tensor:
    """``noise`` (``None``: ``default``, a number or a tensor broadcastable to ``Y``'s
    last two dimensions) broadcast to ``Y``'s last two dimensions."""
    if noise is None:
        if isinstance(default, Tensor):
            return default.to(Y).expand(Y.shape[-2:])
        return torch.full(Y.shape[-2:], default, dtype=Y.dtype, device=Y.device)
    if not isinstance(noise, Tensor):
        raise TypeError(
            "noise must be a tensor of noise variances (the shape of Y) or None, got "
            f"{type(noise).__name__}"
        )
    noise = check_tensor(noise, "noise").to(Y)
    if (noise < 0).any():
        raise ValueError("noise must hold variances >= 0")
    try:
        return noise.expand(torch.broadcast_shapes(noise.shape, Y.shape[-2:]))
    except RuntimeError as error:
        raise ValueError(
            f"noise must broadcast to Y's shape {tuple(Y.shape)}, got {tuple(noise.shape)}"
        ) from error


class ConditioningObservations(Module):
    r"""Scalar observations ``(p_j, i_j, y_j, s_j)`` that a posterior is conditioned on.

    The observed pairs (point, task) are given by their positions ``p * n + i`` in the
    interleaved ``(P n)`` layout of the ``P`` points and ``n`` tasks, so that one
    ``batch x (P n) x (P n)`` covariance of the model at the points gives ``C(P, P)``.
    ``fit`` factorizes ``C(P, P) + S`` once; ``update`` then conditions the model's
    moments at any test points. Tensors are buffers: ``.to()`` moves and casts them.

    Args:
        points: ``batch_p x P x d`` inputs.
        index: ``M`` positions (long) of the observed pairs in ``[0, P n - 1]``.
        values: ``batch_y x M`` observed values.
        noise: ``batch_s x M`` noise variances (``>= 0``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.conditioning import ConditioningObservations
        >>> f64 = {"dtype": torch.float64}
        >>> point = torch.zeros(1, 1, **f64)  # y = 1 on task 1 (of 2) at x = 0, noise 0.5
        >>> obs = ConditioningObservations(
        ...     point, torch.tensor([1]), torch.ones(1, **f64), torch.full((1,), 0.5, **f64)
        ... )
        >>> obs.fit(torch.zeros(1, 2, **f64), torch.eye(2, **f64))  # the prior at x = 0
        >>> joint = obs.joint_points(point)  # test point x = 0, then the observed point
        >>> prior = torch.eye(2, **f64).repeat(2, 2)  # k = 1 between the two, B = I
        >>> mean, covariance = obs.update(torch.zeros(2, 2, **f64), prior, q=1)
        >>> mean  # task 1 moves to 1 / (1 + 0.5)
        tensor([[0.0000, 0.6667]], dtype=torch.float64)
        >>> covariance.diagonal()  # 1 - 1 / 1.5 on task 1
        tensor([1.0000, 0.3333], dtype=torch.float64)
    """

    def __init__(self, points: Tensor, index: Tensor, values: Tensor, noise: Tensor) -> None:
        super().__init__()
        self.register_buffer("points", points)
        self.register_buffer("index", index)
        self.register_buffer("values", values)
        self.register_buffer("noise", noise.to(values))
        self.register_buffer("chol", None)
        self.register_buffer("whitened", None)

    @classmethod
    def from_rows(
        cls,
        X: Tensor,
        Y: Tensor,
        noise: Tensor | None,
        train_tasks: Tensor | None,
        outputs: Tensor,
        num_tasks: int,
        regularization: float | Tensor,
        like: Tensor,
    ) -> ConditioningObservations:
        """Rows of BoTorch's ``condition_on_observations`` as scalar observations.

        Args:
            X: ``batch_shape x n' x d`` inputs.
            Y: ``batch_shape' x n' x m`` (every output observed at each row) or
                ``batch_shape' x n' x 1`` with ``train_tasks``.
            noise: Variances broadcastable to ``Y`` (``None``: ``regularization``).
            train_tasks: ``n'`` output indices of the rows, or ``None``.
            outputs: The task of each of the model's ``m`` outputs (long).
            num_tasks: ``n``, the number of tasks of the kernel.
            regularization: The model's noise variance ``lambda`` (a number), or the
                noise variance of each of its ``m`` outputs (an ``m`` tensor): the
                noise of an observation when ``noise`` is ``None``.
            like: The model's ``N x d`` training inputs: ``d``, the dtype and device
                that the observations are cast to.

        Raises:
            TypeError: For a non-tensor ``X``, ``Y`` or ``noise``.
            ValueError: For NaN/inf, wrong shapes, task indices out of range, batch
                shapes that do not broadcast, or negative noise variances.

        Example:
            >>> import torch
            >>> from botorch_mtucb.models.conditioning import ConditioningObservations
            >>> obs = ConditioningObservations.from_rows(
            ...     torch.rand(4, 2, 1), torch.rand(4, 2, 3), None, None,
            ...     outputs=torch.arange(3), num_tasks=3, regularization=0.1,
            ...     like=torch.zeros(0, 1),
            ... )
            >>> obs.batch_shape, obs.index.tolist()  # point p, task i at p * 3 + i
            (torch.Size([4]), [0, 1, 2, 3, 4, 5])
        """
        m, d = outputs.numel(), like.shape[-1]
        X, Y = check_tensor(X, "X").to(like), check_tensor(Y, "Y").to(like)
        if X.dim() < 2 or X.shape[-1] != d:
            raise ValueError(f"X must be batch_shape x n' x {d}, got {tuple(X.shape)}")
        if Y.dim() < 2:
            raise ValueError(f"Y must be batch_shape x n' x {m}, got {tuple(Y.shape)}")
        if X.shape[-2] != Y.shape[-2]:
            raise ValueError(
                f"X and Y must have the same number of rows, got {X.shape[-2]} and {Y.shape[-2]}"
            )
        positions = torch.arange(X.shape[-2], device=X.device) * num_tasks
        if train_tasks is None:
            if Y.shape[-1] != m:
                raise ValueError(
                    f"Y must be batch_shape x n' x {m} (one column per output), or "
                    f"batch_shape x n' x 1 with train_tasks, got {tuple(Y.shape)}"
                )
            index = (positions[:, None] + outputs).reshape(-1)
            default = regularization
        else:
            if Y.shape[-1] != 1:
                raise ValueError(
                    f"Y must be batch_shape x n' x 1 when train_tasks is given, got "
                    f"{tuple(Y.shape)}"
                )
            tasks = check_task_indices(train_tasks, m, "train_tasks", num_rows=X.shape[-2])
            index = positions + outputs[tasks.to(X.device)]
            default = regularization
            if isinstance(regularization, Tensor):
                default = regularization[tasks.to(regularization.device)].unsqueeze(-1)
        noise = _noise_variances(noise, Y, default)
        try:
            torch.broadcast_shapes(X.shape[:-2], Y.shape[:-2], noise.shape[:-2])
        except RuntimeError as error:
            raise ValueError(
                f"the batch shapes of X {tuple(X.shape)}, Y {tuple(Y.shape)} and noise "
                f"{tuple(noise.shape)} must broadcast"
            ) from error
        flat = Y.shape[-2] * Y.shape[-1]
        return cls(X, index, Y.reshape(*Y.shape[:-2], flat), noise.reshape(*noise.shape[:-2], flat))

    @property
    def batch_shape(self) -> torch.Size:
        """The broadcast batch shape of points, values and noise variances."""
        return torch.broadcast_shapes(
            self.points.shape[:-2], self.values.shape[:-1], self.noise.shape[:-1]
        )

    @property
    def num_observations(self) -> int:
        """``M``, the number of scalar observations."""
        return int(self.index.numel())

    def joined(self, later: ConditioningObservations, num_tasks: int) -> ConditioningObservations:
        """These observations followed by ``later`` (batch dimensions broadcast); not fitted."""
        offset = self.points.shape[-2] * num_tasks
        return ConditioningObservations(
            _cat_batched(self.points, later.points, 2),
            torch.cat([self.index, later.index + offset]),
            _cat_batched(self.values, later.values, 1),
            _cat_batched(self.noise, later.noise, 1),
        )

    def fit(self, mean: Tensor, covariance: Tensor, regularization: float | None = None) -> None:
        """Factorize ``C(P, P) + S`` and whiten ``y - m(P)`` from the moments at the points.

        Args:
            mean: ``batch x P x n`` posterior mean at ``points``.
            covariance: ``batch x (P n) x (P n)`` posterior covariance (interleaved).
            regularization: The model's ``lambda``: jitter in the factorization beyond
                1% of the smallest noise variance is reported (``cholesky_factor``).
        """
        flat_mean = mean.reshape(*mean.shape[:-2], -1)[..., self.index]
        block = covariance[..., self.index, :][..., :, self.index]
        block = block + torch.diag_embed(self.noise)
        smallest = float(self.noise.min()) if self.noise.numel() else regularization
        self.chol = cholesky_factor(block, smallest if smallest else regularization)
        residual = (self.values - flat_mean).unsqueeze(-1)
        self.whitened = torch.linalg.solve_triangular(self.chol, residual, upper=False)

    def information_gain(self) -> Tensor:
        r"""``1/2 log det(I + S^{-1/2} C(P, P) S^{-1/2})`` of the fitted observations
        (``batch``): the information they add to the posterior they were fitted to
        (the chain rule; infinite for noiseless observations)."""
        log_diagonal = self.chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return log_diagonal - 0.5 * self.noise.log().sum(-1)

    def joint_points(self, X: Tensor) -> Tensor:
        """``X`` (``batch x q x d``) followed by the observed points: ``batch' x (q + P) x d``."""
        return _cat_batched(X, self.points.to(X), 2)

    def update(self, mean: Tensor, covariance: Tensor, q: int) -> tuple[Tensor, Tensor]:
        """Condition the moments at the joint points (``joint_points``) on the observations.

        Args:
            mean: ``batch x (q + P) x n`` mean at the joint points.
            covariance: ``batch x ((q + P) n) x ((q + P) n)`` covariance (interleaved).
            q: The number of test points (the first ``q`` of the joint points).

        Returns:
            The conditioned mean ``batch' x q x n`` and covariance
            ``batch' x (q n) x (q n)`` at the test points, ``batch'`` the broadcast of
            ``batch`` and ``batch_shape``.
        """
        n = mean.shape[-1]
        test = q * n
        cross = covariance[..., test + self.index, :test]  # batch x M x (q n): C(P, x)
        solved = torch.linalg.solve_triangular(self.chol, cross, upper=False)  # L^{-1} C(P, x)
        shift = (solved.transpose(-1, -2) @ self.whitened).squeeze(-1)  # batch' x (q n)
        conditioned_mean = mean[..., :q, :] + shift.reshape(*shift.shape[:-1], q, n)
        conditioned = covariance[..., :test, :test] - solved.transpose(-1, -2) @ solved
        batch = torch.broadcast_shapes(conditioned_mean.shape[:-2], conditioned.shape[:-2])
        return (
            conditioned_mean.expand(*batch, q, n),
            conditioned.expand(*batch, test, test),
        )


class ConditioningMixin:
    """BoTorch's conditioning API for ``FixedKernelMultiTaskModel``:
    ``condition_on_observations`` (the model's own in-place update, or Gaussian
    conditioning on ``ConditioningObservations``) and ``fantasize``.

    A subclass keeps its own data in a factorization that grows in place
    (``append_observations``); whatever that cannot hold is kept as
    ``ConditioningObservations`` fitted to the model's moments at their points, and fitted
    again whenever the model's own data grow.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.models.conditioning import ConditioningMixin
        >>> X = torch.zeros(0, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
        >>> isinstance(model, ConditioningMixin), model.batch_shape
        (True, torch.Size([]))
    """

    _conditioning: ConditioningObservations | None

    def condition_on_observations(
        self,
        X: Tensor,
        Y: Tensor,
        *,
        noise: Tensor | None = None,
        train_tasks: Tensor | None = None,
        **kwargs: Any,
    ) -> Self:
        r"""A new model conditioned on ``(X, Y)`` as well (BoTorch semantics);
        ``self`` is not modified.

        Unbatched rows of the model's own kind with the model's noise (``noise`` omitted
        or equal to each task's ``lambda_i``) and no gradient to carry extend a copy of its
        factorization (``append_observations``: ``O(t^2)`` per row, same type, same
        numbers as a model built on all the rows). Anything else is honoured exactly by
        conditioning the posterior on the new observations (``models.conditioning``, Gaussian
        conditioning): batched ``X`` / ``Y`` (the new model's ``batch_shape`` is their
        broadcast batch shape, e.g. ``num_fantasies x batch`` from ``fantasize``), other
        noise variances, rows of the other kind of data. Such a model keeps the core
        factorization and every ability of the model it came from (the class docstring:
        ``append_observations``, ``information_gain``, ``track_candidates``).

        Args:
            X: ``batch_shape x n' x d`` new inputs.
            Y: ``batch_shape' x n' x m`` outputs, one column per output of the model
                (all its tasks, or those of ``subset_output``), or
                ``batch_shape' x n' x 1`` with ``train_tasks``; ``batch_shape'``
                broadcasts with ``batch_shape``.
            noise: Noise variances of the observations (``>= 0``), broadcastable to
                ``Y`` (BoTorch's ``noise``: the shape of ``Y``); ``None``: each
                observed task's ``lambda_i`` (``noise_variances``).
            train_tasks: ``n'`` output indices of the rows (task-indexed rows, the same
                for every batch); ``None``: every output is observed at each row.
            **kwargs: Passed to ``append_observations`` (the unbatched route only).

        Returns:
            A model of the same type with ``batch_shape`` the broadcast of the model's
            and the observations' batch shapes.

        Raises:
            TypeError: For a non-tensor ``X`` / ``Y`` / ``noise``, or keyword arguments
                that a batched conditioning cannot use.
            ValueError: As in the constructor (NaN, shapes, task indices, inputs that
                overflow the kernel); also for batch shapes that do not broadcast or
                negative ``noise``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.zeros(0, 1, dtype=torch.float64)
            >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> new = model.condition_on_observations(torch.ones(1, 1), torch.ones(1, 2))
            >>> model.num_observations, new.num_observations
            (0, 2)
            >>> batched = model.condition_on_observations(  # 4 batches of 3 rows
            ...     torch.rand(4, 3, 1), torch.rand(4, 3, 2), noise=torch.full((4, 3, 2), 0.01)
            ... )
            >>> batched.batch_shape, batched.posterior(torch.rand(5, 1)).mean.shape
            (torch.Size([4]), torch.Size([4, 5, 2]))
        """
        if self._updates_in_place(X, Y, noise, train_tasks):
            new_model = copy.deepcopy(self)
            return new_model.append_observations(X, Y, train_tasks=train_tasks, **kwargs)
        if kwargs:
            raise TypeError(
                f"condition_on_observations got {sorted(kwargs)}, which only the "
                "unbatched update of the model's own data with its own noise takes"
            )
        return self._conditioned(X, Y, noise, train_tasks)

    def _updates_in_place(
        self, X: Tensor, Y: Tensor, noise: Tensor | None, train_tasks: Tensor | None
    ) -> bool:
        """Whether ``(X, Y)`` can extend the model's own factorization: an unconditioned,
        full model; unbatched rows of its kind; each task's noise ``lambda_i``."""
        if self._conditioning is not None or self._output_tasks is not None:
            return False
        if not isinstance(X, Tensor) or not isinstance(Y, Tensor):
            return True  # append_observations names the argument
        if X.dim() != 2 or Y.dim() != 2 or (train_tasks is None) != self._full_vector:
            return False
        if X.requires_grad or Y.requires_grad:  # the in-place update detaches its rows
            return False
        if noise is None:
            return True
        if not isinstance(noise, Tensor) or noise.dim() > 2:
            return False
        try:
            fits = torch.broadcast_shapes(noise.shape, Y.shape) == Y.shape
        except RuntimeError:
            return False
        if not fits:
            return False
        if Y.shape[-1] != (self.num_tasks if self._full_vector else 1):
            return True  # append_observations names the argument
        own = self.noise_variances
        if train_tasks is not None:
            try:
                tasks = check_task_indices(train_tasks, self.num_tasks, "train_tasks")
            except (TypeError, ValueError):
                return True  # append_observations names the argument
            if tasks.numel() != Y.shape[-2]:
                return True
            own = own[tasks.to(own.device)].unsqueeze(-1)
        return bool((noise.to(own) == own).all())

    def _conditioned(
        self, X: Tensor, Y: Tensor, noise: Tensor | None, train_tasks: Tensor | None
    ) -> Self:
        """A copy conditioned on ``(X, Y)`` by Gaussian conditioning of its posterior."""
        new = ConditioningObservations.from_rows(
            X,
            Y,
            noise,
            train_tasks,
            outputs=self.output_tasks,
            num_tasks=self.num_tasks,
            regularization=self.noise_variances[self.output_tasks],
            like=self.train_X,
        )
        if self._conditioning is None:
            observations = new
        else:
            try:
                torch.broadcast_shapes(self.batch_shape, new.batch_shape)
            except RuntimeError as error:
                raise ValueError(
                    f"the batch shape {tuple(new.batch_shape)} of X, Y and noise must "
                    f"broadcast with the model's batch_shape {tuple(self.batch_shape)}"
                ) from error
            observations = self._conditioning.joined(new, self.num_tasks)
        self._fit_conditioning(observations, new.points)
        model = self._copy()
        model._conditioning = observations
        return model

    def _fit_conditioning(self, observations: ConditioningObservations, new: Tensor) -> None:
        """Fit ``observations`` to the core's moments at their points (``new``: the
        points that errors about the kernel's range blame)."""
        points = observations.points
        if points.shape[-2]:
            mean, covariance = self._mean_and_covariance(points)  # the core's moments
            for values in (mean, covariance):
                check_kernel_values(values, new, "X")
        else:  # no row: only the batch shape changes (BoTorch's fantasize at n' = 0)
            mean = points.new_zeros(*points.shape[:-2], 0, self.num_tasks)
            covariance = points.new_zeros(*points.shape[:-2], 0, 0)
        observations.fit(mean, covariance, self.regularization)

    def _refit_conditioning(self) -> None:
        """After the core grew in place (``append_observations``): condition its new
        posterior on the further observations again (Bayes' rule does not depend on the
        order of the observations)."""
        if self._conditioning is not None:
            self._fit_conditioning(self._conditioning, self._conditioning.points)

    def _copy(self) -> Self:
        """A deep copy; observations that carry an autograd graph (fantasies of
        ``X`` with gradients) are shared, not copied (they are never changed)."""
        memo: dict[int, Any] = {}
        if self._conditioning is not None:
            memo.update({id(t): t for t in self._conditioning.buffers()})
        return copy.deepcopy(self, memo)

    def fantasize(
        self,
        X: Tensor,
        sampler: MCSampler,
        observation_noise: Tensor | None = None,
        **kwargs: Any,
    ) -> Self:
        r"""A fantasy model (BoTorch's ``fantasize``): ``Y`` sampled from the posterior
        at ``X`` with observation noise, then ``condition_on_observations(X, Y)``.

        The model's noise is each task's ``lambda_i`` (``noise_variances``; the
        regularization ``eta`` of the papers when the tasks share it), so
        ``observation_noise=None`` means ``lambda_i`` on output ``i``; a tensor gives
        other variances (BoTorch semantics). BoTorch's ``qKnowledgeGradient`` and
        ``qNegIntegratedPosteriorVariance`` run on the models through this method.

        Args:
            X: ``batch_shape x n' x d`` points.
            sampler: The sampler of the fantasies (``sample_shape`` ``num_fantasies``).
            observation_noise: ``None`` or a ``batch_shape x n' x m`` (or ``1 x m``)
                tensor of noise variances.
            **kwargs: Passed to BoTorch's ``FantasizeMixin.fantasize``
                (``propagate_grads``).

        Returns:
            A model with ``batch_shape`` ``num_fantasies x batch_shape`` (broadcast
            with the model's own).

        Raises:
            DeprecationError: For a boolean ``observation_noise`` (as BoTorch).
            TypeError, ValueError: As ``posterior`` and ``condition_on_observations``.

        Example:
            >>> import torch
            >>> from botorch.sampling import SobolQMCNormalSampler
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> X = torch.rand(5, 1, dtype=torch.float64)
            >>> model = VectorValuedGP(X, X.repeat(1, 2), RBFKernel(), torch.eye(2), 0.1)
            >>> sampler = SobolQMCNormalSampler(torch.Size([8]))
            >>> fantasy = model.fantasize(torch.rand(3, 2, 1, dtype=torch.float64), sampler)
            >>> fantasy.batch_shape  # num_fantasies x batch
            torch.Size([8, 3])
        """
        if observation_noise is None:
            observation_noise = self.noise_variances[self.output_tasks].unsqueeze(0).clone()
        return FantasizeMixin.fantasize(
            self, X, sampler, observation_noise=observation_noise, **kwargs
        )
