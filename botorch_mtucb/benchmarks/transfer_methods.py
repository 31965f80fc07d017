r"""The methods of the ``transfer`` benchmark: what each picks as the next target arm.

Every method sees the target's arms, the target observations so far and the sources'
observations (``TransferState``) and returns the index of an arm not yet evaluated (a
finite domain evaluated without repeats, as ``optimize_acqf_discrete`` over the
remaining arms does). Each iteration builds its model on the data so far and refits its
hyperparameters (``fit_gpytorch_mll``, the models' default transforms, learned noise),
warm-started from the previous iteration's fit (as Ax refits); a run's first fit of each
model kind is shared by every method of the run (the data are the same then):

* ``ST-qLogNEI``: ``SingleTaskGP`` on the target's data and ``qLogNoisyExpectedImprovement``
  (single-task BO; the sources are ignored).
* ``MTGP-qLogNEI``: BoTorch's ``MultiTaskGP`` on all tasks (task column last,
  ``output_tasks=[0]``) and ``qLogNoisyExpectedImprovement`` on the target. Its default
  task kernel, a ``PositiveIndexKernel``, has no negative correlation: it cannot learn an
  anti-correlated source.
* ``MTGP-signed-qLogNEI``: the same with GPyTorch's unconstrained ``IndexKernel`` (full
  rank) as the task kernel (``signed_multi_task_gp``), which can.
* The package's routes, on that signed ``MultiTaskGP``:

  - ``TC-UCB``: converted with ``VectorValuedGP.from_model``, and
    ``TaskConditionedUCB(task=0, width=sqrt(0.2))`` (paper 001, eq. 7; the width of
    BoTorch's ``UpperConfidenceBound(beta=0.2)``).
  - ``MT-KB``: the converted model with MT-KB's width of paper 000, Theorem 2
    (``mt_kb_width``, ``delta = 0.01``), ``B`` chosen from the data
    (``choose_rkhs_norm_bound`` on the multi-task Gram matrix of the fitted ICM kernel).
  - ``MT-MM-UCB``: the multi-task martingale-mixture bound (paper 002 on the kernel of
    paper 000, ``MultiTaskMartingaleMixtureBound``) on the converted model's kernel, data
    and noise, ``B`` as for MT-KB, maximized as ``ScalarizedMartingaleMixtureUCB`` with
    the weights ``e_0``.
  - ``AdaMT-UCB``: paper 001's Algorithm 3 (``AdaptiveDeviationRule``) with the data
    kernel of the model fitted on the first data (sources and initial target points),
    scaled to the largest task variance, outcomes standardized with those data's mean
    and standard deviation, ``B = 3`` and the fitted noise; the sources' observations are
    given to every learner as prior data (``add_prior_data``), then the target's arms are
    chosen by the rule's current learner (its similarity is its own: paper 001's
    uniform-similarity kernel over candidate task deviations).
* ``random``: an unevaluated arm uniformly at random.

The models' outputs live in their outcome transform's units; every acquisition is
maximized over the same remaining arms, so an affine transform does not change a choice.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from botorch.acquisition import qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import MultiTaskGP, SingleTaskGP
from botorch.optim import optimize_acqf_discrete
from gpytorch.kernels import IndexKernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from botorch_mtucb.acquisition import ScalarizedMartingaleMixtureUCB, TaskConditionedUCB
from botorch_mtucb.bandits import AdaptiveDeviationRule
from botorch_mtucb.confidence import MultiTaskMartingaleMixtureBound, mt_kb_width
from botorch_mtucb.confidence.martingale_mixture.norm_choice import choose_rkhs_norm_bound
from botorch_mtucb.kernels import SumOfSeparableKernels
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.models.botorch_readers import vector_valued_gp_arguments
from botorch_mtucb.utils import FiniteDomain

DELTA = 0.01
TC_UCB_WIDTH = math.sqrt(0.2)  # BoTorch's UpperConfidenceBound(beta=0.2) multiplies sqrt(beta)
ADAMT_NORM_BOUND = 3.0  # B of AdaMT-UCB's widths, standardized outcomes, unit-variance kernel


@dataclass
class TransferState:
    """What a method sees at an iteration.

    Attributes:
        arms: ``A x d`` target arms (float64).
        evaluated: Indices of the target arms evaluated so far, in order.
        target_Y: ``k x 1`` their observations.
        source_X: ``S x d`` source inputs; source_Y: ``S x 1`` their observations;
        source_tasks: ``S`` task indices in ``1 .. n - 1``.
        num_tasks: ``n`` (the target and the sources).
        source_domains: Each task's arms (index 0 the target's), for AdaMT-UCB.
        generator: The run's random stream (random search, ties).
        fitted: The last fitted hyperparameters of each model kind (``"single"``,
            ``"multi"``, ``"signed"``; their ``state_dict`` without the outcome transform), the warm
            start of the next fit.
        refit: Whether this iteration refits the hyperparameters (else a model kind
            fitted before keeps its ``fitted`` ones).
        budget: The run's number of target evaluations (AdaMT-UCB's horizon is it plus
            the sources' observations).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.transfer_methods import TransferState
        >>> arms = torch.eye(3, dtype=torch.float64)
        >>> state = TransferState(arms, [1], torch.ones(1, 1, dtype=torch.float64),
        ...     arms[:0], arms[:0, :1], torch.zeros(0, dtype=torch.long), 1, [arms],
        ...     torch.Generator())
        >>> state.remaining().tolist()
        [0, 2]
    """

    arms: Tensor
    evaluated: list[int]
    target_Y: Tensor
    source_X: Tensor
    source_Y: Tensor
    source_tasks: Tensor
    num_tasks: int
    source_domains: list[Tensor]
    generator: torch.Generator
    fitted: dict = field(default_factory=dict)
    refit: bool = True
    budget: int = 40

    @property
    def target_X(self) -> Tensor:
        """``k x d`` the evaluated target arms."""
        return self.arms[self.evaluated]

    def remaining(self) -> Tensor:
        """Indices of the arms not evaluated yet (ascending)."""
        mask = torch.ones(self.arms.shape[0], dtype=torch.bool)
        mask[self.evaluated] = False
        return mask.nonzero().squeeze(-1)

    def multi_task_data(self) -> tuple[Tensor, Tensor]:
        """``MultiTaskGP``'s ``train_X`` (task column last; the target is task 0) and
        ``train_Y``."""
        X = torch.cat([self.target_X, self.source_X])
        tasks = torch.cat([torch.zeros(len(self.evaluated)), self.source_tasks.to(X)])
        return torch.cat([X, tasks.to(X).unsqueeze(-1)], -1), torch.cat(
            [self.target_Y, self.source_Y]
        )


Chooser = Callable[[TransferState], int]


def _fit(model, state: TransferState, kind: str):
    """Load ``state.fitted[kind]`` (if any) into ``model`` and, if ``state.refit`` or
    nothing was fitted yet, fit its hyperparameters from there; keep them in
    ``state.fitted``. The outcome transform's constants stay those of the current data."""
    previous = state.fitted.get(kind)
    if previous is not None:
        model.load_state_dict(previous, strict=False)
    if previous is None or state.refit:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fitting and input-scaling chatter
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    model.eval()
    state.fitted[kind] = {
        key: value.detach().clone()
        for key, value in model.state_dict().items()
        if not key.startswith("outcome_transform")
    }
    return model


def fit_multi_task_gp(state: TransferState, signed: bool = False) -> MultiTaskGP:
    """BoTorch's ``MultiTaskGP`` on every task's data (defaults; ``signed``: with
    ``signed_multi_task_gp``'s task kernel), fitted (warm start).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.transfer_methods import TransferState
        >>> arms = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)  # target arms
        >>> state = TransferState(arms, [0, 5], arms[[0, 5]].sin(), arms[1:5],
        ...     arms[1:5].cos(), torch.ones(4, dtype=torch.long), 2, [arms, arms],
        ...     torch.Generator())  # 2 target and 4 source observations
        >>> from botorch_mtucb.benchmarks.transfer_methods import fit_multi_task_gp
        >>> fit_multi_task_gp(state).num_outputs, sorted(state.fitted)
        (1, ['multi'])
    """
    train_X, train_Y = state.multi_task_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MultiTaskGP(train_X, train_Y, task_feature=-1, output_tasks=[0])
    if signed:
        signed_multi_task_gp(model, state.num_tasks)
    return _fit(model, state, "signed" if signed else "multi")


def signed_multi_task_gp(model: MultiTaskGP, num_tasks: int) -> MultiTaskGP:
    """Replace ``model``'s task kernel (BoTorch's ``PositiveIndexKernel``, whose
    correlations are all ``>= 0``) by GPyTorch's ``IndexKernel`` of full rank, whose task
    covariance ``W W^T + diag(v)`` is any positive definite matrix (anti-correlated tasks
    included); in place, before fitting.

    Example:
        >>> import torch
        >>> from botorch.models import MultiTaskGP
        >>> from botorch_mtucb.benchmarks.transfer_methods import signed_multi_task_gp
        >>> X = torch.rand(6, 2, dtype=torch.float64)
        >>> X[:, -1] = torch.tensor([0.0, 1.0] * 3)
        >>> model = signed_multi_task_gp(MultiTaskGP(X, X[:, :1], task_feature=-1), 2)
        >>> type(model.covar_module.kernels[1]).__name__
        'IndexKernel'
    """
    data_kernel, task_kernel = model.covar_module.kernels
    index = task_kernel.active_dims
    signed = IndexKernel(num_tasks, rank=num_tasks, active_dims=index)
    model.covar_module = data_kernel * signed.to(model.train_targets)
    return model


def fit_single_task_gp(state: TransferState) -> SingleTaskGP:
    """BoTorch's ``SingleTaskGP`` on the target's data (defaults), fitted (warm start).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.transfer_methods import TransferState
        >>> arms = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)  # target arms
        >>> state = TransferState(arms, [0, 5], arms[[0, 5]].sin(), arms[1:5],
        ...     arms[1:5].cos(), torch.ones(4, dtype=torch.long), 2, [arms, arms],
        ...     torch.Generator())  # 2 target and 4 source observations
        >>> from botorch_mtucb.benchmarks.transfer_methods import fit_single_task_gp
        >>> fit_single_task_gp(state).train_inputs[0].shape
        torch.Size([2, 1])
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(state.target_X, state.target_Y)
    return _fit(model, state, "single")


def _best_remaining(acqf, state: TransferState) -> int:
    """``optimize_acqf_discrete`` over the remaining arms; the chosen arm's index."""
    remaining = state.remaining()
    choices = state.arms[remaining]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, _ = optimize_acqf_discrete(acqf, q=1, choices=choices, unique=True)
    matches = (choices == x.reshape(1, -1)).all(-1).nonzero()
    return int(remaining[int(matches[0, 0])])


def _random(state: TransferState) -> int:
    remaining = state.remaining()
    return int(remaining[torch.randint(len(remaining), (1,), generator=state.generator)])


def _single_task_qlognei(state: TransferState) -> int:
    model = fit_single_task_gp(state)
    return _best_remaining(qLogNoisyExpectedImprovement(model, X_baseline=state.target_X), state)


def _multi_task_qlognei(state: TransferState) -> int:
    model = fit_multi_task_gp(state)
    return _best_remaining(qLogNoisyExpectedImprovement(model, X_baseline=state.target_X), state)


def _signed_multi_task_qlognei(state: TransferState) -> int:
    model = fit_multi_task_gp(state, signed=True)
    return _best_remaining(qLogNoisyExpectedImprovement(model, X_baseline=state.target_X), state)


def _task_conditioned_ucb(state: TransferState) -> int:
    converted = VectorValuedGP.from_model(fit_multi_task_gp(state, signed=True))
    return _best_remaining(TaskConditionedUCB(converted, task=0, width=TC_UCB_WIDTH), state)


def converted_bound_data(model: MultiTaskGP) -> dict:
    """The converted model's data in the bound's terms: ``X``, ``tasks``, the outcomes minus
    each task's prior mean ``y`` (``M``), the kernel, ``sigma`` (the largest fitted noise
    standard deviation) and ``B`` from the data rule (``choose_rkhs_norm_bound`` on the
    multi-task Gram matrix, ``delta = DELTA``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.transfer_methods import TransferState
        >>> arms = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)  # target arms
        >>> state = TransferState(arms, [0, 5], arms[[0, 5]].sin(), arms[1:5],
        ...     arms[1:5].cos(), torch.ones(4, dtype=torch.long), 2, [arms, arms],
        ...     torch.Generator())  # 2 target and 4 source observations
        >>> from botorch_mtucb.benchmarks.transfer_methods import converted_bound_data, fit_multi_task_gp
        >>> data = converted_bound_data(fit_multi_task_gp(state, signed=True))
        >>> data["B"] > 0, tuple(data["y"].shape)
        (True, (6,))
    """
    arguments = vector_valued_gp_arguments(model)
    X, tasks = arguments["train_X"], arguments["train_tasks"]
    y = arguments["train_Y"].squeeze(-1) - arguments["prior_mean"].to(X)[tasks]
    kernel = SumOfSeparableKernels(arguments["data_kernel"], arguments["task_covariance"])
    sigma = float(arguments["noise_variances"].max().sqrt())
    with torch.no_grad():
        gram = kernel.observation_covariance(X, tasks, X, tasks).to_dense()
    norm = choose_rkhs_norm_bound(gram, y, sigma, DELTA)
    return {"arguments": arguments, "y": y, "sigma": sigma, "B": norm}


def _mt_kb(state: TransferState) -> int:
    model = fit_multi_task_gp(state, signed=True)
    data = converted_bound_data(model)
    converted = VectorValuedGP(**data["arguments"])
    width = float(mt_kb_width(converted, rkhs_norm_bound=data["B"], delta=DELTA))
    return _best_remaining(TaskConditionedUCB(converted, task=0, width=width), state)


def _mt_mm_ucb(state: TransferState) -> int:
    data = converted_bound_data(fit_multi_task_gp(state, signed=True))
    arguments = data["arguments"]
    bound = MultiTaskMartingaleMixtureBound(
        arguments["train_X"], data["y"].unsqueeze(-1), arguments["data_kernel"],
        arguments["task_covariance"], data["B"], data["sigma"], DELTA,
        train_tasks=arguments["train_tasks"],
    )  # fmt: skip
    weights = torch.zeros(state.num_tasks, dtype=torch.float64)
    weights[0] = 1.0
    return _best_remaining(ScalarizedMartingaleMixtureUCB(bound, weights), state)


class AdaMTUCB:
    """AdaMT-UCB (module docstring), built on the first state it sees.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.transfer_methods import TransferState
        >>> arms = torch.linspace(0, 1, 6, dtype=torch.float64).unsqueeze(-1)  # target arms
        >>> state = TransferState(arms, [0, 5], arms[[0, 5]].sin(), arms[1:5],
        ...     arms[1:5].cos(), torch.ones(4, dtype=torch.long), 2, [arms, arms],
        ...     torch.Generator())  # 2 target and 4 source observations
        >>> from botorch_mtucb.benchmarks.transfer_methods import AdaMTUCB
        >>> index = AdaMTUCB()(state)
        >>> index in state.remaining().tolist()
        True
    """

    def __init__(self) -> None:
        self.rule: AdaptiveDeviationRule | None = None
        self.seen = 0  # target observations the rule has

    def _build(self, state: TransferState) -> None:
        model = fit_multi_task_gp(state, signed=True)
        arguments = vector_valued_gp_arguments(model)
        scale = float(arguments["task_covariance"][0].diagonal().max())
        kernel = ScaleKernel(arguments["data_kernel"][0]).to(torch.float64)
        kernel.outputscale = scale
        kernel.raw_outputscale.requires_grad_(False)
        Y = torch.cat([state.target_Y, state.source_Y])
        self.offset, self.scale = float(Y.mean()), float(Y.std()) or 1.0
        noise = float(arguments["noise_variances"].max().sqrt()) * float(
            model.outcome_transform.stdvs.squeeze()
        )
        self.rule = AdaptiveDeviationRule(
            [FiniteDomain(points) for points in state.source_domains], kernel,
            ADAMT_NORM_BOUND, b=None, horizon=state.budget + state.source_X.shape[0], delta=DELTA,
            noise_std=max(noise / self.scale, 1e-3), num_tasks=state.num_tasks,
        )  # fmt: skip
        for x, y, task in zip(state.source_X, state.source_Y, state.source_tasks):
            self.rule.add_prior_data(int(task), x, self._standardize(y))

    def _standardize(self, y: Tensor) -> Tensor:
        return (y.reshape(()) - self.offset) / self.scale

    def __call__(self, state: TransferState) -> int:
        if self.rule is None:
            self._build(state)
        for index, y in zip(state.evaluated[self.seen :], state.target_Y[self.seen :]):
            self.rule.observe(0, state.arms[index], self._standardize(y))
        self.seen = len(state.evaluated)
        remaining = state.remaining()
        upper = self.rule.upper_bounds(0)[remaining]
        return int(remaining[int(upper.argmax())])


METHODS: dict[str, Callable[[], Chooser]] = {
    "random": lambda: _random,
    "ST-qLogNEI": lambda: _single_task_qlognei,
    "MTGP-qLogNEI": lambda: _multi_task_qlognei,
    "MTGP-signed-qLogNEI": lambda: _signed_multi_task_qlognei,
    "TC-UCB": lambda: _task_conditioned_ucb,
    "MT-KB": lambda: _mt_kb,
    "MT-MM-UCB": lambda: _mt_mm_ucb,
    "AdaMT-UCB": AdaMTUCB,
}
