r"""Provenance of ``hpo_transfer.npz``: validation scores of an RBF support vector machine
on a grid of its two hyperparameters, for five data sets bundled with scikit-learn.

Each data set is one task of a hyperparameter-transfer problem (the same two inputs, a
related but different score surface). For every task and every grid point
``(log10 C, log10 gamma)`` the script computes the mean score of 5-fold cross-validation
(``cross_val_score``, folds without shuffling: deterministic) of
``make_pipeline(StandardScaler(), SVC(C=C, gamma=gamma))`` (classification: accuracy) or
``make_pipeline(StandardScaler(), SVR(C=C, gamma=gamma))`` on the standardized target
(``diabetes``: coefficient of determination ``R^2``, clipped below at -1 so that the
failures of tiny ``C`` do not dominate the scale).

The tasks (all bundled with scikit-learn, no download): ``iris`` (150 x 4, 3 classes),
``wine`` (178 x 13, 3 classes), ``breast_cancer`` (569 x 30, 2 classes), ``digits``
(1797 x 64, 10 classes) and ``diabetes`` (442 x 10, regression).

Usage (from the repository root; needs ``scikit-learn``)::

    python botorch_mtucb/problems/data/make_hpo_transfer.py --output hpo_transfer.npz

The shipped file was made with scikit-learn 1.9.1 and the grid ``GRID_SIZE x GRID_SIZE``
below; ``tests/problems/test_hpo_transfer.py`` recomputes a subset and compares it with
the shipped values.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Sequence

import numpy as np

GRID_SIZE = 11
LOG10_C = np.linspace(-2.0, 3.0, GRID_SIZE)
LOG10_GAMMA = np.linspace(-4.0, 1.0, GRID_SIZE)
TASKS = ("iris", "wine", "breast_cancer", "digits", "diabetes")
FOLDS = 5
R2_FLOOR = -1.0


def task_scores(task: str, log10_c: Sequence[float], log10_gamma: Sequence[float]) -> np.ndarray:
    """The cross-validated scores of ``task`` at every ``(log10 C, log10 gamma)`` pair
    (``len(log10_c) x len(log10_gamma)``)."""
    from sklearn import datasets
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, SVR

    X, y = getattr(datasets, f"load_{task}")(return_X_y=True)
    regression = task == "diabetes"
    if regression:
        y = (y - y.mean()) / y.std()
    scores = np.empty((len(log10_c), len(log10_gamma)))
    for i, lc in enumerate(log10_c):
        for j, lg in enumerate(log10_gamma):
            model = (SVR if regression else SVC)(C=10.0**lc, gamma=10.0**lg)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = cross_val_score(make_pipeline(StandardScaler(), model), X, y, cv=FOLDS)
            scores[i, j] = max(float(value.mean()), R2_FLOOR) if regression else value.mean()
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="hpo_transfer.npz")
    args = parser.parse_args(argv)
    import sklearn

    scores = np.stack([task_scores(task, LOG10_C, LOG10_GAMMA) for task in TASKS])
    np.savez_compressed(
        args.output,
        log10_c=LOG10_C,
        log10_gamma=LOG10_GAMMA,
        scores=scores,
        tasks=np.array(TASKS),
        sklearn_version=np.array(sklearn.__version__),
    )
    print(
        f"{args.output}: scores {scores.shape} (tasks x C x gamma), sklearn {sklearn.__version__}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
