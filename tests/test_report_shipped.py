"""The reports of the shipped example suite (the README's main job): report.html's first screen
in a browser, pytest-html's extras and summary, and no unmasked phone number anywhere."""

from __future__ import annotations

import html
import json
import re
import unicodedata

import pytest

from browser import chromium, screenshot  # noqa: F401

pytestmark = pytest.mark.data

_SPOKEN = str.maketrans("零〇一幺二两三四五六七八九", "0011223456789")


def _flat(text: str) -> str:
    """Digits as digits: full-width and spoken Chinese ones made ASCII, and the spaces and
    dashes between digits dropped (``138 1234-5678`` → ``13812345678``)."""
    text = unicodedata.normalize("NFKC", text).translate(_SPOKEN)
    return re.sub(r"(?<=\d)[\s\-]+(?=\d)", "", text)


def _phones(text: str) -> set[str]:
    return set(re.findall(r"(?<!\d)1[3-9]\d{9}(?!\d)", _flat(text)))


def test_no_unmasked_phone_number_of_the_shipped_suite_reaches_any_artefact(shipped_run) -> None:
    written = "".join(p.read_text(encoding="utf-8")
                      for p in sorted((shipped_run.root / "cases").rglob("*.yaml")))
    phones = _phones(written)
    assert len(phones) >= 10  # the suite is full of them: the test would see a leak
    for path in shipped_run.artefacts():
        leaked = _phones(path.read_text(encoding="utf-8")) & phones
        assert not leaked, (path.name, sorted(leaked))
    assert not _phones(shipped_run.stdout) & phones


def _pytest_html(shipped_run) -> tuple[str, dict]:
    page = (shipped_run.root / "run.html").read_text(encoding="utf-8")
    blob = re.search(r'data-jsonblob="([^"]*)"', page).group(1)
    return page, json.loads(html.unescape(blob))["tests"]


def test_pytest_html_holds_each_failed_items_rule_ids_and_evidence_and_the_summary(
        shipped_run) -> None:
    page, tests = _pytest_html(shipped_run)
    record = json.loads((shipped_run.run_dir / "results.json").read_text(encoding="utf-8"))
    failed = [c for c in record["cases"] if c["status"] == "failed"]
    assert len(failed) == 6
    for case in failed:
        extra = "".join(e["content"] for e in tests[case["nodeid"]][0]["extras"])
        for row in case["rules"]:
            if row["status"] == "failed":
                assert html.escape(row["rule_id"]) in extra, (case["id"], row["rule_id"])
                assert html.escape(row["evidence"], quote=True) in extra, case["id"]
    summary = page.split('id="results-table"', 1)[0]
    assert 'id="gate-result" data-result="EXPLORATORY"' in summary
    assert "意图识别（L2）" in summary and "PHONE_PROVIDED" in summary and "精确率" in summary
    assert 'data-column-type="agenteval_rules"' in page


def test_the_run_names_its_report_and_keeps_it_small(shipped_run) -> None:
    report = shipped_run.run_dir / "report.html"
    assert f"report: {report}" in shipped_run.stdout
    assert report.stat().st_size < (shipped_run.run_dir / "results.json").stat().st_size / 4


def test_the_shipped_suites_report_opens_with_the_gate_and_conclusions(
        chromium, shipped_run, record_property) -> None:  # noqa: F811
    page = chromium
    page.goto((shipped_run.run_dir / "report.html").as_uri())
    gate = page.locator("#gate-result")
    gate.wait_for()
    height = page.evaluate("window.innerHeight")
    box = gate.bounding_box()
    assert gate.get_attribute("data-result") == "EXPLORATORY"
    assert box is not None and box["y"] + box["height"] < height
    conclusions = page.locator("#conclusions")
    top = conclusions.bounding_box()
    assert top is not None and top["y"] < height * 0.75  # they start on the first screen
    assert conclusions.locator(".card h3").all_inner_texts() == [
        "数据有效性", "阻断项", "核心能力", "主要缺陷", "回归范围"]
    screenshot(page, "report-first-screen", record_property)
    count = page.locator("#ledger .count")
    count.wait_for()
    assert count.inner_text().startswith("显示 100 / 239")  # a page of rows, not 239 trees
    assert page.errors == []
