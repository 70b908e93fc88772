"""The items of a dataset as their files write them: ``defaults:`` merged, validated, located.

``dataset diff``, ``expand`` and ``promote`` work on what a case file *says* (the merged
mapping, anchors and ``<<`` merge keys resolved by :mod:`~pytest_agenteval.yamlio`), not
on the compiled plan a run executes: they compare it, vary it and write it out again.
Each item is validated with the case-file models all the same, so a broken item is the
same located error as at collection.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..casefile import merged_items
from ..model import MultiSourceError, validate_at
from ..model.cases import Case, Scenario
from ..model.dataset import MANIFEST_NAME, DatasetManifest
from ..yamlio import Location, YamlDoc, load_yaml

__all__ = ["SourceItem", "case_files", "items_of", "load_items", "tidy"]

Kind = Literal["case", "scenario"]


@dataclass(frozen=True)
class SourceItem:
    """One case or scenario of a file: its merged mapping, its model and where it is."""

    kind: Kind
    data: dict[str, Any]
    model: Case | Scenario
    doc: YamlDoc
    #: ``("cases", 3)``: where the item is in its file
    where: tuple[str, int]

    @property
    def id(self) -> str:
        return self.model.id

    @property
    def location(self) -> Location:
        return self.doc.at(self.where)

    def location_of(self, path: Iterable[str | int]) -> Location:
        """The line of a field of the item (the item's own line when a default gave it)."""
        return self.doc.at((*self.where, *path))


def load_items(path: Path, display: str) -> list[SourceItem]:
    """Every item of a case file, ``defaults:`` merged as collection merges them.

    Raises:
        SourceError, MultiSourceError: every defect of the file, located.
    """
    return items_of(load_yaml(path, display))


def items_of(doc: YamlDoc) -> list[SourceItem]:
    """Every item of a loaded case file (see :func:`load_items`): the mappings
    collection merges, validated as collection validates them."""
    merged, errors = merged_items(doc)
    out: list[SourceItem] = []
    for where, model, data in merged:
        try:
            out.append(SourceItem("case" if model is Case else "scenario", data,
                                  validate_at(model, data, doc, where), doc, where))
        except MultiSourceError as exc:
            errors += exc.errors
    if errors:
        raise MultiSourceError(errors)
    return out


def case_files(target: Path) -> list[Path]:
    """The case files of a dataset folder (its manifest's ``files``, else every YAML file
    but the manifest), or the one file ``target`` names; sorted."""
    if not target.is_dir():
        return [target]
    manifest = target / MANIFEST_NAME
    if manifest.is_file():
        from ..project import load_manifest

        return load_manifest(manifest).case_files(target)
    return DatasetManifest(name="-", version="0").case_files(target)


#: the order fields are written in (as the shipped case files write them); others follow
_ITEM_ORDER = ("id", "title", "priority", "test_family", "request", "knowledge", "history",
               "extra", "turns", "simulate", "expected", "outcome", "rules", "rule_logic",
               "rule_pass_threshold", "judge", "pair", "challenge", "source", "review_status",
               "reviewed_by", "reviewed_at", "version", "change_reason", "tags")
_MESSAGE_ORDER = ("input", "history", "knowledge", "extra", "expected", "rules", "rule_logic",
                  "rule_pass_threshold", "judge")


def _ordered(data: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    rank = {k: i for i, k in enumerate(order)}
    return dict(sorted(data.items(), key=lambda kv: rank.get(kv[0], len(order))))


def tidy(data: dict[str, Any]) -> dict[str, Any]:
    """The item's fields in the order a reader expects (id first, the message before its
    context, the marks last); values unchanged."""
    out = _ordered(data, _ITEM_ORDER)
    if isinstance(out.get("request"), dict):
        out["request"] = _ordered(out["request"], _MESSAGE_ORDER)
    if isinstance(out.get("turns"), list):
        out["turns"] = [_ordered(t, _MESSAGE_ORDER) if isinstance(t, dict) else t
                        for t in out["turns"]]
    return out
