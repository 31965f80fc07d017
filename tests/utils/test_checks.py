"""Generic argument checks (``utils.checks``): numbers, counts, tensors, working
precision, kernel values and computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from botorch_mtucb.utils.checks import (
    as_float,
    as_int,
    as_real_tensor,
    check_finite_result,
    check_kernel_values,
    check_working_precision,
)


def test_helpers_directly():
    assert as_float(torch.tensor([2.5], dtype=torch.float32), "x") == 2.5
    assert as_float(np.float32(0.5), "x") == 0.5
    assert math.isinf(as_float(math.inf, "x", finite=False))
    with pytest.raises(ValueError, match="^x must be finite"):
        as_float(math.nan, "x")
    with pytest.raises(
        ValueError, match=r"^x must be a single number, got a tensor of shape \(2,\)"
    ):
        as_float(torch.ones(2), "x")
    assert as_int(np.int32(4), "n", 1) == 4
    with pytest.raises(TypeError, match="^n must be an int >= 1, got True"):
        as_int(True, "n", 1)
    for dtype in (torch.float32, torch.float64):
        assert as_real_tensor(torch.ones(2, dtype=dtype), "g").dtype == dtype
    assert as_real_tensor(torch.ones(2, dtype=torch.long), "g").dtype == torch.float64
    assert as_real_tensor([1, 2], "g").dtype == torch.float64
    with pytest.raises(TypeError, match="^g must be a real number or a real tensor"):
        as_real_tensor(["1", 2], "g")


@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16), ids=str)
def test_check_working_precision_refuses_half_precision(dtype):
    for accepted in (torch.float32, torch.float64, torch.long):
        value = torch.zeros(2, dtype=accepted)
        assert check_working_precision(value, "train_X") is value
    with pytest.raises(TypeError, match=rf"^train_X must be float32 or float64, got {dtype}"):
        check_working_precision(torch.zeros(2, dtype=dtype), "train_X")


@pytest.mark.parametrize("dtype", (torch.float64, torch.float32), ids=str)
def test_check_kernel_values_names_the_argument_and_the_range(dtype):
    X = torch.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=dtype)
    check_kernel_values(torch.ones(2, 2, dtype=dtype), X, "train_X")  # finite: no error
    limit = math.sqrt(torch.finfo(dtype).max / 2) / 2  # d = 2
    for bad in (math.nan, math.inf):
        values = torch.tensor([[1.0, bad], [bad, 1.0]], dtype=dtype)
        with pytest.raises(ValueError) as raised:
            check_kernel_values(values, X, "X")
        message = str(raised.value)
        assert message.startswith("X is outside the range where the kernel is finite")
        assert "entries lie in [0, 3]" in message and f"{limit:.3g} lengthscales" in message
        assert f"overflow {dtype}" in message and "(d = 2)" in message


def test_check_finite_result_raises_a_floating_point_error_naming_the_value():
    values = torch.tensor([[1.0, 2.0], [3.0, math.nan], [math.inf, 0.0]], dtype=torch.float64)
    inputs = torch.tensor([[0.1], [0.2], [0.3]], dtype=torch.float64)
    finite = torch.ones(3, 2)
    assert check_finite_result(finite, "upper bound") is finite
    with pytest.raises(FloatingPointError, match=r"^the upper bound is not finite at 2 of 6 "
                       r"values \(first at input \[0.2\]\)"):  # fmt: skip
        check_finite_result(values, "upper bound", inputs)
    with pytest.raises(
        FloatingPointError, match=r"^the lower bound is not finite at 2 of 6 values:"
    ):
        check_finite_result(values, "lower bound")
