"""Shared test setup: the helper modules ``oracles`` and ``cases`` sit next to this file."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from cases import DTYPES  # noqa: E402


@pytest.fixture(params=DTYPES, ids=lambda d: str(d).split(".")[-1])
def dtype(request) -> torch.dtype:
    """float64 and float32."""
    return request.param


@pytest.fixture(autouse=True)
def _seeded_random_state():
    """Every test starts from the same global random state (torch, NumPy, ``random``),
    whatever ran before it, so that a test that draws without its own generator (BoTorch's
    fit retries, ``torch.rand`` in a helper) gives the same result alone or in the suite.
    ``BOTORCH_MTUCB_TEST_SEED=k`` starts them from seed ``k`` instead (default 0): a test
    that passes for one seed only compares round-off or luck, not the formula."""
    seed = int(os.environ.get("BOTORCH_MTUCB_TEST_SEED", "0"))
    torch.manual_seed(seed)
    np.random.seed(seed)  # noqa: NPY002 (the legacy global state that code may draw from)
    random.seed(seed)
