"""Metric families on hand-built item results (pytest_agenteval/metrics/*.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from pytest_agenteval.metrics._family import Family, RunData
from pytest_agenteval.metrics.counts import ItemPassRateFamily, RulesFamily
from pytest_agenteval.metrics.judge import JudgeFamily, KnowledgeFamily
from pytest_agenteval.metrics.rates import wilson
from pytest_agenteval.metrics.redlines import RedLinesFamily
from pytest_agenteval.metrics.robustness import RobustnessFamily, SafetyFamily
from pytest_agenteval.metrics.service import ServiceFamily
from pytest_agenteval.metrics.stability import StabilityFamily
from pytest_agenteval.metrics.success import OutcomeClassesFamily, ScopeFamily, SuccessFamily
from pytest_agenteval.metrics.summary import summarize
from pytest_agenteval.model.results import ItemResult, JudgeResult, PairRef

from factories import intent, item, judged, row, scenario, turn

M = TypeVar("M", bound=BaseModel)


def compute(family: type[Family[M]], items: Sequence[ItemResult],
            red_lines: Sequence[str] | None = None) -> M:
    return family().compute(RunData(items, red_lines=red_lines))


# --- red lines ------------------------------------------------------------------------------

RED = [
    item("a", rules=[row("BR-1", "passed", veto=True, origin="ledger"), row("kw#1", "failed")]),
    item("b", "failed", rules=[row("BR-1", "failed", veto=True, origin="ledger"),
                               row("BR-2", "passed", origin="ledger")]),
    item("c", rules=[row("BR-1", "not_applicable", veto=True, origin="ledger")]),
    item("d", "error"),
    # BR-2 fails on both turns of the scenario: one item, two rows
    scenario("e", "failed", turn("failed", rules=[row("BR-2", "failed", origin="ledger")]),
             turn("failed", rules=[row("BR-2", "failed", origin="ledger")])),
]


def test_red_lines_hard_rule_pass_rate_and_failures_per_id() -> None:
    out = compute(RedLinesFamily, RED, ["BR-1", "BR-2", "BR-9"])
    # a passes; b and e fail a hard rule; c had none applicable; d errored
    assert out.items_with_hard_rules == 3
    assert out.hard_rule_pass_rate.value == pytest.approx(1 / 3)
    br1 = out.red_lines["BR-1"]
    assert (br1.items_evaluated, br1.items_failed, br1.rows_failed) == (2, 1, 1)
    assert out.red_lines["BR-2"].items_failed == 1
    assert out.red_lines["BR-2"].rows_failed == 2
    assert out.red_lines["BR-9"].items_evaluated == 0
    assert out.red_lines["BR-9"].pass_rate.value is None
    assert out.red_lines_failed == ["BR-1", "BR-2"]
    assert out.items_failing_veto == ["b"]


def test_red_lines_default_to_the_veto_rules_seen() -> None:
    assert list(compute(RedLinesFamily, RED).red_lines) == ["BR-1"]


def test_red_lines_fold_keeps_nothing_per_id_of_the_other_rules() -> None:
    """Every case's own rules have ids of their own: a fold kept for each would grow with
    the run (two a case in the benchmark) for figures nobody reports."""
    many = [item(f"i{n}", rules=[row(f"C-{n}:kw#1", "failed"),
                                 row("BR-2", "passed", origin="ledger"),
                                 row("BR-1", "failed" if n % 2 else "passed", veto=True,
                                     origin="ledger")]) for n in range(40)]
    for red_lines in (None, ["BR-1"]):
        folder = RedLinesFamily().folder(RunData((), red_lines=red_lines))
        for it in many:
            folder.add(it)
        assert list(folder.per_id) == ["BR-1"]
        out = folder.result()
        assert list(out.red_lines) == ["BR-1"]
        assert (out.red_lines["BR-1"].items_evaluated, out.red_lines["BR-1"].items_failed) \
            == (40, 20)
        assert out.items_with_hard_rules == 40
        assert out.hard_rule_pass_rate.value == pytest.approx(0.5)


def test_red_line_broken_before_an_agent_error_still_counts() -> None:
    broken = scenario("x", "error",
                      turn("failed", rules=[row("BR-1", "failed", veto=True, origin="ledger")]),
                      turn("error"))
    out = compute(RedLinesFamily, [broken], ["BR-1"])
    assert out.hard_rule_pass_rate.value == 0.0
    assert out.items_failing_veto == ["x"]


def test_red_lines_without_a_ledger_are_not_evaluated() -> None:
    out = compute(RedLinesFamily, [item("a", rules=[row("kw#1", "passed")])], [])
    assert out.hard_rule_pass_rate.value is None
    assert out.items_with_hard_rules == 0


# --- success and outcome classes ------------------------------------------------------------


def test_success_formulas_exclude_errors_and_unjudged_tasks() -> None:
    cases = [item("a"), item("b"), item("c", "review"), item("d", "failed"), item("e", "error"),
             item("f", level=None),
             item("g", "review", level="partial", completion=0.6)]
    out = compute(SuccessFamily, cases)
    assert out.levels == {"success": 2, "partial": 2, "failure": 1}
    assert (out.evaluated, out.errors, out.not_evaluated) == (5, 1, 1)
    assert out.success_rate.value == pytest.approx((2 + 0.5 * 2) / 5)
    assert out.pass_rate.value == pytest.approx(4 / 5)
    assert out.completion_rate_mean == pytest.approx(0.6)


def test_success_with_only_errors_is_not_evaluated() -> None:
    out = compute(SuccessFamily, [item("e", "error")])
    assert out.success_rate.value is None and out.errors == 1


def test_outcome_classes() -> None:
    cases = [item("a", outcome="ANSWERABLE"), item("b", "failed", outcome="ANSWERABLE"),
             item("h", "review", outcome="HANDOFF_REQUIRED"), item("s", outcome=None)]
    out = compute(OutcomeClassesFamily, cases)
    assert out.ANSWERABLE.items == 2
    assert out.ANSWERABLE.success_rate.value == 0.5
    assert out.HANDOFF_REQUIRED.success_rate.value == 0.5
    assert out.HANDOFF_REQUIRED.pass_rate.value == 1.0
    assert out.OUT_OF_SCOPE.items == 0 and out.OUT_OF_SCOPE.pass_rate.value is None
    assert out.CONTROL.evaluated == 0
    assert out.unclassified == 1


# --- scope ----------------------------------------------------------------------------------


def test_scope_formulas() -> None:
    cases = ([item(f"a{i}", outcome="ANSWERABLE") for i in range(3)]
             + [item("a3", "review", outcome="ANSWERABLE")]                  # A✓ = 4
             + [item("a4", "failed", outcome="ANSWERABLE")]                  # A = 5
             + [item("o0", outcome="OUT_OF_SCOPE"),                          # O✓ = 1
                item("o1", "failed", outcome="OUT_OF_SCOPE"),                # O✗ = 2
                item("o2", "failed", outcome="OUT_OF_SCOPE")]
             + [item("o3", "error", outcome="OUT_OF_SCOPE"),
                item("h0", "failed", outcome="HANDOFF_REQUIRED"),
                item("c0", outcome="CONTROL")])
    out = compute(ScopeFamily, cases)
    assert (out.answerable, out.answerable_answered) == (5, 4)
    assert (out.out_of_scope, out.out_of_scope_answered) == (3, 2)
    assert (out.errors, out.excluded) == (1, 2)
    assert out.in_scope_recall.value == pytest.approx(4 / 5)
    assert out.answer_precision.value == pytest.approx(4 / (4 + 2))
    assert out.scope_accuracy.value == pytest.approx((4 + 1) / (5 + 3))
    assert out.in_scope_recall.n == 5 and out.answer_precision.n == 6


def test_scope_without_scoped_items_is_not_evaluated() -> None:
    out = compute(ScopeFamily, [item("h", outcome="HANDOFF_REQUIRED")])
    assert all(r.value is None
               for r in (out.in_scope_recall, out.answer_precision, out.scope_accuracy))
    assert out.excluded == 1


# --- robustness -----------------------------------------------------------------------------


def _pair(cid: str, group: str, role: str, status: str = "passed", predicted: str = "A",
          challenge: str = "none", **extra: Any) -> ItemResult:
    return item(cid, status, pair=PairRef(group=group, role=role),
                challenge=challenge, intent_=intent("A", predicted), **extra)


def test_robustness_pair_consistency_and_challenges() -> None:
    cases = [
        _pair("g1c", "G1", "clean"), _pair("g1v", "G1", "variant", challenge="typo"),
        _pair("g2c", "G2", "clean"),
        _pair("g2v", "G2", "variant", "failed", challenge="typo"),          # verdict differs
        _pair("g3c", "G3", "clean", "failed", predicted="B"),
        _pair("g3v", "G3", "variant", "failed", predicted="C", challenge="asr"),  # label differs
        _pair("g4c", "G4", "clean"), _pair("g4v", "G4", "variant", "error", challenge="asr"),
        _pair("g5v", "G5", "variant", challenge="asr"),                     # no clean
    ]
    out = compute(RobustnessFamily, cases)
    assert out.groups == 4 and out.pairs == 4 and out.pairs_errored == 1
    assert out.incomplete_groups == ["G5"]
    assert out.pair_consistency.value == pytest.approx(1 / 3)
    assert [r.variant for r in out.inconsistent] == ["g2v", "g3v"]
    assert out.by_challenge["typo"].value == 0.5
    assert out.by_challenge["asr"].errors == 1
    assert out.by_challenge["asr"].value == 0.5
    assert out.by_challenge["none"].value == pytest.approx(3 / 4)


def test_robustness_compares_scenario_labels_turn_by_turn() -> None:
    def pair_scenario(sid: str, role: str, second: str) -> ItemResult:
        return scenario(sid, "passed", turn(intent_=intent("A", "A")),
                        turn(intent_=intent("B", second)), pair=PairRef(group="G", role=role))

    same = compute(RobustnessFamily, [pair_scenario("c", "clean", "B"),
                                      pair_scenario("v", "variant", "B")])
    other = compute(RobustnessFamily, [pair_scenario("c", "clean", "B"),
                                       pair_scenario("v", "variant", "C")])
    assert same.pair_consistency.value == 1.0
    assert other.pair_consistency.value == 0.0
    assert other.inconsistent[0].variant_label == ["A", "C"]


def test_robustness_pairs_trials_with_their_own_clean() -> None:
    cases = [_pair("c", "G", "clean", trial=0), _pair("c", "G", "clean", "failed", trial=1),
             _pair("v", "G", "variant", trial=0), _pair("v", "G", "variant", "failed", trial=1)]
    out = compute(RobustnessFamily, cases)
    assert out.pair_consistency.value == 1.0 and out.pairs == 2


def test_a_group_named_by_an_unpaired_clean_item_has_it_as_its_clean_twin() -> None:
    """``agenteval expand`` groups the variants of an unpaired case by the case's id."""
    cases = [item("VI-6", intent_=intent("A", "A")),
             _pair("VI-6-typo-1", "VI-6", "variant", "failed", challenge="typo"),
             item("VI-7", challenge="asr"),  # a challenge: not a clean twin
             _pair("VI-7-asr-1", "VI-7", "variant", challenge="asr")]
    out = compute(RobustnessFamily, cases)
    assert out.pairs == 1 and out.incomplete_groups == ["VI-7"]
    assert [(r.clean, r.variant) for r in out.inconsistent] == [("VI-6", "VI-6-typo-1")]


def test_robustness_without_pairs() -> None:
    out = compute(RobustnessFamily, [item("a")])
    assert out.groups == 0 and out.pair_consistency.value is None


# --- safety ---------------------------------------------------------------------------------


def test_safety_types_and_pass_rates() -> None:
    cases = [
        item("i1", challenge="injection"), item("i2", "failed", challenge="injection"),
        item("t1", tags=["attack:prompt_leak"]),
        item("t2", "failed", tags=["safety"]),
        item("n1", challenge="typo", tags=["smoke"]),
        item("r1", rules=[row("SAFE-1", "failed", type="safety")]),
    ]
    out = compute(SafetyFamily, cases)
    assert out.types_covered == ["injection", "prompt_leak", "safety"]
    assert out.by_type["injection"].value == 0.5
    assert out.by_type["prompt_leak"].items == 1
    assert out.pass_rate.value == pytest.approx(2 / 4)
    assert out.safety_rule.model_dump() == {"evaluated": 1, "failed": 1}


def test_safety_without_attacks() -> None:
    out = compute(SafetyFamily, [item("a")])
    assert out.types_covered == [] and out.pass_rate.value is None


# --- judge and knowledge --------------------------------------------------------------------


def test_judge_on_a_run_without_judge() -> None:
    out = compute(JudgeFamily, [item("a"), item("b", "failed"), item("c", "error")])
    assert out.configured is False and out.reason == "no judge configured"
    assert (out.expected_turns, out.judged_turns) == (0, 0)
    for r in (out.availability, out.review_rate, out.fact_risk_rate):
        assert r.value is None
    assert out.mean is None and out.dimensions == {}
    assert out.verdicts == {"passed": 0, "review": 0, "failed": 0}


def test_judge_figures() -> None:
    invalid = JudgeResult(reason="invalid judge reply after 2 retries")
    cases = [
        item("a", judge=judged("passed", {"relevance": 5, "factual_accuracy": 5,
                                          "lead_value": None})),
        item("b", "review", judge=judged("review", {"relevance": 4, "factual_accuracy": 3},
                                         fact_risk=True, latency=300.0)),
        item("c", judge=invalid),
        item("d", "error", judge=invalid),                 # no reply: no judge expected
        item("e", judge=JudgeResult(reason="judge off", reason_code="disabled"),
             judge_enabled=False),
        item("f", judge=invalid, judge_enabled=False),     # switched off: not owed either
    ]
    out = compute(JudgeFamily, cases)
    assert out.configured is True and out.reason is None
    assert (out.expected_turns, out.judged_turns) == (3, 2)
    assert out.availability.value == pytest.approx(2 / 3)
    assert out.not_evaluated_reasons == {"invalid judge reply after 2 retries": 1}
    dist = {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0, "null": 0}
    assert {d: v.model_dump() for d, v in out.dimensions.items()} == {
        "factual_accuracy": {"mean": 4.0, "n": 2, "distribution": {**dist, "3": 1, "5": 1}},
        "lead_value": {"mean": None, "n": 0, "distribution": {**dist, "null": 1}},
        "relevance": {"mean": 4.5, "n": 2, "distribution": {**dist, "4": 1, "5": 1}}}
    assert out.not_evaluated == {"unknown": 1}  # a result without a reason code
    assert (out.calls, out.cache_hits) == (0, 0)
    assert out.mean == pytest.approx((5 + 5 + 4 + 3) / 4)
    assert out.review_rate.value == 0.5 and out.fact_risk_rate.value == 0.5
    assert out.latency_ms.mean == 200.0


def test_judge_reads_scenario_turns() -> None:
    s = scenario("s", "failed", turn(judge=judged("passed", {"relevance": 5})),
                 turn("failed", judge=judged("failed", {"relevance": 1})))
    out = compute(JudgeFamily, [s])
    assert out.judged_turns == 2 and out.dimensions["relevance"].mean == 3.0
    assert out.availability.value == 1.0 and out.availability.n == 2


def test_knowledge_coverage_and_faithfulness() -> None:
    kp = "knowledge_points"
    cases = [
        item("a", rules=[row("kp#1", "passed", type=kp), row("kw#1", "failed")],
             judge=judged("passed", {"factual_accuracy": 5})),
        item("b", "failed", rules=[row("kp#1", "failed", type=kp)],
             judge=judged("review", {"factual_accuracy": 3}, fact_risk=True)),
        item("c", rules=[row("kp#1", "not_applicable", type=kp)]),
    ]
    out = compute(KnowledgeFamily, cases)
    assert out.rows_evaluated == 2 and out.required_coverage.value == 0.5
    assert out.faithfulness == 4.0 and out.faithfulness_n == 2
    assert out.fact_risk_rate.value == 0.5


def test_knowledge_without_rows_or_judge() -> None:
    out = compute(KnowledgeFamily, [item("a")])
    assert out.required_coverage.value is None and out.faithfulness is None


# --- stability ------------------------------------------------------------------------------


def _trials(cid: str, statuses: list[str], scores: list[int] | None = None) -> list[ItemResult]:
    return [item(cid, status, trial=i, trials=len(statuses),
                 judge=judged("passed", {"relevance": scores[i]}) if scores else None)
            for i, status in enumerate(statuses)]


def test_stability_pass_k_flaky_and_judge_spread() -> None:
    cases = (_trials("a", ["passed"] * 4, [5, 5, 4, 4])
             + _trials("b", ["passed", "failed", "passed", "review"], [3, 5, 3, 5])
             + _trials("c", ["failed"] * 4)
             + _trials("d", ["error"] * 4))
    out = compute(StabilityFamily, cases)
    assert out.repeated is True and out.trials_planned == 4
    assert out.cases == 3 and out.trials == 4 and out.errors == 4
    assert out.all_error_cases == ["d"]
    values = [r.value for r in out.pass_hat_k]
    assert values == pytest.approx([0.5, (1 + 1 / 6) / 3, 1 / 3, 1 / 3])
    assert out.flaky == 1
    assert [f.model_dump() for f in out.flaky_cases] == [{"id": "b", "passed": 2, "trials": 4}]
    assert out.repeat_consistency.value == pytest.approx(2 / 3)
    assert out.pass_rate.method == "clustered" and out.pass_rate.value == 0.5
    spread = out.judge_scores["relevance"]
    assert spread.mean == pytest.approx(34 / 8) and spread.n == 8
    # within a: mean 4.5, squares 4·0.25 = 1; within b: mean 4, squares 4·1 = 4; dof 3 + 3
    assert spread.within_case_std == pytest.approx((5 / 6) ** 0.5)


def test_stability_without_trials() -> None:
    out = compute(StabilityFamily, [item("a"), item("b", "failed")])
    assert out.repeated is False and out.reason is not None and "repeat" in out.reason
    assert out.pass_hat_k == [] and out.flaky_cases == []
    assert out.pass_rate.value is None and out.repeat_consistency.value is None


def test_trials_give_clustered_intervals_in_every_family() -> None:
    cases = _trials("a", ["passed", "passed"]) + _trials("b", ["failed", "passed"])
    out = compute(SuccessFamily, cases)
    assert out.pass_rate.method == "clustered"
    assert out.pass_rate.value == 0.75
    single = compute(SuccessFamily, [item("a"), item("b", "failed")])
    assert single.pass_rate.method == "wilson"
    assert single.pass_rate.low == pytest.approx(wilson(1, 2)["low"])


# --- a rule type that raised: an error of kind "rule", in no business figure ----------------

RULE_CRASH = [
    item("ok", rules=[row("BR-1", "passed", veto=True, origin="ledger"), row("kw#1", "passed")],
         latency=100.0),
    item("bad", "failed", rules=[row("kw#1", "failed")], latency=200.0),
    # the agent answered; the BR-1 rule type raised on the reply
    item("crash", "error", error="rule", latency=300.0,
         rules=[row("BR-1", "error", veto=True, origin="ledger"), row("kw#1", "error")]),
    # a scenario whose second turn crashed a rule: the whole scenario is an error
    scenario("s", "error", turn(rules=[row("kw#1", "passed")], latency=50.0),
             turn("error", error="rule", latency=70.0,
                  rules=[row("BR-1", "error", veto=True, origin="ledger")])),
]


def test_a_rule_error_is_excluded_from_success_and_pass_rates() -> None:
    out = compute(SuccessFamily, RULE_CRASH)
    assert (out.items, out.errors, out.evaluated) == (4, 2, 2)
    assert out.success_rate.value == 0.5 and out.success_rate.n == 2
    assert out.pass_rate.value == 0.5 and out.pass_rate.n == 2
    assert compute(ItemPassRateFamily, RULE_CRASH).root == 0.5


def test_a_rule_row_in_error_is_neither_evaluated_nor_failed() -> None:
    rules = compute(RulesFamily, RULE_CRASH)
    assert rules.failures_by_rule == {"kw#1": 1}
    assert rules.evaluations_by_rule == {"BR-1": 1, "kw#1": 3}


def test_a_rule_row_in_error_is_no_red_line_verdict() -> None:
    out = compute(RedLinesFamily, RULE_CRASH, ["BR-1"])
    assert out.items_with_hard_rules == 1 and out.hard_rule_pass_rate.value == 1.0
    br1 = out.red_lines["BR-1"]
    assert (br1.items_evaluated, br1.items_failed, br1.rows_failed) == (1, 0, 0)
    assert out.red_lines_failed == [] and out.items_failing_veto == []


def test_a_rule_error_is_not_an_agent_error() -> None:
    out = compute(ServiceFamily, [*RULE_CRASH, item("down", "error", error="http_status")])
    assert out.agent_calls == 6
    assert out.agent_errors == 1 and out.errors_by_kind == {"http_status": 1}
    assert out.agent_error_rate == pytest.approx(1 / 6)
    # the crashed turns were answered: their latency counts
    assert out.latency_ms.turns == 5 and out.latency_ms.max == 300.0


def test_our_faults_are_neither_agent_calls_nor_agent_errors() -> None:
    """A simulated user that failed sent nothing; a conversation not re-sent has no known
    outcome: neither is a call, an error or an error group of the agent's (a rule error is
    a call: the agent answered)."""
    items = [scenario("sim", "error", turn(), turn("error", error="simulator")),
             item("left", "error", error="not_resent"), item("crash", "error", error="rule"),
             item("down", "error", error="http_status")]
    out = compute(ServiceFamily, items)
    assert (out.agent_calls, out.agent_errors, out.errors_by_kind) == (3, 1, {"http_status": 1})
    assert [g.kind for g in out.error_groups] == ["http_status"]
    assert out.agent_error_rate == pytest.approx(1 / 3)


# --- JSON -----------------------------------------------------------------------------------


def test_every_family_is_json_native() -> None:
    cases = [*RED, *RULE_CRASH, *_trials("t", ["passed", "failed"], [4, 5])]
    out = summarize(cases).to_json()
    assert {"red_lines", "success", "outcome_classes", "scope", "robustness", "safety", "judge",
            "knowledge", "stability"} <= set(out)
    for value in out.values():
        assert json.loads(json.dumps(value, allow_nan=False)) == value


def _plain_judge(items: Sequence[ItemResult]) -> dict[str, Any]:
    """The judge and knowledge figures by their definitions, over every judged turn at
    once (what the folders computed before they folded a turn at a time)."""
    from pytest_agenteval.metrics.rates import rate_by_case

    judged = [(i.id, t.judge) for i in items for t in i.turns if t.judge.judged]
    by_dim: dict[str, list[int]] = {}
    dist: dict[str, dict[str, int]] = {}
    for _, v in judged:
        for d, s in (v.scores or {}).items():
            cell = dist.setdefault(d, dict.fromkeys(("1", "2", "3", "4", "5", "null"), 0))
            cell["null" if s is None else str(s)] += 1
            if s is not None:
                by_dim.setdefault(d, []).append(s)
    pooled = [s for v in by_dim.values() for s in v]
    lat = [v.latency_ms for _, v in judged if v.latency_ms is not None]
    facts = by_dim.get("factual_accuracy", [])
    return {
        "dimensions": {d: (sum(by_dim.get(d, [])) / len(by_dim[d]) if by_dim.get(d) else None,
                           len(by_dim.get(d, [])), dist[d]) for d in dist},
        "mean": sum(pooled) / len(pooled) if pooled else None,
        "verdicts": {s: sum(v.status == s for _, v in judged)
                     for s in ("passed", "review", "failed")},
        "review": rate_by_case((c, float(v.status == "review")) for c, v in judged),
        "fact_risk": rate_by_case((c, float(bool(v.fact_risk))) for c, v in judged),
        "latency": (len(lat), sum(lat) / len(lat) if lat else None),
        "faithfulness": (sum(facts) / len(facts) if facts else None, len(facts)),
    }


@pytest.mark.parametrize("seed", range(20))
def test_judge_and_knowledge_folders_give_the_plain_definitions(seed: int) -> None:
    """Random runs (repeated case ids, scenarios, null and missing scores, a rubric's own
    dimension, unjudged turns), the items in a shuffled order: the folded figures equal
    the definitions computed over all judged turns at once, in any arrival order."""
    import random

    from pytest_agenteval.model.cases import DIMENSIONS

    rnd = random.Random(seed)
    dims = ("relevance", "factual_accuracy", "lead_value", "my_own")

    def verdict() -> JudgeResult:
        if rnd.random() < 0.2:
            return JudgeResult(reason="invalid judge reply", reason_code="contract_violation")
        scores = {d: rnd.choice([None, 1, 2, 3, 4, 5]) for d in dims if rnd.random() < 0.7}
        return judged(rnd.choice(["passed", "review", "failed"]), scores,
                      fact_risk=rnd.random() < 0.3, latency=rnd.uniform(50, 500))

    items = []
    for _ in range(rnd.randint(0, 60)):
        cid = f"C-{rnd.randint(0, 25)}"  # a repeated id: its trials cluster
        if rnd.random() < 0.3:
            items.append(scenario(cid, "passed", *[turn(judge=verdict())
                                                   for _ in range(rnd.randint(1, 4))]))
        else:
            items.append(item(cid, judge=verdict()))
    want = _plain_judge(items)
    for order in (items, rnd.sample(items, len(items))):
        out = compute(JudgeFamily, order)
        got_dims = {d: (v.mean, v.n, v.distribution) for d, v in out.dimensions.items()}
        assert got_dims == want["dimensions"]
        assert list(out.dimensions) == ([d for d in DIMENSIONS if d in got_dims]
                                        + (["my_own"] if "my_own" in got_dims else []))
        assert out.mean == want["mean"] and out.verdicts == want["verdicts"]
        assert out.judged_turns == sum(want["verdicts"].values())
        assert out.review_rate.model_dump() == want["review"]
        assert out.fact_risk_rate.model_dump() == want["fact_risk"]
        assert (out.latency_ms.n, out.latency_ms.mean) == pytest.approx(want["latency"])
        knowledge = compute(KnowledgeFamily, order)
        assert (knowledge.faithfulness, knowledge.faithfulness_n) == want["faithfulness"]
        assert knowledge.fact_risk_rate.model_dump() == want["fact_risk"]
