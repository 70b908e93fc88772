"""Pydantic schemas of every document that crosses a boundary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..yamlio import SourceError, YamlDoc

__all__ = ["MultiSourceError", "describe_validation", "field_name", "validate_at"]

M = TypeVar("M", bound=BaseModel)
_Loc = tuple[str | int, ...]


def field_name(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _hint(err: Any) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown field; remove it or fix its spelling"
    if kind == "missing":
        return "required field is missing; add it"
    if kind == "literal_error":
        return f"{err['msg']}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return f"{err['msg']}"
    return str(err["msg"]).removeprefix("Value error, ")


def _data_path(doc_data: Any, loc: Sequence[str | int]) -> _Loc:
    """Drop pydantic's union-tag and type segments that are not in the data."""
    path: list[str | int] = []
    node = doc_data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
            path.append(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
            path.append(part)
        elif isinstance(part, str) and not isinstance(node, dict | list):
            continue
        elif isinstance(node, dict) and isinstance(part, str):
            if part.startswith("function-"):  # pydantic's validator segment, not a key
                continue
            path.append(part)  # a missing or extra key
            node = None
    return tuple(path)


def describe_validation(
    exc: ValidationError, doc: YamlDoc, data: Any, prefix: _Loc = ()
) -> list[SourceError]:
    """One :class:`SourceError` per pydantic error, with file, line and field."""
    out = []
    for err in exc.errors():
        rel = _data_path(data, err["loc"])
        full = (*prefix, *rel)
        out.append(SourceError(doc.at(full), _hint(err), field_name(full)))
    return out


def validate_at(model: type[M], data: Any, doc: YamlDoc, prefix: _Loc = ()) -> M:
    """Validate ``data`` (found at ``prefix`` in ``doc``); raise the first error located."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = describe_validation(exc, doc, data, prefix)
        raise MultiSourceError(errors) from None


class MultiSourceError(Exception):
    """Several located errors found in one document."""

    def __init__(self, errors: list[SourceError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))
