"""Checks of an analytic acquisition's inputs (``acquisition.input_checks``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from botorch_mtucb.acquisition.input_checks import check_candidates


def test_check_candidates_accepts_batch_x_1_x_d_only():
    X = torch.zeros(4, 3, 1, 2)
    assert check_candidates(X, dim=2) is X and check_candidates(torch.zeros(1, 2)).shape == (1, 2)
    with pytest.raises(ValueError, match=r"^X must have shape batch_shape x 1 x d: q = 1 is re"):
        check_candidates(torch.zeros(4, 2, 2))
    with pytest.raises(ValueError, match=r"^X must have shape batch_shape x 1 x 5 \(d = 5"):
        check_candidates(torch.zeros(4, 1, 2), dim=5)
    with pytest.raises(ValueError, match=r"^X must have shape batch_shape x 1 x d \(one cand"):
        check_candidates(torch.zeros(2))
    with pytest.raises(TypeError, match=r"^X must be a torch.Tensor of shape batch_shape x 1"):
        check_candidates(np.zeros((1, 1, 2)))
