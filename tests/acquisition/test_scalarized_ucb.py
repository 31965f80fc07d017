"""ScalarizedMultiTaskUCB: s(mu(x)) + L * width * sqrt(lambda_max(Gamma_t(x, x)))
(paper 000, eq. (2)), against the dense NumPy formula, brute force and BoTorch models."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.models import KroneckerMultiTaskGP, ModelListGP, MultiTaskGP, SingleTaskGP
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from cases import NUM_TASKS, build_case, tolerances
from gpytorch.kernels import RBFKernel
from oracles import chebyshev_scalarization, linear_scalarization, numpy_kernel, ucb

from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
from botorch_mtucb.acquisition.scalarized_ucb import largest_eigenvalue_sqrt
from botorch_mtucb.confidence import mt_kb_width
from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.scalarization import ChebyshevScalarization, LinearScalarization
from botorch_mtucb.utils import FiniteDomain, maximize_acquisition

WEIGHTS = [0.2, 0.5, 0.3]
REFERENCE = [-1.0, -0.5, -2.0]


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _scalarization(kind: str, dtype, weights=WEIGHTS, reference=REFERENCE):
    weights_t = torch.tensor(weights, dtype=dtype)
    if kind == "linear":
        s = LinearScalarization(weights_t)
        return s, (lambda y: linear_scalarization(weights, y)), float(np.linalg.norm(weights))
    s = ChebyshevScalarization(weights_t, torch.tensor(reference, dtype=dtype))
    return s, (lambda y: chebyshev_scalarization(weights, reference, y)), max(weights)


def _oracle_values(case, X, scalarize, lipschitz, width):
    """Dense eq. (2) at every ``1 x d`` point of ``X`` (``batch x 1 x d``)."""
    values = np.zeros(X.shape[:-2])
    for index in np.ndindex(*X.shape[:-2]):
        mean, covariance = case.oracle.posterior(
            _np(case.train_X), _np(case.train_Y), _np(X[index]), case.tasks_numpy()
        )
        values[index] = ucb(mean[0], covariance, scalarize, lipschitz, width)
    return values


@pytest.mark.parametrize("kind", ("linear", "chebyshev"))
@pytest.mark.parametrize("data", ("full", "indexed"))
@pytest.mark.parametrize("name", ("icm", "uniform_0", "sum", "independent"))
def test_values_match_dense_formula(name, data, kind, dtype):
    case = build_case(name, dtype, task_indexed=data == "indexed")
    model = case.build()
    width = mt_kb_width(model, rkhs_norm_bound=1.0, noise_std=0.1, delta=0.1)
    s, scalarize, lipschitz = _scalarization(kind, dtype)
    acqf = ScalarizedMultiTaskUCB(model, s, width)
    generator = torch.Generator().manual_seed(7)
    X = torch.rand(2, 3, 1, 2, generator=generator, dtype=torch.float64).to(dtype)
    values = acqf(X)
    assert values.shape == (2, 3) and values.dtype == dtype
    expected = _oracle_values(case, X, scalarize, lipschitz, float(width))
    np.testing.assert_allclose(_np(values), expected, **tolerances(dtype))
    # the exploration term matters at these points (the check is not just s(mu))
    zero = ScalarizedMultiTaskUCB(model, s, 0.0)(X)
    assert float((values - zero).min()) > 1e-3


@pytest.mark.parametrize("kind", ("linear", "chebyshev"))
def test_optimize_acqf_beats_random_search(kind, dtype):
    case = build_case("uniform_0.4", dtype, num_rows=6)
    model = case.build()
    s, _, _ = _scalarization(kind, dtype)
    acqf = ScalarizedMultiTaskUCB(model, s, width=1.5)
    bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=dtype)
    candidate, value = optimize_acqf(
        acqf, bounds, q=1, num_restarts=8, raw_samples=256, options={"seed": 0}
    )
    assert candidate.shape == (1, 2) and candidate.dtype == dtype
    assert bool(((candidate >= 0) & (candidate <= 1)).all())
    generator = torch.Generator().manual_seed(123)
    random_points = torch.rand(2000, 1, 2, generator=generator, dtype=torch.float64).to(dtype)
    with torch.no_grad():
        best_random = float(acqf(random_points).max())
        at_candidate = float(acqf(candidate.unsqueeze(0)))
    slack = 1e-8 if dtype == torch.float64 else 1e-4
    assert at_candidate == pytest.approx(float(value), rel=slack, abs=slack)
    assert float(value) >= best_random - slack * max(1.0, abs(best_random))


@pytest.mark.parametrize("kind", ("linear", "chebyshev"))
def test_discrete_optimization_returns_the_brute_force_best(kind, dtype):
    case = build_case("sum", dtype, task_indexed=True)
    model = case.build()
    s, scalarize, lipschitz = _scalarization(kind, dtype)
    acqf = ScalarizedMultiTaskUCB(model, s, width=2.0)
    generator = torch.Generator().manual_seed(5)
    choices = torch.rand(40, 2, generator=generator, dtype=torch.float64).to(dtype)
    expected = _oracle_values(case, choices.unsqueeze(-2), scalarize, lipschitz, 2.0)
    best = int(np.argmax(expected))
    assert np.sort(expected)[-1] - np.sort(expected)[-2] > 1e-3  # no near tie
    candidate, value = optimize_acqf_discrete(acqf, q=1, choices=choices, unique=False)
    assert torch.equal(candidate.reshape(-1), choices[best])
    np.testing.assert_allclose(float(value), expected[best], **tolerances(dtype))
    x, value = maximize_acquisition(acqf, FiniteDomain(choices))
    assert torch.equal(x, choices[best])


def test_with_botorch_multitask_gp_and_uniform_similarity_kernel():
    """The task factor of MultiTaskGP replaced by UniformSimilarityTaskKernel."""
    n, omega = NUM_TASKS, 0.3
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.uniform(size=(9, 2)))
    tasks = torch.tensor(rng.permutation(np.arange(9) % n))  # every task observed
    train_X = torch.cat([x, tasks.unsqueeze(-1).double()], dim=-1)
    train_Y = torch.tensor(rng.normal(size=(9, 1)))
    model = MultiTaskGP(train_X, train_Y, task_feature=-1, outcome_transform=None)
    task_kernel = UniformSimilarityTaskKernel(n, active_dims=[2]).double()
    task_kernel.omega = omega
    model.covar_module.kernels[1] = task_kernel
    model.eval()
    assert model.num_outputs == n

    X = torch.tensor(rng.uniform(size=(6, 1, 2)))
    posterior = model.posterior(X)
    covariance = posterior.distribution.covariance_matrix  # 6 x n x n
    # NumPy: k(x, x') B[i, j] with the model's data kernel and noise
    k = numpy_kernel(model.covar_module.kernels[0])
    B = omega * np.eye(n) + (1 - omega) / n
    x_np, t_np = _np(x), tasks.numpy()
    noise = np.broadcast_to(_np(model.likelihood.noise).reshape(-1), (n,))[t_np]  # per task
    gram = k(x_np, x_np) * B[np.ix_(t_np, t_np)] + np.diag(noise)
    for a in range(6):
        xa = _np(X[a])
        cross = k(x_np, xa) * B[t_np]  # 9 x n: Gamma(x_s, x)[t_s, j]
        expected = k(xa, xa)[0, 0] * B - cross.T @ np.linalg.solve(gram, cross)
        np.testing.assert_allclose(_np(covariance[a]), expected, rtol=1e-7, atol=1e-9)

    for kind in ("linear", "chebyshev"):
        s, scalarize, lipschitz = _scalarization(kind, torch.float64)
        values = ScalarizedMultiTaskUCB(model, s, width=1.3)(X)
        mean = _np(posterior.mean)[:, 0]
        expected = [ucb(mean[a], _np(covariance[a]), scalarize, lipschitz, 1.3) for a in range(6)]
        # GPyTorch's cached predictions differ between calls at the 1e-8 level
        np.testing.assert_allclose(_np(values), expected, rtol=1e-6, atol=1e-7)


def test_with_model_list_of_single_task_gps():
    rng = np.random.default_rng(1)
    models = []
    for i in range(NUM_TASKS):
        train_X = torch.tensor(rng.uniform(size=(5 + i, 2)))
        train_Y = torch.tensor(rng.normal(size=(5 + i, 1)))
        models.append(
            SingleTaskGP(
                train_X, train_Y, covar_module=RBFKernel(ard_num_dims=2), outcome_transform=None
            )
        )
    model = ModelListGP(*models).eval()
    X = torch.tensor(rng.uniform(size=(4, 1, 2)))
    for kind in ("linear", "chebyshev"):
        s, scalarize, lipschitz = _scalarization(kind, torch.float64)
        values = ScalarizedMultiTaskUCB(model, s, width=0.8)(X)
        means = np.stack([_np(m.posterior(X).mean)[:, 0, 0] for m in models], -1)  # 4 x n
        variances = np.stack([_np(m.posterior(X).variance)[:, 0, 0] for m in models], -1)
        expected = scalarize(means) + lipschitz * 0.8 * np.sqrt(variances.max(-1))
        np.testing.assert_allclose(_np(values), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ("icm", "sum"))
def test_gradient_matches_finite_differences(name):
    """optimize_acqf needs gradients in X through both posterior routes."""
    model = build_case(name, torch.float64).build()
    assert model.uses_eigen_route == (name == "icm")
    s, _, _ = _scalarization("linear", torch.float64)
    acqf = ScalarizedMultiTaskUCB(model, s, 1.2)
    X = torch.tensor([[[0.31, 0.72]], [[0.55, 0.15]]], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: acqf(x), (X,), eps=1e-6, atol=1e-6)


def test_gradient_is_finite_at_a_training_point():
    """At a training input with omega = 1 (repeated eigenvalues) the gradient of the
    largest eigenvalue must not be NaN (optimize_acqf relies on it)."""
    case = build_case("uniform_1", torch.float64)
    model = case.build()
    s, _, _ = _scalarization("chebyshev", torch.float64)
    X = case.train_X[:2].clone().unsqueeze(-2).requires_grad_(True)
    ScalarizedMultiTaskUCB(model, s, 1.0)(X).sum().backward()
    assert torch.isfinite(X.grad).all()


def test_bad_input():
    model = build_case("icm", torch.float64).build()
    with pytest.raises(ValueError, match="scalarization has 2 weights but the model has 3"):
        ScalarizedMultiTaskUCB(model, LinearScalarization(torch.tensor([0.5, 0.5])), 1.0)
    s = LinearScalarization(torch.tensor(WEIGHTS))
    with pytest.raises(ValueError, match="width must be a finite number >= 0"):
        ScalarizedMultiTaskUCB(model, s, -0.1)
    with pytest.raises(ValueError, match="width must be a finite number >= 0"):
        ScalarizedMultiTaskUCB(model, s, float("nan"))
    with pytest.raises(ValueError, match="width"):
        ScalarizedMultiTaskUCB(model, s, torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="scalarization must be"):
        ScalarizedMultiTaskUCB(model, lambda y: y.sum(-1), 1.0)


def test_acquisition_argument_types():
    X = torch.rand(4, 2, dtype=torch.float64)
    model = VectorValuedGP(
        X, torch.randn(4, 2, dtype=torch.float64), RBFKernel(), torch.eye(2), 0.1
    )
    weights = torch.tensor([0.5, 0.5], dtype=torch.float64)
    scalarization = LinearScalarization(weights)
    for width in ("2", None, True, 1 + 2j, torch.tensor(1 + 2j), torch.tensor(True)):
        with pytest.raises(TypeError, match="^width must be a real number"):
            ScalarizedMultiTaskUCB(model, scalarization, width)
    with pytest.raises(TypeError, match="model must be a BoTorch Model"):
        ScalarizedMultiTaskUCB(None, scalarization, 1.0)
    batch = ChebyshevScalarization(weights.expand(3, 2), torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="one weight vector"):
        ScalarizedMultiTaskUCB(model, batch, 1.0)
    with pytest.raises(ValueError, match="at least one positive entry"):
        LinearScalarization(torch.zeros(2))


def test_largest_eigenvalue_sqrt_refuses_half_precision():
    with pytest.raises(TypeError, match="covariance must be float32 or float64, got torch.float16"):
        largest_eigenvalue_sqrt(torch.eye(2, dtype=torch.float16))
    expected = torch.tensor([2.0, 3.0])  # sqrt of the largest eigenvalue, float32 kept
    covariance = torch.stack([torch.diag(torch.tensor([4.0, 1.0])), 9.0 * torch.eye(2)])
    torch.testing.assert_close(largest_eigenvalue_sqrt(covariance), expected)


def test_weights_as_a_tensor_are_a_linear_scalarization(dtype):
    model = build_case("icm", dtype).build()
    weights = torch.tensor(WEIGHTS, dtype=dtype)
    X = torch.rand(4, 1, 2, dtype=dtype)
    from_tensor = ScalarizedMultiTaskUCB(model, weights, 1.3)
    assert isinstance(from_tensor.scalarization, LinearScalarization)
    torch.testing.assert_close(
        from_tensor(X), ScalarizedMultiTaskUCB(model, LinearScalarization(weights), 1.3)(X)
    )
    with pytest.raises(ValueError, match="weights must be non-negative"):
        ScalarizedMultiTaskUCB(model, -weights, 1.0)
    with pytest.raises(TypeError, match="or a tensor of linear weights, got list"):
        ScalarizedMultiTaskUCB(model, WEIGHTS, 1.0)


def test_from_model_computes_mt_kb_width():
    """from_model(model, ...) == the constructor with mt_kb_width(model, ...): the
    package's VectorValuedGP and fitted-hyperparameter BoTorch models (noise_std=None:
    the likelihood's noise)."""
    model = build_case("icm", torch.float64).build()
    s = LinearScalarization(torch.tensor(WEIGHTS, dtype=torch.float64))
    acqf = ScalarizedMultiTaskUCB.from_model(
        model, s, rkhs_norm_bound=2.0, delta=0.1, noise_std=0.2
    )
    expected = mt_kb_width(model, rkhs_norm_bound=2.0, noise_std=0.2, delta=0.1)
    assert float(acqf.width) == float(expected) > 2.0
    X = torch.rand(3, 1, 2, dtype=torch.float64)
    torch.testing.assert_close(acqf(X), ScalarizedMultiTaskUCB(model, s, expected)(X))
    train_X = torch.rand(8, 2, dtype=torch.float64)
    Y = torch.cat([train_X.sin(), train_X.cos()[:, :1]], -1)
    for gp in (SingleTaskGP(train_X, Y), KroneckerMultiTaskGP(train_X, Y)):
        acqf = ScalarizedMultiTaskUCB.from_model(gp, torch.tensor(WEIGHTS), 1.0, delta=0.05)
        assert float(acqf.width) == float(mt_kb_width(gp, rkhs_norm_bound=1.0, delta=0.05))
        pending = ScalarizedMultiTaskUCB.from_model(
            gp, torch.tensor(WEIGHTS), 1.0, delta=0.05, X_pending=train_X[:2]
        )
        assert pending.X_pending.shape == (2, 2) and pending.pending_model is not None
    with pytest.raises(ValueError, match="delta"):
        ScalarizedMultiTaskUCB.from_model(model, s, rkhs_norm_bound=1.0, delta=1.5)
