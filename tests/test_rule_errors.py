"""A rule type that raises: the turn is an ERROR of kind ``rule``, never a business failure."""

from __future__ import annotations

import pytest

from agents import by_id, read_record

CONFTEST = """\
import pytest_agenteval as agenteval


@agenteval.rule("fragile")
def fragile(p: agenteval.NoParams, turn: agenteval.TurnView) -> agenteval.RuleOutcome:
    if "boom" in turn.input:
        return {"oops": 1}["missing"]
    return agenteval.RuleOutcome.passed("fine")
"""

LEDGER = """\
- id: BR-FRAGILE
  title: 一条会崩溃的红线
  check: fragile
  applies_to: {behaviors: all}
  veto: true
  priority: P0
"""


@pytest.fixture
def fragile(project, pytester: pytest.Pytester):
    pytester.makeconftest(CONFTEST)
    rules = pytester.mkdir("rules")
    rules.joinpath("business-rules.yaml").write_text(LEDGER, encoding="utf-8")
    rules.joinpath("gates.yaml").write_text(
        "red_lines: [BR-FRAGILE]\nformal_requires_reviewed: false\n", encoding="utf-8")
    project({"a.yaml": """\
        cases:
          - {id: OK-1, request: {input: 你好}}
          - {id: BOOM-1, request: {input: boom}}
        scenarios:
          - id: FLOW-1
            turns: [{input: 你好}, {input: boom now}, {input: 再见}]
        """})
    return pytester


def test_a_crashing_rule_is_an_error_of_kind_rule_with_its_location(fragile) -> None:
    result = fragile.runpytest("cases", "-v", "--junitxml=junit.xml")
    result.stdout.fnmatch_lines([
        "*::OK-1 PASSED*", "*::BOOM-1 ERROR*", "*::FLOW-1 ERROR*",
        "ERROR case BOOM-1",
        "  agent: 好的：boom",
        "  rule error: a rule type raised; the turn has no verdict (fix the rule, not the agent)",
        "  ! BR-FRAGILE (fragile) [veto]: rule type 'fragile' raised KeyError: 'missing' at "
        "conftest.py:7",
        "*| Traceback (most recent call last):*",
        '*|   File "*conftest.py", line 7, in fragile*',
    ])
    assert "evaluate.py" not in result.stdout.str()
    cases = by_id(read_record(fragile.path))
    boom = cases["BOOM-1"]
    assert boom["status"] == "error"
    assert boom["error"]["kind"] == "rule"
    assert boom["error"]["detail"].startswith("BR-FRAGILE: rule type 'fragile' raised KeyError")
    assert "conftest.py" in boom["error"]["traceback"]
    [row] = boom["rules"]
    assert (row["rule_id"], row["status"]) == ("BR-FRAGILE", "error")
    flow = cases["FLOW-1"]
    assert [t["status"] for t in flow["turns"]] == ["passed", "error", "passed"]
    xml = (fragile.path / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="agenteval_error_kind" value="rule" />' in xml


def test_a_crashing_rule_is_outside_every_business_metric(fragile) -> None:
    fragile.runpytest("cases")
    record = read_record(fragile.path)
    metrics = record["metrics"]
    assert metrics["rules"]["failures_by_rule"] == {}
    assert metrics["rules"]["evaluations_by_rule"] == {"BR-FRAGILE": 3}  # the turns it judged
    assert metrics["red_lines"]["red_lines"]["BR-FRAGILE"]["items_failed"] == 0
    assert metrics["red_lines"]["red_lines_failed"] == []
    success = metrics["success"]
    assert (success["evaluated"], success["errors"]) == (1, 2)
    assert success["success_rate"]["value"] == 1.0
    service = metrics["service"]
    assert (service["agent_errors"], service["errors_by_kind"]) == (0, {})
    assert service["agent_calls"] == 5
    # the gate sees no broken red line: BR-FRAGILE held wherever it gave a verdict
    red = next(c for c in record["gate"]["checks"] if c["check"] == "red_line[BR-FRAGILE]")
    assert red["status"] == "passed"


def test_an_explicit_rule_that_raises_takes_no_part_in_rule_logic(fragile) -> None:
    fragile.path.joinpath("cases", "b.yaml").write_text("""\
cases:
  - id: MIX-1
    request: {input: boom}
    rules: [{type: fragile}, {type: max_chars, params: {n: 100}}]
""", encoding="utf-8")
    fragile.runpytest("cases")
    case = by_id(read_record(fragile.path))["MIX-1"]
    assert case["status"] == "error"
    assert case["rule_logic"]["reason"] == "all: 1 of 1 rules passed"
    assert case["failure_reasons"] == []


def test_a_check_that_returns_no_outcome_names_its_own_definition(project, pytester) -> None:
    pytester.makeconftest("""\
import pytest_agenteval as agenteval


@agenteval.rule("sloppy")
def sloppy(p: agenteval.NoParams, turn: agenteval.TurnView) -> agenteval.RuleOutcome:
    return True
""")
    project({"a.yaml": "cases:\n  - {id: S-1, request: {input: 你好}, rules: [{type: sloppy}]}\n"})
    pytester.runpytest("cases")
    row = by_id(read_record(pytester.path))["S-1"]["rules"][0]
    assert row["status"] == "error"
    assert row["reason"] == ("rule type 'sloppy' raised TypeError: rule type 'sloppy' returned "
                             "bool, not a RuleOutcome at conftest.py:4")


def test_a_rule_that_calls_sys_exit_is_a_rule_error_not_a_dead_engine(project,
                                                                       pytester) -> None:
    pytester.makeconftest("""\
import pytest_agenteval as agenteval


@agenteval.rule("quitter")
def quitter(p: agenteval.NoParams, turn: agenteval.TurnView) -> agenteval.RuleOutcome:
    raise SystemExit("a rule that calls sys.exit() ends its check, not the engine")
""")
    project({"a.yaml": """\
        cases:
          - {id: S-1, request: {input: 你好}, rules: [{type: quitter}]}
          - {id: S-2, request: {input: 你好}}
        """})
    result = pytester.runpytest_subprocess("cases", timeout=60)
    result.assert_outcomes(passed=1, errors=1)
    assert by_id(read_record(pytester.path))["S-1"]["error"]["kind"] == "rule"


def _raises_with_a_cause() -> int:
    try:
        found = {}["missing"] + 1  # a part of the line: 3.11 marks it, parsing the line
    except KeyError as exc:
        raise ValueError("the rule's own error") from exc
    return found


def test_the_user_traceback_is_formatted_without_the_ast_module(monkeypatch) -> None:
    """On 3.11, ``traceback.format_exception`` calls ``ast.parse`` (for its ``^^^`` marks),
    and two threads parsing at once corrupt the shared AST recursion counter (CPython
    gh-106905): a crashing rule on the engine thread once made pytest's assertion
    rewriter raise ``SystemError`` on the main thread, an INTERNALERROR."""
    import ast

    from pytest_agenteval._traceback import user_traceback

    parsed: list[object] = []  # (the traceback module suppresses what a patched parse raises)
    monkeypatch.setattr(ast, "parse", lambda source, *args, **kwargs: parsed.append(source))
    try:
        _raises_with_a_cause()
    except ValueError as exc:
        text = user_traceback(exc)
    monkeypatch.undo()  # pytest parses too, to show a failure
    assert parsed == []
    assert text.startswith("Traceback (most recent call last):\n")
    assert "KeyError: 'missing'" in text
    assert "The above exception was the direct cause of the following exception:" in text
    assert 'found = {}["missing"] + 1' in text
    assert 'raise ValueError("the rule\'s own error") from exc' in text
    assert text.endswith("ValueError: the rule's own error\n")
