"""Shared test setup: the helper modules ``oracles`` and ``cases`` sit next to this file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from cases import DTYPES  # noqa: E402


@pytest.fixture(params=DTYPES, ids=lambda d: str(d).split(".")[-1])
def dtype(request) -> torch.dtype:
    """float64 and float32."""
    return request.param
