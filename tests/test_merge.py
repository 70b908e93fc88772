"""``agenteval merge``: n shard records make the record of a single run of the whole suite."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_agenteval.cli import main
from pytest_agenteval.report.merge import item_result
from pytest_agenteval.report.record import case_record
from pytest_agenteval.report.schema import results_file_model

from agents import FakeAgent

TAXONOMY = """\
labels:
  GREETING: {strategy: 问候, codes: [1]}
  PHONE_PROVIDED: {strategy: 留资, codes: [9]}
"""
LEDGER = """\
- id: BR-1
  title: 不说再见
  check: keyword_match
  params: {none: [再见]}
  applies_to: {behaviors: all}
  layer: L1
  veto: true
  priority: P0
"""
GATES = """\
red_lines: [BR-1]
metrics:
  - {metric: recall, label: PHONE_PROVIDED, min: 0.5}
  - {metric: success_rate, min: 0.5}
formal_requires_reviewed: false
max_error_rate: 0.2
"""


def _case(i: int) -> str:
    label, code = ("PHONE_PROVIDED", 9) if i % 3 else ("GREETING", 1)
    code = 1 if i == 4 else code  # one wrong intent
    text = "__500__" if i == 7 else f"你好{i}"  # one agent error
    rule = "[{type: keyword_match, params: {none: ['你好1']}}]"  # fails 你好1, 你好10..
    return (f"  - id: C-{i:02d}\n    request: {{input: '{text}', extra: {{intent: {code}}}}}\n"
            f"    expected: {{behavior: {label}}}\n    rules: {rule}\n")


CASES = {
    "a.yaml": "cases:\n" + "".join(_case(i) for i in range(14)),
    "flows/s.yaml": """\
scenarios:
  - id: S-1
    turns:
      - {input: 你好, extra: {intent: 1}, expected: {behavior: GREETING}}
      - {input: '13800000000', extra: {intent: 9}, expected: {behavior: PHONE_PROVIDED}}
      - {input: 谢谢, extra: {intent: 1}, expected: {behavior: GREETING}}
  - id: S-2
    turns:
      - {input: 你好, extra: {intent: 1}, expected: {behavior: GREETING}}
      - {input: 好的, extra: {intent: 9}, expected: {behavior: GREETING}}
""",
}


@dataclass(frozen=True)
class Runs:
    """One project run whole and as 3 shards, and shard 3 again on an edited dataset."""

    root: Path
    whole: Path
    shards: list[Path]
    other: Path
    sends: Counter[str]


def _layout(root: Path, url: str) -> None:
    root.joinpath("agenteval.yaml").write_text(f"target: {{adapter: http, url: '{url}'}}\n",
                                               encoding="utf-8")
    root.joinpath("pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n",
                                           encoding="utf-8")
    for name, text in CASES.items():
        (root / "cases" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "cases" / name).write_text(text, encoding="utf-8")
    rules = root / "rules"
    rules.mkdir()
    for name, text in (("taxonomy.yaml", TAXONOMY), ("business-rules.yaml", LEDGER),
                       ("gates.yaml", GATES)):
        rules.joinpath(name).write_text(text, encoding="utf-8")


def _pytest(root: Path, name: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "cases", "-p", "no:benchmark",
                             f"--agenteval-reports-dir=runs/{name}", *args],
                            cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, root / "runs" / name


def _record_dir(started: tuple[subprocess.Popen[bytes], Path]) -> Path:
    proc, reports = started
    proc.wait(timeout=300)
    return next(reports.glob("2*"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Run once for the module, the five runs at once (each is a pytest process)."""
    with FakeAgent() as agent, FakeAgent() as elsewhere:
        root = tmp_path_factory.mktemp("suite")
        _layout(root, agent.url)
        edited = tmp_path_factory.mktemp("edited")
        _layout(edited, elsewhere.url)
        cases = edited / "cases" / "a.yaml"
        cases.write_text(cases.read_text(encoding="utf-8").replace("你好3", "您好3"),
                         encoding="utf-8")
        started = [_pytest(root, "whole"),
                   *(_pytest(root, f"s{i}", f"--agenteval-shard={i}/3") for i in (1, 2, 3)),
                   _pytest(edited, "other", "--agenteval-shard=3/3")]
        whole, *shards, other = map(_record_dir, started)
        yield Runs(root, whole, shards, other, agent.sends_per_case())


def _merge(*args: Any) -> int:
    return main(["merge", *map(str, args)])


_VOLATILE = ("latency", "duration_s", "started", "finished")


def _stable(value: Any) -> Any:
    """``value`` without timings and latencies (the only things two runs may differ in)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if not any(w in k for w in _VOLATILE)}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _doc(run_dir: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    return doc


def test_merged_shards_equal_a_single_run(runs: Runs, tmp_path: Path, capsys) -> None:
    whole = _doc(runs.whole)
    assert [_doc(s)["run"]["shard"]["weight"] for s in runs.shards] == [7, 6, 6]  # 19 turns
    assert set(runs.sends.values()) == {2}  # each item: once whole, once in its shard
    out = tmp_path / "merged"
    assert _merge(out, *runs.shards) == 0
    merged = _doc(out)
    for key in ("metrics", "gate", "completeness", "review_queue"):
        assert _stable(merged[key]) == _stable(whole[key]), key
    assert merged["gate"]["result"] == "PASS"
    assert merged["completeness"]["complete"] is True
    assert merged["completeness"]["expected"] == whole["completeness"]["expected"] == 16
    assert merged["run"]["dataset"] == whole["run"]["dataset"]
    assert [c["nodeid"] for c in merged["cases"]] == [c["nodeid"] for c in whole["cases"]]
    assert _stable(merged["cases"]) == _stable(whole["cases"])
    assert merged["run"]["merged"]["shards"] == 3
    assert [g["index"] for g in merged["run"]["merged"]["given"]] == [1, 2, 3]
    results_file_model().model_validate(merged)  # what `agenteval schema results` prints
    results_file_model().model_validate(_doc(runs.shards[0]))
    assert len((out / "results.jsonl").read_text(encoding="utf-8").splitlines()) == 16
    assert (out / "report.html").stat().st_size > 10_000
    said = capsys.readouterr().out
    assert "agenteval merge: 3 record(s) (1/3, 2/3, 3/3) → 16 items" in said
    assert "GATE: PASS" in said


def test_a_shards_own_gate_says_it_covers_its_items_only(runs: Runs) -> None:
    reasons = _doc(runs.shards[1])["gate"]["reasons"]
    assert "subset run (--agenteval-shard 2/3): the gate covers the selected items only" \
        in reasons


def test_a_case_record_gives_back_its_item_result(runs: Runs) -> None:
    lines = (runs.whole / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 16
    for line in lines:
        record = json.loads(line)
        assert case_record(item_result(record).model_dump(mode="json")) == record


def test_a_missing_shard_blocks_as_incomplete(runs: Runs, tmp_path: Path, capsys) -> None:
    s1, s2, _ = runs.shards
    out = tmp_path / "merged"
    assert _merge(out, s1, s2) == 1
    merged = _doc(out)
    assert merged["completeness"]["missing_shards"] == [3]
    assert merged["completeness"]["complete"] is False
    assert merged["completeness"]["expected"] == 16
    assert merged["completeness"]["received"] == len(merged["cases"]) == 10
    assert merged["gate"]["result"] == "BLOCK"
    assert merged["gate"]["reasons"][0].startswith("incomplete run: no record of shard(s) 3")
    said = capsys.readouterr().out
    assert "MISSING: no record of shard 3/3: run it (pytest … --agenteval-shard 3/3)" in said
    assert "INCOMPLETE: no record of shard(s) 3" in said


def test_a_shard_given_twice_is_no_substitute_for_the_one_missing(runs: Runs,
                                                                   tmp_path: Path) -> None:
    s1, s2, _ = runs.shards
    out = tmp_path / "merged"
    assert _merge(out, s1, s2, s2) == 1
    merged = _doc(out)
    assert merged["run"]["merged"]["repeated"] == [2]
    assert merged["completeness"]["missing_shards"] == [3]
    assert merged["completeness"]["duplicates"] == sorted(c["nodeid"] for c in _doc(s2)["cases"])
    assert len(merged["cases"]) == 10  # each item once


def test_records_of_another_dataset_are_refused(runs: Runs, tmp_path: Path, capsys) -> None:
    s1, s2, _ = runs.shards
    out = tmp_path / "merged"
    assert _merge(out, s1, s2, runs.other) == 2
    said = capsys.readouterr().err
    assert "not the shards of one run" in said
    assert "the dataset differs: these case files have another content in another record: " \
           "cases/a.yaml" in said
    assert "--force" in said
    assert not out.exists()
    assert _merge(out, s1, s2, runs.other, "--force") == 1  # merged, and incomplete
    merged = _doc(out)
    assert merged["completeness"]["complete"] is False
    assert merged["completeness"]["merge_conflicts"]
    assert merged["gate"]["result"] == "BLOCK"
    assert merged["gate"]["reasons"][0].startswith("incomplete run: the merged records are not")
    assert merged["run"]["merged"]["forced"] is True


def test_a_record_without_shard_is_refused(runs: Runs, tmp_path: Path, capsys) -> None:
    assert _merge(tmp_path / "merged", runs.whole, *runs.shards) == 2
    assert "is not a shard record" in capsys.readouterr().err


def test_elsewhere_the_project_is_named_with_config_or_rules_dir(
        runs: Runs, tmp_path: Path, capsys, monkeypatch) -> None:
    """A CI merge job has the shards' artefacts and a checkout, not the shards' rootdir."""
    copies = []
    for i, s in enumerate(runs.shards, start=1):
        doc = _doc(s)
        doc["run"]["rootdir"] = "/nowhere/checkout"
        copy = tmp_path / f"shard-{i}.json"
        copy.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        copies.append(copy)
    checkout = tmp_path / "checkout"
    shutil.copytree(runs.root / "rules", checkout / "rules")
    shutil.copy(runs.root / "agenteval.yaml", checkout / "agenteval.yaml")
    monkeypatch.chdir(tmp_path)
    assert _merge(tmp_path / "m0", *copies) == 2
    assert "cannot find the project" in capsys.readouterr().err
    assert _merge(tmp_path / "m1", *copies, "--config", checkout / "agenteval.yaml") == 0
    assert _merge(tmp_path / "m2", *copies, "--rules-dir", checkout / "rules") == 0
    gates = [_doc(tmp_path / m)["gate"] for m in ("m1", "m2")]
    assert gates[0]["result"] == gates[1]["result"] == "PASS"
    assert gates[0]["reasons"] == gates[1]["reasons"]
    (checkout / "rules" / "business-rules.yaml").write_text(LEDGER.replace("再见", "拜拜"),
                                                            encoding="utf-8")
    assert _merge(tmp_path / "m3", *copies, "--rules-dir", checkout / "rules") == 2
    assert "the rule ledger in" in capsys.readouterr().err


def test_out_dir_may_not_be_an_input(runs: Runs, capsys) -> None:
    s1, s2, s3 = runs.shards
    assert _merge(s1, s1, s2, s3) == 2
    assert "an input: give another OUT_DIR" in capsys.readouterr().err


def test_the_shards_skipped_items_are_merged_and_narrow_the_gate() -> None:
    from pytest_agenteval.report.merge import Piece, _subset, merged_completeness

    def piece(index: int, received: int, skipped: dict[str, str]) -> Piece:
        return Piece(Path(f"s{index}"), {
            "run": {"shard": {"index": index, "count": 2, "total_items": 6}, "argv": []},
            "completeness": {"expected": received + len(skipped), "received": received,
                             "skipped": skipped}})

    pieces = [piece(1, 2, {"cases/a.yaml::A-1": "flaky"}),
              piece(2, 2, {"cases/a.yaml::A-4": "xfail: down"})]
    merged = merged_completeness(pieces, 4, [], [])
    assert merged.skipped == {"cases/a.yaml::A-1": "flaky", "cases/a.yaml::A-4": "xfail: down"}
    assert (merged.expected, merged.received, merged.missing) == (6, 4, [])
    assert merged.complete is True
    assert _subset(pieces[0].run, len(merged.skipped)) == "2 item(s) skipped"
    assert _subset(pieces[0].run) is None
