"""report.html: written beside every run record, self-contained, safe, compact; pytest-html and
JUnit carry every layer."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_agenteval.report._labels import tables
from pytest_agenteval.report.digest import Digest
from pytest_agenteval.report.html import build_report
from pytest_agenteval.report.record import case_record

from factories import intent, item, row, scenario, turn

CASES = """\
cases:
  - id: OK-1
    title: 你好
    request: {input: 你好}
    expected: {behavior: GREETING}
  - id: XSS-1
    title: "<img src=x onerror=alert(3)> 标题"
    request:
      input: "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2> 13812345678"
    rules: [{type: keyword_match, params: {none: [script]}}]
  - id: DOWN-1
    request: {input: __500__}
"""


def _run_dir(root: Path) -> Path:
    runs = sorted((root / "reports").glob("2*/report.html"))
    assert runs, "no report.html"
    return runs[-1].parent


def _data(page: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="agenteval-data">(.*?)</script>', page,
                  re.S)
    assert m
    return json.loads(m.group(1))


def test_every_run_writes_report_html_beside_its_record(project, pytester) -> None:
    project({"a.yaml": CASES})
    result = pytester.runpytest("cases")
    run = _run_dir(pytester.path)
    assert (run / "results.json").is_file()
    result.stdout.fnmatch_lines([f"report: {run / 'report.html'}"])
    page = (run / "report.html").read_text(encoding="utf-8")
    # the gate opens the page, the case ledger carries every item
    assert page.index('id="gate-result"') < page.index('id="method"') < page.index('id="cases"')
    digest = _data(page)
    assert [c["i"] for c in digest["cases"]] == ["OK-1", "XSS-1", "DOWN-1"]
    by_id = {c["i"]: c for c in digest["cases"]}
    assert by_id["XSS-1"]["s"] == "f" and by_id["DOWN-1"]["s"] == "e"
    assert [digest["s"][r] for r in by_id["XSS-1"]["fr"]] == ["XSS-1:keyword_match#1"]
    assert by_id["DOWN-1"]["L"] == "E" and by_id["XSS-1"]["L"] == "1"


def test_nothing_from_the_data_is_markup_and_the_page_runs_only_its_own_script(
        project, pytester) -> None:
    project({"a.yaml": CASES})
    pytester.runpytest("cases")
    page = (_run_dir(pytester.path) / "report.html").read_text(encoding="utf-8")
    for markup in ("<script>window", "<img src=x", "onerror=alert(3)>"):
        assert markup not in page
    assert "\\u003cscript\\u003ewindow.__pwned=1" in page  # the text, inside the data block
    assert "\\u003cimg src=x onerror=alert(3)\\u003e 标题" in page
    assert "13812345678" not in page and "138****5678" in page
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
    code = [body for attrs, body in scripts if "application/json" not in attrs]
    assert len(code) == 1 and len(scripts) == 3
    digest = base64.b64encode(hashlib.sha256(code[0].encode()).digest()).decode()
    policy = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"',
                                     page).group(1))
    assert f"script-src 'sha256-{digest}'" in policy and "default-src 'none'" in policy
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing is fetched


def test_an_interrupted_runs_record_and_report_are_both_written(project, pytester) -> None:
    project({"a.yaml": CASES})
    result = pytester.runpytest("cases", "-x")  # stops at the first failure
    assert result.ret == 1
    run = _run_dir(pytester.path)
    digest = _data((run / "report.html").read_text(encoding="utf-8"))
    record = json.loads((run / "results.json").read_text(encoding="utf-8"))
    assert [c["i"] for c in digest["cases"]] == [c["id"] for c in record["cases"]]


def test_the_language_follows_the_option_then_the_config(project, pytester) -> None:
    root = project({"a.yaml": CASES})
    pytester.runpytest("cases", "--agenteval-lang", "en")
    assert "<h2>Release gate</h2>" in (_run_dir(root) / "report.html").read_text("utf-8")
    cfg = root / "agenteval.yaml"
    cfg.write_text(cfg.read_text("utf-8") + "language: zh\n", encoding="utf-8")
    pytester.runpytest("cases")
    assert "<h2>发布门禁</h2>" in (_run_dir(root) / "report.html").read_text("utf-8")


def test_both_languages_have_every_word() -> None:
    (en, en_js), (zh, zh_js) = tables()["en"], tables()["zh"]
    assert set(en) == set(zh)
    assert set(en_js) == set(zh_js)
    fields = re.compile(r"\{(\w+)\}")
    for key in en:
        assert set(fields.findall(en[key])) == set(fields.findall(zh[key])), key


def _records(*items: Any) -> list[dict[str, Any]]:
    return [case_record(i.model_dump(mode="json")) for i in items]


def test_the_digest_names_each_failed_layer_and_defect() -> None:
    digest = Digest()
    for rec in _records(
            item("RED", "failed", rules=[row("BR-1", "failed", veto=True, origin="ledger",
                                             evidence="加微信")]),
            item("MISS", "failed", intent_=intent("PHONE_PROVIDED", "OFF_TOPIC")),
            item("DOWN", "error", error="timeout"),
            scenario("FLOW", "failed", turn(), turn("failed", rules=[row("BR-9", "failed")])),
            item("FINE")):
        digest.add(rec)
    cases = {c["i"]: c for c in json.loads(digest.json_text())["cases"]}
    assert {k: c["L"] for k, c in cases.items()} == {
        "RED": "1", "MISS": "2", "DOWN": "E", "FLOW": "1", "FINE": ""}
    assert dict(digest.defects) == {("rule", "BR-1"): ["RED"],
                                    ("intent", "PHONE_PROVIDED", "OFF_TOPIC"): ["MISS"],
                                    ("error", "timeout"): ["DOWN"], ("rule", "BR-9"): ["FLOW"]}
    assert [len(cases["FLOW"]["T"][i]["R"]) for i in (0, 1)] == [0, 1]
    assert digest.statuses == {"failed": 3, "error": 1, "passed": 1}


def _big_case(i: int, template: dict[str, Any]) -> dict[str, Any]:
    case = json.loads(json.dumps(template))
    case["id"] = f"VEHICLE_INFO-{i:05d}"
    for t in case["turns"]:
        t["input"] = f"这台车跑了多少公里，第{i}次问"
        t["reply"] = f"根据车源信息，表显里程3.{i % 97}万公里。留个手机号，店家第一时间联系您。"
    return case


def _template() -> dict[str, Any]:
    """A case as the shipped suite has them: 20 ledger rows, knowledge, a failed row."""
    rows = [row(f"BR-{n:03d}", "failed" if n == 7 else ("not_applicable" if n % 3 else "passed"),
                veto=n % 2 == 0, origin="ledger", reason=f"reason of rule {n}",
                evidence="3.37万公里" if n % 4 == 0 else "") for n in range(20)]
    knowledge = {"carConfigInfo": {"title": "2021款 大众朗逸 1.5L 自动舒适版",
                                   "archives": {"mileage": "3.37万公里", "firstRegDate": "2021-06"},
                                   "price": {"listPrice": "8.98万"}},
                 "storeInfo": {"name": "诚信二手车", "address": "上海市闵行区七莘路1888号"}}
    it = item("T", "failed", turns=[turn("failed", rules=rows, knowledge=knowledge)],
              title="询问里程：回复里必须用知识里的里程", test_family="CORE",
              behaviors=["VEHICLE_INFO"])
    return _records(it)[0]


def test_ten_thousand_cases_make_a_report_of_at_most_15_mb() -> None:
    template = _template()
    digest = Digest()
    for i in range(10_000):
        digest.add(_big_case(i, template))
    doc = {"run": {}, "metrics": {"counts": {"total": 10_000}}, "gate": {}, "completeness": {}}
    page = build_report(doc, digest, "zh")
    size = len(page.encode("utf-8"))
    assert size <= 15 * 1024 * 1024, size
    assert len(_data(page)["cases"]) == 10_000


# -- pytest-html and JUnit -------------------------------------------------------------------


def _pytest_html_tests(path: Path) -> dict[str, Any]:
    page = path.read_text(encoding="utf-8")
    blob = re.search(r'data-jsonblob="([^"]*)"', page).group(1)
    tests: dict[str, Any] = json.loads(html.unescape(blob))["tests"]
    return tests


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_pytest_html_items_carry_their_evidence_and_sortable_columns(project, pytester,
                                                                    workers) -> None:
    project({"a.yaml": CASES})
    pytester.runpytest("cases", "--html=run.html", "--self-contained-html", "-p", "xdist",
                       *workers)
    page = (pytester.path / "run.html").read_text(encoding="utf-8")
    tests = _pytest_html_tests(pytester.path / "run.html")
    xss = tests["cases/a.yaml::XSS-1"][0]
    extra = xss["extras"][0]
    assert extra["format_type"] == "html"
    assert "XSS-1:keyword_match#1" in extra["content"] and "forbidden" in extra["content"]
    assert "&lt;script&gt;window.__pwned=1" in extra["content"]
    assert "<script>" not in extra["content"] and "13812345678" not in extra["content"]
    assert xss["agenteval_verdict"].endswith("FAILED</span>")
    assert xss["agenteval_rules"] == "XSS-1:keyword_match#1"
    assert 'data-column-type="agenteval_latency"' in page
    assert "agent error (http_status)" in tests["cases/a.yaml::DOWN-1"][0]["extras"][0]["content"]
    # the summary: the gate and the main tables
    assert 'id="gate-result"' in page and "意图识别（L2）" in page
    assert "发布门禁" in page


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_junit_properties_carry_every_layer(project, pytester, workers: list[str]) -> None:
    project({"a.yaml": CASES + """\
scenarios:
  - id: TWO
    turns:
      - {input: 第一句, expected: {behavior: A}}
      - {input: 第二句, expected: {behavior: B}}
"""})
    pytester.runpytest("cases", "--junitxml=j.xml", "--agenteval-repeat", "2", *workers)
    xml = (pytester.path / "j.xml").read_text(encoding="utf-8")
    for prop in ('name="agenteval_kind" value="scenario"',
                 'name="agenteval_behavior" value="A,B"',
                 'name="agenteval_intent_expected" value="A|B"',
                 'name="agenteval_trial" value="2/2"', 'name="agenteval_priority" value="',
                 'name="agenteval_verdict" value="error"',
                 'name="agenteval_error_kind" value="http_status"',
                 'name="agenteval_judge" value="not_evaluated"',
                 'name="agenteval_success_level" value="success"',
                 'name="agenteval_termination" value="completed"'):
        assert prop in xml, prop
