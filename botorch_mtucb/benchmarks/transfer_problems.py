r"""The problems of the ``transfer`` benchmark: a target task with source tasks whose data
a BoTorch user already has, on real data shipped with the package.

Each problem is a ``MultiTaskArmProblem`` whose task 0 is the target and whose other
tasks are the sources, with the number of source observations a run is given (drawn
uniformly from each source's arms, without repeats) and the observation noise:

* ``hpo-*``: an RBF SVM's 5-fold cross-validated accuracy on the 11 x 11 ``(C, gamma)``
  grid (``problems.hpo_transfer``), target ``digits``; ``related``: sources
  ``breast_cancer`` and ``wine`` (surface correlations 0.96 and 0.80 with the target);
  ``loose``: ``iris`` and ``diabetes`` (0.28 and 0.54); ``negated``: ``breast_cancer`` and
  ``wine`` times -1 (anti-correlated). Exact scores (no noise), 30 observations per source.
* ``mhc-*``: MHC class I binding affinities (``problems.mhc``), target allele ``A_2402``
  (197 peptides, 2 of them at the largest affinity); ``related``: ``A_2301``, of the same
  (A24) supertype; ``other-supertype``: the A2 alleles ``A_0202`` and ``A_0201``;
  ``negated``: ``A_2301`` times -1. The package's noise level (0.01), 100 observations per
  source. A kernel ridge regression (RBF, ``gamma = 1``, ``alpha = 0.1``) fitted on 800
  peptides of one allele predicts the other allele of its supertype with correlation 0.62
  to 0.74 and an allele of the other supertype with 0.13 to 0.31.

Source: ``problems/data/HPO_TRANSFER.md`` and ``MHC1_BINDING.md`` (provenance of the data).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from botorch_mtucb.benchmarks.transfer_methods import TransferState
from botorch_mtucb.problems import MultiTaskArmProblem, hpo_transfer_problem, mhc_binding_problem


@dataclass(frozen=True)
class TransferProblem:
    """A target with sources: how to build it and how many source observations a run has.

    Attributes:
        build: Makes the ``MultiTaskArmProblem`` (task 0 the target).
        source_observations: Observations of each source task given to every method.
        description: One line for the table.

    Example:
        >>> from botorch_mtucb.benchmarks.transfer_problems import TRANSFER_PROBLEMS
        >>> problem = TRANSFER_PROBLEMS["hpo-negated"].build()
        >>> problem.task_names
        ['digits', '-breast_cancer', '-wine']
    """

    build: Callable[[], MultiTaskArmProblem]
    source_observations: int
    description: str


def alleles_problem(
    target: str, sources: Sequence[str] = (), negated_sources: Sequence[str] = ()
) -> MultiTaskArmProblem:
    """The MHC-I problem restricted to ``target`` (task 0), ``sources`` and the
    ``negated_sources`` (affinities times -1, named ``"-allele"``).

    Raises:
        ValueError: For an unknown allele or one given twice.

    Example:
        >>> from botorch_mtucb.benchmarks.transfer_problems import alleles_problem
        >>> problem = alleles_problem("A_0202", ["A_0201"], ["A_0203"])
        >>> problem.task_names, [a.shape[0] for a in problem.arms]
        (['A_0202', 'A_0201', '-A_0203'], [1447, 3089, 1443])
    """
    full = mhc_binding_problem()
    known = [str(name) for name in full.task_names]
    names = [target, *sources, *negated_sources]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"alleles must be among {known}, got {unknown}")
    if len(set(names)) != len(names):
        raise ValueError(f"each allele may appear once, got {names}")
    rows = [known.index(name) for name in names]
    signs = [1.0] * (1 + len(sources)) + [-1.0] * len(negated_sources)
    return MultiTaskArmProblem(
        [full.arms[row] for row in rows],
        [sign * full.values[row] for sign, row in zip(signs, rows)],
        full.noise_std,
        task_names=[target, *sources, *(f"-{name}" for name in negated_sources)],
    )


_RELATED_HPO = ("breast_cancer", "wine")
_MHC_TARGET = "A_2402"

TRANSFER_PROBLEMS: dict[str, TransferProblem] = {
    "hpo-related": TransferProblem(
        lambda: hpo_transfer_problem("digits", _RELATED_HPO), 30, "SVM on digits; related sources"
    ),
    "hpo-loose": TransferProblem(
        lambda: hpo_transfer_problem("digits", ("iris", "diabetes")),
        30,
        "SVM on digits; loosely related sources",
    ),
    "hpo-negated": TransferProblem(
        lambda: hpo_transfer_problem("digits", negated_sources=_RELATED_HPO),
        30,
        "SVM on digits; negated sources",
    ),
    "mhc-related": TransferProblem(
        lambda: alleles_problem(_MHC_TARGET, ["A_2301"]), 100, "MHC-I A_2402; A24 allele"
    ),
    "mhc-other-supertype": TransferProblem(
        lambda: alleles_problem(_MHC_TARGET, ["A_0202", "A_0201"]),
        100,
        "MHC-I A_2402; A2 alleles",
    ),
    "mhc-negated": TransferProblem(
        lambda: alleles_problem(_MHC_TARGET, negated_sources=["A_2301"]),
        100,
        "MHC-I A_2402; negated A24 allele",
    ),
}

INITIAL_DESIGN = 2  # target arms drawn uniformly before the first choice


@dataclass
class TargetOracle:
    """The target's noise-free values and its observation noise (what methods do not see).

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.transfer import TargetOracle
        >>> oracle = TargetOracle(torch.tensor([0.25, 0.75], dtype=torch.float64), 0.0,
        ...                       torch.Generator())
        >>> oracle.regret(0), float(oracle.observe(1))
        (0.5, 0.75)
    """

    values: torch.Tensor
    noise_std: float
    noise: torch.Generator

    def regret(self, index: int) -> float:
        """``f*_0 - f_0(arm index)``."""
        return float(self.values.max() - self.values[index])

    def observe(self, index: int) -> torch.Tensor:
        """``f_0(arm index)`` plus Gaussian noise (a 0-d float64 tensor)."""
        return self.values[index].to(torch.float64) + self.noise_std * torch.randn(
            (), generator=self.noise, dtype=torch.float64
        )

    def copy(self) -> TargetOracle:
        """The same values, and a noise stream at the same point."""
        noise = torch.Generator()
        noise.set_state(self.noise.get_state())
        return TargetOracle(self.values, self.noise_std, noise)


def initial_state(
    problem_name: str, seed: int, budget: int, initial_design: int = INITIAL_DESIGN
) -> tuple[TransferState, TargetOracle]:
    """The sources' data and the initial target design of ``seed``: each source's
    ``source_observations`` arms drawn uniformly without repeats and observed with the
    problem's noise, and ``initial_design`` target arms drawn uniformly (the same for every
    method); ``budget`` target evaluations in all.

    Example:
        >>> from botorch_mtucb.benchmarks.transfer_problems import initial_state
        >>> state, oracle = initial_state("hpo-negated", 0, 40)
        >>> len(state.evaluated), tuple(state.source_X.shape), state.num_tasks
        (2, (60, 2), 3)
    """
    spec = TRANSFER_PROBLEMS[problem_name]
    problem = spec.build()
    draws = torch.Generator().manual_seed(seed)
    noise = torch.Generator().manual_seed(30_000 + seed)
    arms = [a.to(torch.float64) for a in problem.arms]
    values = [v.to(torch.float64) for v in problem.values]
    source_X, source_Y, source_tasks = [], [], []
    for task in range(1, problem.num_tasks):
        size = min(spec.source_observations, arms[task].shape[0])
        index = torch.randperm(arms[task].shape[0], generator=draws)[:size]
        observed = values[task][index] + problem.noise_std * torch.randn(
            size, generator=noise, dtype=torch.float64
        )
        source_X.append(arms[task][index])
        source_Y.append(observed.unsqueeze(-1))
        source_tasks.append(torch.full((size,), task, dtype=torch.long))
    start = torch.randperm(arms[0].shape[0], generator=draws)[:initial_design].tolist()
    state = TransferState(
        arms[0], [], arms[0].new_zeros(0, 1), torch.cat(source_X), torch.cat(source_Y),
        torch.cat(source_tasks), problem.num_tasks, arms, torch.Generator().manual_seed(seed),
    )  # fmt: skip
    state.budget = budget
    oracle = TargetOracle(values[0], problem.noise_std, noise)
    for index in start:
        evaluate(state, oracle, index)
    return state, oracle


def evaluate(state: TransferState, oracle: TargetOracle, index: int) -> None:
    """Observe target arm ``index`` and append it to ``state``.

    Example:
        >>> from botorch_mtucb.benchmarks.transfer_problems import evaluate, initial_state
        >>> state, oracle = initial_state("hpo-related", 0, 4)
        >>> evaluate(state, oracle, 7); state.evaluated[-1], tuple(state.target_Y.shape)
        (7, (3, 1))
    """
    state.evaluated.append(int(index))
    state.target_Y = torch.cat([state.target_Y, oracle.observe(index).reshape(1, 1)])


def copy_state(state: TransferState) -> TransferState:
    """A fresh copy for one method: the same data, random stream and first fits.

    Example:
        >>> from botorch_mtucb.benchmarks.transfer_problems import copy_state, initial_state
        >>> state, _ = initial_state("hpo-related", 0, 4)
        >>> copy = copy_state(state); copy.evaluated.append(5); len(state.evaluated)
        2
    """
    return TransferState(
        state.arms, list(state.evaluated), state.target_Y.clone(), state.source_X,
        state.source_Y, state.source_tasks, state.num_tasks, state.source_domains,
        torch.Generator().manual_seed(state.generator.initial_seed()), dict(state.fitted),
        budget=state.budget,
    )  # fmt: skip
