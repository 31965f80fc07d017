"""Issue 10's table: a 10-iteration BoTorch loop for every pair (acquisition x model),
float32 and float64, ``q = 1`` and ``q = 3`` sequential (GP-BUCB pending points:
``optimize_acqf_discrete``, and ``optimize_acqf(sequential=True)`` on the last iteration,
through the gradients), with the values checked against NumPy on the first and the last
iteration: ``mean + width * std`` by hand from the model's joint posterior,
conditioned on the pending points by dense Gaussian conditioning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from cases import tolerances
from multi_output_models import MODELS, build_model, model_task, objective, pending_oracle

from botorch_mtucb.acquisition import (
    ScalarizedMultiTaskUCB,
    ScalarizedObjectiveUCB,
    TaskConditionedUCB,
)

pytestmark = pytest.mark.filterwarnings("ignore::botorch.exceptions.warnings.InputDataWarning")

ACQUISITIONS = ("ScalarizedMultiTaskUCB", "TaskConditionedUCB", "ScalarizedObjectiveUCB")
WIDTH = 2.0
WEIGHTS = np.array([0.4, 0.6])
TASK = 1
ITERATIONS = 10
CHECKED = (0, ITERATIONS - 1)


def _acquisition(name: str, model, X_pending=None):
    weights = torch.tensor(WEIGHTS, dtype=torch.float64)
    if name == "ScalarizedMultiTaskUCB":
        return ScalarizedMultiTaskUCB(model, weights, WIDTH, X_pending=X_pending)
    if name == "ScalarizedObjectiveUCB":
        return ScalarizedObjectiveUCB(model, weights, WIDTH, X_pending=X_pending)
    return TaskConditionedUCB(model, TASK, WIDTH, X_pending=X_pending)


def _expected(name: str, mean: np.ndarray, covariance: np.ndarray) -> float:
    """Paper 000 eq. (2), Paria et al.'s scalarized UCBs, paper 001 eq. (7)."""
    std = np.sqrt(np.diag(covariance))
    if name == "ScalarizedMultiTaskUCB":
        largest = np.linalg.eigvalsh(covariance)[-1]
        return WEIGHTS @ mean + np.linalg.norm(WEIGHTS) * WIDTH * np.sqrt(largest)
    if name == "ScalarizedObjectiveUCB":
        return WEIGHTS @ (mean + WIDTH * std)
    return mean[TASK] + WIDTH * std[TASK]


def _check_values(acquisition: str, model_name: str, model, points, X_pending, dtype):
    """The acquisition at ``points`` (``k x d``) with ``X_pending`` against NumPy."""
    acqf = _acquisition(acquisition, model, X_pending)
    values = acqf(points.unsqueeze(-2)).detach().double().numpy()
    task = model_task(model_name) if acquisition == "TaskConditionedUCB" else None
    pending = points[:0] if X_pending is None else X_pending
    expected = [
        _expected(acquisition, *pending_oracle(model, x[None], pending, task)) for x in points
    ]
    np.testing.assert_allclose(values, expected, **tolerances(dtype))


@pytest.mark.parametrize("q", (1, 3))
@pytest.mark.parametrize("model_name", MODELS)
@pytest.mark.parametrize("acquisition", ACQUISITIONS)
def test_ten_iteration_loop(acquisition, model_name, q, dtype):
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(4, 2, generator=generator, dtype=torch.float64).to(dtype)
    Y = objective(X)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=dtype)
    probes = torch.rand(3, 2, generator=generator, dtype=torch.float64).to(dtype)
    torch.manual_seed(0)
    for iteration in range(ITERATIONS):
        model = build_model(model_name, X, Y)
        acqf = _acquisition(acquisition, model)
        if iteration == ITERATIONS - 1:  # gradients: L-BFGS-B through the acquisition
            candidates, _ = optimize_acqf(
                acqf,
                bounds,
                q=q,
                num_restarts=1,
                raw_samples=8,
                sequential=True,
                options={"maxiter": 3},
                retry_on_optimization_warning=False,
            )
        else:
            choices = torch.rand(32, 2, generator=generator, dtype=torch.float64).to(dtype)
            candidates, _ = optimize_acqf_discrete(acqf, q=q, choices=choices)
        assert candidates.shape == (q, 2) and candidates.dtype == dtype
        assert ((candidates >= 0) & (candidates <= 1)).all()
        assert acqf.X_pending is None  # the optimizers restore it
        if q > 1:
            assert torch.pdist(candidates.double()).min() > 0  # k distinct points
        if iteration in CHECKED:
            _check_values(acquisition, model_name, model, probes, None, dtype)
            if q > 1:  # the last point as the optimizer scored it: the others pending
                _check_values(
                    acquisition, model_name, model, candidates[-1:], candidates[:-1], dtype
                )
        X, Y = torch.cat([X, candidates]), torch.cat([Y, objective(candidates)])
    assert X.shape[0] == 4 + ITERATIONS * q
