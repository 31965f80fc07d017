"""The uniform-similarity task kernel B = omega I + (1 - omega) 11^T / n.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 2, "Examples of multi-task
kernels" (the kernel of Evgeniou et al. 2005); paper 001 (Sessa et al. 2023), the
task kernel K_task(b) with omega = 1 / (1 + b).
"""

from __future__ import annotations

import math

import torch
from gpytorch.constraints import Interval
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.kernels.task_indices import CheckedIndexKernel
from botorch_mtucb.utils.checks import as_int, as_real_tensor, check_b


class UniformSimilarityTaskKernel(CheckedIndexKernel):
    r"""Task kernel with one similarity level shared by every pair of tasks.

    .. math::
        B = \omega I_n + (1 - \omega) \frac{1}{n} 1_n 1_n^\top,
        \qquad \omega \in [0, 1].

    ``omega = 1`` treats the tasks as unrelated (``B = I``); ``omega = 0`` makes them
    identical (``B = 11^T / n``). ``B`` has one eigenvalue ``1`` (eigenvector
    ``1 / sqrt(n)``) and ``n - 1`` eigenvalues ``omega``.

    A subclass of GPyTorch's ``IndexKernel`` that only overrides how the task
    covariance is built and checks the task indices (``CheckedIndexKernel``: an index
    out of range, fractional or boolean raises an error naming ``x1`` / ``x2``), so it
    plugs into ``gpytorch.kernels.MultitaskKernel`` (set
    ``task_covar_module``) and BoTorch's ``MultiTaskGP`` (as the task factor of its
    product kernel), following BoTorch's ``PositiveIndexKernel``.

    ``omega`` is a parameter with an ``Interval(0, 1)`` constraint without a
    transform, so the end points 0 and 1 are representable exactly; it is fixed
    unless you fit it yourself.

    Example:
        >>> from botorch_mtucb.kernels import UniformSimilarityTaskKernel
        >>> task_kernel = UniformSimilarityTaskKernel(num_tasks=3, omega=0.4)
        >>> task_kernel.covar_matrix.to_dense().detach()  # 3 x 3: 0.4 I + 0.6 11^T / 3
        tensor([[0.6000, 0.2000, 0.2000],
                [0.2000, 0.6000, 0.2000],
                [0.2000, 0.2000, 0.6000]])
        >>> round(float(UniformSimilarityTaskKernel.from_b(num_tasks=3, b=1.5).omega), 6)
        0.4
    """

    def __init__(
        self,
        num_tasks: int,
        omega: float | Tensor = 1.0,
        batch_shape: torch.Size = torch.Size(),  # noqa: B008
        dtype: torch.dtype | None = None,
        **kwargs,
    ) -> None:
        r"""Build the kernel.

        Args:
            num_tasks: Number of tasks ``n >= 1``.
            omega: Similarity parameter in ``[0, 1]``; a float or a tensor of shape
                ``batch_shape`` (one value per batch).
            batch_shape: Batch shape of the kernel (GPyTorch convention).
            dtype: dtype of the ``omega`` parameter (default: torch's default dtype,
                as GPyTorch's parameters). Pass ``torch.float64`` to store ``omega``
                exactly in float64: a value stored in float32 and cast later keeps its
                float32 rounding (``0.4`` becomes ``0.4000000059604645``).
            **kwargs: Passed to ``gpytorch.kernels.Kernel`` (``active_dims`` ...).

        Raises:
            TypeError: If ``num_tasks`` is not an integer or ``omega`` not a real
                number or tensor (a string, ``None``, a bool ...).
            ValueError: If ``num_tasks < 1`` or ``omega`` is outside ``[0, 1]``.
        """
        num_tasks = as_int(num_tasks, "num_tasks", 1)
        Kernel.__init__(self, batch_shape=batch_shape, **kwargs)
        self.num_tasks = num_tasks
        self.register_parameter(
            name="raw_omega",
            parameter=torch.nn.Parameter(
                torch.ones(self.batch_shape, dtype=dtype or torch.get_default_dtype())
            ),
        )
        self.register_constraint("raw_omega", Interval(0.0, 1.0, transform=None))
        self.omega = omega

    @classmethod
    def from_b(
        cls,
        num_tasks: int,
        b: float,
        batch_shape: torch.Size = torch.Size(),  # noqa: B008
        dtype: torch.dtype | None = None,
        **kwargs,
    ) -> UniformSimilarityTaskKernel:
        r"""The kernel ``K_task(b)`` of paper 001 (Section 3): ``omega = 1 / (1 + b)``.

        ``b = 0`` gives independent tasks, ``b = math.inf`` identical tasks.

        Raises:
            TypeError: If ``b`` is not a real number (a string, ``None``, a bool, a
                complex number ...).
            ValueError: If ``b < 0`` or ``b`` is NaN.
        """
        b = check_b(b)
        omega = 0.0 if math.isinf(b) else 1.0 / (1.0 + b)
        return cls(num_tasks=num_tasks, omega=omega, batch_shape=batch_shape, dtype=dtype, **kwargs)

    @property
    def omega(self) -> Tensor:
        """The similarity parameter, shape ``batch_shape``."""
        return self.raw_omega_constraint.transform(self.raw_omega)

    @omega.setter
    def omega(self, value: float | Tensor) -> None:
        value = as_real_tensor(value, "omega").to(self.raw_omega)
        if value.shape != self.raw_omega.shape and value.numel() != 1:
            raise ValueError(
                f"omega must be a number or a tensor of shape batch_shape "
                f"{tuple(self.raw_omega.shape)}, got shape {tuple(value.shape)}"
            )
        if not torch.isfinite(value).all() or (value < 0).any() or (value > 1).any():
            raise ValueError(f"omega must lie in [0, 1], got {value.tolist()}")
        self.initialize(raw_omega=self.raw_omega_constraint.inverse_transform(value))

    def _eval_covar_matrix(self) -> Tensor:
        n = self.num_tasks
        omega = self.omega[..., None, None]
        eye = torch.eye(n, dtype=omega.dtype, device=omega.device)
        return omega * eye + (1.0 - omega) * torch.full_like(eye, 1.0 / n)

    @property
    def covar_matrix(self) -> Tensor:
        """The task covariance ``B``, shape ``batch_shape x n x n``."""
        return self._eval_covar_matrix()
