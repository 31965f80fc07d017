"""The uniform-similarity task kernel B = omega I + (1 - omega) 11^T / n and its
structured covariance operator.

Source: paper 000 (Chowdhury & Gopalan 2021), Section 2, "Examples of multi-task
kernels" (the kernel of Evgeniou et al. 2005); paper 001 (Sessa et al. 2023), the
task kernel K_task(b) with omega = 1 / (1 + b).

``B`` is a multiple of the identity plus a rank-one term, so it is known in closed form:
``B v = omega v + (1 - omega) mean(v) 1`` (``O(n)`` per vector) and ``B`` has the
eigenvalue ``1`` on ``1 / sqrt(n)`` and ``omega`` on its orthogonal complement, for
which the Helmert basis gives orthonormal eigenvectors without any factorization.
``UniformSimilarityLinearOperator`` keeps that structure; the kernel's ``covar_matrix``
returns it (as GPyTorch's ``IndexKernel.covar_matrix`` returns a structured operator).
"""

from __future__ import annotations

import math

import torch
from gpytorch.constraints import Interval
from gpytorch.kernels import Kernel
from linear_operator.operators import DenseLinearOperator, LinearOperator
from torch import Tensor

from botorch_mtucb.kernels.task_checks import check_b
from botorch_mtucb.kernels.task_indices import CheckedIndexKernel
from botorch_mtucb.utils.checks import as_int, as_real_tensor


def helmert_basis(n: int, dtype: torch.dtype | None = None, device=None) -> Tensor:
    r"""An orthonormal basis of ``R^n`` whose last column is ``1 / sqrt(n)``.

    .. math::
        h_k = \frac{(1, \ldots, 1, -k, 0, \ldots, 0)}{\sqrt{k (k + 1)}}
        \quad (k \text{ ones}, \; k = 1, \ldots, n - 1), \qquad h_n = 1_n / \sqrt{n}.

    The first ``n - 1`` columns span the vectors orthogonal to ``1_n`` (Helmert, 1876).

    Args:
        n: The dimension, ``n >= 1``.
        dtype, device: Of the result.

    Returns:
        ``n x n`` orthogonal matrix ``[h_1, ..., h_n]``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels.uniform_similarity import helmert_basis
        >>> H = helmert_basis(3, dtype=torch.float64)
        >>> torch.allclose(H.T @ H, torch.eye(3, dtype=torch.float64))
        True
        >>> H[:, -1]  # 1 / sqrt(3)
        tensor([0.5774, 0.5774, 0.5774], dtype=torch.float64)
    """
    k = torch.arange(1, n, dtype=torch.float64, device=device)  # n - 1
    rows = torch.arange(n, dtype=torch.float64, device=device).unsqueeze(-1)  # n x 1
    entries = torch.where(rows < k, 1.0, torch.where(rows == k, -k, 0.0))
    complement = entries / torch.sqrt(k * (k + 1.0))
    mean_direction = torch.full((n, 1), 1.0 / math.sqrt(n), dtype=torch.float64, device=device)
    return torch.cat([complement, mean_direction], dim=-1).to(dtype or torch.get_default_dtype())


class UniformSimilarityLinearOperator(LinearOperator):
    r"""``B = omega I_n + (1 - omega) 1_n 1_n^T / n`` as a structured ``LinearOperator``.

    Stores only ``omega`` (shape ``batch_shape``). Closed forms: products
    ``B V = omega V + (1 - omega) 1_n (1_n^T V) / n``, the diagonal and single entries,
    and the eigen-system (``eigh``): eigenvalues ``omega`` (``n - 1`` times, on the
    Helmert vectors orthogonal to ``1_n``) then ``1`` (on ``1_n / sqrt(n)``), so a
    ``KroneckerProductLinearOperator`` with this factor decomposes it without
    ``torch.linalg.eigh``. ``to_dense()`` is exactly
    ``omega * I + (1 - omega) * full(1 / n)``, the kernel's ``_eval_covar_matrix``.
    Source: paper 000, Section 2.

    Args:
        omega: Floating tensor of shape ``batch_shape`` (``omega`` in ``[0, 1]`` gives a
            positive semi-definite ``B``; the kernel enforces the range).
        num_tasks: ``n >= 1``.

    Raises:
        TypeError: If ``omega`` is not a floating tensor or ``num_tasks`` not an integer.
        ValueError: If ``num_tasks < 1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.kernels import UniformSimilarityLinearOperator
        >>> B = UniformSimilarityLinearOperator(torch.tensor(0.4, dtype=torch.float64), 3)
        >>> B @ torch.tensor([3.0, 0.0, 0.0], dtype=torch.float64)  # 0.4 v + 0.6 mean(v) 1
        tensor([1.8000, 0.6000, 0.6000], dtype=torch.float64)
        >>> eigenvalues, eigenvectors = B.eigh()  # closed form, no factorization
        >>> eigenvalues
        tensor([0.4000, 0.4000, 1.0000], dtype=torch.float64)
        >>> torch.allclose(B.to_dense() @ eigenvectors.to_dense(),
        ...                eigenvectors.to_dense() * eigenvalues)
        True
    """

    def __init__(self, omega: Tensor, num_tasks: int) -> None:
        if not isinstance(omega, Tensor) or not omega.is_floating_point():
            raise TypeError(
                f"omega must be a floating tensor of shape batch_shape, got "
                f"{getattr(omega, 'dtype', type(omega).__name__)}"
            )
        num_tasks = as_int(num_tasks, "num_tasks", 1)
        super().__init__(omega, num_tasks=num_tasks)
        self.omega = omega
        self.num_tasks = num_tasks

    def _off_diagonal(self) -> Tensor:
        """``(1 - omega) / n``, the value of every off-diagonal entry: ``batch_shape``."""
        return (1.0 - self.omega) * torch.full_like(self.omega, 1.0 / self.num_tasks)

    def _size(self) -> torch.Size:
        return torch.Size((*self.omega.shape, self.num_tasks, self.num_tasks))

    def _transpose_nonbatch(self) -> UniformSimilarityLinearOperator:
        return self

    def _matmul(self, rhs: Tensor) -> Tensor:
        vector = rhs.dim() == 1
        rhs = rhs.unsqueeze(-1) if vector else rhs
        omega = self.omega[..., None, None]
        off = self._off_diagonal()[..., None, None]
        res = omega * rhs + off * rhs.sum(dim=-2, keepdim=True)  # ... x n x C
        return res.squeeze(-1) if vector else res

    def _diagonal(self) -> Tensor:
        diagonal = self.omega + self._off_diagonal()  # as to_dense(): omega * 1 + off
        return diagonal.unsqueeze(-1).expand(*self.omega.shape, self.num_tasks)

    def _get_indices(self, row_index: Tensor, col_index: Tensor, *batch_indices: Tensor) -> Tensor:
        omega = self.omega[batch_indices] if batch_indices else self.omega
        off = (1.0 - omega) * torch.full_like(omega, 1.0 / self.num_tasks)
        return torch.where(row_index == col_index, omega + off, off)

    def _expand_batch(self, batch_shape: torch.Size) -> UniformSimilarityLinearOperator:
        return UniformSimilarityLinearOperator(self.omega.expand(batch_shape), self.num_tasks)

    def _symeig(
        self, eigenvectors: bool = False, return_evals_as_lazy: bool | None = False
    ) -> tuple[Tensor, LinearOperator | None]:
        n, batch = self.num_tasks, self.omega.shape
        eigenvalues = torch.cat(
            [
                self.omega.unsqueeze(-1).expand(*batch, n - 1),
                torch.ones_like(self.omega).unsqueeze(-1),
            ],
            dim=-1,
        )
        if not eigenvectors:
            return eigenvalues, None
        basis = helmert_basis(n, self.dtype, self.device).expand(*batch, n, n)
        return eigenvalues, DenseLinearOperator(basis)

    def diagonalization(self, method: str | None = None) -> tuple[Tensor, LinearOperator | None]:
        """The eigen-system, in closed form unless ``method="lanczos"`` is asked for."""
        return super().diagonalization(method="symeig" if method is None else method)

    def to_dense(self) -> Tensor:
        """``omega * I + (1 - omega) * full(1 / n)``: ``batch_shape x n x n``."""
        omega = self.omega[..., None, None]
        eye = torch.eye(self.num_tasks, dtype=omega.dtype, device=omega.device)
        return omega * eye + (1.0 - omega) * torch.full_like(eye, 1.0 / self.num_tasks)


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
        """``B`` as a dense tensor (what ``IndexKernel.forward`` indexes)."""
        return self.covar_matrix.to_dense()

    @property
    def covar_matrix(self) -> UniformSimilarityLinearOperator:
        """The task covariance ``B`` as a structured operator, ``batch_shape x n x n``."""
        return UniformSimilarityLinearOperator(self.omega, self.num_tasks)
