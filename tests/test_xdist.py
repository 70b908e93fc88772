"""Under xdist: same verdicts, every conversation sent exactly once, none for deselected items."""

from __future__ import annotations

import pytest

from agents import FakeAgent, read_record


def _cases(n: int, prefix: str = "X") -> str:
    rows = ["cases:"]
    for i in range(n):
        word = "再见" if i % 7 == 3 else "你好"
        rows.append(f"  - id: {prefix}-{i:03d}\n    priority: {'P0' if i % 5 == 0 else 'P1'}\n"
                    f"    request: {{input: {word}}}\n"
                    f"    rules: [{{type: keyword_match, params: {{none: [再见]}}}}]")
    return "\n".join(rows) + "\n"


SCENARIOS = """\
scenarios:
  - id: SC-1
    turns: [{input: 一}, {input: 二}, {input: 再见}]
  - id: SC-2
    turns: [{input: 一}, {input: __500__}]
"""


def _verdicts(root) -> dict[str, str]:
    return {c["id"]: c["status"] for c in read_record(root)["cases"]}


def _clear(root) -> None:
    import shutil

    shutil.rmtree(root / "reports")


def test_parallel_and_serial_runs_agree(project, pytester: pytest.Pytester, agent) -> None:
    project({"a.yaml": _cases(30, "A"), "b.yaml": _cases(12, "B"), "s.yaml": SCENARIOS})
    serial = pytester.runpytest("cases")
    serial_verdicts = _verdicts(pytester.path)
    serial_metrics = read_record(pytester.path)["metrics"]["counts"]
    _clear(pytester.path)
    parallel = pytester.runpytest("cases", "-n", "2")
    assert _verdicts(pytester.path) == serial_verdicts
    assert read_record(pytester.path)["metrics"]["counts"] == serial_metrics
    assert serial.parseoutcomes() == parallel.parseoutcomes()
    assert read_record(pytester.path)["completeness"]["complete"] is True


@pytest.mark.parametrize("args", [
    [],                                   # --dist load → agenteval's owned scheduling
    ["--dist", "loadfile"],
    ["--dist", "loadscope"],
    ["--dist", "worksteal"],
    ["--agenteval-dist", "off"],
])
def test_each_conversation_is_sent_exactly_once(project, pytester, agent, args) -> None:
    project({"a.yaml": _cases(40, "A"), "b.yaml": _cases(9, "B"), "s.yaml": SCENARIOS})
    pytester.runpytest("cases", "-n", "3", *args)
    sends = agent.sends_per_case()
    assert len(sends) == 51
    assert set(sends.values()) == {1}, {k: v for k, v in sends.items() if v != 1}
    assert len(read_record(pytester.path)["cases"]) == 51


def test_deselected_items_are_never_sent(project, pytester, agent) -> None:
    project({"a.yaml": _cases(40, "A")})
    pytester.runpytest("cases", "-n", "2", "-m", "P0")
    assert sorted(agent.sends_per_case()) == [f"A-{i:03d}" for i in range(0, 40, 5)]


def test_items_run_ahead_in_every_worker(pytester, project) -> None:
    """With 2 workers and concurrency 8, far more than 2 conversations are in flight."""
    with FakeAgent(latency_s=0.15) as slow:
        project({"a.yaml": _cases(32, "A")})
        (pytester.path / "agenteval.yaml").write_text(
            f"target: {{adapter: http, url: '{slow.url}', concurrency: 8}}\n")
        pytester.runpytest("cases", "-n", "2").assert_outcomes(passed=27, failed=5)
        assert slow.max_in_flight >= 6
        assert slow.max_in_flight <= 8


def test_without_xdist_concurrency_is_bounded(pytester, project) -> None:
    with FakeAgent(latency_s=0.1) as slow:
        project({"a.yaml": _cases(24, "A")})
        (pytester.path / "agenteval.yaml").write_text(
            f"target: {{adapter: http, url: '{slow.url}', concurrency: 5}}\n")
        pytester.runpytest("cases").assert_outcomes(passed=21, failed=3)
        assert slow.max_in_flight == 5
