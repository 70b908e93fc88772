"""Writing case files people go on reading: safe YAML, the text as written, small maps inline.

Only :class:`yaml.SafeDumper` writes (no ``!!python`` tag can appear), Chinese text stays
as it is (``allow_unicode``), no anchors (every item stands alone), keys in the order
the item has them, and a small mapping or list of plain values on one line as the
shipped case files write them (``{path: …, value: …, usage: answer}``, ``[a, b]``). The
same input gives the same bytes.

A case file that exists already is never re-dumped (that would lose its comments):
:func:`insert_items` puts the new items' text at the end of its ``cases:`` or
``scenarios:`` list, and the caller re-reads the result before writing it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import yaml

__all__ = ["InsertError", "dump", "insert_items", "item_block", "render_file"]

#: a mapping or list of plain values whose JSON is at most this long is written inline
_INLINE = 90
_WIDTH = 4096
_SCALARS = (str, int, float, bool, type(None))


class InsertError(ValueError):
    """The existing file's list cannot take new items as text (say why, and the fix)."""


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # a list under a key is indented, as people write


def _inline(value: dict[str, Any] | list[Any]) -> bool:
    if not value:
        return True
    inner = value.values() if isinstance(value, dict) else value
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return False  # a list of mappings: one entry a line
    leaves = all(isinstance(v, _SCALARS) or (isinstance(v, dict | list) and _inline(v))
                 for v in inner)
    text = json.dumps(value, ensure_ascii=False)
    return leaves and "\\n" not in text and len(text) <= _INLINE


def _map(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(),
                                    flow_style=_inline(data))


def _seq(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=_inline(data))


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data.rstrip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(dict, _map)
_Dumper.add_representer(list, _seq)
_Dumper.add_representer(str, _str)


def dump(value: Any) -> str:
    """``value`` as block YAML (safe, unicode, no anchors, keys in their order)."""
    text: str = yaml.dump(value, Dumper=_Dumper, allow_unicode=True, sort_keys=False,
                          default_flow_style=False, width=_WIDTH, indent=2)
    return text


def item_block(data: dict[str, Any], comments: Sequence[str] = (), indent: str = "  ") -> str:
    """One list entry (``- id: …``) indented by ``indent``, each comment line above it."""
    lines = [f"{indent}# {c}".rstrip() for c in comments]
    lines += [f"{indent}{line}" if line else line for line in dump([data]).splitlines()]
    return "\n".join(lines) + "\n"


def render_file(header: Sequence[str], sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    """A whole case file: the header comment, then each non-empty section's blocks."""
    out = "".join(f"# {line}".rstrip() + "\n" for line in header)
    for name, blocks in sections:
        if blocks:
            out += ("\n" if out else "") + f"{name}:\n" + "\n".join(blocks)
    return out


_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(.*)$")


def _section_end(lines: list[str], start: int) -> int:
    """The index after the last line of the top-level block that starts at ``start``
    (trailing blank and comment lines belong to what follows)."""
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in " \t#-"):
        end += 1
    while end > start + 1 and (not lines[end - 1].strip()
                               or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _item_indent(lines: list[str], start: int, end: int) -> str:
    for line in lines[start + 1:end]:
        stripped = line.lstrip(" ")
        if stripped.startswith("- ") or stripped == "-":
            return line[:len(line) - len(stripped)]
    return "  "


def insert_items(text: str, section: str, blocks: Sequence[str]) -> str:
    """``text`` (a case file) with ``blocks`` (from :func:`item_block`, indent ``"  "``)
    at the end of its top-level ``section`` list; the section is added when missing.

    Raises:
        InsertError: the section is not a block list (``cases: []`` or ``cases: [...]``).
    """
    lines = text.splitlines()
    keys = [(i, m) for i, line in enumerate(lines) if (m := _TOP_KEY.match(line))]
    start, key = next(((i, m) for i, m in keys if m.group(1) == section), (None, None))
    if start is None or key is None:
        tail = "" if not text or text.endswith("\n") else "\n"
        return text + tail + "\n" + f"{section}:\n" + "\n".join(blocks)
    rest = key.group(2).split("#", 1)[0].strip()
    if rest:
        raise InsertError(f"its {section}: is written inline ({rest[:20]}…); write it as a "
                          f"block list (one '- id: …' entry a line) and promote again")
    end = _section_end(lines, start)
    indent = _item_indent(lines, start, end)
    new = [line if not line or indent == "  " else indent + line[2:]
           for block in blocks for line in ["", *block.rstrip("\n").split("\n")]]
    return "\n".join([*lines[:end], *new, *lines[end:]]) + "\n"
