"""Knowledge points: every ``expected.knowledge_points`` path exists in the knowledge of
its case or turn, and holds the stated value (compared as the ``knowledge_points`` rule
type compares a reply: numbers by value and unit, text after normalisation)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..model.cases import Case
from ..rules._knowledge import value_present
from ._registry import Finding, ItemView, Severity, TurnRef, check

_MISSING = object()


def lookup(knowledge: Any, path: str) -> tuple[Any, str]:
    """The value at a dotted ``path`` (a number indexes a list) and the longest prefix
    found; the value is ``_MISSING`` when the path leaves the knowledge."""
    node, found = knowledge, ""
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING, found
        found = f"{found}.{part}" if found else part
    return node, found


def _keys(node: Any) -> str:
    if isinstance(node, dict):
        return ", ".join(map(str, node)) or "nothing"
    if isinstance(node, list):
        return f"list indexes 0..{len(node) - 1}" if node else "an empty list"
    return "a value, no keys"


def _where(view: ItemView, ref: TurnRef) -> str:
    if isinstance(view.item.model, Case):
        return "request.knowledge"
    return "this turn's knowledge" if ref.path[:1] == ("turns",) else "the scenario's knowledge"


def _point(view: ItemView, ref: TurnRef, j: int, path: str, value: str) -> Finding | None:
    at = (*ref.path, "expected", "knowledge_points", j)
    knowledge = ref.turn.knowledge
    source = _where(view, ref)
    if not knowledge:
        return view.finding((*at, "path"), f"knowledge point {path!r}: {source} is empty "
                            "(null or absent), so no reply can state it",
                            "give the knowledge, or remove the knowledge point")
    node, found = lookup(knowledge, path)
    if node is _MISSING:
        inner = lookup(knowledge, found)[0] if found else knowledge
        upto = f" (found up to {found!r})" if found else ""
        return view.finding((*at, "path"), f"knowledge point {path!r} is not in {source}{upto}",
                            f"fix the path: {found or 'the top level'} has {_keys(inner)}")
    if isinstance(node, dict | list):
        return view.finding((*at, "path"), f"knowledge point {path!r} names a section, "
                            "not a value", f"point at one of its values: {_keys(node)}")
    if node is None or not value_present(value, str(node)):
        outcome = ref.expected.outcome
        severity: Severity = "error" if outcome in (None, "ANSWERABLE") else "warning"
        return view.finding((*at, "value"), f"knowledge point {path!r} states {value!r}, but "
                            f"{source} holds {node!r} there",
                            "write the value the knowledge holds (the reply is checked "
                            "against it)", severity)
    return None


@check("knowledge_points")
def knowledge_points(view: ItemView) -> Iterator[Finding]:
    """Every knowledge point's path exists in the knowledge of its case or turn, and the
    value there is the stated one. A wrong value is an error on an ANSWERABLE (or
    unclassified) expectation, a warning on any other outcome."""
    for ref in view.turns():
        for j, kp in enumerate(ref.expected.knowledge_points):
            found = _point(view, ref, j, kp.path, kp.value)
            if found is not None:
                yield found
