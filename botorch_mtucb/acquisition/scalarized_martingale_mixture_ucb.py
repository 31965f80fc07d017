r"""The scalarized multi-task martingale-mixture UCB: paper 002's bounds on a scalarization
of the ``n`` tasks of paper 000, as a BoTorch acquisition function.

For a confidence set ``F_t`` of vector-valued functions (``MultiTaskMartingaleMixtureBound``)
and a scalarization ``s_lambda`` (paper 000, Section 2), the UCB is an upper
bound on ``max_{f in F_t} s_lambda(f(x))``:

* linear, ``s(y) = w^T y``: ``upper(x, weights=w)``, the exact maximum of ``w^T f(x)``
  over ``F_t`` (the bound of the functional itself, tighter than ``w^T`` of the per-task
  bounds);
* Chebyshev, ``s(y) = min_i w_i (y_i - z_i)``: ``min_i w_i (u_t(x, i) - z_i)`` with the
  per-task bounds ``u_t(x, i)`` (valid as ``w >= 0``). The exact maximum is, by the
  minimax theorem (``F_t`` convex, the objective linear in ``f`` and in ``p``),
  ``min_{p in simplex} [upper(x, weights=p * w) - sum_i p_i w_i z_i]``; every ``p`` gives
  a valid bound, the vertices ``p = e_i`` give the per-task form, and
  ``chebyshev_lattice=r`` takes the minimum over the lattice ``{p : r p in N^n}`` of the
  simplex (vertices included, so never looser; ``binom(r + n - 1, n - 1)`` functionals per
  point, at most ``MAX_LATTICE_FUNCTIONALS``).

``maximize=False`` (BoTorch's minimization switch) bounds ``-s_lambda(f(x))`` from above:
``upper(x, weights=-w)`` for a linear scalarization (the exact maximum of ``-w^T f(x)``
over ``F_t``, i.e. minus the lower bound of ``w^T f(x)``), and ``max_i w_i (z_i - l_t(x,
i))`` with the per-task lower bounds ``l_t(x, i)`` for a Chebyshev one: ``-s(f) = max_i
w_i (z_i - f_i)`` and the maximum over ``F_t`` of a maximum is the maximum of the
per-task maxima, so this is the exact maximum of ``-s_lambda(f(x))`` over ``F_t`` (with
the exact bounds; grid and analytic bounds bound it from above). The lattice does not
enter it.

Pending points follow GP-BUCB (Desautels, Krause & Burdick 2014, JMLR 15) as the bound's
``upper(..., X_pending=...)`` (full-vector data).

Source: paper 002, Section 4 (eqs. (10), (12)) on the scalar kernel of paper 000,
Section 2; the scalarizations of paper 000, Section 2 and eq. (2).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch
from botorch.acquisition.analytic import AnalyticAcquisitionFunction
from botorch.exceptions import UnsupportedError
from torch import Tensor
from torch.nn import Module

from botorch_mtucb.acquisition.candidates import check_maximize, one_candidate_per_batch
from botorch_mtucb.acquisition.martingale_mixture_ucb import _resolve_alphas
from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
    MultiTaskMartingaleMixtureBound,
)
from botorch_mtucb.scalarization import (
    ChebyshevScalarization,
    LinearScalarization,
    Scalarization,
    as_scalarization,
)
from botorch_mtucb.utils.checks import as_int, check_X_pending

MAX_LATTICE_FUNCTIONALS = 1000  # each is one bound per candidate (t n numbers per point)


def lattice_size(num_tasks: int, resolution: int) -> int:
    """``binom(resolution + n - 1, n - 1)``: the points of the simplex lattice.

    Example:
        >>> from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import lattice_size
        >>> lattice_size(3, 10)
        66
    """
    return math.comb(resolution + num_tasks - 1, num_tasks - 1)


def check_lattice_size(num_tasks: int, resolution: int) -> int:
    """``resolution`` if its lattice has at most ``MAX_LATTICE_FUNCTIONALS`` points, checked
    from the count alone (nothing is allocated).

    Raises:
        TypeError, ValueError: Unless ``num_tasks`` and ``resolution`` are integers ``>= 1``.
        ValueError: For a lattice of more points, naming ``chebyshev_lattice``, the count
            and the largest resolution that fits.

    Example:
        >>> from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import (
        ...     check_lattice_size)
        >>> try:
        ...     check_lattice_size(3, 10**9)
        ... except ValueError as error:
        ...     print(str(error)[:72])
        chebyshev_lattice=1000000000 gives binom(r + n - 1, n - 1) = 50000000150
    """
    n = as_int(num_tasks, "num_tasks", 1)
    r = as_int(resolution, "chebyshev_lattice", 1)
    count = lattice_size(n, r)
    if count > MAX_LATTICE_FUNCTIONALS:
        largest = 1
        while lattice_size(n, largest + 1) <= MAX_LATTICE_FUNCTIONALS:
            largest += 1
        raise ValueError(
            f"chebyshev_lattice={r} gives binom(r + n - 1, n - 1) = {count} functionals for "
            f"n = {n} tasks, more than MAX_LATTICE_FUNCTIONALS = {MAX_LATTICE_FUNCTIONALS} "
            f"(each is one bound per candidate); use chebyshev_lattice <= {largest}"
        )
    return r


def simplex_lattice(num_tasks: int, resolution: int) -> Tensor:
    r"""The points ``p`` of the simplex with ``resolution * p`` integer: ``binom(resolution +
    n - 1, n - 1)`` rows of ``n`` (float64), the vertices ``e_i`` first.

    Enumerated as compositions (stars and bars), ``O(binom(r + n - 1, n - 1) n)``; the
    size is checked first (``check_lattice_size``).

    Raises:
        TypeError, ValueError: Unless ``num_tasks`` and ``resolution`` are integers ``>= 1``.
        ValueError: For more than ``MAX_LATTICE_FUNCTIONALS`` points.

    Example:
        >>> from botorch_mtucb.acquisition.scalarized_martingale_mixture_ucb import (
        ...     simplex_lattice)
        >>> simplex_lattice(2, 2)
        tensor([[1.0000, 0.0000],
                [0.0000, 1.0000],
                [0.5000, 0.5000]], dtype=torch.float64)
    """
    n = as_int(num_tasks, "num_tasks", 1)
    r = check_lattice_size(n, resolution)
    counts = []
    for bars in itertools.combinations(range(r + n - 1), n - 1):  # stars and bars
        edges = (-1, *bars, r + n - 1)
        counts.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(n)))
    counts.sort(key=lambda c: (-max(c), [-k for k in c]))  # vertices first
    return torch.tensor(counts, dtype=torch.float64) / r


class ScalarizedMartingaleMixtureUCB(AnalyticAcquisitionFunction):
    r"""``u_t(x) >= max_{f in F_t} s_lambda(f(x))``: a scalarization of the multi-task
    martingale-mixture confidence set (module docstring).

    * ``LinearScalarization(w)`` (or a weight tensor ``w``): ``u_t(x) = upper(x,
      weights=w)``, the exact (``alphas=None``), grid or analytic bound on ``w^T f(x)``;
    * ``ChebyshevScalarization(w, z)``: ``u_t(x) = min_i w_i (u_t(x, i) - z_i)``
      (``chebyshev_lattice=1``, the default), or the minimum over the simplex lattice of
      resolution ``r`` of ``upper(x, weights=p * w) - sum_i p_i w_i z_i`` (tighter, about
      ``binom(r + n - 1, n - 1) / n`` times the work).

    With probability ``1 - delta`` the value bounds ``s_lambda(f(x))`` at every ``x``
    (without pending points). Values have ``X``'s dtype (the bound works in float64);
    gradients with respect to ``X`` flow, so ``optimize_acqf`` maximizes it over a box
    and ``optimize_acqf_discrete`` over a finite set. ``q = 1``: batches of ``q`` points
    with ``optimize_acqf(..., sequential=True)`` or ``optimize_acqf_discrete(..., q=q)``,
    which pass the points chosen so far as ``X_pending`` (GP-BUCB: the bound's
    ``rho_alpha`` as if all tasks had been observed there; full-vector data only).
    ``model`` is ``None`` (the bound is not a BoTorch ``Model``). ``maximize=False``: the
    upper bound of ``-s_lambda(f(x))`` (module docstring).

    Over a box, ``botorch_mtucb.utils.maximize_acquisition(acqf, BoxDomain(bounds))``
    also starts L-BFGS-B from the best raw samples (``optimize_acqf`` picks its starts at
    random among them and can miss the best basin of the minimum over tasks) and never
    returns less than the best raw sample it evaluated.

    Example:
        >>> import torch
        >>> from botorch.optim import optimize_acqf
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.acquisition import ScalarizedMartingaleMixtureUCB
        >>> from botorch_mtucb.confidence.martingale_mixture.multi_task_bound import (
        ...     MultiTaskMartingaleMixtureBound)
        >>> from botorch_mtucb.scalarization import ChebyshevScalarization
        >>> train_X = torch.rand(12, 2, dtype=torch.float64)
        >>> train_Y = torch.cat([train_X.sin().sum(-1, keepdim=True),
        ...                      train_X.cos().sum(-1, keepdim=True)], -1)
        >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> bound = MultiTaskMartingaleMixtureBound(train_X, train_Y, RBFKernel(), B,
        ...                                         5.0, 0.1, 0.01)
        >>> weights = torch.tensor([0.4, 0.6], dtype=torch.float64)
        >>> acqf = ScalarizedMartingaleMixtureUCB(
        ...     bound, ChebyshevScalarization(weights, torch.full((2,), -2.0)))
        >>> box = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
        >>> batch, _ = optimize_acqf(acqf, box, q=2, num_restarts=2, raw_samples=32,
        ...                          sequential=True)  # GP-BUCB
        >>> batch.shape
        torch.Size([2, 2])
    """

    def __init__(
        self,
        bound: MultiTaskMartingaleMixtureBound,
        scalarization: Scalarization | Tensor,
        *,
        alphas: float | Sequence[float] | Tensor | str | None = None,
        X_pending: Tensor | None = None,
        chebyshev_lattice: int = 1,
        maximize: bool = True,
    ) -> None:
        r"""Build the acquisition.

        Args:
            bound: A ``MultiTaskMartingaleMixtureBound`` on the data seen so far.
            scalarization: A ``LinearScalarization`` or ``ChebyshevScalarization`` with
                one weight vector of ``n`` entries (and an ``n`` reference point), or the
                ``n`` linear weights as a tensor.
            alphas: ``None`` (exact), a grid of ``alpha > 0`` (DMM), one ``alpha``
                (AMM), ``"DMM"`` or ``"AMM"`` (as ``MartingaleMixtureUCB``).
            X_pending: ``m x d`` points chosen but not yet observed (GP-BUCB).
            chebyshev_lattice: Resolution ``r >= 1`` of the simplex lattice of the
                Chebyshev bound (1: the per-task form), with at most
                ``MAX_LATTICE_FUNCTIONALS`` points. Chebyshev only.
            maximize: ``False``: the upper bound of ``-s_lambda(f(x))``.

        Raises:
            TypeError: If ``bound`` is not a ``MultiTaskMartingaleMixtureBound``, or
                ``scalarization`` is neither a linear / Chebyshev scalarization nor a
                weight tensor.
            ValueError: For a scalarization whose size is not ``n``, several weight
                vectors, a reference point that is not ``n``, bad ``alphas``,
                ``chebyshev_lattice`` not an integer ``>= 1``, of more than
                ``MAX_LATTICE_FUNCTIONALS`` points or given with a linear scalarization,
                or a bad ``X_pending``. ``TypeError`` for a ``maximize`` that is not a
                bool.
            UnsupportedError: For ``X_pending`` on task-indexed data.
        """
        Module.__init__(self)  # AcquisitionFunction.__init__ would need a Model
        if not isinstance(bound, MultiTaskMartingaleMixtureBound):
            raise TypeError(
                f"bound must be a MultiTaskMartingaleMixtureBound, got {type(bound).__name__}"
            )
        self.model = None  # no BoTorch Model (optimize_acqf(sequential=True) reads .model)
        self.maximize = check_maximize(maximize)
        self.bound = bound
        self.scalarization = _check_scalarization(scalarization, bound.num_tasks)
        self.alphas = _resolve_alphas(alphas, bound)
        resolution = check_lattice_size(bound.num_tasks, chebyshev_lattice)  # before allocating
        if resolution > 1 and not isinstance(self.scalarization, ChebyshevScalarization):
            raise ValueError(
                "chebyshev_lattice applies to a ChebyshevScalarization only (the linear "
                f"bound is exact), got chebyshev_lattice={chebyshev_lattice}"
            )
        self.chebyshev_lattice = resolution
        lattice = resolution > 1 and self.maximize  # maximize=False: the per-task form is exact
        self._lattice = simplex_lattice(bound.num_tasks, resolution) if lattice else None
        self.set_X_pending(X_pending)

    def set_X_pending(self, X_pending: Tensor | None = None) -> None:
        """Set (or clear, with ``None``) the ``m x d`` pending points (GP-BUCB).

        Raises:
            TypeError, ValueError: For ``X_pending`` that is not ``None`` or an
                ``m x d`` floating tensor without NaN/inf.
            UnsupportedError: For pending points on task-indexed data (GP-BUCB
                hallucinates all tasks at a pending point: full-vector data only).
        """
        X_pending = check_X_pending(X_pending, self.bound.input_dim)
        if X_pending is not None and X_pending.shape[0] > 0 and not self.bound.full_vector:
            raise UnsupportedError(
                "X_pending needs a bound on full-vector data (GP-BUCB observes all tasks "
                "at a pending point); this bound holds task-indexed data: choose one "
                "point at a time (q = 1)"
            )
        self.X_pending = X_pending

    @one_candidate_per_batch
    def forward(self, X: Tensor) -> Tensor:
        r"""Evaluate the scalarized UCB at ``X``.

        Args:
            X: ``batch x 1 x d`` candidates (``ValueError`` for another shape, naming
                it; ``q = 1`` is required).

        Returns:
            A ``batch`` tensor (units of ``s_lambda(f)``, ``X``'s dtype).
        """
        X = X.squeeze(-2)  # batch x d
        pending = self.X_pending if self.X_pending is None or len(self.X_pending) else None
        s = self.scalarization
        if not self.maximize:  # the upper bound of -s(f) (module docstring)
            if isinstance(s, LinearScalarization):
                return self.bound.upper(
                    X, weights=-s.weights, alphas=self.alphas, X_pending=pending
                )
            lower = self.bound.lower(X, alphas=self.alphas, X_pending=pending)  # batch x n
            w, z = s.weights.to(lower), s.reference_point.to(lower)
            return (w * (z - lower)).amax(-1)  # max_i w_i (z_i - l_t(x, i))
        if isinstance(s, LinearScalarization):
            return self.bound.upper(X, weights=s.weights, alphas=self.alphas, X_pending=pending)
        if self._lattice is None:
            per_task = self.bound.upper(X, alphas=self.alphas, X_pending=pending)  # batch x n
            return s(per_task)  # min_i w_i (u_t(x, i) - z_i)
        w, z = s.weights.to(self._lattice), s.reference_point.to(self._lattice)
        P = self._lattice.to(w.device) * w  # G x n: the functionals p * w
        values = self.bound.upper(X, weights=P, alphas=self.alphas, X_pending=pending)
        return (values - (P @ z).to(values)).amin(-1)  # batch

    def __repr__(self) -> str:
        kind = "exact" if self.alphas is None else f"alphas={self.alphas.tolist()}"
        return (
            f"{type(self).__name__}({type(self.scalarization).__name__}, {kind}, "
            f"M={self.bound.num_observations})"
        )


def _check_scalarization(scalarization: Scalarization | Tensor, num_tasks: int) -> Scalarization:
    """A linear or Chebyshev scalarization with one weight vector of ``num_tasks``."""
    scalarization = as_scalarization(scalarization)
    if not isinstance(scalarization, (LinearScalarization, ChebyshevScalarization)):
        raise TypeError(
            "scalarization must be a LinearScalarization, a ChebyshevScalarization or a "
            f"weight tensor (their bounds are known), got {type(scalarization).__name__}"
        )
    if tuple(scalarization.weights.shape) != (num_tasks,):
        raise ValueError(
            f"scalarization must hold one weight vector of n = {num_tasks} (the bound's "
            f"tasks), got weights of shape {tuple(scalarization.weights.shape)}"
        )
    reference_point = getattr(scalarization, "reference_point", None)
    if reference_point is not None and tuple(reference_point.shape) != (num_tasks,):
        raise ValueError(
            f"the reference point must have shape ({num_tasks},), got "
            f"{tuple(reference_point.shape)}"
        )
    return scalarization
