"""``agenteval merge OUT_DIR A B …``: the shard records of one run, merged into one record.

Each input is a ``results.json`` (or a run folder, or ``reports/latest``) of a
``--agenteval-shard i/n`` run. The merged record is what a single run of the
whole suite would have written: its cases are the shards' cases, and its
metrics, review queue, completeness and gate are recomputed from them with the
recorder's own code (:func:`~..metrics.summarize`, :func:`~..metrics.gates.
evaluate_gate`, the gate file of the project's rules folder), never summed from
the shards' figures.

A missing shard (a record says ``count: 4`` and no given record is shard 3),
a shard given twice, or an item in two records makes the merged completeness
incomplete, which blocks the gate. Records of different collections, datasets,
ledgers, taxonomies, rubrics, judge models or repeat counts are refused unless
``--force`` (then merged, and incomplete).

Exit status: 0 when the merged gate is not BLOCK, 1 when it is, 2 on a usage error.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, TextIO

from ..model.results import Completeness, ItemResult

if TYPE_CHECKING:
    from ..metrics import RunMetrics
    from ..model.gates import GateResult
    from ..project import Project

__all__ = ["MergeError", "Merged", "item_result", "merge", "run"]


class MergeError(Exception):
    """A usage error (exit 2): an input that is not a run record, records that differ."""


# -- the inputs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """One given record: where it is, and its document."""

    path: Path
    doc: dict[str, Any]

    @property
    def run(self) -> dict[str, Any]:
        run: dict[str, Any] = self.doc["run"]
        return run

    @property
    def shard(self) -> dict[str, Any] | None:
        shard = self.run.get("shard")
        return shard if isinstance(shard, dict) else None

    @property
    def completeness(self) -> Completeness:
        return Completeness.model_validate(self.doc.get("completeness") or {})

    @property
    def label(self) -> str:
        s = self.shard
        return f"{self.path} (shard {s['index']}/{s['count']})" if s else f"{self.path} (no shard)"


def load_pieces(raws: Sequence[str]) -> list[Piece]:
    from .compare._records import CompareError, load_record

    pieces = []
    for raw in raws:
        try:
            path, doc = load_record(raw)
        except CompareError as exc:
            raise MergeError(str(exc)) from None
        pieces.append(Piece(path.resolve(), doc))
    return pieces


def _get(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, Mapping):
            return None
        d = d.get(key)
    return d


#: what every shard of one run shares: (what, path under ``run``)
_SAME: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("number of shards", ("shard", "count")),
    ("partitioned collection", ("shard", "collection_sha256")),
    ("rule ledger", ("rules", "ledger_sha256")),
    ("taxonomy", ("rules", "taxonomy_sha256")),
    ("judge model", ("judge", "model")),
    ("judge rubric", ("judge", "rubric_sha256")),
    ("repeat count", ("options", "repeat")),
)


def differences(pieces: Sequence[Piece]) -> list[str]:
    """What the records do not share, each said once (empty: shards of one run)."""
    out = [f"{p.path} is not a shard record (its run had no --agenteval-shard)"
           for p in pieces if p.shard is None]
    for what, path in _SAME:
        among = [p for p in pieces if p.shard is not None or path[0] != "shard"]
        if len({json.dumps(_get(p.run, *path)) for p in among}) > 1:
            out.append(f"the {what} differs: " + "; ".join(
                f"{p.path}: {_get(p.run, *path)}" for p in pieces))
    files: dict[str, set[Any]] = {}
    for p in pieces:
        for f in _get(p.run, "dataset", "files") or ():
            files.setdefault(str(f.get("path")), set()).add(f.get("sha256"))
    changed = sorted(name for name, hashes in files.items() if len(hashes) > 1)
    if changed:
        out.append("the dataset differs: these case files have another content in another "
                   "record: " + ", ".join(changed))
    return out


def coverage(pieces: Sequence[Piece]) -> tuple[int | None, list[int], list[int]]:
    """The number of shards, the indexes no record holds, and those held twice or more."""
    shards = [p.shard for p in pieces if p.shard is not None]
    if not shards:
        return None, [], []
    count = max(int(s["count"]) for s in shards)
    seen = Counter(int(s["index"]) for s in shards)
    missing = [i for i in range(1, count + 1) if i not in seen]
    return count, missing, sorted(i for i, n in seen.items() if n > 1)


# -- the cases ---------------------------------------------------------------------------------

#: fields of a case record that :func:`~.record.case_record` derives from the item
_DERIVED = ("behavior", "error", "latency_ms", "turn_latency_ms", "rules", "intent",
            "failure_reasons", "rule_logic", "request", "response")


def item_result(record: Mapping[str, Any]) -> ItemResult:
    """The :class:`ItemResult` a case record was made from (the inverse of ``case_record``):
    the derived fields dropped, a case's history taken back from its ``request``."""
    data = {k: v for k, v in record.items() if k not in _DERIVED}
    if record.get("kind") == "case":
        data["history"] = _get(record, "request", "history") or []
    return ItemResult.model_validate(data)


def _order(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """Collection order, as near as the records tell it: file (by folder), line, trial."""
    line, trial = record.get("line"), record.get("trial")
    return (PurePosixPath(str(record.get("file", ""))).parts, line if line is not None else -1,
            trial if trial is not None else -1, str(record.get("nodeid", "")))


def merged_cases(pieces: Sequence[Piece]) -> tuple[list[dict[str, Any]], list[str]]:
    """Every case record once (the first record's, in collection order), and the node ids
    that more than one record holds."""
    first: dict[str, dict[str, Any]] = {}
    twice: set[str] = set()
    for p in pieces:
        for record in p.doc["cases"]:
            nodeid = str(record.get("nodeid") or record["id"])
            if nodeid in first:
                twice.add(nodeid)
            else:
                first[nodeid] = record
    return sorted(first.values(), key=_order), sorted(twice)


def merged_completeness(pieces: Sequence[Piece], received: int, twice: Sequence[str],
                        missing_shards: Sequence[int],
                        conflicts: Sequence[str] = ()) -> Completeness:
    """The shards' completeness together; ``expected`` counts a missing shard's items too
    when the records say how many the whole collection holds."""
    parts = [p.completeness for p in pieces]
    totals = {(p.shard or {}).get("total_items") for p in pieces}
    total = next(iter(totals)) if len(totals) == 1 else None
    missing = list(dict.fromkeys(n for c in parts for n in c.missing))
    lost = {k: v for c in parts for k, v in c.lost.items()}
    skipped = {k: v for c in parts for k, v in c.skipped.items()}
    duplicates = sorted({n for c in parts for n in c.duplicates} | set(twice))
    broken = sorted({f for c in parts for f in c.collection_errors})
    return Completeness(
        expected=max(received + len(missing) + len(skipped),
                     total if isinstance(total, int) else 0),
        received=received, missing=missing, lost=lost, skipped=skipped,
        duplicates=duplicates, collection_errors=broken,
        stopped_early=any(c.stopped_early for c in parts),
        missing_shards=list(missing_shards), merge_conflicts=list(conflicts),
        complete=not (missing or duplicates or broken or missing_shards or conflicts))


def _dataset(pieces: Sequence[Piece]) -> dict[str, Any]:
    """The union of the shards' case files, hashed as the recorder hashes a dataset."""
    files: dict[str, Any] = {}
    for p in pieces:
        for f in _get(p.run, "dataset", "files") or ():
            files.setdefault(str(f.get("path")), f.get("sha256"))
    total = hashlib.sha256()
    for name in sorted(files):
        total.update(f"{name}\0{files[name]}\n".encode())
    first = _get(pieces[0].run, "dataset") if pieces else None
    named = {k: (first or {}).get(k) for k in ("name", "version", "parent", "manifest")}
    return {"files": [{"path": n, "sha256": files[n]} for n in sorted(files)],
            "sha256": total.hexdigest() if files else None, **named}


# -- the project (gate file, taxonomy, ledger) -------------------------------------------------


def resolve_project(pieces: Sequence[Piece], config: str | None,
                    rules_dir: str | None) -> Project:
    """The project whose rules decide the merged gate: that of ``--config``, else the
    records' own (``run.rootdir``, when it is on this machine), else the current folder's;
    ``--rules-dir`` replaces its rules folder."""
    from ..config import ConfigError, load_config
    from ..project import Project

    cwd = Path.cwd()
    root = Path(config).resolve().parent if config else _record_root(pieces)
    if root is None and (rules_dir or (cwd / "agenteval.yaml").is_file()):
        root = cwd
    if root is None:
        raise MergeError(f"cannot find the project these records ran in (their rootdir "
                         f"{pieces[0].run.get('rootdir')} is not on this machine): give "
                         "--config path/to/agenteval.yaml or --rules-dir path/to/rules")
    try:
        project = Project(root, load_config(root, str(Path(config).resolve()) if config
                                            else None))
    except ConfigError as exc:
        raise MergeError(str(exc)) from None
    if rules_dir:
        project.rules_dir = Path(rules_dir).resolve()
        if not project.rules_dir.is_dir():
            raise MergeError(f"--rules-dir {rules_dir}: no such folder")
    return project


def _record_root(pieces: Sequence[Piece]) -> Path | None:
    for p in pieces:
        root = p.run.get("rootdir")
        if isinstance(root, str) and Path(root).is_dir():
            config = p.run.get("config_file")
            if config is None or (Path(root) / config).is_file():
                return Path(root)
    return None


def rules_differences(project: Project, pieces: Sequence[Piece]) -> list[str]:
    """The project's ledger and taxonomy against the ones the shards ran with."""
    from .record import file_sha256

    out = []
    for what, name, key in (("rule ledger", "business-rules.yaml", "ledger_sha256"),
                            ("taxonomy", "taxonomy.yaml", "taxonomy_sha256")):
        here = file_sha256(project.rules_dir / name)
        ran = {_get(p.run, "rules", key) for p in pieces}
        if ran != {here}:
            out.append(f"the {what} in {project.rules_dir} is not the one the records ran "
                       "with (another hash): give --rules-dir of the checkout they ran on")
    return out


# -- merging -----------------------------------------------------------------------------------


@dataclass
class Merged:
    """The merged record and the figures decided from it."""

    document: dict[str, Any]
    cases: list[dict[str, Any]]
    metrics: RunMetrics
    completeness: Completeness
    gate: GateResult


def _subset(run: Mapping[str, Any], skipped: int = 0) -> str | None:
    """How the shards' selection was narrowed besides sharding (as the recorder says it),
    with the ``skipped`` items of all the shards."""
    from ..metrics.gates import skipped_part

    argv = [str(a) for a in run.get("argv") or ()]
    options = run.get("options") or {}
    parts = [f"-k {options['keyword']}" if options.get("keyword") else "",
             f"-m {options['markexpr']}" if options.get("markexpr") else "",
             "--lf" if {"--lf", "--last-failed"} & set(argv) else "",
             "--deselect" if any(a.startswith("--deselect") for a in argv) else "",
             "node ids" if any("::" in a and not a.startswith("-") for a in argv) else "",
             skipped_part(skipped)]
    named = [p for p in parts if p]
    return ", ".join(named) if named else None


def merge(pieces: Sequence[Piece], project: Project, out_dir: Path,
          differences_seen: Sequence[str] = (), forced: bool = False,
          argv: Sequence[str] = ()) -> Merged:
    """Merge ``pieces`` into one record (nothing written)."""
    from ..metrics import summarize
    from ..metrics.gates import evaluate_gate, not_configured
    from ..metrics.judge import review_queue

    count, missing_shards, repeated = coverage(pieces)
    cases, twice = merged_cases(pieces)
    items = [item_result(c) for c in cases]
    gates, source = project.gates
    metrics = summarize(items, project.labels(), gates.red_lines if gates else None)
    completeness = merged_completeness(pieces, len(cases), twice, missing_shards,
                                       differences_seen)
    subset = _subset(pieces[0].run, len(completeness.skipped))
    gate = (evaluate_gate(gates, source or "", metrics, items, completeness,
                          project.masker.text(subset) if subset else None)
            if gates else not_configured())
    document = {
        "run": _run_meta(pieces, out_dir, count, missing_shards, repeated,
                         differences_seen, forced, argv),
        "cases": None,
        "metrics": metrics.to_json(),
        "review_queue": review_queue(items),
        "gate": gate.model_dump(mode="json"),
        "completeness": completeness.model_dump(mode="json"),
    }
    return Merged(document, cases, metrics, completeness, gate)


def _run_meta(pieces: Sequence[Piece], out_dir: Path, count: int | None,
              missing: list[int], repeated: list[int], diffs: Sequence[str],
              forced: bool, argv: Sequence[str]) -> dict[str, Any]:
    runs = [p.run for p in pieces]
    meta = {k: v for k, v in runs[0].items() if k not in ("shard", "merged")}
    starts = [str(r["started"]) for r in runs if r.get("started")]
    ends = [str(r["finished"]) for r in runs if r.get("finished")]
    meta.update(
        started=min(starts) if starts else meta.get("started"),
        finished=max(ends) if ends else meta.get("finished"),
        run_dir=str(out_dir), argv=list(argv),
        dataset=_dataset(pieces),
        duration_s=max(float(r.get("duration_s") or 0.0) for r in runs),
        merged={"shards": count, "missing": missing, "repeated": repeated,
                "differences": list(diffs), "forced": forced,
                "given": [_given(p) for p in pieces]})
    return meta


def _given(p: Piece) -> dict[str, Any]:
    s, c = p.shard or {}, p.completeness
    return {"path": str(p.path), "index": s.get("index"), "count": s.get("count"),
            "items": c.expected, "received": c.received, "complete": c.complete,
            "started": p.run.get("started"), "duration_s": p.run.get("duration_s")}


# -- writing -----------------------------------------------------------------------------------


def write(merged: Merged, out_dir: Path, lang: str | None, titles: Mapping[str, str]) -> Path:
    """``results.jsonl``, ``results.json`` and ``report.html`` in ``out_dir``."""
    from .digest import Digest
    from .html import write_report
    from .record import _write_document, joined

    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(c, ensure_ascii=False) for c in merged.cases]
    _atomic(out_dir / "results.jsonl", "".join(line + "\n" for line in lines))
    path = out_dir / "results.json"
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        _write_document(f, merged.document, joined(line.encode() for line in lines))
    tmp.replace(path)
    digest = Digest()
    for c in merged.cases:
        digest.add(c)
    write_report(out_dir / "report.html", merged.document, digest,
                 lang or merged.document["run"].get("language"), titles)
    return path


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _refuse(diffs: Sequence[str]) -> MergeError:
    return MergeError("these records are not the shards of one run:\n"
                      + "\n".join(f"  - {d}" for d in diffs)
                      + "\nmerge the records of one run (same collection, dataset, ledger, "
                      "rubric), or give --force to merge them anyway (the merged run is then "
                      "incomplete: its gate blocks)")


def run(out_dir: str, inputs: Sequence[str], *, config: str | None = None,
        rules_dir: str | None = None, force: bool = False, lang: str | None = None,
        out: TextIO | None = None) -> int:
    """``agenteval merge``: returns the exit status (0, 1 on BLOCK, 2 on a usage error)."""
    out = out or sys.stdout
    try:
        merged, path = _run(Path(out_dir), inputs, config, rules_dir, force, lang)
    except MergeError as exc:
        print(f"agenteval merge: {exc}", file=sys.stderr)
        return 2
    _tell(out, merged, path)
    return 1 if merged.gate.result == "BLOCK" else 0


def _run(out_dir: Path, inputs: Sequence[str], config: str | None, rules_dir: str | None,
         force: bool, lang: str | None) -> tuple[Merged, Path]:
    if not inputs:
        raise MergeError("give the shard records to merge: agenteval merge OUT_DIR A B …")
    pieces = load_pieces(inputs)
    target = out_dir.resolve()
    for p in pieces:
        if p.path.parent == target:
            raise MergeError(f"{out_dir} holds {p.path}, an input: give another OUT_DIR")
    project = resolve_project(pieces, config, rules_dir)
    diffs = differences(pieces) + rules_differences(project, pieces)
    if diffs and not force:
        raise _refuse(diffs)
    argv = ["merge", str(out_dir), *inputs, *(["--force"] if force else [])]
    merged = merge(pieces, project, target, diffs, force, argv)
    try:
        path = write(merged, target, lang, project.rule_titles())
    except OSError as exc:
        raise MergeError(f"{out_dir}: cannot be written: {exc}") from None
    return merged, path


def _tell(out: TextIO, merged: Merged, path: Path) -> None:
    from .text import summary_lines

    info = merged.document["run"]["merged"]
    given = ", ".join(f"{g['index']}/{g['count']}" if g["index"] else Path(g["path"]).name
                      for g in info["given"])
    out.write(f"agenteval merge: {len(info['given'])} record(s) ({given}) → "
              f"{len(merged.cases)} items\n")
    if info["missing"]:
        shards = [f"{i}/{info['shards']}" for i in info["missing"]]
        out.write(f"MISSING: no record of shard {', '.join(shards)}: run it (pytest … "
                  f"--agenteval-shard {shards[0]}) and merge all {info['shards']} records "
                  "again\n")
    if info["repeated"]:
        out.write(f"REPEATED: shard(s) {', '.join(map(str, info['repeated']))} given more "
                  "than once (the first record of an item is kept)\n")
    for d in info["differences"]:
        out.write(f"FORCED: {d}\n")
    for line in summary_lines(merged.metrics, merged.completeness, str(path), merged.gate):
        out.write(line + "\n")
    out.write(f"report: {path.parent / 'report.html'}\n")
