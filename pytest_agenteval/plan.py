"""Compiling a validated case or scenario into what the engine runs.

A plan holds only frozen, validated data: the turns with their request
fields, their expectation and their bound rules. Compiling happens at
collection, so every rule type and param error surfaces there, with its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .model import results as r
from .model.cases import (
    DIMENSIONS,
    Case,
    Expected,
    JudgeOverride,
    RuleSpec,
    Scenario,
    Simulate,
    Task,
    TaskSlot,
    TaskStep,
)
from .rules._situation import BoundSituation, bind_situations
from .rules.evaluate import BoundRule, bind

if TYPE_CHECKING:
    from .ledger import Ledger

__all__ = ["ItemPlan", "JudgeWish", "TurnPlan", "compile_case", "compile_scenario"]

Kind = Literal["case", "scenario"]


@dataclass(frozen=True)
class JudgeWish:
    """What the judge scores on a turn (the case's ``judge:`` block)."""

    dimensions: tuple[str, ...] = DIMENSIONS
    notes: str | None = None


_ALL = JudgeWish()


def _wish(own: JudgeOverride, outer: JudgeWish | None = _ALL) -> JudgeWish | None:
    """A turn's judge wish: its own block over its scenario's; ``None`` when switched off."""
    if not own.enabled or outer is None:
        return None
    if own.dimensions is None and own.notes is None:
        return outer
    dims = tuple(d for d in DIMENSIONS if d in own.dimensions) if own.dimensions else \
        outer.dimensions
    return JudgeWish(dims, own.notes if own.notes is not None else outer.notes)


@dataclass(frozen=True)
class TurnPlan:
    input: str
    knowledge: dict[str, Any] | None
    extra: dict[str, Any]
    expected: Expected
    rules: tuple[BoundRule, ...]
    rule_logic: Literal["all", "any", "weighted"] = "all"
    rule_pass_threshold: float = 0.7
    #: the knowledge of the earlier turns of a scenario (``None`` for a case: unknown)
    earlier_knowledge: tuple[dict[str, Any] | None, ...] | None = None
    #: what the judge scores (``None``: the judge is switched off for this turn)
    judge: JudgeWish | None = _ALL

    @property
    def expectation(self) -> r.Expectation:
        """The expectation as a result of this turn records it: made for each result and let
        go of with it (kept on the plan, 11,000 of them stayed until the end of a
        10,000-case run, three objects each for every full collection to walk)."""
        exp = self.expected
        return r.Expectation(behavior=exp.behavior, outcome=exp.outcome,
                             intent_code=exp.intent_code, assertions=dict(exp.assertions))


@dataclass(frozen=True)
class ItemPlan:
    """One pytest item's worth of work: one conversation of one or more turns.

    ``meta`` holds the item's descriptive fields of :class:`~.model.results.ItemResult`
    (title, priority, family, challenge, source, review status, tags, pair,
    behaviours, judge switch, outcome class).
    """

    kind: Kind
    id: str
    history: tuple[dict[str, str], ...]
    turns: tuple[TurnPlan, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    task: Task | None = None
    #: the situation of each required task part that names one (slots first, then steps)
    task_situations: dict[tuple[str, int], BoundSituation] = field(default_factory=dict)
    #: a simulated user plays this scenario; ``turns`` then holds one template turn (its
    #: expectation, rules and judge wish) that every simulated turn takes
    simulate: Simulate | None = None

    @property
    def weight(self) -> int:
        """The turns it is expected to send: 1 for a case, a scenario's turns, a simulated
        scenario's ``max_turns``."""
        if self.simulate is not None:
            return max(1, int(self.simulate.max_turns))
        return max(1, len(self.turns))

    @property
    def messages(self) -> list[r.Message]:
        """The initial history as a result records it: made for each result and let go of
        with it (see :attr:`TurnPlan.expectation`)."""
        return [r.Message.model_validate(h) for h in self.history]


class RuleBindError(ValueError):
    """Rule entries are wrong; ``problems`` are (path in the item, message) pairs."""

    def __init__(self, problems: list[tuple[tuple[str | int, ...], str]]) -> None:
        super().__init__("; ".join(msg for _, msg in problems))
        self.problems = problems


def _bind_all(specs: list[RuleSpec], base: tuple[str | int, ...],
              prefix: str) -> tuple[BoundRule, ...]:
    """Bind a case's or turn's explicit rules. A rule without an ``id`` gets one that is
    unique in the run: ``<item id>:<type>#<n>`` (``<item id>:t<turn>:<type>#<n>`` in a
    scenario), so failures per rule id never add up unrelated cases."""
    out = []
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for i, spec in enumerate(specs):
        rule_id = spec.id or f"{prefix}:{spec.type}#{i + 1}"
        try:
            out.append(bind(spec.type, spec.params, rule_id, spec.weight))
        except KeyError as exc:
            problems.append(((*base, i, "type"), str(exc.args[0])))
        except ValueError as exc:
            problems.append(((*base, i, "params"), str(exc)))
    if problems:
        raise RuleBindError(problems)
    return tuple(out)


def _ledger_rules(ledger: Ledger | None, expected: Expected,
                  base: tuple[str | int, ...]) -> tuple[BoundRule, ...]:
    """The ledger rules this expectation switches on (hard constraints)."""
    if ledger is None:
        return ()
    try:
        return ledger.for_turn(expected)
    except ValueError as exc:
        raise RuleBindError([((*base, "expected", "assertions"), str(exc))]) from None


def _meta(item: Case | Scenario, behaviors: list[str], outcome: str | None) -> dict[str, Any]:
    return {
        "title": item.title,
        "priority": item.priority,
        "test_family": item.test_family,
        "challenge": item.challenge,
        "source": item.source,
        "review_status": item.review_status,
        "tags": list(item.tags),
        "pair": r.PairRef(**item.pair.model_dump()) if item.pair else None,
        "behaviors": behaviors,
        "judge_enabled": item.judge.enabled,
        "outcome": outcome,
    }


def compile_case(case: Case, ledger: Ledger | None = None) -> ItemPlan:
    req = case.request
    explicit = _bind_all(case.rules, ("rules",), case.id)
    turn = TurnPlan(
        input=req.input,
        knowledge=req.knowledge,
        extra=dict(req.extra),
        expected=case.expected,
        rules=explicit + _ledger_rules(ledger, case.expected, ()),
        rule_logic=case.rule_logic,
        rule_pass_threshold=case.rule_pass_threshold,
        judge=_wish(case.judge),
    )
    behaviors = [case.expected.behavior] if case.expected.behavior else []
    return ItemPlan("case", case.id, tuple(h.model_dump() for h in req.history), (turn,),
                    _meta(case, behaviors, case.expected.outcome))


def compile_scenario(sc: Scenario, ledger: Ledger | None = None) -> ItemPlan:
    if sc.simulate is not None:
        return _compile_simulated(sc, sc.simulate, ledger)
    turns = []
    knowledge = sc.knowledge
    problems: list[tuple[tuple[str | int, ...], str]] = []
    earlier: tuple[dict[str, Any] | None, ...] = ()
    outer = _wish(sc.judge)
    for i, t in enumerate(sc.turns):
        if t.sets_knowledge:
            knowledge = t.knowledge
        try:
            rules = _bind_all(t.rules, ("turns", i, "rules"), f"{sc.id}:t{i + 1}")
            rules += _ledger_rules(ledger, t.expected, ("turns", i))
        except RuleBindError as exc:
            problems += exc.problems
            continue
        turns.append(TurnPlan(
            input=t.input,
            knowledge=knowledge,
            extra={**sc.extra, **t.extra},
            expected=t.expected,
            rules=rules,
            rule_logic=t.rule_logic,
            rule_pass_threshold=t.rule_pass_threshold,
            earlier_knowledge=earlier,
            judge=_wish(t.judge, outer),
        ))
        earlier = (*earlier, knowledge)
    if problems:
        raise RuleBindError(problems)
    behaviors = sorted({t.expected.behavior for t in sc.turns if t.expected.behavior})
    task = sc.outcome.task if sc.outcome else None
    return ItemPlan("scenario", sc.id, tuple(h.model_dump() for h in sc.history),
                    tuple(turns), _meta(sc, behaviors, None), task, _task_situations(task))


def _compile_simulated(sc: Scenario, sim: Simulate, ledger: Ledger | None) -> ItemPlan:
    template = TurnPlan(
        input="", knowledge=sc.knowledge, extra=dict(sc.extra), expected=sim.expected,
        rules=_ledger_rules(ledger, sim.expected, ("simulate",)), judge=_wish(sc.judge),
        earlier_knowledge=())
    behaviors = [sim.expected.behavior] if sim.expected.behavior else []
    task = sc.outcome.task if sc.outcome else None
    return ItemPlan("scenario", sc.id, tuple(h.model_dump() for h in sc.history), (template,),
                    _meta(sc, behaviors, None), task, _task_situations(task), sim)


def _task_situations(task: Task | None) -> dict[tuple[str, int], BoundSituation]:
    """Bind the situations task parts name; an unknown one is an error at its line."""
    out: dict[tuple[str, int], BoundSituation] = {}
    if task is None:
        return out
    problems: list[tuple[tuple[str | int, ...], str]] = []
    parts: list[tuple[str, int, TaskSlot | TaskStep]] = [
        *(("slot", i, p) for i, p in enumerate(task.slots)),
        *(("step", i, p) for i, p in enumerate(task.steps))]
    for kind, i, part in parts:
        if part.situation is None:
            continue
        where = ("outcome", "task", f"{kind}s", i, "situation")
        if part.match is not None:
            problems.append((where, "give match or situation, not both"))
            continue
        try:
            (out[(kind, i)],) = bind_situations([part.situation])
        except KeyError as exc:
            problems.append((where, str(exc.args[0])))
        except ValueError as exc:
            problems.append((where, str(exc)))
    if problems:
        raise RuleBindError(problems)
    return out
