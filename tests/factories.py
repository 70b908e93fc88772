"""Hand-built item results for unit tests of metrics, gates and reports.

``item("A", "failed", rules=[row("BR-1", "failed", veto=True, origin="ledger")])``
builds a one-turn case; ``scenario("S", "failed", turn(...), turn(...))`` a
scenario whose turns are numbered in order. Every field not given takes the
value a plain passing case has.

Errors follow the pipeline: ``turn("error")`` is an agent error (kind
``timeout`` unless ``error=`` names another kind) with no reply and no intent
prediction; ``turn("error", error="rule")`` is a turn the agent answered but a
rule type raised on (the reply and the intent stay, the crashed row has status
``error``).
"""

from __future__ import annotations

from typing import Any

from pytest_agenteval.model.results import (
    AgentError,
    IntentResult,
    ItemResult,
    JudgeResult,
    RuleRow,
    TaskResult,
    TurnResult,
)

LEVEL = {"passed": "success", "review": "partial", "failed": "failure", "error": None}


def row(rule_id: str, status: str = "passed", *, veto: bool = False, origin: str = "case",
        type: str = "keyword_match", **extra: Any) -> RuleRow:
    return RuleRow(rule_id=rule_id, type=type, status=status, veto=veto, origin=origin, **extra)


def intent(expected: str | None = "A", predicted: str | None = "A") -> IntentResult:
    correct = None if expected is None or predicted is None else expected == predicted
    return IntentResult(expected=expected, predicted=predicted, correct=correct,
                        evaluated=predicted is not None)


#: the intent of a turn the agent did not answer (as ``pipeline.error_turn`` makes it)
NO_ANSWER = IntentResult(expected="A", reason="the agent did not answer",
                         reason_code="agent_error")


def judged(status: str, scores: dict[str, int | None], fact_risk: bool = False,
           latency: float = 100.0) -> JudgeResult:
    return JudgeResult(status=status, scores=scores, verdict=status,
                       fact_risk=fact_risk, latency_ms=latency)


def turn(status: str = "passed", *, index: int = 0, rules: list[RuleRow] | None = None,
         intent_: IntentResult | None = None, judge: JudgeResult | None = None,
         latency: float = 10.0, error: str | None = None, **extra: Any) -> TurnResult:
    """One turn; ``error`` is the error kind (``timeout`` by default on an ``error`` turn)."""
    err = None
    if status == "error" or error:
        err = AgentError(kind=error or "timeout", detail="")
    answered = err is None or err.kind == "rule"
    fields: dict[str, Any] = {"index": index, "input": "hi", "reply": "ok" if answered else None,
                              "status": status, "error": err, "latency_ms": latency,
                              "rules": rules or [],
                              "intent": intent_ or (intent() if answered else NO_ANSWER)}
    if judge is not None:
        fields["judge"] = judge
    return TurnResult(**fields, **extra)


def item(cid: str, status: str = "passed", *, kind: str = "case",
         rules: list[RuleRow] | None = None, intent_: IntentResult | None = None,
         judge: JudgeResult | None = None, turns: list[TurnResult] | None = None,
         latency: float = 10.0, error: str | None = None, level: str | None = "auto",
         completion: float | None = None, **extra: Any) -> ItemResult:
    """One item; ``rules``, ``intent_``, ``judge``, ``latency`` and ``error`` go to its only turn.

    ``level`` is the task success level (``"auto"``: the one the verdict gives);
    any other keyword is a field of :class:`ItemResult` (``trial``, ``pair``, …).
    """
    if turns is None:
        turns = [turn(status, rules=rules, intent_=intent_, judge=judge, latency=latency,
                      error=error)]
    success = LEVEL[status] if level == "auto" else level
    task = TaskResult(success_level=success, completion_rate=completion,
                      status="evaluated" if success else "not_evaluated")
    fields: dict[str, Any] = {"id": cid, "kind": kind, "status": status, "priority": "P1",
                              "review_status": "reviewed", "turns": turns,
                              "turns_planned": len(turns), "task": task}
    fields.update(extra)
    return ItemResult(**fields)


def scenario(sid: str, status: str, *turns: TurnResult, **extra: Any) -> ItemResult:
    """A scenario of ``turns``, re-indexed 0, 1, … in the order given."""
    numbered = [t.model_copy(update={"index": i}) for i, t in enumerate(turns)]
    return item(sid, status, kind="scenario", turns=numbered, **extra)
