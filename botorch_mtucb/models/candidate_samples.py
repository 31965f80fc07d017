r"""Joint posterior samples at a finite candidate set by Matheron's rule.

Paper 001's Thompson sampling (MTS) draws ``f(i, .)`` jointly at every arm of a task.
With the exact model's factor ``L`` of ``G_t + Lambda`` and the candidate posterior's
``V = L^{-1} G(obs, columns)``, Matheron's rule gives an exact joint sample in ``O(t K +
K r)`` instead of the ``O(K^3)`` of factorizing the posterior covariance:

.. math::
    f_{post}(c) = f_{prior}(c) + V[:, c]^\top L^{-1} (y - c_0 - f_{prior}(obs) - e),

with a joint prior sample ``f_prior(j, x) = sum_k [B^{1/2}]_jk g_k(x)`` (``g_k``
i.i.d. ``GP(0, k)`` draws, ``B^{1/2}`` the symmetric root) at the columns' points and
at the observations (which are columns), and ``e ~ N(0, Lambda)``.
"""

from __future__ import annotations

import torch
from botorch.exceptions.errors import UnsupportedError
from gpytorch.kernels import Kernel, LinearKernel
from torch import Tensor

from botorch_mtucb.models.candidate_posterior import CandidatePosterior
from botorch_mtucb.utils.linalg import GrowingCholesky

MAX_ROOT_POINTS = 5000  # distinct points of a sample's kernel root (eigh) at most


def matheron_sample(
    candidates: CandidatePosterior,
    task: int,
    factor: GrowingCholesky,
    targets: Tensor,
    noise_std: float | Tensor,
    kernel: Kernel,
    task_covariance: Tensor,
    generator: torch.Generator | None = None,
) -> Tensor:
    r"""One joint posterior sample of ``f(task, .)`` at the task's candidate columns
    (the general route, one separable term ``k B``), without the prior mean.

    Args:
        candidates: The candidate posterior (every observation at a column).
        task: The task.
        factor: The model's factor ``L`` of ``G_t + Lambda`` (``t`` rows).
        targets: ``y - c`` of the ``t`` observations.
        noise_std: Their noise standard deviations (a number or ``t`` values).
        kernel: The data kernel ``k``; task_covariance: ``B`` (``n x n``).
        generator: The random stream of the draws.

    Returns:
        One value per candidate of the task (its points, in order).

    Raises:
        UnsupportedError: If an observation was not at a column.
        ValueError: For a task out of range, or a kernel other than an unrestricted
            ``LinearKernel`` over more than ``MAX_ROOT_POINTS`` distinct points.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.models.candidate_samples import matheron_sample
        >>> arms = torch.linspace(0, 1, 4, dtype=torch.float64).unsqueeze(-1)
        >>> X = torch.zeros(0, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X, RBFKernel(), torch.eye(1), 0.1,
        ...                        train_tasks=torch.zeros(0, dtype=torch.long))
        >>> _ = model.track_candidates([arms])
        >>> sample = matheron_sample(model.candidates, 0, model._factor, X[:, 0], 0.3,
        ...                          model.kernel.kernels[0], model.kernel.task_covariances[0])
        >>> sample.shape
        torch.Size([4])
    """
    columns = candidates.task_columns(task)
    if candidates.observed is None:
        raise UnsupportedError(
            "posterior samples at the candidates need every observation at a candidate column"
        )
    root, task_root = sample_roots(candidates, kernel, task_covariance)  # K x r, n x n
    device = root.device
    if isinstance(columns, slice):
        chosen = torch.arange(columns.start, columns.stop, device=device)
    else:
        chosen = columns
    m = int(candidates.observed.numel())
    with torch.no_grad():
        draws = torch.randn(
            root.shape[-1], candidates.num_tasks, generator=generator, dtype=torch.float64
        ).to(root)
        wanted = torch.cat([chosen, candidates.observed.to(device)])
        latent = root[wanted] @ draws  # (A_i + m) x n: g_k at the points
        prior = (latent * task_root[candidates.column_task[wanted]]).sum(-1)
        sample = prior[: chosen.numel()]
        if m:
            noise = torch.randn(m, generator=generator, dtype=torch.float64).to(root)
            residual = targets - prior[chosen.numel() :] - noise * noise_std
            # A column-major copy of L: the same solve whatever the buffer's capacity.
            lower = factor.factor.mT.contiguous().mT
            u = torch.linalg.solve_triangular(lower, residual.unsqueeze(-1), upper=False)
            sample = sample + u.squeeze(-1) @ candidates.solves.values[:, columns]
    return sample


def sample_roots(
    candidates: CandidatePosterior, kernel: Kernel, task_covariance: Tensor
) -> tuple[Tensor, Tensor]:
    """A root ``R`` with ``R R^T = k(x_c, x_c')`` over the columns' points (``K x r``: the
    features of an unrestricted ``LinearKernel``, otherwise an eigen-decomposition over
    the distinct points) and the symmetric root of ``B``; kept on ``candidates``
    (``sample_roots``) after the first call.

    Raises:
        ValueError: Over more than ``MAX_ROOT_POINTS`` distinct points (a kernel other
            than an unrestricted ``LinearKernel``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import LinearKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.models.candidate_samples import sample_roots
        >>> arms = torch.eye(3, dtype=torch.float64)
        >>> X = torch.zeros(0, 3, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X[:, :1], LinearKernel(), torch.eye(2), 0.1,
        ...                        train_tasks=torch.zeros(0, dtype=torch.long))
        >>> _ = model.track_candidates([arms, arms])
        >>> root, task_root = sample_roots(model.candidates, model.kernel.kernels[0], torch.eye(2))
        >>> root.shape, task_root.shape  # 6 columns, the features of the linear kernel
        (torch.Size([6, 3]), torch.Size([2, 2]))
    """
    if candidates.sample_roots is not None:
        return candidates.sample_roots
    points = candidates.points[candidates.column_point]
    with torch.no_grad():
        if isinstance(kernel, LinearKernel) and kernel.active_dims is None:
            root = points * kernel.variance.to(points).reshape(()).sqrt()
        else:
            unique = candidates.unique_points
            if unique.shape[0] > MAX_ROOT_POINTS:
                raise ValueError(
                    f"posterior sampling needs a root of the kernel over {unique.shape[0]} "
                    f"distinct points; more than {MAX_ROOT_POINTS} is only supported for "
                    "LinearKernel"
                )
            gram = kernel(unique, unique).to_dense().to(points)
            eigenvalues, eigenvectors = torch.linalg.eigh(gram)
            scaled = eigenvectors * eigenvalues.clamp_min(0.0).sqrt()
            root = scaled[candidates.point_of_column]
        eigenvalues, eigenvectors = torch.linalg.eigh(task_covariance)
        scaled = eigenvectors * eigenvalues.clamp_min(0.0).sqrt()
        candidates.sample_roots = (root, scaled @ eigenvectors.T)
    return candidates.sample_roots
