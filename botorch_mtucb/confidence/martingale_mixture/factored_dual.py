r"""Paper 002's exact bound from Cholesky factors at a lattice of alphas, without ``eigh``.

The exact bound (eq. (10)) is ``min_{alpha > 0} phi(alpha)`` of eq. (12), ``phi = mu_alpha(x)
+ R~_alpha / sqrt(alpha) rho_alpha(x)`` (``alpha_search``). Its terms are the quadratic and
bilinear forms ``k^T (K + alpha I)^{-1} k``, ``k^T (K + alpha I)^{-1} y`` and ``y^T (K +
alpha I)^{-1} y``. The eigen route reads them from the spectrum of ``K_t`` (``O(t^3)``
after every new observation). This route reads them from the factors of ``K_t + alpha_g
I`` at the nodes ``alpha_g = (sigma^2 / c) 10^{g / NODES_PER_DECADE}`` (``g`` an integer),
which the Gram cache borders in ``O(t^2)`` per observation (Appendix E.2), so that a
round after an append costs ``O(N t^2)`` for ``N`` candidates and no ``O(t^3)`` step:

1. **Bracket** (``bracket``): ``phi`` exactly at the nodes around the last call's
   minimizers (``u = L_g^{-1} k_t(x)`` and ``u_y = L_g^{-1} y``: ``mu = u^T u_y``, ``k^T
   (K + alpha_g I)^{-1} k = ||u||^2``, ``y^T (K + alpha_g I)^{-1} y = ||u_y||^2``), adding
   nodes on the side where a candidate's smallest node value lies at the edge. ``phi``
   is quasiconvex in ``alpha`` (paper 002, Section 4.3, as the eigen route assumes), so
   a candidate's minimizer lies between the neighbours of its best node ``g``.
2. **Refine** (``refine``): on ``[alpha_{b-1}, alpha_{b+1}]`` around each candidate's best
   node ``b``, the three forms by Gauss quadrature from shift-and-invert Lanczos at one
   node ``g`` per group of candidates (``refinement_groups``: best nodes within
   ``REFINEMENT_REACH - 1`` of ``g``; one batched Lanczos per group, ``shift_invert_lanczos``).
   With the brackets within ``w`` nodes of ``g`` the error shrinks by ``rho^2`` per step,
   ``rho = (r^{w/2} - 1) / (r^{w/2} + 1)``, ``r = 10^{1 / NODES_PER_DECADE}``, whatever
   the spectrum of ``K_t``; enough steps for ``4 rho^{2n} <= QUADRATURE_RTOL`` first, then
   checked a posteriori: the model with one step less must agree to ``AGREEMENT_RTOL``
   at each bracket's ends (else more steps; the ``n``-step model's error is then about
   ``rho^2`` times that difference, and smaller inside the bracket). The minimum of the
   model on the bracket is found on two nested grids in ``ln alpha`` with a parabola
   through the best point of each (``_grid_minimum``).

A candidate whose best node stays at the edge of ``MAX_NODES`` nodes is returned
unresolved; the caller takes the eigen route for it. The bound's value is the same
minimum as the eigen route's, to round-off of the factors and the quadrature (checked
against it in the tests); ``alpha`` is the minimizer found.

The emptiness test that the exact bound needs first takes a witness without the spectrum
where one exists (``ridge_witness``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

from botorch_mtucb.confidence.martingale_mixture.alpha_search import dual_value, posterior_std
from botorch_mtucb.confidence.martingale_mixture.shift_invert_lanczos import (
    KrylovBasis,
    RitzSystem,
    bilinear,
    bilinear_coefficients,
    gauss_rule,
    ritz_system,
    shift_invert_lanczos,
)
from botorch_mtucb.utils.linalg import GrowingCholesky

NODES_PER_DECADE = 4  # the lattice of factored alphas, relative to sigma^2 / c
MAX_NODES = 12  # nodes one evaluation may visit; beyond, candidates take the eigen route
QUADRATURE_RTOL = 1e-8  # 4 rho^{2n} below this: the first number of Lanczos steps
AGREEMENT_RTOL = 1e-8  # the models with n and n - 1 steps agree to this at the ends
MAX_LANCZOS_STEPS = 64
REFINEMENT_REACH = 3  # Lanczos at one node serves brackets up to this many nodes away
GRID_POINTS = 33  # per level of the grid search of the model (two levels and parabolas)

FactorAt = Callable[[float], GrowingCholesky]


def node_alpha(base_alpha: float, node: int) -> float:
    """``alpha_g = base_alpha 10^{g / NODES_PER_DECADE}`` (the same float for the same
    ``g``: the Gram cache finds the factor by equality).

    Example:
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import node_alpha
        >>> node_alpha(0.05, 0), round(node_alpha(0.05, 4), 12)
        (0.05, 0.5)
    """
    return base_alpha * 10.0 ** (node / NODES_PER_DECADE)


def nearest_node(base_alpha: float, alpha: float) -> int:
    """The ``g`` whose ``alpha_g`` is nearest ``alpha`` in log-scale.

    Example:
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import nearest_node
        >>> nearest_node(0.05, 0.6)
        4
    """
    return round(NODES_PER_DECADE * math.log10(alpha / base_alpha))


class DualTerms(NamedTuple):
    r"""The numbers of eq. (12) that do not depend on the node.

    Attributes:
        y: The observations (``t``).
        cross: ``k_t(x)`` per candidate (``N x t``).
        prior: ``k(x, x)`` (``N``).
        sign: ``1`` for the upper bound, ``-1`` for the lower.
        radius_sq: ``R_t^2`` of eq. (8) (0-d).
        rkhs_norm_bound: ``B``.
        base_alpha: ``sigma^2 / c``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import DualTerms
        >>> one = torch.ones(1, dtype=torch.float64)
        >>> terms = DualTerms(one, one.reshape(1, 1), one, 1.0, torch.tensor(2.0), 1.0, 0.1)
        >>> terms.value(torch.tensor(1.0), one * 0.5, one * 0.5, one * 0.5)  # 0.5 + sqrt(2.5 * 0.5)
        tensor([1.6180], dtype=torch.float64)
    """

    y: Tensor
    cross: Tensor
    prior: Tensor
    sign: float
    radius_sq: Tensor
    rkhs_norm_bound: float
    base_alpha: float

    def value(self, alpha: Tensor, mean: Tensor, explained: Tensor, fit: Tensor) -> Tensor:
        """``phi`` from ``k^T (K + a I)^{-1} y``, ``k^T (K + a I)^{-1} k`` and ``y^T (K + a
        I)^{-1} y`` (each broadcast against ``alpha``)."""
        rt2 = self.radius_sq + alpha * (self.rkhs_norm_bound**2 - fit)
        return dual_value(self.sign * mean, posterior_std(self.prior, explained), rt2, alpha)


class NodeSolve(NamedTuple):
    """One node's triangular solves and exact values of ``phi``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
        ...     DualTerms, solve_node)
        >>> one = torch.ones(1, dtype=torch.float64)
        >>> terms = DualTerms(one, one.reshape(1, 1), one, 1.0, torch.tensor(2.0), 1.0, 1.0)
        >>> node = solve_node(terms, lambda a: GrowingCholesky(torch.eye(1) * (1.0 + a)), 0)
        >>> node.alpha, node.solved.shape, node.value.shape
        (1.0, torch.Size([1, 1]), torch.Size([1]))"""

    alpha: float
    factor: GrowingCholesky
    solved: Tensor  # L_g^{-1} k_t(x), t x N
    solved_y: Tensor  # L_g^{-1} y, t
    value: Tensor  # phi(alpha_g), N


class FactoredResult(NamedTuple):
    """The bound per candidate (``N``; the lower bound for ``sign = -1``), the minimizing ``alpha`` (``N``), whether it was
    resolved (``N``, bool; unresolved values are ``nan``), and the nodes visited
    (``(low, high)``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import FactoredResult
        >>> result = FactoredResult(torch.ones(2), torch.ones(2), torch.tensor([True, False]), (0, 2))
        >>> int(result.resolved.sum()), result.nodes
        (1, (0, 2))"""

    value: Tensor
    alpha: Tensor
    resolved: Tensor
    nodes: tuple[int, int]


def solve_node(terms: DualTerms, factor_at: FactorAt, node: int) -> NodeSolve:
    """``phi`` at ``alpha_g`` for every candidate, from the factor there (``O(N t^2)``).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
        ...     DualTerms, solve_node)
        >>> K = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> eye = torch.eye(2, dtype=torch.float64)
        >>> terms = DualTerms(torch.tensor([1.0, -1.0], dtype=torch.float64), K[:1],
        ...     torch.ones(1, dtype=torch.float64), 1.0, torch.tensor(2.0, dtype=torch.float64),
        ...     3.0, 1.0)
        >>> node = solve_node(terms, lambda a: GrowingCholesky(K + a * eye), 0)
        >>> round(float(node.value[0]), 6)  # mu + sqrt(R~^2 / alpha) rho at alpha = 1
        2.457271
    """
    alpha = node_alpha(terms.base_alpha, node)
    factor = factor_at(alpha)
    both = factor.solve(torch.cat([terms.cross.transpose(0, 1), terms.y.unsqueeze(-1)], -1))
    solved, solved_y = both[:, :-1], both[:, -1]
    mean = solved_y @ solved
    value = terms.value(
        torch.tensor(alpha, dtype=solved.dtype, device=solved.device), mean,
        solved.square().sum(0), solved_y.square().sum(),
    )  # fmt: skip
    return NodeSolve(alpha, factor, solved, solved_y, value)


def bracket(
    terms: DualTerms, factor_at: FactorAt, start: int
) -> tuple[dict[int, NodeSolve], Tensor, Tensor]:
    """Visit nodes from ``start - 1 .. start + 1`` outwards until every candidate's
    smallest node value is interior, or ``MAX_NODES`` nodes were visited.

    Returns:
        The visited nodes, each candidate's best node (``N``, long) and whether it is
        interior (``N``, bool).

    Example:
        >>> import torch
        >>> from botorch_mtucb.utils import GrowingCholesky
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
        ...     DualTerms, bracket)
        >>> K = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> eye = torch.eye(2, dtype=torch.float64)
        >>> terms = DualTerms(torch.tensor([1.0, -1.0], dtype=torch.float64), K[:1],
        ...     torch.ones(1, dtype=torch.float64), 1.0, torch.tensor(2.0, dtype=torch.float64),
        ...     3.0, 1.0)
        >>> nodes, best, interior = bracket(terms, lambda a: GrowingCholesky(K + a * eye), 0)
        >>> bool(interior[0]), min(nodes) < int(best[0]) < max(nodes)
        (True, True)
    """
    nodes = {g: solve_node(terms, factor_at, g) for g in (start - 1, start, start + 1)}
    while True:
        low, high = min(nodes), max(nodes)
        values = torch.stack([nodes[g].value for g in range(low, high + 1)], -1)  # N x G
        best = values.argmin(-1)
        at_low, at_high = bool((best == 0).any()), bool((best == high - low).any())
        if len(nodes) >= MAX_NODES or not (at_low or at_high):
            break
        for g in (low - 1,) * at_low + (high + 1,) * at_high:
            if len(nodes) < MAX_NODES:
                nodes[g] = solve_node(terms, factor_at, g)
    interior = (best > 0) & (best < high - low)
    return nodes, best + low, interior


class NodeModel:
    r"""``phi`` on ``[alpha_{g-1}, alpha_{g+1}]`` for the candidates ``columns`` whose best
    node is ``g``: the three forms by Gauss quadrature from ``n`` shift-and-invert Lanczos
    steps at ``alpha_g`` (module docstring, step 2), as a function of ``ln alpha``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
        ...     DualTerms, NodeModel, solve_node)
        >>> X = torch.rand(30, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 5.0, 0.1, 0.01)
        >>> cache = bound.gram_spectrum.cache
        >>> factor_at = lambda a: cache.factors[int(cache.index(a))]
        >>> with torch.no_grad():
        ...     cross = bound.kernel(X[:2] + 0.01, X).to_dense()
        >>> terms = DualTerms(bound.train_Y[:, 0], cross, torch.ones(2, dtype=torch.float64),
        ...     1.0, bound.radius_squared, 5.0, bound.base_alpha)
        >>> node = solve_node(terms, factor_at, 0)
        >>> model = NodeModel(terms, node, torch.arange(2))
        >>> model.extend(6)
        >>> at_node = model.function(6)(torch.full((2,), node.alpha).log())
        >>> bool(torch.allclose(at_node, node.value))  # exact at the node itself
        True"""

    def __init__(self, terms: DualTerms, node: NodeSolve, columns: Tensor) -> None:
        self.terms = terms._replace(prior=terms.prior[columns])
        self.node, self.m = node, len(columns)
        self.start = torch.cat([node.solved[:, columns], node.solved_y.unsqueeze(-1)], -1)
        self.basis: KrylovBasis | None = None

    def extend(self, steps: int) -> None:
        """``steps`` more Lanczos steps (at most the dimension ``t``)."""
        steps = min(steps, self.start.shape[0] - self.steps)
        if steps > 0:
            self.basis = shift_invert_lanczos(self.node.factor, self.start, steps, self.basis)

    @property
    def steps(self) -> int:
        return 0 if self.basis is None else self.basis.vectors.shape[1]

    def function(self, steps: int) -> Callable[[Tensor], Tensor]:
        """``phi(ln alpha)`` (``m`` or ``m x G`` in, the same out) from the first
        ``steps`` steps."""
        m, basis = self.m, self.basis
        ritz = ritz_system(basis, steps)
        candidates, shared = (
            basis.truncated(steps, slice(0, m)),
            basis.truncated(steps, slice(m, None)),
        )
        candidate_ritz = RitzSystem(*(part[:m] for part in ritz))
        shared_ritz = RitzSystem(*(part[m:] for part in ritz))
        coefficients = bilinear_coefficients(
            candidates, candidate_ritz, shared, shared_ritz, self.start[:, :m]
        )
        terms, alpha_g = self.terms, self.node.alpha
        prior = terms.prior

        def phi(log_alpha: Tensor) -> Tensor:
            alpha = log_alpha.exp()
            delta = alpha - alpha_g
            explained = gauss_rule(candidate_ritz, candidates.start_norm, delta)
            fit = gauss_rule(shared_ritz, shared.start_norm.expand(m), delta)
            mean = bilinear(coefficients, candidate_ritz, shared_ritz, delta)
            shape = (-1,) + (1,) * (delta.dim() - 1)
            return terms._replace(prior=prior.reshape(shape)).value(alpha, mean, explained, fit)

        return phi


def refine(
    terms: DualTerms, node: NodeSolve, columns: Tensor, offsets: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """The minimum of ``phi`` for the candidates ``columns`` whose best nodes are ``g +
    offsets`` (``g`` this node), each on ``[alpha_{b-1}, alpha_{b+1}]`` around its own
    best node ``b`` (module docstring, step 2), from Lanczos at this node.

    Returns:
        Values, minimizing alphas and whether the quadrature converged (each
        ``len(columns)``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
        ...     DualTerms, bracket, refine)
        >>> X = torch.rand(30, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 5.0, 0.1, 0.01)
        >>> cache, Xq = bound.gram_spectrum.cache, torch.rand(2, 1, dtype=torch.float64)
        >>> with torch.no_grad():
        ...     cross = bound.kernel(Xq, X).to_dense()
        >>> terms = DualTerms(bound.train_Y[:, 0], cross, torch.ones(2, dtype=torch.float64),
        ...     1.0, bound.radius_squared, 5.0, bound.base_alpha)
        >>> nodes, best, _ = bracket(terms, lambda a: cache.factors[int(cache.index(a))], 0)
        >>> value, alpha, converged = refine(terms, nodes[int(best[0])], torch.arange(1),
        ...                                  torch.zeros(1, dtype=torch.long))
        >>> bool(converged[0]), bool(torch.isclose(value[0], bound.upper(Xq)[0], rtol=1e-8))
        (True, True)
    """
    ratio = 10.0 ** (1.0 / NODES_PER_DECADE)
    reach = float(offsets.abs().max()) + 1.0  # lattice steps to the farthest bracket end
    rho = (ratio ** (reach / 2.0) - 1.0) / (ratio ** (reach / 2.0) + 1.0)
    steps = math.ceil(math.log(QUADRATURE_RTOL / 4.0) / (2.0 * math.log(rho)))
    half_width = math.log(ratio)
    centers = math.log(node.alpha) + half_width * offsets.to(node.solved)  # m
    model = NodeModel(terms, node, columns)
    ends = torch.stack([centers - half_width, centers + half_width], -1)  # m x 2
    model.extend(steps)
    while True:
        phi = model.function(model.steps)
        now, before = phi(ends), model.function(max(model.steps - 1, 1))(ends)
        scale = now.abs() + model.terms.prior.sqrt().unsqueeze(-1)  # |phi|, the prior width
        converged = ((now - before).abs() <= AGREEMENT_RTOL * scale).all(-1)
        if bool(converged.all()) or model.steps >= min(node.solved.shape[0], MAX_LANCZOS_STEPS):
            break
        model.extend(max(model.steps // 2, 2))
    log_alpha = _grid_minimum(phi, centers, half_width)
    value = phi(log_alpha)
    return value, log_alpha.exp(), converged


def _grid_minimum(phi: Callable[[Tensor], Tensor], centers: Tensor, half_width: float) -> Tensor:
    """Per candidate, the minimizer of a quasiconvex ``phi(ln alpha)`` on ``centers +-
    half_width``: the best of ``GRID_POINTS`` points, then the best of ``GRID_POINTS``
    around the parabola through it and its neighbours, then that grid's parabola."""
    m = centers.shape[0]
    offsets = torch.linspace(-1.0, 1.0, GRID_POINTS, dtype=centers.dtype, device=centers.device)
    s = centers.unsqueeze(-1) + half_width * offsets
    step = 2.0 * half_width / (GRID_POINTS - 1)
    rows = torch.arange(m, device=centers.device)
    for level in range(2):
        values = phi(s)
        best = values.argmin(-1)
        inner = best.clamp(1, GRID_POINTS - 2)
        below, centre, above = (values[rows, inner + k] for k in (-1, 0, 1))
        curvature = below - 2.0 * centre + above
        ok = (curvature > 0) & (best == inner)
        offset = 0.5 * (below - above) / torch.where(ok, curvature, torch.ones_like(curvature))
        vertex = s[rows, best] + torch.where(ok, offset.clamp(-1.0, 1.0), 0.0) * step
        if level == 0:
            s = vertex.unsqueeze(-1) + step * offsets
            step = 2.0 * step / (GRID_POINTS - 1)
    return vertex


def refinement_groups(best: Tensor) -> list[tuple[int, Tensor]]:
    """Candidates grouped by their best nodes (``best``, ``m``) into runs of at most
    ``2 REFINEMENT_REACH - 1`` consecutive nodes, each refined at its middle node:
    ``(node, positions)`` per group.

    Example:
        >>> import torch
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
        ...     refinement_groups)
        >>> [(g, p.tolist()) for g, p in refinement_groups(torch.tensor([3, 4, 9, 5]))]
        [(4, [0, 1, 3]), (9, [2])]
    """
    groups = []
    span = 2 * REFINEMENT_REACH - 2
    done = torch.zeros_like(best, dtype=torch.bool)
    while not bool(done.all()):
        low = int(best[~done].min())
        members = ~done & (best <= low + span)
        high = int(best[members].max())
        groups.append(((low + high) // 2, torch.nonzero(members).squeeze(-1)))
        done |= members
    return groups


def factored_exact(terms: DualTerms, factor_at: FactorAt, start: int) -> FactoredResult:
    r"""The exact bound of eq. (10) at ``N`` candidates from factored nodes (module
    docstring): steps 1 and 2.

    Args:
        terms: The data, candidates and numbers (``DualTerms``).
        factor_at: The Gram cache's factor of ``K_t + alpha I`` for a node's ``alpha``
            (``O(t^3)`` the first time, then bordered with the data).
        start: The node to start the bracket at (the last call's, or ``0``).

    Returns:
        A ``FactoredResult``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.martingale_mixture.factored_dual import (
        ...     DualTerms, factored_exact)
        >>> X = torch.rand(40, 1, dtype=torch.float64)
        >>> bound = MartingaleMixtureBound(X, X.sin(), RBFKernel(), 5.0, 0.1, 0.01)
        >>> cache, Xq = bound.gram_spectrum.cache, torch.rand(3, 1, dtype=torch.float64)
        >>> with torch.no_grad():
        ...     cross = bound.kernel(Xq, X).to_dense()
        >>> terms = DualTerms(bound.train_Y[:, 0], cross, torch.ones(3, dtype=torch.float64),
        ...     1.0, bound.radius_squared, 5.0, bound.base_alpha)
        >>> factor_at = lambda a: cache.factors[int(cache.index(a))]
        >>> result = factored_exact(terms, factor_at, 0)
        >>> exact = bound.upper(Xq)  # the eigen route
        >>> bool(result.resolved.all()), bool(torch.allclose(result.value, exact, rtol=1e-8))
        (True, True)
    """
    nodes, best, interior = bracket(terms, factor_at, start)
    N = terms.cross.shape[0]
    dtype, device = terms.cross.dtype, terms.cross.device
    value = torch.full((N,), math.nan, dtype=dtype, device=device)
    alpha = torch.full((N,), math.nan, dtype=dtype, device=device)
    resolved = torch.zeros(N, dtype=torch.bool, device=device)
    inner = torch.nonzero(interior).squeeze(-1)
    for g, positions in refinement_groups(best[inner]):
        columns = inner[positions]
        v, a, ok = refine(terms, nodes[g], columns, best[columns] - g)
        value[columns], alpha[columns], resolved[columns] = v, a, ok
    return FactoredResult(terms.sign * value, alpha, resolved, (min(nodes), max(nodes)))
