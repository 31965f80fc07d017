"""ConfidencePolicy: every UCB method is one rule with one round protocol. A composition
built by hand plays the rounds of the named one, the martingale-mixture methods share
their protocol with the width methods, labels follow the compositions, the recorded
diagnostics and the run file's header come from the rule and the protocol."""

from __future__ import annotations

import json

import pytest
import torch
from oracles import make_rbf
from tiny_problem import TinyProblem

from botorch_mtucb.bandits import (
    ActiveTaskRound,
    ConfidencePolicy,
    MTKBWidth,
    NaiveWidth,
    OptimisticGap,
    RevealedTaskRound,
    ScalarizedEnvironment,
    ScalarizedRound,
    UniformTask,
    WidthRule,
    run_policy,
    scalarized,
    task_indexed,
)
from botorch_mtucb.bandits.scalarized import empty_model
from botorch_mtucb.experiments.paper001.methods import linear_kernel
from botorch_mtucb.models import VectorValuedGP
from botorch_mtucb.utils import FiniteDomain

B = torch.tensor([[1.0, 0.6], [0.6, 1.5]], dtype=torch.float64)
RKHS, SIGMA, DELTA, ETA = 20.0, 0.1, 0.1, 0.1


def test_a_hand_built_composition_plays_the_named_methods_rounds():
    problem = TinyProblem()
    domain = FiniteDomain(problem.points)
    named = scalarized.mt_kb(make_rbf([0.25]), B, domain, RKHS, SIGMA, ETA, DELTA)
    model = empty_model(VectorValuedGP, domain, make_rbf([0.25]), B, ETA)
    rule = WidthRule(model, MTKBWidth(RKHS, SIGMA, DELTA), candidates=domain)
    by_hand = ConfidencePolicy(rule, ScalarizedRound(domain), "MT-KB")
    environment = ScalarizedEnvironment(problem)
    first, second = (run_policy(p, environment, 6, seed=1) for p in (named, by_hand))
    assert [(r.x, r.y, r.diagnostics) for r in first] == [(r.x, r.y, r.diagnostics) for r in second]


def test_the_martingale_mixture_methods_are_the_width_methods_protocols_with_another_rule():
    problem = TinyProblem()
    domain = FiniteDomain(problem.points)
    mt_kb = scalarized.mt_kb(make_rbf([0.25]), B, domain, RKHS, SIGMA)
    mt_cmm = scalarized.mt_cmm_ucb(make_rbf([0.25]), B, domain, RKHS, SIGMA)
    assert type(mt_kb) is type(mt_cmm) is ConfidencePolicy
    assert type(mt_kb.protocol) is type(mt_cmm.protocol) is ScalarizedRound
    assert type(mt_kb.rule) is not type(mt_cmm.rule)
    arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
    arguments = (arms, linear_kernel(), 0.5, 1.0, 0.2)
    online = [task_indexed.mt_ucb(*arguments, num_tasks=2),
              task_indexed.mt_cmm_ucb(*arguments, num_tasks=2)]  # fmt: skip
    active = [task_indexed.mt_al(*arguments, num_tasks=2),
              task_indexed.mt_cmm_al(*arguments, num_tasks=2)]  # fmt: skip
    assert {type(p.protocol) for p in online} == {RevealedTaskRound}
    assert {type(p.protocol) for p in active} == {ActiveTaskRound}
    assert type(online[1].rule) is type(active[1].rule)  # one rule, two protocols


def test_labels_name_the_compositions():
    domain = FiniteDomain(TinyProblem().points)
    variances = torch.diagonal(B)
    grid = [0.01, 0.1]
    assert scalarized.mt_cmm_ucb(make_rbf([0.25]), B, domain, RKHS, SIGMA).name == "MT-CMM-UCB"
    dmm = scalarized.mt_cmm_ucb(make_rbf([0.25]), B, domain, RKHS, SIGMA, alphas=grid)
    assert dmm.name == "MT-DMM-UCB"
    it = scalarized.it_cmm_ucb(make_rbf([0.25]), variances, domain, RKHS, SIGMA)
    assert it.name == "IT-CMM-UCB"
    it_dmm = scalarized.it_cmm_ucb(make_rbf([0.25]), variances, domain, RKHS, SIGMA, alphas=grid)
    assert it_dmm.name == "IT-DMM-UCB"
    arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
    arguments = (arms, linear_kernel(), 0.5, 1.0, 0.2)
    names = {
        task_indexed.mt_ucb(*arguments, num_tasks=2).name,
        task_indexed.mt_ucb(*arguments, num_tasks=2, width=NaiveWidth).name,
        task_indexed.mt_al(*arguments, num_tasks=2).name,
        task_indexed.mt_al(*arguments, num_tasks=2, width=NaiveWidth).name,
        task_indexed.mt_al(*arguments, num_tasks=2, query=UniformTask()).name,
        task_indexed.mt_al(*arguments, num_tasks=2, query=UniformTask(), width=NaiveWidth).name,
        task_indexed.mt_al(*arguments, num_tasks=2, query=OptimisticGap()).name,
        task_indexed.mts(*arguments, num_tasks=2).name,
        task_indexed.mt_cmm_ucb(*arguments, num_tasks=2).name,
        task_indexed.mt_cmm_al(*arguments, num_tasks=2).name,
    }
    assert names == {"MT-UCB", "MT-UCB-naive", "MT-AL", "MT-AL-naive", "Uniform",
                     "Uniform-naive", "AE-LSVI", "MTS", "MT-CMM-UCB", "MT-CMM-AL"}  # fmt: skip


def test_recorded_diagnostics_and_the_header(tmp_path):
    problem = TinyProblem()
    domain = FiniteDomain(problem.points)
    environment = ScalarizedEnvironment(problem)
    policy = scalarized.mt_kb(make_rbf([0.25]), B, domain, RKHS, SIGMA)
    assert policy.settings() is None  # MT-KB has no setting to record
    records = run_policy(policy, environment, 2, seed=0, path=tmp_path / "kb.jsonl")
    header = json.loads((tmp_path / "kb.jsonl").read_text().splitlines()[0])["header"]
    assert header == {"policy": "MT-KB", "seed": 0}
    chosen = ConfidencePolicy(policy.rule, policy.protocol, "kb", recorded=["width"])
    assert chosen.diagnostics() == {"width": records[-1].diagnostics["width"]}
    cmm = scalarized.mt_cmm_ucb(make_rbf([0.25]), B, domain, RKHS, SIGMA)
    run_policy(cmm, environment, 1, seed=0, path=tmp_path / "cmm.jsonl")
    header = json.loads((tmp_path / "cmm.jsonl").read_text().splitlines()[0])["header"]
    assert header["settings"] == cmm.rule.settings() and header["settings"]["alphas"] is None


def test_a_rule_of_another_shape_is_refused():
    domain = FiniteDomain(TinyProblem().points)
    width_policy = scalarized.mt_kb(make_rbf([0.25]), B, domain, RKHS, SIGMA)
    arms = FiniteDomain(torch.eye(3, dtype=torch.float64))
    task_policy = task_indexed.mt_ucb(arms, linear_kernel(), 0.5, 1.0, 0.2, num_tasks=2)
    with pytest.raises(TypeError, match=r"rule must have acquisition\(scalarization\)"):
        ConfidencePolicy(task_policy.rule, ScalarizedRound(domain), "mixed")
    with pytest.raises(TypeError, match=r"rule must have num_tasks, task_argmax"):
        ConfidencePolicy(width_policy.rule, RevealedTaskRound(), "mixed")
    with pytest.raises(TypeError, match="round protocol"):
        ConfidencePolicy(width_policy.rule, "scalarized", "mixed")
    assert "WidthRule" in repr(width_policy) and "ScalarizedRound" in repr(width_policy)


def test_classes_names_and_recorded_keys_are_checked():
    domain = FiniteDomain(TinyProblem().points)
    policy = scalarized.mt_kb(make_rbf([0.25]), B, domain, RKHS, SIGMA)
    with pytest.raises(TypeError, match=r"protocol must be a round protocol instance, e\.g\. "):
        ConfidencePolicy(policy.rule, ScalarizedRound, "MT-KB")
    with pytest.raises(TypeError, match="rule must be a confidence rule instance"):
        ConfidencePolicy(WidthRule, policy.protocol, "MT-KB")
    with pytest.raises(TypeError, match="name must be a str"):
        ConfidencePolicy(policy.rule, policy.protocol, 3)
    with pytest.raises(TypeError, match="recorded must be a sequence of diagnostic names"):
        ConfidencePolicy(policy.rule, policy.protocol, "MT-KB", recorded="width")
    chosen = ConfidencePolicy(policy.rule, policy.protocol, "MT-KB", recorded=["width", "nope"])
    with pytest.raises(ValueError, match=r"recorded names \['nope'\] are not among"):
        chosen.diagnostics()


def test_a_rule_written_to_the_protocol_plays_every_round_of_its_shape():
    """A rule with ``update(X, Y, generator=None)`` (the documented contract) plays the
    scalarized round, which passes the generator by keyword."""
    problem = TinyProblem()
    domain = FiniteDomain(problem.points)
    named = scalarized.mt_kb(make_rbf([0.25]), B, domain, RKHS, SIGMA, ETA, DELTA)

    class Delegating:
        def __init__(self, rule):
            self.rule = rule

        def acquisition(self, *objective):
            return self.rule.acquisition(*objective)

        def update(self, X, Y, generator=None):
            self.rule.update(X, Y, generator=generator)

        def diagnostics(self):
            return self.rule.diagnostics()

    by_hand = ConfidencePolicy(Delegating(named.rule), ScalarizedRound(domain), "MT-KB")
    reference = scalarized.mt_kb(make_rbf([0.25]), B, domain, RKHS, SIGMA, ETA, DELTA)
    environment = ScalarizedEnvironment(problem)
    first, second = (run_policy(p, environment, 4, seed=2) for p in (reference, by_hand))
    assert [(r.x, r.y) for r in first] == [(r.x, r.y) for r in second]
