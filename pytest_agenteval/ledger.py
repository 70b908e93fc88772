"""The rule ledger: business rules with stable ids, applied from a case's expectation.

Ledger rules that apply to a turn are hard constraints: a failed one fails the
item whatever the case's ``rule_logic`` says, and a failed ``veto`` rule is a
red line. Which rules may apply is decided at collection, from the expected
behaviour and the ``assertions`` switches, so a misspelt switch is a located
error instead of a rule that silently never runs. A rule with situations
(``applies_to.when``) is then applied at run time wherever its situation
arises in the dialog, unless the case sets its switch to ``false``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .model import validate_at
from .model.cases import Expected
from .model.ledger import Example, LedgerFileModel, LedgerRuleModel
from .rules._registry import REGISTRY, RuleType, TurnView
from .rules._situation import bind_situations
from .rules.evaluate import BoundRule
from .yamlio import Location, SourceError, YamlDoc, load_yaml, locate

__all__ = ["Ledger", "LedgerRule", "example_view", "load_ledger"]

LEDGER_NAME = "business-rules.yaml"


@dataclass(frozen=True)
class LedgerRule:
    """A validated ledger entry with its rule type and default binding."""

    spec: LedgerRuleModel
    rule_type: RuleType[Any]
    bound: BoundRule
    location: Location

    def applies(self, expected: Expected) -> bool:
        """Whether the rule may apply to a turn with this expectation (its situations, if
        any, are then observed at run time)."""
        cond = self.spec.applies_to
        if cond.behaviors not in (None, "all") and expected.behavior not in cond.behaviors:
            return False
        if cond.assertion is not None:
            value = expected.assertions.get(cond.assertion)
            if value is False:
                return False  # the case opts out explicitly
            return value is not None or bool(self.bound.when)
        return True

    def bind(self, assertions: dict[str, Any]) -> BoundRule:
        """The rule as this turn uses it: without its switch, where its situations arise;
        with the switch on, always (the switch's value may set a param)."""
        cond = self.spec.applies_to
        value = assertions.get(cond.assertion) if cond.assertion else None
        if value is None:
            return self.bound
        if value is True:
            return replace(self.bound, when=()) if self.bound.when else self.bound
        extra = value if isinstance(value, dict) else ({cond.param: value} if cond.param else None)
        if extra is None:
            raise ValueError(f"assertion {cond.assertion}: {value!r} gives a value, but ledger "
                             f"rule {self.spec.id} names no 'param' to pass it to; write true")
        params = self.rule_type.parse({**self.spec.params, **extra})
        return replace(self.bound, params=params, when=())


@dataclass(frozen=True)
class Ledger:
    rules: tuple[LedgerRule, ...] = ()
    source: str | None = None
    switches: frozenset[str] = field(default_factory=frozenset)

    def for_turn(self, expected: Expected) -> tuple[BoundRule, ...]:
        """The ledger rules that apply to a turn with this expectation, bound."""
        unknown = sorted(set(expected.assertions) - self.switches)
        if unknown and self.source is not None:
            known = ", ".join(sorted(self.switches)) or "none"
            raise ValueError(f"assertion switch(es) {unknown} turn on no rule of {self.source}; "
                             f"known switches: {known}")
        return tuple(r.bind(expected.assertions) for r in self.rules if r.applies(expected))

    def ids(self) -> list[str]:
        return [r.spec.id for r in self.rules]

    def get(self, rule_id: str) -> LedgerRule | None:
        return next((r for r in self.rules if r.spec.id == rule_id), None)


def _rule(doc: YamlDoc, i: int, spec: LedgerRuleModel) -> LedgerRule:
    try:
        rt = REGISTRY.get(spec.check)
    except KeyError as exc:
        raise SourceError(doc.at((i, "check")), str(exc.args[0]), f"[{i}].check") from None
    try:
        params = rt.parse(spec.params)
    except ValueError as exc:
        raise SourceError(doc.at((i, "params")), str(exc), f"[{i}].params") from None
    try:
        when = bind_situations(spec.applies_to.when or [])
    except (KeyError, ValueError) as exc:
        raise SourceError(doc.at((i, "applies_to", "when")), str(exc.args[0]),
                          f"[{i}].applies_to.when") from None
    bound = BoundRule(spec.id, rt, params, veto=spec.veto, layer=spec.layer, origin="ledger",
                      when=when)
    return LedgerRule(spec, rt, bound, doc.at((i,)))


def load_ledger(path: Path, rootdir: Path, labels: Sequence[str] | None = None) -> Ledger:
    """Load and validate the ledger; no file gives an empty ledger (explicit rules only).

    With ``labels`` (the taxonomy's), every label in an ``applies_to.behaviors`` list must
    be one of them: a misspelt label would switch its rule off without a word.
    """
    if not path.is_file():
        return Ledger()
    doc = load_yaml(path, locate(path, rootdir))
    if doc.data is None:
        return Ledger(source=doc.file)
    specs = validate_at(LedgerFileModel, doc.data, doc).root
    seen: dict[str, int] = {}
    rules = []
    for i, spec in enumerate(specs):
        if spec.id in seen:
            raise SourceError(doc.at((i, "id")), f"duplicate rule id {spec.id!r}: already at "
                              f"line {doc.line_of((seen[spec.id],))}", f"[{i}].id")
        seen[spec.id] = i
        rules.append(_rule(doc, i, spec))
        behaviors = spec.applies_to.behaviors
        if labels and isinstance(behaviors, list):
            for j, label in enumerate(behaviors):
                if label not in labels:
                    raise SourceError(doc.at((i, "applies_to", "behaviors", j)),
                                      f"{label!r} is not a label of the taxonomy, so rule "
                                      f"{spec.id} would never apply; known: {', '.join(labels)}",
                                      f"[{i}].applies_to.behaviors[{j}]")
    switches = frozenset(r.spec.applies_to.assertion for r in rules
                         if r.spec.applies_to.assertion)
    return Ledger(tuple(rules), doc.file, switches)


def example_view(example: Example) -> TurnView:
    """The turn a ledger example describes."""
    return TurnView(
        input=example.input, reply=example.reply,
        history=[h.model_dump() for h in example.history], knowledge=example.knowledge,
        knowledge_points=[kp.model_dump() for kp in example.knowledge_points],
        assertions=dict(example.assertions), intent_code=example.intent_code,
        intent_name=example.intent_name, latency_ms=example.latency_ms,
        earlier_knowledge=(None if example.earlier_knowledge is None
                           else tuple(example.earlier_knowledge)),
    )
