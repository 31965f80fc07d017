"""``benchmark width-candidates``: the c-grid union and the intersection over time against
bounds built by hand, the smallest non-empty ``B`` against a dense NumPy emptiness test,
the widths against a by-hand computation, and the ``--quick`` command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize

from botorch_mtucb.__main__ import main
from botorch_mtucb.benchmarks.width_candidates import (
    CONFIGURATIONS,
    MIXTURE_SCALES,
    REFERENCE,
    c_grid_union,
    intersection_over_time,
    loop_state,
    measure_state,
    prefix_bound,
    smallest_nonempty_norm_bound,
)
from botorch_mtucb.confidence import EmptyConfidenceSetError, MartingaleMixtureBound

DELTA = 0.01


def _gp(n: int = 14, noise: float = 0.05, data: bool = False):
    """A SingleTaskGP with Normalize and its default Standardize, fixed hyperparameters
    (no fit: fast), on noisy observations of a smooth function in user units (and its
    data if ``data``)."""
    generator = torch.Generator().manual_seed(3)
    X = 4.0 * torch.rand(n, 2, generator=generator, dtype=torch.float64) - 1.0
    f = 50.0 + 20.0 * torch.sin(2.0 * X[:, :1]) * torch.cos(X[:, 1:])
    Y = f + noise * torch.randn(n, 1, generator=generator, dtype=torch.float64)
    gp = SingleTaskGP(X, Y, input_transform=Normalize(2))
    gp.covar_module.lengthscale = 0.3
    gp.likelihood.noise = 1e-3
    return (gp.eval(), X, Y) if data else gp.eval()


def _candidates(dtype, n: int = 40) -> torch.Tensor:
    generator = torch.Generator().manual_seed(7)
    return (4.0 * torch.rand(n, 2, generator=generator, dtype=torch.float64) - 1.0).to(dtype)


def test_c_grid_union_is_the_min_over_bounds_built_at_delta_over_five(dtype):
    gp, X = _gp(), _candidates(dtype)
    B = MartingaleMixtureBound.from_model(gp, delta=DELTA, measurement_noise_std=0.05)
    B = B.rkhs_norm_bound
    upper, argmin, empty = c_grid_union(gp, X, 0.05, B)
    by_hand = torch.stack([
        MartingaleMixtureBound.from_model(
            gp, B, delta=0.002, mixture_scale=c, measurement_noise_std=0.05
        ).upper(X)
        for c in (0.1, 0.3, 1.0, 3.0, 10.0)
    ]).detach()  # fmt: skip
    assert upper.dtype == dtype and empty == 0
    assert torch.equal(upper, by_hand.min(0).values)
    assert torch.equal(argmin, by_hand.argmin(0))
    # delta / 5 costs width: at c = 1 the union's member is wider than the bound at delta
    single = MartingaleMixtureBound.from_model(gp, B, delta=DELTA, measurement_noise_std=0.05)
    assert bool((by_hand[2] > single.upper(X).detach()).all())


def test_c_grid_union_leaves_empty_sets_out():
    """A ``B`` between the smallest non-empty ``B`` of two mixture scales: the sets of the
    scales that need more are empty and left out; with a tiny ``B`` all are."""
    gp, X = _gp(), _candidates(torch.float64)
    large = 1e3
    thresholds = [
        smallest_nonempty_norm_bound(
            MartingaleMixtureBound.from_model(
                gp, large, delta=DELTA / 5, mixture_scale=c, measurement_noise_std=0.05
            )
        )
        for c in MIXTURE_SCALES
    ]
    B = math.sqrt(min(thresholds) * max(thresholds))
    nonempty = [c for c, t in zip(MIXTURE_SCALES, thresholds) if t <= B]
    assert 0 < len(nonempty) < len(MIXTURE_SCALES)
    upper, argmin, empty = c_grid_union(gp, X, 0.05, B)
    by_hand = torch.stack([
        MartingaleMixtureBound.from_model(
            gp, B, delta=DELTA / 5, mixture_scale=c, measurement_noise_std=0.05
        ).upper(X)
        for c in nonempty
    ])  # fmt: skip
    assert empty == len(MIXTURE_SCALES) - len(nonempty)
    assert torch.equal(upper, by_hand.min(0).values)
    assert set(argmin.tolist()) <= {MIXTURE_SCALES.index(c) for c in nonempty}
    upper, argmin, empty = c_grid_union(gp, X, 0.05, 1e-6 * min(thresholds))
    assert empty == 5 and bool(torch.isinf(upper).all()) and bool((argmin == -1).all())


def test_prefix_bound_of_all_observations_reproduces_measured_sigma(dtype):
    gp, X = _gp(), _candidates(dtype)
    measured = MartingaleMixtureBound.from_model(gp, delta=DELTA, measurement_noise_std=0.05)
    assert torch.equal(prefix_bound(measured, 14).upper(X), measured.upper(X))


def test_prefix_bound_is_the_bound_on_the_first_points_in_transformed_units():
    """By hand: Normalize with the bounds of all 14 inputs, Standardize with the mean and
    std of all 14 outcomes, minus the prior constant; the first 9 of them."""
    (gp, raw_X, raw_Y), X = _gp(data=True), _candidates(torch.float64)
    measured = MartingaleMixtureBound.from_model(gp, delta=DELTA, measurement_noise_std=0.05)
    low, high = raw_X.min(0).values, raw_X.max(0).values
    mean, std = raw_Y.mean(), raw_Y.std()
    constant = float(gp.mean_module.constant.detach())
    by_hand = MartingaleMixtureBound(
        ((raw_X - low) / (high - low))[:9], ((raw_Y - mean) / std - constant)[:9],
        gp.covar_module, measured.rkhs_norm_bound, measured.noise_std, DELTA,
        input_transform=gp.input_transform, outcome_shift=float(mean + std * constant),
        outcome_scale=float(std),
    )  # fmt: skip
    assert measured.noise_std == pytest.approx(0.05 / float(std))
    assert torch.allclose(prefix_bound(measured, 9).upper(X), by_hand.upper(X), rtol=1e-10)


def test_intersection_over_time_is_the_min_over_prefixes():
    gp, X = _gp(), _candidates(torch.float64)
    measured = MartingaleMixtureBound.from_model(gp, delta=DELTA, measurement_noise_std=0.05)
    sizes = [8, 11, 14]
    upper, argmin, empty = intersection_over_time(measured, X, sizes)
    each = torch.stack([prefix_bound(measured, m).upper(X) for m in sizes])
    assert empty == 0 and torch.equal(upper, each.min(0).values)
    assert bool((upper <= each).all()) and torch.equal(each[-1], measured.upper(X))
    assert torch.equal(argmin, each.argmin(0))


def _dense_min_radius_tilde_squared(bound: MartingaleMixtureBound, B: float) -> float:
    """``min_alpha R_t^2 + alpha B^2 - alpha y^T (K + alpha I)^{-1} y`` on a dense grid of
    alpha (NumPy, paper 002's eq. (8) and Cor. 4.3)."""
    with torch.no_grad():
        K = bound.kernel(bound.train_X).to_dense().numpy()
    y = bound.train_Y.numpy().reshape(-1)
    sigma2, c, t = bound.noise_std**2, bound.mixture_scale, len(y)
    A = np.eye(t) + c * K / sigma2
    radius_sq = (
        y @ np.linalg.solve(A, y)
        + sigma2 * np.linalg.slogdet(A)[1]
        + 2 * sigma2 * math.log(1 / bound.delta)
    )
    alphas = np.logspace(-12, 4, 4001)
    values = [radius_sq + a * B**2 - a * y @ np.linalg.solve(K + a * np.eye(t), y) for a in alphas]
    return min(values) / radius_sq


def test_smallest_nonempty_norm_bound_is_the_emptiness_threshold():
    gp, X = _gp(), _candidates(torch.float64)
    measured = MartingaleMixtureBound.from_model(gp, delta=DELTA, measurement_noise_std=0.05)
    smallest = smallest_nonempty_norm_bound(measured)
    assert 0 < smallest <= measured.rkhs_norm_bound
    bound = MartingaleMixtureBound.from_model(
        gp, smallest, delta=DELTA, measurement_noise_std=0.05
    )  # no EmptyConfidenceSetError
    assert bool(torch.isfinite(bound.upper(X)).all())
    assert _dense_min_radius_tilde_squared(measured, smallest) > -1e-6  # non-empty
    assert _dense_min_radius_tilde_squared(measured, 0.99 * smallest) < 0  # empty below
    with pytest.raises(EmptyConfidenceSetError):
        MartingaleMixtureBound.from_model(
            gp, 0.99 * smallest, delta=DELTA, measurement_noise_std=0.05
        )


def test_widths_match_a_by_hand_computation():
    gp, X = loop_state("branin-noisy", 0, extra_points=4, num_candidates=30)
    n = gp.train_inputs[0].shape[0]
    records = measure_state(gp, X, 5.0, [n - 2, n])
    assert list(records) == list(CONFIGURATIONS)
    with torch.no_grad():
        posterior = gp.posterior(X)
        mu, sd = posterior.mean.squeeze(-1).numpy(), posterior.variance.squeeze(-1).sqrt().numpy()
        measured = MartingaleMixtureBound.from_model(gp, delta=DELTA, measurement_noise_std=5.0)
        u = measured.upper(X).numpy()
        u_double = MartingaleMixtureBound.from_model(
            gp, 2 * measured.rkhs_norm_bound, delta=DELTA, measurement_noise_std=5.0
        ).upper(X)
    w, w_double = (u - mu) / sd, (u_double.numpy() - mu) / sd
    ucb = int(np.argmax(mu + math.sqrt(0.2) * sd))
    record = records[REFERENCE]
    assert record["median_width"] == pytest.approx(np.median(w), rel=1e-9)
    assert record["ucb_width"] == pytest.approx(w[ucb], rel=1e-9)
    assert record["ratio"] == 1.0 and record["noise_std"] == measured.noise_std
    double = records["B: 2 x data rule"]
    assert double["ratio"] == pytest.approx(np.median(w_double / w), rel=1e-9)
    assert double["rkhs_norm_bound"] == 2 * measured.rkhs_norm_bound
    for name in ("c-grid union", "intersection over time"):
        assert sum(records[name]["argmin_fractions"]) == pytest.approx(1.0)


def test_quick_command_line_writes_the_rows(tmp_path, capsys):
    threads = torch.get_num_threads()
    output = tmp_path / "w.json"
    code = main(["benchmark", "width-candidates", "--quick", "--output", str(output)])
    out = capsys.readouterr().out
    assert code == 0 and torch.get_num_threads() == threads
    document = json.loads(output.read_text())
    rows = document["rows"]
    assert [(row["problem"], row["configuration"]) for row in rows] == [
        (problem, name) for problem in ("branin", "branin-noisy") for name in CONFIGURATIONS
    ]
    assert all(row["ratio"] == 1.0 for row in rows if row["configuration"] == REFERENCE)
    assert document["settings"]["extra_points"] == 10
    for name in CONFIGURATIONS:
        if name != REFERENCE:
            assert f"{name}: median ratio " in out
    assert "1 torch thread(s)" in out and "c=0.1" in out and document["verdicts"]


def test_an_output_directory_is_refused_before_the_work(tmp_path):
    with pytest.raises(SystemExit):
        main(["benchmark", "width-candidates", "--quick", "--output", str(tmp_path)])
