r"""The certificate on a box: a rigorous upper bound on ``max_x f(x)`` by branch and bound.

A local optimizer (``optimize_acqf``) gives a *lower* estimate of ``max_x u_t(x)``; the
certificate needs an upper bound. On the event of the bounds, for a cell with centre
``c`` and half-widths ``h``

.. math::
    \sup_{x \in \mathrm{cell}} f(x) \le u_t(c) + B \sup_{x \in \mathrm{cell}} d_k(x, c)

(``|f(x) - f(c)| <= ||f||_H d_k(x, c)``, the RKHS metric of ``kernel_metric``; for
stationary RBF / Matern kernels the supremum is at a corner). For the exact
martingale-mixture bound the same inequality bounds ``u_t`` itself (every ``g`` in paper
002's confidence set has ``||g||_H <= B``), so ``bar U_t >= max_x u_t(x)``; MT-KB's
ellipsoid is not inside the norm ball, and there ``bar U_t`` (a bound on ``max f``) may
lie below ``max_x u_t(x)``.

The box is split by branch and bound over cells, as in Lipschitz global optimization
(Piyavskii 1972, Shubert 1972; the DIRECT algorithm of Jones, Perttunen and Stuckman
1993; Horst and Tuy, *Global Optimization: Deterministic Approaches*, 1996), with the
Lipschitz bound in the kernel's metric instead of a Euclidean one:

1. start from the box as one cell; evaluate ``u_t`` and ``l_t`` at the centres;
2. prune every cell whose upper bound is below the best lower bound found
   (``max l_t`` over the centres and the evaluated points): it cannot hold a maximizer;
3. bisect (along the longest side relative to the box) the cells whose upper bound exceeds
   the largest ``u_t`` at a centre by more than the tolerance, the largest first, in
   batches;
4. stop when ``bar U_t`` (the largest upper bound of the remaining cells) is within the
   tolerance of the largest ``u_t`` at a centre, when the cell budget is spent, or, with
   ``target_gap``, once the gap is shown below it or cannot be. ``bar U_t`` is a valid
   upper bound at every step; the budget only limits how close it gets.

Practical range: the cells near the maximum must shrink until ``B d_k`` across them is
below the tolerance, about ``(B / (ell tolerance))^d`` cells for an RBF kernel of
lengthscale ``ell`` (Matern-1/2's metric grows like the square root of the distance: many
more). For RBF and Matern-3/2, -5/2 kernels d = 1 and 2 are routine and d = 3 works with
moderate ``B / ell`` (the README gives measured figures); Matern-1/2 beyond d = 1 and any
kernel beyond d = 3 usually spend the cell budget (the bound stays valid, but loose):
certify over a finite set of candidates instead.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from botorch_mtucb.confidence.certificate.certificate import Certificate
from botorch_mtucb.confidence.certificate.inputs import evaluated_lower, lower_range
from botorch_mtucb.utils.checks import as_float, as_int, check_nonnegative
from botorch_mtucb.utils.domains import BoxDomain

_DTYPE = torch.float64


def _check_options(tolerance, relative_tolerance, max_cells, target_gap, batch_size):
    if tolerance is not None:
        tolerance = check_nonnegative(tolerance, "tolerance")
    relative_tolerance = check_nonnegative(relative_tolerance, "relative_tolerance")
    max_cells = as_int(max_cells, "max_cells", minimum=1)
    batch_size = as_int(batch_size, "batch_size", minimum=1)
    if target_gap is not None:
        target_gap = as_float(target_gap, "target_gap")
        if target_gap <= 0:
            raise ValueError(f"target_gap must be > 0, got {target_gap}")
    return tolerance or 0.0, relative_tolerance, max_cells, target_gap, batch_size


def _bisect(centres: Tensor, half: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
    """Two children per cell, split along its longest side relative to ``scale``."""
    relative = torch.where(scale > 0, half / scale.clamp_min(1e-300), torch.zeros_like(half))
    dim = relative.argmax(-1)
    rows = torch.arange(centres.shape[0], device=centres.device)
    child_half = half.clone()
    child_half[rows, dim] = half[rows, dim] / 2
    offset = torch.zeros_like(half)
    offset[rows, dim] = child_half[rows, dim]
    return torch.cat([centres - offset, centres + offset]), torch.cat([child_half, child_half])


def certify_box(
    bounds,
    domain: BoxDomain,
    recommendation: Tensor | None = None,
    evaluated: Tensor | None = None,
    tolerance: float | None = None,
    relative_tolerance: float = 0.05,
    max_cells: int = 100_000,
    target_gap: float | None = None,
    batch_size: int = 512,
) -> Certificate:
    r"""``bar U_t - l_t(x_hat)`` on a box, ``bar U_t`` by branch and bound (module docstring).

    Args:
        bounds: ``ConfidenceBounds`` (checked by ``certify``).
        domain: The box.
        recommendation: ``x_hat`` (in the box, checked), or ``None``: the evaluated point
            with the largest ``l_t`` (the best cell centre if there are none).
        evaluated: ``m x d`` evaluated points (``None``: ``bounds.evaluated_inputs()``).
        tolerance: Absolute tolerance on ``bar U_t - max_c u_t(c)`` (default 0).
        relative_tolerance: The same relative to ``max_c u_t(c) - l_t(x_hat)`` (the
            tolerance is the larger of the two).
        max_cells: The most cells evaluated (each costs one ``u_t`` and one ``l_t``).
        target_gap: Stop refining once ``gap <= target_gap`` is certified, or once
            ``max_c u_t(c) - l_t(x_hat) > target_gap`` shows it cannot be.
        batch_size: Cells split per step.

    Returns:
        A ``Certificate``; ``candidates`` and ``candidate_half_widths`` are the cells kept
        (upper bound ``>= optimum_lower``); ``method`` says how far the refinement got.

    Raises:
        ValueError: For a negative tolerance, ``max_cells`` / ``batch_size`` below 1 or
            ``target_gap <= 0``.
        UnsupportedError: From the bounds' metric (kernels other than RBF / Matern).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import MartingaleMixtureBounds
        >>> from botorch_mtucb.confidence.certificate.box import certify_box
        >>> from botorch_mtucb.utils import BoxDomain
        >>> X = torch.rand(8, 1, dtype=torch.float64)
        >>> bounds = MartingaleMixtureBounds(MartingaleMixtureBound(X, X, RBFKernel(), 2.0, 0.1, 0.1))
        >>> box = BoxDomain(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
        >>> certificate = certify_box(bounds, box)
        >>> grid = torch.linspace(0, 1, 1001, dtype=torch.float64).unsqueeze(-1)
        >>> certificate.optimum_upper >= float(bounds.upper(grid).max())
        True
    """
    tolerance, relative_tolerance, max_cells, target_gap, batch_size = _check_options(
        tolerance, relative_tolerance, max_cells, target_gap, batch_size
    )
    box = domain.bounds.detach().to(_DTYPE)
    scale = (box[1] - box[0]) / 2
    norm_bound = float(bounds.rkhs_norm_bound)
    bounds.cell_radius(box[:1], scale[None])  # refuses unsupported kernels before any work
    with torch.no_grad():
        evaluated, evaluated_l = evaluated_lower(bounds, evaluated)
    best_lower, x_hat, l_hat = -math.inf, recommendation, -math.inf
    if evaluated_l.numel():
        best_lower = float(evaluated_l.max())
    if recommendation is not None:
        with torch.no_grad():
            l_hat = float(bounds.lower(recommendation.reshape(1, -1)))
        best_lower = max(best_lower, l_hat)
    elif evaluated_l.numel():
        index = int(evaluated_l.argmax())
        x_hat, l_hat = evaluated[index], float(evaluated_l[index])
    from_centres = x_hat is None

    centres = box.new_zeros(0, box.shape[1])
    half, cell_upper = centres.clone(), box.new_zeros(0)
    new_centres, new_half = ((box[0] + box[1]) / 2)[None], scale[None]
    best_centre_u, centre_lowers, num_cells, reason = -math.inf, [], 0, ""
    while True:
        with torch.no_grad():
            u = bounds.upper(new_centres).to(_DTYPE).reshape(-1)
            lo = bounds.lower(new_centres).to(_DTYPE).reshape(-1)
            radius = bounds.cell_radius(new_centres, new_half).to(_DTYPE).reshape(-1)
        num_cells += new_centres.shape[0]
        centre_lowers.append(lo)
        best_centre_u = max(best_centre_u, float(u.max()))
        if float(lo.max()) > best_lower:
            best_lower = float(lo.max())
            if from_centres:
                x_hat, l_hat = new_centres[int(lo.argmax())], best_lower
        centres = torch.cat([centres, new_centres])
        half = torch.cat([half, new_half])
        cell_upper = torch.cat([cell_upper, u + norm_bound * radius])
        keep = cell_upper >= best_lower  # the others cannot hold a maximizer
        centres, half, cell_upper = centres[keep], half[keep], cell_upper[keep]
        upper = float(cell_upper.max())
        tol = max(tolerance, relative_tolerance * max(best_centre_u - l_hat, 0.0))
        if upper - best_centre_u <= tol:
            reason = "tolerance reached"
            break
        if target_gap is not None and upper - l_hat <= target_gap:
            reason = f"gap certified <= target_gap = {target_gap:g}"
            break
        if target_gap is not None and best_centre_u - l_hat > target_gap:
            reason = f"gap shown > target_gap = {target_gap:g}"
            break
        split = (cell_upper > best_centre_u + tol) & (half.amax(-1) > 0)
        count = min(int(split.sum()), batch_size)
        if count == 0:
            reason = "no cell can be split"
            break
        if num_cells + 2 * count > max_cells:
            reason = f"cell budget max_cells = {max_cells} spent"
            break
        order = torch.where(split, cell_upper, torch.full_like(cell_upper, -math.inf))
        chosen = torch.zeros_like(split)
        chosen[order.topk(count).indices] = True
        new_centres, new_half = _bisect(centres[chosen], half[chosen], scale)
        centres, half, cell_upper = centres[~chosen], half[~chosen], cell_upper[~chosen]

    lowers = torch.cat(centre_lowers)
    optimum_lower = max(best_lower, l_hat)
    kept = cell_upper >= optimum_lower
    method = (
        f"box: branch and bound with the RKHS metric, {num_cells} cells evaluated, "
        f"{centres.shape[0]} kept, bar U_t - max u_t(centres) = "
        f"{upper - best_centre_u:.3g} ({reason})"
    )
    dtype = domain.bounds.dtype
    return Certificate(
        gap=upper - l_hat,
        recommendation=x_hat.to(dtype),
        recommendation_lower=l_hat,
        optimum_lower=optimum_lower,
        optimum_upper=upper,
        candidates=centres[kept].to(dtype),
        candidate_half_widths=half[kept].to(dtype),
        lower_bound_range=lower_range(evaluated_l if evaluated_l.numel() else lowers),
        guaranteed=bool(bounds.guaranteed),
        assumptions=bounds.assumptions,
        delta=float(bounds.delta),
        method=method,
    )
