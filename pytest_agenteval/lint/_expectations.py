"""What a HANDOFF_REQUIRED expectation must carry: a ``handoff`` rule (the reply hands
the matter to a named party with an action) and a ``no_commitment`` rule (it promises
nothing on the party's behalf), each applied unconditionally to that turn — from the
ledger (``applies_to`` behaviours, a switch, or always) or an explicit ``rules:`` entry."""

from __future__ import annotations

from collections.abc import Iterator

from ..ledger import Ledger
from ._registry import Finding, ItemView, Severity, check

#: the rule types a HANDOFF_REQUIRED expectation needs
REQUIRED = ("handoff", "no_commitment")


def _how(ledger: Ledger, rule_type: str) -> tuple[str, Severity]:
    """How to turn a rule of ``rule_type`` on, and how bad it is that it is off."""
    ways = []
    for rule in ledger.rules:
        if rule.rule_type.name != rule_type:
            continue
        cond = rule.spec.applies_to
        if cond.assertion is not None:
            ways.append(f"set expected.assertions.{cond.assertion}: true (turns on "
                        f"{rule.spec.id})")
        elif isinstance(cond.behaviors, list):
            ways.append(f"expect one of {', '.join(cond.behaviors)} ({rule.spec.id})")
    if ways:
        return "; or ".join(ways), "error"
    where = ledger.source or "the ledger (rules/business-rules.yaml)"
    return (f"{where} has no {rule_type} rule that a case can switch on: add one, or an "
            f"explicit rules: entry {{type: {rule_type}}}", "warning")


@check("handoff_expectation")
def handoff_expectation(view: ItemView) -> Iterator[Finding]:
    """A HANDOFF_REQUIRED case or turn carries a ``handoff`` and a ``no_commitment`` rule."""
    for ref in view.turns():
        if ref.expected.outcome != "HANDOFF_REQUIRED":
            continue
        applied = {r.rule_type.name for r in ref.turn.rules if not r.when}
        for rule_type in REQUIRED:
            if rule_type in applied:
                continue
            fix, severity = _how(view.project.ledger, rule_type)
            yield view.finding((*ref.path, "expected", "outcome"),
                               f"HANDOFF_REQUIRED but no {rule_type} rule applies to it",
                               fix, severity)
