"""report.html in a real browser (headless Chromium, from file://): the filters, a failed case
down to its failed rule row, the agent's markup shown as text and never run, the first screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser import chromium, screenshot  # noqa: F401

BOT = '''\
def reply(turn):
    text = turn["input"]
    if "价格" in text:
        return {"output": "加我微信细聊 <script>window.__pwned = 1</script>"
                          "<img src=x onerror=\\"window.__pwned = 2\\"> 13912345678"}
    return {"output": "好的，您好！"}
'''

CASES = """\
cases:
  - {id: HELLO-1, title: 问候, request: {input: 你好}}
  - {id: HELLO-2, title: 再问候, request: {input: 在吗}}
  - id: PRICE-1
    title: 问价不得推荐微信
    request: {input: 这车价格多少}
    rules: [{type: keyword_match, params: {none: [微信]}}]
"""


@pytest.fixture
def report(pytester: pytest.Pytester) -> Path:
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'bot:reply'}\n", encoding="utf-8")
    pytester.path.joinpath("bot.py").write_text(BOT, encoding="utf-8")
    pytester.mkdir("cases").joinpath("a.yaml").write_text(CASES, encoding="utf-8")
    pytester.runpytest("cases").assert_outcomes(passed=2, failed=1)
    return next((pytester.path / "reports").glob("2*/report.html"))


def test_filter_expand_and_the_failed_rule_row_with_the_agents_markup_as_text(
        chromium, report, record_property) -> None:  # noqa: F811
    page = chromium
    page.goto(report.as_uri())
    rows = page.locator("#ledger .row")
    rows.first.wait_for()
    assert rows.count() == 3
    page.click('.chips button[data-status="failed"]')
    assert [rows.nth(i).get_attribute("data-case") for i in range(rows.count())] == ["PRICE-1"]
    row = rows.first
    row.locator(".head").click()
    failed = row.locator('table.rules tr[data-status="failed"]')
    failed.first.wait_for()
    assert failed.count() == 1
    assert failed.first.get_attribute("data-rule") == "PRICE-1:keyword_match#1"
    assert "微信" in failed.first.inner_text()  # the evidence, on the highlighted row
    reply = row.locator(".say.agent .txt").inner_text()
    assert "<script>window.__pwned = 1</script>" in reply and "onerror=" in reply
    assert "139****5678" in reply and "13912345678" not in page.content()
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("#ledger img, #ledger script").count() == 0
    assert page.errors == []
    row.scroll_into_view_if_needed()
    shot = screenshot(page, "report-failed-case", record_property)
    assert shot.stat().st_size > 10_000


def test_a_case_link_opens_that_case_and_all_comes_back(chromium, report) -> None:  # noqa: F811
    page = chromium
    page.goto(report.as_uri() + "#case=PRICE-1")
    page.locator("#ledger .row .detail").first.wait_for()
    assert page.locator("#ledger .row").count() == 1
    page.click("#ledger .more button")
    page.locator("#ledger .row").nth(2).wait_for()
    assert page.locator("#ledger .row").count() == 3
