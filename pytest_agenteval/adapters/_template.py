"""Request templates and response maps (SPEC 5)."""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["MISSING", "closest_path", "compiled", "dig", "leaf_paths", "render"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][\w.\-]*)\}")
MISSING = object()


def _lookup(name: str, values: dict[str, Any]) -> Any:
    head, _, rest = name.partition(".")
    value = values.get(head)
    for part in rest.split(".") if rest else ():
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def render(template: Any, values: dict[str, Any]) -> Any:
    """Fill a template: ``"{name}"`` alone keeps the value's type; inside text it is text.
    (An adapter compiles its template once: :func:`compiled`.)"""
    return compiled(template)(values)


def compiled(template: Any) -> Callable[[dict[str, Any]], Any]:
    """``template`` as a function of the values that fills it (see :func:`render`), its
    placeholders found once: an adapter fills the same template on every turn."""
    if isinstance(template, dict):
        fields = [(k, compiled(v)) for k, v in template.items()]
        return lambda values: {k: fill(values) for k, fill in fields}
    if isinstance(template, list):
        items = [compiled(v) for v in template]
        return lambda values: [fill(values) for fill in items]
    if not isinstance(template, str):
        return lambda values: template
    whole = _PLACEHOLDER.fullmatch(template)
    if whole and whole.group(1):
        name = whole.group(1)
        return lambda values: _lookup(name, values)
    pieces: list[tuple[str, str | None]] = []  # (text, None) or ("", placeholder's name)
    at = 0
    for m in _PLACEHOLDER.finditer(template):
        text = template[at:m.start()] + ("{" if m.group(0) == "{{" else
                                          "}" if m.group(0) == "}}" else "")
        pieces.append((text, None))
        if m.group(1):
            pieces.append(("", m.group(1)))
        at = m.end()
    pieces.append((template[at:], None))
    if all(name is None for _, name in pieces):
        constant = "".join(text for text, _ in pieces)
        return lambda values: constant
    return lambda values: "".join(text if name is None else _as_text(_lookup(name, values))
                                  for text, name in pieces)


def dig(data: Any, path: str) -> Any:
    """Follow a dotted path (``choices.0.message.content``); :data:`MISSING` if absent."""
    node = data
    for part in path.split("."):
        if isinstance(node, dict):
            if part not in node:
                return MISSING
            node = node[part]
        elif isinstance(node, list) and re.fullmatch(r"-?\d+", part):
            index = int(part)
            if not -len(node) <= index < len(node):
                return MISSING
            node = node[index]
        else:
            return MISSING
    return node


def leaf_paths(data: Any, limit: int = 500) -> list[str]:
    """The dotted paths of ``data``'s values (list items by index), breadth first."""
    out: list[str] = []
    queue: deque[tuple[str, Any]] = deque([("", data)])
    while queue and len(out) < limit:
        prefix, node = queue.popleft()
        children = (node.items() if isinstance(node, dict) else
                    enumerate(node[:20]) if isinstance(node, list) else ())
        for key, value in children:
            path = f"{prefix}.{key}" if prefix else str(key)
            out.append(path)
            queue.append((path, value))
    return out


def closest_path(data: Any, path: str) -> str | None:
    """The path of ``data`` most like ``path`` (a typo's likely fix), or ``None``."""
    import difflib

    found = difflib.get_close_matches(path, leaf_paths(data), n=1, cutoff=0.75)
    return found[0] if found else None
