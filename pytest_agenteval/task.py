"""Task completion across the whole dialog (SPEC 3 ``outcome.task``, SPEC 6).

A task is a list of slots (what the conversation must collect, e.g. the
user's phone) and steps (what the agent must do, e.g. apologise, hand over).
A slot or step with a ``match`` regex is decided here, deterministically: it
is done at the first message of its ``source`` (user, agent, any) that the
regex finds, in any turn; one with a ``situation`` at the first turn where it
arises, seen as a rule sees that turn (its input, reply, history and knowledge,
and the earlier turns' knowledge). The others are decided by the judge, all of
them in one structured call over the transcript. A step with ``ordered: true``
counts only when no step listed before it was done at a later turn (each at the
turn it was observed, whatever became of it; one never done voids nothing: it
is missing itself).

completion_rate (SPEC 6): filled / required slots (``slot``), done / required
steps (``step``), or ``(slot_weight·slot_rate + step_weight·step_rate) /
(slot_weight + step_weight)`` (``hybrid``). success_level: ``failure`` if the
item failed or completion < ``partial_threshold``; ``success`` if it passed
and completion ≥ ``success_threshold``; ``partial`` otherwise (a REVIEW item
is at most partial). A failed conversation is a failure, always, whatever
could be decided of its task.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .model import results as r
from .model.cases import Task, TaskSlot, TaskStep

if TYPE_CHECKING:
    from .judge.service import Judge
    from .rules._situation import BoundSituation

__all__ = ["Utterance", "completion", "evaluate_task", "level", "transcript"]

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Utterance:
    """One message of the dialog: its turn (``-1``: the initial history), who, what; a
    user message of a turn carries the knowledge the turn was sent with."""

    turn: int
    role: Role
    text: str
    knowledge: Mapping[str, Any] | None = field(default=None, compare=False)


def transcript(history: Sequence[r.Message], turns: Sequence[r.TurnResult]) -> list[Utterance]:
    """The whole dialog as it happened: the initial history, then every turn sent (its
    reply, when the agent gave one)."""
    out = [Utterance(-1, m.role, m.content) for m in history]
    for t in turns:
        out.append(Utterance(t.index, "user", t.input, t.knowledge))
        if t.reply is not None:
            out.append(Utterance(t.index, "assistant", t.reply))
    return out


def _speaks(role: Role, source: str) -> bool:
    return source == "any" or (source == "user") == (role == "user")


def _matched(part: TaskSlot | TaskStep, kind: Literal["slot", "step"],
             dialog: Sequence[Utterance]) -> r.TaskPart:
    assert part.match is not None
    pattern = re.compile(part.match)
    for u in dialog:
        if _speaks(u.role, part.source):
            m = pattern.search(u.text)
            if m:
                return r.TaskPart(name=part.name, kind=kind, status="done", turn=u.turn,
                                  evidence=m.group(0), decided_by="match",
                                  reason=f"{part.source} said it at turn {u.turn + 1}"
                                  if u.turn >= 0 else "in the initial history")
    return r.TaskPart(name=part.name, kind=kind, status="missing", decided_by="match",
                      reason=f"no {'message' if part.source == 'any' else part.source + ' message'}"
                      f" matches {part.match!r}")


@dataclass
class _Turn:
    """What one turn of the dialog shows a situation."""

    said: dict[str, str] = field(default_factory=dict)
    knowledge: Mapping[str, Any] | None = None


def _turns(dialog: Sequence[Utterance]) -> tuple[list[dict[str, str]], dict[int, _Turn]]:
    """The initial history, and each turn's messages and knowledge."""
    history: list[dict[str, str]] = []
    by_turn: dict[int, _Turn] = {}
    for u in dialog:
        if u.turn < 0:
            history.append({"role": u.role, "content": u.text})
            continue
        turn = by_turn.setdefault(u.turn, _Turn())
        turn.said[u.role] = u.text
        if u.role == "user":
            turn.knowledge = u.knowledge
    return history, by_turn


def _situated(part: TaskSlot | TaskStep, kind: Literal["slot", "step"],
              situation: BoundSituation, dialog: Sequence[Utterance]) -> r.TaskPart:
    """Done at the first turn where ``situation`` arises (it sees that turn as a rule does:
    the user's input, the agent's reply, the history before it, the turn's knowledge and
    the earlier turns')."""
    from .rules._registry import TurnView

    name = situation.type.name
    history, by_turn = _turns(dialog)
    earlier: list[dict[str, Any] | None] = []
    for t in sorted(by_turn):
        turn = by_turn[t]
        knowledge = dict(turn.knowledge) if turn.knowledge is not None else None
        view = TurnView(input=turn.said.get("user", ""), reply=turn.said.get("assistant", ""),
                        history=list(history), knowledge=knowledge,
                        earlier_knowledge=tuple(earlier))
        evidence = situation.observe(view)
        if evidence is not None:
            return r.TaskPart(name=part.name, kind=kind, status="done", turn=t,
                              evidence=evidence, decided_by="situation",
                              reason=f"{name} at turn {t + 1}")
        history += [{"role": role, "content": text} for role, text in turn.said.items()]
        earlier.append(knowledge)
    return r.TaskPart(name=part.name, kind=kind, status="missing", decided_by="situation",
                      reason=f"{name} never arises in the dialog")


def _ordered(steps: Sequence[TaskStep], parts: list[r.TaskPart]) -> list[r.TaskPart]:
    """A step with ``ordered: true`` is not done when a step listed before it was done at a
    later turn (at the turn it was observed: being out of order itself does not move it; a
    step never done is missing itself and voids nothing)."""
    out = list(parts)
    for i, step in enumerate(steps):
        p = parts[i]
        if not step.ordered or p.status != "done" or p.turn is None:
            continue
        late = [(q.name, q.turn) for q in parts[:i]
                if q.status == "done" and q.turn is not None and q.turn > p.turn]
        if late:
            name, turn = late[0]
            out[i] = p.model_copy(update={
                "status": "missing", "reason": f"out of order: {p.name} (turn "
                f"{p.turn + 1}) must come after {name} (turn {turn + 1})"})
    return out


def completion(task: Task, parts: Sequence[r.TaskPart]) -> float | None:
    """SPEC 6's completion rate; ``None`` when a required part is not evaluated."""
    if any(p.status == "not_evaluated" for p in parts):
        return None

    def share(kind: str) -> float:
        mine = [p for p in parts if p.kind == kind]
        return sum(p.status == "done" for p in mine) / len(mine) if mine else 0.0

    if task.mode == "slot":
        return share("slot")
    if task.mode == "step":
        return share("step")
    weights = task.slot_weight + task.step_weight
    if weights == 0:
        return (share("slot") + share("step")) / 2
    return (task.slot_weight * share("slot") + task.step_weight * share("step")) / weights


def level(task: Task, status: r.ItemStatus, rate: float) -> r.SuccessLevel:
    if status == "failed" or rate < task.partial_threshold:
        return "failure"
    if status == "passed" and rate >= task.success_threshold:
        return "success"
    return "partial"


def _numbered(task: Task) -> list[tuple[Literal["slot", "step"], int, TaskSlot | TaskStep]]:
    """The parts the task's mode requires: slots, then steps, with their index."""
    out: list[tuple[Literal["slot", "step"], int, TaskSlot | TaskStep]] = []
    if task.mode in ("slot", "hybrid"):
        out += [("slot", i, s) for i, s in enumerate(task.slots)]
    if task.mode in ("step", "hybrid"):
        out += [("step", i, s) for i, s in enumerate(task.steps)]
    return out


def _required(task: Task) -> list[tuple[Literal["slot", "step"], TaskSlot | TaskStep]]:
    return [(kind, p) for kind, _, p in _numbered(task)]


async def evaluate_task(task: Task, dialog: Sequence[Utterance], status: r.ItemStatus,
                        judge: Judge | None, trial: int = 0,
                        situations: Mapping[tuple[str, int], BoundSituation] | None = None
                        ) -> r.TaskResult:
    """The task's parts, completion rate and success level over the whole dialog."""
    required = _required(task)
    situations = situations or {}
    parts: list[r.TaskPart | None] = []
    for kind, i, p in _numbered(task):
        bound = situations.get((kind, i))
        parts.append(_matched(p, kind, dialog) if p.match is not None else
                     _situated(p, kind, bound, dialog) if bound is not None else None)
    open_ = [(i, kind, p) for i, (kind, p) in enumerate(required) if parts[i] is None]
    calls, failure = 0, None
    if open_ and judge is not None:
        got = await judge.task_parts([(kind, p.name, p.description) for _, kind, p in open_],
                                     dialog, trial)
        calls = got.calls
        if isinstance(got.value, list):
            for (i, _, _), part in zip(open_, got.value, strict=True):
                parts[i] = part
        else:
            failure = got.value.reason
    why = (f"not evaluated: {failure}" if failure else
           "not evaluated: no judge configured, and it has no match pattern")
    done = [p if p is not None else r.TaskPart(
        name=required[i][1].name, kind=required[i][0], status="not_evaluated", reason=why)
        for i, p in enumerate(parts)]
    steps = [(i, p) for i, (kind, p) in enumerate(required) if kind == "step"]
    if steps:
        ordered = _ordered([p for _, p in steps], [done[i] for i, _ in steps])  # type: ignore[misc]
        for (i, _), part in zip(steps, ordered, strict=True):
            done[i] = part
    rate = completion(task, done)
    if status == "failed":  # a failed conversation is a failure, whatever its task
        return r.TaskResult(completion_rate=rate, success_level="failure", status="evaluated",
                            reason="the conversation failed", reason_code="failed_item",
                            parts=done, judge_calls=calls)
    if rate is None:
        code: r.TaskReason = "judge_failed" if failure else "needs_judge"
        n = sum(p.status == "not_evaluated" for p in done)
        return r.TaskResult(reason=f"{n} part(s) {why}", reason_code=code, parts=done,
                            judge_calls=calls)
    got_level = level(task, status, rate)
    filled = sum(p.status == "done" for p in done)
    return r.TaskResult(completion_rate=rate, success_level=got_level,
                        status="evaluated", reason=f"{filled} of {len(done)} part(s) done",
                        reason_code="task", parts=done, judge_calls=calls)
