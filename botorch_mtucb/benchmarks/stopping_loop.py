r"""One run of the ``certified-stopping`` benchmark: a BO loop on one problem with one
acquisition, and at every round the three stopping rules on the same data
(``certified_stopping`` module docstring).

Round ``t`` draws its noise from ``round_generator(seed, t, 0)`` and its random choices
(random search, the box's candidates, Makarova's sample of the box) from
``round_generator(seed, t, 1)``; qLogNEI's base samples from the torch seed set at the
start of the run.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import torch
from botorch.acquisition import UpperConfidenceBound, qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.mlls import ExactMarginalLogLikelihood
from torch import Tensor

from botorch_mtucb.acquisition import CertifiedStopping, MartingaleMixtureUCB
from botorch_mtucb.benchmarks.stopping_baselines import (
    ax_improvement_stop,
    makarova_beta,
    ucb_lcb_regret_bound,
)
from botorch_mtucb.benchmarks.stopping_problems import (
    NUM_BOX_CANDIDATES,
    ProblemInstance,
    make_instance,
)
from botorch_mtucb.confidence import MartingaleMixtureBound
from botorch_mtucb.utils.domains import BoxDomain
from botorch_mtucb.utils.random import ENVIRONMENT_STREAM, POLICY_STREAM, round_generator

DTYPE = torch.float64
ACQUISITIONS = ("MM-UCB", "qLogNEI", "UCB(beta=0.2)", "random")
RULES = ("certified", "makarova", "ax-improvement")
UCB_BETA = 0.2
MAKAROVA_BOX_SAMPLES = 2000
COVERAGE_TOLERANCE = 1e-9  # a bound below the regret by less than round-off is not a miss


@dataclass
class RuleOutcome:
    """A rule's run: the evaluations at its first stop (``None``: never), the true
    regret then, the first round whose recommendation was ``epsilon``-optimal and whether
    its bound was ever below the true regret (``None``: the rule has no bound).

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_loop import RuleOutcome
        >>> RuleOutcome(None, None, 12, False).stop is None
        True
    """

    stop: int | None
    stop_regret: float | None
    oracle: int | None
    miscovered: bool | None


@dataclass
class RunResult:
    """One (problem, acquisition, seed) run and its rules' outcomes.

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_loop import RunResult
        >>> RunResult("branin", "random", 0, {}).problem
        'branin'
    """

    problem: str
    acquisition: str
    seed: int
    outcomes: dict[str, RuleOutcome]
    trace: dict[str, list] = field(default_factory=dict)
    cpu_seconds: float = 0.0


def _known_gp(instance: ProblemInstance, X: Tensor, Y: Tensor) -> SingleTaskGP:
    """The GP with the true kernel and noise (nothing fitted; zero prior mean)."""
    noise = torch.full_like(Y, instance.spec.noise_std**2)
    gp = SingleTaskGP(X, Y, noise, covar_module=instance.kernel, outcome_transform=None)
    gp.mean_module.constant.data.zero_()
    return gp.eval()


def _fitted_gp(X: Tensor, Y: Tensor) -> SingleTaskGP:
    gp = SingleTaskGP(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    return gp.eval()


def _acquisition_values(name: str, gp, bound, X: Tensor, candidates: Tensor, delta: float):
    if name == "MM-UCB":
        acqf = (
            MartingaleMixtureUCB(bound)
            if bound is not None
            else MartingaleMixtureUCB(gp, delta=delta)
        )
    elif name == "qLogNEI":
        acqf = qLogNoisyExpectedImprovement(gp, X_baseline=X, prune_baseline=False)
    else:
        acqf = UpperConfidenceBound(gp, beta=UCB_BETA)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.cat([acqf(chunk.unsqueeze(-2)) for chunk in candidates.split(256)])


def _makarova(instance: ProblemInstance, gp, X: Tensor, index: list[int], delta, policy):
    """Makarova et al.'s bound and incumbent (a point, ``d``)."""
    domain = instance.domain
    if isinstance(domain, BoxDomain):
        sample = torch.rand(MAKAROVA_BOX_SAMPLES, instance.spec.dim, generator=policy, dtype=DTYPE)
        points = torch.cat([sample, X])
        evaluated = torch.zeros(points.shape[0], dtype=torch.bool)
        evaluated[MAKAROVA_BOX_SAMPLES:] = True
        size = instance.spec.dim  # |D| taken as d on a box (stopping_baselines)
    else:
        points = domain.points
        evaluated = torch.zeros(points.shape[0], dtype=torch.bool)
        evaluated[index] = True
        size = points.shape[0]
    with torch.no_grad():
        posterior = gp.posterior(points.unsqueeze(-2))  # marginals only: N x 1 x d
        mean = posterior.mean.reshape(-1)
        std = posterior.variance.reshape(-1).clamp_min(0).sqrt()
    beta = makarova_beta(size, X.shape[0], delta)
    bound, incumbent = ucb_lcb_regret_bound(mean, std, evaluated, beta)
    return bound, points[incumbent]


def run_once(problem: str, acquisition: str, seed: int, horizon: int, delta: float) -> RunResult:
    """One run (module docstring); the rules are checked after ``t = d + 1, ..., T``
    evaluations.

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_loop import run_once
        >>> result = run_once("rkhs-finite-1d", "random", 0, horizon=4, delta=0.1)
        >>> sorted(result.outcomes), len(result.trace["certified"])
        (['ax-improvement', 'certified', 'makarova'], 3)
    """
    start = time.process_time()
    warnings.simplefilter("ignore")  # jitter and optimizer chatter, in a worker
    torch.manual_seed(seed)
    instance = make_instance(problem, seed)
    spec, domain = instance.spec, instance.domain
    box = isinstance(domain, BoxDomain)
    rule = CertifiedStopping(spec.epsilon, delta=delta, early_exit=box)
    initial = spec.dim + 1
    design = round_generator(seed, 0, POLICY_STREAM)
    if box:
        X = torch.rand(initial, spec.dim, generator=design, dtype=DTYPE)
        index: list[int] = []
    else:
        index = torch.randperm(domain.points.shape[0], generator=design)[:initial].tolist()
        X = domain.points[index]
    noise = spec.noise_std * torch.randn(
        initial, generator=round_generator(seed, 0, 0), dtype=DTYPE
    )
    Y = (instance.f(X) + noise).unsqueeze(-1)
    bound = None
    if spec.known_norm:
        bound = MartingaleMixtureBound(X, Y, instance.kernel, spec.rkhs_norm, spec.noise_std, delta)
    trace = {name: [] for name in RULES}  # (t, bound or None, regret, stop) per round
    for t in range(initial, horizon + 1):
        policy = round_generator(seed, t, POLICY_STREAM)
        gp = _known_gp(instance, X, Y) if spec.known_norm else _fitted_gp(X, Y)
        decision = rule.should_stop(bound if bound is not None else gp, domain)
        certificate = decision.certificate
        trace["certified"].append(
            (t, certificate.gap, instance.regret(certificate.recommendation), decision.stop)
        )
        makarova, incumbent = _makarova(instance, gp, X, index, delta, policy)
        trace["makarova"].append(
            (t, makarova, instance.regret(incumbent), makarova <= spec.epsilon)
        )
        best = X[int(Y.argmax())]
        trace["ax-improvement"].append(
            (t, None, instance.regret(best), ax_improvement_stop(Y.squeeze(-1).tolist()))
        )
        if t == horizon:
            break
        candidates = (
            torch.rand(NUM_BOX_CANDIDATES, spec.dim, generator=policy, dtype=DTYPE)
            if box
            else domain.points
        )
        if acquisition == "random":
            choice = int(torch.randint(candidates.shape[0], (1,), generator=policy))
        else:
            values = _acquisition_values(acquisition, gp, bound, X, candidates, delta)
            choice = int(values.argmax())
        x = candidates[choice : choice + 1]
        noise = spec.noise_std * torch.randn(
            1, generator=round_generator(seed, t, ENVIRONMENT_STREAM), dtype=DTYPE
        )
        y = (instance.f(x) + noise).unsqueeze(-1)
        if not box:
            index.append(choice)
        X, Y = torch.cat([X, x]), torch.cat([Y, y])
        if bound is not None:
            bound.append_observations(x, y)
    outcomes = {name: outcome(rounds, spec.epsilon) for name, rounds in trace.items()}
    return RunResult(problem, acquisition, seed, outcomes, trace, time.process_time() - start)


def outcome(rounds: list[tuple], epsilon: float) -> RuleOutcome:
    """A rule's ``RuleOutcome`` from its rounds ``(t, bound or None, regret, stop)``.

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_loop import outcome
        >>> outcome([(3, 0.9, 0.5, False), (4, 0.2, 0.25, True)], epsilon=0.3)
        RuleOutcome(stop=4, stop_regret=0.25, oracle=4, miscovered=True)
    """
    stop = next(((t, regret) for t, _, regret, s in rounds if s), (None, None))
    oracle = next((t for t, _, regret, _ in rounds if regret <= epsilon), None)
    bounds = [(b, regret) for _, b, regret, _ in rounds if b is not None]
    miscovered = any(b < regret - COVERAGE_TOLERANCE for b, regret in bounds) if bounds else None
    return RuleOutcome(stop[0], stop[1], oracle, miscovered)
