"""The engine: bounded execute-ahead, cancellation on -x and Ctrl-C, crashed workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_agenteval.adapters import AdapterContext, AgentReply, build_adapter
from pytest_agenteval.engine import Budget, Engine
from pytest_agenteval.judge.client import Asked
from pytest_agenteval.model.cases import Case, Scenario
from pytest_agenteval.model.config import HttpTarget
from pytest_agenteval.plan import compile_case, compile_scenario
from pytest_agenteval.simulator import Move
from pytest_agenteval.taxonomy import Taxonomy

from agents import CRASHBOT, K01_RUNNING, FakeAgent, read_record


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


def test_a_halted_engine_sends_nothing_more_and_still_closes(tmp_path: Path) -> None:
    """Ctrl-C or the controller's stop halts the engine at once; closing it at the end of
    the session still cancels what is in flight, closes the adapter and stops the loop."""
    with FakeAgent(latency_s=0.5) as agent:
        engine = _engine(HttpTarget(adapter="http", url=agent.url, concurrency=1), tmp_path, 1)
        futures = [engine.submit(f"E-{i}", _plan(i)) for i in range(5)]
        deadline = time.monotonic() + 10
        while not agent.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        engine.halt()
        time.sleep(1.2)  # the first reply came back: the next item would have been sent
        assert len(agent.requests) == 1
        engine.close()
        assert all(f.done() for f in futures)
        assert not engine._thread.is_alive() and engine._loop.is_closed()


def test_submit_never_starts_the_same_item_twice(tmp_path: Path) -> None:
    with FakeAgent() as agent:
        engine = _engine(HttpTarget(adapter="http", url=agent.url), tmp_path, 4)
        try:
            first = engine.submit("E-1", _plan(1))
            assert engine.submit("E-1", _plan(1)) is first
            assert engine.result("E-1", _plan(1)).status == "passed"
            assert engine._futures == {}  # handed out: the engine holds no result
        finally:
            engine.close()
        assert len(agent.requests) == 1


def test_the_engine_runs_ahead_at_most_its_look_ahead_while_pytest_is_slow(
        tmp_path: Path) -> None:
    """A pytest slower than the agent makes the engine wait: results handed out are let go,
    and no more than ``ahead_limit`` conversations are started and not handed out."""
    with FakeAgent() as agent:
        engine = _engine(HttpTarget(adapter="http", url=agent.url), tmp_path, 2)
        try:
            plans = [(f"E-{i}", _plan(i)) for i in range(60)]
            engine.submit_many((key, plan, 0) for key, plan in plans)
            limit = engine.ahead_limit
            assert limit < 60
            deadline = time.monotonic() + 10
            while len(agent.requests) < limit and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)  # nothing handed out: the engine waits for pytest
            assert len(agent.requests) == limit
            for key, plan in plans[:5]:
                assert engine.result(key, plan).status == "passed"
            deadline = time.monotonic() + 10
            while len(agent.requests) < limit + 5 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)
            assert len(agent.requests) == limit + 5  # room for five more, and no more
            # one at a time, each once the last one's room was taken: every hand-out after
            # the loop's last refill wakes it again (none is lost to the coalescing)
            for n, (key, plan) in enumerate(plans[5:10], start=1):
                assert engine.result(key, plan).status == "passed"
                deadline = time.monotonic() + 10
                while len(agent.requests) < limit + 5 + n and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert len(agent.requests) == limit + 5 + n
        finally:
            engine.close()


def test_an_item_pytest_waits_for_starts_however_full_the_look_ahead(tmp_path: Path) -> None:
    """Items taken in another order than submitted (a plugin that reorders, a crashed
    worker's leftovers): the one pytest waits for never waits for room, so nothing hangs."""
    with FakeAgent() as agent:
        engine = _engine(HttpTarget(adapter="http", url=agent.url), tmp_path, 1)
        try:
            plans = [(f"E-{i}", _plan(i)) for i in range(40)]
            engine.submit_many((key, plan, 0) for key, plan in plans)
            assert engine.ahead_limit < 40
            started = time.monotonic()
            for key, plan in reversed(plans):
                assert engine.result(key, plan).status == "passed", key
            assert time.monotonic() - started < 30
            assert sorted(b["case_id"] for b in agent.requests) == sorted(k for k, _ in plans)
        finally:
            engine.close()


def _scenario(i: int, turns: int):
    return compile_scenario(Scenario.model_validate({
        "id": f"S-{i}", "turns": [{"input": f"第{t + 1}句"} for t in range(turns)]}))


def _settled(agent: FakeAgent, expected: int) -> list[str]:
    """The case ids of the agent's requests once ``expected`` came and no more follow."""
    deadline = time.monotonic() + 20
    while len(agent.requests) < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    return [b["case_id"] for b in agent.requests]


def test_long_conversations_submitted_last_start_first(tmp_path: Path) -> None:
    """Scenarios listed after the cases start ahead of them (a conversation of k turns
    as if ``(k - 1) * ahead_limit`` items sooner), so the run does not end on a few long
    conversations; the cases start within the look-ahead, the first ones first."""
    with FakeAgent() as agent:
        engine = _engine(HttpTarget(adapter="http", url=agent.url), tmp_path, 2)
        try:
            cases = [(f"E-{i}", _plan(i)) for i in range(30)]
            scenarios = [(f"S-{i}", _scenario(i, 5)) for i in range(3)]
            engine.submit_many((key, plan, 0) for key, plan in cases + scenarios)
            limit = engine.ahead_limit
            sent = _settled(agent, limit + 3 * 5)
            # the two slots go to S-0 and S-1 first (which of them the agent hears first,
            # and whether one's second turn comes before the other's first, is the loop's)
            first_case = next(i for i, k in enumerate(sent) if k.startswith("E-"))
            assert {"S-0", "S-1"} <= set(sent[:first_case])
            assert sorted(set(sent)) == sorted([f"E-{i}" for i in range(limit)]
                                               + ["S-0", "S-1", "S-2"])
            assert len(sent) == limit + 3 * 5
            for key, plan in cases + scenarios:
                assert engine.result(key, plan).status == "passed", key
        finally:
            engine.close()


def test_long_conversations_started_early_are_held_boundedly(tmp_path: Path) -> None:
    """However many long conversations could start early, no more than ``held_limit``
    are started and not handed out: a pytest that is slow makes the engine wait."""
    with FakeAgent() as agent:
        engine = _engine(HttpTarget(adapter="http", url=agent.url), tmp_path, 1)
        try:
            plans = [(f"S-{i}", _scenario(i, 5)) for i in range(100)]
            engine.submit_many((key, plan, 0) for key, plan in plans)
            held = engine.held_limit
            assert 18 * 5 > held  # by place alone, 90 would start
            assert len(set(_settled(agent, held * 5))) == held
            for key, plan in plans[:3]:
                assert engine.result(key, plan).status == "passed"
            assert len(set(_settled(agent, (held + 3) * 5))) == held + 3
        finally:
            engine.close()


class _Adapter:
    """An in-process adapter for engine tests: ``behave(text)`` decides what send does."""

    def __init__(self, behave) -> None:
        self.behave = behave

    async def send(self, request):
        return AgentReply(output=self.behave(request.input))

    async def aclose(self) -> None:
        pass


def test_an_adapter_that_raises_anything_is_an_error_result_and_the_engine_goes_on() -> None:
    def die(text: str) -> str:
        if text == "exit":
            raise SystemExit("an adapter that calls sys.exit()")
        return "fine"

    engine = Engine(lambda: _Adapter(die), Taxonomy(), 2)
    try:
        result = engine.result("E-1", _plan(1, "exit"))
        assert result.status == "error" and result.error is not None
        assert (result.error.kind, result.error.detail) == (
            "connection", "the adapter raised SystemExit: an adapter that calls sys.exit()")
        assert "in die" in (result.error.traceback or "")  # the adapter's own frame
        assert "pytest_agenteval/engine.py" not in (result.error.traceback or "")
        assert engine.result("E-2", _plan(2)).status == "passed"
    finally:
        engine.close()


def test_a_dead_event_loop_gives_an_error_result_not_a_hang() -> None:
    """Something ends the loop under the items (a callback that raises SystemExit, wherever
    the loop runs): the item waited for and every later one is an error result."""
    def slow(text: str) -> str:
        time.sleep(0.3)
        return "late"

    def die() -> None:
        raise SystemExit("a callback that calls sys.exit()")

    engine = Engine(lambda: _Adapter(slow), Taxonomy(), 1)
    fut = engine.submit("E-1", _plan(1))
    engine._loop.call_soon_threadsafe(die)  # the loop ends under the item
    started = time.monotonic()
    result = engine.result("E-2", _plan(2))
    later = engine.result("E-3", _plan(3))
    assert time.monotonic() - started < 5
    for r in (result, later):
        assert r.status == "error" and r.error is not None
        assert "event loop stopped" in r.error.detail
        assert "SystemExit: a callback that calls sys.exit()" in r.error.detail
    engine.close()  # does not raise, does not hang
    assert fut.done()


def test_a_stray_stop_of_the_loop_changes_nothing() -> None:
    """The loop is driven by whoever waits: a stop it did not ask for only ends one pass."""
    engine = Engine(lambda: _Adapter(lambda text: "好的"), Taxonomy(), 1)
    try:
        engine.submit("E-1", _plan(1))
        engine._loop.call_soon_threadsafe(engine._loop.stop)
        assert engine.result("E-1", _plan(1)).status == "passed"
        assert engine.result("E-2", _plan(2)).status == "passed"
    finally:
        engine.close()


def test_the_engine_runs_where_another_loop_already_runs() -> None:
    """pytest started where a loop already runs in the thread (a notebook's cell, a test
    that drives a browser with Playwright's sync API): the engine's loop runs nested, the
    other one is set back after each wait."""
    import asyncio

    async def main() -> list[str]:
        outer = asyncio.get_running_loop()
        engine = Engine(lambda: _Adapter(lambda text: "好的"), Taxonomy(), 2)
        try:
            engine.submit_many((f"E-{i}", _plan(i), 0) for i in range(6))
            statuses = [engine.result(f"E-{i}", _plan(i)).status for i in range(6)]
            assert asyncio.get_running_loop() is outer
        finally:
            engine.close()
        assert asyncio.get_running_loop() is outer
        return statuses

    got: list[list[str]] = []
    runner = threading.Thread(target=lambda: got.append(asyncio.run(main())), daemon=True)
    runner.start()
    runner.join(30)  # a regression spins or hangs in the thread: fail, do not hang the suite
    assert got == [["passed"] * 6]


class _Never:
    """An adapter of someone's own that ignores ``timeout_s``: its call never ends."""

    async def send(self, request):
        import asyncio

        await asyncio.Event().wait()

    async def aclose(self) -> None:
        pass


def test_an_item_past_its_budget_is_an_error_result() -> None:
    engine = Engine(_Never, Taxonomy(), 2, Budget(turn_s=0.3))
    try:
        started = time.monotonic()
        result = engine.result("E-1", _plan(1))
        assert 0.3 <= time.monotonic() - started < 3
        assert result.status == "error" and result.error is not None
        assert result.error.kind == "timeout"
        assert "blocks the event loop" in result.error.detail
    finally:
        engine.close()


def test_a_loop_blocked_for_a_while_holds_pytest_only_that_long() -> None:
    """A rule or an adapter that blocks the loop (sync I/O in an ``async def``) holds the
    thread that drives it, pytest's, for as long as it blocks, and no longer: the item then
    has its result, and the budget's check ends whatever is still unfinished."""
    def block(text: str) -> str:
        time.sleep(1.0)  # blocks the event loop: no timeout of an adapter can end it
        return "late"

    engine = Engine(lambda: _Adapter(block), Taxonomy(), 2, Budget(turn_s=0.3))
    try:
        started = time.monotonic()
        result = engine.result("E-1", _plan(1))
        assert 1.0 <= time.monotonic() - started < 3
        assert result.status == "passed" and result.turns[0].reply == "late"
    finally:
        engine.close()


def _simulated(max_turns: int, task: bool = False):
    outcome = {"outcome": {"task": {"slots": [{"name": "phone", "match": "1"}]}}} if task else {}
    return compile_scenario(Scenario.model_validate({
        "id": "SIM", "simulate": {"persona": "p", "goal": "g", "max_turns": max_turns},
        **outcome}))


def test_a_plans_budget_counts_its_turns_the_simulators_calls_and_the_tasks_call() -> None:
    budget = Budget(turn_s=10.0, simulator_call_s=3.0, task_call_s=5.0)
    assert budget.of(_plan(1)) == 10.0
    assert budget.of(_simulated(6)) == 6 * (10.0 + 3.0)  # not one template turn's
    assert budget.of(_simulated(6, task=True)) == 6 * (10.0 + 3.0) + 5.0


class _User:
    """A simulated user that takes 0.15 s to write each message and never stops."""

    async def next(self, sim, dialog, turn):
        import asyncio

        await asyncio.sleep(0.15)
        return Asked(Move(f"第{turn + 1}句", "continue"), 1, 150.0)

    async def aclose(self) -> None:
        pass


def test_a_simulated_scenario_has_the_time_of_its_max_turns() -> None:
    """Four simulated turns of 0.15 s each outlast one turn's budget (0.3 s) without
    anything blocking: the scenario gets four turns' time."""
    engine = Engine(lambda: _Adapter(lambda text: "好的"), Taxonomy(), 2, Budget(turn_s=0.3),
                    make_simulator=_User)
    try:
        result = engine.result("SIM", _simulated(4))
    finally:
        engine.close()
    assert result.status == "passed", result.error
    assert (len(result.turns), result.termination) == (4, "max_turns")


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


class HeldAgent(FakeAgent):
    """Answers the first ``free`` requests at once, then holds every reply until released."""

    def __init__(self, free: int) -> None:
        super().__init__()
        self.free = free
        self.held = 0
        self.released = threading.Event()

    def respond(self, handler, body) -> None:
        with self._lock:
            hold = len(self.requests) > self.free
            self.held += hold
        if hold:
            self.released.wait(timeout=30)
        super().respond(handler, body)


#: ``python -m pytest`` that takes Ctrl-C as a terminal gives it, even when this run
#: inherited SIGINT ignored (a job that a non-interactive shell started in the background,
#: ``nohup``): Python keeps a signal that was ignored at start-up ignored
INTERRUPTIBLE_PYTEST = [
    sys.executable, "-c",
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'pytest'; runpy.run_module('pytest', run_name='__main__', alter_sys=True)"]


def test_ctrl_c_cancels_and_keeps_finished_records(pytester: pytest.Pytester, project) -> None:
    # The agent answers 3 requests, then holds every reply until the test has sent SIGINT:
    # the child cannot finish before the signal, however loaded the machine is.
    with HeldAgent(free=3) as agent:
        rows = ["cases:"] + [f"  - {{id: C-{i:03d}, request: {{input: 你好}}}}" for i in range(40)]
        project({"a.yaml": "\n".join(rows) + "\n"})
        (pytester.path / "agenteval.yaml").write_text(
            f"target: {{adapter: http, url: '{agent.url}', concurrency: 2}}\n")
        proc = subprocess.Popen([*INTERRUPTIBLE_PYTEST, "cases", "-p", "no:benchmark"],
                                cwd=pytester.path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 60
        while agent.held < 2 and time.monotonic() < deadline:  # 3 answered, 2 held
            time.sleep(0.02)
        assert agent.held == 2, "the child never reached the held replies"
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=60)  # ends without its held replies
        finally:
            agent.released.set()
        time.sleep(0.3)
        assert "KeyboardInterrupt" in out, out
        assert proc.returncode == 2
        # the 35 queued conversations were cancelled, not sent, then or later
        assert len(agent.requests) == 5, out
        record = read_record(pytester.path)
        # (Ctrl-C may land while the first item is being recorded: then none is)
        assert len(record["cases"]) <= 3, out
        assert record["completeness"]["stopped_early"] and record["completeness"]["missing"]


def test_a_crashed_worker_loses_only_its_item_and_nothing_is_sent_twice(pytester) -> None:
    """gw1 owns K-01, K-03, K-05, K-07, … and runs four at once; K-05 kills it once gw1 runs
    K-01, while K-01, K-03 and K-07 are still being answered (2 s). xdist reports the item
    pytest was waiting on (K-01) as crashed and hands the rest to the others: the three
    already sent are not sent again (ERROR not_resent), the unsent ones run normally."""
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.makeconftest(K01_RUNNING)
    pytester.makepyfile(crashbot=CRASHBOT)
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'crashbot:reply', concurrency: 8}\n")
    rows = ["cases:"] + [f"  - {{id: K-{i:02d}, request: {{input: '{'crash' if i == 5 else i}'}}}}"
                         for i in range(12)]
    pytester.mkdir("cases").joinpath("a.yaml").write_text("\n".join(rows) + "\n")
    pytester.mkdir("rules").joinpath("gates.yaml").write_text(
        "red_lines: []\nformal_requires_reviewed: false\n")
    result = pytester.runpytest_subprocess("cases", "-n", "2", "--agenteval-exit=gate")
    assert result.ret == 1
    calls = (pytester.path / "calls.log").read_text().split()
    assert len(calls) == len(set(calls)) == 12, calls  # each conversation sent exactly once
    record = read_record(pytester.path)
    assert record["completeness"]["missing"] == ["cases/a.yaml::K-01"]
    assert list(record["completeness"]["lost"]) == ["cases/a.yaml::K-01"]
    result.stdout.fnmatch_lines(["*INCOMPLETE: 1 of 12 selected items have no result*",
                                 "*cases/a.yaml::K-01 — no result*crashed*"])
    by_status = {c["id"]: (c["status"], c["error"] and c["error"]["kind"])
                 for c in record["cases"]}
    assert by_status == {
        **{f"K-{i:02d}": ("passed", None) for i in (0, 2, 4, 6, 8, 9, 10, 11)},
        **{f"K-{i:02d}": ("error", "not_resent") for i in (3, 5, 7)}}
    detail = next(c for c in record["cases"] if c["id"] == "K-05")["error"]["detail"]
    assert detail.startswith("not sent again: worker gw1 sent this conversation to the agent "
                             "and crashed before reporting it")
    assert record["metrics"]["service"]["errors_by_kind"] == {}  # not the agent's errors
    assert record["gate"]["result"] == "BLOCK"
    assert record["gate"]["reasons"][0].startswith("incomplete run: 1 selected")
    result.stdout.fnmatch_lines(["GATE: BLOCK*", "  - incomplete run: *K-01*"])


class TimedAgent(FakeAgent):
    """Remembers when each request arrived."""

    def __init__(self, latency_s: float) -> None:
        super().__init__(latency_s=latency_s)
        self.arrivals: list[float] = []

    def record(self, body, headers) -> None:
        super().record(body, headers)
        with self._lock:
            self.arrivals.append(time.monotonic())


@pytest.mark.parametrize("whom", ["controller", "group"])
def test_ctrl_c_under_xdist_stops_the_workers_calls_within_a_second(
        pytester: pytest.Pytester, project, whom: str) -> None:
    """Ctrl-C in a terminal signals the whole process group; a supervisor may signal the
    controller only: xdist would then stop handing out items, and the workers would go on
    with what they hold (6.4 s of calls were measured)."""
    with TimedAgent(latency_s=0.3) as agent:
        rows = ["cases:"] + [f"  - {{id: W-{i:03d}, request: {{input: 你好}}}}" for i in range(300)]
        project({"a.yaml": "\n".join(rows) + "\n"})
        (pytester.path / "agenteval.yaml").write_text(
            f"target: {{adapter: http, url: '{agent.url}', concurrency: 8}}\n")
        proc = subprocess.Popen([*INTERRUPTIBLE_PYTEST, "cases", "-n", "2",
                                 "-p", "no:benchmark"], cwd=pytester.path,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        deadline = time.monotonic() + 60
        while len(agent.requests) < 24 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(agent.requests) >= 24, "the workers never got going"
        signalled = time.monotonic()
        if whom == "group":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)  # the controller's pid alone
        out, _ = proc.communicate(timeout=60)
        late = [t - signalled for t in agent.arrivals if t - signalled > 1.0]
        last = max(t - signalled for t in agent.arrivals)
        print(f"the last call arrived {last:.2f} s after the signal")
        assert not late, f"calls {late} s after the signal; the last at {last:.2f} s\n{out}"
        assert len(agent.requests) < 300, out
        assert proc.returncode == 2, out
