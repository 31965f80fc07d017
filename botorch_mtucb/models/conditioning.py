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
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.kernels.task_checks import check_task_indices
from botorch_mtucb.utils.checks import check_tensor
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
            ...     outputs=torch.arange(3), num_tasks=3, regularization=0.1, like=torch.zeros(0, 1),
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
