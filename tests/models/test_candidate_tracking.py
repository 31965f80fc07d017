"""``track_candidates`` (``models.candidate_tracking``): its arguments are checked with
messages that name them, and the memory cap is checked before ``V`` is computed."""

from __future__ import annotations

import pytest
import torch
from cases import build_case
from gpytorch.kernels import RBFKernel

from botorch_mtucb.models import NystromVectorValuedGP, VectorValuedGP


def test_bad_arguments():
    model = build_case("icm", torch.float64).build()
    with pytest.raises(TypeError, match="points"):
        model.track_candidates([[0.0, 0.0]])
    with pytest.raises(ValueError, match="points"):
        model.track_candidates(torch.zeros(3, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="points"):
        model.track_candidates(torch.zeros(0, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN"):
        model.track_candidates(torch.full((2, 2), float("nan"), dtype=torch.float64))
    with pytest.raises(TypeError, match="max_entries"):
        model.track_candidates(torch.zeros(2, 2, dtype=torch.float64), max_entries=1.5)
    with pytest.raises(ValueError, match="max_entries"):
        model.track_candidates(torch.zeros(2, 2, dtype=torch.float64), max_entries=0)


def test_the_memory_cap_is_checked_before_anything_is_computed(monkeypatch):
    model = build_case("icm", torch.float64).build()

    def fail(*args):
        raise AssertionError("V was computed although it exceeds max_entries")

    monkeypatch.setattr(model, "_icm_columns", fail)
    points = torch.rand(50, 2, dtype=torch.float64)
    assert not model.track_candidates(points, max_entries=1000)  # 3 x 37 x 50 > 1000
    with pytest.raises(AssertionError, match="V was computed"):
        model.track_candidates(points)


def test_half_precision_candidates_are_refused():
    X = torch.rand(4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = torch.sin(X)
    B = torch.eye(2, dtype=torch.float64)
    for model in (VectorValuedGP(X, Y, RBFKernel(), B, 0.1),
                  NystromVectorValuedGP(X, Y, RBFKernel(), B, 0.1)):  # fmt: skip
        with pytest.raises(TypeError, match="points must be float32 or float64"):
            model.track_candidates(torch.rand(3, 2).half())
