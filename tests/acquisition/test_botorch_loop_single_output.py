"""BoTorch's loop with the single-output acquisitions of the package: 10 iterations of
(build a SingleTaskGP, build the acquisition from it, optimize_acqf, observe) for every
acquisition x model (default Standardize, with Normalize, with fixed noise) x dtype,
q = 1 and q = 3 sequential (iterations 5 and 10), without an error; at the end the values are checked
against an independent computation: the martingale-mixture bound built by hand on the
data transformed by hand (NumPy min-max scaling and standardization) and mapped back,
and the widths against 1/2 log det(I + K / lambda) in NumPy with BoTorch's posterior.

Hyperparameters are set, not fitted, to keep the loop fast (the fitted loop is the
Branin measurement of the closing note).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Normalize
from botorch.optim import optimize_acqf
from botorch.test_functions import Branin

from botorch_mtucb.acquisition import AYGPUCB, IGPUCB, MartingaleMixtureUCB
from botorch_mtucb.confidence import MartingaleMixtureBound

ACQUISITIONS = ("CMM", "DMM", "AMM", "IGP-UCB", "AY-GP-UCB")
MODELS = ("default", "normalize", "fixed_noise")
DELTA, NOISE, LENGTHSCALE = 0.01, 1e-3, 0.3
PROBLEM = Branin(negate=True)


def build_model(kind, X, Y):
    bounds = PROBLEM.bounds.to(X)
    if kind == "default":  # Standardize only; inputs scaled to the unit cube by the user
        model = SingleTaskGP(X, Y)
    elif kind == "normalize":
        model = SingleTaskGP(X, Y, input_transform=Normalize(2, bounds=bounds))
    else:
        Yvar = torch.full_like(Y, 4.0)  # user units: noise std 2 on a range of about 300
        model = SingleTaskGP(X, Y, Yvar, input_transform=Normalize(2, bounds=bounds))
    model.covar_module.lengthscale = torch.tensor(LENGTHSCALE, dtype=X.dtype)
    if kind != "fixed_noise":
        model.likelihood.noise = torch.tensor(NOISE, dtype=X.dtype)
    return model.eval()


def build_acquisition(name, model):
    if name in ("CMM", "DMM", "AMM"):
        return MartingaleMixtureUCB(model, delta=DELTA, alphas=None if name == "CMM" else name)
    return (IGPUCB if name == "IGP-UCB" else AYGPUCB)(model, delta=DELTA)


def user_space(kind, X):
    """The box the acquisition is maximized over: the user's inputs."""
    bounds = PROBLEM.bounds.to(X)
    return torch.stack([torch.zeros(2), torch.ones(2)]).to(X) if kind == "default" else bounds


def transformed_by_hand(kind, X, Y):
    """NumPy min-max scaling (with the problem's bounds) and standardization."""
    low, high = PROBLEM.bounds.double().numpy()
    Y64 = Y.double().numpy()[:, 0]

    def inputs(Z):
        Z = Z.double().numpy()
        return torch.as_tensor(Z if kind == "default" else (Z - low) / (high - low))

    return inputs, inputs(X), Y64.mean(), Y64.std(ddof=1)


def check_values(name, kind, model, acqf, X, Y, candidates):
    inputs, Xt, mean, std = transformed_by_hand(kind, X, Y)
    tol = 1e-6 if X.dtype == torch.float64 else 2e-3
    values = acqf(candidates.unsqueeze(-2)).detach().double()
    if name in ("CMM", "DMM", "AMM"):
        bound = acqf.bound
        prior_mean = float(model.mean_module.constant)
        y = torch.as_tensor((Y.double().numpy()[:, 0] - mean) / std - prior_mean).unsqueeze(-1)
        direct = MartingaleMixtureBound(
            Xt, y, model.covar_module, bound.rkhs_norm_bound, bound.noise_std, DELTA
        )
        alphas = None if acqf.alphas is None else acqf.alphas
        expected = mean + std * (prior_mean + direct.upper(inputs(candidates), alphas))
    else:
        K = np.exp(-0.5 * ((Xt[:, None] - Xt[None]) ** 2).sum(-1).numpy() / LENGTHSCALE**2)
        lam = 4.0 / std**2 if kind == "fixed_noise" else NOISE
        gamma = 0.5 * np.linalg.slogdet(np.eye(len(K)) + K / lam)[1]
        t, B, log_term = len(K), acqf.rkhs_norm_bound, 2 * math.log(1 / DELTA)
        if name == "IGP-UCB":
            width = B + math.sqrt(1 + 2 / t) * math.sqrt(2 * gamma + 2 + log_term)
        else:
            width = B + math.sqrt(2 * gamma + log_term)
        with torch.no_grad():
            posterior = model.posterior(candidates.unsqueeze(-2))
        expected = (posterior.mean + width * posterior.variance.sqrt()).reshape(-1).double()
    torch.testing.assert_close(values, expected, rtol=tol, atol=tol * float(expected.abs().max()))


@pytest.mark.parametrize("kind", MODELS)
@pytest.mark.parametrize("name", ACQUISITIONS)
def test_ten_iteration_loop(name, kind, dtype):
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    bounds = PROBLEM.bounds.to(dtype)
    X = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(5, 2, generator=generator).to(dtype)
    if kind == "default":
        X = (X - bounds[0]) / (bounds[1] - bounds[0])

    def observe(Z):
        raw = Z if kind != "default" else bounds[0] + (bounds[1] - bounds[0]) * Z
        return PROBLEM(raw.double()).to(dtype).unsqueeze(-1)

    Y = observe(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float32 and unit-cube warnings of BoTorch
        for iteration in range(10):
            q = 3 if iteration in (4, 9) else 1
            model = build_model(kind, X, Y)
            acqf = build_acquisition(name, model)
            candidates, _ = optimize_acqf(
                acqf, user_space(kind, X), q=q, num_restarts=1, raw_samples=8,
                sequential=q > 1, options={"maxiter": 3},
            )  # fmt: skip
            assert candidates.shape == (q, 2) and candidates.dtype == dtype
            if q > 1:
                assert torch.cdist(candidates, candidates).add(torch.eye(q, dtype=dtype)).min() > 0
            X, Y = torch.cat([X, candidates]), torch.cat([Y, observe(candidates)])
        check_values(
            name, kind, model, acqf, X[: -len(candidates)], Y[: -len(candidates)], candidates
        )
