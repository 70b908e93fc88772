"""The result of one item: the typed contract that every layer writes and every report reads.

An item (a case or a scenario) is one conversation. Its result holds one
:class:`TurnResult` per turn that was sent (a case is one turn), each with the
rule rows (L1), the intent check (L2) and the judge verdict (L3) of that
turn; the item adds what is decided across the whole conversation (its
verdict, the judge summary, task completion).

Decisions read status *codes*, never prose: every status is a ``Literal``,
and every "not evaluated" carries a ``reason_code`` next to its ``reason``
text. The model crosses process boundaries as ``model_dump(mode="json")``
(xdist workers → controller, where it is validated back) and is written to
``results.json`` by :func:`pytest_agenteval.report.record.case_record`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "INFRA_KINDS",
    "JUDGE_OFF",
    "NOT_OWED",
    "STATUS_ORDER",
    "AgentError",
    "Completeness",
    "ErrorKind",
    "Expectation",
    "IntentReason",
    "IntentResult",
    "ItemResult",
    "ItemStatus",
    "JudgeReason",
    "JudgeResult",
    "JudgeStatus",
    "Message",
    "MissingPath",
    "PairRef",
    "RuleLogicResult",
    "RuleRow",
    "RuleStatus",
    "SimulatorFault",
    "SimulatorRecord",
    "SuccessLevel",
    "TaskPart",
    "TaskReason",
    "TaskResult",
    "Termination",
    "TurnResult",
    "worst",
]

ItemStatus = Literal["passed", "failed", "review", "error"]
RuleStatus = Literal["passed", "failed", "not_applicable", "error"]
ErrorKind = Literal["timeout", "http_status", "bad_body", "connection", "rule", "not_resent",
                    "simulator", "judge"]
#: error kinds that are ours, not the agent's: a rule type raised (the agent answered), a
#: crashed worker's conversation not re-sent, the simulated user failed or the judge could
#: not be started (nothing was sent)
INFRA_KINDS: frozenset[str] = frozenset({"rule", "not_resent", "simulator", "judge"})
JudgeStatus = Literal["passed", "review", "failed", "not_evaluated"]
SuccessLevel = Literal["success", "partial", "failure"]
#: why L2 was not evaluated on a turn
IntentReason = Literal["no_intent", "agent_error"]
#: why L3 was not evaluated on a turn
JudgeReason = Literal["no_judge", "disabled", "agent_error", "rule_error", "timeout",
                      "rate_limited", "http_error", "contract_violation", "moderated"]
#: reasons for which no judge verdict was owed (they do not count against availability)
NOT_OWED: frozenset[str] = frozenset({"no_judge", "disabled", "agent_error", "rule_error"})
#: how (or why not) task success was decided
TaskReason = Literal["follows_verdict", "error_excluded", "task", "failed_item",
                     "needs_judge", "judge_failed"]
#: how a conversation ended (infra_error: ours, not the agent's; excluded from the rates)
Termination = Literal["completed", "user_stop", "agent_stop", "max_turns", "sut_error",
                      "infra_error"]

#: Case verdict precedence (SPEC 2): error > failed > review > passed.
STATUS_ORDER: dict[str, int] = {"passed": 0, "review": 1, "failed": 2, "error": 3}


def worst(statuses: Iterable[ItemStatus]) -> ItemStatus:
    """The verdict of several verdicts: the highest in :data:`STATUS_ORDER`."""
    return max(statuses, key=STATUS_ORDER.__getitem__, default="passed")


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Frozen(BaseModel):
    """A part of a result that many results may share (built once per plan or per run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Message(_Frozen):
    """One message of a conversation's history."""

    role: Literal["user", "assistant"]
    content: str


class PairRef(_Frozen):
    """Membership in a robustness pair."""

    group: str
    role: Literal["clean", "variant"]


class RuleRow(_Result):
    """One rule on one turn (L1): its verdict, why, and the words of the reply that decided it.

    ``status`` is ``error`` when the rule type itself raised: the turn is then an
    ``error`` of kind ``rule``, never a business failure.
    """

    rule_id: str
    type: str
    status: RuleStatus
    reason: str = ""
    evidence: str = ""
    score: float | None = None
    weight: float = 1.0
    veto: bool = False
    layer: str = "L1"
    origin: Literal["case", "ledger"] = "case"
    #: the situations observed in the dialog that made a ledger rule apply
    #: (``"reply_asks_for_contact: 留个手机号"``); empty when it applies by its case's switch
    #: or behaviour
    trigger: str = ""


class RuleLogicResult(_Result):
    """The explicit rules of a turn combined by ``rule_logic`` (ledger rules take no part)."""

    logic: Literal["all", "any", "weighted"]
    passed: bool
    score: float | None = None
    reason: str = ""


class IntentResult(_Result):
    """L2 on one turn: the returned intent mapped to a label, against the expectation."""

    expected: str | None = None
    predicted: str | None = None
    correct: bool | None = None
    code_expected: int | str | None = None
    code_returned: int | str | None = None
    name_returned: str | None = None
    code_correct: bool | None = None
    evaluated: bool = False
    reason: str = ""
    reason_code: IntentReason | None = None


class JudgeResult(_Result):
    """L3 on one turn (or the summary of an item's turns). Immutable: the default is shared."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: JudgeStatus = "not_evaluated"
    scores: dict[str, int | None] | None = None
    verdict: JudgeStatus | None = None
    reason: str = ""
    reason_code: JudgeReason | None = None
    fact_risk: bool | None = None
    latency_ms: float | None = None
    #: the judge's reason per dimension (and ``fact_risk``)
    reasons: dict[str, str] | None = None
    #: the dimensions scored below the rubric's ``review_below`` (what a reviewer looks at)
    flagged: list[str] | None = None
    #: judge calls made for this verdict (re-asks and retries included; 0 from the cache)
    calls: int = 0
    cached: bool = False

    @property
    def judged(self) -> bool:
        return self.status != "not_evaluated"

    @property
    def expected(self) -> bool:
        """Whether a judge verdict was owed (it counts in judge availability)."""
        return self.judged or self.reason_code not in NOT_OWED


#: L3 where no judge is configured (the default of every turn and item)
NO_JUDGE = JudgeResult(reason="no judge configured", reason_code="no_judge")
#: L3 of an item whose case file says ``judge: false``
JUDGE_OFF = JudgeResult(reason="the judge is switched off here (judge: false)",
                        reason_code="disabled")


class TaskPart(_Frozen):
    """One slot or step of a task: whether the conversation achieved it, and where."""

    name: str
    kind: Literal["slot", "step"]
    status: Literal["done", "missing", "not_evaluated"]
    #: the turn (0-based) that achieved it; -1 for the initial history
    turn: int | None = None
    evidence: str = ""
    #: a ``match`` pattern, a ``situation``, or the judge (``None``: not evaluated)
    decided_by: Literal["match", "situation", "judge"] | None = None
    reason: str = ""


class TaskResult(_Frozen):
    """Task completion of an item (SPEC 6): completion rate and success level, with the
    slot and step table."""

    completion_rate: float | None = None
    success_level: SuccessLevel | None = None
    status: Literal["evaluated", "not_evaluated"] = "not_evaluated"
    reason: str = ""
    reason_code: TaskReason | None = None
    parts: list[TaskPart] = Field(default_factory=list)
    #: judge calls made to decide the parts without a ``match`` (0 from the cache)
    judge_calls: int = 0


class AgentError(_Result):
    """Why a turn has no verdict: the agent did not answer usably, or a rule type raised."""

    kind: ErrorKind
    detail: str
    status_code: int | None = None
    traceback: str | None = None


class Expectation(_Frozen):
    """The expectation of a turn, as the record shows it."""

    behavior: str | None = None
    outcome: str | None = None
    intent_code: int | str | None = None
    assertions: dict[str, Any] = Field(default_factory=dict)


class MissingPath(_Frozen):
    """An optional ``response_map`` path that this reply did not have."""

    field: str
    path: str
    #: the path of this reply that is most like it (a typo's likely fix), if any
    closest: str | None = None


class TurnResult(_Result):
    """One turn: what was sent, what came back, and every layer's verdict on it."""

    index: int
    input: str
    knowledge: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    reply: str | None = None
    status: ItemStatus
    failure_reasons: list[str] = Field(default_factory=list)
    error: AgentError | None = None
    latency_ms: float = 0.0
    rules: list[RuleRow] = Field(default_factory=list)
    rule_logic: RuleLogicResult | None = None
    intent: IntentResult = Field(default_factory=IntentResult)
    judge: JudgeResult = NO_JUDGE
    conversation_id: str | None = None
    expected: Expectation = Field(default_factory=Expectation)
    #: configured optional response paths this reply lacked (a typo shows in every turn)
    missing_paths: list[MissingPath] = Field(default_factory=list)
    #: judge calls made by this turn's judge-based rule types (``llm_score`` …; L3's own
    #: are ``judge.calls``)
    rule_judge_calls: int = 0


class SimulatorFault(_Frozen):
    """A fault of the simulated user (never the agent's)."""

    turn: int
    kind: Literal["broke_character", "invented_fact", "stopped_early"]
    message: str


class SimulatorRecord(_Result):
    """How the simulated user of a ``simulate:`` scenario played: its calls and faults."""

    calls: int = 0
    faults: list[SimulatorFault] = Field(default_factory=list)
    #: the user's last action: continue (max_turns reached), stop, transfer, out_of_scope
    last_action: str = "continue"


class ItemResult(_Result):
    """One pytest item: a case (one turn) or a scenario (its turns, in order)."""

    id: str
    kind: Literal["case", "scenario"]
    status: ItemStatus
    title: str = ""
    priority: Literal["P0", "P1", "P2"] = "P2"
    test_family: str | None = None
    challenge: str = "none"
    source: str = "synthetic"
    review_status: Literal["candidate", "reviewed"] = "candidate"
    tags: list[str] = Field(default_factory=list)
    pair: PairRef | None = None
    behaviors: list[str] = Field(default_factory=list)
    judge_enabled: bool = True
    outcome: str | None = None
    history: list[Message] = Field(default_factory=list)
    turns: list[TurnResult] = Field(default_factory=list)
    turns_planned: int = 1
    judge: JudgeResult = NO_JUDGE
    task: TaskResult = Field(default_factory=TaskResult)
    termination: Termination = "completed"
    #: a simulated scenario's user: calls and faults (``None`` for scripted items)
    simulator: SimulatorRecord | None = None
    nodeid: str = ""
    file: str = ""
    line: int | None = None
    trial: int | None = None
    trials: int | None = None

    @property
    def evaluated(self) -> bool:
        """Not an ``error``: the item counts in the business metrics."""
        return self.status != "error"

    @property
    def error(self) -> AgentError | None:
        """The first error of the conversation, if any."""
        return next((t.error for t in self.turns if t.error is not None), None)

    @property
    def latency_ms(self) -> float:
        return sum(t.latency_ms for t in self.turns)

    @property
    def behavior(self) -> str | None:
        """A case's expected behaviour (``None`` for a scenario: it has one per turn)."""
        return self.turns[0].expected.behavior if self.kind == "case" and self.turns else None

    def rule_rows(self) -> Iterator[tuple[int, RuleRow]]:
        """``(turn index, row)`` of every rule row of every turn."""
        for turn in self.turns:
            for row in turn.rules:
                yield turn.index, row

    @property
    def failure_reasons(self) -> list[str]:
        if self.kind == "case":
            return list(self.turns[0].failure_reasons) if self.turns else []
        return [f"turn {t.index + 1}: {why}" for t in self.turns for why in t.failure_reasons]


class Completeness(_Result):
    """Whether every selected item reported (the controller checks it against the collection)."""

    expected: int = 0
    received: int = 0
    missing: list[str] = Field(default_factory=list)
    lost: dict[str, str] = Field(default_factory=dict)
    #: selected items that pytest skipped (a skip or skipif mark, ``pytest.skip`` in a hook,
    #: an ``xfail(run=False)``) → why: not evaluated, not missing (the gate says it covers
    #: the other items only)
    skipped: dict[str, str] = Field(default_factory=dict)
    duplicates: list[str] = Field(default_factory=list)
    collection_errors: list[str] = Field(default_factory=list)
    stopped_early: bool = False
    #: a merged record (``agenteval merge``): the shards (1-based) whose record is missing,
    #: and what the merged records do not share (merged anyway with ``--force``)
    missing_shards: list[int] = Field(default_factory=list)
    merge_conflicts: list[str] = Field(default_factory=list)
    complete: bool = True
