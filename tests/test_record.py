"""The run record: results.jsonl as items finish, results.json at the end (SPEC 7)."""

from __future__ import annotations

import json

import pytest

from agents import by_id, read_record

CASES = """\
cases:
  - id: R-PASS
    title: 通过
    priority: P0
    request: {input: 你好, knowledge: {a: 1}}
    rules: [{type: keyword_match, params: {any: [好的]}}]
  - id: R-FAIL
    request: {input: 你好}
    rules: [{id: MUST-BYE, type: keyword_match, params: {all: [再见]}}]
  - id: R-ERR
    request: {input: __500__}
  - id: R-PHONE
    request: {input: __phone__}
scenarios:
  - id: R-FLOW
    turns: [{input: 一}, {input: 二}]
"""


def test_results_json_has_the_binding_fields(project, pytester: pytest.Pytester) -> None:
    project({"r.yaml": CASES})
    pytester.runpytest("cases")
    record = read_record(pytester.path)
    assert set(record) >= {"run", "cases", "metrics", "gate", "completeness"}
    run = record["run"]
    assert run["dataset"]["files"][0]["path"] == "cases/r.yaml"
    assert len(run["dataset"]["sha256"]) == 64
    assert run["target"]["adapter"] == "http"
    assert run["versions"]["pytest-agenteval"] and run["versions"]["pytest"]
    cases = by_id(record)
    assert set(cases) == {"R-PASS", "R-FAIL", "R-ERR", "R-PHONE", "R-FLOW"}
    for c in cases.values():
        assert {"id", "kind", "status", "rules", "intent", "judge", "error", "latency_ms",
                "task"} <= set(c)
        assert c["judge"]["status"] == "not_evaluated"
    row = cases["R-FAIL"]["rules"][0]
    assert {k: row[k] for k in ("rule_id", "type", "status")} == {
        "rule_id": "MUST-BYE", "type": "keyword_match", "status": "failed"}
    assert "再见" in row["reason"] and row["evidence"]
    assert cases["R-PASS"]["request"]["knowledge"] == {"a": 1}
    assert cases["R-PASS"]["response"]["output"] == "好的：你好"
    assert cases["R-FLOW"]["kind"] == "scenario" and len(cases["R-FLOW"]["turns"]) == 2
    assert cases["R-PASS"]["task"]["success_level"] == "success"
    assert cases["R-FAIL"]["task"]["success_level"] == "failure"
    assert cases["R-ERR"]["task"]["success_level"] is None
    counts = record["metrics"]["counts"]
    assert (counts["passed"], counts["failed"], counts["error"]) == (3, 1, 1)
    assert record["metrics"]["rules"]["failures_by_rule"] == {"MUST-BYE": 1}
    assert record["completeness"]["complete"] is True
    assert record["gate"]["result"] == "NOT_CONFIGURED"


def test_every_record_has_the_documented_shape(project, pytester) -> None:
    from pytest_agenteval.report.schema import CaseRecord, results_file_model

    project({"r.yaml": CASES})
    pytester.runpytest("cases")
    record = read_record(pytester.path)
    results_file_model().model_validate(record)  # errors, a scenario, masked data included
    for case in record["cases"]:
        CaseRecord.model_validate(case)
    cases = by_id(record)
    assert len(cases["R-FAIL"]["turns"]) == 1  # a case is one turn, and keeps it flat too
    assert cases["R-FAIL"]["rules"] == cases["R-FAIL"]["turns"][0]["rules"]
    assert cases["R-FAIL"]["failure_reasons"] == cases["R-FAIL"]["turns"][0]["failure_reasons"]
    assert cases["R-ERR"]["error"] == cases["R-ERR"]["turns"][0]["error"]
    assert "turns_planned" not in cases["R-FAIL"] and cases["R-FLOW"]["turns_planned"] == 2


def test_jsonl_has_one_line_per_item_as_they_finish(project, pytester) -> None:
    project({"r.yaml": CASES})
    pytester.runpytest("cases")
    (lines_file,) = [p for p in (pytester.path / "reports").glob("*/results.jsonl")
                     if not p.parent.is_symlink()]  # reports/latest leads to the same run
    lines = [json.loads(x) for x in lines_file.read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == ["R-PASS", "R-FAIL", "R-ERR", "R-PHONE", "R-FLOW"]


def test_personal_data_is_masked_everywhere(project, pytester) -> None:
    project({"r.yaml": CASES})
    result = pytester.runpytest("cases", "-rA", "--junitxml=junit.xml")
    text = "\n".join(p.read_text(encoding="utf-8")
                     for p in (pytester.path / "reports").rglob("results.json*"))
    text += result.stdout.str() + (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert "13912345678" not in text and "a.b@example.com" not in text
    assert by_id(read_record(pytester.path))["R-PHONE"]["response"]["output"] == (
        "请拨打 139****5678 或写信到 a***@example.com")


def test_secrets_from_the_environment_never_reach_an_artefact(project, pytester, agent,
                                                             monkeypatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "s3cr3t-t0ken-value")
    project({"r.yaml": "cases:\n  - {id: S-1, request: {input: 你好}}\n"},
            target="  headers: {Authorization: 'Bearer ${AGENT_TOKEN}'}\n")
    pytester.runpytest("cases", "--junitxml=junit.xml").assert_outcomes(passed=1)
    assert agent.headers[0]["Authorization"] == "Bearer s3cr3t-t0ken-value"
    for path in [*(pytester.path / "reports").rglob("*"), pytester.path / "junit.xml"]:
        if path.is_file():
            assert "s3cr3t" not in path.read_text(encoding="utf-8"), path


def test_junit_carries_verdict_and_rule_ids(project, pytester) -> None:
    project({"r.yaml": CASES})
    pytester.runpytest("cases", "--junitxml=junit.xml")
    xml = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="agenteval_verdict" value="failed" />' in xml
    assert '<property name="agenteval_failed_rules" value="MUST-BYE" />' in xml
    assert '<property name="agenteval_error_kind" value="http_status" />' in xml


def test_terminal_summary_counts_and_latency(project, pytester) -> None:
    project({"r.yaml": CASES})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines([
        "*agenteval summary*",
        "items: 5 (4 cases, 1 scenarios)  passed 3 · failed 1 · review 0 · error 1",
        "failures per rule id:",
        "  MUST-BYE * 1",
        "agent: 6 calls, 1 errors {'http_status': 1}; latency P50 * ms · P95 * ms · max * ms",
        "run record: *results.json",
    ])


def test_stopping_early_keeps_finished_records_and_names_the_rest(project, pytester) -> None:
    project({"r.yaml": CASES})
    result = pytester.runpytest("cases", "-x")
    result.stdout.fnmatch_lines(["INCOMPLETE: 3 of 5 selected items have no result "
                                 "(run stopped early):"])
    record = read_record(pytester.path)
    assert [c["id"] for c in record["cases"]] == ["R-PASS", "R-FAIL"]
    assert record["completeness"]["missing"] == ["cases/r.yaml::R-ERR", "cases/r.yaml::R-PHONE",
                                                 "cases/r.yaml::R-FLOW"]


def test_numbers_written_unquoted_are_masked_by_type_everywhere(project, pytester) -> None:
    # an unquoted phone number in a case file is an int; an 18-digit ID number too
    project({"r.yaml": """\
        cases:
          - id: R-INT
            request:
              input: 你好
              knowledge: {owner: {phone: 13912345678, id_card: 110101199003071234}}
              extra: {callback: 13712345678}
            rules: [{type: keyword_match, params: {all: [再见]}}]
        """})
    result = pytester.runpytest("cases", "-rA", "--junitxml=junit.xml")
    artefacts = [*(pytester.path / "reports").rglob("results.json*"), pytester.path / "junit.xml"]
    text = "\n".join(p.read_text(encoding="utf-8") for p in artefacts) + result.stdout.str()
    for raw in ("13912345678", "110101199003071234", "13712345678"):
        assert raw not in text
    case = by_id(read_record(pytester.path))["R-INT"]
    assert case["request"]["knowledge"] == {"owner": {"phone": "139****5678",
                                                      "id_card": "110***********1234"}}
    assert case["request"]["extra"] == {"callback": "137****5678"}
    assert case["turns"][0]["knowledge"]["owner"]["phone"] == "139****5678"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_an_unwritable_reports_folder_is_a_usage_error_before_any_call(project, pytester,
                                                                       agent, xdist) -> None:
    project({"r.yaml": "cases:\n  - {id: A, request: {input: 你好}}\n"})
    (pytester.path / "blocker").write_text("a file, not a folder\n")
    result = pytester.runpytest("cases", "--agenteval-reports-dir", "blocker/reports", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agenteval: the reports folder */blocker/reports cannot be "
                                 "written (Not a directory)*"])
    assert agent.requests == []


SEEN = """\
import json

def pytest_runtest_logreport(report):
    if report.when == "call" and isinstance(getattr(report, "agenteval", None), dict):
        with open("seen.jsonl", "a") as f:  # what every plugin sees while reports are logged
            f.write(json.dumps(sorted(report.agenteval)) + "\\n")

def pytest_terminal_summary(terminalreporter):
    held = [r.agenteval for rs in terminalreporter.stats.values() for r in rs
            if getattr(r, "when", None) == "call" and hasattr(r, "agenteval")]
    assert not any(hasattr(r, "_agenteval_text") for rs in terminalreporter.stats.values()
                   for r in rs)
    with open("held.json", "w") as f:
        json.dump(held, f)
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_reports_let_go_of_their_results_once_every_plugin_has_logged_them(
        project, pytester, workers: list[str]) -> None:
    """Each plugin's pytest_runtest_logreport sees the whole result; the reports pytest
    holds until the end keep only its status (10,000 results there were memory held)."""
    project({"r.yaml": CASES})
    pytester.makeconftest(SEEN)
    result = pytester.runpytest("cases", *workers)
    seen = [json.loads(line) for line in
            (pytester.path / "seen.jsonl").read_text().splitlines()]
    logged = 5 * (2 if workers else 1)  # under xdist, on the workers and on the controller
    assert len(seen) == logged and all({"turns", "status", "id"} <= set(s) for s in seen)
    held = json.loads((pytester.path / "held.json").read_text())
    assert sorted(h["status"] for h in held) == ["error", "failed", "passed", "passed",
                                                 "passed"]
    assert all(set(h) == {"status"} for h in held)
    result.stdout.fnmatch_lines(["*1 failed, 3 passed, 1 error*"])


def test_half_a_character_from_the_agent_is_recorded_as_a_replacement_character(
        project, pytester) -> None:
    """``{"output": "\\ud83d好"}`` is valid JSON and no valid text (an emoji cut in two):
    it is judged as it came, and recorded, printed and reported as U+FFFD — not an
    INTERNALERROR that loses the run's record."""
    project({"s.yaml": """\
cases:
  - id: HALF
    request: {input: __surrogate__}
    rules: [{type: keyword_match, params: {any: [好]}}]
  - id: HALF-FAIL
    request: {input: __surrogate__}
    rules: [{id: NEEDS-BYE, type: keyword_match, params: {all: [再见]}}]
"""})
    result = pytester.runpytest("cases", "--junitxml=j.xml")
    result.assert_outcomes(passed=1, failed=1)
    record = read_record(pytester.path)
    half = by_id(record)["HALF"]
    assert half["status"] == "passed" and half["response"]["output"] == "\ufffd好"
    assert half["response"]["intent_name"] == "\ufffd"
    assert "\ufffd好" in (pytester.path / "j.xml").read_text(encoding="utf-8")
    html = next((pytester.path / "reports").glob("*/report.html")).read_text(encoding="utf-8")
    assert "\ufffd好" in html


DUPLICATE = """\
import copy

import pytest

SAVED = {}


def pytest_runtest_logreport(report):
    if report.when == "call" and report.nodeid.endswith("::R-PASS") and not SAVED:
        again = copy.deepcopy(report)
        again.agenteval["status"] = "failed"  # the second report says otherwise
        SAVED["r"] = again


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid, location):
    again = SAVED.get("r")
    if again is not None and not SAVED.get("sent"):
        SAVED["sent"] = True
        CONFIG[0].hook.pytest_runtest_logreport(report=again)


CONFIG = []


def pytest_configure(config):
    CONFIG.append(config)
"""


def test_an_item_reported_twice_counts_once_as_it_first_came(project, pytester) -> None:
    """The metrics fold each result as it arrives: a second report of an item (the run is
    incomplete) is neither folded again nor put in results.json; results.jsonl has both."""
    pytester.makeconftest(DUPLICATE)
    project({"r.yaml": "cases:\n  - {id: R-PASS, request: {input: 你好}}\n"
                       "  - {id: R-TWO, request: {input: 你好}}\n"})
    pytester.runpytest("cases")
    record = read_record(pytester.path)
    nodeid = "cases/r.yaml::R-PASS"
    assert record["completeness"]["duplicates"] == [nodeid]
    assert [c["nodeid"] for c in record["cases"]].count(nodeid) == 1
    assert by_id(record)["R-PASS"]["status"] == "passed"
    counts = record["metrics"]["counts"]
    assert (counts["total"], counts["passed"], counts["failed"]) == (2, 2, 0)
    assert record["gate"]["result"] in ("BLOCK", "NOT_CONFIGURED")
    run_dir = pytester.path / "reports" / "latest"
    lines = [json.loads(line) for line in
             (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(c["nodeid"], c["status"]) for c in lines if c["nodeid"] == nodeid] == [
        (nodeid, "passed"), (nodeid, "failed")]


MANGLED = """\
import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    payload = getattr(report, "agenteval", None)
    if isinstance(payload, dict) and report.nodeid.endswith("::R-BAD"):
        payload["status"] = "call 13812345678"  # a plugin changed the result on its way
    return report
"""


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_a_result_that_cannot_be_read_back_costs_its_item_not_the_run(project, pytester,
                                                                       dist) -> None:
    pytester.makeconftest(MANGLED)
    project({"r.yaml": "cases:\n  - {id: R-OK, request: {input: 你好}}\n"
                       "  - {id: R-BAD, request: {input: 你好}}\n"
                       "  - {id: R-OK2, request: {input: 你好}}\n"})
    result = pytester.runpytest("cases", *dist)
    assert "INTERNALERROR" not in result.stdout.str()
    record = read_record(pytester.path)
    assert sorted(by_id(record)) == ["R-OK", "R-OK2"]
    completeness = record["completeness"]
    assert completeness["missing"] == ["cases/r.yaml::R-BAD"]
    why = completeness["lost"]["cases/r.yaml::R-BAD"]
    assert why.startswith("no result (record): its result could not be read (ValidationError")
    assert "input_value=" in why and "13812345678" not in why  # masked
    assert record["metrics"]["counts"]["total"] == 2


def test_a_per_item_json_text_reads_back_as_the_json_module_reads_it() -> None:
    """pydantic's parser reads what json_line wrote; a lone surrogate (escaped: another
    writer's JSON) it refuses is read by the json module; what neither reads still raises."""
    from pytest_agenteval.report.record import json_line, json_value

    value = {"id": "K-1", "turns": [{"reply": "好的", "ms": 1.5, "n": 10**20, "x": None}]}
    assert json_value(json_line(value)) == value
    assert json_value(json_line(value).decode()) == value
    assert json_value('{"a": "\\ud83d"}') == json.loads('{"a": "\\ud83d"}') == {"a": "\ud83d"}
    with pytest.raises(ValueError):
        json_value('{"a": ')


def test_a_per_item_json_text_is_strict_json_and_falls_back_where_orjson_refuses() -> None:
    """json_line writes what pydantic-core wrote, byte for byte, except that a NaN or an
    infinity is ``null`` (strict JSON); where orjson refuses (an integer beyond 64 bits, a
    key that is not text, half a character) pydantic-core writes it as before. An earlier
    version's ``NaN`` still reads back."""
    import math

    from pydantic_core import to_json

    from pytest_agenteval.report.record import json_line, json_value

    value = {"id": "K-1", "s": "好的 \u2028 \x00 \"q\" \\ 😀",
             "ms": [0.1, 1e-7, 1e22, -0.0, 5e-324], "n": [0, -1, 2**63 - 1],
             "ok": [True, False, None], "t": (1, "a")}
    assert json_line(value) == to_json(value)
    assert json_line({"score": math.nan, "hi": math.inf, "lo": -math.inf}) == \
        b'{"score":null,"hi":null,"lo":null}'
    for refused in ({"n": 10**20}, {1: "key"}, {"a": "\ud83d"}):
        try:
            expected = to_json(refused)
        except ValueError:  # pydantic-core refuses half a character too: it raises as before
            with pytest.raises(ValueError):
                json_line(refused)
        else:
            assert json_line(refused) == expected
    earlier = json_value(b'{"score":NaN,"n":1}')
    assert math.isnan(earlier["score"]) and earlier["n"] == 1


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 20])
def test_results_json_copies_the_lines_file_byte_for_byte_across_blocks(tmp_path, monkeypatch,
                                                                         block) -> None:
    """results.json's cases are the lines of results.jsonl: copied in blocks when every line
    is wanted (a record straddles blocks of any size), a line at a time when some are not;
    both give the text that joining the lines gives."""
    from pytest_agenteval.report import record as rec

    monkeypatch.setattr(rec, "_BLOCK", block)
    values = [{"id": f"K-{i}", "reply": "好的\n" * i, "n": i} for i in range(12)]

    def written(keep) -> tuple[bytes, list[dict]]:
        writer = rec.RunRecorder(tmp_path / f"reports-{len(keep)}")
        starts = [writer.append(v) for v in values]
        if len(keep) == len(values):  # every line: the blocks, not a line at a time
            monkeypatch.setattr(writer, "lines", None)
        path = writer.finish({"run": {}, "cases": None}, [starts[i] for i in keep])
        return path.read_bytes(), json.loads(path.read_text(encoding="utf-8"))["cases"]

    for keep in (range(12), [0, 3, 11], []):
        text, cases = written(list(keep))
        assert cases == [values[i] for i in keep]
        lines = b",\n    ".join(rec.json_line(values[i]) for i in keep)
        assert text == (b'{\n  "run": {},\n  "cases": ['
                        + (b"\n    " + lines + b"\n  ]" if keep else b"]") + b"\n}\n")


SKIPS = """\
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "R-FAIL":
            item.add_marker(pytest.mark.skip(reason="known broken, ask 13812345678"))
        elif item.name == "R-ERR":
            item.add_marker(pytest.mark.xfail(run=False, reason="agent down"))


def pytest_runtest_setup(item):
    if item.name == "R-PHONE":
        pytest.skip("no phone today")
"""


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_items_pytest_skipped_are_named_with_their_reason_and_are_not_missing(
        project, pytester: pytest.Pytester, dist: list[str]) -> None:
    project({"r.yaml": CASES})
    pytester.makeconftest(SKIPS)
    result = pytester.runpytest("cases", "-p", "no:cacheprovider", *dist)
    result.assert_outcomes(passed=2, skipped=2, xfailed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines([
        "SKIPPED: 3 of 5 selected items were skipped (not evaluated; the gate covers the "
        "others):",
        "  cases/r.yaml::R-FAIL — known broken, ask 138****5678",
        "  cases/r.yaml::R-ERR — xfail: agent down",
        "  cases/r.yaml::R-PHONE — no phone today"])
    assert "INCOMPLETE" not in result.stdout.str()
    record = read_record(pytester.path)
    assert [c["id"] for c in record["cases"]] == ["R-PASS", "R-FLOW"]
    completeness = record["completeness"]
    assert completeness["skipped"] == {"cases/r.yaml::R-FAIL": "known broken, ask 138****5678",
                                       "cases/r.yaml::R-ERR": "xfail: agent down",
                                       "cases/r.yaml::R-PHONE": "no phone today"}
    assert (completeness["expected"], completeness["received"]) == (5, 2)
    assert completeness["missing"] == [] and completeness["complete"] is True
    assert record["gate"]["result"] == "NOT_CONFIGURED"
    run_dir = next((pytester.path / "reports").glob("2*"))
    for name in ("results.json", "report.html"):
        assert "13812345678" not in (run_dir / name).read_text(encoding="utf-8")
    assert "pytest 跳过 3 项，未评估：R-FAIL, R-ERR, R-PHONE" in (  # the report's zh labels
        run_dir / "report.html").read_text(encoding="utf-8")


def test_an_item_that_ran_and_failed_under_xfail_is_recorded_not_skipped(
        project, pytester: pytest.Pytester) -> None:
    project({"r.yaml": CASES})
    pytester.makeconftest("import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
                          "    for item in items:\n"
                          "        item.add_marker(pytest.mark.xfail(reason='known'))\n")
    result = pytester.runpytest("cases", "-p", "no:cacheprovider")
    result.assert_outcomes(xfailed=1, xpassed=3, errors=1)  # R-ERR: an agent error, shown so
    completeness = read_record(pytester.path)["completeness"]
    assert completeness["skipped"] == {} and completeness["received"] == 5
