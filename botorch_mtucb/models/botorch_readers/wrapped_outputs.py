r"""Single-output GPs inside BoTorch's multi-output wrappers, read as one scalar GP.

The single-output bounds (paper 002's martingale-mixture bound, IGP-UCB, AY-GP-UCB) hold
for any scalar kernel on any input space. Three wrappers hold such a scalar GP:

* ``ModelListGP`` of one single-output model: that model (``unwrap_model_list``);
* ``MultiTaskGP(..., output_tasks=[i])``: a scalar GP on ``X x [n]`` whose kernel is the
  model's product kernel ``k((x, a), (x', b)) = k_x(x, x') B_ab`` on rows with a task
  column; the output is that GP at ``(x, i)``, learned from the observations of *all*
  tasks (``multi_task_output_data``);
* a multi-output ``SingleTaskGP`` (independent outputs on shared inputs) with a
  ``ScalarizedPosteriorTransform(w, offset)``: the scalarized GP (``scalarized_output_data``).

**The scalarized GP.** Output ``i`` is ``f_i = m_i + s_i f~_i`` (``Standardize``: mean
``m_i``, std ``s_i``), ``f~_i`` has constant prior mean ``c_i``, kernel ``k_i`` and noise
variance ``sigma_i^2`` (transformed units), and is observed at the shared inputs. With
``a_i = w_i s_i``:

.. math::
    w^\top f(x) + \mathrm{offset} = \mathrm{offset} + \sum_i w_i (m_i + s_i c_i) + g(x),
    \qquad g = \sum_i a_i (\tilde f_i - c_i),

a zero-mean GP with kernel ``sum_i a_i^2 k_i``, observed as ``z_s = sum_i a_i (y~_{s,i} -
c_i) = g(x_s) + sum_i a_i eps_{s,i}`` with noise variance ``sum_i a_i^2 sigma_i^2`` (for
independent noise across outputs). It is stored normalized, ``g~ = g / S`` with ``S =
||a||_2``: kernel ``sum_i (a_i / S)^2 k_i`` (a convex combination of the ``k_i``: the
outputs' own scale), ``outcome_scale = S``. ``||g~||_{k~} = ||g||_{k_g} <= (sum_i ||f~_i -
c_i||_{k_i}^2)^{1/2}``. Its posterior (conditioned on ``z`` only) equals BoTorch's
posterior of ``w^T f`` (conditioned on every output) when the ``k_i / sigma_i^2`` are
proportional (one kernel and noise ratio for all outputs); otherwise it is wider.

``joint_training_data`` gives the covariances of all scalar observations of a model
(``K``, ``Sigma``, centered targets), the data of the scalar GP on ``X x [n]`` whose
functionals are the model's outputs and their weighted sums.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models.gpytorch import BatchedMultiOutputGPyTorchModel
from botorch.models.model import Model
from botorch.models.model_list_gp_regression import ModelListGP
from botorch.models.multitask import MultiTaskGP
from gpytorch.kernels import Kernel
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.models.botorch_readers.moments import (
    eval_mode,
    is_diagonal,
    task_constants,
    training_covariances,
)
from botorch_mtucb.models.botorch_readers.single_output import outcome_affine_map, output_data


@dataclass(frozen=True)
class ScalarGPData:
    r"""One scalar GP in its kernel's space: the data of a single-output bound.

    Attributes:
        train_X: ``t x d'`` training rows in the kernel's space (after the model's input
            transform; with the task column for a ``MultiTaskGP``).
        train_Y: ``t x 1`` targets minus the prior mean (transformed units).
        kernel: The kernel on those rows (the model's modules, not copied).
        noise_variance: ``t`` noise variances of the rows (transformed units).
        input_map: Maps the user's ``... x d`` points to ``... x d'`` rows
            (``kernel_inputs``).
        outcome_shift, outcome_scale: ``f = outcome_shift + outcome_scale * g~``.
        input_dim: ``d``.
        model_name: The model's class name.

    Example:
        >>> import torch
        >>> from botorch.models import MultiTaskGP
        >>> from botorch_mtucb.models.botorch_readers import multi_task_output_data
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> X[:, -1] = torch.tensor([0.0, 1.0]).repeat(3)
        >>> data = multi_task_output_data(
        ...     MultiTaskGP(X, X[:, :1], task_feature=-1, output_tasks=[0]))
        >>> data.gram().shape, data.noise_variance.shape
        (torch.Size([6, 6]), torch.Size([6]))
    """

    train_X: Tensor
    train_Y: Tensor
    kernel: Kernel
    noise_variance: Tensor
    input_map: Module
    outcome_shift: float
    outcome_scale: float
    input_dim: int
    model_name: str

    def gram(self) -> Tensor:
        """``K_t`` (``t x t``, dense, detached)."""
        with torch.no_grad():
            return self.kernel(self.train_X).to_dense()

    def kernel_inputs(self, X: Tensor) -> Tensor:
        """The rows of the user's points ``X`` (``... x d`` -> ``... x d'``)."""
        return self.input_map(X)


class TaskColumnInputs(Module):
    r"""``x -> T(x)`` with, for a ``MultiTaskGP``, the task column of one task.

    ``T`` is a frozen ``eval``-mode copy of the model's input transform (``None``: the
    identity). With ``task_feature`` given, the task's raw value is inserted at that column
    before ``T`` and the column is then set to the task's index in the kernel
    (``MultiTaskGP._map_tasks``), as the model's ``forward`` sees its rows.

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.botorch_readers import TaskColumnInputs
        >>> TaskColumnInputs(None, task_feature=1, task_value=3.0, task_index=1)(
        ...     torch.tensor([[0.5, 0.25]]))
        tensor([[0.5000, 1.0000, 0.2500]])
    """

    def __init__(
        self,
        input_transform: Module | None,
        task_feature: int | None = None,
        task_value: float = 0.0,
        task_index: int = 0,
    ) -> None:
        super().__init__()
        if input_transform is not None:
            input_transform = copy.deepcopy(input_transform).eval()
            for parameter in input_transform.parameters():
                parameter.requires_grad_(False)
        self.input_transform = input_transform
        self.task_feature = task_feature
        self.task_value = float(task_value)
        self.task_index = int(task_index)

    def forward(self, X: Tensor) -> Tensor:
        f = self.task_feature
        if f is not None:
            column = X.new_full((*X.shape[:-1], 1), self.task_value)
            X = torch.cat([X[..., :f], column, X[..., f:]], dim=-1)
        if self.input_transform is not None:
            self.input_transform.to(X)
            X = self.input_transform(X)
        if f is not None:
            column = X.new_full((*X.shape[:-1], 1), float(self.task_index))
            X = torch.cat([X[..., :f], column, X[..., f + 1 :]], dim=-1)
        return X


class WeightedOutputSumKernel(Kernel):
    r"""``k(x, x') = sum_i c_i k_i(x, x')`` for the ``m`` members ``k_i`` of a kernel batched
    over outputs (a multi-output ``SingleTaskGP``'s ``covar_module``), ``c_i >= 0``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models.botorch_readers import WeightedOutputSumKernel
        >>> batched = RBFKernel(batch_shape=torch.Size([2]))
        >>> kernel = WeightedOutputSumKernel(batched, torch.tensor([0.25, 0.75]))
        >>> X = torch.rand(3, 1)
        >>> bool(torch.allclose(kernel(X).to_dense(), RBFKernel()(X).to_dense()))
        True
    """

    def __init__(self, batched_kernel: Kernel, coefficients: Tensor) -> None:
        super().__init__()
        self.batched_kernel = batched_kernel
        self.register_buffer("coefficients", coefficients.detach().clone())

    @property
    def batch_shape(self) -> torch.Size:
        """``[]``: the outputs' batch is summed over (``Kernel.batch_shape`` would
        broadcast the member kernel's)."""
        return torch.Size([])

    @batch_shape.setter
    def batch_shape(self, value: torch.Size) -> None:
        self._batch_shape = value

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params) -> Tensor:
        values = self.batched_kernel(x1.unsqueeze(-3), x2.unsqueeze(-3), diag=diag, **params)
        values = values if isinstance(values, Tensor) else values.to_dense()
        c = self.coefficients.to(values)
        if diag:  # ... x m x N
            return (values * c[:, None]).sum(-2)
        return (values * c[:, None, None]).sum(-3)  # ... x N x N'


def unwrap_model_list(model: object) -> object:
    """The model of a ``ModelListGP`` of one single-output model (nested lists too), else
    ``model`` unchanged.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import unwrap_model_list
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> gp = SingleTaskGP(X, X)
        >>> unwrap_model_list(ModelListGP(gp)) is gp
        True
    """
    while isinstance(model, ModelListGP) and len(model.models) == 1:
        if model.models[0].num_outputs != 1:
            break
        model = model.models[0]
    return model


def is_single_task_multi_task_gp(model: object) -> bool:
    """Whether ``model`` is a ``MultiTaskGP`` with one output task (``output_tasks=[i]``).

    Example:
        >>> import torch
        >>> from botorch.models import MultiTaskGP
        >>> from botorch_mtucb.models.botorch_readers import is_single_task_multi_task_gp
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> X[:, -1] = torch.tensor([0.0, 1.0]).repeat(3)
        >>> is_single_task_multi_task_gp(MultiTaskGP(X, X[:, :1], task_feature=-1,
        ...                                          output_tasks=[1]))
        True
    """
    return isinstance(model, MultiTaskGP) and model.num_outputs == 1


def is_scalarized_multi_output(model: object, posterior_transform: object) -> bool:
    """Whether ``model`` is a multi-output (batched) ``SingleTaskGP``-like exact GP and
    ``posterior_transform`` a ``ScalarizedPosteriorTransform`` with one weight per output.

    Example:
        >>> import torch
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import is_scalarized_multi_output
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> model = SingleTaskGP(X, torch.cat([X, -X], -1))
        >>> is_scalarized_multi_output(model, ScalarizedPosteriorTransform(torch.ones(2)))
        True
    """
    return (
        isinstance(model, BatchedMultiOutputGPyTorchModel)
        and model.num_outputs > 1
        and isinstance(posterior_transform, ScalarizedPosteriorTransform)
        and posterior_transform.weights.numel() == model.num_outputs
    )


def multi_task_output_data(model: MultiTaskGP) -> ScalarGPData:
    r"""The scalar GP on ``X x [n]`` behind a ``MultiTaskGP`` with one output task ``i``.

    Rows: the model's transformed training inputs with its task indices; kernel: its
    ``covar_module`` (checked against the model's own prior covariance); targets: the
    outcome-transformed observations of all tasks minus each row's prior mean (the
    fitted constant of its task); noise: each row's (per task, or fixed per point). The
    output is ``f_i(x) = outcome_shift + outcome_scale * g~(x, i)`` with ``outcome_shift =
    m + s c_i`` (``Standardize``'s mean and std, ``c_i`` task ``i``'s prior constant).

    Raises:
        TypeError: For a noise correlated between rows, or a kernel that does not
            reproduce the model's prior covariance.
        ValueError: For a prior mean that is not constant within a task
            (``task_constants``), more than one output task, batch dimensions or a
            non-affine outcome transform.

    Example:
        >>> import torch
        >>> from botorch.models import MultiTaskGP
        >>> from botorch_mtucb.models.botorch_readers import multi_task_output_data
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> X[:, -1] = torch.tensor([0.0, 1.0]).repeat(3)
        >>> data = multi_task_output_data(
        ...     MultiTaskGP(X, X[:, :1].sin(), task_feature=-1, output_tasks=[1]))
        >>> data.train_X.shape, data.input_dim, data.kernel_inputs(X[:2, :1])[:, -1]
        (torch.Size([6, 2]), 1, tensor([1., 1.], dtype=torch.float64))
    """
    name = type(model).__name__
    if not is_single_task_multi_task_gp(model):
        raise ValueError(f"model must be a MultiTaskGP with one output task, got {name}")
    if len(model.train_inputs[0].shape) != 2:
        raise ValueError(f"model must not be batched: {name} has batched training inputs")
    (group,) = training_covariances(model)
    if not is_diagonal(group.noise_covariance):
        raise TypeError(f"{name}'s noise must be independent between observations")
    with eval_mode(model), torch.no_grad():
        before, tasks, after = model._split_inputs(model.train_inputs[0])
        rows = torch.cat([before, tasks.to(before), after], dim=-1)
        feature = model._task_feature
        task_value = float(model._output_tasks[0])
        task_index = int(model._map_tasks(torch.tensor([[task_value]]).long()).reshape(()))
        row_tasks = tasks.reshape(-1).long()
        values = group.prior_mean.reshape(-1)
        constants = task_constants(model, values, row_tasks, model.num_tasks, "prior mean", name)
        means = constants.to(rows)[row_tasks]  # each row's prior mean
    K = group.kernel_matrix
    with torch.no_grad():
        rebuilt = model.covar_module(rows).to_dense()
    if not torch.allclose(rebuilt, K, rtol=1e-6, atol=1e-8 * float(K.abs().max())):
        raise TypeError(
            f"{name}'s covar_module does not reproduce its prior covariance on the training "
            "rows; accepted: BoTorch's data_kernel * IndexKernel structure"
        )
    shift, scale = outcome_affine_map(model, one_map_for_all=True)
    input_map = TaskColumnInputs(
        getattr(model, "input_transform", None), feature, task_value, task_index
    )
    return ScalarGPData(
        train_X=rows.detach(),
        train_Y=(model.train_targets.detach() - means).unsqueeze(-1),
        kernel=model.covar_module,
        noise_variance=group.noise_covariance.diagonal().detach(),
        input_map=input_map,
        outcome_shift=shift + scale * float(constants[task_index]),
        outcome_scale=scale,
        input_dim=model.num_non_task_features,
        model_name=name,
    )


def scalarized_output_data(
    model: Model, posterior_transform: ScalarizedPosteriorTransform
) -> ScalarGPData:
    r"""The scalarized GP ``g~`` of a multi-output ``SingleTaskGP`` and
    ``w^T f + offset`` (module docstring): rows ``T(X)``, targets ``z~ = sum_i (a_i / S)
    (y~_i - c_i)``, kernel ``sum_i (a_i / S)^2 k_i``, noise ``sum_i (a_i / S)^2
    sigma_i^2`` per point, ``outcome_shift = offset + sum_i w_i (m_i + s_i c_i)``,
    ``outcome_scale = S = ||a||_2``, ``a_i = w_i s_i``.

    Raises:
        TypeError, ValueError: As ``models.output_data`` for the model; ``ValueError``
            if all weights are zero (``w^T f`` is then the constant ``offset``).

    Example:
        >>> import torch
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import scalarized_output_data
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(X, torch.cat([X.sin(), X.cos()], -1), outcome_transform=None)
        >>> w = torch.tensor([3.0, 0.0, 4.0, 0.0], dtype=torch.float64)
        >>> data = scalarized_output_data(model, ScalarizedPosteriorTransform(w, offset=1.0))
        >>> data.outcome_scale, data.train_Y.shape
        (5.0, torch.Size([6, 1]))
    """
    outputs = output_data(model)
    weights = posterior_transform.weights.detach().to(torch.float64).reshape(-1)
    scales = torch.tensor([d.outcome_scale for d in outputs], dtype=torch.float64)
    a = weights * scales
    S = float(torch.linalg.vector_norm(a))
    if S == 0.0:
        raise ValueError(
            "posterior_transform's weights are all zero: w^T f + offset is the constant "
            "offset, nothing to bound"
        )
    share = (a / S).tolist()
    first = outputs[0]
    train_Y = sum(p * (d.train_Y - d.prior_mean) for p, d in zip(share, outputs))
    noise = sum(p * p * d.noise_variance for p, d in zip(share, outputs))
    shift = float(posterior_transform.offset) + sum(
        float(w) * (d.outcome_shift + d.outcome_scale * d.prior_mean)
        for w, d in zip(weights, outputs)
    )
    coefficients = torch.tensor([p * p for p in share], dtype=first.train_X.dtype)
    return ScalarGPData(
        train_X=first.train_X,
        train_Y=train_Y.detach(),
        kernel=WeightedOutputSumKernel(first.kernel, coefficients),
        noise_variance=noise.detach(),
        input_map=TaskColumnInputs(first.input_transform),
        outcome_shift=shift,
        outcome_scale=S,
        input_dim=first.input_dim,
        model_name=first.model_name,
    )


def joint_training_data(model: Model) -> tuple[Tensor, Tensor, Tensor]:
    r"""``(K, Sigma, y)`` of all scalar training observations of an unbatched exact GP:
    the block-diagonal prior covariance (``M x M``) and noise covariance of the
    a-priori independent groups (``training_covariances``) and the transformed targets
    minus their prior means (``M x 1``), in the groups' order. For a ``MultiTaskGP`` one
    group (its rows); for a multi-output ``SingleTaskGP`` one group per output.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import joint_training_data
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> K, Sigma, y = joint_training_data(SingleTaskGP(X, torch.cat([X, -X], -1)))
        >>> K.shape, Sigma.shape, y.shape
        (torch.Size([10, 10]), torch.Size([10, 10]), torch.Size([10, 1]))
    """
    groups = training_covariances(model)
    targets = model.train_targets.detach().reshape(len(groups), -1)
    K = torch.block_diag(*(g.kernel_matrix for g in groups))
    Sigma = torch.block_diag(*(g.noise_covariance for g in groups))
    y = torch.cat([t - g.prior_mean.reshape(-1) for t, g in zip(targets, groups)])
    return K, Sigma, y.unsqueeze(-1)
