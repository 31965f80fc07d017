"""Pending points for the package's UCB acquisitions: GP-BUCB's hallucinated observations.

Source: T. Desautels, A. Krause, J. W. Burdick, "Parallelizing exploration-exploitation
tradeoffs in Gaussian process bandit optimization", JMLR 15 (2014) 3873-3923, the
GP-BUCB algorithm (paper 000 cites it for batches of inputs). A point chosen but not yet evaluated is "hallucinated": it is
added to the data with its posterior mean as observation. The posterior mean is then
unchanged and only the posterior variance shrinks (a GP's posterior covariance does not
depend on the observed values), so the next point of a batch is pushed away from the
pending ones. ``optimize_acqf(q=k, sequential=True)`` and ``optimize_acqf_discrete(q=k)``
pass the points chosen so far through ``set_X_pending``.
"""

from __future__ import annotations

import copy
import itertools

import torch
from botorch.exceptions import UnsupportedError
from botorch.models import KroneckerMultiTaskGP, ModelListGP
from botorch.models.gpytorch import MultiTaskGPyTorchModel
from botorch.models.model import Model
from botorch.models.utils.assorted import _make_X_full
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood
from torch import Tensor

from botorch_mtucb.acquisition.candidates import candidate_dimension
from botorch_mtucb.models.base import FixedKernelMultiTaskModel
from botorch_mtucb.utils.checks import as_int, check_X_pending


def condition_on_pending(model: Model, X_pending: Tensor | None, task: int | None = None) -> Model:
    r"""The GP-BUCB model: ``model`` conditioned on ``X_pending`` observed at their mean.

    Each pending point is observed as the training data of ``model`` are: the full
    output vector for models trained on full vectors (a multi-output ``SingleTaskGP``,
    ``KroneckerMultiTaskGP``, ``ModelListGP``, a full-vector ``VectorValuedGP``), one
    row per task for task-indexed models (``MultiTaskGP``, a task-indexed
    ``VectorValuedGP``): all output tasks if ``task`` is ``None``, else only task
    ``task`` (an output index). A ``MultiTaskGP`` also takes ``m x (d + 1)`` pending
    points that carry their task feature; a ``ModelListGP`` with ``task`` conditions
    only the sub-model holding it (the others are independent of it). The observations are
    ``mu_t(x)`` (posterior mean, in the user's outcome units: BoTorch's
    ``condition_on_observations`` applies the outcome transform itself) with the
    likelihood's noise; fixed-noise likelihoods get their mean training noise per
    output (as BoTorch's ``observation_noise=True``). Then ``mu`` is unchanged and

    ``sigma_pending^2(x) = k_t(x, x) - k_t(x, X_p) (K_t(X_p, X_p) + noise I)^{-1} k_t(X_p, x)``

    (Desautels et al. 2014, JMLR 15: 3873-3923, GP-BUCB). ``model`` is not modified.

    Args:
        model: A BoTorch model that implements ``condition_on_observations``.
        X_pending: ``None``, or ``m x d`` points (cast to the model's dtype/device).
        task: For task-indexed models, the task whose evaluations are pending.

    Returns:
        ``model`` itself if ``X_pending`` is ``None`` or empty, else a new model.

    Raises:
        TypeError, ValueError: For a bad ``X_pending`` (see ``check_X_pending``) or
            ``task``.
        UnsupportedError: If ``model`` cannot be conditioned on observations
            (BoTorch's error is chained).

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition.pending import condition_on_pending
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(train_X, train_X.sum(-1, keepdim=True).sin())
        >>> X_pending = torch.rand(2, 2, dtype=torch.float64)
        >>> conditioned = condition_on_pending(model, X_pending)
        >>> x = torch.rand(5, 1, 2, dtype=torch.float64)
        >>> before, after = model.posterior(x), conditioned.posterior(x)
        >>> torch.allclose(before.mean, after.mean), bool((after.variance < before.variance).all())
        (True, True)
    """
    X_pending = check_X_pending(X_pending)
    if X_pending is None or X_pending.shape[0] == 0:
        return model
    if not isinstance(model, Model):
        raise TypeError(f"model must be a BoTorch Model, got {type(model).__name__}")
    if task is not None:
        task = as_int(task, "task", minimum=0)
        if task >= model.num_outputs:
            raise ValueError(f"task must lie in [0, {model.num_outputs - 1}], got {task}")
    reference = next(itertools.chain(model.parameters(), model.buffers()), None)
    if reference is not None:
        X_pending = X_pending.to(dtype=reference.dtype, device=reference.device)
    try:
        return _hallucinate(model, X_pending, task)
    except (NotImplementedError, RuntimeError, AttributeError) as error:
        raise UnsupportedError(
            f"{type(model).__name__} cannot be conditioned on pending points (GP-BUCB needs "
            f"condition_on_observations): {error}. Use q = 1 without X_pending, or a model "
            "that implements condition_on_observations (SingleTaskGP, MultiTaskGP, "
            "KroneckerMultiTaskGP, ModelListGP, VectorValuedGP)."
        ) from error


def _hallucinate(model: Model, X: Tensor, task: int | None) -> Model:
    """Dispatch on the kind of data ``model`` is trained on (see ``condition_on_pending``)."""
    if isinstance(model, ModelListGP):
        return _hallucinate_model_list(model, X, task)
    if isinstance(model, FixedKernelMultiTaskModel) and not model._full_vector:
        tasks = range(model.num_outputs) if task is None else [task]
        rows = X.repeat(len(tasks), 1)
        indices = torch.tensor(tasks, device=X.device).repeat_interleave(X.shape[0])
        with torch.no_grad():
            mean = model.posterior(X).mean[:, list(tasks)].T.reshape(-1, 1)  # task-major
        return model.condition_on_observations(rows, mean, train_tasks=indices)
    if isinstance(model, MultiTaskGPyTorchModel):
        return _hallucinate_long_format(model, X, task)
    if isinstance(model, KroneckerMultiTaskGP):
        return _hallucinate_kronecker(model, X)
    with torch.no_grad():
        mean = model.posterior(X).mean  # batch_shape x m x n, outcome units
    X = X.expand(*mean.shape[:-1], X.shape[-1])
    return model.condition_on_observations(X, mean, **_fixed_noise(model, mean))


def _hallucinate_model_list(model: ModelListGP, X: Tensor, task: int | None) -> ModelListGP:
    """Condition each sub-model on its outputs (only the one holding ``task`` if given)."""
    conditioned, first = [], 0
    for sub_model in model.models:
        last = first + sub_model.num_outputs
        if task is None or first <= task < last:
            local = None if task is None else task - first
            sub_model = condition_on_pending(sub_model, X, local)
        conditioned.append(sub_model)
        first = last
    return ModelListGP(*conditioned)


def _hallucinate_long_format(model: MultiTaskGPyTorchModel, X: Tensor, task: int | None) -> Model:
    """``MultiTaskGP``: one row ``(x, task value)`` per pending point and output task."""
    if X.shape[-1] == model.num_non_task_features:
        outputs = model._output_tasks if task is None else [model._output_tasks[task]]
        X = _make_X_full(X, output_indices=list(outputs), tf=model._task_feature)
    with torch.no_grad():
        mean = model.posterior(X).mean  # (m k) x 1: X carries the task feature
    noise = None
    if isinstance(model.likelihood, FixedNoiseGaussianLikelihood):
        train_tasks = model.train_inputs[0][..., model._task_feature]
        pending_tasks = model.transform_inputs(X)[..., model._task_feature]
        task_noise = {
            float(value): model.likelihood.noise[..., train_tasks == value].mean()
            for value in pending_tasks.unique()
        }
        noise = torch.stack([task_noise[float(value)] for value in pending_tasks])[:, None]
    return model.condition_on_observations(X, mean, **({} if noise is None else {"noise": noise}))


def _hallucinate_kronecker(model: KroneckerMultiTaskGP, X: Tensor) -> KroneckerMultiTaskGP:
    """A copy of ``model`` with ``(X, mu(X))`` appended to its training data.

    GPyTorch's ``get_fantasy_model`` (behind ``condition_on_observations``) cannot
    condition multitask likelihoods (its fantasy update mixes ``m x n`` targets with the
    flattened ``(m n)`` mean); for an exact GP with fixed hyperparameters, appending the
    data is the same conditioning.
    """
    with torch.no_grad():
        mean = model.posterior(X).mean  # m x n, outcome units (model now in eval mode)
        if hasattr(model, "outcome_transform"):
            mean, _ = model.outcome_transform(mean, X=X)  # eval mode: the fitted stats
    conditioned = copy.deepcopy(model)
    conditioned.train()  # original inputs, caches dropped
    train_X, train_Y = conditioned.train_inputs[0], conditioned.train_targets
    batch_shape = train_X.shape[:-2]
    conditioned.set_train_data(
        inputs=torch.cat([train_X, X.expand(*batch_shape, *X.shape)], dim=-2),
        targets=torch.cat([train_Y, mean.expand(*batch_shape, *mean.shape[-2:])], dim=-2),
        strict=False,
    )
    return conditioned.eval()


def _leaves(model: Model) -> list[Model]:
    """The models of a (nested) ``ModelListGP``, or ``[model]``."""
    if isinstance(model, ModelListGP):
        return [leaf for member in model.models for leaf in _leaves(member)]
    return [model]


def _fixed_noise(model: Model, mean: Tensor) -> dict[str, Tensor]:
    """``{"noise": ...}`` for a fixed-noise likelihood (its mean training noise per
    output, in the model's transformed outcome units), else ``{}``."""
    likelihood = getattr(model, "likelihood", None)
    if not isinstance(likelihood, FixedNoiseGaussianLikelihood):
        return {}
    noise = likelihood.noise.mean(dim=-1)  # (batch x) n for n > 1 outputs, else batch
    if model.num_outputs == 1:
        noise = noise.unsqueeze(-1)
    return {"noise": noise.unsqueeze(-2).expand(mean.shape)}


class PendingPointsMixin:
    r"""``X_pending`` / ``set_X_pending`` for the package's analytic UCBs (GP-BUCB).

    ``set_X_pending(X)`` checks ``X`` (``check_X_pending``) and keeps
    ``self.pending_model = condition_on_pending(self.model, X, task)`` (``None`` without
    pending points; ``task``: the acquisition's ``task`` attribute, if any). The
    acquisition then takes its mean from ``self.model`` and its standard deviation from
    ``self.pending_model`` (GP-BUCB, Desautels et al. 2014). The model is
    conditioned when ``set_X_pending`` is called: call it again after changing
    ``self.model`` in place.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition import TaskConditionedUCB
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(train_X, train_X.sum(-1, keepdim=True))
        >>> acqf = TaskConditionedUCB(model, task=0, width=2.0)
        >>> x = torch.rand(1, 1, 2, dtype=torch.float64)
        >>> before = acqf(x)
        >>> acqf.set_X_pending(x[0])  # x itself is pending: only its variance shrinks
        >>> bool(acqf(x) < before), acqf.X_pending.shape
        (True, torch.Size([1, 2]))
    """

    X_pending: Tensor | None
    pending_model: Model | None

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        """Set (or clear, with ``None``) the ``m x d`` pending points.

        Raises:
            TypeError, ValueError: For a bad ``X_pending`` (``check_X_pending``).
            UnsupportedError: If the model cannot be conditioned on observations.
        """
        # a MultiTaskGP also takes pending points with their task column (m x (d + 1))
        takes_task_column = any(
            isinstance(leaf, MultiTaskGPyTorchModel) for leaf in _leaves(self.model)
        )
        dim = None if takes_task_column else candidate_dimension(self)
        X_pending = check_X_pending(X_pending, dim)
        conditioned = condition_on_pending(self.model, X_pending, getattr(self, "task", None))
        self.X_pending = X_pending
        self.pending_model = None if conditioned is self.model else conditioned
