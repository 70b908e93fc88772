"""Loading run records, their keys, the comparability checks and the dataset diff,
the item changes and the new red-line failures."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...privacy import Masker, clip

Record = Mapping[str, Any]
Key = tuple[str, int | None]
ChangeKind = Literal["fixed", "regressed", "status", "detail"]
_BAD = frozenset({"failed", "error"})


class CompareError(Exception):
    """A usage error (exit 2): a file that is not a run record, a bad option value."""


# -- loading -----------------------------------------------------------------------------------


def _record_path(raw: str) -> Path:
    """The ``results.json`` that ``raw`` names: the file, or the one in a run folder."""
    path = Path(raw)
    if path.is_file() and path.name == "latest" and path.stat().st_size < 256:
        path = path.parent / path.read_text(encoding="utf-8").strip()  # the pointer file
    if path.is_dir():
        if (path / "results.json").is_file():
            return path / "results.json"
        if (path / "results.jsonl").is_file():
            raise CompareError(f"{raw}: no results.json in this folder, only results.jsonl: "
                               "that run did not finish; compare finished runs")
        raise CompareError(f"{raw}: no results.json in this folder; give a results.json, a "
                           "run folder (reports/<timestamp>) or reports/latest")
    if not path.exists():
        raise CompareError(f"{raw}: no such file or folder")
    return path


def load_record(raw: str) -> tuple[Path, dict[str, Any]]:
    """The path and document of the run record ``raw`` names.

    Raises:
        CompareError: naming the file and what is wrong with it.
    """
    path = _record_path(raw)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareError(f"{path}: cannot be read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise CompareError(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: "
                           f"{exc.msg}); a results.json of pytest-agenteval is") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("run"), dict) \
            or not isinstance(doc.get("cases"), list):
        raise CompareError(f"{path}: not a results.json of pytest-agenteval (it needs an "
                           "object with 'run' and a list 'cases')")
    for i, case in enumerate(doc["cases"]):
        if not isinstance(case, dict) or "id" not in case or "status" not in case:
            raise CompareError(f"{path}: cases[{i}] has no 'id' or no 'status'; the record is "
                               "damaged or of another tool")
    return path, doc


def _get(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, Mapping):
            return None
        d = d.get(key)
    return d


def _key(case: Record) -> Key:
    trial = case.get("trial")
    return str(case["id"]), trial if isinstance(trial, int) else None


def item_label(item_id: str, trial: int | None) -> str:
    return item_id if trial is None else f"{item_id} [trial {trial}]"


# -- comparability -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One thing two comparable runs share; ``blocking`` ones decide comparability."""

    check: str
    a: Any
    b: Any
    blocking: bool

    @property
    def same(self) -> bool:
        return bool(self.a == self.b)


#: (check, path under ``run``, blocking)
_CHECKS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("dataset", ("dataset", "sha256"), True),
    ("ledger", ("rules", "ledger_sha256"), True),
    ("taxonomy", ("rules", "taxonomy_sha256"), False),
    ("judge_model", ("judge", "model"), True),
    ("rubric", ("judge", "rubric_sha256"), True),
    ("repeat", ("options", "repeat"), True),
)


def _dataset_version(doc: Record) -> str | None:
    """``name version`` of the run's dataset (its manifest), ``None`` without one."""
    name, version = _get(doc["run"], "dataset", "name"), _get(doc["run"], "dataset", "version")
    return None if name is None and version is None else f"{name or '?'} {version or '?'}"


def _checks(a: Record, b: Record) -> list[Check]:
    out = []
    for name, path, blocking in _CHECKS:
        va, vb = _get(a["run"], *path), _get(b["run"], *path)
        if name == "repeat":  # a record of a run without repeats may not say so
            va, vb = va or 1, vb or 1
        out.append(Check(name, va, vb, blocking))
        if name == "dataset":  # its name and version beside the hash: shown, never deciding
            out.append(Check("dataset_version", _dataset_version(a), _dataset_version(b),
                             False))
    return out


@dataclass(frozen=True)
class DatasetDiff:
    """The case files that differ (by path and hash), when the dataset hashes do."""

    files_changed: list[str] = field(default_factory=list)
    files_only_in_a: list[str] = field(default_factory=list)
    files_only_in_b: list[str] = field(default_factory=list)
    #: A's and B's dataset version when B's manifest names A's version as its parent
    #: (and the hashes differ): B grew from A
    grown: tuple[str, str] | None = None

    @property
    def lineage(self) -> str | None:
        if self.grown is None:
            return None
        return f"B's dataset is version {self.grown[1]} grown from A's ({self.grown[0]})"


def _files(doc: Record) -> dict[str, Any]:
    return {str(f.get("path")): f.get("sha256") for f in _get(doc["run"], "dataset", "files")
            or () if isinstance(f, Mapping)}


def _grown(a: Record, b: Record) -> tuple[str, str] | None:
    da, db = _get(a["run"], "dataset") or {}, _get(b["run"], "dataset") or {}
    if da.get("sha256") == db.get("sha256") or db.get("parent") is None \
            or db.get("parent") != da.get("version") or da.get("name") != db.get("name"):
        return None
    return str(da.get("version")), str(db.get("version"))


def _dataset_diff(a: Record, b: Record) -> DatasetDiff:
    fa, fb = _files(a), _files(b)
    return DatasetDiff(sorted(p for p in fa.keys() & fb.keys() if fa[p] != fb[p]),
                       sorted(fa.keys() - fb.keys()), sorted(fb.keys() - fa.keys()),
                       _grown(a, b))


# -- items -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Detail:
    """One facet of an item that differs between the runs (``field``: what)."""

    field: str
    a: str
    b: str


@dataclass(frozen=True)
class ItemChange:
    id: str
    trial: int | None
    change: ChangeKind
    a: str
    b: str
    title: str
    details: list[Detail]


@dataclass(frozen=True)
class ItemRef:
    """An item present in one run only."""

    id: str
    trial: int | None
    status: str
    title: str


def _failed_rules(case: Record) -> str:
    names = []
    for row in case.get("rules") or ():
        if row.get("status") == "failed":
            turn = row.get("turn")
            names.append(str(row.get("rule_id")) + (f" (turn {turn + 1})"
                                                    if isinstance(turn, int) else ""))
    return ", ".join(sorted(dict.fromkeys(names))) or "none"


def _intents(case: Record) -> str:
    turns = case.get("turns") or [case]
    return " | ".join(str(_get(t, "intent", "predicted") or "none") for t in turns)


def _judge_status(case: Record) -> str:
    return str(_get(case, "judge", "status") or "not_evaluated")


def _level(case: Record) -> str:
    return str(_get(case, "task", "success_level") or "not evaluated")


_FACETS: tuple[tuple[str, Callable[[Record], str]], ...] = (
    ("failed_rules", _failed_rules), ("intent", _intents), ("judge", _judge_status),
    ("success_level", _level))


def change_kind(a: str, b: str) -> ChangeKind | None:
    """``fixed``, ``regressed`` or ``status`` for a status change; ``None`` for none."""
    if a == b:
        return None
    if a in _BAD and b not in _BAD:
        return "fixed"
    if a not in _BAD and b in _BAD:
        return "regressed"
    return "status"


def _change(a: Record, b: Record, masker: Masker) -> ItemChange | None:
    details = []
    for name, facet in _FACETS:
        va, vb = facet(a), facet(b)
        if va != vb:
            details.append(Detail(name, masker.text(va), masker.text(vb)))
    sa, sb = str(a["status"]), str(b["status"])
    kind = change_kind(sa, sb) or ("detail" if details else None)
    if kind is None:
        return None
    item_id, trial = _key(b)
    return ItemChange(item_id, trial, kind, sa, sb, _title(b, masker), details)


def _title(case: Record, masker: Masker) -> str:
    return clip(masker.text(str(case.get("title") or "")), 120)


def _ref(case: Record, masker: Masker) -> ItemRef:
    item_id, trial = _key(case)
    return ItemRef(item_id, trial, str(case["status"]), _title(case, masker))


# -- red lines ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RedLine:
    """A veto rule that failed in B on an item where that rule did not fail in A."""

    id: str
    trial: int | None
    rule_id: str
    turn: int | None
    reason: str
    evidence: str
    only_in_b: bool


def _new_red_lines(a: Record | None, b: Record, masker: Masker) -> list[RedLine]:
    failed_in_a = {str(r.get("rule_id")) for r in (a or {}).get("rules") or ()
                   if r.get("status") == "failed"}
    out: dict[str, RedLine] = {}
    item_id, trial = _key(b)
    for row in b.get("rules") or ():
        rule_id = str(row.get("rule_id"))
        if row.get("veto") is True and row.get("status") == "failed" \
                and rule_id not in failed_in_a and rule_id not in out:
            turn = row.get("turn")
            out[rule_id] = RedLine(
                item_id, trial, rule_id, turn if isinstance(turn, int) else None,
                clip(masker.text(str(row.get("reason") or "")), 200),
                clip(masker.text(str(row.get("evidence") or "")), 200), a is None)
    return list(out.values())
