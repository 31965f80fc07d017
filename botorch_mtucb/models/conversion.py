r"""From a fitted BoTorch multi-output GP to a ``VectorValuedGP`` with the same posterior.

``fit_gpytorch_mll`` fits BoTorch's models; MT-KB's theory (paper 000, Theorems 1-2) and
the ``O(t^2)`` updates of ``VectorValuedGP`` need a fixed kernel.
``vector_valued_gp_from_model`` carries the fitted kernels, task covariances, constant
means and per-task noise variances over (read by ``read_multi_output_model``), so that
the converted model's posterior is the fitted model's and the theory applies to the
fitted hyperparameters.
"""

from __future__ import annotations

import torch
from botorch.models.model import Model
from botorch.models.multitask import MultiTaskGP
from gpytorch.distributions import MultivariateNormal
from linear_operator.operators import DiagLinearOperator
from torch import Tensor

from botorch_mtucb.models.gp_covariances import eval_mode
from botorch_mtucb.models.multi_output_data import MultiOutputData, read_multi_output_model
from botorch_mtucb.models.vector_valued_gp import VectorValuedGP
from botorch_mtucb.utils.checks import check_positive

_RTOL = 1e-6  # values of one task that differ by less than this (relative) are equal


def vector_valued_gp_from_model(
    model: Model, regularization: float | None = None
) -> VectorValuedGP:
    r"""A ``VectorValuedGP`` with a fitted BoTorch model's kernels, mean, noise and data.

    The multi-task kernel is ``Gamma(x, x') = sum_j k_j(x, x') B_j`` (paper 000,
    Section 2), read by ``read_multi_output_model``:

    * ``KroneckerMultiTaskGP``: the ICM kernel ``k_x(x, x') B`` of its
      ``MultitaskKernel``, full-vector data (``VectorValuedGP``'s eigen route, paper 000
      Section 3.3);
    * ``MultiTaskGP``: ``k_x(x, x') B`` with ``B`` its index kernel's covariance,
      task-indexed data (tasks ``0 .. n-1`` in the order of the sorted task values; all
      ``n`` tasks are outputs, whatever ``output_tasks`` says);
    * ``SingleTaskGP`` with ``m`` outputs, ``ModelListGP``: independent tasks
      ``sum_i k_i(x, x') e_i e_i^T``, full-vector data when the outputs share their
      training inputs, task-indexed otherwise.

    The converted model's posterior is the fitted model's (to round-off):

    * **Prior mean**: the model's constant mean of each task (``prior_mean``; a
      ``ConstantMean`` per output, ``MultitaskMean``), read per training observation
      and checked to be constant within each task; the posterior mean is
      ``c + G_t(x)^T (G_t + Lambda)^{-1} (Y_t - c)``.
    * **Noise**: the likelihood's noise variance of each task (``noise_variances``;
      per-task noise, BoTorch's default for every multi-output model, plus the shared
      noise of a ``MultitaskGaussianLikelihood``). ``regularization=eta`` replaces it
      by one ``eta`` for every task (the papers' setting; the posterior then differs
      from the model's when its noise differs).
    * **Outcome transform**: the converted model works in the model's outcome space: its
      ``train_Y`` are the model's transformed targets (e.g. standardized), its posterior
      is in those units. ``model.outcome_transform.untransform_posterior(posterior)``
      maps it back (exact for ``Standardize``); new observations for
      ``append_observations`` go through ``model.outcome_transform`` (in ``eval`` mode)
      first. Widths and norm bounds ``b`` refer to these units (and to ``f - c``).
    * **Inputs**: the user's. Each ``k_j`` applies the model's input transform
      (``ModelInputKernel``), so ``posterior(X)`` takes the ``X`` that
      ``model.posterior(X)`` takes (without the task column for a ``MultiTaskGP``).

    Args:
        model: A fitted, unbatched ``SingleTaskGP`` (one or several outputs),
            ``MultiTaskGP``, ``KroneckerMultiTaskGP`` or ``ModelListGP`` of them, with or
            without input and outcome transforms.
        regularization: One noise variance ``eta > 0`` for every task, instead of the
            likelihood's (``None``: the likelihood's, per task).

    Returns:
        A ``VectorValuedGP`` with ``model``'s number of tasks, kernel, prior mean, noise
        and training data.

    Raises:
        TypeError, ValueError: As ``read_multi_output_model`` (a model of another kind, a
            batched model, a kernel it cannot represent); ``ValueError`` for a prior mean
            that is not constant within a task (e.g. a ``LinearMean``), and, with
            ``regularization=None``, for noise that a variance per task cannot stand
            for: noise correlated between tasks (``MultitaskGaussianLikelihood(rank >
            0)``) or differing between the points of one task (a
            ``FixedNoiseGaussianLikelihood`` with unequal ``train_Yvar``).

    Example:
        >>> import torch
        >>> from botorch.models import KroneckerMultiTaskGP
        >>> from botorch_mtucb.models import VectorValuedGP, vector_valued_gp_from_model
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> model = KroneckerMultiTaskGP(X, torch.cat([X.sin(), X.cos()], -1))
        >>> model.likelihood.task_noises = torch.tensor([1e-3, 4e-3])  # per task
        >>> model.likelihood.noise = torch.tensor([1e-4])  # and the shared noise
        >>> converted = vector_valued_gp_from_model(model)
        >>> isinstance(converted, VectorValuedGP), converted.num_tasks
        (True, 2)
        >>> [round(v, 6) for v in converted.noise_variances.tolist()]  # task + shared
        [0.0011, 0.0041]
        >>> X_test = torch.rand(3, 1, dtype=torch.float64)
        >>> torch.allclose(converted.posterior(X_test).mean, model.posterior(X_test).mean)
        True
    """
    data = read_multi_output_model(model)
    name = data.model_name
    missing = _unobserved_tasks(data)
    probe_mean, probe_noise = _probe_tasks(model, missing, name)
    prior_mean = _task_constants(data, data.prior_mean, probe_mean, "prior mean")
    if regularization is None:
        if not data.noise_is_diagonal:
            raise ValueError(
                f"{name}'s likelihood correlates the noise of different tasks (a "
                "MultitaskGaussianLikelihood with rank > 0); VectorValuedGP takes one "
                "noise variance per task: use rank=0 or pass regularization"
            )
        variances = data.noise_covariance.diagonal()
        noise = {"noise_variances": _task_constants(data, variances, probe_noise, "noise")}
    else:
        noise = {"regularization": check_positive(regularization, "regularization")}
    return VectorValuedGP(
        data.train_X,
        data.train_Y,
        list(data.data_kernels),
        list(data.task_covariances),
        train_tasks=data.train_tasks,
        prior_mean=prior_mean,
        **noise,
    )


def _unobserved_tasks(data: MultiOutputData) -> list[int]:
    observed = set(data.observation_tasks.tolist())
    return [i for i in range(data.num_tasks) if i not in observed]


def _task_constants(
    data: MultiOutputData, values: Tensor, probed: dict[int, float], what: str
) -> Tensor:
    """One value per task from ``values`` of the scalar observations (``M``), checked to
    be the same within each task; ``probed`` gives the tasks without observations."""
    tasks = data.observation_tasks.to(values.device)
    constants = []
    for i in range(data.num_tasks):
        own = values[tasks == i]
        if own.numel() == 0:
            constants.append(probed[i])
            continue
        low, high = float(own.min()), float(own.max())
        if high - low > _RTOL * max(abs(low), abs(high)):
            kind = "heteroskedastic" if what == "noise" else "not constant"
            advice = "pass regularization" if what == "noise" else "use a ConstantMean"
            raise ValueError(
                f"{data.model_name}'s {what} differs between the training points of task "
                f"{i} (from {low:.3g} to {high:.3g}: {kind}); VectorValuedGP takes one "
                f"{what} value per task: {advice}"
            )
        constants.append(high)
    return torch.tensor(constants, dtype=torch.float64)


def _probe_tasks(
    model: Model, tasks: list[int], name: str
) -> tuple[dict[int, float], dict[int, float]]:
    """Prior mean and noise variance of ``tasks`` without training observations (a
    ``MultiTaskGP`` with ``all_tasks``): the model evaluated at its first training
    input with the task column set to each task, as its exact prediction does."""
    if not tasks:
        return {}, {}
    if not isinstance(model, MultiTaskGP):  # pragma: no cover - other models observe all
        raise ValueError(f"{name} has tasks without training observations: {tasks}")
    values = sorted(model._expected_task_values)
    with eval_mode(model), torch.no_grad():
        X = model.train_inputs[0][..., :1, :].repeat(len(tasks), 1)
        X[..., model._task_feature] = torch.tensor([values[i] for i in tasks]).to(X)
        prior = model.forward(X)
        zeros = torch.zeros_like(prior.mean)
        noise = model.likelihood(MultivariateNormal(zeros, DiagLinearOperator(zeros)), [X])
        means = prior.mean.reshape(-1).tolist()
        variances = noise.covariance_matrix.diagonal(dim1=-2, dim2=-1).reshape(-1).tolist()
    return dict(zip(tasks, means)), dict(zip(tasks, variances))
