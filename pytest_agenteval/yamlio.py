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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ._gc import paused

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

#: Keys whose value is free-form data (no schema below them, so no error is ever located
#: inside): their inner values get no line of their own, which keeps a 100,000-case file's
#: line table small (a located error names the key's line)
FREEFORM_KEYS = frozenset({"knowledge", "extra"})

_STR = "tag:yaml.org,2002:str"

Path_ = tuple[str | int, ...]
#: libyaml's parser when PyYAML was built with it (about 10x faster); same events and marks
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: a plain scalar's tag depends on its text alone (the safe loader has no path resolvers):
#: remembered, a case file's repeated values (labels, field values) skip the regexes
_RESOLVED: dict[str, str] = {}
_RESOLVED_MAX = 200_000


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
    """Parse ``text`` as one YAML document (see :func:`load_yaml`).

    The values are built straight from the parser's events, without the node graph
    that ``yaml.compose`` would hold whole in memory (a 100,000-case file's graph was
    1.7 GB). The garbage collector is paused meanwhile: the objects are many and form
    no cycle, and the collector's passes over them while they grow cost more than the
    parsing (7 s instead of 1.5 s for 10,000 cases).

    A document as case files are written (no anchor, alias, merge key, explicit tag or
    duplicate key) is built in one pass by :func:`_plain`; any other, and every defect
    but a syntax error, is built or reported by :class:`_Builder`.
    """
    try:
        with paused():
            try:
                return _plain(text, name)
            except _NotPlain:
                return _Builder(YamlDoc(name, None), text).load()
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, name, text) from None
    except yaml.YAMLError as exc:
        raise SourceError(Location(name), f"invalid YAML: {exc}") from None


class _NotPlain(Exception):
    """The document needs :class:`_Builder`: an anchor, an alias, a merge key, a tag, a
    duplicate key, a key that is not a scalar, deep nesting or a second document."""


_MAPPING, _SEQUENCE, _SCALAR = yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.ScalarEvent
_MAPPING_END, _SEQUENCE_END = yaml.MappingEndEvent, yaml.SequenceEndEvent
_NULL = "tag:yaml.org,2002:null"
_KEY_TAGS = _PLAIN | _AS_TEXT
#: the nesting :func:`_plain` leaves to :class:`_Builder` (which stops at 200 with an error)
_PLAIN_DEPTH = 150


def _plain(text: str, name: str) -> YamlDoc:
    """The document of ``text`` as :class:`_Builder` builds it (the same values and the
    same lines), when it is plain: no anchor, alias, merge key, explicit tag or duplicate
    key, as case files are written. It reads the parser's events in one recursive pass
    with none of the builder's bookkeeping for aliases (a third less time a case), and
    raises :class:`_NotPlain` at the first event it leaves to the builder."""
    loader = _LOADER(text)
    try:
        return _Plain(loader.get_event, YamlDoc(name, None)).load()
    finally:
        loader.dispose()


class _Plain:
    """The one pass of :func:`_plain`."""

    __slots__ = ("constructors", "doc", "get", "lines", "resolve", "resolver", "strings",
                 "values")

    def __init__(self, get: Any, doc: YamlDoc) -> None:
        self.get = get
        self.doc = doc
        self.lines = doc.lines
        self.strings: dict[str, str] = {}
        self.resolver: Any = yaml.SafeLoader("")
        self.resolve: Any = self.resolver.resolve
        self.constructors = self.resolver.yaml_constructors
        #: the int, float, bool and null values by tag and text: built once
        self.values: dict[tuple[str, str], Any] = {}

    def load(self) -> YamlDoc:
        get = self.get
        get()  # StreamStart
        if get().__class__ is yaml.StreamEndEvent:
            return self.doc  # no document: DocumentStart never came
        root = get()
        self.lines[()] = _line(root)
        self.doc.data = self.build(root, (), False, 0)
        get()  # DocumentEnd
        if get().__class__ is not yaml.StreamEndEvent:
            raise _NotPlain  # a second document: the builder says so
        return self.doc

    def tag(self, event: Any) -> str:
        if event.anchor is not None or (event.tag is not None and event.tag != "!"):
            raise _NotPlain
        value, implicit = event.value, event.implicit
        if not implicit[0]:
            return _STR  # quoted
        found = _RESOLVED.get(value)
        if found is None:
            found = self.resolve(yaml.ScalarNode, value, implicit)
            if len(_RESOLVED) < _RESOLVED_MAX:
                _RESOLVED[value] = found
        return str(found)

    def scalar(self, event: Any, text_value: bool) -> Any:
        tag, value = self.tag(event), event.value
        if tag == _STR or (text_value and tag != _NULL and tag in _KEY_TAGS):
            return self.strings.setdefault(value, value)
        if tag in _AS_TEXT:
            return value
        if tag not in _PLAIN:
            raise _NotPlain  # a merge key's << or a = as a value
        key = (tag, value)
        out = self.values.get(key, self.values)
        if out is self.values:
            node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark)
            out = self.values[key] = self.constructors[tag](self.resolver, node)
        return out

    def build(self, event: Any, path: Path_, quiet: bool, depth: int) -> Any:
        kind = event.__class__
        if kind is _SCALAR:
            return self.scalar(event, False)
        if (depth > _PLAIN_DEPTH or event.anchor is not None
                or (event.tag is not None and event.tag != "!")):
            raise _NotPlain
        if kind is _MAPPING:
            return self.mapping(path, quiet, depth + 1)
        if kind is _SEQUENCE:
            return self.sequence(path, quiet, depth + 1)
        raise _NotPlain  # an alias

    def mapping(self, path: Path_, quiet: bool, depth: int) -> dict[str, Any]:
        get, lines, scalar, build = self.get, self.lines, self.scalar, self.build
        out: dict[str, Any] = {}
        while (key_event := get()).__class__ is not _MAPPING_END:
            if key_event.__class__ is not _SCALAR:
                raise _NotPlain
            key = key_event.value
            if self.tag(key_event) not in _KEY_TAGS or key in out:
                raise _NotPlain
            if not quiet:
                lines[(*path, key)] = _line(key_event)
            value = get()
            out[key] = (scalar(value, key in TEXT_KEYS) if value.__class__ is _SCALAR
                        else build(value, (*path, key), quiet or key in FREEFORM_KEYS, depth))
        return out

    def sequence(self, path: Path_, quiet: bool, depth: int) -> list[Any]:
        get, lines, build = self.get, self.lines, self.build
        items: list[Any] = []
        while (item := get()).__class__ is not _SEQUENCE_END:
            at = path
            if not quiet:
                at = (*path, len(items))
                if at not in lines:
                    lines[at] = _line(item)
            items.append(build(item, at, quiet, depth))
        return items


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


def _line(event: Any) -> int:
    """The 1-based line an event starts on."""
    return int(event.start_mark.line) + 1


class _Builder:
    """Builds the values of one document from the parser's events, with their lines.

    An anchored value's events are kept, and an alias replays them: every use of an
    alias builds its own copy (so each has its own lines and nothing is shared between
    items). The alias budget: every value built costs one, every event of the file
    earns ``_EXPANSION`` (a file may build at most ``_EXPANSION`` values per value it
    writes, plus ``_EXPANSION_FLOOR``), so an alias bomb runs out within a few thousand
    values.
    """

    def __init__(self, doc: YamlDoc, text: str) -> None:
        self.doc = doc
        self.events = yaml.parse(text, Loader=_LOADER)
        self.resolver: Any = yaml.SafeLoader("")
        self.constructors = self.resolver.yaml_constructors
        self.depth = 0
        self.left = _EXPANSION_FLOOR
        self.written = 0
        self.anchors: dict[str, list[Any]] = {}
        #: anchored values being built, with their events so far
        self._open: list[tuple[str, list[Any]]] = []
        self.recording: list[list[Any]] = []
        #: equal strings built once: a case file repeats its labels and knowledge values
        self.strings: dict[str, str] = {}
        #: inside a free-form value: no lines recorded
        self.quiet = 0

    # -- the event source --------------------------------------------------------------------

    def _next(self, replay: Iterator[Any] | None) -> Any:
        if replay is not None:
            return next(replay)
        event = next(self.events)
        self.written += 1
        self.left += _EXPANSION
        for events in self.recording:
            events.append(event)
        return event

    def load(self) -> YamlDoc:
        event = self._next(None)  # StreamStart
        event = self._next(None)
        if isinstance(event, yaml.StreamEndEvent):
            return self.doc
        node = self._next(None)  # DocumentStart → the root
        self.doc.lines[()] = node.start_mark.line + 1
        self.doc.data = self.build(node, None, (), text_value=False)
        self._next(None)  # DocumentEnd
        event = self._next(None)
        if not isinstance(event, yaml.StreamEndEvent):
            raise SourceError(Location(self.doc.file, event.start_mark.line + 1),
                              "invalid YAML: a second document (---); a file holds one document")
        return self.doc

    # -- values ------------------------------------------------------------------------------

    def build(self, event: Any, replay: Iterator[Any] | None, path: Path_,
              text_value: bool) -> Any:
        """The value that starts with ``event``; its other events come from ``replay`` (an
        alias being expanded) or from the parser."""
        if isinstance(event, yaml.AliasEvent):
            events = self._anchored(event)
            again = iter(events)
            return self.build(next(again), again, path, text_value)
        self.depth += 1
        self.left -= 1
        if self.depth > 200:
            raise self._error(event, "nesting deeper than 200 levels")
        if self.left < 0:
            budget = _EXPANSION * self.written + _EXPANSION_FLOOR
            raise self._error(event, f"aliases expand to more than {budget:,} values "
                              "(an alias bomb?); write the values out, or alias less deeply")
        anchor = getattr(event, "anchor", None) if replay is None else None
        if anchor is not None:
            if anchor in self.anchors or any(anchor == a for a, _ in self._open):
                raise self._error(event, f"the anchor &{anchor} is defined twice; rename one")
            self._open.append((anchor, [event]))
            self.recording.append(self._open[-1][1])
        try:
            if isinstance(event, yaml.MappingStartEvent):
                return self._mapping(event, replay, path)
            if isinstance(event, yaml.SequenceStartEvent):
                return self._sequence(event, replay, path)
            return self._scalar(event, text_value)
        finally:
            self.depth -= 1
            if anchor is not None:
                name, events = self._open.pop()
                self.recording.pop()
                self.anchors[name] = events

    def _anchored(self, alias: Any) -> list[Any]:
        events = self.anchors.get(alias.anchor)
        if events is not None:
            return events
        if any(alias.anchor == a for a, _ in self._open):
            raise self._error(alias, f"the alias *{alias.anchor} refers to the value it is "
                              "in (a recursive anchor); write the value out")
        raise self._error(alias, f"the alias *{alias.anchor} has no anchor &{alias.anchor} "
                          "before it; define the anchor first")

    def _error(self, event: Any, message: str) -> SourceError:
        return SourceError(Location(self.doc.file, event.start_mark.line + 1), message)

    def _tag(self, event: Any, kind: type[yaml.Node]) -> str:
        tag = event.tag
        if tag is not None and tag != "!":
            return str(tag)
        if kind is yaml.ScalarNode:
            value, implicit = event.value, event.implicit
            if implicit[0]:
                found = _RESOLVED.get(value)
                if found is None:
                    found = self.resolver.resolve(kind, value, implicit)
                    if len(_RESOLVED) < _RESOLVED_MAX:
                        _RESOLVED[value] = found
                return found
        return str(self.resolver.resolve(kind, None, event.implicit))

    def _scalar(self, event: Any, text_value: bool) -> Any:
        tag = self._tag(event, yaml.ScalarNode)
        if tag == _STR or (text_value and tag != "tag:yaml.org,2002:null"
                           and (tag in _PLAIN or tag in _AS_TEXT)):
            text = event.value
            return self.strings.setdefault(text, text)
        if tag not in _PLAIN and tag not in _AS_TEXT:
            raise self._error(event, f"unsupported tag {tag!r}; write a plain value")
        if tag in _AS_TEXT:
            return str(event.value)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark)
        return self.constructors[tag](self.resolver, node)

    def _sequence(self, start: Any, replay: Iterator[Any] | None,
                  path: Path_) -> list[Any]:
        tag = self._tag(start, yaml.SequenceNode)
        if tag != "tag:yaml.org,2002:seq":
            raise self._error(start, f"unsupported tag {tag!r}; write a plain list")
        out: list[Any] = []
        lines = None if self.quiet else self.doc.lines
        while not isinstance(event := self._next(replay), yaml.SequenceEndEvent):
            i = len(out)
            if lines is not None:
                lines.setdefault((*path, i), event.start_mark.line + 1)
            out.append(self.build(event, replay, (*path, i), text_value=False))
        return out

    def _mapping(self, start: Any, replay: Iterator[Any] | None,
                 path: Path_) -> dict[str, Any]:
        tag = self._tag(start, yaml.MappingNode)
        if tag != "tag:yaml.org,2002:map":
            raise self._error(start, f"unsupported tag {tag!r}; write a plain mapping")
        out: dict[str, Any] = {}
        merged: list[dict[str, Any]] = []
        while not isinstance(event := self._next(replay), yaml.MappingEndEvent):
            key_event = event
            if isinstance(key_event, yaml.AliasEvent):  # an aliased key: its scalar
                events = self._anchored(key_event)
                if len(events) != 1:
                    raise self._error(key_event, "a mapping key must be a plain scalar")
                key_event = events[0]
            value_event = self._next(replay)
            if not isinstance(key_event, yaml.ScalarEvent):
                raise self._error(key_event, "a mapping key must be a plain scalar")
            key_tag = self._tag(key_event, yaml.ScalarNode)
            if key_tag == "tag:yaml.org,2002:merge":
                merged += self._merge(value_event, replay, path)
                continue
            if key_tag not in _PLAIN and key_tag not in _AS_TEXT:
                raise self._error(key_event, f"unsupported tag {key_tag!r} on a key; write a "
                                  "plain key")
            key = str(key_event.value)
            if key in out:
                raise self._error(key_event, f"duplicate key {key!r}; keep one of them")
            if not self.quiet:
                self.doc.lines[(*path, key)] = _line(key_event)
            quiet = key in FREEFORM_KEYS
            self.quiet += quiet
            try:
                out[key] = self.build(value_event, replay, (*path, key),
                                      text_value=key in TEXT_KEYS)
            finally:
                self.quiet -= quiet
        if not merged:
            return out
        # YAML merge: in `<<: [*a, *b]` the earlier mapping wins, explicit keys win over all
        whole: dict[str, Any] = {}
        for source in reversed(merged):
            whole.update(source)
        whole.update(out)
        return whole

    def _merge(self, event: Any, replay: Iterator[Any] | None,
               path: Path_) -> list[dict[str, Any]]:
        """The mappings a ``<<`` merges: one, or a list of them."""
        if isinstance(event, yaml.SequenceStartEvent):
            sources = []
            while not isinstance(item := self._next(replay), yaml.SequenceEndEvent):
                sources += self._merge(item, replay, path)
            return sources
        value = self.build(event, replay, path, text_value=False)
        if not isinstance(value, dict):
            raise self._error(event, "'<<' merges only mappings")
        return [value]

