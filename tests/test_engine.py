"""The engine: bounded execute-ahead, cancellation on -x and Ctrl-C, crashed workers."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_agenteval.adapters import AdapterContext, build_adapter
from pytest_agenteval.engine import Engine
from pytest_agenteval.model.cases import Case
from pytest_agenteval.model.config import HttpTarget
from pytest_agenteval.plan import compile_case
from pytest_agenteval.taxonomy import Taxonomy

from agents import FakeAgent, read_record


def _plan(i: int, text: str = "你好"):
    return compile_case(Case.model_validate({"id": f"E-{i}", "request": {"input": text}}))


def _engine(target: HttpTarget, root: Path, n: int) -> Engine:
    return Engine(lambda: build_adapter(target, AdapterContext(root, n)), Taxonomy(), n)


def test_close_cancels_queued_and_in_flight_conversations(tmp_path: Path) -> None:
    # the agent answers after 2 s: only the first two can have been sent when close() runs,
    # even on a loaded machine
    with FakeAgent(latency_s=2.0) as slow:
        target = HttpTarget(adapter="http", url=slow.url, concurrency=2)
        engine = _engine(target, tmp_path, 2)
        futures = [engine.submit(f"E-{i}", _plan(i)) for i in range(20)]
        deadline = time.monotonic() + 5
        while not slow.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        engine.close()
        assert all(f.done() for f in futures)
        assert sum(f.cancelled() for f in futures) >= 18
        time.sleep(0.5)
        assert len(slow.requests) <= 2
        with pytest.raises(RuntimeError, match="closed"):
            engine.submit("late", _plan(99))


def test_submit_never_starts_the_same_item_twice(tmp_path: Path) -> None:
    with FakeAgent() as agent:
        engine = _engine(HttpTarget(adapter="http", url=agent.url), tmp_path, 4)
        try:
            first = engine.submit("E-1", _plan(1))
            assert engine.submit("E-1", _plan(1)) is first
            assert engine.result("E-1", _plan(1)).status == "passed"
        finally:
            engine.close()
        assert len(agent.requests) == 1


def test_exitfirst_cancels_what_ran_ahead(pytester: pytest.Pytester, project) -> None:
    with FakeAgent(latency_s=0.3) as slow:
        rows = ["cases:", "  - {id: X-000, request: {input: 你好}, "
                "rules: [{type: keyword_match, params: {all: [再见]}}]}"]
        rows += [f"  - {{id: X-{i:03d}, request: {{input: 你好}}}}" for i in range(1, 30)]
        project({"a.yaml": "\n".join(rows) + "\n"})
        (pytester.path / "agenteval.yaml").write_text(
            f"target: {{adapter: http, url: '{slow.url}', concurrency: 3}}\n")
        pytester.runpytest("cases", "-x").assert_outcomes(failed=1)
        time.sleep(0.8)
        assert len(slow.requests) <= 9, "queued conversations must be cancelled, not sent"


def test_ctrl_c_cancels_and_keeps_finished_records(pytester: pytest.Pytester, project) -> None:
    with FakeAgent(latency_s=0.25) as slow:
        rows = ["cases:"] + [f"  - {{id: C-{i:03d}, request: {{input: 你好}}}}" for i in range(40)]
        project({"a.yaml": "\n".join(rows) + "\n"})
        (pytester.path / "agenteval.yaml").write_text(
            f"target: {{adapter: http, url: '{slow.url}', concurrency: 2}}\n")
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "cases", "-p", "no:benchmark"],
                                cwd=pytester.path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 30
        while len(slow.requests) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        sent_at_exit = len(slow.requests)
        time.sleep(0.6)
        assert "KeyboardInterrupt" in out
        assert proc.returncode == 2
        # nothing is sent after pytest exits, and far from all 40 were sent
        assert len(slow.requests) == sent_at_exit <= 24
        record = read_record(pytester.path)
        assert 1 <= len(record["cases"]) < 40
        assert record["completeness"]["stopped_early"] or record["completeness"]["missing"]


def test_a_crashed_worker_loses_only_its_item_and_the_rest_is_recorded(pytester) -> None:
    pytester.makeini("[pytest]\nagenteval_paths = cases\naddopts = -p no:benchmark\n")
    pytester.makepyfile(crashbot="""
        import os

        def reply(turn):
            if turn["input"] == "crash":
                os._exit(3)
            return {"output": "ok " + turn["input"]}
    """)
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'crashbot:reply', concurrency: 1}\n")
    rows = ["cases:"] + [f"  - {{id: K-{i:02d}, request: {{input: '{'crash' if i == 5 else i}'}}}}"
                         for i in range(12)]
    pytester.mkdir("cases").joinpath("a.yaml").write_text("\n".join(rows) + "\n")
    pytester.mkdir("rules").joinpath("gates.yaml").write_text(
        "red_lines: []\nformal_requires_reviewed: false\n")
    result = pytester.runpytest_subprocess("cases", "-n", "2", "--agenteval-exit=gate")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*INCOMPLETE: * of 12 selected items have no result*",
                                 "*cases/a.yaml::K-* — no result*crashed*"])
    record = read_record(pytester.path)
    missing = record["completeness"]["missing"]
    # the dying worker takes the item pytest was waiting on; with items running ahead that
    # may be a neighbour of K-05, and K-05 then dies on the replacement worker
    assert "cases/a.yaml::K-05" in missing and 1 <= len(missing) <= 2
    assert set(record["completeness"]["lost"]) == set(missing)
    recorded = sorted(c["nodeid"] for c in record["cases"])
    assert recorded == sorted(f"cases/a.yaml::K-{i:02d}" for i in range(12)
                              if f"cases/a.yaml::K-{i:02d}" not in missing)
    assert record["completeness"]["complete"] is False
    assert record["gate"]["result"] == "BLOCK"
    assert record["gate"]["reasons"][0].startswith(f"incomplete run: {len(missing)} selected")
    assert "cases/a.yaml::K-05" in record["gate"]["reasons"][0]
    result.stdout.fnmatch_lines(["GATE: BLOCK*", "  - incomplete run: *K-05*"])
