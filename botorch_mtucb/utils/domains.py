"""Where a policy looks for its next point: a finite set or a box.

Maximization uses BoTorch's optimizers: ``optimize_acqf_discrete`` on a finite set,
``optimize_acqf`` (multi-start L-BFGS-B with gradients) on a box. On a box,
``optimize_acqf`` starts L-BFGS-B from ``num_restarts`` raw samples drawn at random with
Boltzmann weights; for a multimodal acquisition (a minimum over tasks, as a Chebyshev
scalarization's, has a local maximum wherever another task becomes the smallest) those
starts can all miss the best basin, so that the result is below the best raw samples.
``maximize_acquisition`` therefore also evaluates its own ``raw_samples`` and starts
L-BFGS-B from the best ``num_restarts`` of them: the point returned is never worse than
the best raw sample evaluated (up to ``improvement_tolerance``), and it is
``optimize_acqf``'s own result unless one of these is better by more than that.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch
from botorch.acquisition import AcquisitionFunction
from botorch.optim import optimize_acqf, optimize_acqf_discrete
from botorch.utils.sampling import draw_sobol_samples, manual_seed
from torch import Tensor

from botorch_mtucb.utils.checks import as_int


@dataclass
class FiniteDomain:
    """A finite set of candidate points, ``points``: ``N x d``.

    Raises:
        ValueError: If ``points`` is not an ``N x d`` tensor with ``N >= 1``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> domain = FiniteDomain(torch.linspace(0, 1, 5).unsqueeze(-1))
        >>> domain.dim, domain.points.shape[0]
        (1, 5)
    """

    points: Tensor

    def __post_init__(self) -> None:
        if not isinstance(self.points, Tensor) or self.points.dim() != 2:
            raise ValueError("points must be an N x d tensor")
        if self.points.shape[0] == 0:
            raise ValueError("a finite domain needs at least one point")

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.points.shape[-1]


@dataclass
class BoxDomain:
    """The box ``bounds[0] <= x <= bounds[1]`` (``bounds``: ``2 x d``).

    ``num_restarts``, ``raw_samples`` and ``options`` are passed to BoTorch's
    ``optimize_acqf`` (``maximize_acquisition``).

    Raises:
        ValueError: If ``bounds`` is not a finite ``2 x d`` tensor or ``bounds[0] >
            bounds[1]`` somewhere, or ``num_restarts`` / ``raw_samples`` is below 1 or
            above ``MAX_RAW_SAMPLES`` (each raw sample is evaluated at once).
        TypeError: If ``num_restarts`` or ``raw_samples`` is not an int.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import BoxDomain
        >>> domain = BoxDomain(torch.tensor([[0.0, 0.0], [1.0, 2.0]]), num_restarts=4)
        >>> domain.dim
        2
    """

    bounds: Tensor
    num_restarts: int = 8
    raw_samples: int = 256
    options: dict = field(default_factory=lambda: {"maxiter": 100})

    def __post_init__(self) -> None:
        if (
            not isinstance(self.bounds, Tensor)
            or self.bounds.dim() != 2
            or self.bounds.shape[0] != 2
        ):
            raise ValueError("bounds must be a 2 x d tensor")
        if not bool(torch.isfinite(self.bounds).all()):
            raise ValueError(f"bounds must be finite, got {self.bounds}")
        if (self.bounds[0] > self.bounds[1]).any():
            raise ValueError("bounds[0] must be <= bounds[1]")
        for name in ("num_restarts", "raw_samples"):
            value = as_int(getattr(self, name), name, minimum=1)
            if value > MAX_RAW_SAMPLES:
                raise ValueError(
                    f"{name} must be at most MAX_RAW_SAMPLES = {MAX_RAW_SAMPLES} (the raw "
                    f"samples are evaluated in one batch), got {value}"
                )
            setattr(self, name, value)

    @property
    def dim(self) -> int:
        """The input dimension ``d``."""
        return self.bounds.shape[-1]


Domain = FiniteDomain | BoxDomain
MAX_RAW_SAMPLES = 100_000


def maximize_acquisition(
    acquisition: AcquisitionFunction, domain: Domain, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """The maximizer (``d``) and the maximum (0-d) of ``acquisition`` over ``domain``.

    On a finite set, ``optimize_acqf_discrete``. On a box, BoTorch's ``optimize_acqf``
    (raw samples, ``num_restarts`` starts drawn among them with Boltzmann weights,
    L-BFGS-B), then L-BFGS-B again from the best ``num_restarts`` of ``raw_samples``
    Sobol points evaluated here: the result is ``optimize_acqf``'s unless the second run
    or the best raw sample is better by more than ``improvement_tolerance`` (``1e-6``
    relative in float64), so it is never below the best raw sample evaluated by more
    than that (module docstring). The raw
    samples are drawn under a seed taken from ``generator`` so that runs are
    reproducible. This is the one-line route for non-smooth acquisitions (the minimum
    over tasks of a Chebyshev scalarization): ``maximize_acquisition(acqf,
    BoxDomain(bounds))`` instead of ``optimize_acqf(acqf, bounds, q=1, ...)``.

    Raises:
        TypeError: If ``domain`` is neither a ``FiniteDomain`` nor a ``BoxDomain``.
        ValueError: If the acquisition function returns NaN (at a candidate of the
            finite set, or where the box's optimizer evaluates it): no maximizer is
            defined.

    Example:
        >>> import torch
        >>> from botorch.acquisition import PosteriorMean
        >>> from botorch.models import SingleTaskGP
        >>> from botorch_mtucb.utils import FiniteDomain, maximize_acquisition
        >>> X = torch.tensor([[0.2], [0.8]], dtype=torch.float64)
        >>> model = SingleTaskGP(X, torch.tensor([[0.0], [1.0]], dtype=torch.float64))
        >>> x, value = maximize_acquisition(PosteriorMean(model), FiniteDomain(X))
        >>> x
        tensor([0.8000], dtype=torch.float64)
    """
    if isinstance(domain, FiniteDomain):
        candidate, value = optimize_acqf_discrete(
            acquisition, q=1, choices=domain.points, unique=False
        )
        if bool(torch.isnan(value).any()):  # argmax picks a NaN wherever there is one
            raise _nan_error(acquisition)
        return candidate.reshape(-1), value.reshape(())
    if isinstance(domain, BoxDomain):
        return _maximize_on_box(acquisition, domain, generator)
    raise TypeError(f"domain must be a FiniteDomain or a BoxDomain, got {type(domain).__name__}")


def _maximize_on_box(
    acquisition: AcquisitionFunction, domain: BoxDomain, generator: torch.Generator | None
) -> tuple[Tensor, Tensor]:
    """``maximize_acquisition`` on a box: ``optimize_acqf``, then L-BFGS-B from the best
    raw samples; the best of the two results and the best raw sample."""
    seed = None
    if generator is not None:
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
    options = dict(domain.options)
    if seed is not None:
        options["seed"] = seed
    bounds = domain.bounds
    # Also fix the global RNG during the call: BoTorch draws some initial conditions
    # from it (e.g. at random when the acquisition is flat, as under the prior).
    with manual_seed(seed) if seed is not None else contextlib.nullcontext():
        try:
            candidate, value = optimize_acqf(
                acquisition,
                bounds=bounds,
                q=1,
                num_restarts=domain.num_restarts,
                raw_samples=domain.raw_samples,
                options=options,
            )
        except RuntimeError as error:  # BoTorch's sampling of starts fails on NaN values
            probe = draw_sobol_samples(bounds, n=domain.raw_samples, q=1, seed=seed)
            with torch.no_grad():
                if bool(torch.isnan(acquisition(probe)).any()):
                    raise _nan_error(acquisition) from error
            raise
        raw = draw_sobol_samples(bounds, n=domain.raw_samples, q=1, seed=seed)  # n x 1 x d
        with torch.no_grad():
            raw_values = acquisition(raw)  # n
        if bool(torch.isnan(raw_values).any()) or bool(torch.isnan(value).any()):
            raise _nan_error(acquisition)
        starts = raw[raw_values.topk(min(domain.num_restarts, raw.shape[0])).indices]
        restarted, restarted_value = optimize_acqf(
            acquisition,
            bounds=bounds,
            q=1,
            num_restarts=starts.shape[0],
            batch_initial_conditions=starts,
            options={key: v for key, v in options.items() if key != "seed"},
        )
    best = int(raw_values.argmax())
    results = [
        (candidate.reshape(-1), value.reshape(())),
        (restarted.reshape(-1), restarted_value.reshape(())),
        (raw[best].reshape(-1), raw_values[best].reshape(())),
    ]
    x, top = results[0]
    for other_x, other in results[1:]:  # optimize_acqf's own result unless clearly worse
        if float(other) > float(top) + improvement_tolerance(top):
            x, top = other_x, other
    return x, top.detach()


def _nan_error(acquisition: AcquisitionFunction) -> ValueError:
    return ValueError(
        f"the acquisition function {type(acquisition).__name__} returned NaN, so it has no "
        "maximizer; check the model's data and hyperparameters for NaN or inf"
    )


def improvement_tolerance(value: Tensor) -> float:
    """``max(1e-6, 64 eps) max(1, |value|)``: how much better another maximizer must be to
    replace ``optimize_acqf``'s (two L-BFGS-B runs that converge to one maximum differ by
    about scipy's ``ftol = 2.2e-9`` relative, float32 values by their round-off).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.domains import improvement_tolerance
        >>> improvement_tolerance(torch.tensor(2.0, dtype=torch.float64))
        2e-06
    """
    scale = max(1e-6, 64.0 * torch.finfo(value.dtype).eps)
    return scale * max(1.0, abs(float(value)))


MAX_MATCH_COMPARISONS = 2**22  # entries compared at once by find_rows (32 MiB of booleans)


def _checked_rows(points: Tensor, X: Tensor) -> Tensor:
    """``X`` as ``k x d`` rows in ``points``' dtype and device (``find_rows``' checks)."""
    if not isinstance(points, Tensor) or points.dim() != 2:
        raise ValueError("points must be an N x d tensor")
    d = points.shape[-1]
    if not isinstance(X, Tensor) or X.dim() > 2 or X.shape[-1] != d or (X.dim() == 1 and d == 0):
        shape = tuple(X.shape) if isinstance(X, Tensor) else type(X).__name__
        raise ValueError(f"X must be k x {d} (or one point of {d} entries), got {shape}")
    rows = X.reshape(-1, d)
    if rows.dtype != points.dtype or rows.device != points.device:
        rows = rows.to(dtype=points.dtype, device=points.device)
    return rows


class RowIndex:
    """``find_rows`` for one finite set of points, looked up in a dictionary of their
    rows built once: ``O(k d)`` per lookup of ``k`` rows instead of ``O(k N d)``
    comparisons, for the loops that locate a point or two of the same set every round.

    Args:
        points: ``N x d`` (each row's first index is kept).

    Raises:
        ValueError: If ``points`` is not ``N x d``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.domains import RowIndex
        >>> arms = RowIndex(torch.tensor([[0.0, 1.0], [2.0, 3.0], [2.0, 3.0]]))
        >>> arms.find(torch.tensor([[2.0, 3.0], [0.0, 1.0]]))
        tensor([1, 0])
        >>> arms.find(torch.tensor([2.0, 3.5])) is None
        True
    """

    def __init__(self, points: Tensor) -> None:
        if not isinstance(points, Tensor) or points.dim() != 2:
            raise ValueError("points must be an N x d tensor")
        self.points = points
        self._rows: dict[tuple[float, ...], int] = {}
        for index, row in enumerate(points.tolist()):
            self._rows.setdefault(tuple(row), index)

    def find(self, X: Tensor) -> Tensor | None:
        """``find_rows(points, X)``: the index of each row of ``X`` (``k x d``, or one
        point) among the points, ``None`` if one is not there.

        Raises:
            ValueError: If ``X`` does not have ``d`` columns.
        """
        points = self.points
        rows = _checked_rows(points, X)
        if rows.shape[0] == 1:  # one point: no list of indices to build
            index = self._rows.get(tuple(rows.tolist()[0]))
            return None if index is None else torch.full((1,), index, device=points.device)
        if rows.shape == points.shape and torch.equal(rows, points):
            return torch.arange(rows.shape[0], device=points.device)
        found = [self._rows.get(tuple(row)) for row in rows.tolist()]
        if None in found:
            return None
        return torch.tensor(found, dtype=torch.long, device=points.device)


def find_rows(points: Tensor, X: Tensor) -> Tensor | None:
    """Where the rows of ``X`` are in the finite set ``points``: for each row, the index
    of the first equal row of ``points``; ``None`` if some row is not among them.

    The one lookup of a point in a finite set (a domain's points, a task's arms, the
    candidates a model tracks). ``X`` is cast to ``points``' dtype and device; rows are
    compared exactly, at most ``MAX_MATCH_COMPARISONS`` entries at a time. ``X`` equal
    to ``points`` is recognized at once and gives ``0, ..., N - 1`` (each row its own
    index, also where ``points`` repeats a row).

    Args:
        points: ``N x d``.
        X: ``k x d`` rows, or one point of ``d`` entries (then ``k = 1``).

    Returns:
        ``k`` indices (long, on ``points``' device) into ``points``, or ``None``.

    Raises:
        ValueError: If ``points`` is not ``N x d`` or ``X`` does not have ``d`` columns.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils.domains import find_rows
        >>> arms = torch.tensor([[0.0, 1.0], [2.0, 3.0], [2.0, 3.0]])
        >>> find_rows(arms, torch.tensor([[2.0, 3.0], [0.0, 1.0]]))
        tensor([1, 0])
        >>> find_rows(arms, torch.tensor([2.0, 3.5])) is None
        True
    """
    rows = _checked_rows(points, X)
    if rows.shape == points.shape and torch.equal(rows, points):
        return torch.arange(rows.shape[0], device=points.device)
    block = max(1, MAX_MATCH_COMPARISONS // max(points.numel(), 1))
    found = []
    for part in rows.split(block):
        equal = (part.unsqueeze(-2) == points).all(-1)  # k x N
        if not bool(equal.any(-1).all()):
            return None
        found.append(equal.to(torch.int8).argmax(-1))
    if not found:
        return torch.zeros(0, dtype=torch.long, device=points.device)
    return torch.cat(found)
