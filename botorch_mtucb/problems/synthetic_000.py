"""Paper 000's synthetic problems (Section 5): RKHS function, perturbed sine, shifted
Branin-Hoo.

Choices the paper leaves open are documented in each problem's ``notes``.
"""

from __future__ import annotations

import math

import torch
from botorch.test_functions.synthetic import Branin
from gpytorch.kernels import RBFKernel
from torch import Tensor

from botorch_mtucb.kernels import UniformSimilarityTaskKernel
from botorch_mtucb.problems.multi_task_problem import MultiTaskProblem, heuristic_rkhs_norm_bound
from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain

DTYPE = torch.float64


def se_kernel(lengthscale: float) -> RBFKernel:
    """A unit-variance squared-exponential kernel ``exp(-||x - x'||^2 / (2 l^2))``
    (float64, lengthscale fixed).

    Example:
        >>> from botorch_mtucb.problems.synthetic_000 import se_kernel
        >>> se_kernel(0.2).lengthscale
        tensor([[0.2000]], dtype=torch.float64)
    """
    kernel = RBFKernel().to(DTYPE)
    kernel.lengthscale = lengthscale
    kernel.raw_lengthscale.requires_grad_(False)  # a fixed kernel (DESIGN.md)
    return kernel


def unit_grid(points_per_axis: int, dim: int) -> Tensor:
    """The regular grid of ``points_per_axis^dim`` points in ``[0, 1]^dim`` (float64).

    Example:
        >>> from botorch_mtucb.problems.synthetic_000 import unit_grid
        >>> unit_grid(2, 2)
        tensor([[0., 0.],
                [0., 1.],
                [1., 0.],
                [1., 1.]], dtype=torch.float64)
    """
    axis = torch.linspace(0.0, 1.0, points_per_axis, dtype=DTYPE)
    mesh = torch.meshgrid(*([axis] * dim), indexing="ij")
    return torch.stack([m.reshape(-1) for m in mesh], dim=-1)


def _kernel_expansion_problem(
    name: str, B: Tensor, generator: torch.Generator, lengthscale: float, notes: dict
) -> MultiTaskProblem:
    r"""``f = sum_{i <= 50} Gamma(., x_i) c_i`` for ``Gamma = k B`` on the 0.01-net of
    [0, 1]: 50 distinct centres drawn uniformly from the grid, then ``c_i ~ U[-1, 1]^n``
    (in that order, from ``generator``); noise ``N(0, 0.1^2 I)``;
    ``b = max_x ||f(x)||_2 / lambda_max(B)`` (paper 000, Section 5)."""
    num_tasks = B.shape[-1]
    points = torch.linspace(0.0, 1.0, 101, dtype=DTYPE).unsqueeze(-1)
    kernel = se_kernel(lengthscale)
    centres = points[torch.randperm(101, generator=generator)[:50]]
    coefficients = 2.0 * torch.rand(50, num_tasks, generator=generator, dtype=DTYPE) - 1.0
    weights = coefficients @ B  # row i: (B c_i)^T, since Gamma(x, x_i) c_i = k(x, x_i) B c_i

    def objective(X: Tensor) -> Tensor:
        return kernel(X.to(DTYPE), centres).to_dense() @ weights

    values = objective(points).detach()
    return MultiTaskProblem(
        name=name,
        domain=FiniteDomain(points),
        objective_function=objective,
        data_kernel=kernel,
        task_covariance=B,
        noise_std=0.1,
        rkhs_norm_bound=heuristic_rkhs_norm_bound(values, B),
        reference_point=values.amin(0),
        regret_points=points,
        notes={
            "domain": "0.01-net of [0, 1] (101 points)",
            "norm_bound": "b = max_x ||f(x)||_2 / lambda_max(B) (paper 000, Sec. 5)",
            "reference_point": "componentwise minimum of f over the domain",
            **notes,
        },
    )


def rkhs_problem(num_tasks: int = 2, seed: int = 0, lengthscale: float = 0.2) -> MultiTaskProblem:
    r"""Paper 000's RKHS function: ``f = sum_{i <= 50} Gamma(., x_i) c_i``.

    The domain is the 0.01-net of [0, 1] (101 points); ``Gamma = k B`` with ``k`` the
    SE kernel of lengthscale 0.2 and ``B = A^T A``, ``A_ij ~ U[0, 1]``; the 50 centres
    ``x_i`` are distinct grid points drawn uniformly, ``c_i ~ U[-1, 1]^n``; noise
    ``N(0, 0.1^2 I)``; ``b = max_x ||f(x)||_2 / kappa`` with ``kappa = lambda_max(B)``
    (as in the paper). ``seed`` draws ``A``, the centres and the coefficients.

    Raises:
        ValueError: If ``num_tasks < 1``.

    Example:
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(num_tasks=2, seed=0)
        >>> problem.name, problem.domain.points.shape, problem.num_tasks
        ('rkhs-2', torch.Size([101, 1]), 2)
    """
    if num_tasks < 1:
        raise ValueError(f"num_tasks must be >= 1, got {num_tasks}")
    generator = torch.Generator().manual_seed(int(seed))
    A = torch.rand(num_tasks, num_tasks, generator=generator, dtype=DTYPE)
    notes = {"kernel": f"SE lengthscale {lengthscale}, B = A^T A with A ~ U[0,1]^(n x n)"}
    return _kernel_expansion_problem(
        f"rkhs-{num_tasks}", A.T @ A, generator, lengthscale, {**notes, "seed": int(seed)}
    )


def similarity_problem(
    omega: float, seed: int = 0, num_tasks: int = 10, lengthscale: float = 0.2
) -> MultiTaskProblem:
    r"""An RKHS function for ``Gamma_omega = k (omega I + (1 - omega) 11^T / n)``
    (paper 000, Figure 1 (a)).

    As ``rkhs_problem`` with the uniform-similarity task covariance. The centres and
    coefficients depend on ``seed`` only, so every ``omega`` sees the same draw (common
    random numbers); small ``omega`` makes the tasks similar (``omega = 0``: identical).

    Raises:
        ValueError: If ``omega`` is outside [0, 1] or ``num_tasks < 1``.

    Example:
        >>> from botorch_mtucb.problems import similarity_problem
        >>> problem = similarity_problem(omega=0.4, num_tasks=3)
        >>> problem.name, problem.task_covariance[0]
        ('similarity-0.4', tensor([0.6000, 0.2000, 0.2000], dtype=torch.float64))
    """
    if not 0.0 <= omega <= 1.0:
        raise ValueError(f"omega must lie in [0, 1], got {omega}")
    if num_tasks < 1:
        raise ValueError(f"num_tasks must be >= 1, got {num_tasks}")
    generator = torch.Generator().manual_seed(int(seed))
    B = UniformSimilarityTaskKernel(num_tasks, omega, dtype=DTYPE).covar_matrix.to_dense().detach()
    notes = {
        "omega": omega,
        "num_tasks": num_tasks,
        "kernel": f"SE lengthscale {lengthscale}, uniform similarity omega = {omega}",
        "seed": int(seed),
    }
    return _kernel_expansion_problem(f"similarity-{omega:g}", B, generator, lengthscale, notes)


# Perturbation weights of the perturbed sine tasks (paper 000 says only that they are
# "carefully chosen"): each task keeps the common sine and differs locally.
SINE_PERTURBATION_WEIGHTS = (
    (1.0, -0.5, 0.0),
    (0.0, 1.0, -0.5),
    (-0.5, 0.0, 1.0),
    (0.5, 0.5, 0.5),
)
SINE_CENTRES = (0.05, 0.4, 0.7)


def perturbed_sine_problem(omega: float = 0.4, lengthscale: float = 0.2) -> MultiTaskProblem:
    r"""Paper 000's perturbed sine tasks (after Baldassarre et al. 2012), ``n = 4``.

    ``f_i(x) = sin(2 pi x) + 0.6 f_i^pert(x)`` on the 0.01-net of [0, 1], with
    ``f_i^pert(x) = sum_j w_ij exp(-(x - c_j)^2 / (2 * 0.1^2))``, centres
    ``c = (0.05, 0.4, 0.7)`` and the weights ``SINE_PERTURBATION_WEIGHTS`` (our
    choice); noise variance 0.01; kernel ``k (omega I + (1 - omega) 11^T / n)`` with
    ``omega = 0.4`` and an SE ``k`` of lengthscale 0.2 (our choice);
    ``b = max_x ||f(x)||_2 / kappa`` as for the RKHS function (our choice).

    Example:
        >>> from botorch_mtucb.problems import perturbed_sine_problem
        >>> problem = perturbed_sine_problem()
        >>> problem.objective(problem.domain.points).shape  # 101 points x 4 tasks
        torch.Size([101, 4])
    """
    points = torch.linspace(0.0, 1.0, 101, dtype=DTYPE).unsqueeze(-1)
    weights = torch.tensor(SINE_PERTURBATION_WEIGHTS, dtype=DTYPE)  # n x 3
    centres = torch.tensor(SINE_CENTRES, dtype=DTYPE)

    def objective(X: Tensor) -> Tensor:
        x = X.to(DTYPE)  # ... x 1
        bumps = torch.exp(-((x - centres) ** 2) / (2 * 0.1**2))  # ... x 3
        return torch.sin(2 * math.pi * x) + 0.6 * bumps @ weights.T

    B = UniformSimilarityTaskKernel(4, omega).to(DTYPE).covar_matrix.to_dense().detach()
    values = objective(points)
    return MultiTaskProblem(
        name="sine",
        domain=FiniteDomain(points),
        objective_function=objective,
        data_kernel=se_kernel(lengthscale),
        task_covariance=B,
        noise_std=0.1,
        rkhs_norm_bound=heuristic_rkhs_norm_bound(values, B),
        reference_point=values.amin(0),
        regret_points=points,
        notes={
            "perturbation_weights": SINE_PERTURBATION_WEIGHTS,
            "kernel": f"SE lengthscale {lengthscale}, uniform similarity omega = {omega}",
            "norm_bound": "b = max_x ||f(x)||_2 / lambda_max(B)",
        },
    )


def shifted_branin_problem(
    continuous: bool = False,
    num_tasks: int = 9,
    omega: float = 0.5,
    lengthscale: float = 0.2,
    grid_points_per_axis: int = 15,
) -> MultiTaskProblem:
    r"""Paper 000's shifted Branin-Hoo tasks (9 tasks), on a grid or on the box.

    The Branin-Hoo function is BoTorch's ``botorch.test_functions.synthetic.Branin``

    .. math::
        B(x) = (x_2 - b x_1^2 + c x_1 - r)^2 + s (1 - t) \cos(x_1) + s,

    ``b = 5.1 / (4 pi^2)``, ``c = 5 / pi``, ``r = 6``, ``s = 10``, ``t = 1 / (8 pi)``, on
    ``x1 in [-5, 10], x2 in [0, 15]``. Inputs ``u in [0, 1]^2`` map to
    ``x1 = -5 + 15 u1``, ``x2 = 15 u2``. Task ``i`` (``i = 1..n``) is the Branin-Hoo
    function translated by ``i`` % of the range along one axis (odd ``i``: the first,
    even ``i``: the second; the paper says "along either axis"), turned into a
    maximization problem on ``[0, 1]``: ``(max - B) / (max - min)`` with the extremes of
    the unshifted function on a 100 x 100 grid (our choice). Noise ``N(0, 0.1^2 I)``,
    kernel ``k (omega I + (1 - omega) 11^T / n)`` with ``omega = 0.5`` and an SE ``k`` of
    lengthscale 0.2; ``b = max ||f||_2 / kappa`` over the regret grid.

    Args:
        continuous: ``True``: the box ``[0, 1]^2`` (``optimize_acqf``); ``False``: the
            ``grid_points_per_axis^2`` grid.
        num_tasks: The number of shifted copies ``n``.
        omega: The similarity of the uniform task kernel, in ``[0, 1]``.
        lengthscale: The SE kernel's lengthscale.
        grid_points_per_axis: Points per axis of the finite domain.

    Example:
        >>> from botorch_mtucb.problems import shifted_branin_problem
        >>> problem = shifted_branin_problem()
        >>> problem.name, problem.domain.points.shape, problem.num_tasks
        ('branin', torch.Size([225, 2]), 9)
        >>> type(shifted_branin_problem(continuous=True).domain).__name__
        'BoxDomain'
    """
    shifts = torch.zeros(num_tasks, 2, dtype=DTYPE)
    for i in range(1, num_tasks + 1):
        shifts[i - 1, (i - 1) % 2] = i / 100.0
    box = Branin(dtype=DTYPE).bounds  # [-5, 10] x [0, 15]
    lower, width = box[0], box[1] - box[0]
    # The shifted copies evaluate Branin below the box by up to the largest shift.
    reach = lower - width * shifts.amax(0)
    branin = Branin(bounds=list(zip(reach.tolist(), box[1].tolist())), dtype=DTYPE)
    dense = unit_grid(100, 2)
    raw = branin.evaluate_true(lower + width * dense)
    highest, lowest = raw.max(), raw.min()

    def objective(X: Tensor) -> Tensor:
        u = X.to(DTYPE).unsqueeze(-2) - shifts  # ... x n x 2
        return (highest - branin.evaluate_true(lower + width * u)) / (highest - lowest)

    B = UniformSimilarityTaskKernel(num_tasks, omega).to(DTYPE).covar_matrix.to_dense().detach()
    if continuous:
        domain: FiniteDomain | BoxDomain = BoxDomain(
            torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=DTYPE)
        )
        regret_points = dense
    else:
        regret_points = unit_grid(grid_points_per_axis, 2)
        domain = FiniteDomain(regret_points)
    values = objective(regret_points)
    return MultiTaskProblem(
        name="branin-box" if continuous else "branin",
        domain=domain,
        objective_function=objective,
        data_kernel=se_kernel(lengthscale),
        task_covariance=B,
        noise_std=0.1,
        rkhs_norm_bound=heuristic_rkhs_norm_bound(values, B),
        reference_point=objective(dense).amin(0),
        regret_points=regret_points,
        notes={
            "shifts": "task i translated by i% of the range, odd i along x1, even i along x2",
            "scaling": "(max - branin) / (max - min) of the unshifted Branin on a 100x100 grid",
            "kernel": f"SE lengthscale {lengthscale}, uniform similarity omega = {omega}",
            "domain": "box [0,1]^2" if continuous else f"{grid_points_per_axis}^2 grid",
            "regret_points": "100x100 grid" if continuous else "the grid",
        },
    )


__all__ = [
    "perturbed_sine_problem",
    "rkhs_problem",
    "se_kernel",
    "shifted_branin_problem",
    "similarity_problem",
    "unit_grid",
]
