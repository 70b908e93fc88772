"""Loading one case file: YAML → defaults merged → validated → compiled plans.

Pure (no pytest), so ``agenteval lint`` and the collector share it. Every
defect of a file is collected, not just the first, so one run shows the whole
list of fixes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .ledger import Ledger
from .model import MultiSourceError, field_name, validate_at
from .model.cases import Case, CaseFileModel, Scenario
from .plan import ItemPlan, RuleBindError, compile_case, compile_scenario
from .yamlio import Location, SourceError, YamlDoc, load_yaml

__all__ = ["LoadedFile", "LoadedItem", "deep_merge", "load_case_file", "load_case_items",
           "merged_items"]

_CASE_FIELDS = frozenset(Case.model_fields)
_SCENARIO_FIELDS = frozenset(Scenario.model_fields)


@dataclass(frozen=True)
class LoadedItem:
    """One item of a case file: where it is, its validated model (defaults merged) and
    its compiled plan."""

    where: tuple[str, int]
    model: Case | Scenario
    plan: ItemPlan
    location: Location


@dataclass(frozen=True)
class LoadedFile:
    """A loaded case file: the document (values and lines) and its items."""

    doc: YamlDoc
    items: list[LoadedItem]


def load_case_file(path: Path, display: str, ledger: Ledger | None = None,
                   labels: Sequence[str] | None = None) -> list[tuple[ItemPlan, Location]]:
    """Every item of the file with its location; raises Source/MultiSourceError.

    With ``labels`` (the taxonomy's), an expected behaviour that is not one of
    them is an error of its line: it would otherwise be a phantom label in the
    intent metrics.
    """
    return [(i.plan, i.location) for i in _entries(load_yaml(path, display), ledger, labels)]


def load_case_items(path: Path, display: str, ledger: Ledger | None = None,
                    labels: Sequence[str] | None = None) -> LoadedFile:
    """As :func:`load_case_file`, keeping the document and each item's model (for
    ``agenteval lint``, which checks what the items mean)."""
    doc = load_yaml(path, display)
    return LoadedFile(doc, _entries(doc, ledger, labels))


def deep_merge(base: Any, override: Any) -> Any:
    """``override`` on top of ``base``: mappings merge key by key, anything else replaces.

    Nothing is copied: the loader builds every value of a file afresh (an alias too), and
    what a default gives several items is only ever read."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = deep_merge(base[key], value) if key in base else value
        return out
    return override


_Merged = tuple[tuple[str, int], type[Case] | type[Scenario], dict[str, Any]]


def merged_items(doc: YamlDoc) -> tuple[list[_Merged], list[SourceError]]:
    """The items of a loaded case file as it writes them: each one's place (``("cases",
    3)``), model and mapping with ``defaults:`` merged; and the file's own errors (a
    default that is no field). What collection compiles, and what ``agenteval dataset``
    compares, varies and writes out again.

    Raises:
        SourceError, MultiSourceError: the file is empty, not a mapping, or its top level
            is invalid.
    """
    if doc.data is None:
        raise SourceError(doc.at(()), "empty file; add 'cases:' or 'scenarios:'")
    if not isinstance(doc.data, dict):
        raise SourceError(doc.at(()), "the top level must be a mapping with 'cases:' "
                          "and/or 'scenarios:'")
    top = validate_at(CaseFileModel, doc.data, doc)
    if not top.cases and not top.scenarios:
        raise SourceError(doc.at(()), "no 'cases:' or 'scenarios:' in this file")
    errors: list[SourceError] = [
        SourceError(doc.at(("defaults", key)), "not a field of a case or a scenario; remove it"
                    " or fix its spelling", f"defaults.{key}")
        for key in top.defaults if key not in _CASE_FIELDS | _SCENARIO_FIELDS]
    items: list[_Merged] = []
    # each default goes to the items that have such a field (`knowledge:` to scenarios,
    # `request:` to cases, `priority:` to both)
    for section, model, fields in (("cases", Case, _CASE_FIELDS),
                                   ("scenarios", Scenario, _SCENARIO_FIELDS)):
        defaults = {k: v for k, v in top.defaults.items() if k in fields}
        items += [((section, i), model, deep_merge(defaults, raw))
                  for i, raw in enumerate(getattr(top, section))]
    return items, errors


def _entries(doc: YamlDoc, ledger: Ledger | None,
             labels: Sequence[str] | None) -> list[LoadedItem]:
    merged, errors = merged_items(doc)
    out: list[LoadedItem] = []
    for where, model, data in merged:
        try:
            out.append(_one(doc, where, model, data, ledger, labels))
        except MultiSourceError as exc:
            errors += exc.errors
        except SourceError as exc:
            errors.append(exc)
    if errors:
        raise MultiSourceError(errors)
    return out


def _unknown_labels(doc: YamlDoc, where: tuple[str, int], item: Case | Scenario,
                    labels: Sequence[str]) -> list[SourceError]:
    expectations: list[tuple[tuple[str | int, ...], str | None]] = (
        [((), item.expected.behavior)] if isinstance(item, Case)
        else [(("turns", i), t.expected.behavior) for i, t in enumerate(item.turns)])
    known = ", ".join(labels)
    return [SourceError(doc.at((*where, *path, "expected", "behavior")),
                        f"unknown label {label!r}; the taxonomy's labels are: {known}",
                        field_name((*where, *path, "expected", "behavior")))
            for path, label in expectations if label is not None and label not in labels]


def _one(doc: YamlDoc, where: tuple[str, int], model: type[Case] | type[Scenario],
         data: dict[str, Any], ledger: Ledger | None,
         labels: Sequence[str] | None) -> LoadedItem:
    item = validate_at(model, data, doc, where)
    if labels is not None:
        unknown = _unknown_labels(doc, where, item, labels)
        if unknown:
            raise MultiSourceError(unknown)
    try:
        plan = (compile_case(item, ledger) if isinstance(item, Case)
                else compile_scenario(item, ledger))
    except RuleBindError as exc:
        raise MultiSourceError([
            SourceError(doc.at((*where, *path)), msg, field_name((*where, *path)))
            for path, msg in exc.problems]) from None
    return LoadedItem(where, item, plan, doc.at(where))

