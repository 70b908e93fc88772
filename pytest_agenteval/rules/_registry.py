"""The rule-type registry: one decorated function per rule type.

A rule type is a function ``check(params, turn) -> RuleOutcome`` registered
under a name with a pydantic model of its params; the params of every rule
instance are validated when the case file is collected, so a typo fails
collection with its line instead of misjudging a run. Users register their
own types in ``conftest.py`` with :func:`rule`.

A check may be ``async def`` (a rule that asks a model, a moderation or an
embedding endpoint): it is awaited on the engine's event loop, so other
conversations go on while it waits. Sync checks are called directly; they
must be quick and must not block (wrap blocking I/O in ``asyncio.to_thread``
inside an async check).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "REGISTRY",
    "NoParams",
    "Params",
    "Registry",
    "RuleOutcome",
    "RuleStatus",
    "RuleType",
    "TurnView",
    "rule",
]

RuleStatus = Literal["passed", "failed", "not_applicable"]
P = TypeVar("P", bound=BaseModel)
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., "RuleOutcome | Awaitable[RuleOutcome]"])


class Params(BaseModel):
    """Base of every rule type's params: unknown params are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(Params):
    pass


@dataclass(frozen=True)
class TurnView:
    """What a rule sees of one turn: the request, the reply and the expectation."""

    input: str
    reply: str
    history: list[dict[str, str]] = field(default_factory=list)
    knowledge: dict[str, Any] | None = None
    knowledge_points: list[dict[str, Any]] = field(default_factory=list)
    assertions: dict[str, Any] = field(default_factory=dict)
    intent_code: int | str | None = None
    intent_name: str | None = None
    latency_ms: float | None = None
    #: the knowledge of each earlier turn of this run's conversation (a scenario's), oldest
    #: first; ``None`` when unknown (a single case, or history given as text)
    earlier_knowledge: tuple[dict[str, Any] | None, ...] | None = None
    #: the run's LLM judge (:class:`pytest_agenteval.judge.Judge`), ``None`` when none is
    #: configured; the judge-based rule types ask it
    judge: Any = field(default=None, compare=False, repr=False)
    #: the trial of this item (``--agenteval-repeat``), 0-based; part of the judge's cache key
    trial: int = 0
    #: the behaviour label the turn expects (``expected.behavior``), if any
    expected_behavior: str | None = None


@dataclass(frozen=True)
class RuleOutcome:
    """The result of one rule on one turn; ``evidence`` quotes what decided it."""

    status: RuleStatus
    reason: str = ""
    evidence: str = ""
    score: float | None = None

    @classmethod
    def passed(cls, reason: str = "", evidence: str = "", score: float = 1.0) -> RuleOutcome:
        return cls("passed", reason, evidence, score)

    @classmethod
    def failed(cls, reason: str, evidence: str = "", score: float = 0.0) -> RuleOutcome:
        return cls("failed", reason, evidence, score)

    @classmethod
    def not_applicable(cls, reason: str) -> RuleOutcome:
        return cls("not_applicable", reason, "", None)

    @classmethod
    def decide(cls, ok: bool, reason: str, evidence: str = "",
               score: float | None = None) -> RuleOutcome:
        s = (1.0 if ok else 0.0) if score is None else score
        return cls("passed" if ok else "failed", reason, evidence, s)


@dataclass(frozen=True)
class RuleType(Generic[P]):
    """A registered rule type."""

    name: str
    params: type[P]
    check: Callable[[P, TurnView], RuleOutcome | Awaitable[RuleOutcome]]
    doc: str = ""
    #: ``check`` is ``async def`` (decided once: it is asked on every turn)
    is_async: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.check))

    async def aevaluate(self, params: P, turn: TurnView) -> RuleOutcome:
        """Run the check on the event loop (awaited when it is async)."""
        outcome = self.check(params, turn)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return _checked(self.name, outcome)

    def evaluate(self, params: P, turn: TurnView) -> RuleOutcome:
        """Run a sync check anywhere, an async one outside an event loop (ledger examples)."""
        outcome = self.check(params, turn)
        if inspect.isawaitable(outcome):
            outcome = asyncio.run(_awaited(outcome))
        return _checked(self.name, outcome)

    def parse(self, raw: dict[str, Any]) -> P:
        """Validate params; raise ``ValueError`` naming the param and the fix."""
        return parse_params(f"rule type {self.name!r}", self.params, raw)


def parse_params(what: str, params: type[P], raw: dict[str, Any]) -> P:
    """``raw`` validated as ``params`` of ``what`` (a rule type, a situation); a
    ``ValueError`` names each bad param and the known ones."""
    try:
        return params.model_validate(raw)
    except ValidationError as exc:
        parts = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            msg = "unknown param" if err["type"] == "extra_forbidden" else err["msg"]
            msg = msg.removeprefix("Value error, ")
            parts.append(f"params.{loc}: {msg}" if loc else f"params: {msg}")
        known = ", ".join(f.alias or name for name, f in params.model_fields.items()) or "none"
        raise ValueError(f"{what}: {'; '.join(parts)} (its params: {known})") from None


async def _awaited(value: Awaitable[RuleOutcome]) -> RuleOutcome:
    return await value


def _checked(name: str, outcome: object) -> RuleOutcome:
    if not isinstance(outcome, RuleOutcome):
        raise TypeError(f"rule type {name!r} returned {type(outcome).__name__}, "
                        "not a RuleOutcome")
    return outcome


class Registry(Generic[T]):
    """Name → registered thing (rule types, situations). Registering a name twice replaces
    it (a user may override a built-in)."""

    def __init__(self, kind: str, plural: str, builtins: str) -> None:
        self._kind, self._plural = kind, plural
        self._module = builtins  # imported once, before the first lookup
        self._types: dict[str, T] = {}
        self._builtins = "no"  # no | loading | yes

    def register(self, name: str, value: T) -> None:
        # built-ins first, so that a user's type of the same name replaces the built-in
        if self._builtins == "no":
            self._load_builtins()
        self._types[name] = value

    def get(self, name: str) -> T:
        self._load_builtins()
        try:
            return self._types[name]
        except KeyError:
            known = ", ".join(sorted(self._types))
            raise KeyError(f"unknown {self._kind} {name!r}; known {self._plural}: "
                           f"{known}") from None

    def names(self) -> list[str]:
        self._load_builtins()
        return sorted(self._types)

    def _load_builtins(self) -> None:
        if self._builtins != "no":
            return
        self._builtins = "loading"
        importlib.import_module(self._module, __package__)  # registers the built-ins
        self._builtins = "yes"


REGISTRY: Registry[RuleType[Any]] = Registry("rule type", "types", ".builtin")


def rule(name: str, params: type[BaseModel] = NoParams) -> Callable[[F], F]:
    """Register ``check(params, turn) -> RuleOutcome`` as rule type ``name``.

    ``check`` may be ``async def``; it is then awaited on the engine's event loop.

    Example (in ``conftest.py``)::

        class Polite(agenteval.Params):
            words: list[str] = ["您"]

        @agenteval.rule("uses_polite_form", params=Polite)
        def uses_polite_form(p: Polite, turn: agenteval.TurnView) -> agenteval.RuleOutcome:
            hit = next((w for w in p.words if w in turn.reply), None)
            return agenteval.RuleOutcome.decide(hit is not None, "polite form", hit or "")
    """

    def decorate(fn: F) -> F:
        REGISTRY.register(name, RuleType(name, params, fn, (fn.__doc__ or "").strip()))
        return fn

    return decorate
