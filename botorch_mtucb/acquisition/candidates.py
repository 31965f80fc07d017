"""The candidates of the package's analytic acquisitions: ``batch_shape x 1 x d``.

BoTorch's ``t_batch_mode_transform(expected_q=1)`` refuses other shapes with a bare
``AssertionError``; ``one_candidate_per_batch`` checks ``X`` first and raises a
``ValueError`` naming ``X``, the shape received and the shape accepted. A joint
q-batch (``q > 1``) raises ``JointBatchError``, a BoTorch ``UnsupportedError`` (and a
``ValueError``) that points to the sequential batches: ``optimize_acqf(...,
sequential=True)`` and ``optimize_acqf_discrete`` choose ``q`` points one at a time
through ``set_X_pending`` (GP-BUCB, ``botorch_mtucb.acquisition.pending``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from botorch.acquisition.acquisition import AcquisitionFunction
from botorch.exceptions import UnsupportedError
from botorch.utils.transforms import t_batch_mode_transform
from torch import Tensor

from botorch_mtucb.utils.checks import check_candidates


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


def candidate_dimension(acquisition: AcquisitionFunction) -> int | None:
    """``d`` of the training inputs behind ``acquisition`` (its ``bound`` or ``model``
    with a ``train_X``), or ``None`` if it has none (BoTorch's models then check ``d``).

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.acquisition import TaskConditionedUCB
        >>> from botorch_mtucb.acquisition.candidates import candidate_dimension
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = ModelListGP(SingleTaskGP(train_X, train_X[:, :1]))
        >>> print(candidate_dimension(TaskConditionedUCB(model, task=0, width=1.0)))
        None
    """
    source = getattr(acquisition, "bound", None)
    if source is None:
        source = getattr(acquisition, "model", None)
    train_X = getattr(source, "train_X", None)
    return train_X.shape[-1] if isinstance(train_X, Tensor) else None


def one_candidate_per_batch(forward: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Decorate an acquisition's ``forward(X)``: ``check_candidates(X, d)``, then
    BoTorch's ``t_batch_mode_transform(expected_q=1)``.

    Only shapes are read, so gradients with respect to ``X`` flow as before.

    Raises:
        TypeError: If ``X`` is not a tensor (on evaluation).
        JointBatchError: If ``q > 1`` (an ``UnsupportedError``: use
            ``optimize_acqf(..., sequential=True)`` or ``optimize_acqf_discrete``).
        ValueError: If ``X`` is not ``batch_shape x 1 x d``: fewer than 2
            dimensions, ``q = 0`` or another ``d``.

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
        X must have shape batch_shape x 1 x d: q = 1 is required (
    """
    transformed = t_batch_mode_transform(expected_q=1)(forward)

    @functools.wraps(forward)
    def checked(acquisition: AcquisitionFunction, X: Tensor) -> Tensor:
        try:
            check_candidates(X, candidate_dimension(acquisition))
        except ValueError as error:
            if X.dim() >= 2 and X.shape[-2] > 1:
                raise JointBatchError(
                    f"{error}. For a batch of q points, use optimize_acqf(..., q=q, "
                    "sequential=True) or optimize_acqf_discrete(..., q=q): they choose the "
                    "points one at a time, each with the previous ones as X_pending (GP-BUCB)"
                ) from error
            raise
        return transformed(acquisition, X)

    return checked
