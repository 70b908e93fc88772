"""Metric families on hand-built case records (pytest_agenteval/metrics/families.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_agenteval.metrics.families import (
    judge,
    knowledge,
    outcome_classes,
    red_lines,
    robustness,
    safety,
    scope,
    stability,
    success,
)
from pytest_agenteval.metrics.rates import wilson

LEVEL = {"passed": "success", "review": "partial", "failed": "failure", "error": None}
NO_JUDGE = {"status": "not_evaluated", "scores": None, "verdict": None,
            "reason": "no judge configured"}


def _row(rule_id: str, status: str, *, veto: bool = False, origin: str = "case",
         rtype: str = "keyword_match") -> dict[str, Any]:
    return {"rule_id": rule_id, "type": rtype, "status": status, "veto": veto,
            "origin": origin, "reason": "", "evidence": ""}


def _rec(cid: str, status: str = "passed", **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": cid, "kind": "case", "status": status, "priority": "P1", "challenge": "none",
        "pair": None, "outcome": None, "tags": [], "review_status": "reviewed", "rules": [],
        "intent": {"expected": "A", "predicted": "A", "correct": True},
        "task": {"completion_rate": None, "success_level": LEVEL[status]},
        "judge": dict(NO_JUDGE), "latency_ms": 10.0,
        "error": {"kind": "timeout"} if status == "error" else None,
    }
    record.update(extra)
    return record


def _judged(status: str, scores: dict[str, int | None], fact_risk: bool = False,
            latency: float = 100.0) -> dict[str, Any]:
    return {"status": status, "scores": scores, "verdict": status, "reason": "",
            "fact_risk": fact_risk, "latency_ms": latency}


def _value(rate: dict[str, Any]) -> float | None:
    value: float | None = rate["value"]
    return value


# --- red lines ------------------------------------------------------------------------------

RED = [
    _rec("a", rules=[_row("BR-1", "passed", veto=True, origin="ledger"),
                     _row("kw#1", "failed")]),
    _rec("b", "failed", rules=[_row("BR-1", "failed", veto=True, origin="ledger"),
                               _row("BR-2", "passed", origin="ledger")]),
    _rec("c", rules=[_row("BR-1", "not_applicable", veto=True, origin="ledger")]),
    _rec("d", "error", rules=[]),
    _rec("e", "failed", kind="scenario",
         rules=[_row("BR-2", "failed", origin="ledger"), _row("BR-2", "failed", origin="ledger")]),
]


def test_red_lines_hard_rule_pass_rate_and_failures_per_id() -> None:
    out = red_lines(RED, ["BR-1", "BR-2", "BR-9"])
    # a passes; b and e fail a hard rule; c had none applicable; d errored
    assert out["items_with_hard_rules"] == 3
    assert _value(out["hard_rule_pass_rate"]) == pytest.approx(1 / 3)
    assert out["red_lines"]["BR-1"] == {"items_evaluated": 2, "items_failed": 1,
                                        "rows_failed": 1,
                                        "pass_rate": out["red_lines"]["BR-1"]["pass_rate"]}
    assert out["red_lines"]["BR-2"]["items_failed"] == 1
    assert out["red_lines"]["BR-2"]["rows_failed"] == 2
    assert out["red_lines"]["BR-9"]["items_evaluated"] == 0
    assert out["red_lines"]["BR-9"]["pass_rate"]["value"] is None
    assert out["red_lines_failed"] == ["BR-1", "BR-2"]
    assert out["items_failing_veto"] == ["b"]


def test_red_lines_default_to_the_veto_rules_seen() -> None:
    assert list(red_lines(RED)["red_lines"]) == ["BR-1"]


def test_red_line_broken_before_an_agent_error_still_counts() -> None:
    rec = _rec("x", "error", rules=[_row("BR-1", "failed", veto=True, origin="ledger")])
    out = red_lines([rec], ["BR-1"])
    assert _value(out["hard_rule_pass_rate"]) == 0.0
    assert out["items_failing_veto"] == ["x"]


def test_red_lines_without_a_ledger_are_not_evaluated() -> None:
    out = red_lines([_rec("a", rules=[_row("kw#1", "passed")])], [])
    assert out["hard_rule_pass_rate"]["value"] is None
    assert out["items_with_hard_rules"] == 0


# --- success and outcome classes ------------------------------------------------------------


def test_success_formulas_exclude_errors_and_unjudged_tasks() -> None:
    cases = [_rec("a"), _rec("b"), _rec("c", "review"), _rec("d", "failed"), _rec("e", "error"),
             _rec("f", task={"completion_rate": None, "success_level": None}),
             _rec("g", "review", task={"completion_rate": 0.6, "success_level": "partial"})]
    out = success(cases)
    assert out["levels"] == {"success": 2, "partial": 2, "failure": 1}
    assert (out["evaluated"], out["errors"], out["not_evaluated"]) == (5, 1, 1)
    assert _value(out["success_rate"]) == pytest.approx((2 + 0.5 * 2) / 5)
    assert _value(out["pass_rate"]) == pytest.approx(4 / 5)
    assert out["completion_rate_mean"] == pytest.approx(0.6)


def test_success_with_only_errors_is_not_evaluated() -> None:
    out = success([_rec("e", "error")])
    assert out["success_rate"]["value"] is None and out["errors"] == 1


def test_outcome_classes() -> None:
    cases = [_rec("a", outcome="ANSWERABLE"), _rec("b", "failed", outcome="ANSWERABLE"),
             _rec("h", "review", outcome="HANDOFF_REQUIRED"), _rec("s", outcome=None)]
    out = outcome_classes(cases)
    assert out["ANSWERABLE"]["items"] == 2
    assert _value(out["ANSWERABLE"]["success_rate"]) == 0.5
    assert _value(out["HANDOFF_REQUIRED"]["success_rate"]) == 0.5
    assert _value(out["HANDOFF_REQUIRED"]["pass_rate"]) == 1.0
    assert out["OUT_OF_SCOPE"]["items"] == 0 and out["OUT_OF_SCOPE"]["pass_rate"]["value"] is None
    assert out["CONTROL"]["evaluated"] == 0
    assert out["unclassified"] == 1


# --- scope ----------------------------------------------------------------------------------


def test_scope_formulas() -> None:
    cases = ([_rec(f"a{i}", outcome="ANSWERABLE") for i in range(3)]
             + [_rec("a3", "review", outcome="ANSWERABLE")]                   # A✓ = 4
             + [_rec("a4", "failed", outcome="ANSWERABLE")]                   # A = 5
             + [_rec("o0", outcome="OUT_OF_SCOPE"),                          # O✓ = 1
                _rec("o1", "failed", outcome="OUT_OF_SCOPE"),                # O✗ = 2
                _rec("o2", "failed", outcome="OUT_OF_SCOPE")]
             + [_rec("o3", "error", outcome="OUT_OF_SCOPE"),
                _rec("h0", "failed", outcome="HANDOFF_REQUIRED"),
                _rec("c0", outcome="CONTROL")])
    out = scope(cases)
    assert (out["answerable"], out["answerable_answered"]) == (5, 4)
    assert (out["out_of_scope"], out["out_of_scope_answered"]) == (3, 2)
    assert (out["errors"], out["excluded"]) == (1, 2)
    assert _value(out["in_scope_recall"]) == pytest.approx(4 / 5)
    assert _value(out["answer_precision"]) == pytest.approx(4 / (4 + 2))
    assert _value(out["scope_accuracy"]) == pytest.approx((4 + 1) / (5 + 3))
    assert out["in_scope_recall"]["n"] == 5 and out["answer_precision"]["n"] == 6


def test_scope_without_scoped_items_is_not_evaluated() -> None:
    out = scope([_rec("h", outcome="HANDOFF_REQUIRED")])
    assert all(out[k]["value"] is None
               for k in ("in_scope_recall", "answer_precision", "scope_accuracy"))
    assert out["excluded"] == 1


# --- robustness -----------------------------------------------------------------------------


def _pair(cid: str, group: str, role: str, status: str = "passed", predicted: str = "A",
          challenge: str = "none") -> dict[str, Any]:
    return _rec(cid, status, pair={"group": group, "role": role}, challenge=challenge,
                intent={"expected": "A", "predicted": predicted, "correct": predicted == "A"})


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
    out = robustness(cases)
    assert out["groups"] == 4 and out["pairs"] == 4 and out["pairs_errored"] == 1
    assert out["incomplete_groups"] == ["G5"]
    assert _value(out["pair_consistency"]) == pytest.approx(1 / 3)
    assert [r["variant"] for r in out["inconsistent"]] == ["g2v", "g3v"]
    assert _value(out["by_challenge"]["typo"]) == 0.5
    assert out["by_challenge"]["asr"]["errors"] == 1
    assert _value(out["by_challenge"]["asr"]) == 0.5
    assert _value(out["by_challenge"]["none"]) == pytest.approx(3 / 4)


def test_robustness_pairs_trials_with_their_own_clean() -> None:
    cases = [_pair("c", "G", "clean"), _pair("c", "G", "clean", "failed"),
             _pair("v", "G", "variant"), _pair("v", "G", "variant", "failed")]
    for case, trial in zip(cases, (0, 1, 0, 1), strict=True):
        case["trial"] = trial
    out = robustness(cases)
    assert _value(out["pair_consistency"]) == 1.0 and out["pairs"] == 2


def test_robustness_without_pairs() -> None:
    out = robustness([_rec("a")])
    assert out["groups"] == 0 and out["pair_consistency"]["value"] is None


# --- safety ---------------------------------------------------------------------------------


def test_safety_types_and_pass_rates() -> None:
    cases = [
        _rec("i1", challenge="injection"), _rec("i2", "failed", challenge="injection"),
        _rec("t1", tags=["attack:prompt_leak"]),
        _rec("t2", "failed", tags=["safety"]),
        _rec("n1", challenge="typo", tags=["smoke"]),
        _rec("r1", rules=[_row("SAFE-1", "failed", rtype="safety")]),
    ]
    out = safety(cases)
    assert out["types_covered"] == ["injection", "prompt_leak", "safety"]
    assert _value(out["by_type"]["injection"]) == 0.5
    assert out["by_type"]["prompt_leak"]["items"] == 1
    assert _value(out["pass_rate"]) == pytest.approx(2 / 4)
    assert out["safety_rule"] == {"evaluated": 1, "failed": 1}


def test_safety_without_attacks() -> None:
    out = safety([_rec("a")])
    assert out["types_covered"] == [] and out["pass_rate"]["value"] is None


# --- judge and knowledge --------------------------------------------------------------------


def test_judge_on_a_run_without_judge() -> None:
    out = judge([_rec("a"), _rec("b", "failed"), _rec("c", "error")])
    assert out["configured"] is False and out["reason"] == "no judge configured"
    assert (out["expected_turns"], out["judged_turns"]) == (0, 0)
    for key in ("availability", "review_rate", "fact_risk_rate"):
        assert out[key]["value"] is None
    assert out["mean"] is None and out["dimensions"] == {}
    assert out["verdicts"] == {"passed": 0, "review": 0, "failed": 0}


def test_judge_figures() -> None:
    invalid = {"status": "not_evaluated", "scores": None, "verdict": None,
               "reason": "invalid judge reply after 2 retries"}
    cases = [
        _rec("a", judge=_judged("passed", {"relevance": 5, "factual_accuracy": 5,
                                           "lead_value": None})),
        _rec("b", "review", judge=_judged("review", {"relevance": 4, "factual_accuracy": 3},
                                          fact_risk=True, latency=300.0)),
        _rec("c", judge=invalid),
        _rec("d", "error", judge=invalid),                 # no reply: no judge expected
        _rec("e", judge=dict(NO_JUDGE), judge_enabled=False),
    ]
    out = judge(cases)
    assert out["configured"] is True and out["reason"] is None
    assert (out["expected_turns"], out["judged_turns"]) == (3, 2)
    assert _value(out["availability"]) == pytest.approx(2 / 3)
    assert out["not_evaluated_reasons"] == {"invalid judge reply after 2 retries": 1}
    assert out["dimensions"] == {"factual_accuracy": {"mean": 4.0, "n": 2},
                                 "relevance": {"mean": 4.5, "n": 2}}
    assert out["mean"] == pytest.approx((5 + 5 + 4 + 3) / 4)
    assert _value(out["review_rate"]) == 0.5 and _value(out["fact_risk_rate"]) == 0.5
    assert out["latency_ms"]["mean"] == 200.0


def test_judge_reads_scenario_turns() -> None:
    turns = [{"index": 0, "status": "passed", "judge": _judged("passed", {"relevance": 5})},
             {"index": 1, "status": "passed", "judge": _judged("failed", {"relevance": 1})}]
    out = judge([_rec("s", "failed", kind="scenario", turns=turns)])
    assert out["judged_turns"] == 2 and out["dimensions"]["relevance"]["mean"] == 3.0
    assert _value(out["availability"]) == 1.0 and out["availability"]["n"] == 2


def test_knowledge_coverage_and_faithfulness() -> None:
    kp = "knowledge_points"
    cases = [
        _rec("a", rules=[_row("kp#1", "passed", rtype=kp), _row("kw#1", "failed")],
             judge=_judged("passed", {"factual_accuracy": 5})),
        _rec("b", "failed", rules=[_row("kp#1", "failed", rtype=kp)],
             judge=_judged("review", {"factual_accuracy": 3}, fact_risk=True)),
        _rec("c", rules=[_row("kp#1", "not_applicable", rtype=kp)]),
    ]
    out = knowledge(cases)
    assert out["rows_evaluated"] == 2 and _value(out["required_coverage"]) == 0.5
    assert out["faithfulness"] == 4.0 and out["faithfulness_n"] == 2
    assert _value(out["fact_risk_rate"]) == 0.5


def test_knowledge_without_rows_or_judge() -> None:
    out = knowledge([_rec("a")])
    assert out["required_coverage"]["value"] is None and out["faithfulness"] is None


# --- stability ------------------------------------------------------------------------------


def _trials(cid: str, statuses: list[str], scores: list[int] | None = None) -> list[dict[str, Any]]:
    out = []
    for i, status in enumerate(statuses):
        verdict = _judged("passed", {"relevance": scores[i]}) if scores else dict(NO_JUDGE)
        out.append(_rec(cid, status, trial=i, trials=len(statuses), judge=verdict))
    return out


def test_stability_pass_k_flaky_and_judge_spread() -> None:
    cases = (_trials("a", ["passed"] * 4, [5, 5, 4, 4])
             + _trials("b", ["passed", "failed", "passed", "review"], [3, 5, 3, 5])
             + _trials("c", ["failed"] * 4)
             + _trials("d", ["error"] * 4))
    out = stability(cases)
    assert out["repeated"] is True and out["trials_planned"] == 4
    assert out["cases"] == 3 and out["trials"] == 4 and out["errors"] == 4
    assert out["all_error_cases"] == ["d"]
    values = [row["value"] for row in out["pass_hat_k"]]
    assert values == pytest.approx([0.5, (1 + 1 / 6) / 3, 1 / 3, 1 / 3])
    assert out["flaky"] == 1
    assert out["flaky_cases"] == [{"id": "b", "passed": 2, "trials": 4}]
    assert out["repeat_consistency"]["value"] == pytest.approx(2 / 3)
    assert out["pass_rate"]["method"] == "clustered" and out["pass_rate"]["value"] == 0.5
    spread = out["judge_scores"]["relevance"]
    assert spread["mean"] == pytest.approx(34 / 8) and spread["n"] == 8
    # within a: mean 4.5, squares 4·0.25 = 1; within b: mean 4, squares 4·1 = 4; dof 3 + 3
    assert spread["within_case_std"] == pytest.approx((5 / 6) ** 0.5)


def test_stability_without_trials() -> None:
    out = stability([_rec("a"), _rec("b", "failed")])
    assert out["repeated"] is False and "repeat" in out["reason"]
    assert out["pass_hat_k"] == [] and out["flaky_cases"] == []
    assert out["pass_rate"]["value"] is None and out["repeat_consistency"]["value"] is None


def test_trials_give_clustered_intervals_in_every_family() -> None:
    cases = _trials("a", ["passed", "passed"]) + _trials("b", ["failed", "passed"])
    out = success(cases)
    assert out["pass_rate"]["method"] == "clustered"
    assert _value(out["pass_rate"]) == 0.75
    single = success([_rec("a"), _rec("b", "failed")])
    assert single["pass_rate"]["method"] == "wilson"
    assert single["pass_rate"]["low"] == pytest.approx(wilson(1, 2)["low"])


# --- JSON -----------------------------------------------------------------------------------


def test_every_family_is_json_native() -> None:
    cases = RED + _trials("t", ["passed", "failed"], [4, 5])
    for out in (red_lines(cases), success(cases), outcome_classes(cases), scope(cases),
                robustness(cases), safety(cases), judge(cases), knowledge(cases),
                stability(cases)):
        assert json.loads(json.dumps(out, allow_nan=False)) == out
