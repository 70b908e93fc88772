"""Task completion across the whole dialog (SPEC 3 outcome.task, SPEC 6 formulas)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from judge_server import JudgeServer, fenced_data, honest_scores

from pytest_agenteval.judge import Judge, default_rubric
from pytest_agenteval.metrics._family import RunData
from pytest_agenteval.metrics.flows import FlowsFamily
from pytest_agenteval.metrics.success import (
    OutcomeClassesFamily,
    ScopeFamily,
    Unit,
    success_of_units,
)
from pytest_agenteval.model.cases import Task
from pytest_agenteval.model.config import JudgeConfig
from pytest_agenteval.model.results import Expectation, TaskPart
from pytest_agenteval.task import Utterance, completion, evaluate_task, level
from pytest_agenteval.taxonomy import Taxonomy

from agents import by_id, read_record
from factories import item, scenario, turn

ROOT = Path(__file__).resolve().parent.parent


def _task(**kw: Any) -> Task:
    return Task.model_validate(kw)


def _part(name: str, kind: str, done: bool) -> TaskPart:
    return TaskPart(name=name, kind=kind, status="done" if done else "missing")  # type: ignore[arg-type]


# -- SPEC 6 formulas ---------------------------------------------------------------------------


def test_completion_rate_per_mode() -> None:
    slots = [{"name": "a"}, {"name": "b"}]
    steps = [{"name": "x"}, {"name": "y"}, {"name": "z"}, {"name": "w"}]
    parts = [_part("a", "slot", True), _part("b", "slot", False), _part("x", "step", True),
             _part("y", "step", True), _part("z", "step", True), _part("w", "step", False)]
    assert completion(_task(mode="slot", slots=slots), parts[:2]) == 0.5
    assert completion(_task(mode="step", steps=steps), parts[2:]) == 0.75
    hybrid = _task(mode="hybrid", slots=slots, steps=steps, slot_weight=0.4, step_weight=0.6)
    assert completion(hybrid, parts) == pytest.approx(0.4 * 0.5 + 0.6 * 0.75)
    undecided = [*parts[:1], TaskPart(name="b", kind="slot", status="not_evaluated")]
    assert completion(_task(mode="slot", slots=slots), undecided) is None


@pytest.mark.parametrize(("status", "rate", "expected"), [
    ("passed", 1.0, "success"), ("passed", 0.8, "success"), ("passed", 0.79, "partial"),
    ("passed", 0.5, "partial"), ("passed", 0.49, "failure"), ("review", 1.0, "partial"),
    ("failed", 1.0, "failure"),
])
def test_success_level_thresholds(status: str, rate: float, expected: str) -> None:
    task = _task(slots=[{"name": "a"}], success_threshold=0.8, partial_threshold=0.5)
    assert level(task, status, rate) == expected  # type: ignore[arg-type]


def test_success_rate_pass_rate_and_avg_completion_equal_spec_6() -> None:
    units = [Unit("a", "passed", "success", 1.0), Unit("b", "passed", "success", 0.9),
             Unit("c", "review", "partial", 0.6), Unit("d", "failed", "failure", 0.2),
             Unit("e", "failed", "failure", None), Unit("f", "error", None, None),
             Unit("g", "passed", None, None)]
    out = success_of_units(units)
    s, p, f = 2, 1, 2
    assert out.success_rate.value == pytest.approx((s + 0.5 * p) / (s + p + f))
    assert out.pass_rate.value == pytest.approx((s + p) / (s + p + f))
    assert out.avg_completion == pytest.approx((1.0 + 0.9 + 0.6 + 0.2) / 4)
    assert (out.errors, out.not_evaluated, out.evaluated) == (1, 1, 5)


# -- evaluating a task --------------------------------------------------------------------------

DIALOG = [Utterance(-1, "user", "你好"), Utterance(0, "user", "服务太差了"),
          Utterance(0, "assistant", "非常抱歉，我已记录"),
          Utterance(1, "user", "还有呢"), Utterance(1, "assistant", "会安排专人跟进")]


def _evaluate(task: Task, status: str = "passed", judge: Judge | None = None) -> Any:
    return asyncio.run(evaluate_task(task, DIALOG, status, judge))  # type: ignore[arg-type]


def test_match_decides_from_the_declared_source_in_any_turn() -> None:
    task = _task(mode="step", steps=[
        {"name": "apologise", "match": "抱歉"}, {"name": "specialist", "match": "专人"},
        {"name": "echo", "match": "太差", "source": "agent"}])
    out = _evaluate(task)
    assert [(p.name, p.status, p.turn) for p in out.parts] == [
        ("apologise", "done", 0), ("specialist", "done", 1), ("echo", "missing", None)]
    assert out.completion_rate == pytest.approx(2 / 3) and out.success_level == "partial"


def test_an_ordered_step_done_before_an_earlier_one_does_not_count() -> None:
    task = _task(mode="step", steps=[{"name": "specialist", "match": "专人"},
                                     {"name": "apologise", "match": "抱歉", "ordered": True}])
    out = _evaluate(task)
    assert out.parts[1].status == "missing"
    assert "out of order: apologise (turn 1) must come after specialist (turn 2)" in \
        out.parts[1].reason


UNAPOLOGETIC = [Utterance(0, "user", "服务太差了"), Utterance(0, "assistant", "我已记录"),
               Utterance(1, "user", "还有呢"), Utterance(1, "assistant", "会安排专人跟进")]
COMPLAINT = [{"name": "apologise", "match": "抱歉|道歉"},
             {"name": "record", "match": "记录", "ordered": True},
             {"name": "specialist", "match": "专人", "ordered": True}]


def test_an_earlier_step_never_done_voids_no_later_ordered_step() -> None:
    """No apology: that step is missing, and only it; record and specialist came in order."""
    out = asyncio.run(evaluate_task(_task(mode="step", steps=COMPLAINT), UNAPOLOGETIC,
                                    "passed", None))
    assert [(p.name, p.status) for p in out.parts] == [
        ("apologise", "missing"), ("record", "done"), ("specialist", "done")]
    assert out.completion_rate == pytest.approx(2 / 3)


def test_an_ordered_step_out_of_order_does_not_void_the_steps_after_it() -> None:
    """record (turn 1) came before specialist (turn 2): it is missing; follow_up (turn 2)
    is compared with the turns the earlier steps were observed at, and is in order."""
    task = _task(mode="step", steps=[{"name": "specialist", "match": "专人"},
                                     {"name": "record", "match": "记录", "ordered": True},
                                     {"name": "follow_up", "match": "跟进", "ordered": True}])
    out = asyncio.run(evaluate_task(task, UNAPOLOGETIC, "passed", None))
    assert [(p.name, p.status) for p in out.parts] == [
        ("specialist", "done"), ("record", "missing"), ("follow_up", "done")]
    assert out.parts[1].reason == ("out of order: record (turn 1) must come after specialist "
                                   "(turn 2)")


CAR = {"carConfigInfo": {"price": {"listPrice": "8.98万"}}}


def _knowledge_dialog(*knowledge: dict[str, Any] | None) -> list[Utterance]:
    out = []
    for i, k in enumerate(knowledge):
        out += [Utterance(i, "user", f"第{i + 1}问", k), Utterance(i, "assistant", "好的")]
    return out


@pytest.mark.parametrize(("knowledge", "turn", "evidence"), [
    ((CAR, CAR, CAR), None, ""),                                   # never changes
    ((CAR, CAR, None), 2, "carConfigInfo.price.listPrice: 8.98万 → null"),
    ((CAR, {"carConfigInfo": {"price": {"listPrice": "7.5万"}}}), 1,
     "carConfigInfo.price.listPrice: 8.98万 → 7.5万"),
])
def test_a_task_situation_sees_the_knowledge_as_a_rule_does(knowledge: tuple[Any, ...],
                                                           turn: int | None,
                                                           evidence: str) -> None:
    from pytest_agenteval.rules._situation import bind_situations

    task = _task(slots=[{"name": "withdrawn", "situation": "knowledge_changed"}])
    situations = {("slot", 0): bind_situations(["knowledge_changed"])[0]}
    out = asyncio.run(evaluate_task(task, _knowledge_dialog(*knowledge), "passed", None, 0,
                                    situations))
    part = out.parts[0]
    assert (part.status, part.turn, part.evidence) == (
        "missing" if turn is None else "done", turn, evidence)
    assert part.decided_by == "situation"


def test_a_failed_conversation_is_a_failure_whatever_its_task() -> None:
    out = _evaluate(_task(slots=[{"name": "x", "match": "抱歉", "source": "agent"}]), "failed")
    assert (out.success_level, out.completion_rate, out.reason_code) == (
        "failure", 1.0, "failed_item")


def test_without_a_judge_unmatched_parts_are_not_evaluated() -> None:
    out = _evaluate(_task(mode="step", steps=[{"name": "s", "description": "说明结果"}]))
    assert out.status == "not_evaluated" and out.success_level is None
    assert out.reason_code == "needs_judge" and out.parts[0].status == "not_evaluated"


def _task_judge(body: dict[str, Any]) -> dict[str, Any]:
    """Task parts: p1 done at turn 1, the others not; anything else: the honest judge."""
    system = body["messages"][0]["content"]
    if '"p1"' not in system:
        return honest_scores(body)
    keys = [k for k in json.loads(system[system.index("{\"type\": \"object\""):].split(
        "\nAn example")[0])["properties"] if not k.endswith(("_turn", "_evidence"))]
    out: dict[str, Any] = {}
    for k in keys:
        first = k == "p1"
        out.update({k: first, f"{k}_turn": 1 if first else None,
                    f"{k}_evidence": "专人" if first else ""})
    assert fenced_data(body)["conversation"][0]["turn"] == -1
    return out


def test_the_judge_decides_the_unmatched_parts_in_one_call() -> None:
    task = _task(mode="step", steps=[{"name": "handover", "description": "转专人"},
                                     {"name": "result", "description": "说明会给处理结果"},
                                     {"name": "apologise", "match": "抱歉"}])

    async def go(server: JudgeServer) -> Any:
        judge = Judge(JudgeConfig(model="m", base_url=server.base_url, cache=None),
                      default_rubric(), Taxonomy(), None, "k")
        try:
            return await evaluate_task(task, DIALOG, "passed", judge)
        finally:
            await judge.aclose()

    with JudgeServer(score=_task_judge) as server:
        out = asyncio.run(go(server))
        calls = len(server.chat_calls)
    assert calls == 1 and out.judge_calls == 1
    assert [(p.name, p.status, p.turn, p.decided_by) for p in out.parts] == [
        ("handover", "done", 1, "judge"), ("result", "missing", None, "judge"),
        ("apologise", "done", 0, "match")]
    assert out.completion_rate == pytest.approx(2 / 3) and out.success_level == "partial"


# -- metrics over scenarios -----------------------------------------------------------------------


def _outcome(t: Any, outcome: str) -> Any:
    return t.model_copy(update={"expected": Expectation(outcome=outcome)})


def test_scenario_turns_count_in_the_outcome_classes_and_scope() -> None:
    items = [
        item("c1", outcome="ANSWERABLE"),
        scenario("s1", "failed", _outcome(turn(), "ANSWERABLE"),
                 _outcome(turn("failed"), "OUT_OF_SCOPE"), turn()),
        scenario("s2", "passed", turn()),
    ]
    run = RunData(items)
    classes = OutcomeClassesFamily().compute(run)
    assert classes.ANSWERABLE.items == 2 and classes.ANSWERABLE.success_rate.value == 1.0
    assert classes.OUT_OF_SCOPE.items == 1 and classes.OUT_OF_SCOPE.pass_rate.value == 0.0
    assert classes.unclassified == 1  # s2: no turn declares an outcome
    scope = ScopeFamily().compute(run)
    assert (scope.answerable, scope.out_of_scope, scope.out_of_scope_answered) == (2, 1, 1)


def test_flows_family() -> None:
    done = [TaskPart(name="phone", kind="slot", status="done", turn=1)]
    items = [
        scenario("s1", "passed", turn(), turn(), test_family="LEAD").model_copy(update={
            "task": item("x", completion=1.0).task.model_copy(update={
                "parts": done, "completion_rate": 1.0})}),
        scenario("s2", "failed", turn("failed"), test_family="LEAD"),
        scenario("s3", "error", turn("error"), test_family="COMPLAINT").model_copy(
            update={"termination": "sut_error"}),
    ]
    out = FlowsFamily().compute(RunData(items))
    assert out.scenarios == 3 and out.by_family["LEAD"].value == 0.5
    assert out.by_family["COMPLAINT"].errors == 1
    assert out.termination == {"completed": 2, "sut_error": 1}
    assert out.completion == {"1": 1} and out.parts["phone"].value == 1.0


def test_flows_count_the_scenarios_not_the_cases() -> None:
    """A case is a one-turn conversation, not a flow: 2 scenarios end as 2, not as 5."""
    items = [item("c1"), item("c2"), item("c3", "error", error="rule",
                                          termination="infra_error"),
             scenario("s1", "passed", turn(), turn()),
             scenario("s2", "error", turn(), turn("error", error="simulator"),
                      termination="infra_error")]
    out = FlowsFamily().compute(RunData(items))
    assert out.termination == {"completed": 1, "infra_error": 1} and out.infra_errors == 1
    lines = FlowsFamily().summary(out, None)  # type: ignore[arg-type]
    assert lines[1] == "  ended: completed 1, infra_error 1"


def test_the_tasks_judge_calls_are_judge_calls_and_the_simulators_are_apart() -> None:
    from pytest_agenteval.metrics.judge import JudgeFamily
    from pytest_agenteval.model.results import JudgeResult, SimulatorRecord, TaskResult

    l3 = JudgeResult(status="passed", verdict="passed", scores={"relevance": 5}, calls=1)
    played = scenario("s1", "passed", turn(judge=l3), turn(judge=l3, rule_judge_calls=1),
                      task=TaskResult(status="evaluated", judge_calls=2),
                      simulator=SimulatorRecord(calls=4))
    run = RunData([played, item("c1", judge=l3)])
    judge = JudgeFamily().compute(run)
    assert (judge.calls, judge.rule_calls, judge.task_calls) == (3 + 1 + 2, 1, 2)
    flows = FlowsFamily().compute(run)
    assert (flows.simulated, flows.simulator_calls) == (1, 4)
    assert "1 conversation(s), 4 simulator call(s)" in FlowsFamily().summary(flows, None)[-1]  # type: ignore[arg-type]


# -- in a run -----------------------------------------------------------------------------------

FAILED_WITH_TASK = """\
scenarios:
  - id: S-FAIL
    turns:
      - input: 我的手机是13800000000
        rules: [{type: keyword_match, params: {all: [授权]}}]
    outcome:
      task:
        mode: slot
        slots: [{name: phone, situation: user_gave_contact}]
"""


def test_a_failed_scenario_with_a_task_counts_as_a_failure(project, pytester) -> None:
    project({"a.yaml": FAILED_WITH_TASK})
    pytester.runpytest("cases")
    record = read_record(pytester.path)
    task = by_id(record)["S-FAIL"]["task"]
    assert task["success_level"] == "failure" and task["completion_rate"] == 1.0
    success = record["metrics"]["success"]
    assert success["evaluated"] == 1 and success["success_rate"]["value"] == 0.0


def test_an_unknown_situation_in_a_task_is_a_located_error(project, pytester) -> None:
    project({"a.yaml": FAILED_WITH_TASK.replace("user_gave_contact", "user_gave_phone")})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*cases/a.yaml:* [[]scenarios[[]0[]].outcome.task.slots"
                                 "[[]0[]].situation[]]: unknown situation 'user_gave_phone'*"])


DO_NOTHING = "def reply(req):\n    return {'output': '好的'}\n"


def test_a_do_nothing_agent_fails_every_task(standalone, pytester) -> None:
    root = standalone("target: {adapter: python, callable: lazy:reply}\n", {})
    (root / "lazy.py").write_text(DO_NOTHING, encoding="utf-8")
    shutil.copytree(ROOT / "cases" / "flows", root / "cases" / "flows")
    shutil.copytree(ROOT / "rules", root / "rules")
    pytester.runpytest("cases")
    record = read_record(pytester.path)
    tasks = [c for c in record["cases"] if c["task"]["parts"]]
    assert len(tasks) >= 20
    assert {c["task"]["success_level"] for c in tasks} == {"failure"}
    parts = [p for c in tasks for p in c["task"]["parts"]]
    # the user gives the phone in the script, so those slots are filled; the agent's steps
    # (apologise, record, …) are never done
    assert {p["status"] for p in parts if p["kind"] == "step"} <= {"missing", "not_evaluated"}
