"""Under xdist: same verdicts, every conversation sent exactly once, none for deselected items."""

from __future__ import annotations

import time

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


def test_n_auto_starts_one_worker_per_cpu_and_sends_each_conversation_once(
        project, pytester, agent, monkeypatch) -> None:
    """``-n auto``, the README's parallel run: xdist's own count of CPUs (here set by
    PYTEST_XDIST_AUTO_NUM_WORKERS), each worker running its share ahead."""
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    project({"a.yaml": _cases(40, "A"), "s.yaml": SCENARIOS})
    result = pytester.runpytest("cases", "-n", "auto")
    result.stdout.fnmatch_lines(["*created: 3/3 workers*"])
    assert set(agent.sends_per_case().values()) == {1}
    record = read_record(pytester.path)
    assert len(record["cases"]) == 42 and record["completeness"]["complete"] is True


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


# -- case files compiled once per run, not once per worker -------------------------------------

#: each worker logs the case files it compiles (not those it loads from another worker)
COUNTING = '''
import os


def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        return
    from pytest_agenteval import casefile

    compile_file = casefile.load_case_file

    def counted(path, *args, **kwargs):
        with open(os.path.join(str(config.rootpath), "compiled.log"), "a") as log:
            log.write(f"{config.workerinput['workerid']} {os.path.basename(path)}\\n")
        return compile_file(path, *args, **kwargs)

    casefile.load_case_file = counted
'''

HOUSE_RULE = '''
import pytest_agenteval as agenteval


@agenteval.rule("no_goodbye", params=agenteval.Params)
def no_goodbye(p, turn):
    if "再见" in turn.reply:
        return agenteval.RuleOutcome.failed("said goodbye", "再见")
    return agenteval.RuleOutcome.passed("no goodbye")
'''


def _compiled(root) -> dict[str, list[str]]:
    by_file: dict[str, list[str]] = {}
    for line in (root / "compiled.log").read_text().splitlines():
        worker, name = line.split()
        by_file.setdefault(name, []).append(worker)
    return by_file


def test_each_case_file_is_compiled_by_one_worker(project, pytester, agent) -> None:
    project({"a.yaml": _cases(30, "A"), "b.yaml": _cases(12, "B"), "c.yaml": _cases(5, "C"),
             "s.yaml": SCENARIOS})
    serial = pytester.runpytest("cases")
    serial_verdicts = _verdicts(pytester.path)
    _clear(pytester.path)
    agent.requests.clear()
    pytester.makeconftest(COUNTING)
    parallel = pytester.runpytest("cases", "-n", "3")
    compiled = _compiled(pytester.path)
    assert sorted(compiled) == ["a.yaml", "b.yaml", "c.yaml", "s.yaml"]
    assert all(len(workers) == 1 for workers in compiled.values()), compiled
    assert _verdicts(pytester.path) == serial_verdicts
    assert serial.parseoutcomes() == parallel.parseoutcomes()
    assert set(agent.sends_per_case().values()) == {1}


def test_a_file_with_a_conftest_rule_type_or_an_error_is_compiled_by_every_worker(
        project, pytester, agent) -> None:
    """A conftest's function is not pickled by name (it could resolve to another function in
    another process): each worker compiles such a file itself, as it does a broken one."""
    project({"a.yaml": _cases(10, "A"),
             "own.yaml": "cases:\n  - id: OWN-1\n    request: {input: 再见}\n"
                         "    rules: [{type: no_goodbye}]\n",
             "bad.yaml": "cases:\n  - id: BAD-1\n    request: {input: 你好}\n    prioritty: P0\n"})
    pytester.makeconftest(HOUSE_RULE + COUNTING)
    result = pytester.runpytest("cases", "-n", "2")
    result.assert_outcomes(passed=9, failed=2, errors=1)  # A-003 and OWN-1; bad.yaml
    compiled = _compiled(pytester.path)
    assert compiled["a.yaml"] in (["gw0"], ["gw1"])
    assert sorted(compiled["own.yaml"]) == ["gw0", "gw1"]
    assert sorted(compiled["bad.yaml"]) == ["gw0", "gw1"]
    assert _verdicts(pytester.path)["OWN-1"] == "failed"


def _entry(folder, case, suffix: str):
    """Where :class:`SharedPlans` keeps ``case``'s result (``.pickle``) or claim."""
    import hashlib

    from pytest_agenteval._plans import context

    key = hashlib.blake2b(context("k") + b"a.yaml\0" + case.read_bytes(),
                          digest_size=20).hexdigest()
    return folder / "plans" / f"{key}{suffix}"


def test_a_worker_waits_for_a_live_claimer_and_compiles_when_it_is_gone(tmp_path) -> None:
    import subprocess
    import sys
    import threading
    import time

    from pytest_agenteval._plans import SharedPlans, context

    case = tmp_path / "a.yaml"
    case.write_text("cases: []\n")
    first = SharedPlans(tmp_path, context("k"))
    other = SharedPlans(tmp_path, context("k"))
    calls: list[str] = []

    def slow() -> list[str]:
        time.sleep(0.3)
        calls.append("first")
        return ["compiled"]

    t = threading.Thread(target=lambda: first.get(case, "a.yaml", slow))
    t.start()
    claim = _entry(tmp_path, case, ".claim")
    while not claim.exists():  # the first has claimed it: the other waits, compiles nothing
        time.sleep(0.005)
    assert other.get(case, "a.yaml", lambda: calls.append("other") or ["x"]) == ["compiled"]
    t.join()
    assert calls == ["first"] and other.counts == {"compiled": 0, "loaded": 1, "alone": 0}

    # a claimer that crashed leaves its claim only: compiled at once, not after the wait
    case.write_text("cases: []  # changed: another key\n")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    _entry(tmp_path, case, ".claim").write_text(dead)
    started = time.monotonic()
    assert other.get(case, "a.yaml", lambda: ["alone"]) == ["alone"]
    assert time.monotonic() - started < 2 and other.counts["alone"] == 1

    # a result that cannot be read (cut short, another version): compiled, never an error
    case.write_text("cases: []\n")
    _entry(tmp_path, case, ".pickle").write_bytes(b"\x80\x05 cut")
    fresh = SharedPlans(tmp_path, context("k"))
    assert fresh.get(case, "a.yaml", lambda: ["again"]) == ["again"]


def test_what_pickles_by_name_outside_the_plugin_is_not_shared(tmp_path) -> None:
    from pytest_agenteval._plans import SharedPlans, context

    case = tmp_path / "a.yaml"
    case.write_text("cases: []\n")

    def foreign() -> None:  # this test module's function: not the plugin's
        pass

    plans = SharedPlans(tmp_path, context("k"))
    assert plans.get(case, "a.yaml", lambda: [foreign]) == [foreign]
    assert plans.counts == {"compiled": 0, "loaded": 0, "alone": 1}
    again = SharedPlans(tmp_path, context("k"))
    assert again.get(case, "a.yaml", lambda: ["own"]) == ["own"]  # the failure is marked
    assert again.counts["alone"] == 1


LEDGER_LOADS = '''
import os


def pytest_sessionstart(session):  # before the collection
    config = session.config
    if not hasattr(config, "workerinput"):
        return
    from pytest_agenteval import ledger

    load = ledger.load_ledger

    def counted(*args, **kwargs):
        with open(os.path.join(str(config.rootpath), "ledger.log"), "a") as log:
            log.write(config.workerinput["workerid"] + "\\n")
        return load(*args, **kwargs)

    ledger.load_ledger = counted
'''

BYE_RULE = """\
- id: BR-1
  title: 不说再见
  check: keyword_match
  params: {none: [再见]}
  applies_to: {behaviors: all}
"""


@pytest.mark.parametrize("broken", [False, True], ids=["ledger", "broken-ledger"])
def test_only_a_worker_that_compiles_a_case_file_loads_the_ledger(project, pytester,
                                                                  broken: bool) -> None:
    root = project({"a.yaml": _cases(6, "A")})
    (root / "rules").mkdir(exist_ok=True)
    (root / "rules" / "business-rules.yaml").write_text(
        BYE_RULE.replace("check:", "chek:") if broken else BYE_RULE, encoding="utf-8")
    pytester.makeconftest(COUNTING + LEDGER_LOADS)
    result = pytester.runpytest("cases", "-n", "2")
    loads = (root / "ledger.log").read_text().split()
    if broken:  # each worker compiles the file itself, and reports the ledger's error
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["*rules/business-rules.yaml:1 [[][[]0[]].check[]]: *"])
        assert sorted(loads) == ["gw0", "gw1"]
    else:
        result.assert_outcomes(passed=5, failed=1)  # A-003 says 再见 (see _cases)
        assert loads == _compiled(root)["a.yaml"]  # the one worker that compiled it


#: the run's conftest.py: the second worker takes 1.5 s longer to report its collection
_SLOW_GW1 = '''
import os, time
import time

import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session):
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw1":
        time.sleep(1.5)
        with open("gw1-collected.txt", "w") as f:
            f.write(repr(time.time()))
'''


@pytest.fixture
def request_times(agent) -> list[float]:
    """When each request reached the agent (``time.time()``)."""
    times: list[float] = []
    enter = agent.enter

    def stamped() -> None:
        times.append(time.time())
        enter()

    agent.enter = stamped
    return times


def test_a_worker_starts_its_own_share_while_the_others_still_collect(
        project, pytester, agent, request_times) -> None:
    """Under the owned scheduling a worker's share is known once it has collected: it
    starts its conversations then, not when the controller has every collection and sends
    the items. gw0's calls reach the agent while gw1 is still collecting; every
    conversation is sent once."""
    times = request_times
    root = project({"a.yaml": _cases(20, "A")})
    (root / "conftest.py").write_text(_SLOW_GW1, encoding="utf-8")
    result = pytester.runpytest("cases", "-n", "2")
    result.assert_outcomes(passed=17, failed=3)
    gw1_collected = float((root / "gw1-collected.txt").read_text())
    assert min(times) < gw1_collected - 0.5
    assert set(agent.sends_per_case().values()) == {1}


def test_no_share_starts_early_beside_other_tests(project, pytester, request_times) -> None:
    """A collection with Python tests may differ from worker to worker (xdist then stops the
    run): no conversation starts before the controller has sent the items."""
    times = request_times
    root = project({"a.yaml": _cases(20, "A")})
    (root / "conftest.py").write_text(_SLOW_GW1, encoding="utf-8")
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest("cases", "test_other.py", "-n", "2")
    result.assert_outcomes(passed=18, failed=3)
    assert min(times) > float((root / "gw1-collected.txt").read_text())


#: the run's conftest.py: the controller takes 1.5 s over each worker's collection before
#: its own checks run, so a worker that started its share early would have sent it by then
_SLOW_CONTROLLER = '''
import time
import pytest

@pytest.hookimpl(wrapper=True, optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    time.sleep(1.5)
    return (yield)
'''


@pytest.mark.parametrize("stopper", ["reports", "lint"])
def test_no_share_starts_early_when_the_controller_will_stop_the_run(project, pytester, agent,
                                                                     stopper) -> None:
    """The controller's checks before the first call (the reports folder, --agenteval-lint)
    stop the run once it has a worker's collection: a worker whose share would start early
    makes the same checks first, so nothing reaches the agent."""
    cases = _cases(6, "A")
    if stopper == "lint":
        cases = cases.replace("request: {input: 你好}", "review_status: reviewed\n"
                              "    request: {input: 你好}", 1)
    root = project({"a.yaml": cases})
    (root / "conftest.py").write_text(_SLOW_CONTROLLER, encoding="utf-8")
    (root / "blocker").write_text("a file, not a folder\n")
    args = (["--agenteval-reports-dir", "blocker/reports"] if stopper == "reports"
            else ["--agenteval-lint"])
    result = pytester.runpytest("cases", "-n", "2", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert agent.requests == []
