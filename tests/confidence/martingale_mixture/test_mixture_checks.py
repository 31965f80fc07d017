"""Checks of a martingale-mixture bound's inputs (``confidence.martingale_mixture.
mixture_checks``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from botorch_mtucb.confidence.martingale_mixture.mixture_checks import (
    check_alphas,
    check_training_data,
)


def test_check_alphas_accepts_a_number_or_a_one_dimensional_grid_only():
    expected = torch.tensor([0.5], dtype=torch.float64)
    for one in (0.5, torch.tensor(0.5), [0.5], np.float32(0.5)):
        torch.testing.assert_close(check_alphas(one), expected)
    grid = check_alphas(torch.tensor([0.1, 1.0], dtype=torch.float32))
    assert grid.dtype == torch.float64 and grid.shape == (2,)
    for bad in (torch.ones(2, 2), [[0.1, 0.2]], np.ones((1, 3)), torch.ones(1, 1, 1)):
        with pytest.raises(ValueError, match=r"^alphas must be a number or a 1-d grid of numbers"):
            check_alphas(bad)
    with pytest.raises(ValueError, match="at least one value"):
        check_alphas([])
    with pytest.raises(ValueError, match="finite and > 0"):
        check_alphas([0.1, -1.0])


def test_check_training_data_names_the_non_finite_argument():
    X, Y = torch.zeros(3, 2), torch.zeros(3, 1)
    check_training_data(X, Y)
    for name, bad_X, bad_Y in (("train_X", X.clone(), Y), ("train_Y", X, Y.clone())):
        (bad_X if name == "train_X" else bad_Y)[1, 0] = math.inf
        with pytest.raises(ValueError, match=rf"^{name} must not contain NaN or inf, got 1 non"):
            check_training_data(bad_X, bad_Y)
    with pytest.raises(TypeError, match="^train_Y must be a real tensor"):
        check_training_data(X, torch.zeros(3, 1, dtype=torch.bool))
