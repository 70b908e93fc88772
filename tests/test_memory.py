"""What a run keeps: no item's result lives on in a reference cycle.

A result held by a cycle stays until Python's cyclic collector finds it: memory that
grows with the run, and full collections that walk every such result (a cycle in the
agent timeout cost a quarter of a 10,000-case run's CPU).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

#: the run's own conftest.py: everything the cyclic collector frees after collection is
#: kept (gc.DEBUG_SAVEALL) and its types written out at the end of the session
_PROBE = '''
import collections, gc, json
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    gc.collect()
    gc.set_debug(0)
    kinds = collections.Counter(type(o).__qualname__ for o in gc.garbage)
    gc.garbage.clear()
    with open("garbage.json", "w") as f:
        json.dump(kinds, f)
'''

#: what a case's result is made of, and what carries it through the engine
_RESULT_KINDS = {"ItemResult", "TurnResult", "RuleRow", "RuleLogicResult", "IntentResult",
                 "JudgeResult", "Task", "Timeout", "TimerHandle", "_Deadline"}


def test_no_result_is_kept_in_a_reference_cycle(project: Callable[..., Path],
                                                pytester: pytest.Pytester) -> None:
    """Twenty cases that pass and twenty that fail (a rule the reply misses): none of
    their results, tasks or timeouts is freed by the cyclic collector — reference counts
    free them. Before the fixes, every call's timeout held its task and result in a
    cycle, and a failing case's frame (kept by pytest's exception info) its result."""
    rows = ["cases:"]
    for i in range(40):
        word = "好的" if i % 2 else "没有这个词"
        rows.append(f"  - {{id: M-{i:02d}, request: {{input: 你好{i}}}, "
                    f"rules: [{{type: keyword_match, params: {{any: [{word}]}}}}]}}")
    root = project({"m.yaml": "\n".join(rows) + "\n"})
    (root / "conftest.py").write_text(_PROBE, encoding="utf-8")
    result = pytester.runpytest_subprocess("cases", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=20, failed=20)
    kinds = json.loads((root / "garbage.json").read_text())
    kept = {k: n for k, n in kinds.items() if k in _RESULT_KINDS}
    assert kept == {}, kinds


#: the run's conftest.py, imported before the plugin is configured: its exit handler runs
#: after the plugin's (exit handlers run last registered first) and counts what the
#: interpreter's last collections would walk
_EXIT_PROBE = '''
import atexit, gc

def _count():
    with open("tracked.txt", "w") as f:
        f.write(str(len(gc.get_objects())))

atexit.register(_count)
'''


def _tracked_at_exit(pytester: pytest.Pytester, *args: str) -> int:
    pytester.makeconftest(_EXIT_PROBE)
    result = pytester.runpytest_subprocess(*args, "-q", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    return int((pytester.path / "tracked.txt").read_text())


def test_the_exit_walks_nothing_of_the_run(project: Callable[..., Path],
                                          pytester: pytest.Pytester,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the plugin runs, everything alive once the exit handlers run is frozen: the
    interpreter's collections at exit walk none of it (0.7 s after 10,000 cases). Not in
    development mode, whose warnings about garbage collected at exit are wanted."""
    rows = ["cases:"] + [f"  - {{id: X-{i:02d}, request: {{input: 你好{i}}}}}" for i in range(20)]
    project({"x.yaml": "\n".join(rows) + "\n"})
    assert _tracked_at_exit(pytester, "cases") < 500
    monkeypatch.setenv("PYTHONDEVMODE", "1")
    assert _tracked_at_exit(pytester, "cases") > 5000


def test_the_exit_is_left_alone_where_the_plugin_is_not_used(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    assert _tracked_at_exit(pytester) > 5000


#: a conftest.py that leaves a cycle whose finalizer raises, found only by pytest's own
#: collections at unconfigure, and counts what those walk
_LATE_CYCLE = '''
import gc


class Loop:
    def __init__(self):
        self.me = self

    def __del__(self):
        raise RuntimeError("left in a cycle at the end")


def pytest_sessionfinish(session):
    Loop()


def pytest_unconfigure(config):  # after the plugin's (tryfirst), before pytest's collections
    with open("tracked.txt", "w") as f:
        f.write(str(len(gc.get_objects())))
'''


@pytest.mark.parametrize("dev_mode", [False, True])
def test_garbage_left_at_the_end_is_still_reported(project: Callable[..., Path],
                                                  pytester: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  dev_mode: bool) -> None:
    """The plugin's collection before pytest's at unconfigure (after which what is alive
    is frozen) frees the tests' last garbage while pytest's hook for unraisable exceptions
    listens: the warning pytest gives without the plugin is given with it. What pytest's
    collections walk then is only what was made after. In development mode the plugin
    leaves pytest's collections as they are."""
    if dev_mode:
        monkeypatch.setenv("PYTHONDEVMODE", "1")
    project({"x.yaml": "cases:\n  - {id: X-1, request: {input: 你好}}\n"})
    pytester.makeconftest(_LATE_CYCLE)
    result = pytester.runpytest_subprocess("cases", "-q", "-p", "no:cacheprovider",
                                           "-p", "no:hypothesispytest")
    assert result.ret == 0, result.stdout.str()
    text = result.stdout.str() + result.stderr.str()
    assert "PytestUnraisableExceptionWarning" in text, text
    assert "left in a cycle at the end" in text, text
    tracked = int((pytester.path / "tracked.txt").read_text())
    assert tracked > 2000 if dev_mode else tracked < 500, tracked


def test_a_plan_keeps_nothing_a_result_records() -> None:
    """A turn's expectation and an item's initial history, as a result records them, are
    made for that result and go with it: kept on the plan (made after the freeze), they
    stayed for every full collection to walk until the end of the run."""
    from pytest_agenteval.model.cases import Case
    from pytest_agenteval.plan import compile_case

    plan = compile_case(Case.model_validate({
        "id": "K-1", "request": {"input": "你好", "history": [
            {"role": "user", "content": "在吗"}]}, "expected": {"behavior": "GREETING"}}))
    turn = plan.turns[0]
    assert turn.expectation == turn.expectation and turn.expectation is not turn.expectation
    assert plan.messages == plan.messages and plan.messages is not plan.messages
    assert "expectation" not in vars(turn) and "messages" not in vars(plan)


#: the run's conftest.py: keeps each item's call report, and once its teardown has been
#: logged writes what the report still carries of the result (worker or not)
_SLIM_PROBE = '''
import json, os
import pytest

CALLS = {}

@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    if report.when == "call":
        CALLS[report.nodeid] = report

def pytest_runtest_logfinish(nodeid):
    report = CALLS.pop(nodeid, None)
    if report is None:
        return
    kept = {"agenteval": getattr(report, "agenteval", None),
            "typed": "_agenteval_item" in vars(report),
            "wire": "_agenteval_text" in vars(report)}
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"slim-{name}.jsonl", "a") as f:
        f.write(json.dumps(kept) + "\\n")
'''


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_a_logged_item_keeps_only_its_status(project: Callable[..., Path],
                                             pytester: pytest.Pytester,
                                             dist: list[str]) -> None:
    """pytest holds every report till the end: once an item's reports are logged (and,
    on a worker, sent) its call report keeps only the result's status, on the controller,
    in the single process and on every worker."""
    rows = ["cases:"] + [f"  - {{id: S-{i:02d}, request: {{input: 你好{i}}}}}" for i in range(8)]
    root = project({"s.yaml": "\n".join(rows) + "\n"})
    (root / "conftest.py").write_text(_SLIM_PROBE, encoding="utf-8")
    result = pytester.runpytest_subprocess("cases", "-q", "-p", "no:cacheprovider", *dist)
    result.assert_outcomes(passed=8)
    seen = [json.loads(line) for f in sorted(root.glob("slim-*.jsonl"))
            for line in f.read_text().splitlines()]
    assert len(seen) == (16 if dist else 8)  # under xdist: each worker's, and the controller's
    assert all(s == {"agenteval": {"status": "passed"}, "typed": False, "wire": False}
               for s in seen), seen


#: the run's conftest.py: at the first and the last item's end, how many objects the
#: collector has frozen and how many it still walks
_FREEZE_PROBE = '''
import gc, json
import pytest

SEEN = []

def pytest_runtest_logfinish(nodeid):
    SEEN.append(nodeid)
    if len(SEEN) in (1, int(__import__("os").environ["PROBE_LAST"])):
        with open("freeze.jsonl", "a") as f:
            f.write(json.dumps([gc.get_freeze_count(), len(gc.get_objects()),
                                gc.get_threshold()[0]]) + "\\n")

@pytest.hookimpl(trylast=True)
def pytest_unconfigure():
    with open("threshold.txt", "w") as f:
        f.write(str(gc.get_threshold()[0]))
'''


def test_what_a_long_run_keeps_is_frozen_as_it_goes(project: Callable[..., Path],
                                                      pytester: pytest.Pytester,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """What a run keeps alive (pytest's reports; at the start every submitted item's place
    in the engine's queue) leaves the collector's walks every FREEZE_EVERY results: at the
    last item a full collection walks what the last few items made, not the whole run's
    (without it, more at the end than at the first item)."""
    import gc

    from pytest_agenteval._gc import YOUNG
    from pytest_agenteval.runner import FREEZE_EVERY

    n = 3 * FREEZE_EVERY + 10
    rows = ["cases:"] + [f"  - {{id: F-{i:04d}, request: {{input: 你好{i}}}}}" for i in range(n)]
    root = project({"f.yaml": "\n".join(rows) + "\n"})
    (root / "conftest.py").write_text(_FREEZE_PROBE, encoding="utf-8")
    monkeypatch.setenv("PROBE_LAST", str(n))
    result = pytester.runpytest_subprocess("cases", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=n)
    (first_frozen, first_walked, young), (last_frozen, last_walked, _) = [
        json.loads(line) for line in (root / "freeze.jsonl").read_text().splitlines()]
    assert young == YOUNG  # while items run (see _gc.roomier), and Python's after
    assert (root / "threshold.txt").read_text() == str(gc.get_threshold()[0]) == "700"
    assert last_frozen > first_frozen
    assert last_walked < min(first_walked / 4, 20 * FREEZE_EVERY), (first_walked, last_walked)
