"""Linear and Chebyshev scalarizations, Lipschitz constants and weight sampling
(paper 000, Section 2, Section 5 and Appendix E)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracles import chebyshev_scalarization, linear_scalarization

from botorch_mtucb.scalarization import (
    ChebyshevScalarization,
    LinearScalarization,
    Scalarization,
    as_scalarization,
    sample_chebyshev_weights,
    sample_linear_weights,
)


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _tol(dtype):
    return (
        {"rtol": 1e-12, "atol": 1e-12} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-5}
    )


def _make(kind, weights, reference_point):
    if kind == "linear":
        return LinearScalarization(weights)
    return ChebyshevScalarization(weights, reference_point)


def _oracle(kind, weights, reference_point, Y):
    if kind == "linear":
        return linear_scalarization(weights, Y), np.linalg.norm(weights, axis=-1)
    return chebyshev_scalarization(weights, reference_point, Y), np.max(weights, axis=-1)


@pytest.mark.parametrize("kind", ("linear", "chebyshev"))
@pytest.mark.parametrize("batch", ((), (5,), (2, 3)), ids=str)
def test_values_and_lipschitz_constant(kind, batch, dtype):
    rng = np.random.default_rng(0)
    n = 3
    weights = rng.uniform(size=n)
    reference_point = rng.normal(size=n)
    Y = rng.normal(size=(*batch, n))
    s = _make(kind, torch.tensor(weights, dtype=dtype), torch.tensor(reference_point, dtype=dtype))
    value = s(torch.tensor(Y, dtype=dtype))
    expected, lipschitz = _oracle(kind, weights, reference_point, Y)
    assert value.shape == batch and value.dtype == dtype
    np.testing.assert_allclose(_np(value), expected, **_tol(dtype))
    np.testing.assert_allclose(_np(s.lipschitz_constant), lipschitz, **_tol(dtype))
    assert s.num_tasks == n


@pytest.mark.parametrize("kind", ("linear", "chebyshev"))
def test_batched_weights_broadcast(kind):
    rng = np.random.default_rng(1)
    weights = rng.uniform(size=(4, 1, 2))  # W x 1 x n against M x n outputs
    reference_point = rng.normal(size=2)
    Y = rng.normal(size=(6, 2))
    s = _make(kind, torch.tensor(weights), torch.tensor(reference_point))
    value = s(torch.tensor(Y))
    expected, lipschitz = _oracle(kind, weights, reference_point, Y)
    assert value.shape == (4, 6)
    np.testing.assert_allclose(_np(value), expected, rtol=1e-12)
    np.testing.assert_allclose(_np(s.lipschitz_constant), lipschitz, rtol=1e-12)


@pytest.mark.parametrize("kind", ("linear", "chebyshev"))
def test_lipschitz_property_on_random_pairs(kind):
    """|s(y) - s(y')| <= L ||y - y'||_2, with near equality for some pair (tight)."""
    rng = np.random.default_rng(2)
    n = 4
    weights = rng.uniform(size=n)
    s = _make(kind, torch.tensor(weights), torch.tensor(rng.normal(size=n)))
    Y1 = torch.tensor(rng.normal(size=(5000, n)))
    Y2 = Y1 + torch.tensor(rng.normal(size=(5000, n))) * torch.tensor(rng.uniform(size=(5000, 1)))
    ratio = (s(Y1) - s(Y2)).abs() / torch.linalg.vector_norm(Y1 - Y2, dim=-1)
    L = float(s.lipschitz_constant)
    assert float(ratio.max()) <= L * (1 + 1e-12)
    # the constant is attained: along lambda (linear) / along the largest-weight axis
    # with the others far above it (Chebyshev)
    if kind == "linear":
        direction = torch.tensor(weights)
        y = torch.zeros(n, dtype=torch.float64)
    else:
        direction = torch.zeros(n, dtype=torch.float64)
        direction[int(np.argmax(weights))] = 1.0
        y = torch.full((n,), 100.0, dtype=torch.float64)
        y[int(np.argmax(weights))] = 0.0
    step = 1e-3 * direction / torch.linalg.vector_norm(direction)
    ratio_along = (s(y + step) - s(y)).abs() / torch.linalg.vector_norm(step)
    assert float(ratio_along) == pytest.approx(L, rel=1e-9)


@pytest.mark.parametrize("sample_shape", ((), (7,), (2, 3)), ids=str)
def test_weight_sampling(sample_shape, dtype):
    n = 3
    linear = sample_linear_weights(
        n, torch.Size(sample_shape), generator=torch.Generator().manual_seed(4), dtype=dtype
    )
    chebyshev = sample_chebyshev_weights(
        n, torch.Size(sample_shape), generator=torch.Generator().manual_seed(4), dtype=dtype
    )
    # the same generator seed reproduces the uniform draw u (in (0, 1])
    u = 1.0 - torch.rand(*sample_shape, n, generator=torch.Generator().manual_seed(4), dtype=dtype)
    u = _np(u)
    assert linear.shape == chebyshev.shape == (*sample_shape, n)
    assert linear.dtype == chebyshev.dtype == dtype
    np.testing.assert_allclose(_np(linear), u / u.sum(-1, keepdims=True), **_tol(dtype))
    alpha = u.sum(-1, keepdims=True) / u
    np.testing.assert_allclose(_np(chebyshev), alpha / alpha.sum(-1, keepdims=True), **_tol(dtype))
    for weights in (linear, chebyshev):  # on the simplex
        assert bool((weights >= 0).all())
        np.testing.assert_allclose(_np(weights.sum(-1)), 1.0, **_tol(dtype))


def test_weight_sampling_covers_the_simplex():
    """Many draws: every coordinate takes small and large values."""
    for sampler in (sample_linear_weights, sample_chebyshev_weights):
        weights = sampler(3, torch.Size([2000]), generator=torch.Generator().manual_seed(0))
        assert float(weights.min()) < 0.05
        assert float(weights.max()) > 0.7


def test_bad_input():
    with pytest.raises(ValueError, match="weights must be non-negative"):
        LinearScalarization(torch.tensor([0.5, -0.1]))
    with pytest.raises(ValueError, match="weights must be non-negative"):
        ChebyshevScalarization(torch.tensor([-0.5, 0.1]), torch.zeros(2))
    with pytest.raises(ValueError, match="weights contains NaN"):
        LinearScalarization(torch.tensor([0.5, float("nan")]))
    with pytest.raises(TypeError, match="weights"):
        LinearScalarization([0.5, 0.5])
    with pytest.raises(ValueError, match="weights and reference_point must have the same length"):
        ChebyshevScalarization(torch.tensor([0.5, 0.5]), torch.zeros(3))
    with pytest.raises(ValueError, match="reference_point contains NaN"):
        ChebyshevScalarization(torch.tensor([0.5, 0.5]), torch.tensor([0.0, float("inf")]))
    s = LinearScalarization(torch.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="Y must have 2 outputs"):
        s(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="num_tasks"):
        sample_linear_weights(0)
    with pytest.raises(TypeError, match="num_tasks"):
        sample_chebyshev_weights(2.5)


@pytest.mark.parametrize("sampler", [sample_linear_weights, sample_chebyshev_weights])
def test_weight_sampling_argument_types(sampler, dtype):
    """num_tasks must be an int and dtype a floating dtype; errors name the argument."""
    for num_tasks in ("3", None, True, 3.0, 2.5, 3 + 0j, torch.tensor(3.0)):
        with pytest.raises(TypeError, match=r"^num_tasks must be an int >= 1"):
            sampler(num_tasks)
    for num_tasks in (0, -2):
        with pytest.raises(ValueError, match=r"^num_tasks must be >= 1"):
            sampler(num_tasks)
    for bad_dtype in (torch.long, torch.int32, torch.bool, torch.complex64, "float64", np.float64):
        with pytest.raises(TypeError, match=r"^dtype must be a floating torch.dtype"):
            sampler(3, dtype=bad_dtype)
    # accepted: NumPy and 0-d integer tensors for num_tasks, any floating dtype
    for num_tasks in (np.int64(3), torch.tensor(3)):
        weights = sampler(num_tasks, sample_shape=torch.Size([4]), dtype=dtype)
        assert weights.shape == (4, 3) and weights.dtype == dtype
        np.testing.assert_allclose(_np(weights.sum(-1)), np.ones(4), **_tol(dtype))
        assert (weights > 0).all()


@pytest.mark.parametrize("kind", ("linear", "chebyshev"))
def test_scalarizations_are_modules_whose_buffers_move(kind):
    weights = torch.tensor([[0.2, 0.8], [0.6, 0.4]], dtype=torch.float64)
    s = _make(kind, weights, torch.tensor([-1.0, 0.5], dtype=torch.float64))
    assert isinstance(s, torch.nn.Module) and isinstance(s, Scalarization)
    names = {"weights"} if kind == "linear" else {"weights", "reference_point"}
    assert set(dict(s.named_buffers())) == names == set(s.state_dict())
    assert list(s.parameters()) == []
    Y = torch.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=torch.float64)
    expected = s(Y)
    assert torch.equal(s.forward(Y), expected)  # calling the object is forward
    s32 = s.to(torch.float32)
    assert s32 is s  # Module.to is in place
    for name in names:
        assert getattr(s, name).dtype == torch.float32
    assert s.lipschitz_constant.dtype == torch.float32
    value = s(Y.float())
    assert value.dtype == torch.float32
    np.testing.assert_allclose(_np(value), _np(expected), rtol=1e-6)
    # A copy through state_dict reproduces the scalarization.
    clone = _make(kind, torch.ones(2, 2), torch.zeros(2))
    clone.load_state_dict(s.state_dict())
    assert torch.equal(clone(Y.float()), value)


def test_scalarization_inside_a_module_follows_its_owner():
    owner = torch.nn.Module()
    owner.scalarization = ChebyshevScalarization(torch.tensor([0.5, 0.5]), torch.zeros(2))
    owner.double()
    assert owner.scalarization.weights.dtype == torch.float64
    assert owner.scalarization.reference_point.dtype == torch.float64


def test_weight_samplers_draw_the_published_weights():
    # Regression values: the experiments' scalarizations are these draws.
    generator = torch.Generator().manual_seed(0)
    linear = sample_linear_weights(3, generator=generator)
    chebyshev = sample_chebyshev_weights(3, torch.Size([2]), generator=generator)
    expected_linear = [0.03471132986745695, 0.3386636951731794, 0.6266249749593636]
    expected_chebyshev = [
        [0.6239364495294402, 0.13930075644303214, 0.23676279402752776],
        [0.23652945123528063, 0.2994084041230284, 0.4640621446416909],
    ]
    np.testing.assert_allclose(_np(linear), expected_linear, rtol=1e-14)
    np.testing.assert_allclose(_np(chebyshev), expected_chebyshev, rtol=1e-14)


def test_as_scalarization_reads_weights_as_linear(dtype):
    weights = torch.tensor([0.2, 0.5, 0.3], dtype=dtype)
    s = as_scalarization(weights)
    assert isinstance(s, LinearScalarization) and s.weights.dtype == dtype
    Y = torch.tensor([[1.0, -2.0, 4.0]], dtype=dtype)
    np.testing.assert_allclose(s(Y).double().numpy(), [0.2 - 1.0 + 1.2], rtol=1e-6)
    np.testing.assert_allclose(float(s.lipschitz_constant), np.sqrt(0.04 + 0.25 + 0.09), rtol=1e-6)
    chebyshev = ChebyshevScalarization(weights, torch.zeros(3, dtype=dtype))
    assert as_scalarization(chebyshev) is chebyshev
    with pytest.raises(ValueError, match="weights must be non-negative"):
        as_scalarization(-weights)
    with pytest.raises(TypeError, match="weights must be a real floating-point tensor"):
        as_scalarization(torch.tensor([1, 2]))
    for bad in ([0.5, 0.5], lambda y: y.sum(-1), None):
        with pytest.raises(TypeError, match="or a tensor of linear weights, got"):
            as_scalarization(bad)
