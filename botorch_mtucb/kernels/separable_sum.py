"""Sums of separable multi-task kernels Gamma(x, x') = sum_j k_j(x, x') B_j.

Source: paper 000, Section 2 ("Examples of multi-task kernels"): ICM kernels
(one term), sums of separable kernels (several terms) and independent tasks
(``B_j = e_j e_j^T`` with per-task kernels ``k_j``).

As a GPyTorch ``Kernel`` (the extension point of ``MultitaskKernel`` and ``LCMKernel``),
``kernel(X1, X2)`` is the ``(q1 n) x (q2 n)`` covariance of all tasks at all inputs,
``sum_j k_j(X1, X2) (x) B_j`` as a ``SumLinearOperator`` of
``KroneckerProductLinearOperator``s (one term: the Kronecker product itself), laid out
as GPyTorch's multitask kernels lay it out (point ``a``, task ``i`` at row ``a n + i``),
so it goes into an ``ExactGP`` with a ``MultitaskMultivariateNormal`` and a
``MultitaskGaussianLikelihood``.

A *scalar observation* is a pair ``(x, i)`` of an input and a task index; the
multi-task kernel seen as a scalar kernel is ``k((x, i), (x', j)) = Gamma(x, x')_{ij}``
(paper 000, Remark 2). Full-vector data (all ``n`` tasks at each ``x``) is the set of
scalar observations ``(x_s, 0), ..., (x_s, n - 1)`` in that order, which matches the
stacking ``Y_t = [y_1^T, ..., y_t^T]^T`` of paper 000, Section 3.1. The dense methods
(``observation_covariance`` and its siblings) evaluate the covariance between such
observations; they serve the package's models and bounds, which factor these matrices
themselves (growing Cholesky factors, eigen-groups).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import torch
from gpytorch.kernels import Kernel
from linear_operator import to_linear_operator
from linear_operator.operators import (
    DenseLinearOperator,
    KroneckerProductLinearOperator,
    LinearOperator,
    SumLinearOperator,
)
from torch import Tensor
from torch.nn import Module, ModuleList

from botorch_mtucb.kernels.task_checks import check_task_covariance
from botorch_mtucb.utils.module_state import check_structure, module_structure

TaskCovarianceLike = Tensor | LinearOperator | Module


def _evaluate_task_covariance(task_covariance: TaskCovarianceLike, index: int) -> Tensor:
    """The dense ``n x n`` matrix of a tensor, an operator or a task kernel's
    ``covar_matrix`` (the models factor it; ``forward`` keeps the Kronecker structure)."""
    name = f"task_covariance[{index}]"
    if isinstance(task_covariance, Module) and hasattr(task_covariance, "covar_matrix"):
        task_covariance = task_covariance.covar_matrix
    if isinstance(task_covariance, Tensor):
        matrix = task_covariance
    elif isinstance(task_covariance, LinearOperator):
        matrix = task_covariance.to_dense()
    else:
        raise TypeError(
            f"{name} must be an n x n tensor or LinearOperator, or a task-kernel module with "
            f"a `covar_matrix` (e.g. UniformSimilarityTaskKernel), got "
            f"{type(task_covariance).__name__}"
        )
    if matrix.dim() != 2:
        raise ValueError(
            f"{name} must be a single n x n matrix (batched task kernels are not supported "
            f"here), got shape {tuple(matrix.shape)}"
        )
    return check_task_covariance(matrix.detach(), name=name)


class SumOfSeparableKernels(Kernel):
    r"""The multi-task kernel ``Gamma(x, x') = sum_j k_j(x, x') B_j`` (fixed).

    .. math::
        K(X_1, X_2) = \sum_j k_j(X_1, X_2) \otimes B_j

    A GPyTorch ``Kernel``: ``kernel(X1, X2)`` on ``... x q1 x d`` and ``... x q2 x d``
    inputs is the ``... x (q1 n) x (q2 n)`` covariance of every task at every input,
    a ``SumLinearOperator`` of ``KroneckerProductLinearOperator``s (one term: the
    Kronecker product), row ``a n + i`` for point ``a`` and task ``i`` as in GPyTorch's
    ``MultitaskKernel`` (``num_outputs_per_input`` is ``n``). With one term it equals
    ``MultitaskKernel(k, n)`` with the task covariance fixed to ``B``; with ``J`` terms it
    is GPyTorch's ``LCMKernel`` with fixed task covariances. Use it as the
    ``covar_module`` of an ``ExactGP`` returning a ``MultitaskMultivariateNormal``.

    The dense methods ``observation_covariance``, ``task_block_covariance``,
    ``functional_covariance``, ``full_covariance`` and ``diagonal_blocks`` evaluate the
    same covariance between scalar observations ``(x, i)``; they are the package's
    internal interface to its models and bounds (which factor these matrices
    themselves), as are ``check_loaded_structure`` and the extra state.

    ``state_dict`` holds the data kernels' parameters, the task covariances and, as
    extra state, the data kernels' classes (``utils.module_state``): a state of other
    kernel classes is refused with a ``ValueError`` (a state saved without them loads).

    Args:
        data_kernel: A GPyTorch kernel on inputs, or a list of them (one per term).
        task_covariance: An ``n x n`` PSD tensor or a task-kernel module (anything with
            a ``covar_matrix``), or a list of them matching ``data_kernel``.

    Raises:
        TypeError: If a kernel is not a ``gpytorch.kernels.Kernel`` or a task
            covariance is neither a tensor, a ``LinearOperator`` nor a task-kernel module.
        ValueError: If the lists have different lengths, are empty, or the task
            covariances are not PSD or not all of the same size.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.kernels import SumOfSeparableKernels
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]])
        >>> e0, e1 = torch.diag(torch.tensor([1.0, 0.0])), torch.diag(torch.tensor([0.0, 1.0]))
        >>> kernel = SumOfSeparableKernels([RBFKernel(), RBFKernel()], [e0, e1])  # independent
        >>> kernel.num_tasks, kernel.num_terms
        (2, 2)
        >>> icm = SumOfSeparableKernels(RBFKernel(), B)  # Gamma(x, x') = k(x, x') B
        >>> X = torch.zeros(1, 1)
        >>> icm.observation_covariance(X, torch.tensor([0]), X, torch.tensor([1])).detach()
        tensor([[0.5000]])
        >>> type(icm(torch.zeros(4, 1)).evaluate_kernel()).__name__  # k(X, X) (x) B
        'KroneckerProductLinearOperator'
        >>> kernel(torch.zeros(4, 1)).shape  # (q n) x (q n), row a n + i
        torch.Size([8, 8])
    """

    def __init__(
        self,
        data_kernel: Kernel | Sequence[Kernel],
        task_covariance: TaskCovarianceLike | Sequence[TaskCovarianceLike],
    ) -> None:
        super().__init__()  # no active_dims, lengthscale or batch: nothing in the state
        if isinstance(data_kernel, Kernel):
            kernels = [data_kernel]
        elif isinstance(data_kernel, (list, tuple, ModuleList)):
            kernels = list(data_kernel)
        else:
            raise TypeError(
                "data_kernel must be a gpytorch.kernels.Kernel or a list of them, "
                f"got {type(data_kernel).__name__}"
            )
        if isinstance(task_covariance, (Tensor, LinearOperator, Module)):
            covariances = [task_covariance]
        elif isinstance(task_covariance, (list, tuple)):
            covariances = list(task_covariance)
        else:
            raise TypeError(
                "task_covariance must be an n x n tensor or LinearOperator, a task-kernel "
                f"module or a list of them, got {type(task_covariance).__name__}"
            )
        for j, kernel in enumerate(kernels):
            if not isinstance(kernel, Kernel):
                raise TypeError(
                    f"data_kernel[{j}] must be a gpytorch.kernels.Kernel, "
                    f"got {type(kernel).__name__}"
                )
        if len(kernels) == 0:
            raise ValueError("data_kernel must be a kernel or a non-empty list of kernels")
        if len(kernels) != len(covariances):
            raise ValueError(
                f"data_kernel and task_covariance must have the same number of terms, got "
                f"{len(kernels)} kernels and {len(covariances)} task covariances"
            )
        for j, kernel in enumerate(kernels):
            if kernel.batch_shape != torch.Size([]):
                raise ValueError(
                    f"data_kernel[{j}] must not be batched (batch_shape {tuple(kernel.batch_shape)}); "
                    "build one model per batch element"
                )
        matrices = [_evaluate_task_covariance(b, j) for j, b in enumerate(covariances)]
        sizes = {m.shape[-1] for m in matrices}
        if len(sizes) != 1:
            raise ValueError(f"all task covariances must have the same size, got sizes {sizes}")
        # Copies: the model is fixed once built, whatever the caller later does to its
        # kernel objects (e.g. fitting their hyperparameters).
        self.kernels = ModuleList(copy.deepcopy(kernel) for kernel in kernels)
        self.register_buffer("task_covariances", torch.stack(matrices))  # J x n x n

    # ------------------------------------------------------------- GPyTorch
    def forward(
        self, x1: Tensor, x2: Tensor, diag: bool = False, last_dim_is_batch: bool = False, **params
    ) -> LinearOperator | Tensor:
        r"""``sum_j k_j(x1, x2) (x) B_j``: ``... x (q1 n) x (q2 n)`` (``diag``: ``... x (q n)``).

        Args:
            x1: ``... x q1 x d`` inputs; x2: ``... x q2 x d`` inputs.
            diag: Only the diagonal (``x1`` and ``x2`` the same points).
            last_dim_is_batch: Not supported (as in ``MultitaskKernel``).
            **params: Passed to every ``k_j``.

        Returns:
            A ``KroneckerProductLinearOperator`` (one term) or a ``SumLinearOperator``
            of them; with ``diag``, the ``... x (q n)`` diagonal, row ``a n + i``.

        Raises:
            RuntimeError: For ``last_dim_is_batch=True`` (as ``MultitaskKernel``).
        """
        if last_dim_is_batch:
            raise RuntimeError("SumOfSeparableKernels does not accept last_dim_is_batch")
        if diag:  # k_j(x_a, x_a) B_j[i, i] at a n + i
            terms = [
                (k(x1, x2, diag=True, **params).unsqueeze(-1) * B.diagonal()).flatten(-2)
                for k, B in zip(self.kernels, self.task_covariances)
            ]
            return torch.stack(terms).sum(0)
        terms = [
            KroneckerProductLinearOperator(
                to_linear_operator(k(x1, x2, **params)), DenseLinearOperator(B)
            )
            for k, B in zip(self.kernels, self.task_covariances)
        ]
        return terms[0] if len(terms) == 1 else SumLinearOperator(*terms)

    def num_outputs_per_input(self, x1: Tensor, x2: Tensor) -> int:
        """``n``: each input carries all tasks (GPyTorch's multitask convention)."""
        return self.num_tasks

    # ------------------------------------------------------------------ state
    def get_extra_state(self) -> dict[str, list[str]]:
        """The data kernels' structure (``utils.module_state.module_structure``): the
        class of each kernel module, which the parameters in the state do not tell
        (an RBF and a Matern kernel have the same ones)."""
        return {"data_kernels": module_structure(self.kernels)}

    def set_extra_state(self, state: object) -> None:
        """Accept the extra state of a kernel of the same structure.

        Raises:
            ValueError: If ``state`` is another structure (``check_loaded_structure``).
        """
        self.check_loaded_structure(state, "state_dict's kernel")

    def check_loaded_structure(self, state: object, name: str) -> None:
        """Raise ``ValueError`` unless ``state`` (a ``get_extra_state()``, or ``None``
        for a state saved without one) describes data kernels of this structure."""
        if state is None:
            return
        if not isinstance(state, Mapping) or set(state) != {"data_kernels"}:
            raise ValueError(
                f"{name}'s extra state must be a dict with the key 'data_kernels' (as "
                f"SumOfSeparableKernels.state_dict saves it), got {type(state).__name__}"
            )
        check_structure(state["data_kernels"], module_structure(self.kernels), name)

    def _load_from_state_dict(self, state_dict, prefix, *args) -> None:
        # a state saved before the structure was stored: nothing to compare
        state_dict.setdefault(prefix + "_extra_state", None)
        super()._load_from_state_dict(state_dict, prefix, *args)

    @property
    def num_tasks(self) -> int:
        """The number of tasks ``n``."""
        return self.task_covariances.shape[-1]

    @property
    def num_terms(self) -> int:
        """The number of separable terms ``J``."""
        return len(self.kernels)

    def _data_covariances(self, X1: Tensor, X2: Tensor) -> Tensor:
        """``k_j(X1, X2)`` stacked on a leading term dimension: ``J x ... x q1 x q2``."""
        batch = torch.broadcast_shapes(X1.shape[:-2], X2.shape[:-2])
        X1 = X1.expand(*batch, *X1.shape[-2:])
        X2 = X2.expand(*batch, *X2.shape[-2:])
        return torch.stack([k(X1, X2).to_dense() for k in self.kernels])

    def observation_covariance(
        self, X1: Tensor, tasks1: Tensor, X2: Tensor, tasks2: Tensor
    ) -> Tensor:
        """Covariance between scalar observations ``(X1, tasks1)`` and ``(X2, tasks2)``.

        Args:
            X1: ``... x m1 x d`` inputs; tasks1: ``m1`` task indices (long).
            X2: ``... x m2 x d`` inputs; tasks2: ``m2`` task indices (long).

        Returns:
            ``... x m1 x m2`` matrix ``Gamma(x1_a, x2_b)[tasks1_a, tasks2_b]``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.kernels import SumOfSeparableKernels
            >>> kernel = SumOfSeparableKernels(LinearKernel(), torch.eye(2))
            >>> X, tasks = torch.ones(3, 1), torch.tensor([0, 1, 1])
            >>> kernel.observation_covariance(X, tasks, X[:2], tasks[:2]).shape
            torch.Size([3, 2])
        """
        kx = self._data_covariances(X1, X2)  # J x ... x m1 x m2
        b = self.task_covariances[:, tasks1][:, :, tasks2]  # J x m1 x m2
        b = b.view(b.shape[0], *([1] * (kx.dim() - 3)), *b.shape[1:])
        return (kx * b).sum(0)

    def task_block_covariance(self, X: Tensor, X2: Tensor, tasks2: Tensor) -> Tensor:
        """Covariance between all tasks at ``X`` and scalar observations ``(X2, tasks2)``.

        Returns:
            ``... x q x n x m2``: entry ``[a, i, b] = Gamma(X_a, X2_b)[i, tasks2_b]``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.kernels import SumOfSeparableKernels
            >>> kernel = SumOfSeparableKernels(LinearKernel(), torch.eye(2))
            >>> X2, tasks2 = torch.ones(3, 1), torch.tensor([0, 1, 1])
            >>> kernel.task_block_covariance(torch.ones(4, 1), X2, tasks2).shape
            torch.Size([4, 2, 3])
        """
        kx = self._data_covariances(X, X2)  # J x ... x q x m2
        b = self.task_covariances[:, :, tasks2]  # J x n x m2
        b = b.view(b.shape[0], *([1] * (kx.dim() - 3)), 1, *b.shape[1:])
        return (kx.unsqueeze(-2) * b).sum(0)

    def functional_covariance(
        self, X: Tensor, weights: Tensor, X2: Tensor, tasks2: Tensor
    ) -> Tensor:
        r"""Covariance between the functionals ``w_f^T f(X_a)`` and scalar observations
        ``(X2, tasks2)``: ``sum_j k_j(X_a, X2_b) (w_f^T B_j)_{tasks2_b}``.

        The same as contracting ``task_block_covariance`` with ``weights`` over the
        tasks, without its ``n`` rows: ``O(J q m2 F)`` instead of ``O(J q m2 n)``.

        Args:
            X: ``... x q x d`` inputs; weights: ``F x n``.
            X2: ``m2 x d`` inputs; tasks2: ``m2`` task indices (long).

        Returns:
            ``... x q x F x m2``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.kernels import SumOfSeparableKernels
            >>> kernel = SumOfSeparableKernels(LinearKernel(), torch.eye(2))
            >>> X2, tasks2 = torch.ones(3, 1), torch.tensor([0, 1, 1])
            >>> W = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
            >>> kernel.functional_covariance(torch.ones(4, 1), W, X2, tasks2).shape
            torch.Size([4, 2, 3])
            >>> blocks = kernel.task_block_covariance(torch.ones(4, 1), X2, tasks2)
            >>> torch.allclose(kernel.functional_covariance(torch.ones(4, 1), W, X2, tasks2),
            ...                torch.einsum("fi,qim->qfm", W, blocks))
            True
        """
        kx = self._data_covariances(X, X2)  # J x ... x q x m2
        wb = torch.einsum("fi,jim->jfm", weights, self.task_covariances[:, :, tasks2])
        wb = wb.view(wb.shape[0], *([1] * (kx.dim() - 3)), 1, *wb.shape[1:])
        return (kx.unsqueeze(-2) * wb).sum(0)

    def full_covariance(self, X1: Tensor, X2: Tensor) -> Tensor:
        """``Gamma(X1_a, X2_b)[i, j]`` laid out as ``... x q1 x n x q2 x n``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import LinearKernel
            >>> from botorch_mtucb.kernels import SumOfSeparableKernels
            >>> kernel = SumOfSeparableKernels(LinearKernel(), torch.eye(2))
            >>> kernel.full_covariance(torch.ones(4, 1), torch.ones(3, 1)).shape
            torch.Size([4, 2, 3, 2])
        """
        kx = self._data_covariances(X1, X2)  # J x ... x q1 x q2
        b = self.task_covariances
        return torch.einsum("j...ac,jik->j...aick", kx, b).sum(0)

    def diagonal_blocks(self, X: Tensor) -> Tensor:
        """``Gamma(X_a, X_a)`` for each point: ``... x q x n x n``.

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.kernels import SumOfSeparableKernels
            >>> kernel = SumOfSeparableKernels(RBFKernel(), 2.0 * torch.eye(2))
            >>> kernel.diagonal_blocks(torch.zeros(1, 1)).detach()  # k(x, x) B
            tensor([[[2., 0.],
                     [0., 2.]]])
        """
        kxx = torch.stack([k(X, X, diag=True) for k in self.kernels])  # J x ... x q
        return torch.einsum("j...a,jik->...aik", kxx, self.task_covariances)
