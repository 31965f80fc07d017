r"""Hyperparameter transfer: an RBF SVM's validation score on a grid of ``(C, gamma)`` for
five data sets bundled with scikit-learn, as a multi-task problem on a finite domain.

Each data set is a task; the inputs are the grid points ``(log10 C, log10 gamma)``
scaled to ``[0, 1]^2``, the same for every task, and ``f_i(x)`` is task ``i``'s mean
5-fold cross-validated score (accuracy; ``R^2`` clipped at -1 for ``diabetes``). The
surfaces share their shape (too small ``C`` or too large ``gamma`` fail everywhere) and
differ in where the optimum lies, which is what transfer can exploit. The data, their
provenance (``data/make_hpo_transfer.py``, which reproduces the shipped file) and
descriptive statistics: ``data/hpo_transfer.npz`` and ``data/HPO_TRANSFER.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from botorch_mtucb.problems.task_arms import MultiTaskArmProblem

HPO_REQUIRED_KEYS = ("log10_c", "log10_gamma", "scores", "tasks")


def default_hpo_transfer_path() -> Path:
    """The path of the packaged ``hpo_transfer.npz``.

    Example:
        >>> from botorch_mtucb.problems.hpo_transfer import default_hpo_transfer_path
        >>> default_hpo_transfer_path().name
        'hpo_transfer.npz'
    """
    return Path(str(resources.files("botorch_mtucb.problems") / "data" / "hpo_transfer.npz"))


@dataclass(frozen=True)
class HPOTransferData:
    r"""The grid and every task's scores.

    Attributes:
        inputs: ``N x 2`` grid points in ``[0, 1]^2`` (``N = |C| |gamma|``, ``C`` major),
            float64.
        scores: ``n x N`` scores, one row per task (float64).
        tasks: The ``n`` task names (the scikit-learn data sets).
        log10_c, log10_gamma: The grid's axes (``|C|``, ``|gamma|``).

    Example:
        >>> from botorch_mtucb.problems.hpo_transfer import load_hpo_transfer
        >>> data = load_hpo_transfer()
        >>> data.tasks[:2], tuple(data.inputs.shape), tuple(data.scores.shape)
        (('iris', 'wine'), (121, 2), (5, 121))
    """

    inputs: Tensor
    scores: Tensor
    tasks: tuple[str, ...]
    log10_c: Tensor
    log10_gamma: Tensor

    def task_index(self, name: str) -> int:
        """The row of task ``name``.

        Raises:
            ValueError: For an unknown name (naming the known ones).
        """
        if name not in self.tasks:
            raise ValueError(f"task must be one of {list(self.tasks)}, got {name!r}")
        return self.tasks.index(name)


def load_hpo_transfer(path: str | Path | None = None) -> HPOTransferData:
    """Read ``hpo_transfer.npz`` (default: the packaged file).

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        ValueError: For a file that is not such an archive: missing keys
            (``HPO_REQUIRED_KEYS``), scores not ``tasks x |C| x |gamma|`` or not finite.

    Example:
        >>> from botorch_mtucb.problems.hpo_transfer import load_hpo_transfer
        >>> data = load_hpo_transfer()
        >>> bool(((data.inputs >= 0) & (data.inputs <= 1)).all())
        True
    """
    path = Path(default_hpo_transfer_path() if path is None else path)
    if not path.exists():
        raise FileNotFoundError(f"no hyperparameter-transfer data at {path}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (OSError, ValueError) as error:
        raise ValueError(f"{path} is not a readable .npz archive ({error})") from error
    missing = [key for key in HPO_REQUIRED_KEYS if key not in arrays]
    if missing:
        raise ValueError(f"{path} lacks the arrays {missing} (needs {list(HPO_REQUIRED_KEYS)})")
    c, gamma = arrays["log10_c"].astype(float), arrays["log10_gamma"].astype(float)
    scores, tasks = arrays["scores"], tuple(str(t) for t in arrays["tasks"])
    if scores.shape != (len(tasks), len(c), len(gamma)):
        raise ValueError(
            f"{path}: scores must be tasks x |C| x |gamma| = {(len(tasks), len(c), len(gamma))}, "
            f"got {scores.shape}"
        )
    if not np.isfinite(scores).all() or not (np.isfinite(c).all() and np.isfinite(gamma).all()):
        raise ValueError(f"{path}: the grid and the scores must be finite")
    grid_c, grid_gamma = np.meshgrid(c, gamma, indexing="ij")
    unit = np.stack([_unit(grid_c.reshape(-1), c), _unit(grid_gamma.reshape(-1), gamma)], axis=-1)
    return HPOTransferData(
        inputs=torch.as_tensor(unit, dtype=torch.float64),
        scores=torch.as_tensor(scores.reshape(len(tasks), -1), dtype=torch.float64),
        tasks=tasks,
        log10_c=torch.as_tensor(c, dtype=torch.float64),
        log10_gamma=torch.as_tensor(gamma, dtype=torch.float64),
    )


def _unit(values: np.ndarray, axis: np.ndarray) -> np.ndarray:
    low, high = float(axis.min()), float(axis.max())
    return (values - low) / (high - low) if high > low else np.zeros_like(values)


def hpo_transfer_problem(
    target: str,
    sources: Sequence[str] = (),
    negated_sources: Sequence[str] = (),
    noise_std: float = 0.0,
    path: str | Path | None = None,
) -> MultiTaskArmProblem:
    r"""A transfer problem on the grid: task 0 the ``target``, then the ``sources``, then
    the ``negated_sources`` with their scores times -1 (anti-correlated tasks, to measure
    negative transfer); every task's arms are the ``N x 2`` grid points.

    Args:
        target: The task to optimize (a name of ``HPOTransferData.tasks``).
        sources: Related tasks whose data are shared.
        negated_sources: Tasks entered as ``-f`` (named ``"-name"``).
        noise_std: Gaussian observation noise (``>= 0``; the scores are exact).
        path: The data file (default: the packaged one).

    Returns:
        A ``MultiTaskArmProblem`` with ``1 + len(sources) + len(negated_sources)`` tasks.

    Raises:
        ValueError: For an unknown task name, a task given twice (the target among the
            sources included), or a negative ``noise_std``.

    Example:
        >>> from botorch_mtucb.problems.hpo_transfer import hpo_transfer_problem
        >>> problem = hpo_transfer_problem("digits", ["breast_cancer", "wine"], ["iris"])
        >>> problem.num_tasks, problem.task_names
        (4, ['digits', 'breast_cancer', 'wine', '-iris'])
        >>> round(problem.optimum(0), 4)  # digits' best 5-fold accuracy
        0.956
    """
    data = load_hpo_transfer(path)
    names = [target, *sources, *negated_sources]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(
            f"each task may appear once (target, sources, negated), got {repeated} twice"
        )
    rows = [data.task_index(name) for name in names]
    signs = [1.0] * (1 + len(sources)) + [-1.0] * len(negated_sources)
    values = [sign * data.scores[row] for sign, row in zip(signs, rows)]
    labels = [target, *sources, *(f"-{name}" for name in negated_sources)]
    return MultiTaskArmProblem([data.inputs] * len(names), values, noise_std, task_names=labels)
