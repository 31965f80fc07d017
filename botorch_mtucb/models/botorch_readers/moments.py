r"""What a fitted BoTorch GP's exact marginal likelihood sees: prior mean, covariance, noise.

``observation_moments(model, inputs)`` is the one place the package reads a BoTorch
model's prior mean and noise: ``model.forward`` at the (transformed) inputs for the
mean and ``model.likelihood`` of a zero-covariance prior for the noise covariance, as
GPyTorch's exact prediction strategy calls them, whatever the mean and likelihood
modules. ``task_constants`` turns such per-observation values into one value per task
(checked constant within each task; tasks without data probed), as the fixed-kernel
models take them. ``training_covariances(model)`` gives, for each group of outputs that
are independent a priori, the prior covariance ``K`` of the model's scalar training
observations and their noise covariance ``Sigma`` (per task, per point, correlated
between tasks where the likelihood says so), in the model's transformed space, batched
like the model: ``model.forward`` on the transformed training inputs and ``model.likelihood`` of a
zero-covariance prior, as GPyTorch's exact prediction strategy calls it. Accepted:
``SingleTaskGP`` (one or ``m`` outputs, which BoTorch batches), ``MultiTaskGP``,
``KroneckerMultiTaskGP``, ``ModelListGP`` of these (any BoTorch ``ExactGP``). The
information gains of ``confidence`` and ``read_multi_output_model`` are built on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import torch
from botorch.exceptions.errors import UnsupportedError
from botorch.models.gpytorch import BatchedMultiOutputGPyTorchModel
from botorch.models.model import Model, ModelList
from botorch.models.multitask import KroneckerMultiTaskGP, MultiTaskGP
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from gpytorch.models import ExactGP
from linear_operator.operators import DiagLinearOperator, LinearOperator
from torch import Tensor

ACCEPTED_MODELS = (
    "a fitted BoTorch exact GP (SingleTaskGP with one or several outputs, MultiTaskGP, "
    "KroneckerMultiTaskGP, or a ModelListGP of them)"
)


class TrainingCovariance(NamedTuple):
    r"""Prior and noise covariances of a group of scalar training observations.

    Attributes:
        kernel_matrix: ``batch x M x M`` prior covariance ``K`` of the latent values.
        noise_covariance: ``batch x M x M`` noise covariance ``Sigma`` (diagonal unless
            the likelihood correlates the tasks' noise).
        prior_mean: ``batch x M`` prior means of the latent values.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import (
        ...     TrainingCovariance, training_covariances)
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> (group,) = training_covariances(SingleTaskGP(X, X.sin()))
        >>> isinstance(group, TrainingCovariance), tuple(group.noise_covariance.shape)
        (True, (4, 4))
    """

    kernel_matrix: Tensor
    noise_covariance: Tensor
    prior_mean: Tensor


class ObservationMoments(NamedTuple):
    r"""Prior mean, noise covariance and (optionally) prior covariance of a model's
    scalar observations at some inputs (``observation_moments``).

    Attributes:
        mean: ``batch x M`` prior means (a multi-task model's interleaved: point ``a``,
            task ``i`` at ``a n + i``).
        noise: ``batch x M x M`` noise covariance (a ``LinearOperator``, detached).
        covariance: ``batch x M x M`` prior covariance, or ``None`` if not asked for.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import observation_moments
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> Yvar = torch.full((4, 1), 0.01, dtype=torch.float64)
        >>> model = SingleTaskGP(X, torch.sin(6 * X), train_Yvar=Yvar)
        >>> moments = observation_moments(model)  # an ObservationMoments
        >>> moments.mean.shape, moments.noise.shape, moments.covariance is None
        (torch.Size([4]), torch.Size([4, 4]), True)
    """

    mean: Tensor
    noise: LinearOperator
    covariance: Tensor | None


def observation_moments(
    model: Model, inputs: tuple[Tensor, ...] | None = None, covariance: bool = False
) -> ObservationMoments:
    r"""The prior mean and noise covariance of a BoTorch exact GP's observations at
    ``inputs``: the one reader of a model's prior mean and noise.

    ``model.forward(*inputs)`` gives the prior (its mean: whatever the mean module);
    ``model.likelihood`` applied to a zero-covariance prior at the inputs gives the
    noise covariance (per point, per task, fixed or learned, correlated between tasks
    where the likelihood says so), as GPyTorch's exact prediction strategy calls it.
    The model is evaluated in ``eval`` mode, without gradients, and left in its mode.

    Args:
        model: A BoTorch ``ExactGP`` (one leaf of a ``ModelListGP``).
        inputs: The model's (transformed, ``eval``-mode) inputs; default its training
            inputs.
        covariance: Also evaluate the prior covariance (dense).

    Returns:
        An ``ObservationMoments``, batched like the model.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import observation_moments
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> model = SingleTaskGP(X, X.sin(), outcome_transform=None)
        >>> model.likelihood.noise = torch.tensor([0.25], dtype=torch.float64)
        >>> moments = observation_moments(model)
        >>> moments.mean.shape, moments.noise.diagonal().tolist()
        (torch.Size([4]), [0.25, 0.25, 0.25, 0.25])
    """
    with eval_mode(model), torch.no_grad():
        inputs = model.train_inputs if inputs is None else inputs
        prior = model.forward(*inputs)
        zeros = torch.zeros_like(prior.mean)
        if isinstance(prior, MultitaskMultivariateNormal):
            flat = DiagLinearOperator(zeros.reshape(*zeros.shape[:-2], -1))
            zero = MultitaskMultivariateNormal(zeros, flat, interleaved=prior._interleaved)
        else:
            zero = MultivariateNormal(zeros, DiagLinearOperator(zeros))
        noise = model.likelihood(zero, inputs)  # as gpytorch's exact prediction strategy
        mean = prior.mean.reshape(*prior.batch_shape, -1)  # interleaved for a MTMVN
        dense = prior.covariance_matrix.detach() if covariance else None
        return ObservationMoments(mean.detach(), noise.lazy_covariance_matrix.detach(), dense)


def task_constants(
    model: Model,
    values: Tensor,
    tasks: Tensor,
    num_tasks: int,
    what: str,
    name: str,
    rtol: float = 1e-6,
) -> Tensor:
    """One value per task (float64, ``num_tasks``) from ``values`` of the scalar
    observations (``M``, their ``tasks``), checked to be the same within each task
    (relative ``rtol``); a task without observations (a ``MultiTaskGP`` with
    ``all_tasks``) is probed: the model evaluated at its first training input with the
    task column set to the task (``observation_moments``).

    Args:
        model: The model the values were read from.
        values: ``M`` per-observation values (prior means or noise variances).
        tasks: ``M`` task indices (long).
        num_tasks: ``n``.
        what: ``"prior mean"`` or ``"noise"`` (what the probe reads, and error text).
        name: The model's name in error messages.

    Raises:
        ValueError: If the values of one task differ (a mean that is not constant, or
            heteroskedastic noise).

    Example:
        >>> import torch
        >>> from botorch.models import KroneckerMultiTaskGP
        >>> from botorch_mtucb.models.botorch_readers import observation_moments, task_constants
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> model = KroneckerMultiTaskGP(X, torch.cat([X, -X], -1))
        >>> mean = observation_moments(model).mean.reshape(-1)  # interleaved: 10 values
        >>> tasks = torch.arange(2).repeat(5)
        >>> task_constants(model, mean, tasks, 2, "prior mean", "model").shape
        torch.Size([2])
    """
    tasks = tasks.to(values.device)
    missing = [i for i in range(num_tasks) if not bool((tasks == i).any())]
    probed = _probe_tasks(model, missing, what, name)
    constants = []
    for i in range(num_tasks):
        own = values[tasks == i]
        if own.numel() == 0:
            constants.append(probed[i])
            continue
        low, high = float(own.min()), float(own.max())
        if high - low > rtol * max(abs(low), abs(high)):
            kind = "heteroskedastic" if what == "noise" else "not constant"
            advice = "pass regularization" if what == "noise" else "use a ConstantMean"
            raise ValueError(
                f"{name}'s {what} differs between the training points of task {i} (from "
                f"{low:.3g} to {high:.3g}: {kind}); one {what} value per task is needed: "
                f"{advice}"
            )
        constants.append(high)
    return torch.tensor(constants, dtype=torch.float64)


def _probe_tasks(model: Model, tasks: list[int], what: str, name: str) -> dict[int, float]:
    """The prior mean or noise variance of ``tasks`` without training observations:
    ``observation_moments`` at the model's first training input with the task column
    set to each task, as its exact prediction does."""
    if not tasks:
        return {}
    if not isinstance(model, MultiTaskGP):  # pragma: no cover - other models observe all
        raise ValueError(f"{name} has tasks without training observations: {tasks}")
    values = sorted(model._expected_task_values)
    with eval_mode(model), torch.no_grad():
        X = model.train_inputs[0][..., :1, :].repeat(len(tasks), 1)
        X[..., model._task_feature] = torch.tensor([values[i] for i in tasks]).to(X)
        moments = observation_moments(model, (X,))
    if what == "noise":
        read = moments.noise.diagonal(dim1=-2, dim2=-1).reshape(-1).tolist()
    else:
        read = moments.mean.reshape(-1).tolist()
    return dict(zip(tasks, read))


def training_covariances(model: Model) -> list[TrainingCovariance]:
    r"""``K`` and ``Sigma`` of each a-priori independent group of a model's observations.

    One group per output of a batched multi-output ``SingleTaskGP``, one per model of a
    ``ModelListGP`` output, one for a ``MultiTaskGP`` (its ``t`` rows) or a
    ``KroneckerMultiTaskGP`` (its ``t n`` values, interleaved: point ``a``, task ``i``
    at ``a n + i``). Values are in the model's transformed space (inputs after its input
    transform, outcomes after its outcome transform), detached, without gradients. The
    model is evaluated in ``eval`` mode and left in the mode it was in.

    Args:
        model: As in ``ACCEPTED_MODELS``; batched models are accepted (the groups carry the
            model's ``batch_shape``).

    Returns:
        A list of ``TrainingCovariance``; the information gains of the groups add up.

    Raises:
        TypeError: For a model that is not a BoTorch exact GP with a Gaussian likelihood
            (naming its type and what is accepted).

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import training_covariances
        >>> X = torch.rand(5, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(X, torch.cat([X.sum(-1, keepdim=True), X[:, :1]], -1))
        >>> [tuple(group.kernel_matrix.shape) for group in training_covariances(model)]
        [(5, 5), (5, 5)]
    """
    groups = []
    for leaf in leaf_models(model):
        K, Sigma, mean = _leaf_covariance(leaf)
        if num_batched_outputs(leaf) > 1:  # the outputs are the batch dimension -3
            groups.extend(
                TrainingCovariance(K[..., i, :, :], Sigma[..., i, :, :], mean[..., i, :])
                for i in range(K.shape[-3])
            )
        else:
            groups.append(TrainingCovariance(K, Sigma, mean))
    return groups


def leaf_models(model: object) -> list[Model]:
    """The exact GPs of a (nested) ``ModelList`` (or ``[model]``), checked.

    Raises:
        TypeError: For a model that is not a BoTorch ``ExactGP`` with training data.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import leaf_models
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> len(leaf_models(ModelListGP(SingleTaskGP(X, X), SingleTaskGP(X, -X))))
        2
    """
    if isinstance(model, ModelList):
        return [leaf for member in model.models for leaf in leaf_models(member)]
    name = type(model).__name__
    if not isinstance(model, Model) or not isinstance(model, ExactGP):
        raise TypeError(f"model must be {ACCEPTED_MODELS}, got {name}")
    if model.train_inputs is None or model.train_targets is None:
        raise TypeError(f"model must be {ACCEPTED_MODELS} with training data, got {name}")
    return [model]


def num_batched_outputs(model: Model) -> int:
    """The outputs a model keeps as a batch dimension (``m`` of a ``SingleTaskGP``, else 1).

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import num_batched_outputs
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> num_batched_outputs(SingleTaskGP(X, torch.cat([X, -X], -1)))
        2
    """
    if isinstance(model, BatchedMultiOutputGPyTorchModel):
        return model.num_outputs
    return 1


def is_diagonal(matrix: Tensor) -> bool:
    """Whether every off-diagonal entry of ``... x M x M`` ``matrix`` is exactly 0.

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.botorch_readers import is_diagonal
        >>> is_diagonal(torch.eye(2)), is_diagonal(torch.ones(2, 2))
        (True, False)
    """
    return bool((matrix - torch.diag_embed(matrix.diagonal(dim1=-2, dim2=-1))).eq(0).all())


def smallest_noise_variance(groups: list[TrainingCovariance]) -> Tensor:
    """``lambda_min(Sigma)`` over all groups (of the broadcast batch shape).

    Raises:
        ValueError: Without training data, or for a noise covariance that is not
            positive definite.

    Example:
        >>> import torch
        >>> from botorch_mtucb.models.botorch_readers import (
        ...     TrainingCovariance, smallest_noise_variance)
        >>> group = TrainingCovariance(torch.eye(2), torch.diag(torch.tensor([0.3, 0.1])),
        ...                            torch.zeros(2))
        >>> round(float(smallest_noise_variance([group])), 6)
        0.1
    """
    smallest = []
    for group in groups:
        Sigma = group.noise_covariance
        if Sigma.shape[-1] == 0:
            continue
        if is_diagonal(Sigma):
            smallest.append(Sigma.diagonal(dim1=-2, dim2=-1).amin(-1))
        else:
            smallest.append(torch.linalg.eigvalsh(Sigma)[..., 0])
    if not smallest:
        raise ValueError(
            "the model has no training data, so no noise level: pass a model with data"
        )
    value = smallest[0]
    for other in smallest[1:]:
        value = torch.minimum(value, other)
    if not (value > 0).all():
        raise ValueError("the model's noise covariance must be positive definite")
    return value


def is_multi_task_model(model: object) -> bool:
    """Whether ``model`` correlates its outputs a priori (``MultiTaskGP`` or
    ``KroneckerMultiTaskGP``, or any model with a task feature): its outputs form one
    group of scalar observations, with one joint width.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import is_multi_task_model
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> is_multi_task_model(SingleTaskGP(X, X))
        False
    """
    return isinstance(model, (MultiTaskGP, KroneckerMultiTaskGP)) or (
        getattr(model, "_task_feature", None) is not None
    )


@contextmanager
def eval_mode(model: Model) -> Iterator[None]:
    """``model.eval()`` (transformed training inputs, as ``posterior`` uses), then the
    mode the model was in.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import eval_mode
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> model = SingleTaskGP(X, X)
        >>> with eval_mode(model):
        ...     inside = model.training
        >>> inside, model.training
        (False, True)
    """
    training = model.training
    model.eval()
    try:
        yield
    finally:
        if training:
            model.train()


def _leaf_covariance(model: Model) -> tuple[Tensor, Tensor, Tensor]:
    try:
        moments = observation_moments(model, covariance=True)
    except RuntimeError as error:
        if isinstance(model, KroneckerMultiTaskGP) and len(model.batch_shape):
            raise UnsupportedError(
                "a batched KroneckerMultiTaskGP cannot evaluate its own prior covariance "
                "in BoTorch 0.18 (its task covariance gets the wrong batch shape; its "
                "posterior and marginal likelihood fail the same way, upstream): use one "
                "KroneckerMultiTaskGP per batch element"
            ) from error
        raise
    return moments.covariance, moments.noise.to_dense(), moments.mean
