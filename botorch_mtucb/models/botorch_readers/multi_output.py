r"""A fitted BoTorch multi-output GP as a sum of separable kernels, with its data and noise.

``read_multi_output_model(model)`` reads an unbatched ``SingleTaskGP`` (one or ``m``
outputs, which BoTorch batches), ``MultiTaskGP`` (a task column, ``IndexKernel`` /
``PositiveIndexKernel``), ``KroneckerMultiTaskGP`` (``MultitaskKernel``,
``MultitaskGaussianLikelihood``) or ``ModelListGP`` of these as
``Gamma(x, x') = sum_j k_j(x, x') B_j`` (paper 000, Section 2) on the inputs *as the
user passes them* (each ``k_j`` applies the model's input transform:
``ModelInputKernel``), with the targets in the model's outcome space (after its outcome
transform) and the noise covariance of the scalar observations. The reading is checked
against the model's own prior covariance (``moments.training_covariances``): a
model whose covariance is not such a sum is refused. ``VectorValuedGP.from_model`` is
built on it.

Single-output members (a ``ModelListGP``'s ``SingleTaskGP``, one output of a batched
``SingleTaskGP``) are read with ``single_output.output_data``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from botorch.models.model import Model
from botorch.models.multitask import KroneckerMultiTaskGP, MultiTaskGP
from gpytorch.kernels import IndexKernel, Kernel, MultitaskKernel, ProductKernel
from linear_operator.operators import LinearOperator
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels
from botorch_mtucb.models.botorch_readers.moments import (
    ACCEPTED_MODELS,
    TrainingCovariance,
    eval_mode,
    is_diagonal,
    leaf_models,
    num_batched_outputs,
    training_covariances,
)
from botorch_mtucb.models.botorch_readers.single_output import output_data


class ModelInputKernel(Kernel):
    r"""``k(x, x') = k_model(T(x), T(x'))``: a model's kernel on the user's inputs.

    ``T`` is the model's input transform (as in ``eval`` mode; kept in ``eval`` mode and
    fixed) and, for a ``MultiTaskGP``, first the insertion of a placeholder task column at
    ``task_feature`` (the data kernel ignores that column through its ``active_dims``).

    Args:
        base_kernel: The model's data kernel (on transformed inputs).
        input_transform: The model's input transform (``None``: identity).
        task_feature: Where to insert a task column before ``T`` (``None``: none).

    Example:
        >>> import torch
        >>> from botorch.models.transforms import Normalize
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models.botorch_readers import ModelInputKernel
        >>> transform = Normalize(1, bounds=torch.tensor([[0.0], [10.0]])).eval()
        >>> kernel = ModelInputKernel(RBFKernel(), transform)
        >>> X = torch.tensor([[0.0], [10.0]])
        >>> torch.allclose(kernel(X).to_dense(), RBFKernel()(X / 10).to_dense())
        True
    """

    def __init__(
        self,
        base_kernel: Kernel,
        input_transform: Module | None = None,
        task_feature: int | None = None,
    ) -> None:
        super().__init__(batch_shape=base_kernel.batch_shape)
        self.base_kernel = base_kernel
        self.input_transform = input_transform
        self.task_feature = task_feature
        self.train(self.training)

    def model_inputs(self, X: Tensor) -> Tensor:
        """``T(X)``: ``... x q x d`` user inputs to the base kernel's inputs."""
        if self.task_feature is not None:
            i = self.task_feature
            X = torch.cat([X[..., :i], torch.zeros_like(X[..., :1]), X[..., i:]], dim=-1)
        if self.input_transform is not None:
            X = self.input_transform(X)
        return X

    def forward(
        self, x1: Tensor, x2: Tensor, diag: bool = False, **params
    ) -> LinearOperator | Tensor:
        """``k_model(T(x1), T(x2))`` as the base kernel returns it (its ``LinearOperator``,
        not densified; with ``diag``, the ``... x q`` diagonal)."""
        return self.base_kernel(self.model_inputs(x1), self.model_inputs(x2), diag=diag, **params)

    def train(self, mode: bool = True) -> ModelInputKernel:
        super().train(mode)
        if self.input_transform is not None:  # T stays the model's evaluation map
            self.input_transform.eval()
        return self


@dataclass(frozen=True)
class MultiOutputData:
    r"""An unbatched BoTorch GP as ``sum_j k_j(x, x') B_j`` with its data and noise.

    Scalar observations are ordered as ``VectorValuedGP`` orders them: for full-vector
    data (every task observed at every row) point ``a``, task ``i`` at ``a n + i``; for
    task-indexed data the rows in order.

    Attributes:
        model_name: The model's class name.
        train_X: ``N x d`` training inputs as the user passes them (task column removed).
        train_Y: ``N x n`` (full-vector) or ``N x 1`` (task-indexed) training targets in
            the model's outcome space (after its outcome transform).
        train_tasks: ``N`` task indices (task-indexed data) or ``None``.
        data_kernels: ``J`` unbatched kernels on ``train_X``'s space.
        task_covariances: ``J x n x n`` PSD task covariances ``B_j``.
        noise_covariance: ``M x M`` noise covariance of the ``M`` scalar observations
            (the model's outcome space).
        prior_mean: ``M`` prior means of the scalar observations (BoTorch's constant
            means, the model's outcome space).

    Example:
        >>> import torch
        >>> from botorch.models import KroneckerMultiTaskGP
        >>> from botorch_mtucb.models.botorch_readers import read_multi_output_model
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> data = read_multi_output_model(KroneckerMultiTaskGP(X, torch.cat([X, X.sin()], -1)))
        >>> data.num_tasks, len(data.data_kernels), tuple(data.noise_covariance.shape)
        (4, 1, (24, 24))
    """

    model_name: str
    train_X: Tensor
    train_Y: Tensor
    train_tasks: Tensor | None
    data_kernels: tuple[Kernel, ...]
    task_covariances: Tensor
    noise_covariance: Tensor
    prior_mean: Tensor

    @property
    def num_tasks(self) -> int:
        """``n``."""
        return self.task_covariances.shape[-1]

    @property
    def observation_tasks(self) -> Tensor:
        """The task of each scalar observation (``M``, long)."""
        if self.train_tasks is not None:
            return self.train_tasks
        rows = self.train_X.shape[0]
        return torch.arange(self.num_tasks, device=self.train_X.device).repeat(rows)

    @property
    def noise_is_diagonal(self) -> bool:
        """Whether the noise of distinct scalar observations is uncorrelated."""
        return is_diagonal(self.noise_covariance)


def read_multi_output_model(model: Model) -> MultiOutputData:
    r"""Read an unbatched BoTorch GP as a sum of separable kernels (see the module).

    Terms: a ``SingleTaskGP`` with ``m`` outputs or a ``ModelListGP`` of single-output
    models gives ``m`` terms ``k_i e_i e_i^T`` (independent tasks, ``k_i`` the ``i``-th
    batch element of the batched kernel); a ``MultiTaskGP`` one term ``k_x B`` (``B`` its
    index kernel's ``covar_matrix``, tasks in the order of their sorted task values) with
    task-indexed data; a ``KroneckerMultiTaskGP`` one term ``k_x B`` (its
    ``MultitaskKernel``) with full-vector data. A ``ModelListGP`` stacks its models'
    tasks (block-diagonal ``B_j``); its data are full-vector when all models share the
    same training inputs and output layout, task-indexed otherwise.

    Args:
        model: An unbatched model as above (``train`` or ``eval`` mode, left as it is).

    Returns:
        A ``MultiOutputData`` whose ``sum_j k_j(x_a, x_b) B_j[i_a, i_b]`` equals the
        model's prior covariance of its training observations.

    Raises:
        TypeError: For a model not in the list above, a ``MultiTaskGP`` whose
            ``covar_module`` is not ``data_kernel * IndexKernel``, or a covariance that
            the terms do not reproduce (naming the model type and what is accepted).
        ValueError: For a batched model, a one-to-many input transform, or one whose
            data kernel would see the task column.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import read_multi_output_model
        >>> X = torch.rand(5, 2, dtype=torch.float64)
        >>> data = read_multi_output_model(
        ...     ModelListGP(SingleTaskGP(X, X[:, :1]), SingleTaskGP(X, X[:, 1:])))
        >>> tuple(data.train_Y.shape), data.train_tasks is None  # shared inputs: full-vector
        ((5, 2), True)
        >>> data.task_covariances[1].tolist()
        [[0.0, 0.0], [0.0, 1.0]]
    """
    leaves = leaf_models(model)
    for leaf in leaves:
        if len(leaf.batch_shape) != 0:
            raise ValueError(
                f"model must not be batched: {type(leaf).__name__} has batch_shape "
                f"{tuple(leaf.batch_shape)}; read one batch element at a time"
            )
    groups = [group for leaf in leaves for group in _leaf_groups(leaf)]
    blocks = training_covariances(model)
    return _combine(groups, blocks, type(model).__name__)


@dataclass(frozen=True)
class _Group:
    """One group of ``training_covariances``: ``n`` tasks, its data and terms."""

    train_X: Tensor  # N x d, user's inputs
    train_Y: Tensor  # N x n (full-vector) or N x 1 (task-indexed)
    train_tasks: Tensor | None
    kernels: tuple[Kernel, ...]
    task_covariances: tuple[Tensor, ...]  # n x n each

    @property
    def num_tasks(self) -> int:
        return self.task_covariances[0].shape[-1]


def _leaf_groups(model: Model) -> list[_Group]:
    if isinstance(model, MultiTaskGP):
        return [_multitask_group(model)]
    if isinstance(model, KroneckerMultiTaskGP):
        return [_kronecker_group(model)]
    X = _user_train_inputs(model)
    groups = []
    for data in output_data(model):
        kernel = copy.deepcopy(data.kernel)
        if data.output_index is not None:
            kernel = kernel[data.output_index]
        one = torch.ones(1, 1, dtype=X.dtype, device=X.device)
        groups.append(_Group(X, data.train_Y, None, (_on_user_inputs(model, kernel),), (one,)))
    return groups


def _multitask_group(model: MultiTaskGP) -> _Group:
    name = type(model).__name__
    covar = model.covar_module
    if not (
        isinstance(covar, ProductKernel)
        and len(covar.kernels) == 2
        and isinstance(covar.kernels[1], IndexKernel)
    ):
        raise TypeError(
            f"{name}'s covar_module must be data_kernel * IndexKernel (BoTorch's default "
            f"structure), got {type(covar).__name__}"
        )
    data_kernel, task_kernel = covar.kernels
    feature = model._task_feature
    if data_kernel.active_dims is None or feature in data_kernel.active_dims.tolist():
        raise ValueError(
            f"{name}'s data kernel must not see the task column {feature} (its active_dims "
            f"are {data_kernel.active_dims})"
        )
    with eval_mode(model), torch.no_grad():
        _, tasks, _ = model._split_inputs(model.train_inputs[0])
        B = task_kernel.covar_matrix
        B = B if isinstance(B, Tensor) else B.to_dense()
    X = _user_train_inputs(model)
    X = torch.cat([X[..., :feature], X[..., feature + 1 :]], dim=-1)
    kernel = _on_user_inputs(model, copy.deepcopy(data_kernel), task_feature=feature)
    Y = model.train_targets.detach().unsqueeze(-1)
    return _Group(X, Y, tasks.reshape(-1).long(), (kernel,), (B.detach(),))


def _kronecker_group(model: KroneckerMultiTaskGP) -> _Group:
    covar = model.covar_module
    if not isinstance(covar, MultitaskKernel):
        raise TypeError(
            f"{type(model).__name__}'s covar_module must be a MultitaskKernel, got "
            f"{type(covar).__name__}"
        )
    with torch.no_grad():
        B = covar.task_covar_module.covar_matrix
        B = B if isinstance(B, Tensor) else B.to_dense()
    kernel = _on_user_inputs(model, copy.deepcopy(covar.data_covar_module))
    Y = model.train_targets.detach()
    return _Group(_user_train_inputs(model), Y, None, (kernel,), (B.detach(),))


def _user_train_inputs(model: Model) -> Tensor:
    """The training inputs as the user passed them (``N x d``, one copy for batched
    outputs)."""
    X = model.train_inputs[0]
    if getattr(model, "_has_transformed_inputs", False):
        X = model._original_train_inputs
    if num_batched_outputs(model) > 1:
        X = X[..., 0, :, :]
    return X.detach()


def _on_user_inputs(model: Model, kernel: Kernel, task_feature: int | None = None) -> Kernel:
    """``kernel`` composed with the model's input transform (and task column)."""
    transform = getattr(model, "input_transform", None)
    if transform is None and task_feature is None:
        return kernel
    if transform is not None:
        if getattr(transform, "is_one_to_many", False):
            raise ValueError(
                f"{type(model).__name__}'s input transform {type(transform).__name__} maps "
                "each point to several points; accepted are one-to-one transforms such as "
                "Normalize, InputStandardize, Warp"
            )
        transform = copy.deepcopy(transform)
    return ModelInputKernel(kernel, transform, task_feature)


def _combine(groups: list[_Group], blocks: list[TrainingCovariance], name: str) -> MultiOutputData:
    """Stack the groups' tasks; full-vector when all groups are, on the same inputs."""
    n = sum(g.num_tasks for g in groups)
    X0 = groups[0].train_X
    full = all(
        g.train_tasks is None and g.train_X.shape == X0.shape and torch.equal(g.train_X, X0)
        for g in groups
    )
    kernels, covariances, offset = [], [], 0
    for g in groups:
        for kernel, B in zip(g.kernels, g.task_covariances):
            embedded = B.new_zeros(n, n)
            embedded[offset : offset + g.num_tasks, offset : offset + g.num_tasks] = B
            kernels.append(kernel)
            covariances.append(embedded)
        offset += g.num_tasks
    # Scalar observations of the groups one after the other, then reordered.
    order = _observation_order(groups, n) if full else None
    K = _reorder(torch.block_diag(*(b.kernel_matrix for b in blocks)), order)
    Sigma = _reorder(torch.block_diag(*(b.noise_covariance for b in blocks)), order)
    if full:
        train_X, train_tasks = X0, None
        train_Y = torch.cat([g.train_Y for g in groups], dim=-1)
    else:
        rows, offsets = [_rows(g) for g in groups], [0]
        for g in groups[:-1]:
            offsets.append(offsets[-1] + g.num_tasks)
        train_X = torch.cat([X for X, _ in rows])
        train_tasks = torch.cat([tasks + o for (_, tasks), o in zip(rows, offsets)])
        train_Y = torch.cat([g.train_Y.reshape(-1, 1) for g in groups])
    data = MultiOutputData(
        model_name=name,
        train_X=train_X,
        train_Y=train_Y.detach(),
        train_tasks=train_tasks,
        data_kernels=tuple(kernels),
        task_covariances=torch.stack(covariances),
        noise_covariance=Sigma,
        prior_mean=_reorder_vector(torch.cat([b.prior_mean for b in blocks]), order),
    )
    _check_reproduces(data, K, name)
    return data


def _rows(group: _Group) -> tuple[Tensor, Tensor]:
    """A group's scalar observations as task-indexed rows ``(X, tasks)``."""
    if group.train_tasks is not None:
        return group.train_X, group.train_tasks
    n = group.num_tasks
    tasks = torch.arange(n, device=group.train_X.device).repeat(group.train_X.shape[0])
    return group.train_X.repeat_interleave(n, dim=0), tasks


def _observation_order(groups: list[_Group], n: int) -> Tensor:
    """For full-vector data: the position, among the groups' observations one after the
    other, of point ``a`` task ``i`` (stored at ``a n + i``)."""
    N = groups[0].train_X.shape[0]
    order = torch.empty(N * n, dtype=torch.long)
    start, offset = 0, 0
    for g in groups:
        a = torch.arange(N)[:, None]
        i = torch.arange(g.num_tasks)[None, :]
        order[(a * n + offset + i).reshape(-1)] = (start + a * g.num_tasks + i).reshape(-1)
        start += N * g.num_tasks
        offset += g.num_tasks
    return order


def _reorder(matrix: Tensor, order: Tensor | None) -> Tensor:
    if order is None:
        return matrix
    order = order.to(matrix.device)
    return matrix[order][:, order]


def _reorder_vector(vector: Tensor, order: Tensor | None) -> Tensor:
    return vector if order is None else vector[order.to(vector.device)]


def _check_reproduces(data: MultiOutputData, K: Tensor, name: str) -> None:
    """The terms on the user's inputs must give the model's own prior covariance."""
    X = data.train_X
    tasks = data.observation_tasks
    obs_X = X if data.train_tasks is not None else X.repeat_interleave(data.num_tasks, dim=0)
    with torch.no_grad():
        kernel = SumOfSeparableKernels(list(data.data_kernels), list(data.task_covariances))
        rebuilt = kernel.observation_covariance(obs_X, tasks, obs_X, tasks)
    scale = float(K.abs().max()) if K.numel() else 0.0
    tol = torch.finfo(K.dtype).eps ** 0.5 * max(scale, 1.0)
    if rebuilt.shape != K.shape or not torch.allclose(rebuilt, K, rtol=0.0, atol=tol):
        raise TypeError(
            f"{name}'s prior covariance is not reproduced by its kernels as read "
            f"(sum_j k_j(T(x), T(x')) B_j); accepted: {ACCEPTED_MODELS}, with an input "
            "transform T that maps training and test points alike, one point at a time"
        )
