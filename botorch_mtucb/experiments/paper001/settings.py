"""Paper 001's two problem families and what the algorithms are told about them.

* Synthetic (Section 5, Appendix D): ``N`` tasks ``theta_i = theta_0 + delta u_i`` in
  ``d = 4``, ``10^4`` actions on the sphere of radius 10, unit noise; a new random
  problem per repetition. The algorithms get the exact ``B = max_i ||theta_i||`` and
  ``epsilon`` (Section 5).
* MHC-I (Section 5, ``botorch_mtucb.problems.mhc``): one task per allele. ``B = 5`` as
  in the authors' reference code (the paper gives none), ``epsilon = 0.3`` (Section 5),
  and the algorithms are told the observation noise, 0.01 (the authors' code): the
  widths are then ``sigma`` times the widths for ``B / sigma``, almost pure bias
  terms. The authors' code uses ``R = 1`` in the widths instead (also valid, since
  0.01-sub-Gaussian noise is 1-sub-Gaussian), which widens every width.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from botorch_mtucb.problems import mhc_binding_problem, multitask_synthetic_problem
from botorch_mtucb.problems.mhc import MHC_RKHS_NORM_BOUND, MHC_TASK_DEVIATION
from botorch_mtucb.problems.task_arms import MultiTaskArmProblem

SYNTHETIC_DIM = 4


class Setting:
    """One problem family and what the algorithms are told about it.

    Args:
        name: The family's label (the key of its problem in ``summary.json``).
        make_problem: ``rep -> MultiTaskArmProblem``, repetition ``rep``'s problem
            (built once per ``rep`` and cached).
        rkhs_norm_bound: ``problem -> B``, the norm bound the widths assume.
        task_deviation: ``problem -> epsilon``, the task deviation the widths assume.
        noise_std: The sub-Gaussian noise level ``sigma`` the widths assume.

    Example:
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> setting = synthetic_setting(3, 0.2)
        >>> setting.name, setting.problem(0).num_tasks
        ('N=3,delta=0.2', 3)
    """

    def __init__(
        self,
        name: str,
        make_problem: Callable[[int], MultiTaskArmProblem],
        rkhs_norm_bound: Callable[[MultiTaskArmProblem], float],
        task_deviation: Callable[[MultiTaskArmProblem], float],
        noise_std: float,
    ) -> None:
        self.name = name
        self._make_problem = make_problem
        self._cache: dict[int, MultiTaskArmProblem] = {}
        self.rkhs_norm_bound = rkhs_norm_bound
        self.task_deviation = task_deviation
        self.noise_std = noise_std

    def problem(self, rep: int) -> MultiTaskArmProblem:
        """The (cached) problem of repetition ``rep``."""
        if rep not in self._cache:
            self._cache[rep] = self._make_problem(rep)
        return self._cache[rep]


def synthetic_setting(num_tasks: int, deviation_weight: float) -> Setting:
    """The synthetic family with ``N = num_tasks`` and deviation weight ``delta``;
    repetition ``rep`` draws its problem from seed ``1000 N + rep``.

    Example:
        >>> from botorch_mtucb.experiments.paper001.settings import synthetic_setting
        >>> synthetic_setting(5, 0.4).problem(1).num_tasks
        5
    """
    return Setting(
        f"N={num_tasks},delta={deviation_weight}",
        lambda rep: multitask_synthetic_problem(
            num_tasks, deviation_weight, dim=SYNTHETIC_DIM, seed=1000 * num_tasks + rep
        ),
        lambda problem: problem.rkhs_norm_bound,
        lambda problem: problem.task_deviation,
        noise_std=1.0,
    )


def mhc_setting(data: str | Path | None = None) -> Setting:
    """The MHC-I family (the packaged data, or ``data``: a file with the same keys); the
    same problem in every repetition, ``B = 5``, ``epsilon = 0.3``.

    Raises:
        ValueError: If ``data`` lacks one of the required keys.

    Example:
        >>> from botorch_mtucb.experiments.paper001.settings import mhc_setting
        >>> mhc_setting().problem(0).num_tasks
        5
    """
    problem = mhc_binding_problem(data)
    return Setting(
        "mhc",
        lambda rep: problem,
        lambda _: MHC_RKHS_NORM_BOUND,
        lambda _: MHC_TASK_DEVIATION,
        noise_std=problem.noise_std,
    )
