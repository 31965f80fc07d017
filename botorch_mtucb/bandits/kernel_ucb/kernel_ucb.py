r"""KernelUCB (Algorithm 1 of paper 002) with any confidence rule.

Each round ``x_t = argmax_{x in X_t} u_{t-1}(x)``, where ``X_t`` is the round's action
set (the context key ``"_actions"``, paper 002 Section 5.1) or a fixed domain, and
``u_{t-1}`` is the acquisition of the policy's confidence rule (``confidence_rules.py``:
martingale-mixture bounds, AY-GP-UCB, IGP-UCB); then ``(x_t, y_t)`` goes to the rule.
"""

from __future__ import annotations

from typing import Any

import torch
from botorch.acquisition import AcquisitionFunction
from torch import Tensor

from botorch_mtucb.bandits.kernel_ucb.confidence_rules import ConfidenceRule
from botorch_mtucb.utils.domains import BoxDomain, Domain, FiniteDomain, maximize_acquisition


class KernelUCB:
    r"""KernelUCB (paper 002, Algorithm 1): play the maximizer of a confidence rule's UCB.

    Args:
        rule: The confidence rule (``acquisition()``, ``update(X, Y)``,
            ``diagnostics()``), e.g. ``confidence_rule("DMM-UCB", kernel, dim)``.
        domain: Where to look when the context has no ``"_actions"`` (a
            ``FiniteDomain`` or ``BoxDomain``).
        name: Name used in results (e.g. the paper's ``"DMM-UCB"``).

    Raises:
        TypeError: If ``rule`` lacks the methods of a ``ConfidenceRule``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits import KernelUCB, confidence_rule
        >>> from botorch_mtucb.problems import make_kernel
        >>> policy = KernelUCB(confidence_rule("AMM-UCB", make_kernel("rbf", 0.5), 2),
        ...                    name="AMM-UCB")
        >>> actions = torch.rand(10, 2, dtype=torch.float64)
        >>> x = policy.select({"_actions": actions}, torch.Generator().manual_seed(0))
        >>> policy.update(x, torch.tensor([0.3], dtype=torch.float64), {}, torch.Generator())
        >>> sorted(policy.diagnostics())
        ['radius_squared']
    """

    def __init__(
        self, rule: ConfidenceRule, domain: Domain | None = None, name: str = "KernelUCB"
    ) -> None:
        if not isinstance(rule, ConfidenceRule):
            raise TypeError(
                "rule must have acquisition(), update(X, Y) and diagnostics(), "
                f"got {type(rule).__name__}"
            )
        self.rule = rule
        self.domain = domain
        self.name = name

    def acquisition(self) -> AcquisitionFunction:
        """``u_{t-1}`` as a BoTorch acquisition function."""
        return self.rule.acquisition()

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor:
        """``x_t = argmax u_{t-1}(x)`` over the round's actions (or the domain)."""
        domain = round_domain(context, self.domain)
        x, _ = maximize_acquisition(self.acquisition(), domain, generator)
        return x.detach()

    def update(
        self, x: Tensor, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Add ``(x_t, y_t)`` to the rule (recursive updates, ``O(t^2)``)."""
        x = x.reshape(1, -1).to(torch.float64)
        y = y.reshape(1, 1).to(torch.float64)
        self.rule.update(x, y)

    def diagnostics(self) -> dict[str, float]:
        """The rule's diagnostics (``R_t^2`` of a mixture, or a width)."""
        return self.rule.diagnostics()


def round_domain(context: dict[str, Any], domain: Domain | None) -> Domain:
    """The round's action set ``context["_actions"]`` as a ``FiniteDomain``, or ``domain``.

    Raises:
        ValueError: If the context has no ``"_actions"`` and ``domain`` is ``None``.
        TypeError: If ``domain`` is neither a ``FiniteDomain`` nor a ``BoxDomain``.

    Example:
        >>> import torch
        >>> from botorch_mtucb.bandits.kernel_ucb.kernel_ucb import round_domain
        >>> round_domain({"_actions": torch.eye(2)}, None).points.shape
        torch.Size([2, 2])
    """
    actions = context.get("_actions")
    if actions is not None:
        return FiniteDomain(actions)
    if domain is None:
        raise ValueError("the context has no '_actions' and the policy has no domain")
    if not isinstance(domain, (FiniteDomain, BoxDomain)):
        raise TypeError(f"domain must be a FiniteDomain or BoxDomain, got {type(domain).__name__}")
    return domain
