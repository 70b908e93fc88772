"""Run summary: verdict counts, failures per rule id, intent accuracy, agent service figures.

Every figure is computed from the JSON case records only, so it is the same
whether the records came from one process or from xdist workers. A figure
with no defined denominator is ``None`` ("not evaluated"), never 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["percentile", "summarize"]

STATUSES = ("passed", "failed", "review", "error")


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100), linear between closest ranks; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _turns(case: dict[str, Any]) -> list[dict[str, Any]]:
    return case.get("turns") or [{"latency_ms": case.get("latency_ms"), "error": case.get("error"),
                                  "intent": case.get("intent"), "status": case["status"]}]


def _latency(cases: Iterable[dict[str, Any]]) -> dict[str, Any]:
    values = [t["latency_ms"] for c in cases for t in _turns(c)
              if t.get("latency_ms") is not None and not t.get("error")]
    out: dict[str, Any] = {"turns": len(values)}
    out["mean"] = sum(values) / len(values) if values else None
    for name, q in (("p50", 50), ("p90", 90), ("p95", 95)):
        out[name] = percentile(values, q)
    out["max"] = max(values) if values else None
    return out


def _service(cases: list[dict[str, Any]]) -> dict[str, Any]:
    turns = [t for c in cases for t in _turns(c) if "status" in t]
    errors = Counter(t["error"]["kind"] for t in turns if t.get("error"))
    calls = len(turns)
    return {
        "agent_calls": calls,
        "agent_errors": sum(errors.values()),
        "agent_success_rate": _ratio(calls - sum(errors.values()), calls),
        "agent_error_rate": _ratio(sum(errors.values()), calls),
        "errors_by_kind": dict(sorted(errors.items())),
        "latency_ms": _latency(cases),
        "not_measured": {
            "ttft": "the agent API is not streaming: time to first token is not observable",
            "retrieval": "the agent is a black box: retrieval quality is not observable",
        },
    }


def _rules(cases: list[dict[str, Any]]) -> dict[str, Any]:
    failed: Counter[str] = Counter()
    evaluated: Counter[str] = Counter()
    for case in cases:
        for row in case.get("rules", []):
            if row["status"] == "not_applicable":
                continue
            evaluated[row["rule_id"]] += 1
            if row["status"] == "failed":
                failed[row["rule_id"]] += 1
    return {
        "failures_by_rule": dict(failed.most_common()),
        "evaluations_by_rule": dict(sorted(evaluated.items())),
    }


def _intent(cases: list[dict[str, Any]]) -> dict[str, Any]:
    verdicts = [t["intent"]["correct"] for c in cases for t in _turns(c)
                if t.get("intent") and t["intent"].get("correct") is not None]
    right = sum(1 for v in verdicts if v)
    return {"evaluated_turns": len(verdicts), "correct": right,
            "accuracy": _ratio(right, len(verdicts))}


def summarize(cases: list[dict[str, Any]], labels: Sequence[str] | None = None,
              red_lines: Sequence[str] | None = None) -> dict[str, Any]:
    """Every metric of the run (SPEC 6) from its case records, in one JSON-native dict.

    Args:
        cases: The case records (one per item; one per trial with ``--agenteval-repeat``).
        labels: The taxonomy's labels (``None``: the labels seen in the run).
        red_lines: The gate's red-line rule ids (``None``: every veto rule seen).
    """
    from . import families
    from .classification import intent_metrics, intent_pairs

    counts = Counter(c["status"] for c in cases)
    by_status = {s: counts.get(s, 0) for s in STATUSES}
    evaluated = len(cases) - by_status["error"]
    return {
        "counts": {"total": len(cases), **by_status,
                   "cases": sum(1 for c in cases if c["kind"] == "case"),
                   "scenarios": sum(1 for c in cases if c["kind"] == "scenario")},
        "pass_rate_items": _ratio(by_status["passed"], evaluated),
        "rules": _rules(cases),
        "intent": {**intent_metrics(intent_pairs(cases), labels), **_intent(cases)},
        "red_lines": families.red_lines(cases, red_lines),
        "success": families.success(cases),
        "outcome_classes": families.outcome_classes(cases),
        "scope": families.scope(cases),
        "knowledge": families.knowledge(cases),
        "robustness": families.robustness(cases),
        "safety": families.safety(cases),
        "judge": families.judge(cases),
        "stability": families.stability(cases),
        "service": _service(cases),
    }
