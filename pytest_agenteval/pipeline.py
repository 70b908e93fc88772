"""The per-item pipeline: conversation → rules → intent → verdict, as an :class:`ItemResult`.

Every model is validated where it is built (pydantic's validator is compiled;
``model_construct`` is pure Python and slower for these small models).

Runs on the engine's event loop. The verdict of a turn follows SPEC 2:
an agent error or a rule type that raised makes it ``error``; a failed
explicit-rule combination, a failed ledger rule (a red line when it vetoes),
a wrong intent or a wrong intent code make it ``failed``; otherwise it is
``passed``. The item's verdict is the worst of its turns'.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._traceback import user_traceback
from .adapters._clock import LoopClock, clock_of
from .adapters.base import Adapter, AgentError, AgentReply, TurnRequest
from .judge.client import Failure
from .judge.service import JudgeMeter, TurnContext
from .model import results as r
from .plan import ItemPlan, TurnPlan
from .rules._registry import TurnView
from .rules.evaluate import BoundRule, RuleCrash, combine
from .simulator import Move
from .task import evaluate_task, transcript
from .taxonomy import Taxonomy

if TYPE_CHECKING:
    from .judge import Judge
    from .model.cases import Simulate
    from .simulator import Simulator

__all__ = ["classified", "judge_intent", "run_plan", "start_failure"]


class _Conversation:
    """One conversation with the agent: its history, its id, its turns so far."""

    def __init__(self, plan: ItemPlan, adapter: Adapter, taxonomy: Taxonomy,
                 judge: Judge | None, trial: int) -> None:
        self.plan, self.adapter, self.taxonomy = plan, adapter, taxonomy
        self.judge, self.trial = judge, trial
        self.history = [dict(h) for h in plan.history]
        self.conversation_id: str | None = None
        self.turns: list[r.TurnResult] = []
        self.clock = clock_of(asyncio.get_running_loop())

    async def exchange(self, index: int, turn: TurnPlan) -> bool:
        """Send one turn and judge the reply; ``False`` when the agent did not answer."""
        request = TurnRequest(turn.input, list(self.history), turn.knowledge, turn.extra,
                              self.conversation_id, self.plan.id, index)
        started = (time.perf_counter(), self.clock.observe())
        judged = self.judge is not None
        try:
            reply = await self.adapter.send(request)
        except AgentError as exc:
            self.turns.append(error_turn(index, turn, exc.record(),
                                         _ms_since(started, self.clock), judged))
            return False
        except (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException as exc:  # an adapter that raised anything else (SystemExit too)
            self.turns.append(error_turn(index, turn, r.AgentError(
                kind="connection", detail=f"the adapter raised {type(exc).__name__}: {exc}",
                traceback=user_traceback(exc)), _ms_since(started, self.clock), judged))
            return False
        latency = _ms_since(started, self.clock)
        self.turns.append(await _judge_turn(index, turn, request, reply, latency,
                                            self.taxonomy, self.judge, self.trial))
        self.conversation_id = reply.conversation_id or self.conversation_id
        self.history += [{"role": "user", "content": turn.input},
                         {"role": "assistant", "content": reply.output}]
        return True

    async def result(self, termination: r.Termination | None = None,
                     simulator: r.SimulatorRecord | None = None) -> r.ItemResult:
        """The item's result, with its task judged over the whole dialog."""
        plan, turns = self.plan, self.turns
        task = None
        if plan.task is not None:
            status = r.worst(t.status for t in turns)
            if status != "error":
                task = await evaluate_task(plan.task, transcript(plan.messages, turns), status,
                                           self.judge, self.trial, plan.task_situations)
        return item_result(plan, turns, self.judge, task=task, termination=termination,
                           simulator=simulator)


async def run_plan(plan: ItemPlan, adapter: Adapter, taxonomy: Taxonomy,
                   judge: Judge | None = None, trial: int = 0,
                   simulator: Simulator | None = None) -> r.ItemResult:
    """Run every turn in order on one conversation and judge each reply (the judge's call
    of a turn starts as soon as its reply is in); a ``simulate:`` scenario is played by the
    simulated user."""
    convo = _Conversation(plan, adapter, taxonomy, judge, trial)
    if plan.simulate is not None:
        return await _simulated(convo, plan.simulate, simulator)
    for index, turn in enumerate(plan.turns):
        if not await convo.exchange(index, turn):
            break
    return await convo.result()


_ENDING: dict[str, r.Termination] = {"stop": "user_stop", "transfer": "agent_stop",
                                     "out_of_scope": "agent_stop"}


async def _simulated(convo: _Conversation, sim: Simulate,
                     simulator: Simulator | None) -> r.ItemResult:
    """The simulated user writes each message from the dialog so far, up to ``max_turns``."""
    template = convo.plan.turns[0]
    record = r.SimulatorRecord()
    earlier: tuple[dict[str, Any] | None, ...] = ()
    for index in range(sim.max_turns):
        if index == 0 and sim.opening:
            move = Move(sim.opening, "continue")
        else:
            asked = (await simulator.next(sim, convo.history, index) if simulator is not None
                     else None)
            record.calls += asked.calls if asked is not None else 0
            if asked is None or isinstance(asked.value, Failure):
                why = ("no simulator configured (simulator: or judge: in agenteval.yaml)"
                       if asked is None else f"the simulated user failed: "
                       f"{asked.value.reason}")  # type: ignore[union-attr]
                convo.turns.append(error_turn(index, template, r.AgentError(
                    kind="simulator", detail=why), 0.0, convo.judge is not None))
                return await convo.result("infra_error", record)
            move = asked.value
        record.faults += [r.SimulatorFault(turn=index, kind=f, message=move.message[:200])
                          for f in move.faults]
        record.last_action = move.action
        if not move.message:  # an ending with nothing more to say
            return await convo.result(_ENDING.get(move.action, "completed"), record)
        turn = replace(template, input=move.message, earlier_knowledge=earlier)
        if not await convo.exchange(index, turn):
            return await convo.result(None, record)
        earlier = (*earlier, template.knowledge)
        if move.action != "continue":
            return await convo.result(_ENDING[move.action], record)
    return await convo.result("max_turns", record)


def _ms_since(started: tuple[float, float], clock: LoopClock) -> float:
    """The turn's latency: the time since ``started`` without this process's own stalls
    (the agent did not take them; see adapters._clock)."""
    at, stalled = started
    return round(max(0.0, time.perf_counter() - at - (clock.observe() - stalled)) * 1000, 3)


def error_turn(index: int, turn: TurnPlan, error: r.AgentError, latency: float,
               judged: bool = False) -> r.TurnResult:
    """A turn the agent did not answer: no rule, intent or judge verdict (``judged``: a judge
    is configured, so L3 says the agent did not answer rather than "no judge")."""
    exp = turn.expected
    intent = r.IntentResult(expected=exp.behavior, code_expected=exp.intent_code,
                            reason="the agent did not answer", reason_code="agent_error")
    return r.TurnResult(index=index, input=turn.input, knowledge=turn.knowledge,
                        extra=turn.extra, status="error", error=error, latency_ms=latency,
                        intent=intent, expected=turn.expectation,
                        judge=_NOT_ANSWERED if judged else r.NO_JUDGE)


def judge_intent(turn: TurnPlan, reply: AgentReply, taxonomy: Taxonomy) -> r.IntentResult:
    """L2: compare the returned intent (mapped to a label) with the expectation."""
    exp = turn.expected
    predicted = taxonomy.predict(reply.intent_code, reply.intent_name)
    correct = None
    if exp.behavior is not None and predicted is not None:
        correct = predicted == exp.behavior
    code_correct = None
    if exp.intent_code is not None:
        code_correct = (reply.intent_code is not None
                        and str(reply.intent_code).strip() == str(exp.intent_code).strip())
    none = predicted is None
    return r.IntentResult(
        expected=exp.behavior, predicted=predicted, correct=correct,
        code_expected=exp.intent_code, code_returned=reply.intent_code,
        name_returned=reply.intent_name, code_correct=code_correct,
        evaluated=not none or code_correct is not None,
        reason="the API returned no intent" if none else "",
        reason_code="no_intent" if none else None)


def classified(intent: r.IntentResult, rows: list[r.RuleRow]) -> r.IntentResult:
    """L2 from an ``intent_classification`` rule when the API returned no intent: the label
    the judge picked (the row's evidence) is the prediction, in the same P/R/F1 tables."""
    if intent.predicted is not None:
        return intent
    row = next((x for x in rows if x.type == "intent_classification"
                and x.status in ("passed", "failed") and x.evidence), None)
    if row is None:
        return intent
    correct = None if intent.expected is None else row.evidence == intent.expected
    return intent.model_copy(update={
        "predicted": row.evidence, "correct": correct, "evaluated": True,
        "reason": f"predicted by the judge ({row.rule_id})", "reason_code": None})


async def _evaluate(rules: tuple[BoundRule, ...],
                    view: TurnView) -> list[r.RuleRow | RuleCrash]:
    """Every rule whose situation arises on the turn: sync checks inline, async ones
    concurrently, in rule order."""
    if not any(rule.rule_type.is_async for rule in rules):
        done = [rule.check(view) for rule in rules]
    else:
        done = list(await asyncio.gather(*(rule.aevaluate(view) for rule in rules)))
    return [e for e in done if e is not None]


def _failure_reasons(rows: list[r.RuleRow], explicit: r.RuleLogicResult,
                     intent: r.IntentResult) -> list[str]:
    reasons = []
    if not explicit.passed:
        reasons.append(f"explicit rules ({explicit.reason})")
    # ledger rules are hard constraints whatever rule_logic says; a veto one is a red line
    reasons += [f"{'red line' if row.veto else 'ledger rule'} {row.rule_id} failed"
                for row in rows if row.origin == "ledger" and row.status == "failed"]
    if intent.correct is False:
        reasons.append(f"intent {intent.predicted} (expected {intent.expected})")
    if intent.code_correct is False:
        reasons.append(f"intent code {intent.code_returned} (expected {intent.code_expected})")
    return reasons


async def _judge_turn(index: int, turn: TurnPlan, request: TurnRequest, reply: AgentReply,
                      latency: float, taxonomy: Taxonomy, judge: Judge | None,
                      trial: int) -> r.TurnResult:
    view = TurnView(
        input=turn.input, reply=reply.output, history=request.history,
        knowledge=turn.knowledge,
        knowledge_points=[kp.model_dump() for kp in turn.expected.knowledge_points],
        assertions=dict(turn.expected.assertions), intent_code=reply.intent_code,
        intent_name=reply.intent_name, latency_ms=latency,
        earlier_knowledge=turn.earlier_knowledge, trial=trial,
        judge=JudgeMeter(judge) if judge is not None else None,
        expected_behavior=turn.expected.behavior,
    )
    evaluated = await _evaluate(turn.rules, view)
    rows = [e.row if isinstance(e, RuleCrash) else e for e in evaluated]
    crash = next((e for e in evaluated if isinstance(e, RuleCrash)), None)
    explicit = combine([row for row in rows if row.origin == "case"], turn.rule_logic,
                       turn.rule_pass_threshold)
    intent = classified(judge_intent(turn, reply, taxonomy), rows)
    reasons = _failure_reasons(rows, explicit, intent)
    error = None
    if crash is not None:  # the rule, not the agent, is broken: no business verdict
        error = r.AgentError(kind="rule", detail=f"{crash.row.rule_id}: {crash.row.reason}",
                             traceback=crash.traceback)
    verdict = await _l3(turn, view, judge, error is not None)
    status: r.ItemStatus = "error" if error else ("failed" if reasons else "passed")
    if status != "error" and verdict.status == "failed":  # never offsets an L1/L2 failure
        reasons.append(f"judge: {verdict.reason}")
        status = "failed"
    elif status == "passed" and verdict.status == "review":
        status = "review"
    return r.TurnResult(
        index=index, input=turn.input, knowledge=turn.knowledge, extra=turn.extra,
        reply=reply.output, status=status, failure_reasons=reasons, error=error,
        latency_ms=latency, rules=rows, rule_logic=explicit, intent=intent, judge=verdict,
        conversation_id=reply.conversation_id, expected=turn.expectation,
        missing_paths=[r.MissingPath(field=f, path=p, closest=c) for f, p, c in reply.missing],
        rule_judge_calls=view.judge.calls if view.judge is not None else 0,
    )


def item_result(plan: ItemPlan, turns: list[r.TurnResult], judge: Judge | None = None,
                judged: bool = False, task: r.TaskResult | None = None,
                termination: r.Termination | None = None,
                simulator: r.SimulatorRecord | None = None) -> r.ItemResult:
    """The item's result from its turns: the worst verdict, the judge summary, the task
    success level (``task``: the task-completion layer's, when the item has a task), how the
    conversation ended."""
    status = r.worst(t.status for t in turns)
    return r.ItemResult(
        id=plan.id, kind=plan.kind, status=status, **plan.meta,
        history=plan.messages, judge=_judge_summary(plan, turns, judged or judge is not None),
        turns=turns,
        task=task if task is not None else _TASK_BY_STATUS[status],
        termination=_termination(turns, termination), simulator=simulator,
        turns_planned=plan.simulate.max_turns if plan.simulate else len(plan.turns),
    )


def _termination(turns: list[r.TurnResult], said: r.Termination | None) -> r.Termination:
    """How a conversation ended: an error of the agent (``sut_error``) or of ours
    (``infra_error``) stopped it; else as ``said`` (a simulated user's ending), else every
    scripted turn ran (``completed``)."""
    error = next((t.error for t in turns if t.error is not None), None)
    if error is not None:
        return "infra_error" if error.kind in r.INFRA_KINDS else "sut_error"
    return said or "completed"


async def _l3(turn: TurnPlan, view: TurnView, judge: Judge | None,
              rule_error: bool) -> r.JudgeResult:
    """The judge's verdict on an answered turn (one structured call, or why none)."""
    if judge is None:
        return r.NO_JUDGE
    if turn.judge is None:
        return r.JUDGE_OFF
    if rule_error:
        return _RULE_ERROR
    exp = turn.expected
    return await judge.turn(view, TurnContext(exp.behavior, exp.outcome, turn.judge.dimensions,
                                              turn.judge.notes, view.trial))


_NOT_ANSWERED = r.JudgeResult(reason="not judged: the agent did not answer",
                              reason_code="agent_error")
_RULE_ERROR = r.JudgeResult(reason="not judged: a rule type raised on this turn",
                            reason_code="rule_error")


def _judge_summary(plan: ItemPlan, turns: list[r.TurnResult], judged_run: bool) -> r.JudgeResult:
    """A case's judge verdict is its turn's; a scenario's is the worst of its judged turns,
    with each dimension's lowest score."""
    if plan.kind == "case" and turns:
        return turns[0].judge
    if not judged_run:
        return r.NO_JUDGE
    judged = [t.judge for t in turns if t.judge.judged]
    if not judged:
        first = next((t.judge for t in turns if t.judge.reason_code not in r.NOT_OWED), None)
        return first or (r.JUDGE_OFF if not plan.meta.get("judge_enabled", True)
                         else turns[0].judge if turns else r.NO_JUDGE)
    status = max((v.status for v in judged), key=("passed", "review", "failed").index)
    low: dict[str, int | None] = {}
    for v in judged:
        for dim, score in (v.scores or {}).items():
            old = low.get(dim)
            low[dim] = score if old is None else (old if score is None else min(old, score))
    worst_turns = [f"turn {t.index + 1}: {t.judge.reason}" for t in turns
                   if t.judge.judged and t.judge.status == status and t.judge.reason]
    return r.JudgeResult(status=status, verdict=status, scores=low,
                         fact_risk=any(bool(v.fact_risk) for v in judged),
                         flagged=[d for d in low if any(d in (v.flagged or ()) for v in judged)],
                         reason="; ".join(worst_turns)[:500],
                         calls=sum(t.judge.calls for t in turns),
                         cached=all(v.cached for v in judged))


_TASK_BY_STATUS = {
    "error": r.TaskResult(reason="error cases are excluded", reason_code="error_excluded"),
    **{status: r.TaskResult(success_level=level, status="evaluated",
                            reason="no task: success level follows the case verdict",
                            reason_code="follows_verdict")
       for status, level in (("passed", "success"), ("review", "partial"),
                             ("failed", "failure"))},
}


def start_failure(plan: ItemPlan, error: r.AgentError, judged: bool = False) -> r.ItemResult:
    """The result of an item whose adapter could not even be started (or that was not sent)."""
    turns = [error_turn(0, plan.turns[0], error, 0.0, judged)]
    return item_result(plan, turns, judged=judged)
