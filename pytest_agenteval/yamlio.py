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
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(Location(name),
                          f"not UTF-8 ({exc.reason}); save the file as UTF-8") from exc
    return loads(text, name)


def loads(text: str, name: str = "<string>") -> YamlDoc:
    """Parse ``text`` as one YAML document (see :func:`load_yaml`)."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        raise SourceError(Location(name, line), f"invalid YAML: {problem}") from exc
    except yaml.YAMLError as exc:
        raise SourceError(Location(name), f"invalid YAML: {exc}") from exc
    doc = YamlDoc(name, None)
    if node is not None:
        doc.lines[()] = node.start_mark.line + 1
        doc.data = _Builder(doc).build(node, (), text_value=False)
    return doc


class _Builder:
    def __init__(self, doc: YamlDoc) -> None:
        self.doc = doc
        self.constructor = yaml.SafeLoader("")
        self.depth = 0

    def build(self, node: yaml.Node, path: Path_, text_value: bool) -> Any:
        self.depth += 1
        if self.depth > 200:
            raise self._error(node, "nesting deeper than 200 levels (recursive anchor?)")
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
