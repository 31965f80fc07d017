r"""The data, kernel, noise and transforms of a fitted single-output exact BoTorch GP.

A confidence bound built from a BoTorch model works in the model's own space: inputs
after its input transform (``Normalize``, ``Warp``, ...), outcomes after its outcome
transform (``Standardize``). ``single_output_data`` reads that space from a fitted
``SingleTaskGP`` (or any unbatched single-output ``ExactGP`` of BoTorch):

* ``train_X``: the training inputs as the model sees them. In ``eval`` mode BoTorch
  stores them transformed (``Model._set_transformed_inputs``); in ``train`` mode it
  stores the originals, and this module applies ``input_transform.preprocess_transform``
  itself, exactly as ``eval()`` would (the model's mode is left as it is);
* ``train_Y``: the outcome-transformed targets (``model.train_targets``), and the
  constant of the prior mean (``ConstantMean``; 0 for ``ZeroMean``);
* the kernel (``covar_module``, used as given: paper 002 takes it as fixed);
* the noise variance per training point in transformed units (``train_Yvar / std^2``
  for a ``FixedNoiseGaussianLikelihood``, the learned homoskedastic noise otherwise);
* the affine map of the outcome transform, ``y = outcome_shift + outcome_scale *
  y_tilde`` (``Standardize``: ``y = mean + std * y_tilde``), so that a bound in the
  transformed units maps back to the user's units exactly.

``output_data`` returns one ``SingleOutputData`` per output of a ``ModelListGP`` or of
a batched multi-output ``SingleTaskGP`` (for the widths, which need one Gram matrix and
one noise level per output).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
from botorch.models.model import Model
from botorch.models.model_list_gp_regression import ModelListGP
from botorch.models.multitask import MultiTaskGP
from botorch.models.transforms.outcome import ChainedOutcomeTransform, Standardize
from gpytorch.kernels import Kernel
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood, GaussianLikelihood
from gpytorch.likelihoods.noise_models import HomoskedasticNoise
from gpytorch.means import ConstantMean, ZeroMean
from gpytorch.models import ExactGP
from gpytorch.utils.warnings import GPInputWarning
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.models.botorch_readers.moments import observation_moments

_ACCEPTED = (
    "a fitted single-output exact GP of BoTorch (e.g. SingleTaskGP, with or without "
    "outcome and input transforms, learned or fixed noise)"
)


@dataclass(frozen=True)
class SingleOutputData:
    r"""One output of a fitted exact GP, in the model's transformed space.

    Attributes:
        train_X: ``t x d'`` training inputs after the input transform (detached).
        train_Y: ``t x 1`` outcome-transformed targets (detached).
        prior_mean: The constant of the prior mean (transformed units; 0 for
            ``ZeroMean``).
        kernel: The model's ``covar_module`` (not copied; batched for one output of a
            batched multi-output model, see ``output_index``).
        noise_variance: ``t`` noise variances (transformed units).
        fixed_noise: Whether the noise is given (``train_Yvar``) rather than learned.
        input_transform: The model's input transform (``None`` if it has none).
        outcome_shift: ``a`` of ``y = a + b y_tilde`` (user units).
        outcome_scale: ``b != 0`` of ``y = a + b y_tilde``.
        input_dim: ``d``, the number of columns of the user's inputs.
        model_name: The model's class name (for error messages).
        output_index: For one output of a batched multi-output model, its position in
            the kernel's batch; ``None`` otherwise.
        learned_noise_variance: The likelihood's homoskedastic noise variance
            (transformed units; ``None`` for fixed noise), known without training data.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import single_output_data
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> data = single_output_data(SingleTaskGP(X, 3.0 + X.sum(-1, keepdim=True)))
        >>> data.num_observations, data.gram().shape
        (6, torch.Size([6, 6]))
        >>> bool(torch.allclose(data.untransform(data.train_Y), 3.0 + X.sum(-1, keepdim=True)))
        True
    """

    train_X: Tensor
    train_Y: Tensor
    prior_mean: float
    kernel: Kernel
    noise_variance: Tensor
    fixed_noise: bool
    input_transform: Module | None
    outcome_shift: float
    outcome_scale: float
    input_dim: int
    model_name: str
    output_index: int | None = None
    learned_noise_variance: float | None = None

    @property
    def num_observations(self) -> int:
        """``t``."""
        return self.train_X.shape[-2]

    @property
    def centered_Y(self) -> Tensor:
        """``train_Y - prior_mean`` (``t x 1``): the data of a zero-mean bound."""
        return self.train_Y - self.prior_mean

    def gram(self, X1: Tensor | None = None, X2: Tensor | None = None) -> Tensor:
        """``k(X1, X2)`` in the model's space (default: the training inputs), dense and
        detached, in the dtype of the inputs."""
        X1 = self.train_X if X1 is None else X1
        X2 = X1 if X2 is None else X2
        with torch.no_grad():
            values = self.kernel(X1, X2).to_dense()
        return values if self.output_index is None else values[..., self.output_index, :, :]

    def homoskedastic_noise_variance(self) -> float:
        """The single noise variance (transformed units) of a homoskedastic model.

        Raises:
            ValueError: If the per-point noise variances differ (a fixed-noise model
                with unequal ``train_Yvar``).
        """
        noise = self.noise_variance
        if noise.numel() == 0:
            raise ValueError(f"{self.model_name} has no training data, so no noise level")
        low, high = float(noise.min()), float(noise.max())
        if high > low * (1.0 + 1e-6):
            raise ValueError(
                f"{self.model_name} has heteroskedastic noise (fixed train_Yvar between "
                f"{low:.3g} and {high:.3g} in transformed units); this width needs one "
                "noise variance: give equal train_Yvar, use a learned homoskedastic noise, "
                "or pass noise_std"
            )
        return high

    def largest_noise_variance(self) -> float:
        """The largest noise variance of the training points (transformed units): a
        sub-Gaussian level valid for every point; without training points, the learned
        homoskedastic noise variance.

        Raises:
            ValueError: For fixed noise (``train_Yvar``) and no training points, or a
                NaN/inf/negative noise variance.

        Example:
            >>> import torch
            >>> from botorch.models import SingleTaskGP
            >>> from botorch_mtucb.models.botorch_readers import single_output_data
            >>> X = torch.rand(0, 2, dtype=torch.float64)  # no data yet
            >>> data = single_output_data(SingleTaskGP(X, X[:, :1], outcome_transform=None))
            >>> data.largest_noise_variance() > 0
            True
        """
        noise = self.noise_variance
        if noise.numel():
            value = float(noise.max())
        elif self.learned_noise_variance is not None:
            value = self.learned_noise_variance
        else:
            raise ValueError(
                f"{self.model_name} has fixed noise (train_Yvar) and no training data, so no "
                "noise level; pass noise_std"
            )
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError(
                f"{self.model_name}'s noise variance must be finite and >= 0, got {value}"
            )
        return value

    def untransform(self, values: Tensor) -> Tensor:
        """``outcome_shift + outcome_scale * values``: transformed units to user units."""
        return self.outcome_shift + self.outcome_scale * values


def single_output_data(model: object) -> SingleOutputData:
    r"""Read one unbatched single-output exact GP in its transformed space.

    Args:
        model: A fitted BoTorch exact GP with one output and no batch dimensions
            (``SingleTaskGP``; ``train`` or ``eval`` mode, left as it is). Accepted
            outcome transforms: none, ``Standardize`` and ``ChainedOutcomeTransform`` of
            ``Standardize`` (affine maps); input transforms: any that maps each point to
            one point (not ``InputPerturbation`` / ``AppendFeatures``). Prior mean:
            ``ZeroMean`` or ``ConstantMean``. Likelihood: ``GaussianLikelihood`` with
            homoskedastic noise or ``FixedNoiseGaussianLikelihood``.

    Returns:
        A ``SingleOutputData``.

    Raises:
        TypeError: For a model that is not a BoTorch exact GP (a non-GP, a
            ``ModelListGP``, a ``MultiTaskGP``, a fully Bayesian or ensemble model), a
            mean other than zero or constant, a heteroskedastic or non-Gaussian
            likelihood, naming the model's type and what is accepted.
        ValueError: For more than one output, batch dimensions, a non-affine outcome
            transform (``Log``, ``Power``, ``Bilog``, ``StratifiedStandardize``, ...) or
            a one-to-many input transform.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch.models.transforms import Normalize
        >>> from botorch_mtucb.models.botorch_readers import single_output_data
        >>> X = 10.0 * torch.rand(8, 2, dtype=torch.float64)
        >>> model = SingleTaskGP(X, X[:, :1] ** 2, input_transform=Normalize(2))
        >>> data = single_output_data(model)
        >>> float(data.train_X.min()), float(data.train_X.max())  # min-max scaled
        (0.0, 1.0)
        >>> round(data.outcome_scale, 6) == round(float((X[:, 0] ** 2).std()), 6)
        True
    """
    _check_exact_gp(model)
    if model.num_outputs != 1:
        raise ValueError(
            f"model must have one output, got a {type(model).__name__} with "
            f"{model.num_outputs} outputs; use one model per output (a ModelListGP's "
            "model.models[i]) or the widths' per-output route"
        )
    return _read_output(model, None)


def output_data(model: object) -> list[SingleOutputData]:
    r"""One ``SingleOutputData`` per output of a single-output or batched multi-output
    exact GP, or of a ``ModelListGP`` of them (in the order of the outputs).

    Args:
        model: As ``single_output_data``, or a multi-output ``SingleTaskGP`` (outputs
            as a batch), or a ``ModelListGP`` of such models.

    Returns:
        A list of ``num_outputs`` ``SingleOutputData``.

    Raises:
        TypeError, ValueError: As ``single_output_data``, for the model or any of a
            ``ModelListGP``'s models.

    Example:
        >>> import torch
        >>> from botorch.models import ModelListGP, SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import output_data
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> two = SingleTaskGP(X, torch.cat([X[:, :1].sin(), X[:, 1:].cos()], -1))
        >>> [d.num_observations for d in output_data(ModelListGP(two, SingleTaskGP(X, X[:, :1])))]
        [6, 6, 6]
    """
    if isinstance(model, ModelListGP):
        return [data for member in model.models for data in output_data(member)]
    _check_exact_gp(model)
    if model.num_outputs == 1:
        return [_read_output(model, None)]
    return [_read_output(model, i) for i in range(model.num_outputs)]


def _check_exact_gp(model: object) -> None:
    name = type(model).__name__
    if isinstance(model, ModelListGP):
        raise TypeError(
            f"model must be {_ACCEPTED}, got a ModelListGP: pass one of its models "
            "(model.models[i])"
        )
    if not isinstance(model, Model) or not isinstance(model, ExactGP):
        raise TypeError(f"model must be {_ACCEPTED}, got {name}")
    if isinstance(model, MultiTaskGP) or getattr(model, "_task_feature", None) is not None:
        raise TypeError(
            f"model must be {_ACCEPTED}, got the multi-task model {name}; use the "
            "multi-output widths and acquisitions for it"
        )
    if getattr(model, "_is_fully_bayesian", False) or getattr(model, "_is_ensemble", False):
        raise TypeError(
            f"model must be {_ACCEPTED}, got {name}, which averages over a batch of "
            "hyperparameter samples; fit a SingleTaskGP with fit_gpytorch_mll instead"
        )
    if getattr(model, "covar_module", None) is None or model.train_inputs is None:
        raise TypeError(f"model must be {_ACCEPTED} with training data, got {name}")
    if len(model.batch_shape) != 0:
        raise ValueError(
            f"model must not be batched: {name} has batch_shape {tuple(model.batch_shape)} "
            "(train_X of shape batch_shape x t x d); fit one model per batch entry"
        )


def _read_output(model: Model, index: int | None) -> SingleOutputData:
    """The ``index``-th output of a batched multi-output model (``None``: the only one)."""
    name = type(model).__name__

    def member(value: Tensor) -> Tensor:
        return value if index is None else value[index]

    _check_mean_module(model)
    fixed = _has_fixed_noise(model)
    train_X = member(_transformed_train_inputs(model)).detach()
    train_y = member(model.train_targets).detach()
    shift, scale = outcome_affine_map(model, index)
    moments = observation_moments(model)  # prior mean and noise at the training inputs
    noise = member(moments.noise.diagonal(dim1=-2, dim2=-1))
    mean = member(moments.mean)
    if train_y.shape[-1] == 0:  # the constant mean and a learned noise need no data
        X = model.train_inputs[0]
        with warnings.catch_warnings():  # a fixed noise has no value off its data
            warnings.simplefilter("ignore", GPInputWarning)
            probe = observation_moments(model, (X.new_zeros(*X.shape[:-2], 1, X.shape[-1]),))
        mean = member(probe.mean)
        learned = member(probe.noise.diagonal(dim1=-2, dim2=-1))
    else:
        learned = noise
    return SingleOutputData(
        train_X=train_X,
        train_Y=train_y.unsqueeze(-1),
        prior_mean=float(mean.reshape(-1)[0]),
        kernel=model.covar_module,
        noise_variance=noise.to(train_y),
        fixed_noise=fixed,
        input_transform=getattr(model, "input_transform", None),
        outcome_shift=shift,
        outcome_scale=scale,
        input_dim=_input_dim(model),
        model_name=name,
        output_index=index,
        learned_noise_variance=None if fixed else float(learned.reshape(-1)[0]),
    )


def _transformed_train_inputs(model: Model) -> Tensor:
    """The training inputs that ``model.eval()`` would store (``Model._set_transformed_inputs``)."""
    X = model.train_inputs[0]
    transform = getattr(model, "input_transform", None)
    if transform is None:
        return X
    if getattr(transform, "is_one_to_many", False):
        raise ValueError(
            f"{type(model).__name__}'s input transform {type(transform).__name__} maps each "
            "point to several points (one-to-many); the bound needs one point per input: "
            "accepted are transforms such as Normalize, InputStandardize, Warp, Round"
        )
    if getattr(model, "_has_transformed_inputs", False):
        return X
    with torch.no_grad():
        return transform.preprocess_transform(X)


def _input_dim(model: Model) -> int:
    original = getattr(model, "_original_train_inputs", None)
    if getattr(model, "_has_transformed_inputs", False) and original is not None:
        return original.shape[-1]
    return model.train_inputs[0].shape[-1]


def outcome_affine_map(
    model: Model, index: int | None = None, one_map_for_all: bool = False
) -> tuple[float, float]:
    """``(a, b)`` with ``y = a + b y_tilde`` for the model's outcome transform (none,
    ``Standardize`` or a ``ChainedOutcomeTransform`` of them): output ``index``'s map, or
    with ``one_map_for_all`` the one map every output shares (``Standardize(m=1)``, as a
    ``MultiTaskGP``'s outcome transform has).

    Raises:
        ValueError: For another transform, several maps with ``one_map_for_all``, or a
            scale that is zero or not finite.

    Example:
        >>> import torch
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.models.botorch_readers import outcome_affine_map
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> gp = SingleTaskGP(X, torch.tensor([[1.0], [3.0], [1.0], [3.0]], dtype=torch.float64))
        >>> [round(v, 6) for v in outcome_affine_map(gp)]  # mean 2, std 1.154701
        [2.0, 1.154701]
    """
    transform = getattr(model, "outcome_transform", None)
    if transform is None:
        return 0.0, 1.0
    parts = (
        list(transform.values()) if isinstance(transform, ChainedOutcomeTransform) else [transform]
    )
    shift, scale = 0.0, 1.0
    for part in parts:  # forward order: y = shift + scale * (mean_i + std_i * z)
        if type(part) is not Standardize:
            raise ValueError(
                f"{type(model).__name__}'s outcome transform {type(part).__name__} is not an "
                "affine map, so a bound in the transformed units cannot be mapped back to "
                "the original units exactly; accepted: no outcome transform, Standardize, "
                "or a ChainedOutcomeTransform of Standardize"
            )
        if one_map_for_all and part.means.numel() != 1:
            raise ValueError(
                f"{type(model).__name__}'s outcome transform Standardize has one map per "
                "output, not one affine map for all tasks, so a bound in the transformed "
                "units cannot be mapped back exactly; accepted: none, Standardize(m=1) or a "
                "chain of them"
            )
        means = part.means.detach().reshape(-1)
        stdvs = part.stdvs.detach().reshape(-1)
        j = 0 if index is None else index
        shift += scale * float(means[j])
        scale *= float(stdvs[j])
    if not (math.isfinite(shift) and math.isfinite(scale) and scale != 0.0):
        raise ValueError(
            f"{type(model).__name__}'s outcome transform gives y = {shift} + {scale} * "
            "y_tilde; a finite, non-zero scale is needed"
        )
    return shift, scale


def _check_mean_module(model: Model) -> None:
    """A zero or constant prior mean (the bound is on ``f - mean``)."""
    mean = getattr(model, "mean_module", None)
    if not isinstance(mean, (ZeroMean, ConstantMean)):
        raise TypeError(
            f"{type(model).__name__}'s mean_module must be ZeroMean or ConstantMean (a bound "
            f"on f - mean needs a constant prior mean), got {type(mean).__name__}"
        )


def _has_fixed_noise(model: Model) -> bool:
    """Whether the noise is given (``train_Yvar``) rather than learned; refuse other
    likelihoods than BoTorch's two Gaussian ones."""
    likelihood = model.likelihood
    if isinstance(likelihood, FixedNoiseGaussianLikelihood):
        return True
    if isinstance(likelihood, GaussianLikelihood) and isinstance(
        likelihood.noise_covar, HomoskedasticNoise
    ):
        return False
    noise_model = type(getattr(likelihood, "noise_covar", None)).__name__
    raise TypeError(
        f"{type(model).__name__}'s likelihood must be a GaussianLikelihood with "
        f"homoskedastic noise or a FixedNoiseGaussianLikelihood, got "
        f"{type(likelihood).__name__} (noise model {noise_model}); a heteroskedastic or "
        "non-Gaussian likelihood has no single sub-Gaussian noise level"
    )
