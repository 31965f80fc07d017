"""Torch threads pinned for a block, the caller's setting restored after."""

from __future__ import annotations

import pytest
import torch

from botorch_mtucb.utils.threads import current_run_threads, pinned_threads, run_threads


def test_pinned_threads_restores_the_callers_setting():
    original = torch.get_num_threads()
    torch.set_num_threads(2)  # the caller's setting, other than the pinned one
    try:
        with pinned_threads(1) as threads:
            assert threads == torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pinned_threads(0) as threads:  # <= 0: keep the caller's number
            assert threads == 2
        with pytest.raises(RuntimeError), pinned_threads(1):
            raise RuntimeError
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(original)


def test_run_threads_sets_the_pinned_number_for_its_block_only():
    original = torch.get_num_threads()
    assert current_run_threads() == 1
    try:
        with run_threads(2):
            assert current_run_threads() == 2
            with pinned_threads() as threads:  # None: the run's number
                assert threads == torch.get_num_threads() == 2
            with run_threads(1), pinned_threads() as threads:  # nested: the inner one
                assert threads == 1
            assert current_run_threads() == 2
        assert current_run_threads() == 1
        assert torch.get_num_threads() == original
    finally:
        torch.set_num_threads(original)
