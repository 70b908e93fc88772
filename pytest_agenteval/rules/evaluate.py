"""Bound rule instances, their rows, and how explicit rules combine (``rule_logic``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from .._traceback import user_location, user_traceback
from ..model.results import RuleLogicResult, RuleRow
from ._registry import REGISTRY, RuleOutcome, RuleType, TurnView
from ._situation import BoundSituation
from ._text import normalize

__all__ = ["BoundRule", "RuleCrash", "bind", "combine"]


@dataclass(frozen=True)
class RuleCrash:
    """A rule type raised: the row that says so, and the user's traceback."""

    row: RuleRow
    traceback: str


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
    #: situations that must all arise in a turn for the rule to apply (ledger ``when``)
    when: tuple[BoundSituation, ...] = ()

    def trigger(self, turn: TurnView) -> str | None:
        """Why the rule applies to ``turn`` (``"name: evidence; …"``), ``None`` when one of
        its situations does not arise. A rule without situations gives ``""``."""
        said = []
        for s in self.when:
            evidence = s.observe(turn)
            if evidence is None:
                return None
            said.append(f"{s.type.name}: {as_written(evidence, turn.reply)}")
        return "; ".join(said)

    def row(self, outcome: RuleOutcome, turn: TurnView, trigger: str = "") -> RuleRow:
        """The row of ``outcome`` on ``turn``, evidence quoted as the agent wrote it."""
        return RuleRow(
            rule_id=self.rule_id, type=self.rule_type.name, status=outcome.status,
            reason=outcome.reason, evidence=as_written(outcome.evidence, turn.reply),
            score=outcome.score, weight=self.weight, veto=self.veto, layer=self.layer,
            origin=self.origin, trigger=trigger)

    def crash(self, exc: BaseException) -> RuleCrash:
        """A row of status ``error`` naming the exception and where the user's code raised it."""
        where = user_location(exc, self.rule_type.check)
        reason = (f"rule type {self.rule_type.name!r} raised {type(exc).__name__}: {exc}"
                  + (f" at {where}" if where else ""))
        row = RuleRow(rule_id=self.rule_id, type=self.rule_type.name, status="error",
                      reason=reason, score=None, weight=self.weight, veto=self.veto,
                      layer=self.layer, origin=self.origin)
        return RuleCrash(row, user_traceback(exc))

    def check(self, turn: TurnView) -> RuleRow | RuleCrash | None:
        """Evaluate a sync check; ``None`` when the rule's situation does not arise. A rule
        type (or a situation) that raises gives a :class:`RuleCrash`."""
        try:
            trigger = self.trigger(turn) if self.when else ""
            if trigger is None:
                return None
            outcome = self.rule_type.evaluate(self.params, turn)
        except _PASS_THROUGH:
            raise
        except BaseException as exc:  # a user's rule (sys.exit() too) must not end the run
            return self.crash(exc)
        return self.row(outcome, turn, trigger)

    async def aevaluate(self, turn: TurnView) -> RuleRow | RuleCrash | None:
        """Evaluate on the event loop (an async check is awaited); see :meth:`check`."""
        if not self.rule_type.is_async:
            return self.check(turn)
        try:
            trigger = self.trigger(turn) if self.when else ""
            if trigger is None:
                return None
            outcome = await self.rule_type.aevaluate(self.params, turn)
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            return self.crash(exc)
        return self.row(outcome, turn, trigger)

    def evaluate(self, turn: TurnView) -> RuleRow:
        """Evaluate outside an event loop; exceptions propagate (ledger examples show them)."""
        return self.row(self.rule_type.evaluate(self.params, turn), turn)


#: what a rule may not turn into a rule error: cancellation (-x, Ctrl-C) and interruption
_PASS_THROUGH = (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit)


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


def combine(rows: Sequence[RuleRow], logic: Literal["all", "any", "weighted"],
            threshold: float) -> RuleLogicResult:
    """Combine explicit rule rows; not-applicable rows and rows of a rule that raised (no
    verdict) take no part."""
    live = [r for r in rows if r.status not in ("not_applicable", "error")]
    passed = [r for r in live if r.status == "passed"]
    score: float | None
    if not live:
        ok, score, reason = True, None, "no applicable explicit rule"
    elif logic == "any":
        ok, score = bool(passed), len(passed) / len(live)
        reason = f"any: {len(passed)} of {len(live)} rules passed"
    elif logic == "weighted":
        total = sum(r.weight for r in live)
        got = sum(r.weight * (r.score if r.score is not None else float(r.status == "passed"))
                  for r in live)
        score = got / total if total else 0.0
        ok, reason = score >= threshold, f"weighted score {score:.2f} (threshold {threshold:g})"
    else:
        ok, score = len(passed) == len(live), len(passed) / len(live)
        reason = f"all: {len(passed)} of {len(live)} rules passed"
    return RuleLogicResult(logic=logic, passed=ok, score=score, reason=reason)
