"""``agenteval dataset diff``, ``agenteval expand`` and ``agenteval promote``.

Unit tests on crafted datasets for the logic (what counts as a change, what a variant
changes, where promoted items go), and end-to-end tests on the shipped suite (marked
``data``): the expansion of the shipped clean cases lints and runs against the
reference agent, and a promoted failure of the shipped run fails again with the same
ledger rule.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agenteval.cli import main

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
    proc = _agenteval(tmp_path, "dataset", "diff", "old", "new")
    assert proc.returncode == 1
    assert "new/single/vehicle_info.yaml:30 [VEHICLE_INFO-001 request.input]" in proc.stdout
    assert added.is_file() and "added (1):" in proc.stdout
