"""Service-level rule types: ``response_time`` and ``intent_code``."""

from __future__ import annotations

from pydantic import Field, model_validator

from ._registry import Params, RuleOutcome, TurnView, rule
from ._text import normalize

__all__ = ["IntentCode", "ResponseTime"]


class ResponseTime(Params):
    max_ms: float = Field(gt=0)


@rule("response_time", params=ResponseTime)
def response_time(p: ResponseTime, turn: TurnView) -> RuleOutcome:
    """The turn's measured latency is at most ``max_ms``; score = min(1, max_ms / latency)."""
    if turn.latency_ms is None:
        return RuleOutcome.not_applicable("no latency measured for this turn")
    latency = turn.latency_ms
    score = 1.0 if latency <= 0 else min(1.0, p.max_ms / latency)
    return RuleOutcome.decide(latency <= p.max_ms, f"{latency:.0f} ms (max {p.max_ms:g} ms)",
                              f"{latency:.0f} ms", score)


class IntentCode(Params):
    code: int | str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _one(self) -> IntentCode:
        if (self.code is None) == (self.name is None):
            raise ValueError("give exactly one of code, name")
        return self


@rule("intent_code", params=IntentCode)
def intent_code(p: IntentCode, turn: TurnView) -> RuleOutcome:
    """The API returned that intent ``code`` (compared as text) or intent ``name``."""
    if p.code is not None:
        got = turn.intent_code
        if got is None:
            return RuleOutcome.failed(f"expected intent code {p.code}, the API returned none")
        ok = normalize(str(got)).strip() == normalize(str(p.code)).strip()
        return RuleOutcome.decide(ok, f"intent code {got} (expected {p.code})", f"code={got}")
    got_name = turn.intent_name
    if got_name is None:
        return RuleOutcome.failed(f"expected intent name {p.name!r}, the API returned none")
    ok = normalize(got_name).strip() == normalize(p.name or "").strip()
    return RuleOutcome.decide(ok, f"intent name {got_name!r} (expected {p.name!r})",
                              f"name={got_name}")
