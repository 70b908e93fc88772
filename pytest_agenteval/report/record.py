"""The run record: ``results.jsonl`` as items finish, ``results.json`` at the end (SPEC 7).

Only the controller (or the single process) writes. Every record is made by
:func:`case_record` from an :class:`~.model.results.ItemResult` received with
pytest's own reports, so the record is the same with and without xdist. The
lines file is flushed per item, so an interrupted run keeps every item that
finished.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import sys
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from pydantic_core import from_json, to_json

__all__ = ["RunRecorder", "case_record", "dataset_fingerprint", "file_sha256", "joined",
           "json_line", "json_value", "point_latest"]


def json_line(value: Any) -> bytes:
    """``value`` (JSON-native, masked: no half character) as compact UTF-8 JSON on one line,
    by orjson: a quarter of pydantic-core's time and a twelfth of the ``json`` module's,
    for the per-item JSON of a run (the results.jsonl line, a worker's result, the
    report's case). A NaN or an infinity is written as ``null`` (strict JSON, which every
    reader and the report's page accept). What orjson refuses (an integer beyond 64 bits, a
    key that is not text, half a character) is left to pydantic-core, as before."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return to_json(value)


def json_value(text: str | bytes) -> Any:
    """A per-item JSON text read back (a :func:`json_line`, or a worker's result) by
    orjson; what it refuses by pydantic's parser (``NaN`` of an earlier version's line),
    and what that refuses (a lone surrogate, escaped) by the ``json`` module; what none
    reads raises ``ValueError``, as before."""
    try:
        return orjson.loads(text)
    except ValueError:
        pass
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


_VERSIONED = ("pytest-agenteval", "pytest", "pytest-xdist", "pytest-html", "aiohttp", "httpx",
              "pydantic", "openai", "PyYAML", "orjson")


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def file_sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def dataset_fingerprint(rootdir: Path, files: list[str]) -> dict[str, Any]:
    """Each case file with its hash, and one hash over all of them (sorted by path)."""
    entries = []
    total = hashlib.sha256()
    for name in sorted(set(files)):
        digest = file_sha256(rootdir / name)
        entries.append({"path": name, "sha256": digest})
        total.update(f"{name}\0{digest}\n".encode())
    return {"files": entries, "sha256": total.hexdigest() if entries else None}


def case_record(data: dict[str, Any]) -> dict[str, Any]:
    """The ``cases[]`` record of SPEC 7: the item with ``turns[]``, a case's fields also flat.

    ``data`` is an :class:`~.model.results.ItemResult` as JSON (``model_dump(mode="json")``,
    which is also what travels from xdist workers). A case keeps its one turn's
    ``rules``, ``intent``, ``rule_logic``, ``failure_reasons``, ``request`` and
    ``response`` at the top level; a scenario lists every turn's rule rows (each with
    its ``turn``) and its failure reasons (``turn N: …``). ``trial`` and ``trials``
    appear only with ``--agenteval-repeat``.
    """
    turns: list[dict[str, Any]] = data["turns"]
    record: dict[str, Any] = {key: data[key] for key in _HEAD}
    is_case = data["kind"] == "case"
    record.update(
        behavior=turns[0]["expected"]["behavior"] if is_case and turns else None,
        error=next((t["error"] for t in turns if t["error"]), None),
        latency_ms=round(sum(t["latency_ms"] for t in turns), 3),
        turn_latency_ms=[t["latency_ms"] for t in turns],
        judge=data["judge"],
        task=data["task"],
        termination=data["termination"],
    )
    if is_case:
        record.update(_case_fields(turns[0], data["history"]), turns=turns)
    else:
        record.update(
            rules=[{**row, "turn": t["index"]} for t in turns for row in t["rules"]],
            intent=None,
            failure_reasons=[f"turn {t['index'] + 1}: {why}" for t in turns
                             for why in t["failure_reasons"]],
            history=data["history"],
            turns=turns,
            turns_planned=data["turns_planned"],
        )
        if data.get("simulator") is not None:
            record["simulator"] = data["simulator"]
    record.update(nodeid=data["nodeid"], file=data["file"], line=data["line"])
    if data["trial"] is not None:
        record.update(trial=data["trial"], trials=data["trials"])
    return record


_HEAD = ("id", "kind", "status", "title", "priority", "test_family", "challenge", "source",
         "review_status", "tags", "pair", "behaviors", "judge_enabled", "outcome")


def _case_fields(turn: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, Any]:
    intent = turn["intent"]
    return {
        "rules": turn["rules"],
        "intent": intent,
        "rule_logic": turn["rule_logic"],
        "failure_reasons": turn["failure_reasons"],
        "request": {"input": turn["input"], "history": history,
                    "knowledge": turn["knowledge"], "extra": turn["extra"]},
        "response": {"output": turn["reply"], "intent_code": intent["code_returned"],
                     "intent_name": intent["name_returned"],
                     "conversation_id": turn["conversation_id"]},
    }


#: how much of results.jsonl :meth:`RunRecorder._cases` copies at a time
_BLOCK = 1 << 20
#: between two records of ``results.json``'s ``cases``, one a line
_NEXT_CASE = b",\n    "


def joined(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Records already in JSON as the pieces of ``cases``' text: each a line, the first
    bare, the others after :data:`_NEXT_CASE`."""
    first = True
    for line in lines:
        yield line if first else _NEXT_CASE + line
        first = False


def _write_document(out: BinaryIO, document: dict[str, Any], cases: Iterable[bytes]) -> None:
    """``document`` indented; its ``cases`` key holds the records whose text ``cases``
    gives in pieces (:func:`joined`: one record a line)."""
    out.write(b"{")
    for i, (key, value) in enumerate(document.items()):
        out.write(f"{',' if i else ''}\n  {json.dumps(key)}: ".encode())
        if key == "cases":
            out.write(b"[")
            first = True
            for piece in cases:
                if first:
                    out.write(b"\n    ")
                    first = False
                out.write(piece)
            out.write(b"]" if first else b"\n  ]")
        else:
            text = json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n  ")
            out.write(text.encode())
    out.write(b"\n}\n")


def _now() -> str:
    return dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")


def point_latest(reports_dir: Path, run_dir: Path) -> None:
    """Make ``reports/latest`` lead to ``run_dir``: a relative symlink, swapped in atomically;
    where symlinks cannot be made, a small file holding the run folder's name instead."""
    latest = reports_dir / "latest"
    if latest.is_dir() and not latest.is_symlink():
        return  # somebody's own folder of that name: leave it alone
    tmp = reports_dir / f".latest-{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)
        os.symlink(run_dir.name, tmp, target_is_directory=True)
        os.replace(tmp, latest)
    except OSError:
        tmp.unlink(missing_ok=True)
        try:
            latest.unlink(missing_ok=True)
            latest.write_text(run_dir.name + "\n", encoding="utf-8")
        except OSError:
            pass  # the record itself is written; the pointer is a convenience


class RunRecorder:
    """Owns ``reports/<timestamp>/`` for one run."""

    def __init__(self, reports_dir: Path) -> None:
        self.reports_dir = reports_dir
        self.started = _now()
        self._stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.run_dir: Path | None = None
        self._lines: BinaryIO | None = None
        self._end = 0  # where the next line of results.jsonl starts
        self._base = 0  # where this run's first line starts (0: a file of its own)
        self._count = 0  # lines appended

    def _ensure_dir(self) -> Path:
        if self.run_dir is None:
            base = self.reports_dir / self._stamp
            path, n = base, 1
            while True:
                try:
                    path.mkdir(parents=True, exist_ok=False)
                    break
                except FileExistsError:
                    n += 1
                    path = base.with_name(f"{self._stamp}-{n}")
            self.run_dir = path
        return self.run_dir

    def append(self, record: dict[str, Any]) -> int:
        """Write one finished item to ``results.jsonl`` and flush it to disk; returns where
        its line starts (``results.json`` copies the lines it names from the file: 10,000
        records are not held in memory till the end)."""
        if self._lines is None:
            self._lines = (self._ensure_dir() / "results.jsonl").open("ab")
            self._end = self._base = self._lines.tell()
        line = json_line(record) + b"\n"
        self._lines.write(line)
        self._lines.flush()  # in the OS now: survives Ctrl-C and a crashed pytest
        start, self._end = self._end, self._end + len(line)
        self._count += 1
        return start

    def lines(self, starts: Iterable[int]) -> Iterator[bytes]:
        """The lines of ``results.jsonl`` that start at ``starts`` (as :meth:`append` gave
        them), in the file's order, without their newline."""
        wanted = set(starts)
        if not wanted or self.run_dir is None:
            return
        with (self.run_dir / "results.jsonl").open("rb") as f:
            at = 0
            for line in f:
                if at in wanted:
                    yield line.rstrip(b"\n")
                at += len(line)

    def _cases(self, starts: Iterable[int]) -> Iterator[bytes]:
        """:func:`joined` of :meth:`lines`. When ``starts`` names every line of the file
        (a run whose items each finished once: the usual case), the file is copied in
        blocks, each newline but the last made a :data:`_NEXT_CASE` — a third of the time
        of a line at a time (10,200 records of 4 KB: 0.06 s against 0.16–0.25 s)."""
        wanted = set(starts)
        if not wanted or self.run_dir is None:
            return
        if self._base or len(wanted) != self._count:
            yield from joined(self.lines(wanted))
            return
        with (self.run_dir / "results.jsonl").open("rb") as f:
            block = f.read(_BLOCK)
            while block:
                after = f.read(_BLOCK)
                if not after:
                    block = block[:-1]  # the file's last newline ends the last record
                yield block.replace(b"\n", _NEXT_CASE)
                block = after

    def finish(self, document: dict[str, Any], starts: Iterable[int]) -> Path:
        """Write ``results.json`` atomically; returns its path.

        Its ``cases`` are the lines of ``results.jsonl`` that start at ``starts``.
        The document is indented for reading, except that each entry of ``cases``
        is one line: the pure-Python indenting encoder costs about 1 ms per case,
        the C encoder a tenth of that, and one case per line is what ``grep`` wants
        anyway.
        """
        if self._lines is not None:
            os.fsync(self._lines.fileno())
        run_dir = self._ensure_dir()
        path = run_dir / "results.json"
        tmp = path.with_suffix(".json.tmp")
        with tmp.open("wb") as out:
            _write_document(out, document, self._cases(starts))
        if self._lines is not None:
            self._lines.close()
            self._lines = None
        tmp.replace(path)
        point_latest(self.reports_dir, run_dir)
        return path

    def run_metadata(self, **fields: Any) -> dict[str, Any]:
        return {
            "started": self.started,
            "finished": _now(),
            "run_dir": str(self.run_dir) if self.run_dir else None,
            "argv": sys.argv[1:],
            "versions": _versions(),
            **fields,
        }
