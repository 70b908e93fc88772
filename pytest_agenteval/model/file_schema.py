"""The JSON Schema of a whole case file, from the pydantic models (for editors).

A case file holds ``defaults``, ``cases`` and ``scenarios``. The schema says what the
loader accepts, which is more than the models' own schemas say:

* ``defaults`` takes any field of a case or a scenario, each partial at every depth
  (``request: {history: [], knowledge: …}`` without ``input``): it is merged into
  every item before the item is validated;
* a text field (``input``, ``content``, ``title``, ``id``, ``value``, ``description``,
  ``match`` …, see :data:`~pytest_agenteval.yamlio.TEXT_KEYS`) takes an unquoted number
  or date too, kept as written (``input: 13800000000``); so does ``version``;
* ``judge`` takes ``true`` or ``false`` as well as a mapping.

``agenteval schema cases`` prints it; ``docs/schema/cases.schema.json`` is this schema,
kept current by a test.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..yamlio import TEXT_KEYS
from .cases import Case, Scenario

__all__ = ["case_file_schema"]

#: draft-07, the newest the YAML language server (VS Code's YAML extension) fully supports;
#: the schema uses no later keyword
_DIALECT = "http://json-schema.org/draft-07/schema#"
_DEFS = "#/definitions/"
_SCALAR_TEXT = ["string", "number", "boolean"]
_AS_TEXT = TEXT_KEYS | {"version"}


class _CaseFile(BaseModel):
    """A case file of pytest-agenteval: ``defaults`` merged (deep) into every case and
    scenario, ``cases`` (single-turn) and ``scenarios`` (multi-turn). See docs/cases.md."""

    model_config = ConfigDict(extra="forbid", title="pytest-agenteval case file")

    defaults: dict[str, Any] = Field(default_factory=dict)
    cases: list[Case] = Field(default_factory=list)
    scenarios: list[Scenario] = Field(default_factory=list)


def _text(prop: dict[str, Any]) -> None:
    """A string property (or a string|null one) takes any scalar, kept as text."""
    for option in [prop, *prop.get("anyOf", [])]:
        if option.get("type") == "string":
            option["type"] = list(_SCALAR_TEXT)


def _walk(node: Any) -> None:
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            if name in _AS_TEXT and isinstance(prop, dict):
                _text(prop)
        for value in node.values():
            _walk(value)
    elif isinstance(node, list):
        for value in node:
            _walk(value)


class _Partial:
    """Partial copies of schemas: nothing required through mappings, at any depth. An
    array's items stay whole (a list in ``defaults`` replaces the item's, it is not
    merged into it)."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.needed: list[str] = []

    def __call__(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: (v if k in ("items", "prefixItems") else self(v))
               for k, v in node.items() if k != "required"}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            name = ref.removeprefix(_DEFS)
            if name not in self.needed:
                self.needed.append(name)
            out["$ref"] = f"{ref}Partial"
        return out

    def defs_needed(self) -> dict[str, Any]:
        """The partial copy of every definition referenced so far (and of theirs)."""
        out: dict[str, Any] = {}
        while len(out) < len(self.needed):
            name = next(n for n in self.needed if f"{n}Partial" not in out)
            out[f"{name}Partial"] = self(copy.deepcopy(self.defs[name]))
        return out


def _defaults(defs: dict[str, Any]) -> dict[str, Any]:
    """The schema of ``defaults``: every field of a case or a scenario, all partial."""
    partial = _Partial(defs)
    props = partial({**defs["Scenario"]["properties"], **defs["Case"]["properties"]})
    defs.update(partial.defs_needed())
    return {"type": "object", "additionalProperties": False,
            "description": "Merged (deep) into every case and scenario of this file: any "
            "field of either, partial at every depth (each item completes it).",
            "properties": props}


def case_file_schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of a case file."""
    schema = _CaseFile.model_json_schema(ref_template=_DEFS + "{model}")
    defs: dict[str, Any] = schema.pop("$defs")
    judge = defs["JudgeOverride"]
    defs["JudgeOverride"] = {"anyOf": [judge, {"type": "boolean"}],
                             "description": judge.get("description", "")}
    _walk(defs)
    schema["properties"]["defaults"] = _defaults(defs)
    return {"$schema": _DIALECT, **schema, "definitions": dict(sorted(defs.items()))}
