"""``agenteval expand FILES… --out FILE``: candidate variants of the clean cases, reproducibly.

A clean item is one with ``pair: {role: clean}``, or with ``challenge: none`` and no
pair role of its own (cases and scripted scenarios alike). For each clean item and
each asked kind (:data:`~._generators.KINDS`), up to ``--per`` variants are made; each
changes one challenge factor and is written as a whole item (``defaults:`` merged in,
so the output file stands alone):

- ``id: <clean id>-<kind>-<n>``, its title the clean title with what changed;
- ``pair: {group: <the clean's group, or its id>, role: variant}``, ``challenge: <kind>``,
  ``source: synthetic``, ``review_status: candidate`` and the tag ``expanded``; the
  review fields and the version of the clean item are not carried over;
- everything else (expectation, rules, judge, test family …) as the clean item has it.

A clean item without a pair group is listed in the output's header and on stderr: its
variants name the clean id as their group, which makes the item their clean twin (an
item without ``pair`` and challenge is the clean of the group named by its id, for lint
and the metrics); ``pair: {group: <its id>, role: clean}`` in its own file writes that
down (``expand`` never edits the inputs).

Reproducible: the same inputs, seed, kinds and ``--per`` give the same bytes. Input
files are sorted, items keep their order in the file, the random choice is seeded per
item and kind (:func:`~._generators.choose`), and the header holds no date.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import MultiSourceError
from ..yamlio import SourceError, locate
from ._generators import KINDS, Candidate, choose
from ._items import SourceItem, case_files, load_items, tidy
from ._yamlout import item_block, render_file

__all__ = ["KIND_WORDS", "Expansion", "expand", "run"]

#: how a title names each kind
KIND_WORDS = {"typo": "错别字", "asr": "语音识别", "colloquial": "口语", "noise": "上下文噪声",
              "wrong_premise": "错误前提"}
#: fields of the clean item a variant does not inherit (set anew, or a new case's own)
_OWN = frozenset({"id", "title", "pair", "challenge", "source", "review_status", "reviewed_by",
                  "reviewed_at", "version", "change_reason", "tags"})


#: clean items without a pair group named on stderr (the file's header names them all)
_SHOWN = 10


@dataclass
class Expansion:
    """What one expansion made: the variants (by section), and the clean items it used."""

    clean: list[SourceItem] = field(default_factory=list)
    blocks: dict[str, list[str]] = field(default_factory=lambda: {"cases": [], "scenarios": []})
    made: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    #: clean items without a pair group: (location, id)
    unpaired: list[tuple[str, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.made.values())


def is_clean(item: SourceItem) -> bool:
    pair = item.model.pair
    if pair is not None:
        return pair.role == "clean"
    return item.model.challenge == "none"


def variant(item: SourceItem | dict[str, Any], kind: str, n: int, cand: Candidate,
            group: str) -> dict[str, Any]:
    """The variant item: the candidate's data with a derived id, its pair and its marks."""
    data = item.data if isinstance(item, SourceItem) else item
    base = str(data["id"])
    title = str(data.get("title") or base)
    out: dict[str, Any] = {"id": f"{base}-{kind}-{n}",
                           "title": f"{title}（{KIND_WORDS[kind]}：{cand.note}）"}
    out.update((k, v) for k, v in cand.data.items() if k not in _OWN)
    out.update(pair={"group": group, "role": "variant"}, challenge=kind, source="synthetic",
               review_status="candidate",
               tags=[*(t for t in data.get("tags") or () if t != "expanded"), "expanded"])
    return tidy(out)


def expand(items: list[SourceItem], kinds: list[str], seed: int, per: int) -> Expansion:
    """The variants of every clean item of ``items`` (see the module's docstring)."""
    result = Expansion()
    for item in items:
        if not is_clean(item):
            continue
        result.clean.append(item)
        group = item.model.pair.group if item.model.pair else item.id
        if item.model.pair is None:
            result.unpaired.append((str(item.location), item.id))
        for kind in kinds:
            for n, cand in enumerate(choose(kind, item.data, seed, item.id, per), start=1):
                data = variant(item, kind, n, cand, group)
                comment = f"{item.id} · {kind}: {cand.note} (from {item.location})"
                result.blocks[item.kind + "s"].append(item_block(data, [comment]))
                result.made[kind] += 1
    return result


def _header(inputs: list[str], kinds: list[str], seed: int, per: int, result: Expansion
            ) -> list[str]:
    made = ", ".join(f"{k} {result.made[k]}" for k in kinds)
    lines = [
        "Candidate variants written by `agenteval expand` (docs/dataset.md): one challenge",
        "factor each, review_status: candidate, source: synthetic. Review them before they",
        "count: set review_status: reviewed, reviewed_by and reviewed_at on the ones you keep.",
        f"inputs: {', '.join(inputs)}",
        f"seed: {seed} · challenges: {','.join(kinds)} · per: {per}",
        f"{len(result.clean)} clean items → {result.total} variants ({made})"]
    if result.unpaired:
        lines += ["", "These clean items have no pair group: their variants use the clean id",
                  "as the group, which pairs them with it. To write it down, add",
                  "`pair: {group: <id>, role: clean}` to each in its file:"]
        lines += [f"  {loc}  {item_id}" for loc, item_id in result.unpaired]
    return lines


def _inputs(paths: list[str], out: Path, cwd: Path) -> list[Path]:
    found: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise FileNotFoundError(f"{raw}: no such file or folder")
        found.update(f.resolve() for f in case_files(p))
    found.discard(out.resolve())  # never the variants of an earlier expansion into this file
    return sorted(found, key=lambda f: locate(f, cwd))


def parse_kinds(raw: str | None) -> list[str]:
    """``typo,asr`` → the kinds in their canonical order; an unknown one is a ValueError."""
    if not raw:
        return list(KINDS)
    asked = [k.strip() for k in raw.split(",") if k.strip()]
    unknown = [k for k in asked if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown challenge {', '.join(unknown)}; the kinds are: "
                         f"{', '.join(KINDS)}")
    return [k for k in KINDS if k in asked]


def run(paths: list[str], out: str, seed: int = 0, challenges: str | None = None,
        per: int = 1) -> int:
    """The command: exit 0 when written; 1 when an input file has errors or no variant
    could be made (nothing is written then); 2 on misuse."""
    from ..config import ConfigError

    cwd, target = Path.cwd(), Path(out)
    try:
        kinds = parse_kinds(challenges)
        if per < 1:
            raise ValueError(f"--per {per}: give a number of variants ≥ 1")
        files = _inputs(paths, target, cwd)
    except (ValueError, FileNotFoundError, ConfigError) as exc:
        print(f"agenteval expand: {exc}", file=sys.stderr)
        return 2
    items, errors = [], []
    for path in files:
        try:
            items += load_items(path, locate(path, cwd))
        except SourceError as exc:
            errors.append(exc)
        except MultiSourceError as exc:
            errors += exc.errors
    if errors:
        print("\n".join(str(e) for e in errors))
        print(f"agenteval expand: {len(errors)} error(s) in the input files; nothing written",
              file=sys.stderr)
        return 1
    result = expand(items, kinds, seed, per)
    if not result.total:
        print(f"agenteval expand: no variant made: {len(result.clean)} clean item(s) in "
              f"{len(files)} file(s), none that the {', '.join(kinds)} tables change; "
              "nothing written", file=sys.stderr)
        return 1
    inputs = [locate(p, cwd) for p in files]
    text = render_file(_header(inputs, kinds, seed, per, result),
                       [("cases", result.blocks["cases"]),
                        ("scenarios", result.blocks["scenarios"])])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    _report(result, kinds, target)
    return 0


def _report(result: Expansion, kinds: list[str], target: Path) -> None:
    made = ", ".join(f"{k} {result.made[k]}" for k in kinds)
    print(f"agenteval expand: {len(result.clean)} clean items → {result.total} candidate "
          f"variants ({made}) written to {target}", file=sys.stderr)
    if result.unpaired:
        print(f"  {len(result.unpaired)} clean item(s) have no pair group: their variants "
              "are grouped by the clean id (add pair: {group: <id>, role: clean} to each "
              f"in its file to write it down; all listed at the top of {target}):",
              file=sys.stderr)
        for loc, item_id in result.unpaired[:_SHOWN]:
            print(f"    {loc}  {item_id}", file=sys.stderr)
        if len(result.unpaired) > _SHOWN:
            print(f"    … {len(result.unpaired) - _SHOWN} more", file=sys.stderr)
