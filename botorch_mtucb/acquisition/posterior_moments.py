"""Posterior moments of any BoTorch multi-output model at ``batch x 1 x d`` candidates.

The UCBs of the package read the posterior mean ``mu(x)`` (``n`` outputs), the
``n x n`` task covariance ``Gamma(x, x)`` or one output's standard deviation. BoTorch's
models give them in different ways; this module evens them out:

- ``KroneckerMultiTaskGP.posterior`` keeps only the per-task variances (its
  ``MultitaskGPPosterior`` drops the cross-task covariance), its variances come from an
  eigen-decomposition that can be off by ``1e-5`` relative, and its mean has no
  gradient for batches of ``b > 1`` candidates (``linear_operator``'s ``Matmul``
  backward multiplies a ``b x n`` gradient with a batched Kronecker operator whose
  right-hand side is one vector: "The size of tensor a (4) must match ..."; for
  ``b = n`` the shapes match by chance and the gradient is silently wrong). Its exact
  posterior is taken instead through GPyTorch's ``ExactGP.__call__`` (the prediction
  strategy every other exact GP uses), with its input and outcome transforms.
- A multi-output (batched) ``SingleTaskGP`` fails for one output index ("Must provide
  at least 2 MVNs to form a MultitaskMultivariateNormal"), and ``MultiTaskGP`` reads
  ``output_indices`` as task *values*: one output is selected from the posterior over
  all outputs instead (``task`` is always an index into the outputs).
- ``posterior_transform``: a ``ScalarizedPosteriorTransform`` (affine,
  ``w^T f(x) + offset``: what Ax passes, e.g. ``weights=-1`` for a minimization),
  applied to the posterior over all outputs.
"""

from __future__ import annotations

import torch
from botorch.acquisition.objective import PosteriorTransform, ScalarizedPosteriorTransform
from botorch.exceptions import UnsupportedError
from botorch.models import KroneckerMultiTaskGP, ModelListGP
from botorch.models.model import Model
from botorch.models.utils.assorted import gpt_posterior_settings
from botorch.posteriors import GPyTorchPosterior, Posterior
from torch import Tensor

from botorch_mtucb.models.base import FixedKernelMultiTaskModel


def check_posterior_transform(
    posterior_transform: object, num_outputs: int, outputs: str = "the model's outputs"
) -> ScalarizedPosteriorTransform | None:
    """``None`` or a ``ScalarizedPosteriorTransform`` with ``num_outputs`` weights.

    Args:
        posterior_transform: The acquisition's ``posterior_transform`` argument.
        num_outputs: The number of outputs it acts on.
        outputs: What those outputs are (for the error message).

    Returns:
        ``posterior_transform`` unchanged.

    Raises:
        UnsupportedError: For another BoTorch ``PosteriorTransform`` (the confidence
            bounds stay valid only under an affine map of the outputs).
        TypeError: For anything that is not a ``PosteriorTransform``.
        ValueError: If its weights do not have ``num_outputs`` entries, or its weights or
            offset are not finite (``check_transform_values``).

    Example:
        >>> import torch
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch_mtucb.acquisition.posterior_moments import check_posterior_transform
        >>> minimize = ScalarizedPosteriorTransform(weights=-torch.ones(1))
        >>> check_posterior_transform(minimize, num_outputs=1) is minimize
        True
    """
    if isinstance(posterior_transform, ScalarizedPosteriorTransform):
        size = posterior_transform.weights.numel()
        if size != num_outputs:
            raise ValueError(
                f"posterior_transform must have {num_outputs} weights (it acts on {outputs}; "
                f"e.g. weights=-torch.ones({num_outputs}) for a minimization), got {size}"
            )
        check_transform_values(posterior_transform)
    if posterior_transform is None or isinstance(posterior_transform, ScalarizedPosteriorTransform):
        return posterior_transform
    if isinstance(posterior_transform, PosteriorTransform):
        raise UnsupportedError(
            "posterior_transform must be a ScalarizedPosteriorTransform (an affine map "
            "w^T f + offset, under which the confidence bounds stay valid), got "
            f"{type(posterior_transform).__name__}"
        )
    raise TypeError(
        "posterior_transform must be None or a botorch ScalarizedPosteriorTransform, got "
        f"{type(posterior_transform).__name__}"
    )


def check_single_output(model: Model, name: str) -> None:
    """A model read by a single-output route has one output.

    Raises:
        ValueError: Naming the ways to reach one output of a multi-output model.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition.posterior_moments import check_single_output
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> try:
        ...     check_single_output(SingleTaskGP(X, torch.cat([X, -X], -1)), "model")
        ... except ValueError as error:
        ...     print(str(error)[:54])
        model must have one output, got a SingleTaskGP with 2
    """
    if model.num_outputs != 1:
        raise ValueError(
            f"{name} must have one output, got a {type(model).__name__} with "
            f"{model.num_outputs} outputs: pass posterior_transform="
            f"ScalarizedPosteriorTransform(weights) with {model.num_outputs} weights (a "
            "multi-output SingleTaskGP: w^T f is one scalar GP), a MultiTaskGP with "
            "output_tasks=[i], or one model per output"
        )


def check_transform_values(posterior_transform: ScalarizedPosteriorTransform) -> None:
    """The weights and the offset of a ``ScalarizedPosteriorTransform`` are finite real
    numbers (a NaN weight would give NaN bounds silently).

    Raises:
        TypeError: For boolean or complex weights.
        ValueError: For NaN or inf weights or offset, naming them.

    Example:
        >>> import torch
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch_mtucb.acquisition.posterior_moments import check_transform_values
        >>> try:
        ...     check_transform_values(ScalarizedPosteriorTransform(torch.tensor([float("nan")])))
        ... except ValueError as error:
        ...     print(str(error)[:56])
        posterior_transform's weights must be finite, got tensor
    """
    weights = posterior_transform.weights
    if weights.dtype == torch.bool or weights.is_complex():
        raise TypeError(
            f"posterior_transform's weights must be real numbers, got dtype {weights.dtype}"
        )
    if not bool(torch.isfinite(weights).all()):
        raise ValueError(f"posterior_transform's weights must be finite, got {weights}")
    offset = posterior_transform.offset
    if not bool(torch.isfinite(torch.as_tensor(offset, dtype=torch.float64)).all()):
        raise ValueError(f"posterior_transform's offset must be finite, got {offset}")


def model_posterior(
    model: Model, X: Tensor, posterior_transform: PosteriorTransform | None = None
) -> Posterior:
    r"""The posterior over all outputs of ``model`` at ``X``, cross-output covariance
    included, then ``posterior_transform`` (if given).

    ``model.posterior(X)`` except for ``KroneckerMultiTaskGP`` (module docstring).

    Example:
        >>> import torch
        >>> from botorch.models import KroneckerMultiTaskGP
        >>> from botorch_mtucb.acquisition.posterior_moments import model_posterior
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = KroneckerMultiTaskGP(train_X, torch.cat([train_X, -train_X], -1))
        >>> X = torch.rand(4, 1, 2, dtype=torch.float64, requires_grad=True)
        >>> posterior = model_posterior(model, X)
        >>> posterior.distribution.covariance_matrix.shape  # 4 tasks, cross terms kept
        torch.Size([4, 4, 4])
        >>> posterior.mean.sum().backward()  # BoTorch's own posterior fails here
    """
    if isinstance(model, KroneckerMultiTaskGP):
        model.eval()
        with gpt_posterior_settings():
            posterior = GPyTorchPosterior(model(model.transform_inputs(X)))
        if hasattr(model, "outcome_transform"):
            posterior = model.outcome_transform.untransform_posterior(posterior, X=X)
    else:
        posterior = model.posterior(X)
    if posterior_transform is not None:
        posterior = posterior_transform(posterior)
    return posterior


def posterior_mean_and_covariance(
    model: Model, X: Tensor, posterior_transform: PosteriorTransform | None = None
) -> tuple[Tensor, Tensor]:
    """Posterior mean ``b x n`` and task covariance ``b x n x n`` at ``X`` (``b x 1 x d``).

    Works for any BoTorch model whose posterior has ``n`` outputs: the package's models,
    ``SingleTaskGP`` (``n`` outputs: a diagonal covariance), ``MultiTaskGP``,
    ``KroneckerMultiTaskGP`` and ``ModelListGP`` (diagonal). With a
    ``ScalarizedPosteriorTransform``, ``n = 1``: mean ``w^T mu + offset`` and variance
    ``w^T Gamma w``. A posterior without a ``distribution`` falls back to its diagonal
    ``variance``.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.acquisition.scalarized_ucb import posterior_mean_and_covariance
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> gps = [SingleTaskGP(train_X, train_X[:, i : i + 1].sin()) for i in range(2)]
        >>> mean, covariance = posterior_mean_and_covariance(
        ...     ModelListGP(*gps), torch.rand(4, 1, 2, dtype=torch.float64))
        >>> mean.shape, covariance.shape  # independent outputs: diagonal covariances
        (torch.Size([4, 2]), torch.Size([4, 2, 2]))
    """
    if (
        isinstance(model, FixedKernelMultiTaskModel)
        and posterior_transform is None
        and isinstance(X, Tensor)
        and X.dim() >= 2
        and X.shape[-2] == 1
    ):  # the package's models: the posterior's numbers without building it
        return model.point_moments(X)
    posterior = model_posterior(model, X, posterior_transform)
    mean = posterior.mean.squeeze(-2)  # b x n
    distribution = getattr(posterior, "distribution", None)
    if distribution is not None and hasattr(distribution, "covariance_matrix"):
        covariance = distribution.covariance_matrix  # b x n x n since q = 1
        if covariance.shape[-1] != mean.shape[-1]:
            covariance = torch.diag_embed(posterior.variance.squeeze(-2))
    else:
        covariance = torch.diag_embed(posterior.variance.squeeze(-2))
    return mean, covariance


def task_mean_and_variance(
    model: Model, X: Tensor, task: int, posterior_transform: PosteriorTransform | None = None
) -> tuple[Tensor, Tensor]:
    r"""Mean and variance (each ``batch``) of output ``task`` at ``X`` (``batch x 1 x d``).

    With a ``ScalarizedPosteriorTransform`` of one weight ``w`` (the task's output is
    one outcome): ``w mu + offset`` and ``w^2 sigma^2``.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.acquisition.posterior_moments import task_mean_and_variance
        >>> train_X = torch.rand(8, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(train_X, torch.cat([train_X.sin(), train_X.cos()], -1))
        >>> mean, variance = task_mean_and_variance(model, torch.rand(5, 1, 2,
        ...                                         dtype=torch.float64), task=3)
        >>> mean.shape, variance.shape
        (torch.Size([5]), torch.Size([5]))
    """
    batch_shape = X.shape[:-2]
    if isinstance(model, (FixedKernelMultiTaskModel, ModelListGP)):
        posterior = model.posterior(X, output_indices=[task])
        mean, variance = posterior.mean, posterior.variance
    else:
        posterior = model_posterior(model, X)
        mean, variance = posterior.mean[..., task], posterior.variance[..., task]
    mean, variance = mean.reshape(batch_shape), variance.reshape(batch_shape)
    if posterior_transform is not None:
        weight = posterior_transform.weights.to(mean).reshape(())
        mean = weight * mean + posterior_transform.offset
        variance = weight**2 * variance
    return mean, variance
