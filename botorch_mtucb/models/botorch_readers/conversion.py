r"""From a fitted BoTorch multi-output GP to the arguments of a ``VectorValuedGP``.

``fit_gpytorch_mll`` fits BoTorch's models; MT-KB's theory (paper 000, Theorems 1-2) and
the ``O(t^2)`` updates of ``VectorValuedGP`` need a fixed kernel.
``vector_valued_gp_arguments`` reads the fitted kernels, task covariances, constant
means and per-task noise variances (``read_multi_output_model``, ``task_constants``), so
that ``VectorValuedGP.from_model`` (the public entry point) builds a model whose
posterior is the fitted model's and the theory applies to the fitted hyperparameters.
"""

from __future__ import annotations

from typing import Any

from botorch.models.model import Model

from botorch_mtucb.models.botorch_readers.moments import task_constants
from botorch_mtucb.models.botorch_readers.multi_output import read_multi_output_model
from botorch_mtucb.utils.checks import check_positive


def vector_valued_gp_arguments(model: Model, regularization: float | None = None) -> dict[str, Any]:
    r"""The keyword arguments of ``VectorValuedGP`` for a fitted BoTorch model: its
    data, kernels, task covariances, constant prior mean per task and noise variance
    per task (or ``regularization``). ``VectorValuedGP.from_model`` documents the models
    accepted and what is carried over.

    Raises:
        TypeError, ValueError: As ``VectorValuedGP.from_model``.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import vector_valued_gp_arguments
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> gp = SingleTaskGP(X, torch.cat([X.sin(), X.cos()], -1), outcome_transform=None)
        >>> arguments = vector_valued_gp_arguments(gp)
        >>> arguments["train_Y"].shape, len(arguments["data_kernel"])  # two independent tasks
        (torch.Size([6, 2]), 2)
    """
    data = read_multi_output_model(model)
    name, tasks, n = data.model_name, data.observation_tasks, data.num_tasks
    prior_mean = task_constants(model, data.prior_mean, tasks, n, "prior mean", name)
    if regularization is None:
        if not data.noise_is_diagonal:
            raise ValueError(
                f"{name}'s likelihood correlates the noise of different tasks (a "
                "MultitaskGaussianLikelihood with rank > 0); VectorValuedGP takes one "
                "noise variance per task: use rank=0 or pass regularization"
            )
        variances = data.noise_covariance.diagonal()
        noise = {"noise_variances": task_constants(model, variances, tasks, n, "noise", name)}
    else:
        noise = {"regularization": check_positive(regularization, "regularization")}
    return {
        "train_X": data.train_X,
        "train_Y": data.train_Y,
        "data_kernel": list(data.data_kernels),
        "task_covariance": list(data.task_covariances),
        "train_tasks": data.train_tasks,
        "prior_mean": prior_mean,
        **noise,
    }
