"""The candidates of the package's analytic acquisitions: ``batch_shape x 1 x d``.

Every ``forward`` of the package goes through ``one_candidate_per_batch``, which checks
``X`` before BoTorch's ``t_batch_mode_transform(expected_q=1)`` (which refuses other
shapes with a bare ``AssertionError``, and lets NaN, a wrong ``d`` or half precision
through to the model: a silent NaN or a GPyTorch error that does not name ``X``):

* a tensor of shape ``batch_shape x 1 x d``, ``d`` the dimension of the training inputs
  (``candidate_dimension``), else a ``ValueError`` naming ``X``, the shape received and
  the shape accepted;
* ``float32`` or ``float64`` (a ``TypeError`` otherwise: no half-precision Cholesky
  factors or eigendecompositions, and integer inputs are not points of a box);
* finite entries (a ``ValueError`` for NaN or inf).

A joint q-batch (``q > 1``) raises ``JointBatchError``, a BoTorch ``UnsupportedError``
(and a ``ValueError``) that points to the sequential batches: ``optimize_acqf(...,
sequential=True)`` and ``optimize_acqf_discrete`` choose ``q`` points one at a time
through ``set_X_pending`` (GP-BUCB, ``botorch_mtucb.acquisition.pending``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.exceptions import UnsupportedError
from botorch.models.gpytorch import MultiTaskGPyTorchModel
from botorch.models.model import Model, ModelList
from botorch.utils.transforms import t_batch_mode_transform
from gpytorch.models import ExactGP
from torch import Tensor

from botorch_mtucb.acquisition.input_checks import check_candidates


class JointBatchError(UnsupportedError, ValueError):
    """``X`` holds a joint q-batch (``q > 1``), which the analytic UCBs do not score.

    A BoTorch ``UnsupportedError`` and, for code that caught the shape error before,
    a ``ValueError``.

    Example:
        >>> from botorch.exceptions import UnsupportedError
        >>> from botorch_mtucb.acquisition.candidates import JointBatchError
        >>> issubclass(JointBatchError, UnsupportedError), issubclass(JointBatchError, ValueError)
        (True, True)
    """


def model_input_dim(model: object) -> int | None:
    """``d`` of the points a BoTorch model takes (the user's space, before its input
    transform), or ``None`` if it cannot be read.

    The package's models: their ``train_X``; exact GPs (``SingleTaskGP``,
    ``KroneckerMultiTaskGP``, ...): their original training inputs; ``MultiTaskGP``: the
    inputs without the task column (``num_non_task_features``); a ``ModelListGP``: the
    ``d`` its models agree on.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, MultiTaskGP, SingleTaskGP
        >>> from botorch_mtucb.acquisition.candidates import model_input_dim
        >>> X = torch.rand(8, 3, dtype=torch.float64)
        >>> X[:, -1] = torch.tensor([0.0, 1.0]).repeat(4)
        >>> model_input_dim(ModelListGP(SingleTaskGP(X, X[:, :1]))), model_input_dim(
        ...     MultiTaskGP(X, X[:, :1], task_feature=-1))
        (3, 2)
    """
    if isinstance(model, ModelList):
        dims = {model_input_dim(member) for member in model.models}
        return dims.pop() if len(dims) == 1 else None
    if isinstance(model, MultiTaskGPyTorchModel):
        return getattr(model, "num_non_task_features", None)
    train_X = getattr(model, "train_X", None)
    if isinstance(train_X, Tensor):
        return train_X.shape[-1]
    if isinstance(model, Model) and isinstance(model, ExactGP) and model.train_inputs:
        original = getattr(model, "_original_train_inputs", None)
        if getattr(model, "_has_transformed_inputs", False) and isinstance(original, Tensor):
            return original.shape[-1]
        return model.train_inputs[0].shape[-1]
    return None


def candidate_dimension(acquisition: AcquisitionFunction) -> int | None:
    """``d`` of the candidates of ``acquisition``: its ``input_dim`` if it sets one, else
    that of its ``bound`` (``input_dim`` or ``train_X``) or of its ``model``
    (``model_input_dim``), or ``None`` if none can be read (the model then checks ``d``).

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.acquisition import TaskConditionedUCB
        >>> from botorch_mtucb.acquisition.candidates import candidate_dimension
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = ModelListGP(SingleTaskGP(train_X, train_X[:, :1]))
        >>> candidate_dimension(TaskConditionedUCB(model, task=0, width=1.0))
        2
    """
    dim = getattr(acquisition, "input_dim", None)
    if isinstance(dim, int):
        return dim
    bound = getattr(acquisition, "bound", None)
    if bound is not None:
        dim = getattr(bound, "input_dim", None)
        if isinstance(dim, int):
            return dim
        train_X = getattr(bound, "train_X", None)
        return train_X.shape[-1] if isinstance(train_X, Tensor) else None
    return model_input_dim(getattr(acquisition, "model", None))


def check_candidate_values(X: Tensor, dim: int | None = None) -> Tensor:
    """``X`` (already of shape ``batch_shape x 1 x d``) is ``float32`` / ``float64`` and
    finite.

    Raises:
        TypeError: For another dtype (half precision, integer, boolean, complex).
        ValueError: For NaN or inf entries, naming how many and where.

    Example:
        >>> import torch
        >>> from botorch_mtucb.acquisition.candidates import check_candidate_values
        >>> X = torch.tensor([[[0.5, float("nan")]]])
        >>> try:
        ...     check_candidate_values(X, dim=2)
        ... except ValueError as error:
        ...     print(str(error)[:70])
        X must be finite (no NaN or inf) of shape batch_shape x 1 x 2, got 1 n
    """
    shape = f"batch_shape x 1 x {'d' if dim is None else dim}"
    if X.dtype not in (torch.float32, torch.float64):
        raise TypeError(
            f"X must be a float32 or float64 tensor of shape {shape}, got dtype {X.dtype}"
            + (
                " (no half-precision Cholesky factors or eigendecompositions): pass "
                "X.double() or X.float()"
                if X.is_floating_point()
                else ": pass X.double()"
            )
        )
    finite = torch.isfinite(X.detach())
    if not bool(finite.all()):
        bad = (~finite).nonzero()
        first = tuple(bad[0].tolist())
        raise ValueError(
            f"X must be finite (no NaN or inf) of shape {shape}, got {bad.shape[0]} non-finite "
            f"entries in X of shape {tuple(X.shape)} (the first, {X.detach()[first].item()}, "
            f"at index {first})"
        )
    return X


def check_maximize(maximize: object) -> bool:
    """``maximize``: a bool (BoTorch's minimization switch), else a ``TypeError``.

    Example:
        >>> from botorch_mtucb.acquisition.candidates import check_maximize
        >>> check_maximize(False)
        False
    """
    if not isinstance(maximize, bool):
        raise TypeError(
            f"maximize must be True or False (BoTorch's minimization switch), got {maximize!r}"
        )
    return maximize


def one_candidate_per_batch(forward: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Decorate an acquisition's ``forward(X)``: ``check_candidates(X, d)`` and
    ``check_candidate_values(X, d)`` (``d = candidate_dimension(acquisition)``), then
    BoTorch's ``t_batch_mode_transform(expected_q=1)``.

    Only shapes and values are read, so gradients with respect to ``X`` flow as before.
    An empty batch (``0 x 1 x d``) gives an empty ``batch_shape`` tensor, whatever the
    model.

    Raises:
        TypeError: If ``X`` is not a tensor, or not ``float32`` / ``float64``.
        JointBatchError: If ``q > 1`` (an ``UnsupportedError``: use
            ``optimize_acqf(..., sequential=True)`` or ``optimize_acqf_discrete``).
        ValueError: If ``X`` is not ``batch_shape x 1 x d`` (fewer than 2 dimensions,
            ``q = 0`` or another ``d``) or holds NaN or inf.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.acquisition import TaskConditionedUCB
        >>> from botorch_mtucb.acquisition.candidates import JointBatchError
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> acqf = TaskConditionedUCB(ModelListGP(SingleTaskGP(train_X, train_X[:, :1])), 0, 1.0)
        >>> try:  # forward is decorated with one_candidate_per_batch
        ...     acqf(torch.rand(4, 3, 2, dtype=torch.float64))
        ... except JointBatchError as error:
        ...     print(str(error)[:58])
        X must have shape batch_shape x 1 x 2: q = 1 is required (
    """
    transformed = t_batch_mode_transform(expected_q=1)(forward)

    @functools.wraps(forward)
    def checked(acquisition: AcquisitionFunction, X: Tensor) -> Tensor:
        dim = candidate_dimension(acquisition)
        try:
            check_candidates(X, dim)
        except ValueError as error:
            if X.dim() >= 2 and X.shape[-2] > 1:
                raise JointBatchError(
                    f"{error}. For a batch of q points, use optimize_acqf(..., q=q, "
                    "sequential=True) or optimize_acqf_discrete(..., q=q): they choose the "
                    "points one at a time, each with the previous ones as X_pending (GP-BUCB)"
                ) from error
            raise
        check_candidate_values(X, dim)
        if 0 in X.shape[:-2]:  # no candidate: no value (the models cannot reshape 0 rows)
            return X.new_zeros(X.shape[:-2])
        return transformed(acquisition, X)

    return checked
