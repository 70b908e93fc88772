"""Knowledge rule types: ``knowledge_points`` and ``grounded_numbers``.

Numbers are compared by value, so 3.37万, 33700 and 33,700 are the same fact,
and a date 2021-06 is found as 2021年6月.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from ._registry import Params, RuleOutcome, TurnView, rule
from ._text import compile_any, leaves, normalize, numbers

__all__ = ["GroundedNumbers", "KnowledgeNotUsed", "KnowledgePoints", "value_present"]

_APPROX_AFTER = re.compile(r"^\s*(多|余|左右|出头|上下|来)")
_APPROX_BEFORE = re.compile(r"(约|大约|大概|差不多|将近|接近|近)\s*$")
_SQUASH = re.compile(r"\s+")


def _in_order(needles: list[float], haystack: list[float]) -> bool:
    it = iter(haystack)
    return all(any(abs(h - n) < 1e-9 for h in it) for n in needles)


def value_present(value: str, reply: str) -> bool:
    """A required value is in the reply: its numbers in order by value, else its text."""
    wanted = [v for _, v in numbers(value)]
    if wanted:
        return _in_order(wanted, [v for _, v in numbers(reply)])
    squash = _SQUASH.sub("", normalize(value, ignore_case=True))
    return squash in _SQUASH.sub("", normalize(reply, ignore_case=True))


class KnowledgePoints(Params):
    pass


@rule("knowledge_points", params=KnowledgePoints)
def knowledge_points(p: KnowledgePoints, turn: TurnView) -> RuleOutcome:
    """Every value of the case's ``expected.knowledge_points`` appears in the reply.

    Values are compared after normalisation: numbers by value (3.37万公里 is
    found as 33700公里), dates by their numbers in order (2021-06 as
    2021年6月), text after NFKC without spaces. Not applicable when the case
    lists no knowledge points. Score = share of points found.
    """
    points = turn.knowledge_points
    if not points:
        return RuleOutcome.not_applicable("the case lists no knowledge points")
    missing = [kp for kp in points if not value_present(str(kp["value"]), turn.reply)]
    score = 1 - len(missing) / len(points)
    if missing:
        names = ", ".join(f"{kp['path']}={kp['value']}" for kp in missing)
        return RuleOutcome.failed(f"{len(missing)} of {len(points)} knowledge points missing: "
                                  f"{names}", turn.reply, score)
    return RuleOutcome.passed(f"all {len(points)} knowledge points used",
                              ", ".join(str(kp["value"]) for kp in points), score)


class GroundedNumbers(Params):
    ignore: tuple[str, ...] = (r"\d+\s*(小时|分钟|个?工作日|天内)", r"第\s*\d+", r"\d+\s*(位|名)")
    tolerance: float = Field(default=0.25, ge=0, le=1)
    sources: tuple[Literal["knowledge", "history", "input"], ...] = (
        "knowledge", "history", "input")


def _approx(text: str, start: int, end: int) -> bool:
    return bool(_APPROX_AFTER.match(text[end:end + 3]) or _APPROX_BEFORE.search(text[:start]))


@rule("grounded_numbers", params=GroundedNumbers)
def grounded_numbers(p: GroundedNumbers, turn: TurnView) -> RuleOutcome:
    """Every number in the reply appears in the knowledge, the history or the input.

    Numbers are compared by value (8.98万 = 89800). A number marked as
    approximate (「3万多」「约9万」) is grounded when a source value lies
    within ``tolerance`` of it. Numbers inside an ``ignore`` pattern (「24小时」,
    「第1」) are skipped. ``sources: [knowledge, input]`` leaves the history
    out, so a fact from an earlier turn's knowledge that is gone now does not
    count as grounded. Fails with the ungrounded numbers as evidence.
    """
    sources = leaves(turn.knowledge) if "knowledge" in p.sources else []
    if "history" in p.sources:
        sources += [h["content"] for h in turn.history]
    if "input" in p.sources:
        sources.append(turn.input)
    known = [v for s in sources for _, v in numbers(s)]
    text = normalize(turn.reply)
    skip = compile_any(list(p.ignore))
    spans = [m.span() for m in skip.finditer(text)] if skip else []
    bad = []
    for m in re.finditer(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(万|千)?", text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        (raw, value), = numbers(m.group(0))
        if any(abs(k - value) < 1e-9 for k in known):
            continue
        if _approx(text, m.start(), m.end()) and any(
                abs(k - value) <= p.tolerance * max(abs(k), 1.0) for k in known):
            continue
        bad.append(raw)
    if bad:
        return RuleOutcome.failed(f"numbers not in knowledge, history or input: {bad}",
                                  ", ".join(bad))
    return RuleOutcome.passed("every number is grounded")


class KnowledgeNotUsed(Params):
    paths: tuple[str, ...] = ()
    numeric_only: bool = True


def _at(knowledge: Any, path: str) -> Any:
    node = knowledge
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


@rule("knowledge_not_used", params=KnowledgeNotUsed)
def knowledge_not_used(p: KnowledgeNotUsed, turn: TurnView) -> RuleOutcome:
    """The reply states no fact of this turn's knowledge (another vehicle was asked about).

    Checks the values at ``paths`` (dotted; default every value), by default
    only those with a telling number (mileage, price, dates: a decimal or a
    number ≥ 10), compared like ``knowledge_points``. Not applicable without
    knowledge.
    """
    if not turn.knowledge:
        return RuleOutcome.not_applicable("no knowledge this turn")
    values = ([v for path in p.paths for v in leaves(_at(turn.knowledge, path))] if p.paths
              else leaves(turn.knowledge))
    if p.numeric_only:  # a lone small integer (0 transfers, 1 owner) is no telling fact
        values = [v for v in values
                  if any(n >= 10 or not n.is_integer() for _, n in numbers(v))]
    used = [v for v in values if value_present(v, turn.reply)]
    if used:
        return RuleOutcome.failed(f"states this turn's knowledge: {used}", ", ".join(used))
    return RuleOutcome.passed("no fact of this turn's knowledge in the reply")
