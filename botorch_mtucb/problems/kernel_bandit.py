r"""Paper 002's synthetic kernel bandits (Section 7): RKHS test functions of a given norm
and random action sets.

Source: paper 002, Section 7 ("Experimental Setup"): 20 inducing points ``z_i`` uniform
in ``[0, 1]^d``, weights ``w ~ N(0, I_20)``, ``f(x) = b sum_i w_i k(x, z_i)`` with ``b``
such that ``||f||_H = B``, i.e. ``b = B / sqrt(w^T K_Z w)``; Gaussian noise
``N(0, sigma^2)``; each round 100 actions uniform in ``[0, 1]^d``; the regret of round
``t`` is ``f(x*_t) - f(x_t)`` with ``x*_t`` the best action of that round (Section 5.1).

Choices the paper leaves open: the kernels are GPyTorch's unit-variance ``RBFKernel``
and ``MaternKernel`` (no output scale); the test function, the action sets and the
noise are drawn from seeded generators so that every method of one repetition faces the
same function, actions and noise.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel
from torch import Tensor

from botorch_mtucb.utils.checks import check_positive

DTYPE = torch.float64
KERNEL_FAMILIES = {"rbf": math.inf, "matern52": 2.5, "matern32": 1.5}


def make_kernel(family: str, lengthscale: float) -> Kernel:
    """A unit-variance float64 kernel: ``"rbf"``, ``"matern52"`` or ``"matern32"``.

    Raises:
        ValueError: For an unknown family or ``lengthscale <= 0``.

    Example:
        >>> from botorch_mtucb.problems import make_kernel
        >>> make_kernel("matern52", 0.2).lengthscale
        tensor([[0.2000]], dtype=torch.float64)
    """
    if family not in KERNEL_FAMILIES:
        raise ValueError(f"family must be one of {sorted(KERNEL_FAMILIES)}, got {family!r}")
    lengthscale = check_positive(lengthscale, "lengthscale")
    kernel = RBFKernel() if family == "rbf" else MaternKernel(nu=KERNEL_FAMILIES[family])
    kernel = kernel.to(DTYPE)
    kernel.lengthscale = lengthscale
    for parameter in kernel.parameters():
        parameter.requires_grad_(False)
    return kernel


class RKHSTestFunction:
    r"""``f(x) = sum_i a_i k(x, z_i)``, an element of the RKHS of ``k`` (paper 002, Sec. 7).

    Args:
        kernel: The kernel ``k``.
        inducing_points: ``m x d`` points ``z_i``.
        coefficients: ``m`` coefficients ``a_i = b w_i``.

    Its RKHS norm is ``sqrt(a^T K_Z a)`` (``rkhs_norm``).

    Raises:
        ValueError: If ``inducing_points`` is not ``m x d`` or ``coefficients`` not ``m``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems import RKHSTestFunction, make_kernel
        >>> kernel = make_kernel("rbf", 0.2)
        >>> f = RKHSTestFunction(kernel, torch.zeros(1, 2), torch.tensor([2.0]))
        >>> f.rkhs_norm, f(torch.zeros(3, 2))
        (2.0, tensor([2., 2., 2.], dtype=torch.float64))
    """

    def __init__(self, kernel: Kernel, inducing_points: Tensor, coefficients: Tensor) -> None:
        if inducing_points.dim() != 2 or coefficients.shape != inducing_points.shape[:1]:
            raise ValueError("inducing_points must be m x d and coefficients m")
        self.kernel = kernel
        self.inducing_points = inducing_points.to(DTYPE)
        self.coefficients = coefficients.to(DTYPE)

    @classmethod
    def sample(
        cls,
        kernel: Kernel,
        dim: int,
        rkhs_norm: float,
        num_inducing: int = 20,
        generator: torch.Generator | None = None,
    ) -> RKHSTestFunction:
        r"""Paper 002's test function: ``z_i ~ U[0, 1]^d``, ``w ~ N(0, I)``, scaled to
        ``||f||_H = rkhs_norm``.

        Raises:
            ValueError: If ``dim < 1``, ``num_inducing < 1`` or ``rkhs_norm <= 0``.

        Example:
            >>> import torch
            >>> from botorch_mtucb.problems import RKHSTestFunction, make_kernel
            >>> generator = torch.Generator().manual_seed(0)
            >>> f = RKHSTestFunction.sample(make_kernel("rbf", 0.2), 2, 1.5, generator=generator)
            >>> round(f.rkhs_norm, 6), f.inducing_points.shape
            (1.5, torch.Size([20, 2]))
        """
        if dim < 1 or num_inducing < 1:
            raise ValueError(f"dim and num_inducing must be >= 1, got {dim}, {num_inducing}")
        rkhs_norm = check_positive(rkhs_norm, "rkhs_norm")
        points = torch.rand(num_inducing, dim, generator=generator, dtype=DTYPE)
        weights = torch.randn(num_inducing, generator=generator, dtype=DTYPE)
        with torch.no_grad():
            gram = kernel(points, points).to_dense().to(DTYPE)
        scale = rkhs_norm / torch.sqrt(weights @ gram @ weights)
        return cls(kernel, points, scale * weights)

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.inducing_points.shape[-1]

    @property
    def rkhs_norm(self) -> float:
        """``||f||_H = sqrt(a^T K_Z a)``."""
        with torch.no_grad():
            gram = self.kernel(self.inducing_points, self.inducing_points).to_dense()
        return float(torch.sqrt(self.coefficients @ gram @ self.coefficients))

    def __call__(self, X: Tensor) -> Tensor:
        """``f(X)``: ``... x d`` -> ``...`` (float64, differentiable in ``X``)."""
        batch = X.shape[:-1]
        flat = X.reshape(-1, X.shape[-1]).to(DTYPE)
        values = self.kernel(flat, self.inducing_points).to_dense() @ self.coefficients
        return values.reshape(batch)

    def maximum(self, num_samples: int = 8192, seed: int = 0) -> tuple[Tensor, float]:
        """An estimate of ``max_{x in [0, 1]^d} f(x)``: the best of ``num_samples``
        Sobol points polished by L-BFGS-B (BoTorch's ``optimize_acqf`` machinery is not
        needed for a known function). Returns ``(x, f(x))``.

        Example:
            >>> import torch
            >>> from botorch_mtucb.problems import RKHSTestFunction, make_kernel
            >>> bump = torch.full((1, 1), 0.3)  # f = k(., 0.3): maximal at x = 0.3
            >>> f = RKHSTestFunction(make_kernel("rbf", 0.2), bump, torch.ones(1))
            >>> x, value = f.maximum(num_samples=64)
            >>> round(float(x), 4), round(value, 4)
            (0.3, 1.0)
        """
        from scipy.optimize import minimize
        from torch.quasirandom import SobolEngine

        engine = SobolEngine(self.dim, scramble=True, seed=seed)
        points = engine.draw(num_samples, dtype=DTYPE)
        with torch.no_grad():
            values = self(points)
        best_x, best_value = points[values.argmax()], float(values.max())
        for start in points[values.topk(min(5, num_samples)).indices]:

            def negative(x):
                with torch.enable_grad():
                    tensor = torch.tensor(x, dtype=DTYPE, requires_grad=True)
                    value = -self(tensor.unsqueeze(0))[0]
                    value.backward()
                return float(value.detach()), tensor.grad.numpy()

            result = minimize(
                negative, start.numpy(), jac=True, method="L-BFGS-B", bounds=[(0, 1)] * self.dim
            )
            if -result.fun > best_value:
                best_value = float(-result.fun)
                best_x = torch.tensor(result.x, dtype=DTYPE)
        return best_x, best_value


class KernelBanditEnvironment:
    r"""Paper 002's kernel bandit protocol (Sections 5.1 and 7).

    Each round's context holds ``num_actions`` actions uniform in ``[0, 1]^d`` (key
    ``"_actions"``, not recorded); observations are ``f(x) + N(0, noise_std^2)``; the
    regret is ``max_{a in X_t} f(a) - f(x)``. With ``num_actions=None`` the domain is the
    whole cube (continuous KernelUCB) and the regret is taken against an estimate of
    ``max f`` (``RKHSTestFunction.maximum``).

    Args:
        function: The reward function ``f``.
        noise_std: ``sigma > 0`` of the Gaussian noise.
        num_actions: Actions per round (paper 002: 100), or ``None``.

    Raises:
        ValueError: If ``noise_std <= 0`` or ``num_actions < 1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.problems import (
        ...     KernelBanditEnvironment, RKHSTestFunction, make_kernel)
        >>> generator = torch.Generator().manual_seed(0)
        >>> f = RKHSTestFunction.sample(make_kernel("rbf", 0.2), 2, 1.0, generator=generator)
        >>> environment = KernelBanditEnvironment(f, noise_std=0.1, num_actions=100)
        >>> context = environment.context(0, generator)
        >>> context["_actions"].shape
        torch.Size([100, 2])
        >>> environment.regret(context["_actions"][0], context) >= 0
        True
    """

    def __init__(
        self, function: RKHSTestFunction, noise_std: float = 0.1, num_actions: int | None = 100
    ) -> None:
        self.function = function
        self.noise_std = check_positive(noise_std, "noise_std")
        if num_actions is not None and num_actions < 1:
            raise ValueError(f"num_actions must be >= 1 or None, got {num_actions}")
        self.num_actions = num_actions
        self._maximum: float | None = None

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.function.dim

    @property
    def bounds(self) -> Tensor:
        """The unit cube, ``2 x d``."""
        return torch.stack([torch.zeros(self.dim, dtype=DTYPE), torch.ones(self.dim, dtype=DTYPE)])

    def context(self, t: int, generator: torch.Generator) -> dict[str, Any]:
        """``{"_actions": X_t}`` (``num_actions x d``), or ``{}`` for the whole cube."""
        if self.num_actions is None:
            return {}
        actions = torch.rand(self.num_actions, self.dim, generator=generator, dtype=DTYPE)
        return {"_actions": actions}

    def observe(self, x: Tensor, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``y_t = f(x_t) + eps_t`` (a 1-element tensor)."""
        with torch.no_grad():
            value = self.function(x.reshape(1, -1))
        noise = self.noise_std * torch.randn(1, generator=generator, dtype=DTYPE)
        return value + noise

    def regret(self, x: Tensor, context: dict[str, Any]) -> float:
        """``f(x*_t) - f(x_t)``, ``x*_t`` the round's best action (or the maximizer)."""
        with torch.no_grad():
            value = float(self.function(x.reshape(1, -1))[0])
            if "_actions" in context:
                best = float(self.function(context["_actions"]).max())
            else:
                if self._maximum is None:
                    self._maximum = self.function.maximum()[1]
                best = self._maximum
        return max(best - value, 0.0)
