"""``agenteval promote RUN CASE_ID… --to FILE``: the bad-case loop.

A failed item of a run becomes a regression case at the end of FILE (created when
missing; an existing file keeps its text and comments, the new items go at the end of
its ``cases:`` or ``scenarios:`` list). For each item three entries are written, all
``review_status: candidate``:

- ``<id>-REG-<n>``: the item as its source file has it (else rebuilt from the record,
  see :mod:`._record`), with ``pair: {group: <id>-REG-<n>, role: clean}``, the tags
  ``regression`` and ``fails:<rule id>`` of each failed rule, and a ``change_reason``
  naming the run and the rules; the comment above it gives each failed rule's reason
  and evidence. Its expectation and explicit rules are the item's own, so it fails the
  same ledger rules while the agent keeps the defect;
- ``<id>-REG-<n>-<kind>-1``: an equivalent phrasing, the first of colloquial, typo,
  asr and noise that :mod:`._generators` can make of it, as its pair variant;
- ``<id>-REG-<n>-NEAR-1``: a near-miss counter-example *stub*: the item with its
  expectation, rules and task removed, the judge off, and a ``TODO``. Rewrite its input
  into something that looks like the failure but needs another reply, and write that
  reply's expectation. It is no pair member (its right answer differs) but carries the
  tag ``contrast:<id>-REG-<n>``.

``n`` is the first number not yet used in FILE. An item that passed is refused
(exit 1) unless ``--any``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..model import MultiSourceError
from ..yamlio import SourceError, loads, locate
from ._generators import choose
from ._items import items_of, tidy
from ._record import FailedRule, Found, failed_rules, find_entry, item_data
from ._yamlout import InsertError, insert_items, item_block, render_file

__all__ = ["promote_entry", "run"]

#: the kinds tried, in order, for the equivalent phrasing
PHRASINGS = ("colloquial", "typo", "asr", "noise")
_OWN = frozenset({"id", "title", "pair", "review_status", "reviewed_by", "reviewed_at",
                  "version", "change_reason", "tags"})
_CHECKS = frozenset({"expected", "rules", "rule_logic", "rule_pass_threshold", "outcome",
                     "judge"})
_HEADER = (
    "Regression cases written by `agenteval promote` (docs/dataset.md). Each <id>-REG-<n>",
    "is an item that failed in a run, with its contrast group: an equivalent phrasing (its",
    "pair variant) and a near-miss stub (TODO). All are candidates until reviewed.")


class PromoteError(Exception):
    """A usage error (exit 2)."""


def _rule_line(r: FailedRule) -> str:
    kind = "red line " if r.veto else ""
    turn = f" (turn {r.turn + 1})" if r.turn is not None else ""
    return f"{kind}{r.rule_id}{turn}: {r.reason}" + (f" — evidence: {r.evidence}"
                                                     if r.evidence else "")


def _regression(found: Found, reg_id: str, entry: dict[str, Any], run_label: str,
                rules: list[FailedRule]) -> dict[str, Any]:
    data = found.data
    names = ", ".join(r.rule_id for r in rules) or f"status {entry['status']}"
    reason = (f"promoted from the run {run_label}, where {entry['id']} was {entry['status']} "
              f"({names}); a regression case, candidate until reviewed")
    if found.masked:
        reason += (f". The record is masked: restore {', '.join(found.masked)} by hand if the "
                   "failure depends on it")
    out = {k: v for k, v in data.items() if k not in _OWN}
    tags = [*(data.get("tags") or ()), "regression",
            *(f"fails:{r.rule_id}" for r in rules if r.ledger)]
    out.update(id=reg_id, title=f"回归：{data.get('title') or entry['id']}",
               pair={"group": reg_id, "role": "clean"}, review_status="candidate",
               change_reason=reason, tags=list(dict.fromkeys(tags)))
    return tidy(out)


def _phrasing(reg: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    from .expand import variant

    for kind in PHRASINGS:
        picked = choose(kind, reg, 0, str(reg["id"]), 1)
        if picked:
            data = variant(reg, kind, 1, picked[0], str(reg["id"]))
            data["tags"] = [t for t in data["tags"] if not str(t).startswith("fails:")]
            return data, f"{kind}: {picked[0].note}"
    return None


def _near_miss(reg: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in reg.items() if k not in _CHECKS | {"pair", "change_reason"}}
    if isinstance(out.get("turns"), list):
        out["turns"] = [{k: v for k, v in t.items() if k not in _CHECKS} for t in out["turns"]]
    else:
        out["expected"] = {}
    tags = [t for t in reg.get("tags") or () if t != "known_defect"
            and not str(t).startswith("fails:")]
    out.update(id=f"{reg['id']}-NEAR-1", title=f"TODO 近似反例：{reg['title']}", judge=False,
               review_status="candidate", tags=[*tags, "near_miss", "todo",
                                                f"contrast:{reg['id']}"])
    return tidy(out)


def promote_entry(doc: dict[str, Any], entry: dict[str, Any], reg_id: str, run_label: str,
                  cwd: Path) -> tuple[list[str], list[str]]:
    """The blocks (the regression case, its phrasing, its near-miss stub) of one failed
    entry, and the lines that say what was done."""
    found = item_data(doc, entry, cwd)
    rules = failed_rules(entry)
    reg = _regression(found, reg_id, entry, run_label, rules)
    head = [f"regression of {entry['id']}, {entry['status']} in the run {run_label}:",
            *(f"  {_rule_line(r)}" for r in rules), *found.notes]
    blocks = [item_block(reg, head)]
    said = [f"{entry['id']} ({entry['status']}: {', '.join(r.rule_id for r in rules) or '-'})"
            f" → {reg_id}", *(f"  {n}" for n in found.notes)]
    phrasing = _phrasing(reg)
    if phrasing is not None:
        data, note = phrasing
        blocks.append(item_block(data, [f"equivalent phrasing of {reg_id} ({note}): the same "
                                        "expectation, its pair variant"]))
        said.append(f"  + {data['id']} (equivalent phrasing, {note})")
    near = _near_miss(reg)
    blocks.append(item_block(near, [
        f"TODO near miss of {reg_id}: rewrite the input into one that looks like the failure",
        "but needs another reply, and write that reply's expected: (and rules:). Until then",
        "it checks only the ledger rules that apply to every reply; the judge is off."]))
    said.append(f"  + {near['id']} (near-miss stub: TODO write its input and expectation)")
    return blocks, said


def _next_id(base: str, taken: set[str]) -> str:
    n = 1
    while f"{base}-REG-{n}" in taken:
        n += 1
    return f"{base}-REG-{n}"


def _existing(target: Path, cwd: Path) -> tuple[str, set[str]]:
    if not target.exists():
        return "", set()
    text = target.read_text(encoding="utf-8")
    try:
        ids = {i.id for i in items_of(loads(text, locate(target, cwd)))} if text.strip() else set()
    except (SourceError, MultiSourceError) as exc:
        raise PromoteError(f"{target} cannot take new items: fix it first:\n{exc}") from None
    return text, ids


def _entries(doc: dict[str, Any], ids: list[str], any_status: bool) -> list[dict[str, Any]]:
    out = []
    for item_id in ids:
        entry = find_entry(doc, item_id)
        if entry is None:
            bad = sorted({str(c["id"]) for c in doc["cases"] if c.get("status") != "passed"})
            raise PromoteError(f"no item {item_id} in the run; its items that did not pass: "
                               + (", ".join(bad[:20]) or "none"))
        out.append(entry)
    return out


def _write(target: Path, text: str, sections: dict[str, list[str]], cwd: Path) -> str:
    if text.strip():
        for name, blocks in sections.items():
            if blocks:
                text = insert_items(text, name, blocks)
    else:
        text = render_file(_HEADER, list(sections.items()))
    items_of(loads(text, locate(target, cwd)))  # what is written loads as a case file
    return text


def run(record: str, ids: list[str], to: str, any_status: bool = False) -> int:
    """The command: exit 0 when written, 1 when an item passed (without ``--any``), 2 on
    misuse."""
    from ..report.compare import CompareError, load_record

    cwd, target = Path.cwd(), Path(to)
    try:
        path, doc = load_record(record)
        entries = _entries(doc, ids, any_status)
        passed = [e["id"] for e in entries if e["status"] == "passed"]
        if passed and not any_status:
            print(f"agenteval promote: {', '.join(passed)} passed in {path}; promote takes a "
                  "failed item (pass --any to promote one that passed); nothing written",
                  file=sys.stderr)
            return 1
        text, taken = _existing(target, cwd)
        label = f"of {doc['run'].get('started') or '?'} ({locate(path, cwd)})"
        sections: dict[str, list[str]] = {"cases": [], "scenarios": []}
        said: list[str] = []
        for entry in entries:
            reg_id = _next_id(str(entry["id"]), taken)
            taken.add(reg_id)
            blocks, lines = promote_entry(doc, entry, reg_id, label, cwd)
            sections["scenarios" if entry.get("kind") == "scenario" else "cases"] += blocks
            said += lines
        text = _write(target, text, sections, cwd)
    except (CompareError, PromoteError, InsertError, SourceError, MultiSourceError) as exc:
        print(f"agenteval promote: {exc}", file=sys.stderr)
        return 2
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print("agenteval promote: written to " + str(target), *said, "all candidates: review "
          f"them, then run them: pytest {target}", sep="\n")
    return 0
