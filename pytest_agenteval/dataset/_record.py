"""A failed item of a run record, as a case file would write it (for ``agenteval promote``).

The record names the item's file and line (``cases[].file``, ``cases[].line``). When that
file still holds the item, the item is taken from it: everything the case says, and
nothing masked. Otherwise it is rebuilt from the record, which keeps the input, the
history, the knowledge and the expectation of every turn, but not the explicit rules'
params, the knowledge points or the task's patterns, and whose phone numbers, ID
numbers and e-mails are masked (``138****0000``): :attr:`Found.notes` says so, and the
promoted case carries it in its ``change_reason``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import MultiSourceError
from ..yamlio import SourceError, locate
from ._items import load_items

__all__ = ["FailedRule", "Found", "failed_rules", "find_entry", "item_data"]

_MASKED = re.compile(r"\*{3,}")


@dataclass(frozen=True)
class FailedRule:
    rule_id: str
    origin: str
    veto: bool
    reason: str
    evidence: str
    turn: int | None

    @property
    def ledger(self) -> bool:
        return self.origin == "ledger"


@dataclass
class Found:
    """The item's mapping and where it came from."""

    data: dict[str, Any]
    #: ``cases/x.yaml:12`` (the source file), or ``None`` when rebuilt from the record
    source: str | None
    notes: list[str] = field(default_factory=list)
    #: masked values found in a rebuilt item (``138****0000``)
    masked: list[str] = field(default_factory=list)


def find_entry(doc: Mapping[str, Any], item_id: str) -> dict[str, Any] | None:
    """The record's entry of ``item_id``: its first trial that did not pass, else its first."""
    entries: list[dict[str, Any]] = [c for c in doc["cases"] if c.get("id") == item_id]
    bad = [c for c in entries if c.get("status") != "passed"]
    found = bad or entries
    return found[0] if found else None


def failed_rules(entry: Mapping[str, Any]) -> list[FailedRule]:
    """The rules that failed, each once (by rule id, at its first turn)."""
    out: dict[str, FailedRule] = {}
    for row in entry.get("rules") or ():
        rule_id = str(row.get("rule_id"))
        if row.get("status") == "failed" and rule_id not in out:
            turn = row.get("turn")
            out[rule_id] = FailedRule(rule_id, str(row.get("origin") or ""),
                                      row.get("veto") is True, str(row.get("reason") or ""),
                                      str(row.get("evidence") or ""),
                                      turn if isinstance(turn, int) else None)
    return list(out.values())


def item_data(doc: Mapping[str, Any], entry: Mapping[str, Any], cwd: Path) -> Found:
    """The item as its source file writes it, else as the record has it."""
    found = _from_source(doc, entry, cwd)
    if found is not None:
        return found
    data = _rebuilt(entry)
    masked = sorted(set(_masked(data)))
    notes = [f"{entry.get('file') or 'its file'} no longer holds {entry['id']}: rebuilt from "
             "the run record (input, history, knowledge and expectation of every turn; the "
             "explicit rules' params, the knowledge points and the task's patterns are not "
             "in a record: add them by hand)"]
    if masked:
        notes.append(f"the record is masked: restore {', '.join(masked)} by hand if the "
                     "failure depends on the value")
    return Found(data, None, notes, masked)


def _candidates(doc: Mapping[str, Any], entry: Mapping[str, Any], cwd: Path) -> Iterator[Path]:
    name = entry.get("file")
    if not isinstance(name, str):
        return
    rootdir = doc["run"].get("rootdir")
    if isinstance(rootdir, str):
        yield Path(rootdir) / name
    yield cwd / name


def _from_source(doc: Mapping[str, Any], entry: Mapping[str, Any], cwd: Path) -> Found | None:
    for path in _candidates(doc, entry, cwd):
        if not path.is_file():
            continue
        try:
            items = load_items(path, locate(path, cwd))
        except (SourceError, MultiSourceError):
            continue
        item = next((i for i in items if i.id == entry["id"]), None)
        if item is not None:
            notes = [f"taken from its source file {item.location}: nothing masked"]
            if _changed_since(doc, entry, path):
                notes.append(f"{item.location.file} changed since the run: the item is "
                             "taken as the file has it now")
            return Found(item.data, str(item.location), notes)
    return None


def _changed_since(doc: Mapping[str, Any], entry: Mapping[str, Any], path: Path) -> bool:
    files = (doc["run"].get("dataset") or {}).get("files") or ()
    recorded = next((f.get("sha256") for f in files if isinstance(f, Mapping)
                     and f.get("path") == entry.get("file")), None)
    return recorded is not None and recorded != hashlib.sha256(path.read_bytes()).hexdigest()


def _expected(raw: Any) -> dict[str, Any]:
    exp = raw if isinstance(raw, Mapping) else {}
    return {k: exp[k] for k in ("behavior", "outcome", "intent_code", "assertions")
            if exp.get(k) not in (None, {}, [])}


_KEPT = ("title", "priority", "test_family", "challenge", "source", "tags")


def _rebuilt(entry: Mapping[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"id": entry["id"]}
    data.update((k, entry[k]) for k in _KEPT if entry.get(k) not in (None, ""))
    turns = [t for t in entry.get("turns") or () if isinstance(t, Mapping)]
    if entry.get("kind") == "scenario":
        data["history"] = list(entry.get("history") or [])
        data["knowledge"] = turns[0].get("knowledge") if turns else None
        data["turns"] = [{"input": str(t.get("input") or ""), "knowledge": t.get("knowledge"),
                          "extra": dict(t.get("extra") or {}),
                          "expected": _expected(t.get("expected"))} for t in turns]
        return data
    req = entry.get("request") or {}
    first = turns[0] if turns else {}
    data["request"] = {"input": str(req.get("input", first.get("input", ""))),
                       "history": list(req.get("history") or []),
                       "knowledge": req.get("knowledge"), "extra": dict(req.get("extra") or {})}
    data["expected"] = _expected(first.get("expected"))
    return data


def _masked(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if _MASKED.search(value):
            yield from (m.group(0) for m in re.finditer(r"\S*\*{3,}\S*", value))
    elif isinstance(value, dict):
        for v in value.values():
            yield from _masked(v)
    elif isinstance(value, list):
        for v in value:
            yield from _masked(v)
