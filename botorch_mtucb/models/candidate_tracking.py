r"""How a fixed-kernel model attaches a ``CandidatePosterior``: ``track_candidates``.

The public entry point of both models (``VectorValuedGP``, ``NystromVectorValuedGP``)
with its argument checks; each model fills the object from its own factorization
(``_attach_candidates``) and updates it as observations arrive.
"""

from __future__ import annotations

import gpytorch
import torch
from torch import Tensor

from botorch_mtucb.models.candidate_posterior import CandidateDomain, CandidatePosterior
from botorch_mtucb.utils.checks import check_tensor
from botorch_mtucb.utils.domains import FiniteDomain

MAX_CANDIDATE_ENTRIES = 2**25  # entries a candidate posterior keeps (256 MiB in float64)


class CandidateTrackingMixin:
    """``track_candidates`` and what goes with it (``candidates``, ``tracks_candidates``,
    tracking again after a rebuild, moving the tensors with ``.to()``) for
    ``FixedKernelMultiTaskModel``: a subclass implements ``_attach_candidates``.

    Example:
        >>> import torch
        >>> from gpytorch.kernels import RBFKernel
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.models.candidate_tracking import CandidateTrackingMixin
        >>> X = torch.zeros(0, 1, dtype=torch.float64)
        >>> model = VectorValuedGP(X, X.new_zeros(0, 2), RBFKernel(), torch.eye(2), 0.1)
        >>> isinstance(model, CandidateTrackingMixin), model.tracks_candidates
        (True, False)
    """

    _candidates: CandidatePosterior | None

    def track_candidates(
        self, points: CandidateDomain | None, max_entries: int = MAX_CANDIDATE_ENTRIES
    ) -> bool:
        r"""Keep the posterior at a finite candidate set incrementally from now on
        (``None`` stops); returns whether the candidates are tracked.

        Attaches one ``CandidatePosterior`` (``models.candidate_posterior``; the model's
        class docstring says how it is kept): a posterior query at candidates (``b x 1 x
        d``, e.g. every point of the domain) is then read from it, with the numbers of the
        plain posterior to round-off, and any other query (``q > 1``, other points,
        gradients) takes the plain route. The tracking stops (``False``) when it would
        keep more than ``max_entries`` entries, now or at a later update, or where the
        model's route cannot keep the candidates (then the plain route is kept).
        Conditioned models (``condition_on_observations``) track their own data.

        Args:
            points: ``N x d`` candidates (a tensor or ``FiniteDomain``, detached and
                copied in the model's dtype), or a list of one per task (each task's
                arms: candidate columns ``(x, i)``), or ``None``.
            max_entries: The most entries the tracking may keep (default ``2**25``:
                256 MiB in float64).

        Returns:
            Whether the candidates are tracked.

        Raises:
            TypeError: If ``points`` is not a tensor / ``FiniteDomain`` (or a list of
                them), is half precision, or ``max_entries`` is not an int.
            ValueError: If ``points`` is not ``N x d`` (``N >= 1``, the model's ``d``),
                holds NaN/inf, a list does not hold one domain per task, or
                ``max_entries < 1``.
            UnsupportedError: For a ``subset_output`` model (track on the full model).

        Example:
            >>> import torch
            >>> from gpytorch.kernels import RBFKernel
            >>> from botorch_mtucb.models import VectorValuedGP
            >>> B = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
            >>> D = torch.linspace(0, 1, 11, dtype=torch.float64).unsqueeze(-1)
            >>> model = VectorValuedGP(D[:2], torch.rand(2, 2, dtype=torch.float64),
            ...                        RBFKernel(), B, regularization=0.1)
            >>> plain = model.posterior(D.unsqueeze(-2)).variance
            >>> model.track_candidates(D)
            True
            >>> torch.allclose(model.posterior(D.unsqueeze(-2)).variance, plain)
            True
            >>> _ = model.append_observations(D[5:6], torch.rand(1, 2, dtype=torch.float64))
            >>> tracked = model.posterior(D.unsqueeze(-2)).mean
            >>> model.track_candidates(None)
            False
            >>> torch.allclose(model.posterior(D.unsqueeze(-2)).mean, tracked)
            True
        """
        if points is None:
            self._candidates = None
            return False
        self._require_all_outputs("track_candidates")
        max_entries = _check_max_entries(max_entries)
        values, offsets = _candidate_points(points, self._input_dim, self.num_tasks)
        values = values.detach().to(self.train_X).clone()
        self._candidates = None
        candidates = CandidatePosterior(points, values, max_entries, offsets)
        with torch.no_grad(), gpytorch.settings.lazily_evaluate_kernels(False):
            if self._attach_candidates(candidates):
                self._candidates = candidates
        return self._candidates is not None

    def _attach_candidates(self, candidates: CandidatePosterior) -> bool:
        """Fill ``candidates`` from the model's state; ``False``: not tracked."""
        raise NotImplementedError  # pragma: no cover

    @property
    def candidates(self) -> CandidatePosterior | None:
        """The ``CandidatePosterior`` that ``track_candidates`` attached, or ``None``."""
        return self._candidates

    @property
    def tracks_candidates(self) -> bool:
        """Whether ``track_candidates`` keeps the posterior at a candidate set."""
        return self._candidates is not None

    def _track_again(self, candidates: CandidatePosterior | None) -> None:
        """Track the candidates of ``candidates`` again (after a rebuild from scratch)."""
        if candidates is not None:
            self.track_candidates(candidates.domain, candidates.max_entries)

    def _apply(self, fn, recurse: bool = True):
        # The candidates' tensors live outside the module's buffers: move / cast them too.
        super()._apply(fn, recurse)
        candidates = getattr(self, "_candidates", None)
        if candidates is not None:
            candidates.apply(fn)
        return self


def _candidate_points(
    domain: CandidateDomain, input_dim: int, num_tasks: int
) -> tuple[Tensor, list[int] | None]:
    """The checked candidates of ``track_candidates``: ``(points, offsets)``, the ``N x
    d`` points and, for one domain per task, the task boundaries in them (``n + 1``
    offsets; ``None`` for one domain of every task).

    Raises:
        TypeError: For a domain that is not a tensor / ``FiniteDomain`` (or a list of
            them), or half-precision / non-float points.
        ValueError: For points that are not ``N x d`` with ``N >= 1`` and the model's
            ``d``, NaN/inf, or a list of domains whose length is not ``n``.
    """
    if isinstance(domain, (Tensor, FiniteDomain)):
        return _domain_points(domain, "points", input_dim), None
    if not isinstance(domain, (list, tuple)):
        raise TypeError(
            "points must be an N x d tensor, a FiniteDomain, or a list of one per task, got "
            f"{type(domain).__name__}"
        )
    parts = [_domain_points(d, f"points[{i}]", input_dim) for i, d in enumerate(domain)]
    if len(parts) != num_tasks:
        raise ValueError(
            f"points must hold one domain per task ({num_tasks}) when given as a list, got "
            f"{len(parts)}"
        )
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + part.shape[0])
    dtype = parts[0].dtype
    for part in parts[1:]:
        dtype = torch.promote_types(dtype, part.dtype)
    return torch.cat([p.to(dtype) for p in parts]), offsets


def _domain_points(domain: Tensor | FiniteDomain, name: str, input_dim: int) -> Tensor:
    points = domain.points if isinstance(domain, FiniteDomain) else domain
    points = check_tensor(points, name, dim=2)
    if points.dtype in (torch.float16, torch.bfloat16):  # rounded: would never match
        raise TypeError(f"{name} must be float32 or float64, got {points.dtype}")
    if points.shape[0] == 0 or points.shape[-1] != input_dim:
        raise ValueError(f"{name} must be N x {input_dim} with N >= 1, got {tuple(points.shape)}")
    if not torch.isfinite(points).all():
        raise ValueError(f"{name} contains NaN or inf")
    return points


def _check_max_entries(max_entries: int) -> int:
    """``max_entries`` of ``track_candidates``: an int ``>= 1``."""
    if isinstance(max_entries, bool) or not isinstance(max_entries, int):
        raise TypeError(f"max_entries must be an int, got {type(max_entries).__name__}")
    if max_entries < 1:
        raise ValueError(f"max_entries must be >= 1, got {max_entries}")
    return max_entries
