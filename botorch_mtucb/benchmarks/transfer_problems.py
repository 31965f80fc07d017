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
