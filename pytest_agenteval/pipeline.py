"""The per-item pipeline: conversation → rules → intent → verdict.

Runs on the engine's event loop. Produces a JSON-native result dict (the
``cases[]`` record of SPEC 7), so it can travel through xdist unchanged.
"""

from __future__ import annotations

import time
from typing import Any

from .adapters.base import Adapter, AgentError, AgentReply, TurnRequest
from .plan import ItemPlan, TurnPlan
from .rules._registry import TurnView
from .rules.evaluate import combine
from .taxonomy import Taxonomy

__all__ = ["STATUS_ORDER", "run_plan", "worst"]

#: Case verdict precedence (SPEC 2): error > failed > review > passed.
STATUS_ORDER = {"passed": 0, "review": 1, "failed": 2, "error": 3}


def worst(statuses: list[str]) -> str:
    return max(statuses, key=STATUS_ORDER.__getitem__, default="passed")


async def run_plan(plan: ItemPlan, adapter: Adapter, taxonomy: Taxonomy) -> dict[str, Any]:
    """Run every turn in order on one conversation and judge each reply."""
    history = [dict(h) for h in plan.history]
    conversation_id: str | None = None
    turns: list[dict[str, Any]] = []
    for index, turn in enumerate(plan.turns):
        request = TurnRequest(turn.input, list(history), turn.knowledge, turn.extra,
                              conversation_id, plan.id, index)
        started = time.perf_counter()
        try:
            reply = await adapter.send(request)
        except AgentError as exc:
            latency = (time.perf_counter() - started) * 1000
            turns.append(_error_turn(index, turn, exc, latency))
            break
        latency = (time.perf_counter() - started) * 1000
        turns.append(_judge_turn(index, turn, request, reply, latency, taxonomy))
        conversation_id = reply.conversation_id or conversation_id
        history += [{"role": "user", "content": turn.input},
                    {"role": "assistant", "content": reply.output}]
    return _item_result(plan, turns)


def _error_turn(index: int, turn: TurnPlan, exc: AgentError, latency: float) -> dict[str, Any]:
    return {
        "index": index,
        "input": turn.input,
        "reply": None,
        "status": "error",
        "error": {"kind": exc.kind, "detail": exc.detail, "status_code": exc.status_code},
        "latency_ms": round(latency, 3),
        "rules": [],
        "intent": _intent_not_evaluated(turn, "the agent did not answer"),
        "rule_logic": None,
        "failure_reasons": [],
        "conversation_id": None,
        "expected": _expected(turn),
    }


def _expected(turn: TurnPlan) -> dict[str, Any]:
    exp = turn.expected
    return {"behavior": exp.behavior, "outcome": exp.outcome, "intent_code": exp.intent_code,
            "assertions": dict(exp.assertions)}


def _intent_not_evaluated(turn: TurnPlan, why: str) -> dict[str, Any]:
    exp = turn.expected
    return {"expected": exp.behavior, "predicted": None, "correct": None,
            "code_expected": exp.intent_code, "code_returned": None, "name_returned": None,
            "code_correct": None, "evaluated": False, "reason": why}


def judge_intent(turn: TurnPlan, reply: AgentReply, taxonomy: Taxonomy) -> dict[str, Any]:
    """L2: compare the returned intent (mapped to a label) with the expectation."""
    exp = turn.expected
    predicted = taxonomy.predict(reply.intent_code, reply.intent_name)
    correct = None
    if exp.behavior is not None and predicted is not None:
        correct = predicted == exp.behavior
    code_correct = None
    if exp.intent_code is not None:
        code_correct = (reply.intent_code is not None
                        and str(reply.intent_code).strip() == str(exp.intent_code).strip())
    reason = "" if predicted is not None else "the API returned no intent"
    return {"expected": exp.behavior, "predicted": predicted, "correct": correct,
            "code_expected": exp.intent_code, "code_returned": reply.intent_code,
            "name_returned": reply.intent_name, "code_correct": code_correct,
            "evaluated": predicted is not None or code_correct is not None, "reason": reason}


def _judge_turn(index: int, turn: TurnPlan, request: TurnRequest, reply: AgentReply,
                latency: float, taxonomy: Taxonomy) -> dict[str, Any]:
    view = TurnView(
        input=turn.input, reply=reply.output, history=request.history,
        knowledge=turn.knowledge,
        knowledge_points=[kp.model_dump() for kp in turn.expected.knowledge_points],
        assertions=dict(turn.expected.assertions), intent_code=reply.intent_code,
        intent_name=reply.intent_name, latency_ms=latency,
    )
    rows = [r.run(view) for r in turn.rules]
    explicit = combine([r for r in rows if r["origin"] == "case"], turn.rule_logic,
                       turn.rule_pass_threshold)
    intent = judge_intent(turn, reply, taxonomy)
    reasons = []
    if not explicit.passed:
        reasons.append(f"explicit rules ({explicit.reason})")
    # ledger rules are hard constraints whatever rule_logic says; a veto one is a red line
    reasons += [f"{'red line' if r['veto'] else 'ledger rule'} {r['rule_id']} failed"
                for r in rows if r["origin"] == "ledger" and r["status"] == "failed"]
    if intent["correct"] is False:
        reasons.append(f"intent {intent['predicted']} (expected {intent['expected']})")
    if intent["code_correct"] is False:
        reasons.append(f"intent code {intent['code_returned']} "
                       f"(expected {intent['code_expected']})")
    return {
        "index": index,
        "input": turn.input,
        "reply": reply.output,
        "status": "failed" if reasons else "passed",
        "failure_reasons": reasons,
        "error": None,
        "latency_ms": round(latency, 3),
        "rules": rows,
        "rule_logic": {"logic": turn.rule_logic, "passed": explicit.passed,
                       "score": explicit.score, "reason": explicit.reason},
        "intent": intent,
        "conversation_id": reply.conversation_id,
        "expected": _expected(turn),
    }


def _item_result(plan: ItemPlan, turns: list[dict[str, Any]]) -> dict[str, Any]:
    status = worst([t["status"] for t in turns])
    error = next((t["error"] for t in turns if t["error"]), None)
    latency = sum(t["latency_ms"] for t in turns)
    first = plan.turns[0]
    result: dict[str, Any] = {
        "id": plan.id,
        "kind": plan.kind,
        "status": status,
        **plan.meta,
        "behavior": first.expected.behavior if plan.kind == "case" else None,
        "error": error,
        "latency_ms": round(latency, 3),
        "turn_latency_ms": [t["latency_ms"] for t in turns],
        "judge": {"status": "not_evaluated", "scores": None, "verdict": None,
                  "reason": "no judge configured"},
        "task": _task(plan, status),
    }
    if plan.kind == "case":
        only = turns[0]
        result.update(rules=only["rules"], intent=only["intent"], rule_logic=only["rule_logic"],
                      failure_reasons=only.get("failure_reasons", []),
                      request={"input": first.input, "history": list(plan.history),
                               "knowledge": first.knowledge, "extra": first.extra},
                      response={"output": only["reply"],
                                "intent_code": only["intent"]["code_returned"],
                                "intent_name": only["intent"]["name_returned"],
                                "conversation_id": only.get("conversation_id")})
    else:
        result.update(
            rules=[{**r, "turn": t["index"]} for t in turns for r in t["rules"]],
            intent=None,
            failure_reasons=[f"turn {t['index'] + 1}: {why}" for t in turns
                             for why in t.get("failure_reasons", [])],
            turns=turns,
            turns_planned=len(plan.turns),
        )
    return result


def _task(plan: ItemPlan, status: str) -> dict[str, Any]:
    """Success level (SPEC 6). Items with a task wait for the task-completion layer."""
    if plan.meta.get("task"):
        return {"completion_rate": None, "success_level": None, "status": "not_evaluated",
                "reason": "task completion is judged by the task-completion layer"}
    level = {"passed": "success", "review": "partial", "failed": "failure"}.get(status)
    return {"completion_rate": None, "success_level": level,
            "status": "evaluated" if level else "not_evaluated",
            "reason": "no task: success level follows the case verdict" if level
            else "error cases are excluded"}


def start_failure(plan: ItemPlan, detail: str) -> dict[str, Any]:
    """The result of an item whose adapter could not even be started."""
    turn = plan.turns[0]
    exc = AgentError("connection", detail)
    return _item_result(plan, [_error_turn(0, turn, exc, 0.0)])
