"""Verdicts: agent failures are ERROR with their kind, rule failures are FAILED with evidence."""

from __future__ import annotations

import pytest

from agents import by_id, read_record

ERRORS = """\
cases:
  - {id: E-500, request: {input: __500__}}
  - {id: E-SLOW, request: {input: __slow__}}
  - {id: E-NONJSON, request: {input: __nonjson__}}
  - {id: E-NOOUTPUT, request: {input: __nooutput__}}
  - {id: E-NUMOUTPUT, request: {input: __numoutput__}}
  - {id: OK-1, request: {input: 你好}}
"""


def test_agent_failures_are_errors_with_their_kind(project, pytester: pytest.Pytester) -> None:
    project({"e.yaml": ERRORS})
    result = pytester.runpytest("cases", "-v")
    result.stdout.fnmatch_lines(["*E-500 ERROR*", "*OK-1 PASSED*"])
    result.stdout.fnmatch_lines(["*1 passed, 5 errors*"])
    assert result.ret == 1
    cases = by_id(read_record(pytester.path))
    kinds = {cid: (c["status"], c["error"] and c["error"]["kind"]) for cid, c in cases.items()}
    assert kinds == {
        "E-500": ("error", "http_status"),
        "E-SLOW": ("error", "timeout"),
        "E-NONJSON": ("error", "bad_body"),
        "E-NOOUTPUT": ("error", "bad_body"),
        "E-NUMOUTPUT": ("error", "bad_body"),
        "OK-1": ("passed", None),
    }
    assert cases["E-500"]["error"]["status_code"] == 500
    assert "response_map.output 'output' is missing" in cases["E-NOOUTPUT"]["error"]["detail"]


def test_an_unreachable_agent_is_a_connection_error(standalone, pytester) -> None:
    standalone("target: {adapter: http, url: 'http://127.0.0.1:9/none', timeout_s: 2}\n",
               {"a.yaml": "cases:\n  - {id: C-1, request: {input: hi}}\n"})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*ERROR*C-1*", "*agent error (connection)*"])
    assert by_id(read_record(pytester.path))["C-1"]["error"]["kind"] == "connection"


def test_failed_rules_are_listed_with_evidence_not_a_traceback(project, pytester) -> None:
    project({"f.yaml": """\
        cases:
          - id: F-1
            request: {input: 加我微信}
            rules:
              - {id: NO-WECHAT, type: keyword_match, params: {none: [微信]}}
              - {type: max_chars, params: {n: 100}}
        """})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines([
        "*FAILED case F-1*",
        "*user:  加我微信*",
        "*agent: 好的：加我微信*",
        "*rules: all: 1 of 2 rules passed*",
        "*✗ NO-WECHAT (keyword_match): forbidden [[]微信[]] found*",
        "*evidence: 微信*",
    ])
    assert "Traceback" not in result.stdout.str()
    assert "pipeline.py" not in result.stdout.str()


@pytest.mark.parametrize(("logic", "threshold", "status"), [
    ("all", 0.7, "failed"),
    ("any", 0.7, "passed"),
    ("weighted", 0.7, "passed"),   # (3·1 + 1·0) / 4 = 0.75
    ("weighted", 0.8, "failed"),
])
def test_rule_logic_combines_explicit_rules(project, pytester, logic, threshold, status) -> None:
    project({"l.yaml": f"""\
        cases:
          - id: L-1
            request: {{input: 你好}}
            rule_logic: {logic}
            rule_pass_threshold: {threshold}
            rules:
              - {{type: keyword_match, params: {{any: [好的]}}, weight: 3}}
              - {{type: keyword_match, params: {{any: [再见]}}, weight: 1}}
        """})
    pytester.runpytest("cases")
    assert by_id(read_record(pytester.path))["L-1"]["status"] == status


def test_wrong_intent_fails_the_case_and_missing_intent_is_not_evaluated(project, pytester):
    project({"i.yaml": """\
        cases:
          - id: I-RIGHT
            request: {input: a, extra: {intent: 9}}
            expected: {behavior: PHONE_PROVIDED, intent_code: 9}
          - id: I-WRONG
            request: {input: b, extra: {intent: 1}}
            expected: {behavior: PHONE_PROVIDED}
          - id: I-UNMAPPED
            request: {input: c, extra: {intent: 77}}
            expected: {behavior: PHONE_PROVIDED}
          - id: I-NONE
            request: {input: d}
            expected: {behavior: PHONE_PROVIDED}
          - id: I-CODE
            request: {input: e, extra: {intent: 9}}
            expected: {intent_code: 10}
        """}, taxonomy=True)
    pytester.runpytest("cases")
    cases = by_id(read_record(pytester.path))
    intent = {cid: (c["status"], c["intent"]["predicted"], c["intent"]["correct"])
              for cid, c in cases.items()}
    assert intent == {
        "I-RIGHT": ("passed", "PHONE_PROVIDED", True),
        "I-WRONG": ("failed", "VEHICLE_INFO", False),
        "I-UNMAPPED": ("failed", "UNKNOWN", False),
        "I-NONE": ("passed", None, None),
        "I-CODE": ("failed", "PHONE_PROVIDED", None),
    }
    assert cases["I-CODE"]["intent"]["code_correct"] is False
    assert cases["I-NONE"]["intent"]["evaluated"] is False


def test_scenario_turns_share_one_conversation_in_order(project, pytester, agent) -> None:
    project({"s.yaml": """\
        scenarios:
          - id: S-1
            knowledge: {price: 8.98万}
            turns:
              - input: 第一句
              - input: 第二句
                knowledge: null
              - input: 第三句
                rules: [{type: keyword_match, params: {any: [第三句]}}]
        """})
    pytester.runpytest("cases").assert_outcomes(passed=1)
    turns = sorted(agent.requests, key=lambda r: r["turn_index"])
    assert [r["input"] for r in turns] == ["第一句", "第二句", "第三句"]
    assert [r["knowledge"] for r in turns] == [{"price": "8.98万"}, None, None]
    assert turns[0]["conversation_id"] is None
    assert turns[1]["conversation_id"] == turns[2]["conversation_id"] == "c-1"
    assert turns[2]["history"] == [
        {"role": "user", "content": "第一句"}, {"role": "assistant", "content": "好的：第一句"},
        {"role": "user", "content": "第二句"}, {"role": "assistant", "content": "好的：第二句"},
    ]
    record = by_id(read_record(pytester.path))["S-1"]
    assert [t["status"] for t in record["turns"]] == ["passed"] * 3
    assert record["kind"] == "scenario"


def test_a_scenario_stops_at_the_first_agent_error(project, pytester, agent) -> None:
    project({"s.yaml": """\
        scenarios:
          - id: S-ERR
            turns: [{input: 一}, {input: __500__}, {input: 三}]
        """})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*turn 2 ERROR*", "*stopped after turn 2 of 3*"])
    assert len(agent.requests) == 2
    record = by_id(read_record(pytester.path))["S-ERR"]
    assert record["status"] == "error" and record["error"]["kind"] == "http_status"


def test_a_body_cut_short_and_a_body_not_utf8_say_what_happened(project, pytester) -> None:
    """aiohttp's ``ContentLengthError: 400`` read like an HTTP 400, and bad bytes were
    called "not JSON"."""
    project({"b.yaml": "cases:\n  - {id: CUT, request: {input: __cutbody__}}\n"
                       "  - {id: LATIN, request: {input: __latin1__}}\n"})
    pytester.runpytest("cases")
    cases = by_id(read_record(pytester.path))
    cut, latin = cases["CUT"]["error"], cases["LATIN"]["error"]
    assert cut["kind"] == "connection"
    assert cut["detail"].startswith("the reply's body was cut short or malformed (")
    assert "400" not in cut["detail"]
    assert latin["kind"] == "bad_body"
    assert latin["detail"] == ("the reply is not UTF-8: byte 0xe9 at offset 15 (line 1); "
                               "JSON replies are UTF-8")


def test_a_misspelt_optional_response_path_is_a_warning_with_the_likely_fix(project,
                                                                           pytester) -> None:
    """``intent_name: intent_nmae`` found in no reply: the summary would otherwise just say
    "the agent returned no intent"."""
    project({"a.yaml": "cases:\n  - {id: A, request: {input: 你好}}\n"
                       "  - {id: B, request: {input: 在吗}}\n"},
            target="  response_map: {output: output, intent_name: intent_nmae}\n")
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines([
        "WARNING: response_map.intent_name 'intent_nmae' was found in no reply (2 answered "
        "turns); the replies have 'intent_name': intent_name counts as not returned"])
    service = read_record(pytester.path)["metrics"]["service"]
    assert service["unfound_paths"] == [{"field": "intent_name", "path": "intent_nmae",
                                         "closest": "intent_name", "turns": 2}]


def test_a_misspelt_output_path_suggests_the_likely_fix(project, pytester) -> None:
    project({"a.yaml": "cases:\n  - {id: A, request: {input: 你好}}\n"},
            target="  response_map: {output: outptu}\n")
    pytester.runpytest("cases")
    detail = by_id(read_record(pytester.path))["A"]["error"]["detail"]
    assert detail.startswith("response_map.output 'outptu' is missing in the reply (did you "
                             "mean 'output'?)")
