r"""From a fitted BoTorch multi-output GP to a ``VectorValuedGP`` with the same kernels.

``fit_gpytorch_mll`` fits BoTorch's models; MT-KB's theory (paper 000, Theorems 1-2) and
the ``O(t^2)`` updates of ``VectorValuedGP`` need a fixed kernel and one noise variance
``eta``. ``vector_valued_gp_from_model`` carries the fitted kernels, task covariances and
noise over (read by ``read_multi_output_model``), so that the theory applies to fitted
hyperparameters.
"""

from __future__ import annotations

import warnings

from botorch.exceptions.warnings import BotorchWarning
from botorch.models.model import Model

from botorch_mtucb.models.multi_output_data import MultiOutputData, read_multi_output_model
from botorch_mtucb.models.vector_valued_gp import VectorValuedGP
from botorch_mtucb.utils.checks import check_positive


def vector_valued_gp_from_model(
    model: Model, regularization: float | None = None
) -> VectorValuedGP:
    r"""A ``VectorValuedGP`` with a fitted BoTorch model's kernels, noise and data.

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

    What differs from the BoTorch model:

    * **Prior mean**: zero (the theory's) instead of BoTorch's constant mean ``c``: the
      posteriors agree exactly when ``c = 0``; with ``Standardize`` the targets have mean
      0 and the fitted ``c`` is usually small.
    * **Outcome transform**: the converted model works in the model's outcome space: its
      ``train_Y`` are the model's transformed targets (e.g. standardized), its posterior
      is in those units. ``model.outcome_transform.untransform_posterior(posterior)``
      maps it back (exact for ``Standardize``); new observations for
      ``append_observations`` go through ``model.outcome_transform`` (in ``eval`` mode)
      first. Widths and norm bounds ``b`` refer to these units.
    * **Inputs**: the user's. Each ``k_j`` applies the model's input transform
      (``ModelInputKernel``), so ``posterior(X)`` takes the ``X`` that
      ``model.posterior(X)`` takes (without the task column for a ``MultiTaskGP``).
    * **Noise**: one ``eta`` for all observations. When the likelihood has one noise
      variance it is ``eta``. When the noise variance differs *between tasks* only
      (BoTorch's default for every multi-output model), ``eta`` is its **mean over the
      scalar training observations** and a ``BotorchWarning`` says so; the posterior then
      differs from BoTorch's. Pass ``regularization`` to choose ``eta`` yourself.

    Args:
        model: A fitted, unbatched ``SingleTaskGP`` (one or several outputs),
            ``MultiTaskGP``, ``KroneckerMultiTaskGP`` or ``ModelListGP`` of them, with or
            without input and outcome transforms.
        regularization: ``eta > 0`` to use instead of the likelihood's noise
            (``None``: from the likelihood, see above).

    Returns:
        A ``VectorValuedGP`` with ``model``'s number of tasks, kernel and training data.

    Raises:
        TypeError, ValueError: As ``read_multi_output_model`` (a model of another kind, a
            batched model, a kernel it cannot represent), and, with
            ``regularization=None``, ``ValueError`` for noise that one ``eta`` cannot stand
            for even on average: noise correlated between tasks
            (``MultitaskGaussianLikelihood(rank > 0)``) or differing between the points
            of one task (a ``FixedNoiseGaussianLikelihood`` with unequal ``train_Yvar``).

    Example:
        >>> import torch
        >>> from botorch.models import KroneckerMultiTaskGP
        >>> from botorch_mtucb.models import VectorValuedGP, vector_valued_gp_from_model
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> model = KroneckerMultiTaskGP(X, torch.cat([X.sin(), X.cos()], -1))
        >>> model.likelihood.task_noises = torch.tensor([1e-3, 1e-3])  # one noise level
        >>> model.likelihood.noise = torch.tensor([1e-4])  # and the shared noise
        >>> converted = vector_valued_gp_from_model(model)
        >>> isinstance(converted, VectorValuedGP), converted.num_tasks
        (True, 2)
        >>> round(converted.regularization, 6)  # task noise + global noise
        0.0011
    """
    data = read_multi_output_model(model)
    if regularization is None:
        eta = _common_noise_variance(data)
    else:
        eta = check_positive(regularization, "regularization")
    return VectorValuedGP(
        data.train_X,
        data.train_Y,
        list(data.data_kernels),
        list(data.task_covariances),
        eta,
        train_tasks=data.train_tasks,
    )


def _common_noise_variance(data: MultiOutputData) -> float:
    """The one noise variance of the scalar observations (their mean if only the tasks
    differ)."""
    name = data.model_name
    if not data.noise_is_diagonal:
        raise ValueError(
            f"{name}'s likelihood correlates the noise of different tasks (a "
            "MultitaskGaussianLikelihood with rank > 0); VectorValuedGP takes one noise "
            "variance for independent noise: use rank=0 or pass regularization"
        )
    variances = data.noise_covariance.diagonal()
    if variances.numel() == 0:
        raise ValueError(f"{name} has no training data, so no noise variance: pass regularization")
    tasks = data.observation_tasks
    rtol = 1e-6
    for i in range(data.num_tasks):
        own = variances[tasks == i]
        if own.numel() and float(own.max() - own.min()) > rtol * float(own.max()):
            raise ValueError(
                f"{name}'s noise variance differs between the training points of task {i} "
                f"(from {float(own.min()):.3g} to {float(own.max()):.3g}: heteroskedastic); "
                "VectorValuedGP takes one noise variance: pass regularization"
            )
    low, high = float(variances.min()), float(variances.max())
    if high - low <= rtol * high:
        return high
    eta = float(variances.mean())
    warnings.warn(
        f"{name}'s noise variance differs between tasks (from {low:.3g} to {high:.3g}); "
        f"VectorValuedGP takes one: using their mean over the training observations, "
        f"eta = {eta:.3g}, so its posterior differs from the model's. Pass regularization "
        "to choose eta",
        BotorchWarning,
        stacklevel=3,
    )
    return eta
