"""``agenteval dataset diff``, ``agenteval expand`` and ``agenteval promote``.

Unit tests on crafted datasets for the logic (what counts as a change, what a variant
changes, where promoted items go), and end-to-end tests on the shipped suite (marked
``data``): the expansion of the shipped clean cases lints and runs against the
reference agent, and a promoted failure of the shipped run fails again with the same
ledger rule.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agenteval.cli import main
from pytest_agenteval.dataset._generators import candidates, false_figures
from pytest_agenteval.dataset._items import load_items
from pytest_agenteval.dataset._tables import ASR_HOMOPHONES, COLLOQUIAL, NOISE, TYPO
from pytest_agenteval.dataset._yamlout import InsertError, insert_items, item_block
from pytest_agenteval.dataset.diff import first_difference

from agents import read_record

ROOT = Path(__file__).resolve().parent.parent

CLEAN = """\
defaults:
  priority: P1
  request:
    knowledge: &car
      carConfigInfo:
        archives: {mileage: 3.37万公里, transferCount: 0}
        price: {listPrice: 8.98万}
  expected: {behavior: VEHICLE_INFO, outcome: ANSWERABLE}
cases:
  - id: MILEAGE-1
    title: 询问里程
    request: {input: 这车跑了多少公里？}
    expected:
      knowledge_points:
        - {path: carConfigInfo.archives.mileage, value: 3.37万公里, usage: answer}
    pair: {group: MILEAGE, role: clean}
  - id: PRICE-1
    title: 问价
    request: {input: 这车多少钱}
    challenge: none
  - id: PRICE-2
    title: 问价（错字）
    request: {input: 这车多少前}
    challenge: typo
    pair: {group: PRICE, role: variant}
scenarios:
  - id: FLOW-1
    title: 问价 → 留号
    knowledge: *car
    turns:
      - input: 这车多少钱
        expected: {behavior: VEHICLE_INFO}
      - input: '13800000000'
        expected: {behavior: PHONE_PROVIDED}
    outcome:
      task:
        mode: slot
        slots: [{name: phone, match: '1[3-9]\\d{9}'}]
"""


def _agenteval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agenteval.cli", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _items(path: Path) -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {i["id"]: i for i in (doc.get("cases") or []) + (doc.get("scenarios") or [])}


def test_a_misspelt_default_is_the_located_error_collection_gives(tmp_path) -> None:
    """The dataset tools merge and check ``defaults:`` with collection's own code: a
    default that is no field is an error of its line, not silently dropped."""
    rc, out = _diff(tmp_path, CLEAN.replace("defaults:\n", "defaults:\n  priorty: P0\n", 1))
    assert rc == 1
    assert "a.yaml:2 [defaults.priorty]: not a field of a case or a scenario" in out


def _with_rules(root: Path) -> None:
    """The project files a run of the shipped suite's data needs, at ``root``."""
    shutil.copytree(ROOT / "rules", root / "rules", dirs_exist_ok=True)
    shutil.copy(ROOT / "agenteval.yaml", root / "agenteval.yaml")


# -- dataset diff -------------------------------------------------------------------------------

MANIFEST = "name: demo\nversion: {version}\nparent: {parent}\n"


def _dataset(root: Path, cases: str = CLEAN, version: str = "1", parent: str = "0") -> Path:
    _write(root / "dataset.yaml", MANIFEST.format(version=version, parent=parent))
    _write(root / "a.yaml", cases)
    return root


def _diff(tmp_path: Path, new_cases: str, *args: str, version: str = "2",
          parent: str = "1") -> tuple[int, str]:
    old = _dataset(tmp_path / "old")
    new = _dataset(tmp_path / "new", new_cases, version, parent)
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["dataset", "diff", str(old), str(new), *args])
    return rc, buf.getvalue()


def test_one_changed_character_of_an_old_case_fails_naming_item_and_field(tmp_path) -> None:
    rc, out = _diff(tmp_path, CLEAN.replace("这车跑了多少公里？", "这车跑了多少公理？"))
    assert rc == 1
    assert f"{tmp_path / 'new' / 'a.yaml'}:10 [MILEAGE-1 request.input]" in out
    assert '"这车跑了多少公里？" → "这车跑了多少公理？" (line 12)' in out and "change_reason" in out
    assert out.rstrip().endswith("(exit 1)")


def test_a_pure_addition_passes_and_lists_what_was_added(tmp_path) -> None:
    added = CLEAN.replace("scenarios:", "  - {id: NEW-1, request: {input: 你好}}\nscenarios:")
    rc, out = _diff(tmp_path, added)
    assert rc == 0, out
    assert "added (1):" in out and "NEW-1" in out and "unchanged 4" in out


def test_a_change_with_a_reason_and_a_new_version_passes(tmp_path) -> None:
    explained = CLEAN.replace("    title: 询问里程\n", "    title: 询问里程\n    version: 2\n"
                              "    change_reason: 问法按真实流量更新\n").replace(
        "这车跑了多少公里？", "这车跑多少公里了")
    rc, out = _diff(tmp_path, explained)
    assert rc == 0, out
    assert "version none → 2: 问法按真实流量更新" in out
    rc, out = _diff(tmp_path, explained.replace("    version: 2\n", ""))
    assert rc == 1 and "give it a new version" in out


def test_writing_out_a_default_value_is_no_change(tmp_path) -> None:
    rc, out = _diff(tmp_path, CLEAN.replace("request: {input: 这车多少钱}",
                                            "request: {input: 这车多少钱, history: []}"))
    assert rc == 0 and "unchanged 4" in out, out


def test_a_change_through_the_defaults_is_a_change_of_every_item_that_takes_it(
        tmp_path) -> None:
    rc, out = _diff(tmp_path, CLEAN.replace("mileage: 3.37万公里", "mileage: 3.38万公里"))
    assert rc == 1
    assert "[MILEAGE-1 request.knowledge.carConfigInfo.archives.mileage]" in out
    assert "[FLOW-1 knowledge.carConfigInfo.archives.mileage]" in out  # through the alias


def test_a_turn_that_inherits_knowledge_differs_from_one_that_clears_it(tmp_path) -> None:
    cleared = CLEAN.replace("      - input: '13800000000'\n",
                            "      - input: '13800000000'\n        knowledge: null\n")
    rc, out = _diff(tmp_path, cleared)
    assert rc == 1 and "[FLOW-1 turns[1].knowledge]" in out


def test_a_removed_item_fails_unless_allowed_and_a_move_is_no_change(tmp_path) -> None:
    gone = CLEAN.replace("  - id: PRICE-1\n    title: 问价\n    request: {input: 这车多少钱}\n"
                         "    challenge: none\n", "")
    rc, out = _diff(tmp_path, gone)
    assert rc == 1 and "[PRICE-1]: in OLD but not in NEW" in out
    rc, out = _diff(tmp_path, gone, "--allow-removal")
    assert rc == 0 and "removed (1)" in out
    moved = _write(tmp_path / "new" / "b.yaml", "cases:\n  - id: PRICE-1\n    title: 问价\n"
                   "    priority: P1\n    request:\n      input: 这车多少钱\n      knowledge: "
                   "{carConfigInfo: {archives: {mileage: 3.37万公里, transferCount: 0}, price: "
                   "{listPrice: 8.98万}}}\n    expected: {behavior: VEHICLE_INFO, outcome: "
                   "ANSWERABLE}\n")
    assert moved.is_file()
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["dataset", "diff", str(tmp_path / "old"), str(tmp_path / "new")])
    assert rc == 0, buf.getvalue()
    assert "moved (1):" in buf.getvalue() and "PRICE-1: a.yaml → b.yaml" in buf.getvalue()


def test_the_manifests_parent_must_be_olds_version_a_warning(tmp_path) -> None:
    rc, out = _diff(tmp_path, CLEAN, parent="0")
    assert rc == 0
    assert "[parent]: parent is 0, but OLD's version is 1: set parent: 1" in out
    rc, out = _diff(tmp_path, CLEAN.replace("这车多少钱", "这车多少钱啊"), version="1", parent="0")
    assert "give it a new version (and parent: 1)" in out


def test_a_review_is_listed_not_an_error(tmp_path) -> None:
    reviewed = CLEAN.replace("    title: 问价\n", "    title: 问价\n    review_status: reviewed\n"
                             "    reviewed_by: 王工\n    reviewed_at: '2026-12-01'\n")
    rc, out = _diff(tmp_path, reviewed)
    assert rc == 0 and "PRICE-1: candidate → reviewed (by 王工, 2026-12-01)" in out


def test_diff_reads_old_from_a_git_revision(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    _dataset(repo / "cases")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "v1"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)
    monkeypatch.chdir(repo)
    assert main(["dataset", "diff", "--git", "HEAD", "cases"]) == 0
    _write(repo / "cases" / "a.yaml", CLEAN.replace("这车多少钱\n", "这车多少钱呀\n", 1))
    assert main(["dataset", "diff", "--git", "HEAD", "cases"]) == 1
    assert main(["dataset", "diff", "HEAD:cases", "cases"]) == 1
    assert main(["dataset", "diff", "NO-SUCH-REV:cases", "cases"]) == 2


@pytest.mark.parametrize("args", [["nowhere", "cases"], ["cases"]])
def test_diff_misuse_exits_2(tmp_path: Path, monkeypatch, args: list[str]) -> None:
    _dataset(tmp_path / "cases")
    monkeypatch.chdir(tmp_path)
    assert main(["dataset", "diff", *args]) == 2


def test_the_shipped_suite_diffed_with_one_character_changed_and_with_an_addition(
        tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(ROOT / "cases", old)
    shutil.copytree(ROOT / "cases", new)
    added = _write(new / "single" / "more.yaml",
                   "cases:\n  - {id: MORE-001, request: {input: 这车有天窗吗}}\n")
    assert _agenteval(tmp_path, "dataset", "diff", "old", "new").returncode == 0
    path = new / "single" / "vehicle_info.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "input: 这车跑了多少公里\n", "input: 这车跑了多少公理\n", 1), encoding="utf-8")
    line = path.read_text(encoding="utf-8").splitlines().index("  - id: VEHICLE_INFO-001") + 1
    proc = _agenteval(tmp_path, "dataset", "diff", "old", "new")
    assert proc.returncode == 1
    assert f"new/single/vehicle_info.yaml:{line} [VEHICLE_INFO-001 request.input]" in proc.stdout
    assert added.is_file() and "added (1):" in proc.stdout


# -- the tables ---------------------------------------------------------------------------------


def test_the_tables_are_large_enough_and_never_map_a_word_to_itself() -> None:
    assert len(TYPO) >= 80 and len(COLLOQUIAL) >= 25 and len(NOISE) >= 10
    for table in (TYPO, ASR_HOMOPHONES, COLLOQUIAL):
        for right, wrongs in table.items():
            assert wrongs and all(w and w != right for w in wrongs), right
    for right, wrong in (("公里", "功里"), ("过户", "过护"), ("试驾", "试架"), ("微信", "威信"),
                         ("价格", "价个")):
        assert wrong in TYPO[right]
    assert "这车啥价" in COLLOQUIAL["这车多少钱"] and "能不能少点" in COLLOQUIAL["能便宜点吗"]


def test_noise_replies_ask_for_nothing_and_state_no_figure() -> None:
    for user, reply in NOISE:
        assert not any(w in user + reply for w in ("手机", "电话", "微信", "价", "再见", "联系"))
        assert not any(ch.isdigit() for ch in user + reply)


@pytest.mark.parametrize(("text", "spoken"), [
    ("3万公里", "三万公里"), ("跑了3.37万公里", "跑了三点三七万公里"), ("9:30开门", "九点半开门"),
    ("2021年上牌", "二零二一年上牌"), ("105号", "一百零五号"), ("15万", "十五万"),
    ("13800000000", "幺三八零零零零零零零零"), ("1010元", "一千零一十元"),
])
def test_asr_reads_digits_out(text: str, spoken: str) -> None:
    data = {"id": "X", "request": {"input": text}}
    inputs = [c.data["request"]["input"] for c in candidates("asr", data)]
    assert spoken in inputs


def test_a_false_figure_differs_from_the_stored_one_and_keeps_its_unit() -> None:
    figures = false_figures("3.37万公里")
    assert figures and all(f.endswith("万公里") and f != "3.37万公里" for f in figures)
    assert false_figures("0") == ["1", "2", "3"]
    assert all(f.endswith("-06") for f in false_figures("2021-06"))
    assert false_figures("白色") == []


# -- expand -------------------------------------------------------------------------------------


def _expand(tmp_path: Path, *args: str, source: str = CLEAN) -> tuple[int, Path]:
    src = _write(tmp_path / "cases" / "a.yaml", source)
    out = tmp_path / "out" / "variants.yaml"
    return main(["expand", str(src), "--out", str(out), *args]), out


def _marks_removed(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in (
        "id", "title", "pair", "challenge", "source", "review_status", "tags")}


def _undo(kind: str, varied: dict[str, Any], clean: dict[str, Any]) -> int:
    """Put the clean item's value back where ``kind`` varies; the number of places."""
    if kind == "noise":
        key = "request" if "request" in clean else None
        box, ref = (varied[key], clean[key]) if key else (varied, clean)
        changed = box.get("history") != ref.get("history")
        box.pop("history")
        if "history" in ref:
            box["history"] = ref["history"]
        return int(changed)
    pairs = ([(varied["request"], clean["request"])] if "request" in clean
             else list(zip(varied["turns"], clean["turns"], strict=True)))
    if kind == "wrong_premise":
        varied["expected"] = clean["expected"]  # the knowledge point's usage: correct
    changed = sum(a["input"] != b["input"] for a, b in pairs)
    for a, b in pairs:
        a["input"] = b["input"]
    return changed


def test_each_variant_changes_exactly_one_factor(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out = _expand(tmp_path, "--per", "3")
    assert rc == 0
    made = _items(out)
    clean = {i.id: i.data for i in load_items(tmp_path / "cases" / "a.yaml", "a.yaml")}
    assert {i["challenge"] for i in made.values()} == {"typo", "asr", "colloquial", "noise",
                                                       "wrong_premise"}
    assert not any(i.startswith("PRICE-2") for i in made)  # a variant is not clean
    for item in made.values():
        base, kind, n = item["id"].rsplit("-", 2)
        assert kind == item["challenge"] and n.isdigit()
        assert (item["source"], item["review_status"]) == ("synthetic", "candidate")
        assert item["pair"]["role"] == "variant" and "expanded" in item["tags"]
        varied, ref = _marks_removed(item), _marks_removed(clean[base])
        assert _undo(kind, varied, ref) == 1, item["id"]
        assert first_difference(varied, ref) is None, item["id"]
    assert made["MILEAGE-1-typo-1"]["pair"] == {"group": "MILEAGE", "role": "variant"}


def test_wrong_premise_keeps_the_stored_value_to_correct_and_needs_a_figure(tmp_path: Path,
                                                                           monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out = _expand(tmp_path, "--challenges", "wrong_premise")
    assert rc == 0
    made = _items(out)
    premise = made["MILEAGE-1-wrong_premise-1"]
    point = premise["expected"]["knowledge_points"][0]
    assert (point["value"], point["usage"]) == ("3.37万公里", "correct")
    stated = premise["request"]["input"]
    assert "万公里" in stated.replace("这车跑了多少公里", "") and "3.37" not in stated
    # PRICE-1 has no knowledge point to contradict: no premise is made of it
    assert not any(i.startswith("PRICE-1") for i in made)


def test_a_clean_case_without_a_pair_group_is_named_and_its_id_is_the_group(
        tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out = _expand(tmp_path, "--challenges", "typo")
    assert rc == 0
    text = out.read_text(encoding="utf-8")
    assert "cases/a.yaml:17  PRICE-1" in text
    assert _items(out)["PRICE-1-typo-1"]["pair"] == {"group": "PRICE-1", "role": "variant"}
    assert "PRICE-1" in capsys.readouterr().err


def test_a_variant_never_changes_what_the_task_finds(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _, out = _expand(tmp_path, "--challenges", "asr", "--per", "9")
    spoken = [i for i in _items(out).values() if i["id"].startswith("FLOW-1-")]
    # the phone number read out would no longer match the slot's regex: not offered
    assert spoken and all(t["input"] != "幺三八零零零零零零零零" for i in spoken
                          for t in i["turns"])


def test_expand_twice_gives_the_same_bytes_another_seed_others(tmp_path: Path,
                                                               monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    outs = [tmp_path / f"{name}.yaml" for name in ("a", "b", "c")]
    for out, seed in zip(outs, ("0", "0", "1"), strict=True):
        assert main(["expand", "cases", "--out", str(out), "--seed", seed]) == 0
    first, again, other = (o.read_bytes() for o in outs)
    assert first == again and first != other
    assert b"!!python" not in first and "询问里程" in first.decode("utf-8")


@pytest.mark.parametrize(("args", "why"), [
    (["--challenges", "typo,spelling"], "unknown challenge spelling"),
    (["--per", "0"], "--per 0"),
])
def test_expand_misuse_exits_2(tmp_path: Path, monkeypatch, capsys, args: list[str],
                               why: str) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out = _expand(tmp_path, *args)
    assert rc == 2 and why in capsys.readouterr().err and not out.exists()


def test_expand_names_the_line_of_a_broken_input(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out = _expand(tmp_path, source="cases:\n  - {id: A, request: {input: x}, priorty: P1}\n")
    assert rc == 1 and not out.exists()
    assert "cases/a.yaml:2 [cases[0].priorty]" in capsys.readouterr().out


@pytest.mark.data
def test_the_expansion_of_the_shipped_clean_cases_lints_and_runs(tmp_path: Path,
                                                                 pytester) -> None:
    out = pytester.path / "cases" / "variants.yaml"
    files = [str(ROOT / "cases" / "single" / "vehicle_info.yaml"),
             str(ROOT / "cases" / "flows" / "lead_capture.yaml")]
    assert main(["expand", *files, "--out", str(out)]) == 0
    lint = _agenteval(ROOT, "lint", str(out), *files)  # the pairs span both
    assert lint.returncode == 0, lint.stdout
    _with_rules(pytester.path)
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    result = pytester.runpytest("cases")
    made = _items(out)
    outcomes = result.parseoutcomes()
    assert "error" not in outcomes and "errors" not in outcomes
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == len(made) > 50
    record = read_record(pytester.path)
    assert {c["id"] for c in record["cases"]} == set(made)
    assert {c["review_status"] for c in record["cases"]} == {"candidate"}


# -- writing into an existing case file ---------------------------------------------------------

EXISTING = """\
# 回归用例：手写的注释要留着
defaults:
  priority: P0
cases:
  - id: OLD-1          # 这一行的注释也留着
    request: {input: 你好}

# the flows
scenarios:
  - id: FLOW-OLD
    turns: [{input: 你好}]
"""


def test_new_items_go_at_the_end_of_their_list_and_every_comment_stays() -> None:
    block = item_block({"id": "NEW-1", "request": {"input": "再见"}}, ["promoted"])
    text = insert_items(EXISTING, "cases", [block])
    assert text.startswith(EXISTING.split("# the flows")[0].rstrip("\n"))
    assert "# the flows\nscenarios:" in text and "这一行的注释也留着" in text
    doc = yaml.safe_load(text)
    assert [c["id"] for c in doc["cases"]] == ["OLD-1", "NEW-1"]
    assert [s["id"] for s in doc["scenarios"]] == ["FLOW-OLD"]
    flat = insert_items("cases:\n- id: A\n  request: {input: x}\n", "cases", [block])
    assert [c["id"] for c in yaml.safe_load(flat)["cases"]] == ["A", "NEW-1"]
    with pytest.raises(InsertError, match="written inline"):
        insert_items("cases: []\n", "cases", [block])


# -- promote ------------------------------------------------------------------------------------


def _record_of(tmp_path: Path, entry: dict[str, Any]) -> Path:
    doc = {"run": {"started": "2026-12-01T12:00:00+00:00", "rootdir": str(tmp_path),
                   "dataset": {"files": []}}, "cases": [entry]}
    path = tmp_path / "reports" / "run1" / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


MASKED_ENTRY: dict[str, Any] = {
    "id": "PHONE-9", "kind": "case", "status": "failed", "title": "带国家码的号码",
    "file": "cases/gone.yaml", "line": 3, "priority": "P0", "challenge": "none",
    "tags": ["phone"],
    "request": {"input": "+86 138****5678", "history": [], "knowledge": None, "extra": {}},
    "rules": [{"rule_id": "BR-010", "type": "intent_code", "status": "failed", "veto": True,
               "origin": "ledger", "reason": "intent code 8 (expected 9)",
               "evidence": "code=8"}],
    "turns": [{"index": 0, "input": "+86 138****5678", "status": "failed",
               "expected": {"behavior": "PHONE_PROVIDED", "outcome": "CONTROL",
                            "intent_code": 9, "assertions": {"max_sentences": 3}}}],
}


def test_a_case_rebuilt_from_a_masked_record_says_what_to_restore(tmp_path: Path,
                                                                  monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    record = _record_of(tmp_path, MASKED_ENTRY)
    out = tmp_path / "cases" / "regression.yaml"
    assert main(["promote", str(record), "PHONE-9", "--to", str(out)]) == 0
    said = capsys.readouterr().out
    assert "rebuilt from the run record" in said and "restore 138****5678 by hand" in said
    made = _items(out)
    reg = made["PHONE-9-REG-1"]
    assert reg["request"]["input"] == "+86 138****5678"
    assert reg["expected"] == MASKED_ENTRY["turns"][0]["expected"]
    assert "restore 138****5678 by hand" in reg["change_reason"]
    assert reg["tags"] == ["phone", "regression", "fails:BR-010"]
    assert "red line BR-010: intent code 8 (expected 9)" in out.read_text(encoding="utf-8")
    assert main(["promote", str(record), "PHONE-9", "--to", str(out)]) == 0
    again = _items(out)
    assert "PHONE-9-REG-2" in again and set(made) < set(again)


def test_a_passed_item_is_refused_unless_any(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    record = _record_of(tmp_path, {**MASKED_ENTRY, "status": "passed", "rules": []})
    out = tmp_path / "regression.yaml"
    assert main(["promote", str(record), "PHONE-9", "--to", str(out)]) == 1
    assert "passed" in capsys.readouterr().err and not out.exists()
    assert main(["promote", str(record), "PHONE-9", "--to", str(out), "--any"]) == 0
    assert main(["promote", str(record), "NOPE", "--to", str(out)]) == 2
    assert "its items that did not pass: none" in capsys.readouterr().err


def _first_failed(record: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in record["cases"] if c["status"] == "failed" and c["kind"] == kind
                and any(r["status"] == "failed" and r["origin"] == "ledger" for r in c["rules"]))


def _ledger_failures(case: dict[str, Any]) -> set[str]:
    return {r["rule_id"] for r in case["rules"] if r["status"] == "failed"
            and r["origin"] == "ledger"}


@pytest.mark.data
@pytest.mark.parametrize("kind", ["case", "scenario"])
def test_a_promoted_failure_of_the_shipped_run_lints_and_fails_the_same_ledger_rule(
        shipped_run, pytester, kind: str) -> None:
    run = json.loads((shipped_run.run_dir / "results.json").read_text(encoding="utf-8"))
    failed = _first_failed(run, kind)
    out = pytester.path / "cases" / "regression.yaml"
    proc = _agenteval(shipped_run.root, "promote", "reports/latest", failed["id"], "--to",
                      str(out))
    assert proc.returncode == 0, proc.stderr
    assert "taken from its source file" in proc.stdout
    text = out.read_text(encoding="utf-8")
    assert "****" not in text and "!!" not in text
    made = _items(out)
    reg_id = f"{failed['id']}-REG-1"
    reg, near = made[reg_id], made[f"{reg_id}-NEAR-1"]
    phrasing = next(i for i in made.values() if i.get("pair") == {"group": reg_id,
                                                                  "role": "variant"})
    assert reg["pair"] == {"group": reg_id, "role": "clean"}
    assert {i["review_status"] for i in made.values()} == {"candidate"}
    assert "todo" in near["tags"] and "pair" not in near and phrasing["id"] != reg_id
    assert all(f"fails:{r}" in reg["tags"] for r in _ledger_failures(failed))
    _with_rules(pytester.path)
    lint = _agenteval(pytester.path, "lint", "cases")
    assert lint.returncode == 0, lint.stdout
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.runpytest("cases")
    again = {c["id"]: c for c in read_record(pytester.path)["cases"]}
    assert again[reg_id]["status"] == "failed"
    assert _ledger_failures(failed) <= _ledger_failures(again[reg_id])
