"""The ``agenteval`` command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _agenteval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agenteval.cli", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)


def test_lint_passes_the_shipped_suite() -> None:
    proc = _agenteval(ROOT, "lint", "cases")
    assert proc.returncode == 0, proc.stdout
    items, errors = (int(x) for x in re.findall(r"(\d+) items, (\d+) errors", proc.stderr)[0])
    assert items >= 50 and errors == 0


def test_lint_lists_every_error_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("cases:\n  - {id: A, request: {input: x}, priority: P7}\n"
                                     "  - {id: B, request: {input: x}, rules: [{type: nope}]}\n")
    (tmp_path / "b.yaml").write_text("cases:\n  - {id: C, request: {input: y}}\n"
                                     "  - {id: C, request: {input: z}}\n")
    proc = _agenteval(tmp_path, "lint", ".")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("a.yaml:2 [cases[0].priority]")
    assert lines[1].startswith("a.yaml:3 [cases[1].rules[0].type]: unknown rule type 'nope'")
    assert lines[2] == ("b.yaml:3 [id]: duplicate id 'C': already used at b.yaml:2; ids must "
                        "be unique in the run")
    assert "1 items, 3 errors" in proc.stderr


def test_lint_knows_the_rule_types_of_conftest(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "import pytest_agenteval as ae\n\n"
        "@ae.rule('house_style')\n"
        "def house_style(p, turn):\n"
        "    return ae.RuleOutcome.passed()\n")
    (tmp_path / "a.yaml").write_text("cases:\n  - {id: A, request: {input: x}, "
                                     "rules: [{type: house_style}]}\n")
    assert _agenteval(tmp_path, "lint", "a.yaml").returncode == 0


def test_schema_is_json_for_a_whole_case_file() -> None:
    doc = json.loads(_agenteval(ROOT, "schema").stdout)
    assert set(doc["properties"]) == {"defaults", "cases", "scenarios"}
    assert doc["additionalProperties"] is False
    assert doc["properties"]["cases"]["items"] == {"$ref": "#/definitions/Case"}
    assert doc["definitions"]["Case"]["additionalProperties"] is False
    assert "turns" in doc["definitions"]["Scenario"]["properties"]


def test_docs_schema_cases_json_is_current(tmp_path: Path) -> None:
    """docs/schema/cases.schema.json is generated; regenerate with
    `agenteval schema cases -o docs/schema/cases.schema.json`."""
    out = tmp_path / "sub" / "cases.schema.json"
    proc = _agenteval(ROOT, "schema", "cases", "--write", str(out))
    assert proc.returncode == 0
    assert proc.stdout == "" and proc.stderr == f"agenteval schema: wrote {out}\n"
    committed = (ROOT / "docs" / "schema" / "cases.schema.json").read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") == committed == _agenteval(ROOT, "schema").stdout


def test_docs_rules_md_is_current() -> None:
    """docs/rules.md is generated; regenerate with `agenteval docs rules > docs/rules.md`."""
    proc = _agenteval(ROOT, "docs", "rules")
    assert proc.returncode == 0
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == proc.stdout


def test_lint_checks_labels_in_the_ledger_and_the_gates_and_needs_no_secret(
        tmp_path: Path) -> None:
    """A typo'd label in ``applies_to`` or ``gates.yaml`` would switch a check off without a
    word; lint finds it, and an unset token under ``target:`` does not stop lint."""
    (tmp_path / "agenteval.yaml").write_text(
        "target: {adapter: http, url: 'http://127.0.0.1:9/chat', "
        "headers: {Authorization: 'Bearer ${NO_SUCH_TOKEN_FOR_LINT}'}}\n")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "taxonomy.yaml").write_text("labels:\n  A: {codes: [1]}\n  B: {codes: [2]}\n")
    (rules / "gates.yaml").write_text("metrics:\n  - {metric: recall, label: AA, min: 0.9}\n")
    (tmp_path / "a.yaml").write_text("cases:\n  - {id: A, request: {input: x}}\n")
    proc = _agenteval(tmp_path, "lint", "a.yaml")
    assert proc.returncode == 1
    assert proc.stdout.startswith("rules/gates.yaml:2 [metrics[0].label]: AA is not a label of "
                                  "the taxonomy; known: A, B")
    (rules / "gates.yaml").write_text("metrics:\n  - {metric: recall, label: A, min: 0.9}\n")
    (rules / "business-rules.yaml").write_text(
        "- id: BR-1\n  title: t\n  check: keyword_match\n  params: {none: [x]}\n"
        "  applies_to: {behaviors: [C]}\n")
    proc = _agenteval(tmp_path, "lint", "a.yaml")
    assert proc.returncode == 1
    assert "rules/business-rules.yaml:5 [[0].applies_to.behaviors[0]]: 'C' is not a label" \
        in proc.stdout
    (rules / "business-rules.yaml").write_text(
        "- id: BR-1\n  title: t\n  check: keyword_match\n  params: {none: [x]}\n"
        "  applies_to: {behaviors: [B]}\n")
    proc = _agenteval(tmp_path, "lint", "a.yaml")
    assert proc.returncode == 0, proc.stdout
