r"""The baselines' own stopping rules, for the ``certified-stopping`` benchmark.

* ``ucb_lcb_regret_bound`` / ``makarova_beta``: Makarova et al. 2022 ("Automatic
  termination for hyperparameter optimization", AutoML-Conf 2022): the upper bound on
  the simple regret of the incumbent that defines their termination criterion, written
  there for minimization as
  ``r_hat_t = min_{x in G_t} ucb_t(x) - min_{x in D} lcb_t(x)`` (``G_t``: the evaluated
  points), with ``ucb_t / lcb_t = mu_t +- sqrt(beta_t) sigma_t`` of the GP posterior and
  GP-UCB's ``beta_t = 2 log(|D| t^2 pi^2 / (6 delta))`` (Srinivas et al. 2010, Theorem 1)
  scaled by ``1/5``, as in Srinivas et al.'s experiments and in Makarova et al.'s. The
  rule stops when ``r_hat_t`` is below a threshold (theirs: the statistical error of the
  cross-validation estimate; here the benchmark's ``epsilon``, the same for every rule).
  For maximization, the mirror image: ``r_hat_t = max_{x in D} ucb_t(x) - max_{x in G_t}
  lcb_t(x)``, the incumbent ``argmax_{x in G_t} lcb_t(x)``. On a box ``D`` is a uniform
  sample (plus ``G_t``), as in the reference implementation, and ``|D|`` is taken as
  ``d``, as BoFire's implementation of the rule does.
* ``ax_improvement_stop``: Ax's ``ImprovementGlobalStoppingStrategy`` for one objective
  without constraints (``ax.global_stopping.strategies.improvement``), rewritten on
  arrays: with ``n >= max(min_trials, window_size)`` completed trials, stop when
  ``|best_n - best_{n - window_size + 1}| / IQR(y_1..n) < improvement_bar`` (``best_k``:
  the running best of the first ``k`` values, IQR by ``numpy.percentile``); the test
  suite checks it against Ax's own class on the same trials.

Neither rule comes with a guarantee under the benchmark's assumptions: ``beta_t / 5`` is
a heuristic scaling and the improvement rule a heuristic; the benchmark measures how
often each stops early.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

MAKAROVA_BETA_SCALE = 0.2  # Srinivas et al.'s experiments scale beta_t down by 5
AX_MIN_TRIALS, AX_WINDOW_SIZE, AX_IMPROVEMENT_BAR = 5, 5, 0.1  # Ax's defaults (but min_trials)


def makarova_beta(num_points: int, t: int, delta: float, scale: float = MAKAROVA_BETA_SCALE):
    r"""``beta_t = scale * 2 log(|D| t^2 pi^2 / (6 delta))`` (module docstring).

    Args:
        num_points: ``|D|`` (on a box: ``d``).
        t: Observations so far (``>= 1``).
        delta: The confidence parameter in ``(0, 1)``.
        scale: ``1/5`` by default.

    Returns:
        ``beta_t`` (a float).

    Raises:
        ValueError: For ``num_points`` or ``t`` below 1 or ``delta`` outside ``(0, 1)``.

    Example:
        >>> import math
        >>> from botorch_mtucb.benchmarks.stopping_baselines import makarova_beta
        >>> round(makarova_beta(100, 10, 0.1), 6) == round(0.4 * math.log(1e4 * math.pi**2 / 0.6), 6)
        True
    """
    if num_points < 1 or t < 1:
        raise ValueError(f"num_points and t must be >= 1, got {num_points}, {t}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return scale * 2.0 * math.log(num_points * t**2 * math.pi**2 / (6.0 * delta))


def ucb_lcb_regret_bound(
    mean: Tensor, std: Tensor, evaluated: Tensor, beta: float
) -> tuple[float, int]:
    r"""Makarova et al.'s bound for maximization, ``max_D ucb - max_{G_t} lcb``.

    Args:
        mean, std: ``N`` posterior means and standard deviations on the points of ``D``.
        evaluated: ``N`` booleans: which points of ``D`` are in ``G_t`` (at least one).
        beta: ``beta_t``.

    Returns:
        ``r_hat_t`` and the index (in ``D``) of the incumbent ``argmax_{G_t} lcb_t``.

    Raises:
        ValueError: If no point is evaluated or the shapes differ.

    Example:
        >>> import torch
        >>> from botorch_mtucb.benchmarks.stopping_baselines import ucb_lcb_regret_bound
        >>> mean = torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64)
        >>> std = torch.tensor([1.0, 0.1, 0.0], dtype=torch.float64)
        >>> bound, incumbent = ucb_lcb_regret_bound(mean, std, torch.tensor([False, True, True]), 4.0)
        >>> round(bound, 12), incumbent  # max(0 + 2, 1.2, 0.5) - max(1 - 0.2, 0.5)
        (1.2, 1)
    """
    if mean.shape != std.shape or mean.shape != evaluated.shape or mean.dim() != 1:
        raise ValueError("mean, std and evaluated must be N vectors of one size")
    if not bool(evaluated.any()):
        raise ValueError("evaluated must mark at least one point")
    root = math.sqrt(beta)
    upper, lower = mean + root * std, mean - root * std
    masked = torch.where(evaluated, lower, torch.full_like(lower, -math.inf))
    incumbent = int(masked.argmax())
    return float(upper.max() - lower[incumbent]), incumbent


def ax_improvement_stop(
    values: np.ndarray | list[float],
    min_trials: int = AX_MIN_TRIALS,
    window_size: int = AX_WINDOW_SIZE,
    improvement_bar: float = AX_IMPROVEMENT_BAR,
) -> bool:
    r"""Ax's improvement rule on the objective values (maximized) of the completed
    trials in order (module docstring).

    Example:
        >>> from botorch_mtucb.benchmarks.stopping_baselines import ax_improvement_stop
        >>> ax_improvement_stop([0.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0])  # no gain in the window
        True
        >>> ax_improvement_stop([0.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0])
        False
    """
    values = np.asarray(values, dtype=float)
    if values.size < max(min_trials, window_size) or values.size <= 1:
        return False
    running = np.maximum.accumulate(values)
    q3, q1 = np.percentile(values, [75, 25])
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.abs((running[-1] - running[-window_size]) / (q3 - q1))
    return bool(relative < improvement_bar)
