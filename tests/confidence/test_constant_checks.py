"""The papers' constants (``confidence.constant_checks``) and the other numeric arguments
of the confidence layer: every numeric argument of the public width and information-gain
functions rejects strings, ``None``, booleans and complex numbers with a ``TypeError``
naming it; shapes that do not broadcast and NaN/inf data raise a ``ValueError`` naming
the argument."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from gpytorch.kernels import RBFKernel

from botorch_mtucb.confidence import (
    MartingaleMixtureBound,
    ay_gp_ucb_width,
    bkb_width,
    dragonfly_ucb_width,
    effective_dimension,
    gp_ucb_width,
    igp_ucb_width,
    information_gain,
    information_gain_increment,
    mt_bkb_accuracy,
    mt_bkb_width,
    mt_kb_width,
    multitask_information_gain,
    multitask_regularization,
    multitask_widths,
    single_task_information_gains,
    sketch_distortion,
    task_effective_dimensions,
    task_kernel_matrix,
    theorem2_kernel_parameter,
)
from botorch_mtucb.confidence.constant_checks import (
    check_delta,
    check_eps,
    check_finite_width,
    check_task_deviation,
    check_trace_regularization,
)

BAD_NUMBERS = ("3", b"3", None, True, False, 1 + 2j, np.bool_(True), [1.0, "a"], object())
BAD_TENSORS = (torch.tensor(True), torch.tensor(1 + 2j))


def _kernel(dtype=torch.float64):
    kernel = RBFKernel().to(dtype)
    kernel.lengthscale = 0.4
    return kernel


def _task_data(dtype=torch.float64):
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(7, 2, generator=generator, dtype=dtype)
    tasks = torch.tensor([0, 1, 2, 0, 1, 2, 0])
    return X, tasks


_GAIN_MODEL = SimpleNamespace(information_gain=lambda: torch.tensor(1.2), regularization=0.1)
_SKETCH_MODEL = SimpleNamespace(sketched_log_det_sum=torch.tensor(1.2), regularization=0.1)
_X, _TASKS = _task_data()

# (function, valid keyword arguments, the numeric arguments to corrupt)
SIGNATURES = {
    "mt_kb_width": (
        mt_kb_width,
        dict(model=_GAIN_MODEL, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.1),
        ("rkhs_norm_bound", "noise_std", "delta"),
    ),
    "igp_ucb_width": (
        igp_ucb_width,
        dict(
            information_gain=3.0,
            num_observations=10,
            rkhs_norm_bound=1.0,
            noise_std=0.1,
            delta=0.1,
            eta=0.2,
        ),
        ("information_gain", "num_observations", "rkhs_norm_bound", "noise_std", "delta", "eta"),
    ),
    "ay_gp_ucb_width": (
        ay_gp_ucb_width,
        dict(
            information_gain=3.0, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.1, regularization=0.2
        ),
        ("information_gain", "rkhs_norm_bound", "noise_std", "delta", "regularization"),
    ),
    "multitask_widths": (
        multitask_widths,
        dict(
            num_tasks=3,
            b=1.0,
            rkhs_norm_bound=1.0,
            task_deviation=0.3,
            regularization=2 / 3,
            delta=0.1,
            info_gain_mt=5.0,
            info_gain_st=2.0,
            t=10,
            noise_std=1.0,
            effective_dimension=1.5,
        ),
        (
            "num_tasks",
            "b",
            "rkhs_norm_bound",
            "task_deviation",
            "regularization",
            "delta",
            "info_gain_mt",
            "info_gain_st",
            "t",
            "noise_std",
            "effective_dimension",
        ),
    ),
    "multitask_regularization": (
        multitask_regularization,
        dict(num_tasks=3, b=1.0),
        ("num_tasks", "b"),
    ),
    "theorem2_kernel_parameter": (
        theorem2_kernel_parameter,
        dict(num_tasks=3, task_deviation=0.3, horizon=10),
        ("num_tasks", "task_deviation", "horizon"),
    ),
    "task_kernel_matrix": (task_kernel_matrix, dict(num_tasks=3, b=1.0), ("num_tasks", "b")),
    "mt_bkb_width": (
        mt_bkb_width,
        dict(model=_SKETCH_MODEL, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.1, eps=0.5),
        ("rkhs_norm_bound", "noise_std", "delta", "eps"),
    ),
    "mt_bkb_accuracy": (
        mt_bkb_accuracy,
        dict(eps=0.5, delta=0.1, horizon=100),
        ("eps", "delta", "horizon"),
    ),
    "sketch_distortion": (sketch_distortion, dict(eps=0.5), ("eps",)),
    "bkb_width": (
        bkb_width,
        dict(
            variance_sum=2.0,
            num_observations=10,
            rkhs_norm_bound=1.0,
            noise_std=0.1,
            delta=0.1,
            eps=0.5,
            regularization=0.1,
            kernel_bound=1.0,
        ),
        (
            "variance_sum",
            "num_observations",
            "rkhs_norm_bound",
            "noise_std",
            "delta",
            "eps",
            "regularization",
            "kernel_bound",
        ),
    ),
    "gp_ucb_width": (
        gp_ucb_width,
        dict(round_index=3, domain_size=10, delta=0.1),
        ("round_index", "domain_size", "delta"),
    ),
    "dragonfly_ucb_width": (
        dragonfly_ucb_width,
        dict(round_index=3, dim=2),
        ("round_index", "dim"),
    ),
    "information_gain": (
        information_gain,
        dict(kernel_matrix=torch.eye(3, dtype=torch.float64), regularization=0.1),
        ("regularization",),
    ),
    "information_gain_increment": (
        information_gain_increment,
        dict(posterior_variance=torch.ones(3, dtype=torch.float64), regularization=0.1),
        ("regularization",),
    ),
    "effective_dimension": (
        effective_dimension,
        dict(kernel_matrix=torch.eye(3, dtype=torch.float64), regularization=0.5),
        ("regularization",),
    ),
    "multitask_information_gain": (
        multitask_information_gain,
        dict(
            train_X=_X,
            train_tasks=_TASKS,
            data_kernel=_kernel(),
            num_tasks=3,
            b=1.0,
            regularization=2 / 3,
        ),
        ("num_tasks", "b", "regularization"),
    ),
    "single_task_information_gains": (
        single_task_information_gains,
        dict(
            train_X=_X, train_tasks=_TASKS, data_kernel=_kernel(), num_tasks=3, regularization=1.0
        ),
        ("num_tasks", "regularization"),
    ),
    "task_effective_dimensions": (
        task_effective_dimensions,
        dict(
            train_X=_X,
            train_tasks=_TASKS,
            data_kernel=_kernel(),
            num_tasks=3,
            b=1.0,
            regularization=2 / 3,
        ),
        ("num_tasks", "b", "regularization"),
    ),
    "MartingaleMixtureBound": (
        MartingaleMixtureBound,
        dict(
            train_X=_X,
            train_Y=torch.sin(3 * _X[:, :1]),
            kernel=_kernel(),
            rkhs_norm_bound=5.0,
            noise_std=0.1,
            delta=0.1,
            mixture_scale=1.0,
        ),
        ("rkhs_norm_bound", "noise_std", "delta", "mixture_scale"),
    ),
}
CORRUPTIONS = [(name, arg) for name, (_, _, args) in SIGNATURES.items() for arg in args]


def _result_is_finite(result) -> bool:
    if isinstance(result, dict):
        return all(_result_is_finite(value) for value in result.values())
    if isinstance(result, torch.nn.Module):
        return True
    return bool(torch.isfinite(torch.as_tensor(result)).all())


@pytest.mark.parametrize("name", SIGNATURES)
def test_valid_arguments_of_the_table(name):
    """The table's arguments are valid, so each failure below comes from one argument."""
    function, kwargs, _ = SIGNATURES[name]
    assert _result_is_finite(function(**kwargs))


@pytest.mark.parametrize("name, argument", CORRUPTIONS, ids=[f"{n}-{a}" for n, a in CORRUPTIONS])
def test_non_numbers_raise_type_error_naming_the_argument(name, argument):
    function, kwargs, _ = SIGNATURES[name]
    for bad in (*BAD_NUMBERS, *BAD_TENSORS):
        if bad is None and argument == "effective_dimension":
            continue  # None skips the data-dependent width
        if bad is None and (name, argument) == ("mt_kb_width", "noise_std"):
            continue  # None takes the model's noise
        if bad is None and (name, argument) == ("MartingaleMixtureBound", "rkhs_norm_bound"):
            continue  # None chooses B from the data
        with pytest.raises(TypeError, match=rf"^{re.escape(argument)} must be "):
            function(**{**kwargs, argument: bad})


@pytest.mark.parametrize(
    "name, argument",
    [
        ("igp_ucb_width", "information_gain"),
        ("ay_gp_ucb_width", "information_gain"),
        ("bkb_width", "variance_sum"),
        ("multitask_widths", "info_gain_mt"),
        ("multitask_widths", "info_gain_st"),
        ("multitask_widths", "effective_dimension"),
        ("igp_ucb_width", "rkhs_norm_bound"),
        ("multitask_widths", "delta"),
        ("mt_bkb_accuracy", "eps"),
    ],
)
def test_accepted_real_types_give_the_float_result(name, argument, dtype):
    """NumPy scalars, ints and 0-d float32/float64 tensors give the Python-float value."""
    function, kwargs, _ = SIGNATURES[name]
    value = kwargs[argument]
    reference = function(**kwargs)
    for same in (np.float64(value), torch.tensor(value, dtype=dtype)):
        result = function(**{**kwargs, argument: same})
        if isinstance(reference, dict):
            assert result.keys() == reference.keys()
            for key in reference:
                torch.testing.assert_close(result[key], reference[key], rtol=1e-6, atol=0.0)
        else:
            torch.testing.assert_close(
                torch.as_tensor(result, dtype=torch.float64),
                torch.as_tensor(reference, dtype=torch.float64),
                rtol=1e-6,
                atol=0.0,
            )


@pytest.mark.parametrize(
    "name, argument",
    [
        ("multitask_widths", "num_tasks"),
        ("theorem2_kernel_parameter", "horizon"),
        ("mt_bkb_accuracy", "horizon"),
        ("bkb_width", "num_observations"),
        ("gp_ucb_width", "round_index"),
        ("gp_ucb_width", "domain_size"),
        ("dragonfly_ucb_width", "dim"),
    ],
)
def test_counts_are_ints(name, argument):
    """Counts accept ints, NumPy ints and 0-d integer tensors; reject floats (2.0 too)."""
    function, kwargs, _ = SIGNATURES[name]
    value = kwargs[argument]
    reference = function(**kwargs)
    for same in (np.int64(value), torch.tensor(value)):
        result = function(**{**kwargs, argument: same})
        if isinstance(reference, dict):
            assert all(torch.equal(result[k], reference[k]) for k in reference)
        else:
            assert float(torch.as_tensor(result)) == float(torch.as_tensor(reference))
    for bad in (float(value), value + 0.5, torch.tensor(float(value))):
        with pytest.raises(TypeError, match=rf"^{argument} must be an int"):
            function(**{**kwargs, argument: bad})
    with pytest.raises(ValueError, match=rf"^{argument} must be >= "):
        function(**{**kwargs, argument: -1})


# ----------------------------------------------------------- broadcast shapes
def _scalar_widths(mt, st, s=None):
    kwargs = {**SIGNATURES["multitask_widths"][1], "info_gain_mt": mt, "info_gain_st": st}
    kwargs["effective_dimension"] = s
    return multitask_widths(**kwargs)


def test_multitask_widths_shapes_that_do_not_broadcast(dtype):
    kwargs = {**SIGNATURES["multitask_widths"][1], "effective_dimension": None}
    mt = torch.tensor([1.0, 2.0], dtype=dtype)
    st = torch.tensor([1.0, 2.0, 3.0], dtype=dtype)
    with pytest.raises(
        ValueError,
        match=r"^info_gain_mt and info_gain_st must have broadcastable shapes, got "
        r"info_gain_mt \(2,\), info_gain_st \(3,\)",
    ):
        multitask_widths(**{**kwargs, "info_gain_mt": mt, "info_gain_st": st})
    with pytest.raises(ValueError, match=r"effective_dimension \(3,\)"):
        multitask_widths(
            **{**kwargs, "info_gain_mt": mt, "info_gain_st": mt, "effective_dimension": st}
        )


def test_multitask_widths_broadcast_equals_elementwise_calls(dtype):
    """Broadcast inputs give, entry by entry, the widths of scalar calls."""
    mt = torch.tensor([[1.0], [4.0]], dtype=dtype)  # 2 x 1
    st = torch.tensor([0.5, 2.0, 3.0], dtype=dtype)  # 3
    s = torch.tensor([0.0, 1.0, 2.5], dtype=dtype)  # 3
    widths = _scalar_widths(mt, st, s)
    for key, value in widths.items():
        assert value.shape == (2, 3) and value.dtype == torch.float64
        for i in range(2):
            for j in range(3):
                expected = _scalar_widths(float(mt[i, 0]), float(st[j]), float(s[j]))[key]
                torch.testing.assert_close(value[i, j], expected, rtol=1e-12, atol=0.0)
    # an effective dimension with more entries than the (scalar) information gains
    widths = _scalar_widths(1.0, 2.0, s)
    for j in range(3):
        expected = _scalar_widths(1.0, 2.0, float(s[j]))["large_b_data_dependent"]
        torch.testing.assert_close(
            widths["large_b_data_dependent"][j], expected, rtol=1e-12, atol=0.0
        )


# ---------------------------------------------------------------- NaN and inf data
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_task_data(bad, dtype):
    X, tasks = _task_data(dtype)
    X[2, 1] = bad
    kernel = _kernel(dtype)
    with pytest.raises(ValueError, match=r"^train_X must be finite \(no NaN or inf\)"):
        multitask_information_gain(X, tasks, kernel, 3, 1.0, 2 / 3)
    with pytest.raises(ValueError, match="^train_X must be finite"):
        single_task_information_gains(X, tasks, kernel, 3, 1.0)
    with pytest.raises(ValueError, match="^train_X must be finite"):
        task_effective_dimensions(X, tasks, kernel, 3, 1.0, 2 / 3)
    X, _ = _task_data(dtype)
    for bad_tasks in (torch.tensor([0.0, 1.0, bad, 0.0, 1.0, 2.0, 0.0]), tasks + 0.5):
        with pytest.raises(ValueError, match="^train_tasks must hold whole-number"):
            multitask_information_gain(X, bad_tasks, kernel, 3, 1.0, 2 / 3)
    with pytest.raises(TypeError, match="^train_X must be a real floating-point tensor"):
        multitask_information_gain(torch.ones(7, 2, dtype=torch.long), tasks, kernel, 3, 1.0, 0.7)
    matrix = torch.eye(3, dtype=dtype)
    matrix[0, 1] = matrix[1, 0] = bad
    with pytest.raises(ValueError, match="^kernel_matrix must be finite"):
        information_gain(matrix, 0.1)
    with pytest.raises(ValueError, match="^kernel_matrix must be finite"):
        effective_dimension(matrix, 0.1)
    with pytest.raises(ValueError, match="^posterior_variance must be finite"):
        information_gain_increment(torch.tensor([1.0, bad], dtype=dtype), 0.1)


def test_tensor_arguments_must_be_tensors():
    for function in (information_gain, effective_dimension):
        with pytest.raises(TypeError, match="^kernel_matrix must be a torch.Tensor"):
            function([[1.0, 0.0], [0.0, 1.0]], 0.1)
    with pytest.raises(TypeError, match="^posterior_variance must be a torch.Tensor"):
        information_gain_increment([1.0], 0.1)
    with pytest.raises(TypeError, match="^kernel_matrix must be a real floating-point"):
        information_gain(torch.eye(2, dtype=torch.long), 0.1)
    with pytest.raises(TypeError, match="^train_X must be a torch.Tensor"):
        multitask_information_gain([[0.1, 0.2]], torch.tensor([0]), _kernel(), 3, 1.0, 0.7)


def test_regularization_of_the_multitask_information_gain_is_named():
    X, tasks = _task_data()
    with pytest.raises(ValueError, match="^regularization must be > 0"):
        multitask_information_gain(X, tasks, _kernel(), 3, 1.0, 0.0)
    # effective_dimension allows an infinite regularization (the limit b -> inf) ...
    assert float(effective_dimension(torch.eye(2, dtype=torch.float64), math.inf)) == 0.0
    # ... but not NaN
    with pytest.raises(ValueError, match="^regularization must be > 0"):
        effective_dimension(torch.eye(2, dtype=torch.float64), math.nan)


def test_constant_checks_directly():
    """Each constant's accepted range, at and just past its ends."""
    assert check_delta(0.05) == 0.05 and check_eps(torch.tensor(0.5)) == 0.5
    for check, name in ((check_delta, "delta"), (check_eps, "eps")):
        for bad in (0.0, 1.0, -0.1, 1.5):
            with pytest.raises(ValueError, match=rf"^{name}.* must lie in \(0, 1\)"):
                check(bad)
    assert check_task_deviation(0) == 0.0 and check_task_deviation(2) == 2.0
    with pytest.raises(ValueError, match=r"^task_deviation .* must lie in \[0, 2\]"):
        check_task_deviation(2.5)
    assert math.isinf(check_trace_regularization(math.inf, "c"))
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match=r"^c must be > 0 \(math.inf allowed\)"):
            check_trace_regularization(bad, "c")
    check_finite_width(0.0)
    for bad in (math.inf, math.nan, -1.0):
        with pytest.raises(ValueError, match="^the width must be finite and >= 0"):
            check_finite_width(bad)
