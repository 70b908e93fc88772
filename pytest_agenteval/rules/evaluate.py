"""Bound rule instances and how explicit rules combine (``rule_logic``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ._registry import REGISTRY, RuleOutcome, RuleType, TurnView
from ._text import normalize

__all__ = ["BoundRule", "Combined", "bind", "combine"]


@dataclass(frozen=True)
class BoundRule:
    """A rule type with validated params, as one case or turn uses it."""

    rule_id: str
    rule_type: RuleType[Any]
    params: BaseModel
    weight: float = 1.0
    veto: bool = False
    layer: str = "L1"
    origin: Literal["case", "ledger"] = "case"

    def run(self, turn: TurnView) -> dict[str, Any]:
        """Evaluate on ``turn``; a crashing rule is a failed row naming the crash."""
        try:
            outcome = self.rule_type.check(self.params, turn)
        except Exception as exc:  # a user's rule type must not take the run down
            outcome = RuleOutcome.failed(f"rule type {self.rule_type.name!r} raised "
                                         f"{type(exc).__name__}: {exc}")
        return {
            "rule_id": self.rule_id,
            "type": self.rule_type.name,
            "status": outcome.status,
            "reason": outcome.reason,
            "evidence": as_written(outcome.evidence, turn.reply),
            "score": outcome.score,
            "weight": self.weight,
            "veto": self.veto,
            "layer": self.layer,
            "origin": self.origin,
        }


def as_written(evidence: str, reply: str) -> str:
    """Evidence quoted from the reply as the agent wrote it, not from its NFKC form."""
    if not evidence or evidence in reply:
        return evidence
    folded = normalize(reply)
    if len(folded) == len(reply):
        i = folded.find(evidence)
        if i >= 0:
            return reply[i:i + len(evidence)]
    return evidence


def bind(rule_type: str, params: dict[str, Any], rule_id: str, weight: float = 1.0,
         veto: bool = False, origin: Literal["case", "ledger"] = "case") -> BoundRule:
    """Look up and validate; raises ``KeyError``/``ValueError`` with a fix."""
    rt = REGISTRY.get(rule_type)
    return BoundRule(rule_id, rt, rt.parse(params), weight, veto, origin=origin)


@dataclass(frozen=True)
class Combined:
    passed: bool
    score: float | None
    reason: str


def combine(rows: list[dict[str, Any]], logic: str, threshold: float) -> Combined:
    """Combine explicit rule rows; not-applicable rows take no part."""
    live = [r for r in rows if r["status"] != "not_applicable"]
    if not live:
        return Combined(True, None, "no applicable explicit rule")
    passed = [r for r in live if r["status"] == "passed"]
    if logic == "any":
        return Combined(bool(passed), len(passed) / len(live),
                        f"any: {len(passed)} of {len(live)} rules passed")
    if logic == "weighted":
        total = sum(r["weight"] for r in live)
        got = sum(r["weight"] * (r["score"] if r["score"] is not None else
                                 float(r["status"] == "passed")) for r in live)
        score = got / total if total else 0.0
        return Combined(score >= threshold, score,
                        f"weighted score {score:.2f} (threshold {threshold:g})")
    return Combined(len(passed) == len(live), len(passed) / len(live),
                    f"all: {len(passed)} of {len(live)} rules passed")
