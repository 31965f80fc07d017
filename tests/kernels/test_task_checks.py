"""Checks of the task structure (``kernels.task_checks``)."""

from __future__ import annotations

import pytest
import torch

from botorch_mtucb.kernels.task_checks import check_task_indices


def test_check_task_indices_keeps_the_shape_and_refuses_booleans():
    indices = torch.tensor([[[0.0], [2.0]], [[1.0], [1.0]]])  # batch x m x 1, whole floats
    checked = check_task_indices(indices, 3, "x1")
    assert checked.dtype == torch.long and checked.shape == indices.shape
    assert checked.reshape(-1).tolist() == [0, 2, 1, 1]
    rows = check_task_indices(torch.tensor([[1], [0]]), 2, "train_tasks", num_rows=2)
    assert rows.tolist() == [1, 0]  # one per row: flat, as check_tasks
    assert check_task_indices(torch.zeros(0, 1), 2, "x1").shape == (0, 1)
    with pytest.raises(TypeError, match=r"^x1 must hold integer task indices .*torch.bool"):
        check_task_indices(torch.tensor([[True]]), 3, "x1")
    with pytest.raises(TypeError, match=r"^x1 must hold integer task indices .*complex"):
        check_task_indices(torch.tensor([[1 + 0j]]), 3, "x1")
    with pytest.raises(TypeError, match=r"^x1 must be a torch.Tensor of task indices, got list"):
        check_task_indices([[0]], 3, "x1")
    with pytest.raises(ValueError, match=r"^x1 must lie in \[0, 2\], got values in \[-1, 4\]"):
        check_task_indices(torch.tensor([[4], [-1]]), 3, "x1")
    with pytest.raises(ValueError, match=r"^x1 must hold whole-number task indices"):
        check_task_indices(torch.tensor([[1.7]]), 3, "x1")
    with pytest.raises(ValueError, match=r"^train_tasks must have shape \(3,\)"):
        check_task_indices(torch.tensor([0, 1]), 3, "train_tasks", num_rows=3)
