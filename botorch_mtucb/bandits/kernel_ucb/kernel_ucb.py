r"""KernelUCB (Algorithm 1 of paper 002): the single-task round with any confidence rule.

Each round ``x_t = argmax_{x in X_t} u_{t-1}(x)``, where ``X_t`` is the round's action
set (the context key ``"_actions"``, paper 002 Section 5.1) or a fixed domain, and
``u_{t-1}`` is the acquisition of the policy's confidence rule
(``bandits.confidence_rules``: martingale-mixture bounds, AY-GP-UCB, IGP-UCB); then
``(x_t, y_t)`` goes to the rule.
"""

from __future__ import annotations

from botorch_mtucb.bandits.confidence_rules.base import ConfidenceRule
from botorch_mtucb.bandits.policy import ConfidencePolicy
from botorch_mtucb.bandits.rounds import SingleTaskRound
from botorch_mtucb.utils.domains import Domain


class KernelUCB(ConfidencePolicy):
    r"""KernelUCB (paper 002, Algorithm 1): ``ConfidencePolicy(rule, SingleTaskRound(domain),
    name)``, paper 002's name for it.

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
        super().__init__(rule, SingleTaskRound(domain), name)

    @property
    def domain(self) -> Domain | None:
        """The fixed domain (used when the context has no ``"_actions"``)."""
        return self.protocol.domain
