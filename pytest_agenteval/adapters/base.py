"""The seam between the engine and the agent under test.

Every adapter turns one :class:`TurnRequest` into one :class:`AgentReply` or
raises :class:`AgentError` with a kind from SPEC 7 (``timeout``,
``http_status``, ``bad_body``, ``connection``). An agent error makes the case
``error``, never ``failed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from ..model.results import AgentError as ErrorRecord

__all__ = ["Adapter", "AgentError", "AgentReply", "ErrorKind", "Retrying", "TurnRequest",
           "retryable"]

ErrorKind = Literal["timeout", "http_status", "bad_body", "connection"]


@dataclass(frozen=True)
class TurnRequest:
    """Everything the agent gets for one turn (the template names of SPEC 5)."""

    input: str
    history: list[dict[str, str]] = field(default_factory=list)
    knowledge: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    conversation_id: str | None = None
    case_id: str = ""
    turn_index: int = 0

    def names(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "history": self.history,
            "knowledge": self.knowledge,
            "extra": self.extra,
            "conversation_id": self.conversation_id,
            "case_id": self.case_id,
            "turn_index": self.turn_index,
        }


@dataclass(frozen=True)
class AgentReply:
    """The normalised reply of the agent."""

    output: str
    intent_code: int | str | None = None
    intent_name: str | None = None
    conversation_id: str | None = None
    raw: Any = None
    #: ``(field, path, closest path present)`` of each configured optional path not found
    missing: tuple[tuple[str, str, str | None], ...] = ()

    def __post_init__(self) -> None:
        # half a character (valid JSON, ``"\ud83d"``) is no text: every rule, the judge,
        # its cache and the record see U+FFFD in its place, whichever adapter made it
        from ..privacy import whole

        for name in ("output", "intent_code", "intent_name", "conversation_id"):
            value = getattr(self, name)
            if isinstance(value, str) and not value.isascii():
                object.__setattr__(self, name, whole(value))


class AgentError(Exception):
    """The agent could not be asked or did not answer usably.

    ``traceback`` keeps the text of the user's traceback when the agent is the
    user's own code (a ``python`` callable that raised).
    """

    def __init__(self, kind: ErrorKind, detail: str, status_code: int | None = None,
                 traceback: str | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind: ErrorKind = kind
        self.detail = detail
        self.status_code = status_code
        self.traceback = traceback

    def record(self) -> ErrorRecord:
        """This error as the result records it."""
        from ..model.results import AgentError as ErrorRecord

        return ErrorRecord(kind=self.kind, detail=self.detail, status_code=self.status_code,
                           traceback=self.traceback)


class Adapter(Protocol):
    """One agent under test. Created and used on the engine's event loop."""

    async def send(self, request: TurnRequest) -> AgentReply: ...

    async def aclose(self) -> None: ...


def retryable(exc: AgentError) -> bool:
    """Worth another try: no answer, or an overloaded / failing server (429, 5xx)."""
    if exc.kind in ("timeout", "connection"):
        return True
    return exc.kind == "http_status" and (exc.status_code == 429 or (exc.status_code or 0) >= 500)


class Retrying:
    """Retries a retryable :class:`AgentError` ``retries`` times with exponential back-off.

    Off by default (``target.retries: 0``): the agent is not assumed idempotent.
    A wrong body (``bad_body``) or a 4xx other than 429 is never retried.
    """

    def __init__(self, inner: Adapter, retries: int, backoff_s: float = 0.5) -> None:
        self.inner = inner
        self.retries = retries
        self.backoff_s = backoff_s

    async def send(self, request: TurnRequest) -> AgentReply:
        import asyncio

        for attempt in range(self.retries + 1):
            try:
                return await self.inner.send(request)
            except AgentError as exc:
                if attempt >= self.retries or not retryable(exc):
                    raise
                await asyncio.sleep(min(8.0, self.backoff_s * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self.inner.aclose()


def scalar_code(value: Any) -> int | str | None:
    """An intent code as JSON-native int or str (None when absent or empty)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | str):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return str(value)
