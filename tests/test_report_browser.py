"""report.html in a real browser (headless Chromium, from file://): the filters, a failed case
down to its failed rule row, the agent's markup shown as text and never run, the first screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser import chromium, errors_in_console, screenshot, wait_for  # noqa: F401

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
    pytester.makeini("[pytest]\nagenteval_paths = cases\naddopts = -p no:benchmark\n")
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'bot:reply'}\n", encoding="utf-8")
    pytester.path.joinpath("bot.py").write_text(BOT, encoding="utf-8")
    pytester.mkdir("cases").joinpath("a.yaml").write_text(CASES, encoding="utf-8")
    pytester.runpytest("cases").assert_outcomes(passed=2, failed=1)
    return next((pytester.path / "reports").glob("2*/report.html"))


def test_filter_expand_and_the_failed_rule_row_with_the_agents_markup_as_text(
        chromium, report, record_property) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    chromium.get(report.as_uri())
    rows = wait_for(lambda: chromium.find_elements(By.CSS_SELECTOR, "#ledger .row"))
    assert len(rows) == 3
    chromium.find_element(By.CSS_SELECTOR, '.chips button[data-status="failed"]').click()
    rows = wait_for(lambda: [r for r in chromium.find_elements(By.CSS_SELECTOR, "#ledger .row")
                             if r.is_displayed()])
    assert [r.get_attribute("data-case") for r in rows] == ["PRICE-1"]
    rows[0].find_element(By.CSS_SELECTOR, ".head").click()
    failed = wait_for(lambda: rows[0].find_elements(
        By.CSS_SELECTOR, 'table.rules tr[data-status="failed"]'))
    assert [f.get_attribute("data-rule") for f in failed] == ["PRICE-1:keyword_match#1"]
    assert "微信" in failed[0].text  # the evidence, on the highlighted row
    reply = rows[0].find_element(By.CSS_SELECTOR, ".say.agent .txt").text
    assert "<script>window.__pwned = 1</script>" in reply and "onerror=" in reply
    assert "139****5678" in reply and "13912345678" not in chromium.page_source
    assert chromium.execute_script("return window.__pwned === undefined")
    assert chromium.find_elements(By.CSS_SELECTOR, "#ledger img, #ledger script") == []
    assert errors_in_console(chromium) == []
    chromium.execute_script("arguments[0].scrollIntoView()", rows[0])
    shot = screenshot(chromium, "report-failed-case", record_property)
    assert shot.stat().st_size > 10_000


def test_a_case_link_opens_that_case_and_all_comes_back(chromium, report) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    chromium.get(report.as_uri() + "#case=PRICE-1")
    rows = wait_for(lambda: chromium.find_elements(By.CSS_SELECTOR, "#ledger .row .detail"))
    assert len(rows) == 1
    chromium.find_element(By.XPATH, "//div[@class='more']/button").click()
    assert len(wait_for(lambda: chromium.find_elements(By.CSS_SELECTOR, "#ledger .row"))) == 3
