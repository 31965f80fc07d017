r"""``certify``: the certified optimality gap over a finite domain or a box.

Source: the confidence bounds' theorems (paper 002, Lemma 4.2: the martingale-mixture
confidence set holds for all rounds at once; paper 000, Theorem 1 / 2 for MT-KB), and the
regret decomposition of the ``certificate`` module.
"""

from __future__ import annotations

from torch import Tensor

from botorch_mtucb.confidence.certificate.bounds import as_confidence_bounds
from botorch_mtucb.confidence.certificate.box import certify_box
from botorch_mtucb.confidence.certificate.certificate import Certificate
from botorch_mtucb.confidence.certificate.finite import MAX_FINITE_POINTS, certify_finite
from botorch_mtucb.confidence.certificate.inputs import check_domain, check_recommendation
from botorch_mtucb.utils.domains import BoxDomain, FiniteDomain


def certify(
    bounds,
    domain: FiniteDomain | BoxDomain,
    recommendation: Tensor | None = None,
    evaluated: Tensor | None = None,
    *,
    chunk_size: int = 4096,
    max_points: int = MAX_FINITE_POINTS,
    tolerance: float | None = None,
    relative_tolerance: float = 0.05,
    max_cells: int = 100_000,
    target_gap: float | None = None,
) -> Certificate:
    r"""A certified upper bound on the simple regret of ``x_hat``,
    ``max_x f(x) - f(x_hat) <= bar U_t - l_t(x_hat)`` (``certificate`` module).

    With probability ``1 - delta`` (the bounds' level), simultaneously for all rounds,
    whatever rule chose the evaluated points, under the bounds' assumptions (printed with
    the result; ``guaranteed=False`` when ``B`` was chosen from the data or the kernel
    fitted to them: a practical number, not a guarantee).

    * ``FiniteDomain``: ``bar U_t = max_{x in D} u_t(x)``, exact (``finite``).
    * ``BoxDomain``: ``bar U_t`` by branch and bound with the RKHS metric (``box``), a
      rigorous upper bound on ``max_x f(x)``, never a local optimizer's estimate.

    Args:
        bounds: ``ConfidenceBounds`` (``MartingaleMixtureBounds``,
            ``MultiTaskMartingaleMixtureBounds``, ``MTKBBounds``, your own), or a
            ``MartingaleMixtureBound`` (wrapped, exact bound).
        domain: A ``FiniteDomain`` or ``BoxDomain`` of the bounds' ``d``.
        recommendation: ``x_hat`` (``d`` or ``1 x d``, in the domain), or ``None``: the
            evaluated point with the largest lower bound.
        evaluated: ``m x d`` evaluated points; ``None``: the bounds' training inputs.
        chunk_size, max_points: Finite domains (``finite.certify_finite``).
        tolerance, relative_tolerance, max_cells, target_gap: Boxes
            (``box.certify_box``).

    Returns:
        A ``Certificate``; ``print`` it for the number with what it certifies.

    Raises:
        TypeError: For bounds or a domain of another type, a non-tensor recommendation.
        ValueError: For a domain of another ``d``, a recommendation of the wrong shape or
            outside the domain, bad ``evaluated``, a finite domain of more than
            ``max_points`` points, bad options.
        UnsupportedError: On a box, for a kernel or input transform whose metric the
            box method cannot bound (``kernel_metric``).

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.confidence import MartingaleMixtureBound
        >>> from botorch_mtucb.confidence.certificate import certify
        >>> from botorch_mtucb.utils import FiniteDomain
        >>> X = torch.linspace(0, 1, 15, dtype=torch.float64).unsqueeze(-1)
        >>> kernel = RBFKernel()
        >>> kernel.lengthscale = 0.3
        >>> bound = MartingaleMixtureBound(X, (6 * X).sin(), kernel, 3.0, 0.01, 0.1)
        >>> domain = FiniteDomain(torch.linspace(0, 1, 101, dtype=torch.float64).unsqueeze(-1))
        >>> certificate = certify(bound, domain)
        >>> bool(0 <= certificate.gap < 1.0), certificate.guaranteed
        (True, True)
    """
    bounds = as_confidence_bounds(bounds)
    domain = check_domain(domain, bounds.input_dim)
    recommendation = check_recommendation(recommendation, domain)
    if isinstance(domain, FiniteDomain):
        return certify_finite(bounds, domain, recommendation, evaluated, chunk_size, max_points)
    return certify_box(
        bounds,
        domain,
        recommendation,
        evaluated,
        tolerance=tolerance,
        relative_tolerance=relative_tolerance,
        max_cells=max_cells,
        target_gap=target_gap,
    )
