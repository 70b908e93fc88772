"""Safe YAML loading that remembers where every value came from.

PyYAML's safe loader forgets line numbers, silently keeps the last of two
duplicate keys and turns ``13800000000`` into an int and ``2021-06-01`` into a
date. Case files need the opposite: every error names its line, duplicates
are errors, text fields keep the scalar exactly as written, and every value is
JSON-native (no dates, no sets) so it can travel through xdist and into the
run record. This module composes the node graph with the safe loader and
builds the Python values itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Location", "SourceError", "YamlDoc", "load_yaml", "locate"]

#: Keys whose scalar value is kept as the text written in the file.
TEXT_KEYS = frozenset(
    {"input", "content", "reply", "title", "id", "value", "note", "description", "match"}
)

_PLAIN = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_AS_TEXT = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"}

Path_ = tuple[str | int, ...]
#: libyaml's parser when PyYAML was built with it (about 10x faster); same nodes and marks
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Location:
    """A place in a source file (1-based line and column)."""

    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}"


class SourceError(Exception):
    """An input file is wrong; the message names file, line, field and the fix."""

    def __init__(self, location: Location, message: str, field: str = "") -> None:
        self.location = location
        self.field = field
        self.message = message
        where = f"{location}"
        if field:
            where += f" [{field}]"
        super().__init__(f"{where}: {message}")


@dataclass
class YamlDoc:
    """A loaded document and the line of every mapping key and sequence item."""

    file: str
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Iterable[str | int]) -> int | None:
        """Line of the deepest known prefix of ``path`` (None when unknown)."""
        key = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), None)

    def at(self, path: Iterable[str | int]) -> Location:
        return Location(self.file, self.line_of(path))


def locate(file: str | os.PathLike[str], rootdir: Path | None = None) -> str:
    """A short, stable display name for ``file`` (relative to rootdir when possible)."""
    p = Path(file)
    if rootdir is not None:
        try:
            return p.resolve().relative_to(rootdir.resolve()).as_posix()
        except ValueError:
            pass
    return str(p)


def load_yaml(path: Path, display: str | None = None) -> YamlDoc:
    """Load one YAML document safely; raise :class:`SourceError` on any defect."""
    name = display or str(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")  # a BOM is no content
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        start = raw.rfind(b"\n", 0, exc.start) + 1
        prefix = raw[start:exc.start].decode("utf-8", errors="replace").lstrip("\ufeff")
        column = len(prefix) + 1
        raise SourceError(Location(name, line, column),
                          f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}: "
                          f"{exc.reason}); save the file as UTF-8") from None
    return loads(text, name)


#: a YAML file may build at most this many values per node it writes (and this many more):
#: aliases of aliases expand exponentially (a 353-byte "billion laughs" to billions)
_EXPANSION = 50
_EXPANSION_FLOOR = 10_000


def loads(text: str, name: str = "<string>") -> YamlDoc:
    """Parse ``text`` as one YAML document (see :func:`load_yaml`)."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, name, text) from None
    except yaml.YAMLError as exc:
        raise SourceError(Location(name), f"invalid YAML: {exc}") from None
    doc = YamlDoc(name, None)
    if node is not None:
        doc.lines[()] = node.start_mark.line + 1
        budget = _EXPANSION * _distinct_nodes(node) + _EXPANSION_FLOOR
        doc.data = _Builder(doc, budget).build(node, (), text_value=False)
    return doc


def _syntax_error(exc: yaml.MarkedYAMLError, name: str, text: str) -> SourceError:
    """A parser error at the line a reader would look at, in words a reader knows."""
    problem = exc.problem or str(exc)
    mark = exc.problem_mark or exc.context_mark
    context = exc.context or ""
    if exc.context_mark is not None and "flow" in context:
        # an unclosed [ or {: the parser notices on a later line; the bracket is the defect
        opener = "[" if "sequence" in context else "{"
        at = exc.context_mark
        found = f" (found on line {mark.line + 1} instead)" if mark is not None else ""
        return SourceError(Location(name, at.line + 1, at.column + 1),
                           f"invalid YAML: the {opener!r} opened at column {at.column + 1} is "
                           f"not closed{found}; close it, or quote the text")
    if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        return SourceError(Location(name, mark.line + 1, mark.column + 1),
                           f"invalid YAML: a tab character at column {mark.column + 1}; YAML "
                           "indents with spaces only: replace the tab with spaces")
    line = mark.line + 1 if mark else None
    return SourceError(Location(name, line, mark.column + 1 if mark else None),
                       f"invalid YAML: {problem}")


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    return lines[line][column:column + 1] if 0 <= line < len(lines) else ""


def _distinct_nodes(root: yaml.Node) -> int:
    """How many nodes the file writes (an alias is its anchor's node, counted once)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += (key, value)
    return len(seen)


class _Builder:
    def __init__(self, doc: YamlDoc, budget: int) -> None:
        self.doc = doc
        self.constructor = yaml.SafeLoader("")
        self.depth = 0
        self.budget = self.left = budget

    def build(self, node: yaml.Node, path: Path_, text_value: bool) -> Any:
        self.depth += 1
        self.left -= 1
        if self.depth > 200:
            raise self._error(node, "nesting deeper than 200 levels (recursive anchor?)")
        if self.left < 0:
            raise self._error(node, f"aliases expand to more than {self.budget:,} values "
                              "(an alias bomb?); write the values out, or alias less deeply")
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            if isinstance(node, yaml.SequenceNode):
                return self._sequence(node, path)
            return self._scalar(node, text_value)
        finally:
            self.depth -= 1

    def _error(self, node: yaml.Node, message: str) -> SourceError:
        return SourceError(Location(self.doc.file, node.start_mark.line + 1), message)

    def _scalar(self, node: yaml.Node, text_value: bool) -> Any:
        if node.tag not in _PLAIN and node.tag not in _AS_TEXT:
            raise self._error(node, f"unsupported tag {node.tag!r}; write a plain value")
        if node.tag in _AS_TEXT or (text_value and node.tag != "tag:yaml.org,2002:null"):
            return str(node.value)
        return self.constructor.construct_object(node, deep=True)

    def _sequence(self, node: yaml.SequenceNode, path: Path_) -> list[Any]:
        if node.tag != "tag:yaml.org,2002:seq":
            raise self._error(node, f"unsupported tag {node.tag!r}; write a plain list")
        out = []
        for i, child in enumerate(node.value):
            self.doc.lines.setdefault((*path, i), child.start_mark.line + 1)
            out.append(self.build(child, (*path, i), text_value=False))
        return out

    def _mapping(self, node: yaml.MappingNode, path: Path_) -> dict[str, Any]:
        if node.tag != "tag:yaml.org,2002:map":
            raise self._error(node, f"unsupported tag {node.tag!r}; write a plain mapping")
        out: dict[str, Any] = {}
        # YAML merge: in `<<: [*a, *b]` the earlier mapping wins, explicit keys win over all
        for merged in reversed(self._merge_sources(node)):
            out.update(self.build(merged, path, text_value=False))
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self._key(key_node)
            if key in seen:
                raise self._error(key_node, f"duplicate key {key!r}; keep one of them")
            seen.add(key)
            self.doc.lines[(*path, key)] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, (*path, key), text_value=key in TEXT_KEYS)
        return out

    def _key(self, node: yaml.Node) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self._error(node, "a mapping key must be a plain scalar")
        if node.tag not in _PLAIN and node.tag not in _AS_TEXT:
            raise self._error(node, f"unsupported tag {node.tag!r} on a key; write a plain key")
        return str(node.value)

    def _merge_sources(self, node: yaml.MappingNode) -> list[yaml.MappingNode]:
        sources: list[yaml.MappingNode] = []
        for key_node, value_node in node.value:
            if key_node.tag != "tag:yaml.org,2002:merge":
                continue
            items = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for item in items:
                if not isinstance(item, yaml.MappingNode):
                    raise self._error(item, "'<<' merges only mappings")
                sources.append(item)
        return sources
