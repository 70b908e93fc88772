"""The agent's fault matrix (docs/reliability.md, "The agent") as one family.

One pytest run of one project holds a case per fault of the agent (``FakeAgent``
steered by the input) and a healthy case; a second, concurrent run points at a port
where nothing listens (connection refused needs its own target URL). Every row reads
its verdict from that shared run: the family costs two child runs, not one per row.
Each row promises the exact class in ``results.json``; the run-wide tests promise one
record per item in every artefact, one send per case without retries, a run that ends
at the timeout, and no phone or ID number from a 1 MB reply in any artefact.

The runs are child processes (``python -m pytest``), like a user's, so that a
module-scoped fixture can share them (pytester is function-scoped).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from agents import HUGE_ID, HUGE_OUTPUT, HUGE_PHONE, FakeAgent, by_id, read_record

TIMEOUT_S = 1.5
#: a run whose agent never answers, or drips, ends at the timeout: far below this
RUN_BOUND_S = 20.0
#: a timed-out turn ends at TIMEOUT_S; the agent would end later: __slow__ after 4 s,
#: __drip__ after 4.6 s, __never__ after 60 s
TIMED_OUT_BY_S = 3.5
MASKED_PHONE = "139****5678"
MASKED_ID = "110***********7777"


@dataclass(frozen=True)
class Row:
    case: str
    input: str
    status: str
    kind: str | None = None
    status_code: int | None = None  # error.status_code: the reply's, when there was one
    detail: str | None = None  # how error.detail starts
    failed_rules: tuple[str, ...] = ()
    rules: str = ""  # the case's rules, a YAML flow list
    run: str = "agent"


def _row(row: Row, name: str) -> Any:
    return pytest.param(row, id=name)


ROWS = [
    _row(Row("E-500", "__500__", "error", "http_status", 500, "HTTP 500: "), "http-500"),
    _row(Row("E-404", "__404__", "error", "http_status", 404, "HTTP 404: "), "http-404"),
    _row(Row("E-SLOW", "__slow__", "error", "timeout", detail="no reply within 1.5 s"),
         "reply-after-the-timeout"),
    _row(Row("E-DRIP", "__drip__", "error", "timeout", detail="no reply within 1.5 s"),
         "body-dripped-past-the-timeout"),
    _row(Row("E-NEVER", "__never__", "error", "timeout", detail="no reply within 1.5 s"),
         "never-answering"),
    _row(Row("E-CLOSED", "__closenow__", "error", "connection",
             detail="the server closed the connection before replying"),
         "closed-without-a-reply"),
    _row(Row("E-CUT", "__cutbody__", "error", "connection",
             detail="the reply's body was cut short"), "closed-mid-body"),
    _row(Row("E-NONJSON", "__nonjson__", "error", "bad_body", 200,
             detail="the reply is not JSON (Expecting value at line 1 column 1)"),
         "body-not-json"),
    _row(Row("E-LATIN1", "__latin1__", "error", "bad_body", 200,
             detail="the reply is not UTF-8: byte 0xe9 at offset 15"), "body-not-utf8"),
    _row(Row("E-NOOUTPUT", "__nooutput__", "error", "bad_body", 200,
             detail="response_map.output 'output' is missing"), "output-missing"),
    _row(Row("E-NUMOUTPUT", "__numoutput__", "error", "bad_body", 200,
             detail="response_map.output 'output' is a number"), "output-not-a-string"),
    # An empty reply is a reply, not an agent error: it is judged by the case's rules
    # like any other, so it passes where nothing asks for content and fails where a rule does.
    _row(Row("EMPTY", "__empty__", "passed"), "empty-reply-without-rules"),
    _row(Row("EMPTY-RULED", "__empty__", "failed", failed_rules=("SAYS-SOMETHING",),
             rules=r"[{id: SAYS-SOMETHING, type: regex, params: {pattern: '\S'}}]"),
         "empty-reply-with-a-rule"),
    # 1 MB of text: evaluated in full (a keyword is found, the phone and ID numbers in the
    # middle and at the end are matched) and recorded masked.
    _row(Row("HUGE", "__huge__", "failed", failed_rules=("NO-PHONE", "NO-ID"),
             rules=r"[{type: keyword_match, params: {all: [质保]}},"
                   r" {id: NO-PHONE, type: regex,"
                   r"  params: {pattern: '请拨打\d{11}', must_match: false}},"
                   r" {id: NO-ID, type: regex,"
                   r"  params: {pattern: '身份证\d{17}[\dX]', must_match: false}}]"),
         "1mb-reply"),
    _row(Row("OK", "你好", "passed"), "healthy"),
    _row(Row("E-REFUSED", "你好", "error", "connection", detail="cannot connect to 127.0.0.1:",
             run="refused"), "connection-refused"),
]
AGENT_ROWS = [p.values[0] for p in ROWS if p.values[0].run == "agent"]


@dataclass
class Run:
    root: Path
    out: str
    err: str
    ret: int
    wall_s: float
    sends: Counter[str]

    @cached_property
    def record(self) -> dict[str, Any]:
        return read_record(self.root)

    @property
    def run_dir(self) -> Path:
        return Path(self.record["run"]["run_dir"])


def _layout(root: Path, url: str, rows: list[Row]) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n"
                                     "addopts = -p no:benchmark\n", encoding="utf-8")
    (root / "agenteval.yaml").write_text(
        f"target:\n  adapter: http\n  url: {url}\n  timeout_s: {TIMEOUT_S}\n", encoding="utf-8")
    lines = ["cases:"]
    for row in rows:
        lines.append(f"  - id: {row.case}\n    request: {{input: {row.input}}}")
        if row.rules:
            lines.append(f"    rules: {row.rules}")
    (root / "cases" / "faults.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _start(root: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "cases", "-p", "no:cacheprovider",
         "--junitxml=junit.xml"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """The two runs, started together: ``agent`` (every fault) and ``refused``."""
    with FakeAgent() as agent, socket.socket() as nobody:
        nobody.bind(("127.0.0.1", 0))  # bound and never listening: a connect is refused
        refused_url = f"http://127.0.0.1:{nobody.getsockname()[1]}/chat"
        roots = {"agent": _layout(tmp_path_factory.mktemp("faults"), agent.url, AGENT_ROWS),
                 "refused": _layout(tmp_path_factory.mktemp("refused"), refused_url,
                                    [p.values[0] for p in ROWS
                                     if p.values[0].run == "refused"])}
        started = {name: (time.monotonic(), _start(root)) for name, root in roots.items()}
        done: dict[str, Run] = {}
        for name, (t0, proc) in started.items():
            try:
                out, err = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                pytest.fail(f"the {name} run did not end within 120 s:\n{out}\n{err}")
            done[name] = Run(roots[name], out, err, proc.returncode, time.monotonic() - t0,
                             agent.sends_per_case())
        yield done


@pytest.mark.parametrize("row", ROWS)
def test_a_fault_of_the_agent_has_its_class(runs: dict[str, Run], row: Row) -> None:
    run = runs[row.run]
    record = by_id(run.record).get(row.case)
    assert record is not None, f"{row.case} ({row.input}) has no record:\n{run.out}"
    error = record["error"]
    seen = (record["status"], error and error["kind"])
    assert seen == (row.status, row.kind), (
        f"{row.case} ({row.input}): expected {row.status}/{row.kind}, got {seen}: {error}")
    if row.kind is None:
        assert error is None
        failed = tuple(r["rule_id"] for r in record["rules"] if r["status"] == "failed")
        assert failed == row.failed_rules, record["rules"]
        assert record["response"]["output"] is not None
        return
    assert error["status_code"] == row.status_code, error
    assert row.detail is not None and error["detail"].startswith(row.detail), error["detail"]
    assert record["response"]["output"] is None and record["rules"] == []
    if row.kind == "timeout":  # ended at the timeout, not when the agent would have
        assert TIMEOUT_S * 950 <= record["latency_ms"] < TIMED_OUT_BY_S * 1000, record


def test_every_item_has_exactly_one_record_in_each_artefact(runs: dict[str, Run]) -> None:
    run = runs["agent"]
    expected = sorted(row.case for row in AGENT_ROWS)
    record = run.record
    assert sorted(c["id"] for c in record["cases"]) == expected
    jsonl = [json.loads(line) for line in
             (run.run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines() if line]
    assert sorted(c["id"] for c in jsonl) == expected
    junit = ElementTree.parse(run.root / "junit.xml").getroot()
    assert sorted(tc.get("name", "") for tc in junit.iter("testcase")) == expected
    completeness = record["completeness"]
    assert completeness["expected"] == completeness["received"] == len(expected)
    assert completeness["complete"] and not completeness["missing"]
    assert not completeness["duplicates"]
    # 11 faults are ERROR, the two replies a rule rejects FAILED, never the other way round
    assert re.search(r"= 2 failed, 2 passed, 11 errors in ", run.out), run.out
    assert run.ret == 1
    refused = runs["refused"]
    assert [c["id"] for c in refused.record["cases"]] == ["E-REFUSED"]
    assert refused.ret == 1


def test_each_case_reaches_the_agent_once_without_retries(runs: dict[str, Run]) -> None:
    run = runs["agent"]
    assert run.record["run"]["target"]["retries"] == 0
    assert run.sends == Counter({row.case: 1 for row in AGENT_ROWS})


def test_a_run_with_agents_that_never_answer_or_drip_ends_at_the_timeout(
        runs: dict[str, Run]) -> None:
    run = runs["agent"]
    assert run.wall_s < RUN_BOUND_S, f"the run took {run.wall_s:.1f} s"
    # the cases run concurrently: the run lasts about one timeout, not the agent's 60 s
    assert run.record["run"]["duration_s"] < RUN_BOUND_S / 2


def test_a_1mb_reply_leaks_no_phone_or_id_number_into_any_artefact(runs: dict[str, Run]) -> None:
    run = runs["agent"]
    artefacts = {str(p.relative_to(run.root)): p.read_bytes()
                 for p in sorted((run.root / "reports").rglob("*")) if p.is_file()}
    assert {"results.json", "results.jsonl"} <= {Path(name).name for name in artefacts}
    artefacts["junit.xml"] = (run.root / "junit.xml").read_bytes()
    artefacts["stdout"] = run.out.encode()
    artefacts["stderr"] = run.err.encode()
    for name, data in artefacts.items():
        for raw in (HUGE_PHONE, HUGE_ID):
            assert raw.encode() not in data, f"{raw} unmasked in {name}"
    # the reply was read and recorded whole, masked: not dropped or cut to pass the check
    masked = HUGE_OUTPUT.replace(HUGE_PHONE, MASKED_PHONE).replace(HUGE_ID, MASKED_ID)
    assert by_id(run.record)["HUGE"]["response"]["output"] == masked
    # and the rules' evidence, which quotes both numbers, shows them masked everywhere
    for name in ("stdout", "junit.xml"):
        text = artefacts[name].decode("utf-8")
        assert f"evidence: 请拨打{MASKED_PHONE}" in text, name
        assert f"evidence: 身份证{MASKED_ID}" in text, name
