"""The light-sensor problem: real readings of 41 light sensors (paper 000, Section 5,
"Sensor measurements", adapted to the light-sensor data shipped with the package).

Data: ``data/light_sensor.npz`` (provenance in ``data/LIGHT_SENSOR.md``). Choices, all
recorded in the problem's ``notes``:

* Domain: the 41 sensor locations, coordinates shifted and divided by the largest
  range so that they lie in ``[0, 1]^2`` (aspect ratio kept).
* Tasks (``n = 3``): the mean lux at each location over three consecutive blocks of
  64 test readings, divided by the largest test reading (``reading_scale_lux`` in the
  notes, 517.1 lux), so ``f`` lies in [0, 1]: its unit, and the regret's, is that
  largest reading.
* Observation of task ``i`` at a location: one test reading of block ``i`` there,
  drawn uniformly at random and normalized the same way (real noise).
* Kernel, from the training readings only (normalized the same way): an SE kernel
  with a signal variance and a white-noise term fitted by maximum marginal likelihood
  (BoTorch's ``fit_gpytorch_mll``, three starting lengthscales) to the 601 training
  time steps, each seen as a draw of a zero-mean GP over the locations. The data
  kernel ``k`` is the fitted correlation plus the fitted noise-to-signal ratio on the
  diagonal (a nugget: on a finite domain this keeps ``K`` invertible, so the RKHS norm
  is finite). ``B = R^T K^{-1} R / m`` with ``R`` the ``m x 3`` matrix (``m = 41``
  locations) of the training readings' means over three consecutive blocks of the
  training time steps (the training analogue of the tasks).
* Noise level ``sigma^2``: for each task, the within-block variance over time of the
  training readings, averaged over locations; the largest of the three.
* Regularizer ``eta = 0.1`` (paper 000's value).
* Norm bounds: the exact RKHS norm ``sqrt(vec(F)^T G^{-1} vec(F))`` of ``f`` with
  ``G = K kron B`` for MT-KB, and with ``G = K kron diag(B)`` for the independent
  baselines (each method gets the norm of ``f`` in its own RKHS).
"""

from __future__ import annotations

import functools
from importlib import resources

import gpytorch
import numpy as np
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models.gpytorch import GPyTorchModel
from gpytorch.kernels import Kernel, RBFKernel
from torch import Tensor

from botorch_mtucb.problems.multi_task_problem import (
    MultiTaskProblem,
    finite_domain_rkhs_norm,
    kernel_matrix,
)
from botorch_mtucb.utils.domains import FiniteDomain, RowIndex

DTYPE = torch.float64
NUM_BLOCKS = 3


class FiniteDomainNuggetKernel(Kernel):
    r"""``k(x, x') = nugget * 1[x == x']``: a white-noise term on a finite domain.

    Added to a stationary kernel on a finite set of locations it keeps the kernel
    matrix invertible (every function on the set has a finite RKHS norm).

    Args:
        nugget: The variance added where ``x == x'`` (``>= 0``).
        **kwargs: Passed to ``gpytorch.kernels.Kernel``.

    Raises:
        ValueError: If ``nugget < 0``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems.light_sensor import FiniteDomainNuggetKernel
        >>> X = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
        >>> FiniteDomainNuggetKernel(0.5)(X, X).to_dense()
        tensor([[0.5000, 0.0000, 0.5000],
                [0.0000, 0.5000, 0.0000],
                [0.5000, 0.0000, 0.5000]])
    """

    def __init__(self, nugget: float, **kwargs) -> None:
        super().__init__(**kwargs)
        if not nugget >= 0:
            raise ValueError(f"nugget must be >= 0, got {nugget}")
        self.nugget = float(nugget)

    def forward(self, x1: Tensor, x2: Tensor, diag: bool = False, **params) -> Tensor:
        if diag:
            return torch.full(x1.shape[:-1], self.nugget, dtype=x1.dtype, device=x1.device)
        equal = (x1.unsqueeze(-2) == x2.unsqueeze(-3)).all(dim=-1)
        return self.nugget * equal.to(x1.dtype)


def load_light_sensor_data() -> dict[str, np.ndarray]:
    """The arrays of the shipped ``light_sensor.npz`` (see ``data/LIGHT_SENSOR.md``).

    Example:
        >>> from botorch_mtucb.problems.light_sensor import load_light_sensor_data
        >>> data = load_light_sensor_data()
        >>> data["coords"].shape, data["train_lux"].shape, data["test_lux"].shape
        ((41, 2), (601, 41), (192, 41))
    """
    path = resources.files("botorch_mtucb.problems") / "data" / "light_sensor.npz"
    with resources.as_file(path) as file, np.load(file) as data:
        return {key: data[key] for key in data.files}


class _SpatialGP(gpytorch.models.ExactGP, GPyTorchModel):
    """Zero-mean GP over locations; the training targets hold one row per time step
    (``r x m`` targets for ``m`` locations: ``r`` independent replicates)."""

    _num_outputs = 1

    def __init__(self, X: Tensor, Y: Tensor, likelihood) -> None:
        super().__init__(X, Y, likelihood)
        self.covar_module = gpytorch.kernels.ScaleKernel(RBFKernel())

    def forward(self, x: Tensor):
        mean = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
        return gpytorch.distributions.MultivariateNormal(mean, self.covar_module(x))


# Tolerances of the L-BFGS-B fit (scipy's defaults stop about 1e-6 away, relatively,
# from the optimum of this flat likelihood).
FIT_OPTIONS = {"ftol": 1e-14, "gtol": 1e-10}
INITIAL_LENGTHSCALES = (0.1, 0.3, 1.0)


def fit_spatial_se_kernel(X: Tensor, readings: Tensor) -> dict[str, float]:
    r"""Maximum-likelihood SE kernel over locations for replicated readings.

    Maximizes ``sum_r log N(y_r; 0, s k_l(X, X) + sigma_n^2 I)`` over the lengthscale
    ``l``, the signal variance ``s`` and the white-noise variance ``sigma_n^2``, each
    row ``y_r`` of ``readings`` being an independent draw over the ``m`` locations
    (GPyTorch's exact marginal likelihood summed over the rows). The fit is BoTorch's
    ``fit_gpytorch_mll`` (L-BFGS-B, tolerances ``FIT_OPTIONS``) from each of the
    ``INITIAL_LENGTHSCALES``; the best end point is kept (deterministic).

    Args:
        X: ``m x d`` locations.
        readings: ``r x m`` readings (one row per time step).

    Returns:
        ``{"lengthscale", "outputscale", "noise"}`` (GPyTorch's SE, signal variance,
        white-noise variance).

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems.light_sensor import fit_spatial_se_kernel
        >>> generator = torch.Generator().manual_seed(0)
        >>> X = torch.rand(10, 2, generator=generator, dtype=torch.float64)
        >>> readings = torch.randn(50, 10, generator=generator, dtype=torch.float64)
        >>> sorted(fit_spatial_se_kernel(X, readings))
        ['lengthscale', 'noise', 'outputscale']
    """
    best: tuple[float, dict[str, float]] | None = None
    for initial_lengthscale in INITIAL_LENGTHSCALES:
        likelihood = gpytorch.likelihoods.GaussianLikelihood().to(DTYPE)
        model = _SpatialGP(X, readings, likelihood).to(DTYPE)
        model.covar_module.base_kernel.lengthscale = initial_lengthscale
        model.covar_module.outputscale = float(readings.square().mean())
        likelihood.noise = 0.1 * float(readings.var())
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
        # One attempt per start (no priors to resample from); an end point with an
        # optimizer warning is kept and compared like the others.
        fit_gpytorch_mll(
            mll,
            optimizer_kwargs={"options": FIT_OPTIONS},
            max_attempts=1,
            warning_handler=lambda warning: True,
        )
        model.train()  # the training likelihood, not the posterior predictive
        with torch.no_grad():
            loss = float(-mll(model(X), readings).sum())
            fitted = {
                "lengthscale": float(model.covar_module.base_kernel.lengthscale),
                "outputscale": float(model.covar_module.outputscale),
                "noise": float(likelihood.noise),
            }
        if best is None or loss < best[0]:
            best = (loss, fitted)
    return best[1]


@functools.lru_cache(maxsize=1)
def _light_sensor_setup() -> dict:
    data = load_light_sensor_data()
    coords = torch.tensor(data["coords"], dtype=DTYPE)
    lower = coords.amin(0)
    X = (coords - lower) / (coords.amax(0) - lower).amax()
    scale = float(data["test_lux"].max())
    train = torch.tensor(data["train_lux"], dtype=DTYPE) / scale  # 601 x 41
    test = torch.tensor(data["test_lux"], dtype=DTYPE) / scale  # 192 x 41
    fitted = fit_spatial_se_kernel(X, train)
    nugget = fitted["noise"] / fitted["outputscale"]
    kernel = RBFKernel().to(DTYPE) + FiniteDomainNuggetKernel(nugget)
    kernel.kernels[0].lengthscale = fitted["lengthscale"]
    for parameter in kernel.parameters():
        parameter.requires_grad_(False)
    K = kernel_matrix(kernel, X)
    train_blocks = torch.tensor_split(torch.arange(train.shape[0]), NUM_BLOCKS)
    test_blocks = torch.tensor_split(torch.arange(test.shape[0]), NUM_BLOCKS)
    R = torch.stack([train[b].mean(0) for b in train_blocks], dim=1)  # m x 3
    B = R.T @ torch.linalg.solve(K, R) / R.shape[0]
    B = 0.5 * (B + B.T)
    noise_variance = max(float(train[b].var(0).mean()) for b in train_blocks)
    F = torch.stack([test[b].mean(0) for b in test_blocks], dim=1)  # 41 x 3
    readings = torch.stack([test[b] for b in test_blocks], dim=0)  # 3 x 64 x 41
    return {
        "X": X,
        "F": F,
        "readings": readings,
        "kernel": kernel,
        "B": B,
        "sigma": noise_variance**0.5,
        "norm": finite_domain_rkhs_norm(F, K, B),
        "independent_norm": finite_domain_rkhs_norm(F, K, torch.diag(torch.diag(B))),
        "fitted": fitted,
        "scale": scale,
    }


def light_sensor_problem() -> MultiTaskProblem:
    """The light-sensor problem (41 locations, 3 tasks, real noise); see the module
    docstring for every choice.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems import light_sensor_problem
        >>> problem = light_sensor_problem()
        >>> problem.domain.points.shape, problem.num_tasks
        (torch.Size([41, 2]), 3)
        >>> problem.observe(problem.domain.points[0], torch.Generator().manual_seed(0)).shape
        torch.Size([3])
    """
    setup = _light_sensor_setup()
    X, F, readings = setup["X"], setup["F"], setup["readings"]
    rows = RowIndex(X)

    def objective(points: Tensor) -> Tensor:
        index = _location_index(X, points, rows)
        return F[index]

    def observe(x: Tensor, generator: torch.Generator) -> Tensor:
        index = _location_index(X, x.reshape(1, -1), rows)[0]
        draws = torch.randint(0, readings.shape[1], (readings.shape[0],), generator=generator)
        return readings[torch.arange(readings.shape[0]), draws, index]

    return MultiTaskProblem(
        name="light-sensor",
        domain=FiniteDomain(X),
        objective_function=objective,
        observation_function=observe,
        data_kernel=setup["kernel"],
        task_covariance=setup["B"],
        noise_std=setup["sigma"],
        rkhs_norm_bound=setup["norm"],
        independent_rkhs_norm_bound=setup["independent_norm"],
        reference_point=F.amin(0),
        regret_points=X,
        notes={
            "data": "light_sensor.npz (see LIGHT_SENSOR.md)",
            "fitted_se_kernel": setup["fitted"],
            "task_covariance": setup["B"].tolist(),
            "noise_std": setup["sigma"],
            "rkhs_norm_bound": setup["norm"],
            "independent_rkhs_norm_bound": setup["independent_norm"],
            "reading_scale_lux": setup["scale"],
        },
    )


def _location_index(X: Tensor, points: Tensor, rows: RowIndex | None = None) -> Tensor:
    """Index of each of ``points`` (``... x 2``) among the locations ``X`` (points equal to
    locations are looked up in ``rows``, the others within ``1e-9``).

    Raises:
        ValueError: If a point is not one of the 41 locations.
    """
    flat = points.reshape(-1, X.shape[-1])
    found = None if rows is None else rows.find(flat)
    flat = flat.to(X)
    if found is not None:
        return found.reshape(points.shape[:-1])
    distances = (flat.unsqueeze(-2) - X).abs().amax(dim=-1)  # P x 41
    best = distances.min(dim=-1)
    if (best.values > 1e-9).any():
        raise ValueError("the light-sensor problem is defined on its 41 locations only")
    return best.indices.reshape(points.shape[:-1])
