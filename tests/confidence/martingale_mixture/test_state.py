"""state_dict / load_state_dict of the martingale-mixture bounds: a loaded bound gives the
values of a bound built afresh from the loaded kernel, data and numbers, whatever its own
kernel hyperparameters and number of observations were; a failed load leaves it unusable."""

from __future__ import annotations

import io

import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from gpytorch.kernels import MaternKernel, RBFKernel

from botorch_mtucb.acquisition import MartingaleMixtureUCB
from botorch_mtucb.confidence import MartingaleMixtureBound, MultiTaskMartingaleMixtureBound

B_TASKS = torch.tensor([[1.0, 0.6], [0.6, 0.8]], dtype=torch.float64)
ALPHAS = (None, [1e-3, 1e-2, 1e-1], 1e-2)  # exact, grid, analytic


def rbf(lengthscale=None):
    kernel = RBFKernel().to(torch.float64)
    if lengthscale is not None:
        kernel.lengthscale = lengthscale
    return kernel


def data(t=20, d=2, seed=0):
    generator = torch.Generator().manual_seed(seed)
    X = torch.rand(t, d, generator=generator, dtype=torch.float64)
    Y = torch.sin(4 * X.sum(-1, keepdim=True)) + 0.05 * torch.randn(
        t, 1, generator=generator, dtype=torch.float64
    )
    return X, Y, torch.rand(6, d, generator=generator, dtype=torch.float64)


def assert_same_bounds(loaded, fresh, test_X, **kwargs):
    for alphas in ALPHAS:
        for method in ("upper", "lower"):
            torch.testing.assert_close(
                getattr(loaded, method)(test_X, alphas=alphas, **kwargs),
                getattr(fresh, method)(test_X, alphas=alphas, **kwargs),
                rtol=1e-10,
                atol=1e-10,
            )


def test_single_task_bound_loads_another_kernel_and_more_data():
    X, Y, test_X = data()
    grown = MartingaleMixtureBound(X[:12], Y[:12], rbf(0.3), 5.0, 0.1, 0.01, mixture_scale=0.5)
    grown.upper(test_X, alphas=[1e-3, 1e-2])  # cached factors of the old data
    grown.append_observations(X[12:], Y[12:])
    target = MartingaleMixtureBound(X[:5], Y[:5], rbf(), 2.0, 0.2, 0.1)  # default lengthscale
    target.upper(test_X)  # caches of its own data and kernel
    target.load_state_dict(grown.state_dict())
    fresh = MartingaleMixtureBound(X, Y, rbf(0.3), 5.0, 0.1, 0.01, mixture_scale=0.5)
    assert target.num_observations == 20
    assert (target.rkhs_norm_bound, target.noise_std, target.delta) == (5.0, 0.1, 0.01)
    assert target.mixture_scale == 0.5
    assert float(target.kernel.lengthscale) == pytest.approx(0.3, rel=1e-7)
    assert_same_bounds(target, fresh, test_X)
    assert_same_bounds(target, fresh, test_X, X_pending=test_X[:2])
    # and into a smaller one: the grown bound takes the 5 observations of the other
    small = MartingaleMixtureBound(X[:5], Y[:5], rbf(), 2.0, 0.2, 0.1)
    grown.load_state_dict(small.state_dict())
    assert grown.num_observations == 5 and grown.rkhs_norm_bound == 2.0
    assert_same_bounds(grown, MartingaleMixtureBound(X[:5], Y[:5], rbf(), 2.0, 0.2, 0.1), test_X)
    grown.append_observations(X[5:7], Y[5:7])  # and it keeps growing from there
    assert_same_bounds(grown, MartingaleMixtureBound(X[:7], Y[:7], rbf(), 2.0, 0.2, 0.1), test_X)


def test_state_holds_no_derived_tensors_and_survives_torch_save():
    X, Y, test_X = data(t=8)
    bound = MartingaleMixtureBound(X, Y, rbf(0.3), 5.0, 0.1, 0.01)
    state = bound.state_dict()
    assert set(state) == {
        "_extra_state", "train_X", "train_Y", "kernel.raw_lengthscale",
        "kernel.raw_lengthscale_constraint.lower_bound",
        "kernel.raw_lengthscale_constraint.upper_bound",
    }  # fmt: skip
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    target = MartingaleMixtureBound(X[:2], Y[:2], rbf(), 1.0, 0.5, 0.2)
    target.load_state_dict(torch.load(buffer, weights_only=True))
    assert_same_bounds(target, bound, test_X)
    # assign=True puts the state's own tensors in place: the bound stays float64
    single = {k: v.float() if isinstance(v, torch.Tensor) else v for k, v in state.items()}
    target.load_state_dict(single, assign=True)
    assert target.train_X.dtype == target.kernel.raw_lengthscale.dtype == torch.float64
    assert not target.kernel.raw_lengthscale.requires_grad
    float32 = MartingaleMixtureBound(X.float(), Y.float(), rbf(0.3).float(), 5.0, 0.1, 0.01)
    assert_same_bounds(target, float32, test_X)


def test_from_model_state_keeps_the_transforms_and_the_chosen_norm():
    X, Y, test_X = data(t=15)
    X, test_X = 10.0 * X, 10.0 * test_X
    first = MartingaleMixtureBound.from_model(
        SingleTaskGP(X, 50.0 + Y, input_transform=Normalize(2))
    )
    other = SingleTaskGP(X[:6], -3.0 * Y[:6], input_transform=Normalize(2))
    other.covar_module.lengthscale = 0.2
    target = MartingaleMixtureBound.from_model(other)
    target.load_state_dict(first.state_dict())
    assert target.rkhs_norm_bound == first.rkhs_norm_bound and target.rkhs_norm_bound_from_data
    assert target.outcome_shift == first.outcome_shift
    assert target.outcome_scale == first.outcome_scale
    assert_same_bounds(target, first, test_X)
    # grown after B was chosen: the loaded bound keeps that B (it does not choose again)
    first.append_observations(test_X[:3], 50.0 + torch.sin(0.4 * test_X[:3].sum(-1, keepdim=True)))
    target.load_state_dict(first.state_dict())
    assert_same_bounds(target, first, test_X)


def test_an_acquisition_loads_its_bound():
    X, Y, test_X = data(t=10)
    source = MartingaleMixtureUCB(MartingaleMixtureBound(X, Y, rbf(0.3), 5.0, 0.1, 0.01))
    target = MartingaleMixtureUCB(MartingaleMixtureBound(X[:4], Y[:4], rbf(), 5.0, 0.1, 0.01))
    target.load_state_dict(source.state_dict())
    torch.testing.assert_close(target(test_X.unsqueeze(-2)), source(test_X.unsqueeze(-2)))


def test_a_failed_load_leaves_the_bound_unusable():
    X, Y, test_X = data(t=10)
    bound = MartingaleMixtureBound(X, Y, rbf(0.3), 5.0, 0.1, 0.01)
    ard = RBFKernel(ard_num_dims=2).to(torch.float64)
    other = MartingaleMixtureBound(X[:4], Y[:4], ard, 5.0, 0.1, 0.01)
    with pytest.raises(RuntimeError, match="size mismatch for kernel.raw_lengthscale"):
        bound.load_state_dict(other.state_dict())
    with pytest.raises(RuntimeError, match="last load_state_dict failed.*build a new bound"):
        bound.upper(test_X)
    with pytest.raises(RuntimeError, match="last load_state_dict failed"):
        bound.append_observations(X[:1], Y[:1])
    state = other.state_dict()
    state["train_Y"] = state["train_Y"][:2]  # inconsistent data: refused, named
    with pytest.raises(ValueError, match="train_Y must be t x 1 with t = 4"):
        MartingaleMixtureBound(X[:4], Y[:4], ard, 5.0, 0.1, 0.01).load_state_dict(state)
    state = bound.state_dict()
    state["_extra_state"] = {**state["_extra_state"], "noise_std": -1.0}
    with pytest.raises(ValueError, match="noise_std"):
        MartingaleMixtureBound(X, Y, rbf(0.3), 5.0, 0.1, 0.01).load_state_dict(state)
    # a complete state makes it usable again
    bound.load_state_dict(MartingaleMixtureBound(X, Y, rbf(0.3), 5.0, 0.1, 0.01).state_dict())
    assert torch.isfinite(bound.upper(test_X)).all()


@pytest.mark.parametrize("terms", [1, 2])  # the Kronecker route and the dense route
def test_multi_task_bound_loads_another_kernel_and_more_data(terms):
    X, Y, test_X = data(t=12)
    Y2 = torch.cat([Y, 0.5 * Y - 0.1], -1)

    def build(rows, lengthscale, task_covariance, norm=5.0):
        return MultiTaskMartingaleMixtureBound(
            X[:rows], Y2[:rows], [rbf(lengthscale)] * terms, [task_covariance / terms] * terms,
            norm, 0.1, 0.01,
        )  # fmt: skip

    grown = build(7, 0.3, B_TASKS)
    grown.upper(test_X)
    grown.append_observations(X[7:], Y2[7:])
    target = build(3, None, torch.eye(2, dtype=torch.float64), norm=3.0)
    target.upper(test_X)
    target.load_state_dict(grown.state_dict())
    assert target.num_observations == 24 and target.rkhs_norm_bound == 5.0
    fresh = build(12, 0.3, B_TASKS)
    w = torch.tensor([0.3, 0.7], dtype=torch.float64)
    assert_same_bounds(target, fresh, test_X)
    assert_same_bounds(target, fresh, test_X, weights=w)
    grown.load_state_dict(build(3, None, torch.eye(2, dtype=torch.float64), 3.0).state_dict())
    assert grown.num_observations == 6
    assert_same_bounds(grown, build(3, None, torch.eye(2, dtype=torch.float64), 3.0), test_X)


def test_multi_task_bound_loads_task_indexed_data():
    X, Y, test_X = data(t=9)
    tasks = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1, 1])
    source = MultiTaskMartingaleMixtureBound(
        X, Y, rbf(0.3), B_TASKS, 5.0, 0.1, 0.01, train_tasks=tasks
    )
    target = MultiTaskMartingaleMixtureBound(
        X[:2], torch.cat([Y[:2], Y[:2]], -1), rbf(), B_TASKS, 5.0, 0.1, 0.01
    )  # full-vector data: takes the source's kind
    target.load_state_dict(source.state_dict())
    assert not target.full_vector and not target.kronecker_route
    assert_same_bounds(target, source, test_X)
    with pytest.raises(ValueError, match="pass train_tasks"):
        target.append_observations(X[:1], Y[:1])


def _multi_task(X, Y, lengthscale=0.3, task_covariance=B_TASKS, kernel=None):
    kernel = rbf(lengthscale) if kernel is None else kernel
    Y2 = torch.cat([Y, 0.5 * Y - 0.1], -1)
    return MultiTaskMartingaleMixtureBound(X, Y2, kernel, task_covariance, 5.0, 0.1, 0.01)


ASYMMETRIC = torch.tensor([[1.0, 0.6], [0.2, 0.8]], dtype=torch.float64)
INDEFINITE = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64)


@pytest.mark.parametrize(
    "task_covariance, message",
    [(-B_TASKS, "semi-definite"), (INDEFINITE, "semi-definite"), (ASYMMETRIC, "symmetric"),
     (torch.full((2, 2), float("nan"), dtype=torch.float64), "NaN")],
    ids=["negative", "indefinite", "asymmetric", "nan"],
)  # fmt: skip
def test_multi_task_bound_refuses_task_covariances_that_the_constructor_refuses(
    task_covariance, message
):
    """As the constructor: the state's B is checked before anything is loaded, so the
    bound keeps its values (before: -B loaded and gave an 'upper bound' of -1e11)."""
    X, Y, test_X = data(t=10)
    bound = _multi_task(X[:6], Y[:6])
    before = bound.upper(test_X)
    state = dict(_multi_task(X, Y, lengthscale=0.5).state_dict())
    state["kernel.task_covariances"] = task_covariance.unsqueeze(0)
    with pytest.raises(ValueError, match=rf"state_dict's kernel.task_covariances.*{message}"):
        bound.load_state_dict(state)
    with pytest.raises(ValueError, match="task_covariance"):
        _multi_task(X, Y, task_covariance=task_covariance)
    assert bound.num_observations == 12
    assert torch.equal(bound.upper(test_X), before)


@pytest.mark.parametrize("value", [float("nan"), -float("inf")])
def test_a_non_finite_kernel_hyperparameter_is_named_and_refused(value):
    X, Y, test_X = data(t=10)
    single = MartingaleMixtureBound(X[:6], Y[:6], rbf(0.3), 5.0, 0.1, 0.01)
    multi = _multi_task(X[:6], Y[:6])
    for bound, source, key in (
        (single, MartingaleMixtureBound(X, Y, rbf(), 5.0, 0.1, 0.01), "kernel.raw_lengthscale"),
        (multi, _multi_task(X, Y), "kernel.kernels.0.raw_lengthscale"),
    ):
        before = bound.upper(test_X)
        state = dict(source.state_dict())
        state[key] = torch.full_like(state[key], value)
        with pytest.raises(ValueError, match=rf"state_dict's {key} holds (NaN|inf)"):
            bound.load_state_dict(state)
        assert torch.equal(bound.upper(test_X), before)  # unchanged and usable


def test_a_state_of_other_kernel_classes_is_refused():
    """The state of an RBF bound has the parameter names of a Matern bound's: the
    classes (and nu) are stored in the extra state and compared before loading; a state
    saved without them loads."""
    X, Y, test_X = data(t=10)
    matern = MartingaleMixtureBound(X[:6], Y[:6], MaternKernel(nu=2.5), 5.0, 0.1, 0.01)
    before = matern.upper(test_X)
    rbf_state = MartingaleMixtureBound(X, Y, rbf(0.3), 5.0, 0.1, 0.01).state_dict()
    assert rbf_state["_extra_state"]["structure"]["kernel"][0] == ".=RBFKernel"
    with pytest.raises(ValueError, match=r"kernel is of other classes: \.=RBFKernel where this"):
        matern.load_state_dict(rbf_state)
    nu = MartingaleMixtureBound(X, Y, MaternKernel(nu=1.5), 5.0, 0.1, 0.01)
    with pytest.raises(ValueError, match=r"MaternKernel\(nu=1.5\) where this one has"):
        matern.load_state_dict(nu.state_dict())
    normalized = MartingaleMixtureBound(
        X, Y, MaternKernel(), 5.0, 0.1, 0.01, input_transform=Normalize(2)
    )
    with pytest.raises(ValueError, match="input_transform is of other classes"):
        matern.load_state_dict(normalized.state_dict())
    assert matern.num_observations == 6 and torch.equal(matern.upper(test_X), before)
    multi = _multi_task(X[:6], Y[:6], kernel=MaternKernel(nu=2.5))
    with pytest.raises(ValueError, match=r"kernel is of other classes: 0=RBFKernel"):
        multi.load_state_dict(_multi_task(X, Y).state_dict())
    # a state saved before the classes were stored: nothing to compare
    source = MaternKernel(nu=2.5)
    source.lengthscale = 0.3
    grown = MartingaleMixtureBound(X, Y, source, 5.0, 0.1, 0.01)
    old = dict(grown.state_dict())
    old["_extra_state"] = {k: v for k, v in old["_extra_state"].items() if k != "structure"}
    matern.load_state_dict(old)
    assert_same_bounds(matern, grown, test_X)
