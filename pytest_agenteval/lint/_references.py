"""References: the labels a case expects are the taxonomy's, its intent codes map to
them, and every rule id it names (an explicit rule's ``id``, a title, a tag, a note) is
a rule of the ledger."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..model.cases import Case, RuleSpec
from ..taxonomy import UNKNOWN
from ._registry import Finding, ItemView, check

_NUMBERED = re.compile(r"^(.*?[A-Za-z][-_]?)\d+$")
#: fields of what is said or known in the conversation (rule ids there are no references)
_SPOKEN = frozenset({"request", "input", "history", "knowledge", "extra", "facts", "opening"})


def _labels(view: ItemView) -> Iterator[Finding]:
    taxonomy = view.project.taxonomy
    if taxonomy.source is None:
        return
    for ref in view.turns():
        exp = ref.expected
        at = (*ref.path, "expected")
        if exp.behavior is not None and exp.behavior not in taxonomy.labels:
            yield view.finding((*at, "behavior"), f"unknown label {exp.behavior!r}",
                               f"use one of the taxonomy's labels: {', '.join(taxonomy.labels)}")
            continue
        if exp.intent_code is None:
            continue
        mapped = taxonomy.predict(exp.intent_code, None)
        if mapped == UNKNOWN:
            yield view.finding((*at, "intent_code"), f"intent code {exp.intent_code!r} maps to "
                               f"no label of {taxonomy.source}", "add it to a label's codes, "
                               "or fix the code", "warning")
        elif exp.behavior is not None and mapped != exp.behavior:
            yield view.finding((*at, "intent_code"), f"intent code {exp.intent_code!r} maps to "
                               f"{mapped}, but the expected behaviour is {exp.behavior}",
                               "make the code and the behaviour agree", "warning")


def _id_pattern(ids: list[str]) -> re.Pattern[str] | None:
    """Tokens shaped like the ledger's ids (``BR-`` and digits for ``BR-001``)."""
    prefixes = sorted({m.group(1) for i in ids if (m := _NUMBERED.match(i))}, key=len,
                      reverse=True)
    if not prefixes:
        return None
    alternatives = "|".join(re.escape(p) for p in prefixes)
    return re.compile(rf"(?<![A-Za-z0-9_-])(?:{alternatives})\d+(?![A-Za-z0-9_])")


def _strings(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...],
                                                                         str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, (*path, i))


def _rule_ids(view: ItemView) -> Iterator[Finding]:
    ledger = view.project.ledger
    ids = ledger.ids()
    pattern = _id_pattern(ids)
    if ledger.source is None or pattern is None:
        return
    known = set(ids)
    data = view.item.model.model_dump(exclude_defaults=True)
    for path, text in _strings(data, ()):
        if _SPOKEN.intersection(path):
            continue  # what the user says and the agent knows, not references
        for token in dict.fromkeys(pattern.findall(text)):
            if token not in known:
                yield view.finding(path, f"rule {token} is not in {ledger.source}",
                                   f"fix the id (the ledger's ids: {_span(ids)})")


def _span(ids: list[str]) -> str:
    return ", ".join(ids) if len(ids) <= 6 else f"{ids[0]} … {ids[-1]}"


def _explicit(view: ItemView) -> Iterator[tuple[tuple[str | int, ...], list[RuleSpec]]]:
    model = view.item.model
    if isinstance(model, Case):
        yield (), model.rules
    else:
        for i, turn in enumerate(model.turns):
            yield ("turns", i), turn.rules


def _reused_ids(view: ItemView) -> Iterator[Finding]:
    """An explicit rule that takes a ledger rule's id would be counted as that rule."""
    ledger = view.project.ledger
    for at, rules in _explicit(view):
        for j, spec in enumerate(rules):
            if spec.id is not None and ledger.get(spec.id) is not None:
                yield view.finding((*at, "rules", j, "id"), f"explicit rule {spec.id} has the "
                                   "id of a ledger rule, so its rows count as that rule's "
                                   "(red lines, failures per rule)", "give it an id of its own",
                                   "warning")


@check("references")
def references(view: ItemView) -> Iterator[Finding]:
    """Labels and intent codes agree with the taxonomy; rule ids are the ledger's."""
    yield from _labels(view)
    yield from _rule_ids(view)
    yield from _reused_ids(view)
