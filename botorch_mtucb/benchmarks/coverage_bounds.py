r"""The bounds that the ``coverage`` benchmark checks, each as its theorem states it.

A *tracker* holds one run of one bound: the package's own policy or confidence rule
(its model, data and width), a ground truth ``f`` known at the candidates, and

* ``evaluate(generator)``: draws the round's context (paper 000's scalarization
  weights, paper 001's revealed task) and returns the bound's own UCB at the
  candidates (what the algorithm maximizes) and the *margin* of ``f`` at every checked
  point: ``1 - d / h``, where ``h`` is the half-width of the band (or radius of the
  ball) and ``d`` the distance of ``f`` from its centre. ``margin < 0`` exactly when
  ``f`` lies outside, i.e. the theorem's inequality fails;
* ``update(index, noise, generator)``: observes ``y = f(x_index) + noise`` and lets the
  policy or rule update itself as it does in the experiments.

What each theorem bounds (``f`` of norm at most the ``rkhs_norm_bound`` given):

* paper 000, Theorem 1 (MT-KB's width, Theorem 2): ``||f(x) - mu_t(x)||_2 <= beta_t
  ||Gamma_t(x, x)||^{1/2}`` for all ``x`` and ``t``, w.p. ``1 - delta``; ``||f||_Gamma`` in
  the vector-valued RKHS, ``sigma``-sub-Gaussian noise vectors;
* paper 000, Lemma 9 with Theorem 3 (MT-BKB): the same with the sketched ``mu~_t``,
  ``Gamma~_t`` and ``beta~_t``, w.p. ``1 - delta`` (``delta / 2`` for the dictionary);
* paper 001, Theorem 1: ``|f(i, x) - mu_t(i, x)| <= beta_t sigma_t(i, x)`` for all tasks,
  ``x`` and ``t``, w.p. ``1 - 2 delta``, given ``max_i ||f_i|| <= B`` and ``epsilon`` (eq. 5);
  the widths are called with ``delta / 2`` so that the failure probability is
  ``delta``;
* paper 002, Lemma 4.2 / eq. (12) (exact), the grid minimum (DMM) and Cor. 4.6 (AMM):
  ``lower_t(x) <= f(x) <= upper_t(x)``, w.p. ``1 - delta``; an empty confidence set
  counts as a violation;
* IGP-UCB and AY-GP-UCB (paper 002, Appendix C.2): ``|f(x) - mu_t(x)| <= beta_t
  rho_t(x)``, w.p. ``1 - delta``;
* the multi-task martingale mixture (``MultiTaskMartingaleMixtureBound``):
  ``lower_t(x, e_i) <= f_i(x) <= upper_t(x, e_i)`` for every task, ``x`` and ``t``, w.p.
  ``1 - delta``, given ``||f||_Gamma <= B`` in the RKHS of the multi-task kernel and
  noise components independent across tasks. Paper 000's family: ``Gamma = k B`` with
  the truth's ``B`` and its norm ``B``, full-vector data. Paper 001's family:
  ``Gamma = k K_task(b)``, task-indexed data, and the norm bound ``B sqrt(N (1 + b
  eps^2))`` of paper 001, Sections A.1-A.2 (``||f~||^2 = sum_i ||f_i||^2 + b sum_i ||f_i -
  f_avg||^2``, with ``B = max_i ||f_i||`` and the exact ``eps`` of eq. 5);
* the exact and analytic martingale mixtures on noise-free observations, told the
  ``sigma`` of ``noise_level`` for a deterministic evaluation (``NUMERICAL_NOISE_FLOOR``):
  the same inequality, on the numerically hardest path (tiny ``alpha``).

Why this module is long: every tracker of the benchmark (one per kind of bound) and the
table of cases that names them live together, so that the cases read as one list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from gpytorch.kernels import Kernel
from torch import Tensor

from botorch_mtucb.acquisition.scalarized_ucb import (
    largest_eigenvalue_sqrt,
    posterior_mean_and_covariance,
)
from botorch_mtucb.bandits import (
    AgnosticWidth,
    DataDependentLargeBWidth,
    ImprovedWidth,
    LargeBWidth,
    NaiveWidth,
    SmallBWidth,
    confidence_rule,
)
from botorch_mtucb.bandits.scalarized import mt_bkb, mt_kb
from botorch_mtucb.bandits.task_indexed import mt_ucb
from botorch_mtucb.benchmarks.coverage_truths import KernelExpansion
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.confidence.martingale_mixture.noise_level import NUMERICAL_NOISE_FLOOR
from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.scalarization import LinearScalarization, sample_linear_weights
from botorch_mtucb.utils import FiniteDomain

REGULARIZATION_000 = 0.1  # eta of paper 000's experiments
SKETCH_EPS = 0.5  # MT-BKB's eps of paper 000's experiments
KERNEL_PARAMETER_001 = 1.0  # b of K_task(b); lambda = (N + b) / (N + bN)


def band_margin(values: Tensor, lower: Tensor, upper: Tensor) -> Tensor:
    r"""``1 - |f - c| / h`` for the band ``[lower, upper]`` (centre ``c``, half-width ``h``):
    ``1`` at the centre, ``0`` on an edge, negative outside.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import band_margin
        >>> band_margin(torch.tensor([0.5, 2.0, -1.0]), torch.zeros(3), torch.ones(3))
        tensor([ 1., -2., -2.])
    """
    half_width = (upper - lower) / 2
    return 1 - (values - (upper + lower) / 2).abs() / half_width


def ball_margin(error: Tensor, radius: Tensor) -> Tensor:
    r"""``1 - ||f - mu||_2 / r`` for the ball of radius ``r`` (``error``: ``... x n``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import ball_margin
        >>> ball_margin(torch.tensor([[3.0, 4.0]]), torch.tensor([10.0]))
        tensor([0.5000])
    """
    return 1 - error.norm(dim=-1) / radius


@dataclass
class RunSetup:
    """What the bounds of one family share in one run.

    Attributes:
        kernel: The scalar kernel ``k`` (fixed, float64).
        candidates: ``N x d`` candidate points (a finite domain).
        truth: The ground truth (``KernelExpansion``).
        noise_std: ``sigma`` of the Gaussian noise (also given to the bounds).
        horizon: ``T`` (MT-BKB's dictionary accuracy and IGP-UCB's ``eta = 2 / T``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import RunSetup
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_expansion
        >>> from botorch_mtucb.problems import make_kernel
        >>> kernel = make_kernel("rbf", 0.2)
        >>> truth = sample_expansion(kernel, 1, 1.0, torch.eye(1, dtype=torch.float64),
        ...                          torch.Generator())
        >>> setup = RunSetup(kernel, torch.rand(5, 1, dtype=torch.float64), truth, 0.1, 10)
        >>> setup.values.shape
        torch.Size([5, 1])
    """

    kernel: Kernel
    candidates: Tensor
    truth: KernelExpansion
    noise_std: float
    horizon: int

    def __post_init__(self) -> None:
        self.values = self.truth(self.candidates)  # N x n

    @property
    def num_tasks(self) -> int:
        """``n``, the outputs of ``f``."""
        return self.values.shape[-1]


class ScalarizedTracker:
    r"""MT-KB or MT-BKB (paper 000): the UCB ``s(mu) + L beta ||Gamma_t||^{1/2}`` of a
    linear scalarization drawn each round (paper 000, Appendix E), the margin of the
    ball ``||f - mu_t|| <= beta_t ||Gamma_t(x, x)||^{1/2}``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import RunSetup, ScalarizedTracker
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_expansion
        >>> from botorch_mtucb.problems import make_kernel
        >>> kernel, B = make_kernel("rbf", 0.2), torch.eye(2, dtype=torch.float64)
        >>> setup = RunSetup(kernel, torch.rand(5, 1, dtype=torch.float64),
        ...                  sample_expansion(kernel, 1, 1.0, B, torch.Generator()), 0.1, 10)
        >>> tracker = ScalarizedTracker.mt_kb(setup, 1.0, 0.5)
        >>> ucb, margin = tracker.evaluate(torch.Generator())
        >>> ucb.shape, bool((margin >= 0).all())  # under the prior: ||f(x)|| <= b ||Gamma||^1/2
        (torch.Size([5]), True)
    """

    def __init__(self, setup: RunSetup, policy) -> None:
        self.setup = setup
        self.policy = policy
        self.observation_size = setup.num_tasks

    @classmethod
    def mt_kb(cls, setup: RunSetup, rkhs_norm_bound: float, delta: float) -> ScalarizedTracker:
        """MT-KB (Algorithm 1 and Theorem 2 of paper 000) on the setup's ICM kernel."""
        arguments = cls._policy_arguments(setup, rkhs_norm_bound, delta)
        return cls(setup, mt_kb(*arguments))

    @classmethod
    def mt_bkb(cls, setup: RunSetup, rkhs_norm_bound: float, delta: float) -> ScalarizedTracker:
        """MT-BKB (Algorithm 2 and Theorem 3 of paper 000), ``q`` of Theorem 3 for ``T``."""
        arguments = cls._policy_arguments(setup, rkhs_norm_bound, delta)
        policy = mt_bkb(*arguments, SKETCH_EPS, horizon=setup.horizon)
        return cls(setup, policy)

    @staticmethod
    def _policy_arguments(setup: RunSetup, rkhs_norm_bound: float, delta: float) -> tuple:
        """Kernel, task covariance, domain, ``b``, ``sigma``, ``eta`` and ``delta``."""
        domain = FiniteDomain(setup.candidates)
        task_covariance = setup.truth.task_covariance
        return (
            setup.kernel,
            task_covariance,
            domain,
            rkhs_norm_bound,
            setup.noise_std,
            REGULARIZATION_000,
            delta,
        )

    def evaluate(self, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """The round's UCB (``N``) and the margins (``N``)."""
        weights = sample_linear_weights(self.setup.num_tasks, generator=generator)
        self.scalarization = LinearScalarization(weights)
        with torch.no_grad():
            mean, covariance = posterior_mean_and_covariance(
                self.policy.rule.model, self.setup.candidates.unsqueeze(-2)
            )
        radius = float(self.policy.diagnostics()["width"]) * largest_eigenvalue_sqrt(covariance)
        ucb = self.scalarization(mean) + self.scalarization.lipschitz_constant * radius
        return ucb, ball_margin(self.setup.values - mean, radius)

    def update(self, index: int, noise: Tensor, generator: torch.Generator) -> None:
        """The policy's own update with ``y = f(x) + noise`` (``n``)."""
        x = self.setup.candidates[index]
        y = self.setup.values[index] + noise
        context = {"_scalarization": self.scalarization}
        self.policy.update(x, y, context, generator)


class TaskIndexedTracker:
    r"""MT-UCB (paper 001, Algorithm 1) with one width rule of Theorem 1: nature reveals a
    task uniformly at random (Section 5), the UCB ``mu_t(i_t, x) + beta_t sigma_t(i_t, x)``;
    the margins are those of every task at every candidate.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import RunSetup, TaskIndexedTracker
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_related_tasks
        >>> from botorch_mtucb.problems import make_kernel
        >>> kernel = make_kernel("rbf", 0.2)
        >>> truth = sample_related_tasks(kernel, 1, 3, 1.0, 0.3, torch.Generator())
        >>> setup = RunSetup(kernel, torch.rand(5, 1, dtype=torch.float64), truth, 0.1, 10)
        >>> from botorch_mtucb.bandits import ImprovedWidth
        >>> tracker = TaskIndexedTracker(setup, ImprovedWidth, 1.0, 0.25)
        >>> ucb, margin = tracker.evaluate(torch.Generator())
        >>> ucb.shape, margin.shape  # one task's UCB; every task's margins
        (torch.Size([5]), torch.Size([3, 5]))
    """

    def __init__(
        self, setup: RunSetup, width: type[AgnosticWidth], rkhs_norm_bound: float, delta: float
    ) -> None:
        self.setup = setup
        self.observation_size = 1
        self.policy = mt_ucb(
            FiniteDomain(setup.candidates),
            setup.kernel,
            KERNEL_PARAMETER_001,
            rkhs_norm_bound,
            setup.truth.task_deviation(),
            delta=delta,
            noise_std=setup.noise_std,
            width=width,
            num_tasks=setup.num_tasks,
        )

    def evaluate(self, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """The revealed task's UCB (``N``) and every task's margins (``n x N``)."""
        self.task = int(torch.randint(self.setup.num_tasks, (1,), generator=generator))
        moments = [self.policy.rule.regression.arm_moments(i) for i in range(self.setup.num_tasks)]
        mean = torch.stack([task_mean for task_mean, _ in moments])  # n x N
        width = self.policy.diagnostics()["width"]
        half_width = width * torch.stack([std for _, std in moments])
        ucb = mean[self.task] + half_width[self.task]
        return ucb, band_margin(self.setup.values.T, mean - half_width, mean + half_width)

    def update(self, index: int, noise: Tensor, generator: torch.Generator) -> None:
        """The policy's update with ``y = f(i_t, x) + noise`` on the revealed task."""
        x = self.setup.candidates[index]
        y = self.setup.values[index, self.task] + noise
        self.policy.update(x, y, {"task": self.task}, generator)


class KernelUCBTracker:
    r"""One of paper 002's confidence rules (``confidence_rule``): the martingale-mixture
    bounds (``upper``/``lower`` of the rule's ``MartingaleMixtureBound``, its own alphas)
    or the width rules (``mu +- beta rho`` of the rule's model).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import KernelUCBTracker, RunSetup
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_expansion
        >>> from botorch_mtucb.problems import make_kernel
        >>> kernel = make_kernel("rbf", 0.2)
        >>> truth = sample_expansion(kernel, 1, 1.0, torch.eye(1, dtype=torch.float64),
        ...                          torch.Generator())
        >>> setup = RunSetup(kernel, torch.rand(5, 1, dtype=torch.float64), truth, 0.1, 10)
        >>> tracker = KernelUCBTracker(setup, "CMM-UCB", 1.0, 0.5)
        >>> ucb, margin = tracker.evaluate(torch.Generator())
        >>> tracker.update(int(ucb.argmax()), torch.zeros(1, dtype=torch.float64), None)
        >>> tracker.rule.bound.num_observations
        1
    """

    def __init__(self, setup: RunSetup, method: str, rkhs_norm_bound: float, delta: float):
        self.setup = setup
        self.observation_size = 1
        self.rule = confidence_rule(
            method,
            setup.kernel,
            setup.candidates.shape[-1],
            rkhs_norm_bound,
            setup.noise_std,
            delta,
            eta=2.0 / setup.horizon,
        )

    def evaluate(self, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """The UCB (``N``) and the margins (``N``)."""
        X = self.setup.candidates
        if hasattr(self.rule, "bound"):  # CMM / DMM / AMM
            upper = self.rule.bound.upper(X, self.rule.alphas)
            lower = self.rule.bound.lower(X, self.rule.alphas)
        else:  # AY-GP-UCB / IGP-UCB: mu +- beta rho
            with torch.no_grad():
                posterior = self.rule.model.posterior(X)
            mean = posterior.mean.reshape(-1)
            half_width = self.rule.width * posterior.variance.reshape(-1).clamp_min(0).sqrt()
            upper, lower = mean + half_width, mean - half_width
        return upper, band_margin(self.setup.values[:, 0], lower, upper)

    def update(self, index: int, noise: Tensor, generator: torch.Generator | None) -> None:
        """The rule's update with ``y = f(x) + noise``."""
        x = self.setup.candidates[index].reshape(1, -1)
        self.rule.update(x, (self.setup.values[index] + noise).reshape(1, 1))


class NoiseFreeKernelUCBTracker(KernelUCBTracker):
    r"""A martingale-mixture rule on noise-free observations, told the noise level that
    ``measurement_noise_std`` gives a deterministic evaluation: ``sigma =
    NUMERICAL_NOISE_FLOOR`` (``noise_level``; the truths' kernel has ``k(x, x) = 1``).
    Noise-free observations are ``sigma``-sub-Gaussian for every ``sigma > 0``, so paper
    002's Lemma 4.2 holds; the case checks it on the numerically hardest path (``alpha =
    sigma^2 / c`` near the round-off of the Gram matrix's eigenvalues).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import (
        ...     NoiseFreeKernelUCBTracker, RunSetup)
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_expansion
        >>> from botorch_mtucb.problems import make_kernel
        >>> kernel = make_kernel("rbf", 0.2)
        >>> truth = sample_expansion(kernel, 1, 1.0, torch.eye(1, dtype=torch.float64),
        ...                          torch.Generator())
        >>> setup = RunSetup(kernel, torch.rand(5, 1, dtype=torch.float64), truth, 0.1, 10)
        >>> tracker = NoiseFreeKernelUCBTracker(setup, "CMM-UCB", 1.0, 0.5)
        >>> tracker.rule.bound.noise_std
        0.0001
    """

    def __init__(self, setup: RunSetup, method: str, rkhs_norm_bound: float, delta: float):
        told = replace(setup, noise_std=NUMERICAL_NOISE_FLOOR)
        super().__init__(told, method, rkhs_norm_bound, delta)

    def update(self, index: int, noise: Tensor, generator: torch.Generator | None) -> None:
        """The rule's update with ``y = f(x)`` (the drawn noise is not added)."""
        super().update(index, torch.zeros_like(noise), generator)


class MultiTaskMixtureTracker:
    r"""The exact multi-task martingale-mixture bound on paper 000's family
    (full-vector data, the truth's ICM kernel, a linear scalarization drawn each round:
    UCB ``upper(x, w)``) or paper 001's (task-indexed data, ``K_task(b) (x) k``, a task
    revealed each round: UCB ``upper(x, e_i)``); the margins are those of every task's band
    at every candidate.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.coverage_bounds import MultiTaskMixtureTracker, RunSetup
        >>> from botorch_mtucb.benchmarks.coverage_truths import sample_related_tasks
        >>> from botorch_mtucb.problems import make_kernel
        >>> kernel = make_kernel("rbf", 0.2)
        >>> truth = sample_related_tasks(kernel, 1, 3, 1.0, 0.3, torch.Generator())
        >>> setup = RunSetup(kernel, torch.rand(5, 1, dtype=torch.float64), truth, 0.1, 10)
        >>> tracker = MultiTaskMixtureTracker.task_indexed(setup, 1.0, 0.5)
        >>> ucb, margin = tracker.evaluate(torch.Generator())
        >>> ucb.shape, margin.shape, bool((margin >= 0).all())
        (torch.Size([5]), torch.Size([3, 5]), True)
    """

    def __init__(self, setup: RunSetup, bound: MultiTaskMartingaleMixtureBound) -> None:
        self.setup = setup
        self.bound = bound
        self.observation_size = 1 if not bound.full_vector else setup.num_tasks

    @classmethod
    def full_vector(
        cls, setup: RunSetup, rkhs_norm_bound: float, delta: float
    ) -> MultiTaskMixtureTracker:
        """Paper 000's family: ``Gamma = k B`` (the truth's ``B``), ``||f||_Gamma <= B``."""
        X = setup.candidates[:0]
        bound = MultiTaskMartingaleMixtureBound(
            X, X.new_zeros(0, setup.num_tasks), setup.kernel, setup.truth.task_covariance,
            rkhs_norm_bound, setup.noise_std, delta,
        )  # fmt: skip
        return cls(setup, bound)

    @classmethod
    def task_indexed(
        cls, setup: RunSetup, rkhs_norm_bound: float, delta: float
    ) -> MultiTaskMixtureTracker:
        """Paper 001's family: ``K_task(b) (x) k``, norm bound ``B sqrt(N (1 + b eps^2))``."""
        n, b = setup.num_tasks, KERNEL_PARAMETER_001
        eps = setup.truth.task_deviation()
        norm = rkhs_norm_bound * (n * (1.0 + b * eps**2)) ** 0.5
        X = setup.candidates[:0]
        bound = MultiTaskMartingaleMixtureBound(
            X, X.new_zeros(0, 1), setup.kernel, UniformSimilarityTaskKernel.from_b(n, b), norm,
            setup.noise_std, delta, train_tasks=torch.zeros(0, dtype=torch.long),
        )  # fmt: skip
        return cls(setup, bound)

    def evaluate(self, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """The round's UCB (``N``) and every task's margins (``n x N``)."""
        X = self.setup.candidates
        upper, lower = self.bound.upper(X), self.bound.lower(X)  # N x n
        if self.bound.full_vector:
            self.weights = sample_linear_weights(self.setup.num_tasks, generator=generator)
            ucb = self.bound.upper(X, weights=self.weights.to(X))
        else:
            self.task = int(torch.randint(self.setup.num_tasks, (1,), generator=generator))
            ucb = upper[:, self.task]
        return ucb, band_margin(self.setup.values.T, lower.T, upper.T)

    def update(self, index: int, noise: Tensor, generator: torch.Generator | None) -> None:
        """``append_observations`` of ``y = f(x) + noise`` (all tasks, or the revealed one)."""
        x = self.setup.candidates[index].reshape(1, -1)
        if self.bound.full_vector:
            self.bound.append_observations(x, (self.setup.values[index] + noise).reshape(1, -1))
        else:
            y = (self.setup.values[index, self.task] + noise).reshape(1, 1)
            self.bound.append_observations(x, y, torch.tensor([self.task]))


@dataclass(frozen=True)
class BoundCase:
    """One row of the benchmark: a bound, the family whose ground truths it is run on,
    its source and a factory ``make(setup, rkhs_norm_bound, delta) -> tracker``.

    ``delta_argument(delta)`` is what the bound is called with so that its theorem's
    failure probability is ``delta`` (paper 001's Theorem 1 holds w.p. ``1 - 2 delta``).

    Example:
        >>> from botorch_mtucb.benchmarks.coverage_bounds import CASES
        >>> [case.name for case in CASES if case.family == "000"]
        ['MT-KB', 'MT-BKB', 'MT-CMM (000)']
    """

    name: str
    family: str
    source: str
    make: Callable[[RunSetup, float, float], object]
    delta_factor: float = 1.0

    def delta_argument(self, delta: float) -> float:
        """The ``delta`` passed to the bound for a failure probability ``delta``."""
        return delta * self.delta_factor


def _task_indexed(
    width: type[AgnosticWidth],
) -> Callable[[RunSetup, float, float], TaskIndexedTracker]:
    return lambda setup, bound, delta: TaskIndexedTracker(setup, width, bound, delta)


def _kernel_ucb(
    method: str, tracker: type[KernelUCBTracker] = KernelUCBTracker
) -> Callable[[RunSetup, float, float], KernelUCBTracker]:
    return lambda setup, bound, delta: tracker(setup, method, bound, delta)


CASES: tuple[BoundCase, ...] = (
    BoundCase("MT-KB", "000", "000 Thm 1-2", ScalarizedTracker.mt_kb),
    BoundCase("MT-BKB", "000", "000 Lem 9, Thm 3", ScalarizedTracker.mt_bkb),
    BoundCase("MT-CMM (000)", "000", "002 Lem 4.2 on X x [n]", MultiTaskMixtureTracker.full_vector),
    *(
        BoundCase(
            f"001 {width.key}",
            "001",
            "001 Thm 1" + (", eqs 24+26" if "data" in width.key else ""),
            _task_indexed(width),
            delta_factor=0.5,
        )
        for width in (ImprovedWidth, NaiveWidth, SmallBWidth, LargeBWidth, DataDependentLargeBWidth)
    ),
    BoundCase("MT-CMM (001)", "001", "002 Lem 4.2, 001 A.1", MultiTaskMixtureTracker.task_indexed),
    BoundCase("CMM (exact)", "002", "002 Lem 4.2, eq 12", _kernel_ucb("CMM-UCB")),
    BoundCase("DMM (grid)", "002", "002 eq 12, Sec 5.4", _kernel_ucb("DMM-UCB")),
    BoundCase("AMM (analytic)", "002", "002 Cor 4.6", _kernel_ucb("AMM-UCB")),
    BoundCase(
        "CMM (noise-free)",
        "002",
        "002 Lem 4.2, sigma floor",
        _kernel_ucb("CMM-UCB", NoiseFreeKernelUCBTracker),
    ),
    BoundCase(
        "AMM (noise-free)",
        "002",
        "002 Cor 4.6, sigma floor",
        _kernel_ucb("AMM-UCB", NoiseFreeKernelUCBTracker),
    ),
    BoundCase("AY-GP-UCB", "002", "AY12 Thm 3.11 (002 C.2)", _kernel_ucb("AY-GP-UCB")),
    BoundCase("IGP-UCB", "002", "CG17 Thm 2 (002 C.2)", _kernel_ucb("IGP-UCB")),
)
"""Every bound of the package, in the order of the table."""

CONTROLS: tuple[str, ...] = (
    "MT-KB", "MT-CMM (000)", "001 new", "MT-CMM (001)", "CMM (exact)", "CMM (noise-free)",
    "IGP-UCB",
)  # fmt: skip
"""The bounds also run told ``B / 4``: one per family (MT-KB, 001 ``new``, the exact
martingale mixture, the tightest bound, and IGP-UCB, the tighter of its baselines), the
two multi-task martingale mixtures and the exact bound on noise-free observations."""

CONTROL_FACTOR = 0.25

__all__ = [
    "CASES",
    "CONTROLS",
    "CONTROL_FACTOR",
    "BoundCase",
    "KernelUCBTracker",
    "MultiTaskMixtureTracker",
    "NoiseFreeKernelUCBTracker",
    "RunSetup",
    "ScalarizedTracker",
    "TaskIndexedTracker",
    "band_margin",
    "ball_margin",
]
