"""VectorValuedGP against a dense NumPy transcription of paper 000, Section 3.1 / eq. (1)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from cases import CASES, ETA, ICM_CASES, NUM_TASKS, build_case, tolerances
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from gpytorch.kernels import RBFKernel
from oracles import DenseMultiTaskGP, make_rbf, numpy_kernel

from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.models.base import eigen_groups

KINDS = ("full", "indexed")


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def _oracle_posterior(case, X, train_X=None, train_Y=None, tasks="same"):
    train_X = case.train_X if train_X is None else train_X
    train_Y = case.train_Y if train_Y is None else train_Y
    return case.oracle.posterior(_np(train_X), _np(train_Y), _np(X), case.tasks_numpy(tasks))


def _assert_posterior(model, case, X, **data):
    """Mean ``q x n`` and covariance ``(q n) x (q n)`` of ``model`` equal the oracle."""
    posterior = model.posterior(X)
    mean, covariance = _oracle_posterior(case, X, **data)
    tol = tolerances(case.dtype)
    assert posterior.mean.dtype == case.dtype
    np.testing.assert_allclose(_np(posterior.mean), mean, **tol)
    np.testing.assert_allclose(_np(posterior.distribution.covariance_matrix), covariance, **tol)


def _test_points(dtype, q=4, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(q, 2, generator=generator, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_posterior_and_information_gain_match_dense_formula(name, kind, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    model = case.build()
    assert model.uses_eigen_route == (kind == "full" and name in ICM_CASES)
    assert model.num_outputs == NUM_TASKS
    _assert_posterior(model, case, _test_points(dtype))
    # also at the training inputs, where the posterior is most informed
    _assert_posterior(model, case, case.train_X)
    expected = case.oracle.information_gain(
        _np(case.train_X), _np(case.train_Y), case.tasks_numpy()
    )
    np.testing.assert_allclose(float(model.information_gain()), expected, **tolerances(dtype))
    assert expected > 0.1  # the data carry information: the check is not vacuous


@pytest.mark.parametrize("name", ICM_CASES)
def test_eigen_route_equals_general_route(name, dtype):
    """ICM + full-vector data (eigen route, 000 Sec. 3.3 / App. A) equals the same data
    passed as task-indexed scalar observations (general route) and the dense formula."""
    case = build_case(name, dtype)
    eigen = case.build()
    rows = case.train_X.shape[0]
    general = case.build(
        X=case.train_X.repeat_interleave(NUM_TASKS, dim=0),
        Y=case.train_Y.reshape(-1, 1),
        tasks=torch.arange(NUM_TASKS).repeat(rows),
    )
    assert eigen.uses_eigen_route and not general.uses_eigen_route
    assert eigen.num_observations == general.num_observations == rows * NUM_TASKS
    X = _test_points(dtype, q=3)
    tol = tolerances(dtype)
    p_eigen, p_general = eigen.posterior(X), general.posterior(X)
    np.testing.assert_allclose(_np(p_eigen.mean), _np(p_general.mean), **tol)
    np.testing.assert_allclose(
        _np(p_eigen.distribution.covariance_matrix),
        _np(p_general.distribution.covariance_matrix),
        **tol,
    )
    np.testing.assert_allclose(
        float(eigen.information_gain()), float(general.information_gain()), **tol
    )
    _assert_posterior(eigen, case, X)


def test_eigen_route_rank_deficient_directions_have_no_variance():
    """Along a null eigenvector ``u`` of ``B`` the posterior of ``u^T f`` is exactly 0."""
    case = build_case("icm_rank_deficient", torch.float64)
    model = case.build()
    B = case.task_covariances[0].numpy()
    eigenvalues, eigenvectors = np.linalg.eigh(B)
    assert abs(eigenvalues[0]) < 1e-12 * eigenvalues[-1]
    u = eigenvectors[:, 0]
    posterior = model.posterior(_test_points(torch.float64, q=1))
    covariance = _np(posterior.distribution.covariance_matrix)
    assert abs(u @ covariance @ u) < 1e-12
    assert abs(_np(posterior.mean)[0] @ u) < 1e-12


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "uniform_0.4", "sum", "independent"))
def test_prior_without_data(name, kind, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=0)
    model = case.build()
    X = torch.stack([_test_points(dtype, q=3, seed=s) for s in range(2)])  # 2 x 3 x d
    posterior = model.posterior(X)
    assert posterior.mean.shape == (2, 3, NUM_TASKS)
    assert torch.all(posterior.mean == 0)
    for b in range(2):
        _, prior = _oracle_posterior(case, X[b])
        np.testing.assert_allclose(
            _np(posterior.distribution.covariance_matrix[b]), prior, **tolerances(dtype)
        )
    assert float(model.information_gain()) == 0.0


@pytest.mark.parametrize("start", (0, 2))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("icm", "uniform_0", "sum", "independent"))
def test_condition_on_observations_and_append_equal_batch_model(name, kind, start, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed", num_rows=7)
    X_all, Y_all, tasks_all = case.train_X, case.train_Y, case.train_tasks

    def tasks(a, b):
        return None if tasks_all is None else tasks_all[a:b]

    full = case.build()
    X = _test_points(dtype, q=3)
    tol = tolerances(dtype)

    # condition_on_observations: new models, the original unchanged
    model = case.build(X=X_all[:start], Y=Y_all[:start], tasks=tasks(0, start))
    before = model.posterior(X)
    before_mean, before_cov = _np(before.mean), _np(before.distribution.covariance_matrix)
    middle = model.condition_on_observations(
        X_all[start:5], Y_all[start:5], train_tasks=tasks(start, 5)
    )
    conditioned = middle.condition_on_observations(X_all[5:], Y_all[5:], train_tasks=tasks(5, 7))
    assert conditioned is not middle and middle is not model
    after = model.posterior(X)
    np.testing.assert_array_equal(_np(after.mean), before_mean)
    np.testing.assert_array_equal(_np(after.distribution.covariance_matrix), before_cov)
    assert model.train_X.shape[0] == start
    assert middle.train_X.shape[0] == 5

    # append_observations: in place
    appended = case.build(X=X_all[:start], Y=Y_all[:start], tasks=tasks(0, start))
    for a, b in ((start, 5), (5, 6), (6, 7)):
        returned = appended.append_observations(X_all[a:b], Y_all[a:b], train_tasks=tasks(a, b))
        assert returned is appended
    assert appended.train_X.shape[0] == 7

    for candidate in (conditioned, appended):
        assert candidate.uses_eigen_route == full.uses_eigen_route
        assert candidate.num_observations == full.num_observations
        p, q = candidate.posterior(X), full.posterior(X)
        np.testing.assert_allclose(_np(p.mean), _np(q.mean), **tol)
        np.testing.assert_allclose(
            _np(p.distribution.covariance_matrix), _np(q.distribution.covariance_matrix), **tol
        )
        np.testing.assert_allclose(
            float(candidate.information_gain()), float(full.information_gain()), **tol
        )
        _assert_posterior(candidate, case, X)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ("uniform_0.4", "sum"))
@pytest.mark.parametrize("batch", ((), (2,), (2, 3)), ids=str)
def test_batch_shapes_and_interleaved_layout(name, kind, batch, dtype):
    case = build_case(name, dtype, task_indexed=kind == "indexed")
    model = case.build()
    q, n = 2, NUM_TASKS
    generator = torch.Generator().manual_seed(3)
    X = torch.rand(*batch, q, 2, generator=generator, dtype=torch.float64).to(dtype)
    posterior = model.posterior(X)
    assert isinstance(posterior.distribution, MultitaskMultivariateNormal)
    assert posterior.mean.shape == (*batch, q, n)
    assert posterior.variance.shape == (*batch, q, n)
    covariance = posterior.distribution.covariance_matrix
    assert covariance.shape == (*batch, q * n, q * n)
    tol = tolerances(dtype)
    for index in np.ndindex(*batch):
        mean, expected = _oracle_posterior(case, X[index])
        np.testing.assert_allclose(_np(posterior.mean[index]), mean, **tol)
        np.testing.assert_allclose(_np(covariance[index]), expected, **tol)
        # interleaved: entry a * n + i is point a, task i, so the variances are the diagonal
        np.testing.assert_allclose(
            _np(posterior.variance[index]), np.diag(expected).reshape(q, n), **tol
        )


@pytest.mark.parametrize("name", ("icm", "sum"))
def test_output_indices_noise_and_posterior_transform(name, dtype):
    case = build_case(name, dtype)
    model = case.build()
    q, n = 2, NUM_TASKS
    X = _test_points(dtype, q=q)
    mean, covariance = _oracle_posterior(case, X)
    tol = tolerances(dtype)

    indices = [2, 0]
    flat = (np.arange(q)[:, None] * n + np.array(indices)).reshape(-1)
    posterior = model.posterior(X, output_indices=indices)
    np.testing.assert_allclose(_np(posterior.mean), mean[:, indices], **tol)
    np.testing.assert_allclose(
        _np(posterior.distribution.covariance_matrix), covariance[np.ix_(flat, flat)], **tol
    )

    single = model.posterior(X, output_indices=[1])
    assert isinstance(single.distribution, MultivariateNormal)
    assert single.mean.shape == (q, 1)
    np.testing.assert_allclose(_np(single.mean)[:, 0], mean[:, 1], **tol)

    noisy = model.posterior(X, observation_noise=True)
    np.testing.assert_allclose(
        _np(noisy.distribution.covariance_matrix), covariance + ETA * np.eye(q * n), **tol
    )
    assert torch.equal(
        model.posterior(X, observation_noise=False).distribution.covariance_matrix,
        model.posterior(X).distribution.covariance_matrix,
    )

    # BoTorch semantics for a tensor: the given variances (q x n, point a and task i at
    # a * n + i of the interleaved covariance), a scalar broadcast, or a subset's columns.
    levels = torch.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype=dtype)
    given = model.posterior(X, observation_noise=levels)
    expected = covariance + np.diag(_np(levels).reshape(-1))
    np.testing.assert_allclose(_np(given.distribution.covariance_matrix), expected, **tol)
    scalar = model.posterior(X, observation_noise=torch.tensor(0.7, dtype=dtype))
    np.testing.assert_allclose(
        _np(scalar.distribution.covariance_matrix), covariance + 0.7 * np.eye(q * n), **tol
    )
    subset = model.posterior(X, output_indices=indices, observation_noise=levels)
    np.testing.assert_allclose(
        _np(subset.distribution.covariance_matrix),
        covariance[np.ix_(flat, flat)] + np.diag(_np(levels)[:, indices].reshape(-1)),
        **tol,
    )
    one = model.posterior(X, output_indices=[1], observation_noise=levels[:, 1])
    np.testing.assert_allclose(
        _np(one.distribution.covariance_matrix),
        covariance[np.ix_([1, n + 1], [1, n + 1])] + np.diag(_np(levels)[:, 1]),
        **tol,
    )
    with pytest.raises(ValueError, match="observation_noise must broadcast"):
        model.posterior(X, observation_noise=torch.ones(3, 2, dtype=dtype))
    with pytest.raises(ValueError, match="variances >= 0"):
        model.posterior(X, observation_noise=-levels)
    with pytest.raises(TypeError, match="observation_noise must be a bool"):
        model.posterior(X, observation_noise=0.1)

    weights = torch.tensor([0.2, -0.5, 1.5], dtype=dtype)
    transformed = model.posterior(
        X, posterior_transform=ScalarizedPosteriorTransform(weights, offset=0.3)
    )
    w = _np(weights)
    W = np.kron(np.eye(q), w[:, None])  # (q n) x q
    np.testing.assert_allclose(_np(transformed.mean).reshape(-1), mean @ w + 0.3, **tol)
    np.testing.assert_allclose(
        _np(transformed.distribution.covariance_matrix), W.T @ covariance @ W, **tol
    )


def test_single_task_model(dtype):
    kernel = make_rbf([0.3], dtype)
    B = torch.tensor([[2.0]], dtype=dtype)
    rng = np.random.default_rng(5)
    train_X = torch.tensor(rng.uniform(size=(4, 1)), dtype=dtype)
    train_Y = torch.tensor(rng.normal(size=(4, 1)), dtype=dtype)
    model = VectorValuedGP(train_X, train_Y, kernel, B, regularization=ETA)
    oracle = DenseMultiTaskGP([(numpy_kernel(kernel), np.array([[2.0]]))], ETA)
    X = torch.linspace(0, 1, 3, dtype=dtype).unsqueeze(-1)
    posterior = model.posterior(X)
    mean, covariance = oracle.posterior(_np(train_X), _np(train_Y), _np(X))
    assert isinstance(posterior.distribution, MultivariateNormal)
    assert posterior.mean.shape == (3, 1)
    tol = tolerances(dtype)
    np.testing.assert_allclose(_np(posterior.mean), mean, **tol)
    np.testing.assert_allclose(_np(posterior.distribution.covariance_matrix), covariance, **tol)


@pytest.mark.filterwarnings("ignore:A not p.d., added jitter")
def test_repeated_inputs_give_a_singular_but_valid_posterior():
    """Two equal test points: the joint covariance is singular; posterior() must still work."""
    case = build_case("sum", torch.float64)
    model = case.build()
    x = _test_points(torch.float64, q=1)
    posterior = model.posterior(torch.cat([x, x]))
    _assert_posterior(model, case, torch.cat([x, x]))
    assert posterior.rsample(torch.Size([2])).shape == (2, 2, NUM_TASKS)


# ------------------------------------------------------------------------ bad input
def _good_args(dtype=torch.float64):
    rng = np.random.default_rng(0)
    return {
        "train_X": torch.tensor(rng.uniform(size=(4, 2)), dtype=dtype),
        "train_Y": torch.tensor(rng.normal(size=(4, 2)), dtype=dtype),
        "data_kernel": make_rbf([0.3, 0.3], dtype),
        "task_covariance": torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=dtype),
        "regularization": 0.1,
    }


def test_good_args_build():
    VectorValuedGP(**_good_args())


@pytest.mark.parametrize(
    "change, error, match",
    [
        ({"train_X": torch.tensor([[0.1, float("nan")]] * 4)}, ValueError, "train_X"),
        ({"train_Y": torch.tensor([[0.1, float("inf")]] * 4)}, ValueError, "train_Y"),
        ({"train_X": torch.zeros(3, 2)}, ValueError, "same number of rows"),
        ({"train_X": [[0.0, 0.0]] * 4}, TypeError, "train_X"),
        ({"train_Y": torch.zeros(4, 3)}, ValueError, "train_Y must be N x 2"),
        ({"regularization": 0.0}, ValueError, "regularization"),
        ({"regularization": -1.0}, ValueError, "regularization"),
        ({"regularization": float("nan")}, ValueError, "regularization"),
        (
            {"task_covariance": torch.tensor([[1.0, 2.0], [2.0, 1.0]])},
            ValueError,
            "positive semi-definite",
        ),
        (
            {"task_covariance": torch.tensor([[1.0, 0.5], [0.0, 1.0]])},
            ValueError,
            "symmetric",
        ),
        ({"task_covariance": torch.ones(2, 3)}, ValueError, "task_covariance.*square"),
        ({"task_covariance": "B"}, TypeError, "task_covariance"),
        ({"data_kernel": "rbf"}, TypeError, "data_kernel"),
        (
            {
                "task_covariance": [torch.eye(2), torch.eye(3)],
                "data_kernel": [make_rbf([0.3, 0.3])] * 2,
            },
            ValueError,
            "same size",
        ),
        (
            {"task_covariance": [torch.eye(2)], "data_kernel": [make_rbf([0.3, 0.3])] * 2},
            ValueError,
            "same number of terms",
        ),
    ],
)
def test_bad_constructor_input(change, error, match):
    args = {**_good_args(), **change}
    if "train_X" in change and isinstance(change["train_X"], torch.Tensor):
        args["train_X"] = change["train_X"].double()
    with pytest.raises(error, match=match):
        VectorValuedGP(**args)


@pytest.mark.parametrize(
    "tasks, match",
    [
        (torch.tensor([0, 1, 2, 0]), r"train_tasks must lie in \[0, 1\]"),
        (torch.tensor([0, -1, 1, 0]), r"train_tasks must lie in \[0, 1\]"),
        (torch.tensor([0, 1, 1]), "train_tasks must have shape"),
        (torch.tensor([0.0, 0.5, 1.0, 0.0]), "train_tasks must hold whole-number"),
    ],
)
def test_bad_task_indices(tasks, match):
    args = _good_args()
    args["train_Y"] = args["train_Y"][:, :1]
    with pytest.raises(ValueError, match=match):
        VectorValuedGP(**args, train_tasks=tasks)


def test_bad_task_indexed_output_columns():
    with pytest.raises(ValueError, match="train_Y must be N x 1"):
        VectorValuedGP(**_good_args(), train_tasks=torch.tensor([0, 1, 1, 0]))


def test_bad_posterior_and_update_input():
    model = VectorValuedGP(**_good_args())
    with pytest.raises(ValueError, match="X must have shape"):
        model.posterior(torch.zeros(3, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match="X contains NaN"):
        model.posterior(torch.full((1, 2), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="output_indices"):
        model.posterior(torch.zeros(1, 2, dtype=torch.float64), output_indices=[2])
    x = torch.zeros(1, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="Y must be m x 2"):
        model.append_observations(x, torch.zeros(1, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="train_tasks must be None"):
        model.append_observations(
            x, torch.zeros(1, 2, dtype=torch.float64), train_tasks=torch.tensor([0])
        )
    with pytest.raises(ValueError, match="same number of rows"):
        model.condition_on_observations(x, torch.zeros(2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="Y contains NaN"):
        model.append_observations(x, torch.full((1, 2), float("nan"), dtype=torch.float64))
    indexed_args = _good_args()
    indexed_args["train_Y"] = indexed_args["train_Y"][:, :1]
    indexed = VectorValuedGP(**indexed_args, train_tasks=torch.tensor([0, 1, 1, 0]))
    with pytest.raises(ValueError, match="train_tasks is required"):
        indexed.append_observations(x, torch.zeros(1, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"train_tasks must lie in \[0, 1\]"):
        indexed.append_observations(
            x, torch.zeros(1, 1, dtype=torch.float64), train_tasks=torch.tensor([2])
        )


def test_model_keeps_its_own_copy_of_the_kernel():
    generator = torch.Generator().manual_seed(0)
    X = torch.rand(6, 2, generator=generator, dtype=torch.float64)
    Y = torch.randn(6, 2, generator=generator, dtype=torch.float64)
    kernel = RBFKernel()
    kernel.lengthscale = 0.3
    model = VectorValuedGP(X, Y, kernel, torch.eye(2, dtype=torch.float64), 0.1)
    before = model.posterior(X).variance.clone()
    kernel.lengthscale = 3.0  # the user refits their kernel afterwards
    assert torch.equal(model.posterior(X).variance, before)
    assert kernel.raw_lengthscale.requires_grad  # the user's kernel is left alone


def test_mixed_dtypes_and_batched_kernels():
    X = torch.rand(4, 2)
    Y = torch.randn(4, 2, dtype=torch.float64)
    model = VectorValuedGP(X, Y, RBFKernel(), torch.eye(2), 0.1)
    assert model.train_Y.dtype == torch.float32
    with pytest.raises(ValueError, match="must not be batched"):
        VectorValuedGP(X, Y, RBFKernel(batch_shape=torch.Size([2])), torch.eye(2), 0.1)
    with pytest.raises(TypeError, match="regularization"):
        VectorValuedGP(X, Y, RBFKernel(), torch.eye(2), "0.1")


@pytest.mark.parametrize("task_indexed", [False, True])
@pytest.mark.parametrize("output_indices", [None, [1]])
def test_empty_query_points(task_indexed, output_indices, dtype):
    """q = 0 (and an empty batch) raise a ValueError about X, not a reshape error."""
    model = build_case("icm", dtype, task_indexed=task_indexed).build()
    for X in (torch.rand(0, 2, dtype=dtype), torch.rand(4, 0, 2, dtype=dtype)):
        with pytest.raises(ValueError, match=r"^X must hold q >= 1 points"):
            model.posterior(X, output_indices=output_indices)
    with pytest.raises(ValueError, match=r"^X must not have an empty batch dimension"):
        model.posterior(torch.rand(0, 1, 2, dtype=dtype), output_indices=output_indices)
    assert model.posterior(torch.rand(1, 2, dtype=dtype)).mean.shape[-2] == 1  # q = 1 works


# --------------------------------------------- unclear inputs (issue 11): clear errors
def _indexed_args(dtype=torch.float64):
    args = _good_args(dtype)
    args["train_Y"] = args["train_Y"][:, :1]
    return args


def test_boolean_and_fractional_task_indices_are_refused():
    # Booleans used to be read as tasks 0 / 1; 1.7 must not become task 1.
    with pytest.raises(TypeError, match="train_tasks must hold integer task indices.*bool"):
        VectorValuedGP(**_indexed_args(), train_tasks=torch.tensor([True, False, True, False]))
    with pytest.raises(ValueError, match="train_tasks must hold whole-number task indices"):
        VectorValuedGP(**_indexed_args(), train_tasks=torch.tensor([0.0, 1.7, 1.0, 0.0]))
    model = VectorValuedGP(**_indexed_args(), train_tasks=torch.tensor([0.0, 1.0, 1.0, 0.0]))
    x, y = torch.zeros(1, 2, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64)
    with pytest.raises(TypeError, match="train_tasks must hold integer task indices"):
        model.append_observations(x, y, train_tasks=torch.tensor([True]))
    assert model.num_observations == 4


@pytest.mark.parametrize("half", (torch.float16, torch.bfloat16), ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_half_precision_data_is_refused(kind, half):
    # Used to fail deep inside torch: "linalg_eigh_cpu" / "cholesky_cpu" not implemented.
    args = _good_args() if kind == "full" else _indexed_args()
    tasks = None if kind == "full" else torch.tensor([0, 1, 1, 0])
    for name in ("train_X", "train_Y"):
        bad = {**args, name: args[name].to(half)}
        with pytest.raises(TypeError, match=rf"{name} must be float32 or float64, got {half}"):
            VectorValuedGP(**bad, train_tasks=tasks)


@pytest.mark.parametrize("kind", KINDS)
def test_inputs_that_overflow_the_kernel_are_refused(kind):
    # 1e300 * X used to raise linear_operator's NanError from the Cholesky factorization,
    # and the posterior at 1e300 * X was NaN without an error.
    args = _good_args() if kind == "full" else _indexed_args()
    tasks = None if kind == "full" else torch.tensor([0, 1, 1, 0])
    with pytest.raises(ValueError, match=r"train_X is outside the range where the kernel is fin"):
        VectorValuedGP(**{**args, "train_X": 1e300 * args["train_X"]}, train_tasks=tasks)
    model = VectorValuedGP(**args, train_tasks=tasks)
    before = model.posterior(args["train_X"]).mean
    # (a point or two far away can be fine: GPyTorch then gets k = 0 to the rest, exactly)
    huge = 1e300 * args["train_X"]
    with pytest.raises(ValueError, match=r"X is outside the range .* within about 4.74e\+153"):
        model.posterior(huge)
    new_y, new_tasks = args["train_Y"], tasks
    with pytest.raises(ValueError, match=r"^X is outside the range where the kernel is finite"):
        model.append_observations(huge, new_y, train_tasks=new_tasks)
    assert model.train_X.shape[0] == 4  # nothing was appended
    torch.testing.assert_close(model.posterior(args["train_X"]).mean, before, rtol=0, atol=0)


def test_eigen_groups_refuses_half_precision():
    # "linalg_eigh_cpu" not implemented for 'Half' before; a half B given to the model is
    # cast to train_X's dtype first and works.
    with pytest.raises(TypeError, match="task_covariance must be float32 or float64"):
        eigen_groups(torch.eye(2, dtype=torch.float16))
    args = {**_good_args(), "task_covariance": _good_args()["task_covariance"].half()}
    assert VectorValuedGP(**args).posterior(args["train_X"]).mean.dtype == torch.float64


def test_point_moments_are_the_posteriors_numbers(dtype):
    """``point_moments`` (issue 14: the acquisitions' moments without building a
    posterior) against ``posterior``: full model, output subset, conditioned batches, a
    single output, the sketched model; and the acquisitions' helper uses it."""
    from botorch_mtucb.acquisition.posterior_moments import posterior_mean_and_covariance
    from botorch_mtucb.models import NystromVectorValuedGP

    case = build_case("icm", dtype)
    model = case.build()
    X = _test_points(dtype, q=5).unsqueeze(-2)  # 5 x 1 x 2
    sketch = NystromVectorValuedGP(
        case.train_X, case.train_Y, case.kernels[0], case.task_covariances[0], ETA, seed=0
    )
    batched = model.condition_on_observations(
        _test_points(dtype, q=2, seed=5).expand(3, 2, 2), torch.zeros(3, 2, NUM_TASKS, dtype=dtype)
    )
    for m in (model, model.subset_output([2, 0]), model.subset_output([1]), batched, sketch):
        X = X.unsqueeze(-3) if m is batched else X  # 5 x 1 x 1 x 2: broadcasts with 3
        posterior = m.posterior(X)
        mean, covariance = m.point_moments(X)
        assert torch.equal(mean, posterior.mean.squeeze(-2))
        assert torch.equal(covariance, posterior.distribution.covariance_matrix)
        helper = posterior_mean_and_covariance(m, X)
        assert torch.equal(helper[0], mean) and torch.equal(helper[1], covariance)
    with pytest.raises(ValueError, match="one point per batch"):
        model.point_moments(_test_points(dtype, q=4))
    with pytest.raises(TypeError, match="X must be a torch.Tensor"):
        model.point_moments([[0.0, 0.0]])
