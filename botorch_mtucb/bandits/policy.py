r"""The one policy: a confidence rule composed with a round protocol.

Every UCB-type algorithm of the three papers is a ``ConfidencePolicy(rule, protocol,
name)``: the rule (``bandits.confidence_rules``) holds the data and builds the round's
upper confidence bound; the protocol (``bandits.rounds``) says what the bound is maximized
for (paper 000's scalarization, paper 001's revealed or chosen task, paper 002's single
task) and what is fed back. MT-CMM-UCB is MT-KB's protocol with the martingale-mixture
rule in place of Theorem 2's width; KernelUCB is the single-task protocol with any rule.

**Names.** A method's label names one composition: ``<tasks>-<rule>-<protocol>`` in the
papers' terms, ``MT`` / ``IT`` (multi-task kernel, independent tasks), the rule (``KB``:
the exact model with its theorem's width, ``BKB``: the sketch, ``CMM`` / ``DMM`` / ``AMM``:
the martingale mixtures), ``UCB`` (play the maximizer of the bound on the round's
objective: the scalarization of paper 000, the revealed task of paper 001, the single task
of paper 002) or ``AL`` (paper 001's active task choice). Its constructor is the label in
snake case, in its paper's folder (``bandits.scalarized.mt_cmm_ucb``: paper 000's
scalarized feedback; ``bandits.task_indexed.mt_cmm_ucb``: paper 001's revealed task); the
same label in two papers is the same rule with that paper's protocol. The papers' own
names stay where they have no such parts (MOBO, AdaMT-UCB, MTS, AE-LSVI, Uniform,
Independent, Single, KernelUCB's CMM-UCB ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from botorch_mtucb.bandits.protocols import Action


class ConfidencePolicy:
    r"""A policy: ``select`` the protocol's maximizer of the rule's bound, ``update`` the
    rule with what was observed.

    ``diagnostics()`` are the protocol's numbers and the rule's (``recorded`` keeps the
    named ones, in that order); ``settings()`` are the rule's (``None`` if it has none:
    nothing in the run file's header).

    Args:
        rule: The confidence rule, of the protocol's ``rule_type``.
        protocol: A round protocol (``ScalarizedRound``, ``SingleTaskRound``,
            ``RevealedTaskRound``, ``ActiveTaskRound``): ``select(rule, context,
            generator)``, ``update(rule, action, y, context, generator)``,
            ``diagnostics()``.
        name: The method's label, used in results.
        recorded: The diagnostics recorded with each round (default: all).

    Raises:
        TypeError: If ``rule`` lacks the methods the protocol asks of it (its
            ``rule_methods``; their signatures are not checked), if ``rule`` or
            ``protocol`` is a class rather than an instance, ``name`` is not a str or
            ``recorded`` not a sequence of str. ``diagnostics()`` raises a
            ``ValueError`` for a ``recorded`` name the protocol and rule do not report.

    Example:
        >>> from botorch_mtucb.bandits import (
        ...     ConfidencePolicy, MTKBWidth, ScalarizedEnvironment, ScalarizedRound, WidthRule,
        ...     run_policy)
        >>> from botorch_mtucb.bandits.scalarized import empty_model
        >>> from botorch_mtucb.models import VectorValuedGP
        >>> from botorch_mtucb.problems import rkhs_problem
        >>> problem = rkhs_problem(2, seed=0)
        >>> model = empty_model(VectorValuedGP, problem.domain, problem.make_data_kernel(),
        ...                     problem.task_covariance, 0.1)
        >>> rule = WidthRule(model, MTKBWidth(problem.rkhs_norm_bound, problem.noise_std, 0.1),
        ...                  candidates=problem.domain)
        >>> policy = ConfidencePolicy(rule, ScalarizedRound(problem.domain), "MT-KB")
        >>> records = run_policy(policy, ScalarizedEnvironment(problem), horizon=3, seed=0)
        >>> sorted(records[-1].diagnostics)
        ['information_gain', 'width']
    """

    def __init__(
        self, rule: Any, protocol: Any, name: str, recorded: Sequence[str] | None = None
    ) -> None:
        if isinstance(protocol, type):
            raise TypeError(
                f"protocol must be a round protocol instance, e.g. {protocol.__name__}(domain), "
                f"got the class {protocol.__name__} itself"
            )
        if isinstance(rule, type):
            raise TypeError(
                f"rule must be a confidence rule instance, got the class {rule.__name__}"
            )
        if not isinstance(name, str):
            raise TypeError(f"name must be a str (the method's label), got {type(name).__name__}")
        rule_type = getattr(protocol, "rule_type", None)
        if rule_type is None:
            raise TypeError(
                "protocol must be a round protocol (ScalarizedRound, SingleTaskRound, "
                f"RevealedTaskRound, ActiveTaskRound), got {type(protocol).__name__}"
            )
        if not isinstance(rule, rule_type):
            raise TypeError(
                f"rule must have {protocol.rule_methods} for a {type(protocol).__name__}, "
                f"got {type(rule).__name__}"
            )
        self.rule = rule
        self.protocol = protocol
        self.name = name
        if recorded is not None and (
            isinstance(recorded, str) or not all(isinstance(key, str) for key in recorded)
        ):
            raise TypeError(f"recorded must be a sequence of diagnostic names, got {recorded!r}")
        self.recorded = None if recorded is None else tuple(recorded)

    def select(self, context: dict[str, Any], generator: torch.Generator) -> Tensor | Action:
        """The action of the round: the protocol's maximizer of the rule's bound."""
        return self.protocol.select(self.rule, context, generator)

    def update(
        self, x: Tensor | Action, y: Tensor, context: dict[str, Any], generator: torch.Generator
    ) -> None:
        """Feed the observation ``y`` of the action ``x`` to the rule."""
        self.protocol.update(self.rule, x, y, context, generator)

    def diagnostics(self) -> dict[str, float]:
        """The protocol's and the rule's numbers (the ``recorded`` ones)."""
        numbers = {**self.protocol.diagnostics(), **self.rule.diagnostics()}
        if self.recorded is None:
            return numbers
        missing = [key for key in self.recorded if key not in numbers]
        if missing:
            raise ValueError(
                f"recorded names {missing} are not among the diagnostics of {self!r}: "
                f"{sorted(numbers)}"
            )
        return {key: numbers[key] for key in self.recorded}

    def settings(self) -> dict[str, Any] | None:
        """The rule's settings (``None``: none to record)."""
        settings = getattr(self.rule, "settings", None)
        return None if settings is None else settings()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({type(self.rule).__name__}, "
            f"{type(self.protocol).__name__}, name={self.name!r})"
        )
