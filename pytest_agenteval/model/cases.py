"""The case-file schema (SPEC 3): cases, scenarios, expectations, explicit rules.

Every model forbids unknown fields, so a typo in a case file is an error that
names its line instead of a check that silently never runs. Fields whose
evaluation arrives with later layers (judge, task completion, pairs) are
validated now all the same.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "DIMENSIONS",
    "Case",
    "CaseFileModel",
    "Expected",
    "HistoryItem",
    "JudgeDimension",
    "JudgeOverride",
    "KnowledgePoint",
    "Outcome",
    "Pair",
    "Request",
    "RuleSpec",
    "Scenario",
    "Simulate",
    "Task",
    "TaskSlot",
    "TaskStep",
    "Turn",
]

Priority = Literal["P0", "P1", "P2"]
OutcomeClass = Literal["ANSWERABLE", "HANDOFF_REQUIRED", "OUT_OF_SCOPE", "CONTROL"]
RuleLogic = Literal["all", "any", "weighted"]
Json = Any
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class HistoryItem(Strict):
    """One earlier message of the conversation."""

    role: Literal["user", "assistant"]
    content: str


class Request(Strict):
    """What the user sends this turn and the context the agent gets with it."""

    input: str
    history: list[HistoryItem] = Field(default_factory=list)
    knowledge: dict[str, Json] | None = None
    extra: dict[str, Json] = Field(default_factory=dict)


class KnowledgePoint(Strict):
    """A fact the reply must use: where it is in the knowledge and its value."""

    path: str
    value: str
    usage: str = "answer"

    @field_validator("value", mode="before")
    @classmethod
    def _number_as_text(cls, v: Any) -> Any:
        """``value: 0`` or ``value: 8.98`` in YAML is the text of the number."""
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


class Expected(Strict):
    """What a correct reply looks like for this turn."""

    behavior: str | None = None
    outcome: OutcomeClass | None = None
    intent_code: int | str | None = None
    knowledge_points: list[KnowledgePoint] = Field(default_factory=list)
    assertions: dict[str, Json] = Field(default_factory=dict)


class RuleSpec(Strict):
    """An explicit rule instance of a case or turn."""

    type: str
    params: dict[str, Json] = Field(default_factory=dict)
    weight: float = Field(default=1.0, ge=0)
    id: str | None = None


class Pair(Strict):
    """Membership in a robustness pair (same question, clean and varied)."""

    group: str
    role: Literal["clean", "variant"]


#: the seven judge dimensions of SPEC 4, in the order the judge is asked for them
JudgeDimension = Literal["relevance", "factual_accuracy", "knowledge_coverage",
                         "task_completion", "lead_value", "clarity_tone",
                         "context_consistency"]
DIMENSIONS: tuple[str, ...] = ("relevance", "factual_accuracy", "knowledge_coverage",
                               "task_completion", "lead_value", "clarity_tone",
                               "context_consistency")


class JudgeOverride(Strict):
    """An item's (or a turn's) wishes of the judge; ``judge: false`` switches it off."""

    #: ``judge: false`` (or ``true``) is this switch
    enabled: bool = True
    #: score only these dimensions (default: all seven)
    dimensions: list[JudgeDimension] | None = Field(default=None, min_length=1)
    #: what the judge should know of this case (shown to it as data, e.g. a business detail)
    notes: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _switch(cls, data: Any) -> Any:
        return {"enabled": data} if isinstance(data, bool) else data


class _Checked(Strict):
    """Fields shared by a case and a scenario turn: rules and their combination."""

    rules: list[RuleSpec] = Field(default_factory=list)
    rule_logic: RuleLogic = "all"
    rule_pass_threshold: float = Field(default=0.7, ge=0, le=1)
    judge: JudgeOverride = Field(default_factory=JudgeOverride)


class _Item(Strict):
    """Fields every pytest item (case or scenario) has."""

    id: str
    title: str = ""
    priority: Priority = "P2"
    test_family: str | None = None
    challenge: str = "none"
    source: Literal["real", "synthetic", "llm"] = "synthetic"
    review_status: Literal["candidate", "reviewed"] = "candidate"
    #: who reviewed it and when (``YYYY-MM-DD``): ``agenteval lint`` asks both of a
    #: ``reviewed`` case
    reviewed_by: str | None = None
    reviewed_at: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    #: the case's own version; when it changes, ``change_reason`` says why
    #: (``agenteval dataset diff`` asks it of every changed case)
    version: str | None = None
    change_reason: str | None = None
    tags: list[str] = Field(default_factory=list)
    pair: Pair | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v: object) -> object:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError(
                "an id is letters, digits, '_', '-' and '.', starting with a letter or digit"
                " (it becomes the end of the pytest node id)"
            )
        return v


class Case(_Item, _Checked):
    """A single-turn case."""

    request: Request
    expected: Expected = Field(default_factory=Expected)


class Turn(_Checked):
    """One turn of a scenario. ``knowledge`` set (even to null) replaces it from here on."""

    input: str
    knowledge: dict[str, Json] | None = None
    extra: dict[str, Json] = Field(default_factory=dict)
    expected: Expected = Field(default_factory=Expected)

    @property
    def sets_knowledge(self) -> bool:
        return "knowledge" in self.model_fields_set


def _valid_regex(v: str | None) -> str | None:
    if v is not None:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
    return v


class TaskSlot(Strict):
    name: str
    description: str = ""
    #: a regex: the slot is filled by the first message (of ``source``) it is found in;
    #: without it the judge decides
    match: str | None = None
    #: whose messages ``match`` looks in
    source: Literal["user", "agent", "any"] = "user"
    #: instead of ``match``: a situation (``user_gave_contact``, …, or a registered one; a
    #: name or ``{name: params}``) whose first turn fills the slot
    situation: str | dict[str, dict[str, Json] | None] | None = None

    @field_validator("match")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        return _valid_regex(v)


class TaskStep(Strict):
    name: str
    description: str = ""
    #: a regex: the step is done by the first message (of ``source``) it is found in;
    #: without it the judge decides
    match: str | None = None
    source: Literal["user", "agent", "any"] = "agent"
    #: instead of ``match``: a situation whose first turn marks the step done
    situation: str | dict[str, dict[str, Json] | None] | None = None
    #: must happen after the steps listed before it (at the same turn or a later one)
    ordered: bool = False

    @field_validator("match")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        return _valid_regex(v)


class Task(Strict):
    """What the whole conversation must achieve (SPEC 3, task completion)."""

    mode: Literal["slot", "step", "hybrid"] = "slot"
    slots: list[TaskSlot] = Field(default_factory=list)
    steps: list[TaskStep] = Field(default_factory=list)
    slot_weight: float = Field(default=0.5, ge=0, le=1)
    step_weight: float = Field(default=0.5, ge=0, le=1)
    success_threshold: float = Field(default=0.8, ge=0, le=1)
    partial_threshold: float = Field(default=0.5, ge=0, le=1)

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if self.mode in ("slot", "hybrid") and not self.slots:
            raise ValueError(f"mode {self.mode!r} needs at least one entry in 'slots'")
        if self.mode in ("step", "hybrid") and not self.steps:
            raise ValueError(f"mode {self.mode!r} needs at least one entry in 'steps'")
        if self.partial_threshold > self.success_threshold:
            raise ValueError("partial_threshold must not exceed success_threshold")
        return self


class Outcome(Strict):
    task: Task | None = None


class Simulate(Strict):
    """A simulated user instead of scripted turns: an LLM plays the persona toward its goal."""

    persona: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    #: what the user knows and says only when the agent asks for it (a phone number …)
    facts: dict[str, Json] = Field(default_factory=dict)
    max_turns: int = Field(default=8, ge=1, le=50)
    #: the first message (default: the simulator writes it)
    opening: str | None = None
    #: a message holding one of these ends the conversation that way (the token is cut)
    stop_token: str = "###STOP###"
    transfer_token: str = "###TRANSFER###"
    out_of_scope_token: str = "###OUT_OF_SCOPE###"
    #: the expectation of every simulated turn (its assertions switch ledger rules on)
    expected: Expected = Field(default_factory=Expected)


class Scenario(_Item):
    """A multi-turn conversation; its turns run in order on one conversation (or a
    simulated user plays it: ``simulate:``)."""

    knowledge: dict[str, Json] | None = None
    history: list[HistoryItem] = Field(default_factory=list)
    extra: dict[str, Json] = Field(default_factory=dict)
    turns: list[Turn] = Field(default_factory=list)
    simulate: Simulate | None = None
    outcome: Outcome | None = None
    judge: JudgeOverride = Field(default_factory=JudgeOverride)

    @model_validator(mode="after")
    def _turns_or_simulate(self) -> Scenario:
        if bool(self.turns) == (self.simulate is not None):
            raise ValueError("give turns: (scripted) or simulate: (a simulated user), "
                             "exactly one of them")
        return self


class CaseFileModel(Strict):
    """The top level of a case file."""

    defaults: dict[str, Json] = Field(default_factory=dict)
    cases: list[dict[str, Json]] = Field(default_factory=list)
    scenarios: list[dict[str, Json]] = Field(default_factory=list)
