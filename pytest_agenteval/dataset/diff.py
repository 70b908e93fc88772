"""``agenteval dataset diff OLD NEW``: does NEW keep every item of OLD?

Both sides are loaded as collection loads them (anchors, ``<<`` merge keys and
``defaults:`` resolved, every item validated), and items are matched by id, whatever
file they are in. An item of OLD is *kept* when its validated form is the same in NEW:
every field, the defaults' contributions included, compared deeply (a scenario turn
that inherits the knowledge differs from one that sets ``knowledge: null``). The review
fields (``review_status``, ``reviewed_by``, ``reviewed_at``) and the bookkeeping fields
(``version``, ``change_reason``) are not content: a change there is listed, never an
error.

Errors (exit 1): an item that changed without a ``change_reason`` and a new ``version``
in NEW (named by NEW's file, line and the first field that differs), an item of OLD
missing from NEW (unless ``--allow-removal``), a case file that does not load, an id
used twice. Warnings: NEW's manifest does not name OLD's version as its ``parent``,
NEW kept OLD's version number although it changed, a side without a manifest. Exit 2:
a side that cannot be read at all (no such folder, a broken manifest, a git revision
that does not exist).

OLD (or NEW) may be ``REV:PATH``, the folder at a revision of the git repository of
the current folder (read with ``git archive``); ``--git REV`` says the same for OLD.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..model import MultiSourceError, field_name
from ..model.cases import Scenario
from ..model.dataset import MANIFEST_NAME, DatasetManifest
from ..yamlio import SourceError, locate
from ._git import UsageError, from_git
from ._items import SourceItem, case_files, load_items

__all__ = ["DatasetDiff", "Finding", "Side", "diff", "first_difference", "load_side",
           "parse_spec", "render", "run"]

#: not content: who reviewed the item, and the item's own version history
_REVIEW = ("review_status", "reviewed_by", "reviewed_at")
_BOOKKEEPING = frozenset({*_REVIEW, "version", "change_reason"})
_INHERITED = "<inherited from the turn before>"
_MISSING = "<absent>"
Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    level: Literal["error", "warning"]
    where: str
    message: str
    field: str = ""

    def __str__(self) -> str:
        return f"{self.where}" + (f" [{self.field}]" if self.field else "") + f": {self.message}"


@dataclass
class Side:
    """One version of the dataset: its items by id, its manifest, what did not load."""

    label: str
    items: dict[str, SourceItem] = field(default_factory=dict)
    manifest: DatasetManifest | None = None
    manifest_at: str | None = None
    errors: list[Finding] = field(default_factory=list)
    #: each item's file, relative to the dataset's folder (a move is no change)
    files: dict[str, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        what = f"{self.manifest.name} {self.manifest.version}" if self.manifest else \
            "no dataset.yaml"
        return f"{self.label} ({what}, {len(self.items)} items)"


@dataclass(frozen=True)
class Change:
    """An item of OLD that NEW has differently: the first field that differs."""

    item: SourceItem
    old: SourceItem
    path: Path_
    a: Any
    b: Any
    explained: bool

    @property
    def field(self) -> str:
        return f"{self.item.id} {field_name(self.path)}"


@dataclass
class DatasetDiff:
    old: Side
    new: Side
    added: list[SourceItem] = field(default_factory=list)
    removed: list[SourceItem] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    moved: list[tuple[SourceItem, SourceItem]] = field(default_factory=list)
    reviewed: list[tuple[SourceItem, SourceItem]] = field(default_factory=list)
    unchanged: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warning"]


# -- loading ------------------------------------------------------------------------------------


def load_side(folder: Path, label: str, display: Any) -> Side:
    """The items of a dataset folder (or one case file); ``display(path)`` names a file.

    Raises:
        UsageError: the folder does not exist, or its manifest is broken.
    """
    from ..config import ConfigError
    from ..project import load_manifest

    if not folder.exists():
        raise UsageError(f"{label}: no such folder or file")
    side = Side(label)
    manifest = folder / MANIFEST_NAME
    try:
        if manifest.is_file():
            side.manifest, side.manifest_at = load_manifest(manifest), display(manifest)
        files = case_files(folder)
    except ConfigError as exc:
        raise UsageError(f"{label}: {exc}") from None
    for path in files:
        rel = path.name if folder.is_file() else path.relative_to(folder).as_posix()
        _load_file(side, path, display(path), rel)
    return side


def _load_file(side: Side, path: Path, name: str, rel: str) -> None:
    try:
        items = load_items(path, name)
    except SourceError as exc:
        side.errors.append(Finding("error", str(exc.location), exc.message, exc.field))
        return
    except MultiSourceError as exc:
        side.errors += [Finding("error", str(e.location), e.message, e.field)
                        for e in exc.errors]
        return
    for item in items:
        first = side.items.get(item.id)
        if first is not None:
            side.errors.append(Finding("error", str(item.location), f"duplicate id: already "
                                       f"used at {first.location}; ids are unique", "id"))
        else:
            side.items[item.id] = item
            side.files[item.id] = rel


# -- comparing ----------------------------------------------------------------------------------


def canonical(item: SourceItem) -> dict[str, Any]:
    """What an item means, for comparison: its validated fields, bookkeeping left out."""
    out: dict[str, Any] = {"kind": item.kind,
                           **item.model.model_dump(mode="json", exclude=set(_BOOKKEEPING))}
    if isinstance(item.model, Scenario):
        for turn, dumped in zip(item.model.turns, out["turns"], strict=True):
            if not turn.sets_knowledge:
                dumped["knowledge"] = _INHERITED
    return out


def first_difference(a: Any, b: Any, path: Path_ = ()) -> tuple[Path_, Any, Any] | None:
    """The first place where ``a`` and ``b`` differ (keys in ``a``'s order, then ``b``'s new
    ones): its path and both values; ``None`` when they are the same, types included."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                return (*path, key), a.get(key, _MISSING), b.get(key, _MISSING)
            found = first_difference(a[key], b[key], (*path, key))
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                return ((*path, i), a[i] if i < len(a) else _MISSING,
                        b[i] if i < len(b) else _MISSING)
            found = first_difference(a[i], b[i], (*path, i))
            if found:
                return found
        return None
    return None if type(a) is type(b) and a == b else (path, a, b)


def _explained(old: SourceItem, new: SourceItem) -> bool:
    return bool((new.model.change_reason or "").strip()) and \
        new.model.version != old.model.version


def diff(old: Side, new: Side, allow_removal: bool = False) -> DatasetDiff:
    """Every item of ``old`` against ``new``, and the manifests against each other."""
    d = DatasetDiff(old, new, findings=[*old.errors, *new.errors])
    for item_id, before in old.items.items():
        after = new.items.get(item_id)
        if after is None:
            d.removed.append(before)
            continue
        _compare(d, before, after)
    d.added = [item for item_id, item in new.items.items() if item_id not in old.items]
    d.findings += [_removal(item, allow_removal) for item in d.removed]
    d.findings += list(_manifest_findings(d))
    return d


def _compare(d: DatasetDiff, before: SourceItem, after: SourceItem) -> None:
    if d.old.files[before.id] != d.new.files[after.id]:
        d.moved.append((before, after))
    if any(getattr(before.model, f) != getattr(after.model, f) for f in _REVIEW):
        d.reviewed.append((before, after))
    found = first_difference(canonical(before), canonical(after))
    if found is None:
        d.unchanged += 1
        return
    path, a, b = found
    change = Change(after, before, path, a, b, _explained(before, after))
    d.changed.append(change)
    if not change.explained:
        d.findings.append(_unexplained(change))


def _unexplained(c: Change) -> Finding:
    at = c.item.location_of(c.path if c.path and c.path[0] != "kind" else ())
    line = f" (line {at.line})" if at.line != c.item.location.line else ""
    fix = ("add change_reason: <why> and a new version:" if not c.item.model.change_reason
           else "it has a change_reason; give it a new version: too")
    return Finding("error", str(c.item.location),
                   f"changed since OLD: {field_name(c.path)} {_show(c.a)} → {_show(c.b)}"
                   f"{line}; if the change is meant, {fix} (OLD's version is "
                   f"{c.old.model.version or 'none'}, NEW's {c.item.model.version or 'none'});"
                   " else restore the item", c.field)


def _removal(item: SourceItem, allowed: bool) -> Finding:
    if allowed:
        return Finding("warning", str(item.location), "removed in NEW (--allow-removal)",
                       item.id)
    return Finding("error", str(item.location), "in OLD but not in NEW: a new version keeps "
                   "every item (change it with a change_reason instead, or pass "
                   "--allow-removal)", item.id)


def _manifest_findings(d: DatasetDiff) -> Iterator[Finding]:
    old, new = d.old.manifest, d.new.manifest
    if old is None or new is None:
        side = d.old if old is None else d.new
        yield Finding("warning", side.label, f"no {MANIFEST_NAME}: the versions are not "
                      "checked (add one with name, version and parent)")
        return
    where = d.new.manifest_at or d.new.label
    if new.name != old.name:
        yield Finding("warning", where, f"NEW is dataset {new.name!r}, OLD {old.name!r}",
                      "name")
    if new.parent != old.version:
        yield Finding("warning", where, f"parent is {new.parent or 'none'}, but OLD's version "
                      f"is {old.version}: set parent: {old.version}", "parent")
    if new.version == old.version and (d.added or d.removed or d.changed):
        yield Finding("warning", where, f"NEW changed but keeps OLD's version {old.version}: "
                      f"give it a new version (and parent: {old.version})", "version")


def _show(value: Any, n: int = 60) -> str:
    text = value if value in (_MISSING, _INHERITED) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= n else text[:n - 1] + "…"


# -- the command --------------------------------------------------------------------------------


def parse_spec(spec: str, git: str | None = None) -> tuple[str | None, str]:
    """``REV:PATH`` → (REV, PATH); an existing path, or one without ':', is a path."""
    if git is None and not Path(spec).exists() and ":" in spec:
        rev, _, path = spec.partition(":")
        return rev, path
    return git, spec


def _side(rev: str | None, path: str, cwd: Path, tmp: Path) -> Side:
    if rev is None:
        return load_side(Path(path), path, lambda p: locate(p, cwd))
    into = tmp / f"rev{len(list(tmp.iterdir()))}"
    folder = from_git(rev, path, cwd, into)
    return load_side(folder, f"{rev}:{path}", lambda p: f"{rev}:{locate(p, into)}")


def render(d: DatasetDiff) -> str:
    """The diff for a terminal or a CI log."""
    lines = [f"agenteval dataset diff: OLD {d.old.title} → NEW {d.new.title}",
             f"  unchanged {d.unchanged} · added {len(d.added)} · changed {len(d.changed)} "
             f"({sum(c.explained for c in d.changed)} explained) · removed {len(d.removed)} "
             f"· moved {len(d.moved)} · review changed {len(d.reviewed)}"]
    lines += _section("added", [f"{i.location}  {i.id}" for i in d.added])
    lines += _section("changed", [
        f"{c.item.location}  {c.item.id}  {field_name(c.path)}: {_show(c.a)} → {_show(c.b)}"
        + (f"  (version {c.old.model.version or 'none'} → {c.item.model.version}: "
           f"{c.item.model.change_reason})" if c.explained else "  (NOT explained)")
        for c in d.changed])
    lines += _section("removed", [f"{i.location}  {i.id}" for i in d.removed])
    lines += _section("moved", [f"{a.id}: {d.old.files[a.id]} → {d.new.files[b.id]}"
                                for a, b in d.moved])
    lines += _section("review changed", [
        f"{b.id}: {a.model.review_status} → {b.model.review_status}"
        + (f" (by {b.model.reviewed_by}, {b.model.reviewed_at})" if b.model.reviewed_by
           else "") for a, b in d.reviewed])
    lines += _section("errors", [str(f) for f in d.errors])
    lines += _section("warnings", [str(f) for f in d.warnings])
    lines.append("result: " + ("NEW keeps every item of OLD" + (
        " (every change explained)" if d.changed else "") + " (exit 0)" if not d.errors else
        f"NEW does not keep OLD: {len(d.errors)} error(s) (exit 1)"))
    return "\n".join(lines) + "\n"


def _section(title: str, rows: list[str]) -> list[str]:
    return [f"{title} ({len(rows)}):", *(f"  {r}" for r in rows)] if rows else []


def run(old: str, new: str | None = None, git: str | None = None,
        allow_removal: bool = False) -> int:
    """The command: exit 0 when NEW keeps OLD, 1 when it does not, 2 on misuse."""
    cwd = Path.cwd()
    rev, old_path = parse_spec(old, git)
    if new is None and rev is None:
        print("agenteval dataset diff: give NEW, or --git REV (or OLD as REV:PATH) to compare "
              "OLD at a revision with the working tree", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="agenteval-diff-") as tmp:
        try:
            before = _side(rev, old_path, cwd, Path(tmp))
            after = _side(*parse_spec(new or old_path), cwd, Path(tmp))
        except UsageError as exc:
            print(f"agenteval dataset diff: {exc}", file=sys.stderr)
            return 2
        result = diff(before, after, allow_removal)
    sys.stdout.write(render(result))
    return 1 if result.errors else 0
