"""What paper 000's policies share: pick the maximizer of a scalarized UCB over the
domain, then condition the model on the observation and recompute the width.

MT-KB, IT-KB, MT-BKB, IT-BKB and MOBO differ only in their model (exact or sketched,
multi-task or independent), their width (Theorems 2 and 3 of paper 000, IGP-UCB, BKB,
GP-UCB) and, for MOBO, the acquisition.
"""

from __future__ import annotations

from typing import Any

import torch
from botorch.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_mtucb.acquisition import ScalarizedMultiTaskUCB
from botorch_mtucb.kernels.separable_sum import SumOfSeparableKernels
from botorch_mtucb.utils.domains import Domain, FiniteDomain, maximize_acquisition


def empty_model(
    model_class: type, domain: Domain, data_kernel, task_covariance, regularization, **kwargs
):
    """``model_class`` built on no data (the prior), on the domain's dtype and device.

    Args:
        model_class: ``VectorValuedGP`` or ``NystromVectorValuedGP``.
        domain: A ``FiniteDomain`` or ``BoxDomain`` (gives ``d``, dtype and device).
        data_kernel, task_covariance: The multi-task kernel (as ``VectorValuedGP``).
        regularization: ``eta > 0``.
        **kwargs: Passed on to ``model_class`` (e.g. MT-BKB's ``accuracy``, ``seed``).

    Example:
        >>> from botorch_mtucb.bandits.scalarized.policy import empty_model
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> model = empty_model(VectorValuedGP, problem.domain, problem.make_data_kernel(),
        ...                     problem.task_covariance, 0.1)
        >>> model.train_X.shape, model.num_outputs
        (torch.Size([0, 1]), 2)
    """
    reference = domain.points if isinstance(domain, FiniteDomain) else domain.bounds
    num_tasks = SumOfSeparableKernels(data_kernel, task_covariance).num_tasks
    return model_class(
        reference.new_zeros(0, reference.shape[-1]),
        reference.new_zeros(0, num_tasks),
        data_kernel,
        task_covariance,
        regularization,
        **kwargs,
    )


class ScalarizedUCBPolicy:
    """Base of paper 000's policies (``select`` / ``update`` / ``diagnostics``).

    Subclasses set ``name``, ``domain``, ``model`` and ``_width`` and implement
    ``width()``; the round's scalarization comes from the context key
    ``"_scalarization"`` (``ScalarizedEnvironment``). ``acquisition_class`` is
    ``ScalarizedMultiTaskUCB`` (paper 000, eq. (2)) unless a subclass says otherwise.

    Example:
        >>> from botorch_mtucb.bandits import ScalarizedEnvironment, run_policy
        >>> from botorch_mtucb.bandits.scalarized.policy import ScalarizedUCBPolicy, empty_model
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> class FixedWidthUCB(ScalarizedUCBPolicy):
        ...     def __init__(self, problem, width):
        ...         self.name, self.domain, self.fixed = "fixed-width", problem.domain, width
        ...         self.model = empty_model(VectorValuedGP, problem.domain,
        ...             problem.make_data_kernel(), problem.task_covariance, 0.1)
        ...         self._width = self.width()
        ...     def width(self):
        ...         return self.fixed
        >>> problem = rkhs_problem(2, seed=0)
        >>> records = run_policy(FixedWidthUCB(problem, 2.0), ScalarizedEnvironment(problem),
        ...                      horizon=3, seed=0)
        >>> records[-1].diagnostics
        {'width': 2.0}
    """

    name: str
    domain: Domain
    model: Any
    acquisition_class: type[AcquisitionFunction] = ScalarizedMultiTaskUCB

    def width(self) -> Tensor | float:  # pragma: no cover - abstract
        raise NotImplementedError

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``x_t``: the maximizer of the acquisition for the round's scalarization.

        On a ``FiniteDomain`` the model keeps its posterior at the domain's points
        incrementally (``track_candidates``, where the model has it: issue 14, item 1);
        the values and the point chosen are those of the plain posterior to round-off.
        """
        self._track_domain()
        acquisition = self.acquisition_class(self.model, context["_scalarization"], self._width)
        x, _ = maximize_acquisition(acquisition, self.domain, generator)
        return x.detach()

    def _track_domain(self) -> None:
        """Ask the model, once, to track the candidates of a finite domain.

        Called by the first ``select`` or ``update``, whichever comes first: a run
        resumed by replaying its rounds into a fresh policy (``update`` only) then goes
        through the same operations as an uninterrupted one, to the last bit.
        """
        if getattr(self, "_tracking_asked", False):
            return
        self._tracking_asked = True
        track = getattr(self.model, "track_candidates", None)
        if isinstance(self.domain, FiniteDomain) and track is not None:
            track(self.domain.points)

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Condition on ``y_t`` at ``x_t``, then recompute the width."""
        self._track_domain()  # also here: a resumed run replays updates only
        self._observe(x.reshape(1, -1), y.reshape(1, -1), generator)
        self._width = self.width()

    def _observe(self, X: Tensor, Y: Tensor, generator: torch.Generator) -> None:
        self.model.append_observations(X, Y)

    def diagnostics(self) -> dict[str, float]:
        """The current width."""
        return {"width": float(self._width)}
