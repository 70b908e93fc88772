"""The rule ledger schema, ``rules/business-rules.yaml`` (SPEC 4)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from .cases import HistoryItem, KnowledgePoint, Priority

__all__ = ["AppliesTo", "Example", "Examples", "LedgerFileModel", "LedgerRuleModel"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Example(Strict):
    """One reply the rule must judge as its list says (pass or fail)."""

    input: str
    reply: str
    history: list[HistoryItem] = Field(default_factory=list)
    knowledge: dict[str, Any] | None = None
    knowledge_points: list[KnowledgePoint] = Field(default_factory=list)
    assertions: dict[str, Any] = Field(default_factory=dict)
    intent_code: int | str | None = None
    intent_name: str | None = None
    latency_ms: float | None = None
    #: the knowledge of earlier turns, oldest first, when the example is a scenario's turn
    earlier_knowledge: list[dict[str, Any] | None] | None = None
    boundary: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _boundary_has_note(self) -> Example:
        if self.boundary and not self.note.strip():
            raise ValueError("a boundary example needs a 'note' saying which edge it probes")
        return self


class Examples(Strict):
    pass_: list[Example] = Field(default_factory=list, alias="pass")
    fail: list[Example] = Field(default_factory=list)


class AppliesTo(Strict):
    """When a ledger rule applies to a turn; every condition given must hold.

    ``behaviors: all`` (or ``always: true``) — every turn; ``behaviors: [..]`` —
    turns whose expected behaviour is listed; ``assertion: name`` — turns whose
    ``expected.assertions`` switch ``name`` is on. A switch's value other than
    ``true`` is passed to the rule: a mapping is merged into its params, a
    scalar becomes the param named by ``param`` (``max_sentences: 2`` → ``n: 2``).

    ``when: situation`` (or a list, each a name or ``{name: params}``; all must
    arise) — the rule applies at run time to every turn where the situation
    arises in the dialog, switch or not. With both ``when`` and ``assertion``,
    the switch set to ``true`` applies the rule whatever the dialog, and set to
    ``false`` opts the case out.
    """

    behaviors: Literal["all"] | list[str] | None = None
    assertion: str | None = None
    param: str | None = None
    always: bool = False
    when: list[str | dict[str, dict[str, Any] | None]] | None = None

    @field_validator("when", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str | dict) else v

    @field_validator("when", mode="after")
    @classmethod
    def _one_name_each(cls, v: list[Any] | None) -> list[Any] | None:
        for entry in v or ():
            if isinstance(entry, dict) and len(entry) != 1:
                raise ValueError("each 'when' entry is a situation name or {name: params}")
        return v

    @model_validator(mode="after")
    def _some_condition(self) -> AppliesTo:
        if (self.behaviors is None and self.assertion is None and not self.always
                and not self.when):
            raise ValueError("say when the rule applies: behaviors (all or a list), "
                             "assertion (a switch name), when (a situation) or always: true")
        if self.param is not None and self.assertion is None:
            raise ValueError("'param' takes the value of an assertion switch; add 'assertion'")
        return self


class LedgerRuleModel(Strict):
    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.\-]*$")
    title: str
    check: str
    params: dict[str, Any] = Field(default_factory=dict)
    applies_to: AppliesTo
    layer: Literal["L1", "L2", "L3", "L4"] = "L1"
    veto: bool = False
    priority: Priority = "P1"
    description: str = ""
    examples: Examples = Field(default_factory=Examples)


class LedgerFileModel(RootModel[list[LedgerRuleModel]]):
    pass
