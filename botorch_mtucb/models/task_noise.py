r"""A constant prior mean and a noise variance per task for the fixed-kernel models.

The theory of the papers takes ``f ~ GP(0, Gamma)`` observed with one noise variance
``eta``. A fitted BoTorch model has a constant mean ``c_i`` and a noise variance
``lambda_i`` per task; the exact posterior is then (paper 000, eq. (1) with ``Y_t - c``
and ``Lambda`` in place of ``Y_t`` and ``eta I``; Rasmussen & Williams 2006, eq. (2.38))

.. math::
    \mu_t(x) = c + G_t(x)^\top (G_t + \Lambda)^{-1} (Y_t - c), \qquad
    \Gamma_t(x, x') = \Gamma(x, x') - G_t(x)^\top (G_t + \Lambda)^{-1} G_t(x'),

``Lambda`` the diagonal of the scalar observations' noise variances. With
``S = diag(sqrt(lambda_i / eta))``, ``eta = min_i lambda_i``, the whitened function
``g = S^{-1} (f - c)`` has the kernel ``S^{-1} Gamma S^{-1}`` and observations
``S^{-1} (y - c)`` with noise variance ``eta`` on every task, so the routes built on one
noise level (paper 000's eigen route of Section 3.3, the Nystrom sketch of Algorithm 2)
run unchanged on ``g`` and ``f = c + S g`` exactly. ``TaskNoiseMixin`` holds ``c``,
``lambda_i`` and ``S`` for ``FixedKernelMultiTaskModel``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from botorch_mtucb.utils.checks import as_real_tensor, check_positive


def per_task_values(
    value: float | Sequence[float] | Tensor, num_tasks: int, name: str, positive: bool
) -> Tensor:
    """One finite value per task: a number (the same for every task) or ``n`` values,
    as a float64 tensor of shape ``n``; ``positive``: every value ``> 0``.

    Raises:
        TypeError: For a value that is not a real number or real tensor / sequence.
        ValueError: For another number of values than ``n``, NaN/inf, or (``positive``)
            a value ``<= 0``.

    Example:
        >>> from botorch_mtucb.models.task_noise import per_task_values
        >>> per_task_values(0.1, 2, "noise_variances", positive=True)
        tensor([0.1000, 0.1000], dtype=torch.float64)
        >>> per_task_values([1.0, -2.0], 2, "prior_mean", positive=False)
        tensor([ 1., -2.], dtype=torch.float64)
    """
    values = as_real_tensor(value, name).to(torch.float64)
    if values.dim() == 0:
        values = values.expand(num_tasks).clone()
    if values.shape != (num_tasks,):
        raise ValueError(
            f"{name} must be a number or hold one value per task ({num_tasks}), got shape "
            f"{tuple(values.shape)}"
        )
    if not torch.isfinite(values).all():
        raise ValueError(f"{name} must be finite, got {values.tolist()}")
    if positive and not (values > 0).all():
        raise ValueError(f"{name} must be > 0 for every task, got {values.tolist()}")
    return values.cpu()


def task_noise_variances(
    regularization: float | None, noise_variances: object, num_tasks: int
) -> tuple[Tensor, float]:
    """The noise variance of each task (float64, ``n``) and the smallest one, from the
    constructors' ``regularization`` (one for all tasks) or ``noise_variances``.

    Raises:
        TypeError: If neither is given, or a value is not a real number / tensor.
        ValueError: If both are given, or a variance is not finite and ``> 0``.

    Example:
        >>> from botorch_mtucb.models.task_noise import task_noise_variances
        >>> task_noise_variances(None, [0.2, 0.05], 2)
        (tensor([0.2000, 0.0500], dtype=torch.float64), 0.05)
    """
    if regularization is None and noise_variances is None:
        raise TypeError(
            "regularization (one noise variance eta > 0 for every task) or noise_variances "
            "(one noise variance > 0 per task) is required"
        )
    if noise_variances is None:
        eta = check_positive(regularization, "regularization")
        return torch.full((num_tasks,), eta, dtype=torch.float64), eta
    if regularization is not None:
        raise ValueError(
            "pass regularization (one noise variance for every task) or noise_variances "
            "(one per task), not both"
        )
    values = per_task_values(noise_variances, num_tasks, "noise_variances", positive=True)
    return values, float(values.min())


class TaskNoiseMixin:
    """The prior mean ``c`` (buffer ``prior_mean``, ``n``), the noise variances
    ``lambda_i`` (buffer ``noise_variances``, ``n``), ``eta = regularization`` (their
    smallest) and the whitening ``S`` of the module docstring, for a model whose
    ``_setup`` registers the buffers.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> X = torch.zeros(0, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2),
        ...                        noise_variances=[0.4, 0.1], prior_mean=[1.0, 0.0])
        >>> model.regularization, model.has_task_noise
        (0.1, True)
        >>> model.posterior(torch.zeros(1, 1, dtype=torch.float64)).mean  # the prior mean
        tensor([[1., 0.]], dtype=torch.float64)
    """

    prior_mean: Tensor
    noise_variances: Tensor
    regularization: float
    _noise_scale: Tensor | None

    def _set_noise_scale(self) -> None:
        """``S = sqrt(lambda_i / eta)`` from the noise variances (``None`` when every task
        has the same noise: then ``S = I`` and nothing is whitened)."""
        noise = self.noise_variances
        if bool((noise == noise[0]).all()):
            self._noise_scale = None
        else:
            self._noise_scale = (noise / self.regularization).sqrt()

    @property
    def has_task_noise(self) -> bool:
        """Whether the tasks' noise variances differ (``noise_variances``)."""
        return self._noise_scale is not None

    def _white_targets(self, Y: Tensor, tasks: Tensor | None) -> Tensor:
        """``S^{-1} (y - c)`` of rows ``Y`` (``N x n`` full-vector rows, or ``N x 1``
        with their ``tasks``): the observations of the whitened function ``g``."""
        mean, scale = self.prior_mean, self._noise_scale
        if tasks is not None:
            mean = mean[tasks].unsqueeze(-1)
            scale = None if scale is None else scale[tasks].unsqueeze(-1)
        centered = Y - mean
        return centered if scale is None else centered / scale

    def _white_task_covariance(self, B: Tensor) -> Tensor:
        """``S^{-1} B S^{-1}``: a task covariance of the whitened function ``g``."""
        scale = self._noise_scale
        return B if scale is None else B / (scale[:, None] * scale)

    def _output_basis(self, U: Tensor) -> Tensor:
        """``S U``: the eigenvectors of the whitened task covariance mapped back to the
        outputs (``f - c = S g``)."""
        scale = self._noise_scale
        return U if scale is None else scale[:, None] * U

    def _unwhiten(self, mean: Tensor, covariance: Tensor) -> tuple[Tensor, Tensor]:
        """``c + S m`` and ``S C S`` from moments of ``g`` (``batch x q x n`` and the
        interleaved ``batch x (q n) x (q n)``)."""
        scale = self._noise_scale
        if scale is not None:
            mean = mean * scale
            tiled = scale.repeat(mean.shape[-2])
            covariance = covariance * (tiled[:, None] * tiled)
        return mean + self.prior_mean, covariance

    def _observation_noise(self, tasks: Tensor) -> Tensor:
        """The noise variance of each scalar observation of ``tasks`` (``M``)."""
        return self.noise_variances[tasks]
