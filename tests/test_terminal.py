"""What the agent writes never acts on the terminal: control characters are shown escaped."""

from __future__ import annotations

import pytest

from pytest_agenteval.report.text import explain, safe

from factories import item, row, turn


@pytest.mark.parametrize(("text", "shown"), [
    ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"),                   # clear screen, colour
    ("ok\r=== 99 passed in 0.01s ===", "ok\\x0d=== 99 passed in 0.01s ==="),  # forged line
    ("a\nb\r\nc", "a⏎b⏎c"),
    ("bell\x07 del\x7f c1\x85 csi\x9b", "bell\\x07 del\\x7f c1\\x85 csi\\x9b"),
    ("abc\u202edcba", "abc\\u202edcba"),                             # right-to-left override
    ("价格3.37万，里程12000公里", "价格3.37万，里程12000公里"),
])
def test_control_characters_are_shown_escaped(text: str, shown: str) -> None:
    assert safe(text) == shown


def test_an_explanation_has_no_control_character_from_any_field() -> None:
    hostile = "\x1b[2J\r=== 99 passed ===\n\x9b"
    said = turn("failed", rules=[row("BR-1", "failed", reason=f"found {hostile}",
                                     evidence=f"证据{hostile}")])
    said = said.model_copy(update={"input": f"问{hostile}", "reply": f"答{hostile}"})
    result = item("C-1", "failed", title=f"标题{hostile}", turns=[said])
    text = explain(result)
    lines = text.split("\n")
    assert all(not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in line) for line in lines)
    assert "=== 99 passed ===" not in [line.strip() for line in lines]
    assert "\\x1b[2J\\x0d=== 99 passed ===⏎\\x9b" in text


CASES = """\
cases:
  - id: ESC-1
    title: "标题\\e[2J"
    request: {input: "你好\\e[31m\\r=== 99 passed in 0.01s ===\\n伪造"}
    rules: [{type: keyword_match, params: {none: [好的]}}]
"""


def test_the_terminal_gets_no_escape_sequence_from_a_reply(project, pytester) -> None:
    project({"a.yaml": CASES})
    result = pytester.runpytest("cases", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert result.ret == 1
    assert "\x1b" not in out and "\r" not in out
    assert "=== 99 passed in 0.01s ===" not in out.splitlines()
    result.stdout.fnmatch_lines(["*ESC-1: 标题\\x1b[2J*",
                                 "FAILED case ESC-1 — 标题\\x1b[2J",
                                 "*agent: 好的：你好\\x1b[31m\\x0d=== 99 passed in 0.01s ===⏎伪造"])


def test_an_unexpected_fault_in_a_case_item_shows_no_locals_and_is_masked(project,
                                                                          pytester) -> None:
    """Not a verdict (a fault of the plugin's or the environment's): pytest would show its
    long traceback, with every local under ``-l``; a case item shows a short, masked one."""
    project({"a.yaml": "cases:\n  - {id: A, request: {input: 你好}}\n"})
    items, _ = pytester.inline_genitems("cases", "-l")
    [case] = [i for i in items if i.name == "A"]

    def fault() -> None:
        header = "Bearer sk-secret"  # a local that -l would print
        raise RuntimeError(f"boom for 13812345678 {len(header)}\x1b[2J")

    try:
        fault()
    except RuntimeError:
        info = pytest.ExceptionInfo.from_current()
    text = case.repr_failure(info)
    assert "RuntimeError: boom for 138****5678 16\\x1b[2J" in text
    assert "sk-secret" not in text and "\x1b" not in text  # no locals, no raw escape
