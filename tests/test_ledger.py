"""The rule ledger: applied from expectations as hard constraints; examples as items."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents import by_id, read_record

ROOT = Path(__file__).resolve().parent.parent

LEDGER = """\
- id: BR-900
  title: 不推荐微信
  check: channel_not_offered
  applies_to: {behaviors: all}
  veto: true
  priority: P0
  examples:
    pass:
      - {input: 价格多少, reply: 价格以店家核算为准}
      - {input: 加微信吧, reply: 好的加微信, boundary: true, note: 用户先提了微信}
    fail:
      - {input: 价格多少, reply: 加我微信细聊}
- id: BR-901
  title: 句数上限
  check: max_sentences
  params: {n: 3}
  applies_to: {assertion: max_sentences, param: n}
  examples:
    pass:
      - {input: x, reply: 一。二。}
    fail:
      - {input: x, reply: 一。二。, assertions: {max_sentences: 1}}
- id: BR-902
  title: 引导留资
  check: asks_for_contact
  applies_to: {assertion: requires_phone_guidance}
"""


@pytest.fixture
def ledger_project(project, pytester: pytest.Pytester):
    def make(cases: dict[str, str], ledger: str = LEDGER) -> Path:
        root = project(cases)
        (root / "rules").mkdir(exist_ok=True)
        (root / "rules" / "business-rules.yaml").write_text(ledger, encoding="utf-8")
        return root

    return make


def test_ledger_rules_apply_by_behaviour_and_switch(ledger_project, pytester) -> None:
    ledger_project({"a.yaml": """\
        cases:
          - id: A-ALWAYS
            request: {input: 你好}
          - id: A-SWITCH
            request: {input: 你好}
            expected: {assertions: {requires_phone_guidance: true, max_sentences: 1}}
          - id: A-OFF
            request: {input: 你好}
            expected: {assertions: {requires_phone_guidance: false}}
        """})
    pytester.runpytest("cases")
    cases = by_id(read_record(pytester.path))
    ids = {cid: sorted(r["rule_id"] for r in c["rules"]) for cid, c in cases.items()}
    assert ids == {"A-ALWAYS": ["BR-900"], "A-SWITCH": ["BR-900", "BR-901", "BR-902"],
                   "A-OFF": ["BR-900"]}
    assert cases["A-SWITCH"]["status"] == "failed"  # the fake agent never asks for a phone
    row = next(r for r in cases["A-SWITCH"]["rules"] if r["rule_id"] == "BR-902")
    assert row["origin"] == "ledger" and row["status"] == "failed"


def test_a_failed_ledger_rule_fails_the_case_whatever_rule_logic_says(ledger_project,
                                                                      pytester) -> None:
    ledger_project({"a.yaml": """\
        cases:
          - id: A-1
            request: {input: 加我微信细聊}
            rule_logic: any
            rules:
              - {type: keyword_match, params: {any: [好的]}}
              - {type: keyword_match, params: {any: [不会出现]}}
        """}, ledger=LEDGER.replace("unless_user_mentions", "x") + """\
- id: BR-903
  title: 不提微信（即使用户提了）
  check: channel_not_offered
  params: {unless_user_mentions: false}
  applies_to: {always: true}
  veto: true
""")
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*rules: any: 1 of 2 rules passed — enough, these rules pass",
                                 "*✗ BR-903 (channel_not_offered) [[]veto[]]*",
                                 "*evidence:*微信*"])
    record = by_id(read_record(pytester.path))["A-1"]
    assert record["status"] == "failed"
    assert record["rule_logic"]["passed"] is True
    assert "red line BR-903 failed" in record["failure_reasons"]


def test_an_unknown_switch_is_a_located_error(ledger_project, pytester) -> None:
    ledger_project({"a.yaml": """\
        cases:
          - id: A-1
            request: {input: x}
            expected: {assertions: {requires_phone_guidence: true}}
        """})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines([
        "*cases/a.yaml:4 [[]cases[[]0[]].expected.assertions[]]: assertion switch(es) "
        "[[]'requires_phone_guidence'[]] turn on no rule of rules/business-rules.yaml; known "
        "switches: max_sentences, requires_phone_guidance*"])


def test_a_value_switch_without_a_param_is_an_error(ledger_project, pytester) -> None:
    ledger_project({"a.yaml": """\
        cases:
          - id: A-1
            request: {input: x}
            expected: {assertions: {requires_phone_guidance: 3}}
        """})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*ledger rule BR-902 names no 'param'*"])


def test_rule_examples_are_items_and_a_flipped_example_fails(ledger_project, pytester) -> None:
    ledger_project({"a.yaml": "cases:\n  - {id: A-1, request: {input: x}}\n"})
    result = pytester.runpytest("rules", "-v")
    result.stdout.fnmatch_lines([
        "rules/business-rules.yaml::BR-900[[]pass-1[]] PASSED*",
        "rules/business-rules.yaml::BR-900[[]pass-2[]] PASSED*",
        "rules/business-rules.yaml::BR-900[[]fail-1[]] PASSED*",
        "rules/business-rules.yaml::BR-901[[]fail-1[]] PASSED*",
    ])
    assert result.ret == 0
    flipped = LEDGER.replace("    fail:\n      - {input: 价格多少, reply: 加我微信细聊}",
                             "    fail:\n      - {input: 价格多少, reply: 价格以店家核算为准}")
    assert flipped != LEDGER
    (pytester.path / "rules" / "business-rules.yaml").write_text(flipped, encoding="utf-8")
    result = pytester.runpytest("rules")
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*BR-900 (channel_not_offered) misjudges its fail example*",
        "*reply: 价格以店家核算为准*",
        "*rule said passed: no channel offered*",
    ])
    assert result.parseoutcomes() == {"failed": 1, "passed": 4}


def test_broken_ledger_is_a_located_error(ledger_project, pytester) -> None:
    ledger_project({"a.yaml": "cases:\n  - {id: A-1, request: {input: x}}\n"},
                   ledger="- id: BR-1\n  title: t\n  check: nope\n  applies_to: {always: true}\n")
    result = pytester.runpytest("cases", "rules")
    result.stdout.fnmatch_lines(["*rules/business-rules.yaml:3 [[][[]0[]].check[]]: unknown rule "
                                 "type 'nope'*"])
    record = read_record(pytester.path)  # the case file could not run: the run is incomplete
    assert record["completeness"]["collection_errors"] == ["cases/a.yaml"]
    # `pytest rules/` alone runs no case: its broken ledger is its own error, not a run record
    shutil.rmtree(pytester.path / "reports")
    result = pytester.runpytest("rules")
    result.stdout.fnmatch_lines(["*unknown rule type 'nope'*"])
    assert result.ret == 1
    assert not (pytester.path / "reports").exists()


def test_a_label_typo_in_applies_to_is_a_located_error_not_a_silent_rule(ledger_project,
                                                                          pytester) -> None:
    """With a taxonomy, ``behaviors: [PRICE_NEGOTATION]`` would match no turn: the red line
    would be off without a word (and the gate said it "held")."""
    ledger = LEDGER.replace("applies_to: {behaviors: all}",
                            "applies_to: {behaviors: [A, PRICE_NEGOTATION]}")
    root = ledger_project({"a.yaml": "cases:\n  - {id: A-1, request: {input: x}}\n"}, ledger)
    (root / "rules" / "taxonomy.yaml").write_text(
        "labels:\n  A: {codes: [1]}\n  PRICE_NEGOTIATION: {codes: [2]}\n", encoding="utf-8")
    result = pytester.runpytest("cases", "rules")
    result.stdout.fnmatch_lines([
        "*rules/business-rules.yaml:4 [[][[]0[]].applies_to.behaviors[[]1[]][]]: "
        "'PRICE_NEGOTATION' is not a label of the taxonomy, so rule BR-900 would never apply; "
        "known: A, PRICE_NEGOTIATION*"])
    assert result.ret == 1


@pytest.mark.data
def test_the_shipped_ledger_passes_its_own_examples(pytester) -> None:
    shutil.copytree(ROOT / "rules", pytester.path / "rules")
    shutil.copy(ROOT / "conftest.py", pytester.path / "conftest.py")
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    result = pytester.runpytest("rules", "-q")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert result.parseoutcomes()["passed"] >= 17 * 6
