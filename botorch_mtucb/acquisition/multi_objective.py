"""Paper 000's random Chebyshev scalarization for a multi-objective experiment in Ax.

Source: paper 000, Section 2 (random scalarizations; the Chebyshev scalarization
``s_lambda(y) = min_i lambda_i (y_i - z_i)`` with a reference point ``z``), Section 3
(each round ``t`` draws its own ``lambda_t`` from ``P_lambda`` and maximizes a UCB of
``s_lambda_t(f(x))``) and Section 5 (``P_lambda``: ``lambda = alpha / ||alpha||_1``,
``alpha_i = ||u||_1 / u_i``, ``u ~ U[0, 1]^n``: ``sample_chebyshev_weights``).

For a multi-objective experiment Ax's modular BoTorch generator calls the input
constructor of the scalarized UCBs once per candidate with

- ``ref_point``: the objective thresholds, one per objective in the order of the
  experiment's objective (``"f1, -f2"``: ``f1`` then ``f2``), maximization-aligned
  (a minimized objective's threshold negated) and in the model's outcome units (after
  Ax's outcome transforms); Ax infers thresholds that are not given;
- ``posterior_transform``: the objective weights summed over objectives, one per model
  output (``-1`` for a minimized objective);
- ``training_data``: the data, which name the model's outputs (Ax orders them by name,
  not by the objective).

``multi_objective_scalarization`` matches the thresholds to the outputs through the
objectives' names (``objective_names``, which ``ax_generation_strategy`` passes) and
returns the Chebyshev scalarization of the maximization-aligned outputs
``sigma_i f_i(x)`` (``sigma_i = -1`` for a minimized objective) with weights
``lambda_t`` and reference point ``z`` = the thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models.model import Model
from torch import Tensor

from botorch_mtucb.scalarization import (
    ChebyshevScalarization,
    Scalarization,
    as_scalarization,
    sample_chebyshev_weights,
)
from botorch_mtucb.utils.checks import as_int, check_tensor
from botorch_mtucb.utils.random import POLICY_STREAM, round_generator


class SignedScalarization(Scalarization):
    r"""``s(y) = scalarization(signs * y)``: a scalarization of some outputs negated.

    With ``signs_i = -1`` for a minimized objective, ``signs * f(x)`` is the
    maximization-aligned objective vector. ``|signs_i| = 1``, so the Lipschitz constant
    (in the l2-norm) is the scalarization's, and the largest eigenvalue of the posterior
    covariance of ``signs * f(x)`` is that of ``f(x)``: ``ScalarizedMultiTaskUCB`` with
    this scalarization is the UCB of paper 000, eq. (2), of the aligned objectives.
    (``ScalarizedObjectiveUCB`` scalarizes ``mu + width * sigma`` and cannot use it: the
    upper bound of ``-f_i`` is ``-(mu_i - width * sigma_i)``.)

    Args:
        scalarization: A ``Scalarization`` on ``n`` outputs (or ``n`` linear weights).
        signs: ``n`` entries, each ``1`` or ``-1``.

    Raises:
        TypeError: For a ``scalarization`` that is not a ``Scalarization`` or weight
            tensor, or ``signs`` that are not a floating-point tensor.
        ValueError: If ``signs`` does not have ``n`` entries of ``1`` or ``-1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.acquisition.multi_objective import SignedScalarization
        >>> from botorch_mtucb.scalarization import ChebyshevScalarization
        >>> chebyshev = ChebyshevScalarization(torch.tensor([0.5, 0.5]), torch.zeros(2))
        >>> s = SignedScalarization(chebyshev, torch.tensor([1.0, -1.0]))  # minimize f_2
        >>> s(torch.tensor([[4.0, -2.0]]))  # min(0.5 * 4, 0.5 * 2)
        tensor([1.])
        >>> s.lipschitz_constant
        tensor(0.5000)
    """

    signs: Tensor

    def __init__(self, scalarization: Scalarization | Tensor, signs: Tensor) -> None:
        scalarization = as_scalarization(scalarization)
        super().__init__(scalarization.weights)
        signs = check_tensor(signs, "signs", dim=1)
        if signs.shape[0] != self.num_tasks or not ((signs == 1) | (signs == -1)).all():
            raise ValueError(
                f"signs must hold {self.num_tasks} entries (one per output of the "
                f"scalarization), each 1 or -1, got {signs.tolist()}"
            )
        self.scalarization = scalarization
        self.register_buffer("signs", signs)

    @property
    def lipschitz_constant(self) -> Tensor:
        """The scalarization's ``L_lambda`` (negating coordinates keeps l2 distances)."""
        return self.scalarization.lipschitz_constant

    def forward(self, Y: Tensor) -> Tensor:
        """``Y``: ``... x n`` -> ``...``."""
        self._check_outputs(Y)
        return self.scalarization(Y * self.signs.to(Y))


def _output_names(training_data: object) -> list[str]:
    """The outcome names of Ax's ``training_data`` (a ``SupervisedDataset``, or a mapping
    from outcome names to datasets), in the order of the model's outputs."""
    if isinstance(training_data, Mapping):
        return [str(name) for name in training_data]
    names = getattr(training_data, "outcome_names", None)
    if names is None:
        raise TypeError(
            "training_data must be a BoTorch SupervisedDataset or a mapping from outcome "
            "names to datasets (what Ax passes), to name the model's outputs; got "
            f"{type(training_data).__name__}"
        )
    return [str(name) for name in names]


def _num_observations(training_data: object) -> int:
    datasets = training_data.values() if isinstance(training_data, Mapping) else [training_data]
    return max(int(dataset.X.shape[-2]) for dataset in datasets)


def _objective_outputs(
    objective_names: Sequence[str], training_data: object, num_outputs: int
) -> list[int]:
    """The model output of each objective (Ax subsets the model to the objectives)."""
    names = _output_names(training_data)
    if len(names) != num_outputs:  # Ax kept only the outputs in the objective
        names = [name for name in names if name in objective_names]
    unknown = [name for name in objective_names if name not in names]
    if unknown or len(names) != num_outputs:
        raise ValueError(
            f"objective_names {list(objective_names)} must name the model's "
            f"{num_outputs} outputs, which training_data names "
            f"{_output_names(training_data)}"
        )
    others = [name for name in names if name not in objective_names]
    if others:
        raise UnsupportedError(
            f"the model's outputs {others} are not objectives: a multi-objective "
            "experiment with the scalarized UCBs must model its objectives only"
        )
    return [names.index(name) for name in objective_names]


def _signs(posterior_transform: object, outputs: list[int], num_outputs: int, like: Tensor):
    if posterior_transform is None:
        return torch.ones(num_outputs, dtype=like.dtype, device=like.device)
    if not isinstance(posterior_transform, ScalarizedPosteriorTransform):
        raise UnsupportedError(
            "posterior_transform must be None or Ax's ScalarizedPosteriorTransform (the "
            f"objective weights), got {type(posterior_transform).__name__}"
        )
    weights = posterior_transform.weights.to(like).reshape(-1)
    if float(posterior_transform.offset) != 0.0:
        raise ValueError(
            "posterior_transform must have offset 0 in a multi-objective experiment (the "
            f"Chebyshev scalarization's reference point is Ax's), got {posterior_transform.offset}"
        )
    if weights.shape[0] != num_outputs or (weights[outputs] == 0).any():
        raise ValueError(
            f"posterior_transform must have a nonzero weight for each of the model's "
            f"{num_outputs} outputs (the objectives), got {weights.tolist()}"
        )
    return weights.sign()


def chebyshev_weights_at_round(
    num_objectives: int,
    t: int,
    seed: int | None = None,
    dtype: torch.dtype = torch.float64,
    device: torch.device | None = None,
) -> Tensor:
    r"""``lambda_t``: round ``t``'s draw from ``P_lambda`` (paper 000, Section 5).

    ``sample_chebyshev_weights`` with the generator ``round_generator(seed, t,
    POLICY_STREAM)`` (in float64, then cast to ``dtype``): reproducible for a ``seed``,
    a new draw in each round. Without ``seed`` one is drawn from torch's global generator
    (Ax's ``Client(random_seed=...)`` resets it before every trial: the round ``t``
    still changes the draw).

    Args:
        num_objectives: ``n >= 1``.
        t: The round, ``>= 0`` (the number of evaluated and pending points).
        seed: An int, or ``None``.
        dtype, device: Of the weights.

    Returns:
        ``n`` weights on the simplex.

    Raises:
        TypeError, ValueError: For a ``num_objectives``, ``t`` or ``seed`` that is not
            an int of the accepted range.

    Example:
        >>> from botorch_mtucb.acquisition.multi_objective import chebyshev_weights_at_round
        >>> chebyshev_weights_at_round(2, t=6, seed=0)
        tensor([0.5071, 0.4929], dtype=torch.float64)
        >>> chebyshev_weights_at_round(2, t=7, seed=0)  # the next round: a new draw
        tensor([0.5828, 0.4172], dtype=torch.float64)
    """
    t = as_int(t, "t", minimum=0)
    if seed is None:
        seed = int(torch.randint(0, 2**62, (1,)))
    seed = as_int(seed, "seed", minimum=0)
    generator = round_generator(seed, t, POLICY_STREAM)
    # drawn in float64 and cast: the same weights for float32 and float64 models
    weights = sample_chebyshev_weights(num_objectives, generator=generator)
    return weights.to(dtype=dtype, device=device)


def multi_objective_scalarization(
    model: Model,
    ref_point: Tensor,
    objective_names: Sequence[str] | None,
    training_data: object,
    posterior_transform: object = None,
    X_pending: Tensor | None = None,
    seed: int | None = None,
    allow_minimization: bool = True,
) -> Scalarization:
    r"""The round's random Chebyshev scalarization of Ax's objectives (paper 000).

    ``s(f(x)) = min_k lambda_k (sigma_k f_{j_k}(x) - z_k)``: objective ``k`` is the
    model's output ``j_k`` (matched by name), ``sigma_k = -1`` if it is minimized (the
    sign of its weight in ``posterior_transform``), ``z = ref_point`` (Ax's
    maximization-aligned objective thresholds) and ``lambda = lambda_t`` drawn by
    ``chebyshev_weights_at_round`` for the round ``t`` = the number of evaluated points
    in ``training_data`` plus the pending ones.

    Args:
        model: The model Ax passes (its outputs: the objectives).
        ref_point: ``n`` objective thresholds in the order of ``objective_names``.
        objective_names: The ``n`` objectives' outcome names, in the experiment's order.
        training_data: Ax's ``training_data`` (names the model's outputs).
        posterior_transform: ``None`` (all maximized) or Ax's
            ``ScalarizedPosteriorTransform``.
        X_pending: ``m x d`` pending points (they count in ``t``), or ``None``.
        seed: Seeds the weights' stream (``None``: torch's global generator).
        allow_minimization: ``False`` refuses minimized objectives (for
            ``ScalarizedObjectiveUCB``, which cannot use a ``SignedScalarization``).

    Returns:
        A ``ChebyshevScalarization`` on the model's outputs, in a
        ``SignedScalarization`` if an objective is minimized.

    Raises:
        UnsupportedError: Without ``objective_names``, for thresholds Ax could not
            infer (NaN or no ``ref_point``), for model outputs that are not objectives,
            or for a minimized objective with ``allow_minimization=False``.
        TypeError, ValueError: For inputs that do not match each other.

    Example:
        >>> import torch
        >>> from botorch.acquisition.objective import ScalarizedPosteriorTransform
        >>> from botorch.models import SingleTaskGP
        >>> from botorch.utils.datasets import SupervisedDataset
        >>> from botorch_mtucb.acquisition.multi_objective import (
        ...     multi_objective_scalarization)
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> Y = torch.cat([X.sin(), X.cos()], -1)[:, :2]  # outputs "a" (max), "b" (min)
        >>> data = SupervisedDataset(X, Y, feature_names=["x1", "x2"], outcome_names=["a", "b"])
        >>> weights = ScalarizedPosteriorTransform(torch.tensor([1.0, -1.0], dtype=torch.float64))
        >>> s = multi_objective_scalarization(  # objective "-b, a", thresholds b <= 2, a >= 0
        ...     SingleTaskGP(X, Y), torch.tensor([-2.0, 0.0], dtype=torch.float64), ["b", "a"],
        ...     data, weights, seed=0)
        >>> s.signs, s.scalarization.reference_point
        (tensor([ 1., -1.], dtype=torch.float64), tensor([ 0., -2.], dtype=torch.float64))
    """
    if objective_names is None:
        raise UnsupportedError(
            "a multi-objective experiment (Ax passes ref_point, the objective thresholds) "
            "needs objective_names in botorch_acqf_options: the objectives' names in the "
            "order of the objective, to match each threshold to its model output; "
            "botorch_mtucb.acquisition.ax_generation_strategy passes them"
        )
    if isinstance(objective_names, str) or not all(
        isinstance(name, str) for name in objective_names
    ):
        raise TypeError(f"objective_names must be a list of str, got {objective_names!r}")
    if len(objective_names) < 2:
        raise ValueError(
            "objective_names must name the 2 or more objectives of a multi-objective "
            f"experiment, got {list(objective_names)}"
        )
    if ref_point is None:
        ref_point = torch.full((len(objective_names),), float("nan"))
    if not isinstance(ref_point, Tensor) or ref_point.shape != (len(objective_names),):
        raise ValueError(
            f"ref_point must be a tensor of {len(objective_names)} objective thresholds "
            f"(one per objective of {list(objective_names)}), got {ref_point!r}"
        )
    missing = [name for name, z in zip(objective_names, ref_point.tolist()) if z != z]
    if missing:
        raise UnsupportedError(
            f"no objective threshold for {missing} (Ax could not infer one): give each "
            "objective a threshold, e.g. outcome_constraints=['f <= 10'] for a "
            "minimized f; the Chebyshev scalarization's reference point is made of them"
        )
    ref_point = check_tensor(ref_point, "ref_point")
    outputs = _objective_outputs(objective_names, training_data, model.num_outputs)
    signs = _signs(posterior_transform, outputs, model.num_outputs, ref_point)
    if not allow_minimization and bool((signs < 0).any()):
        minimized = [name for name, j in zip(objective_names, outputs) if signs[j] < 0]
        raise UnsupportedError(
            f"the minimized objectives {minimized} are not supported by "
            "ScalarizedObjectiveUCB, which scalarizes the upper bounds mu + width * sigma "
            "(that of -f is -(mu - width * sigma)): use ScalarizedMultiTaskUCB, or report "
            "-f as a metric and maximize it"
        )
    t = _num_observations(training_data) + (0 if X_pending is None else X_pending.shape[-2])
    weights = chebyshev_weights_at_round(len(outputs), t, seed, ref_point.dtype)
    order = torch.tensor(outputs, device=ref_point.device)
    lambda_ = torch.empty_like(ref_point).index_copy_(0, order, weights.to(ref_point))
    z = torch.empty_like(ref_point).index_copy_(0, order, ref_point)  # aligned, per output
    chebyshev = ChebyshevScalarization(lambda_, z)  # of the aligned outputs signs * f
    if bool((signs > 0).all()):
        return chebyshev
    return SignedScalarization(chebyshev, signs)
