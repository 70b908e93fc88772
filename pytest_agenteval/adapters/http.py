"""The ``http`` adapter: a JSON API described by a request template and a response map.

It speaks HTTP/1.1 through :mod:`._h1`, a client on asyncio's own transports: the
engine shares one core with pytest itself, and a request costs about half the CPU it
costs through aiohttp (0.25-0.32 against 0.42-0.55 ms measured alone in one hour;
httpx took 2.2 ms), see docs/performance.md.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_json

from ..model.config import HttpTarget
from ..privacy import clip
from ._clock import agent_timeout
from ._h1 import Wire, WireError
from ._template import MISSING, closest_path, compiled, dig
from .base import AgentError, AgentReply, TurnRequest, scalar_code

__all__ = ["HttpAdapter"]

_SNIPPET = 300
#: the optional ``response_map`` paths: read when configured, ``None`` when absent
_OPTIONAL = ("intent_code", "intent_name", "conversation_id")
#: what a JSON value that is not a string is, in the reader's words
_JSON_KIND = {int: "a number", float: "a number", bool: "true or false", list: "a list",
              dict: "an object", type(None): "null"}


class HttpAdapter:
    """Calls the agent once per turn (retries are the engine's, see adapters.Retrying)."""

    def __init__(self, target: HttpTarget) -> None:
        self.target = target
        #: its keep-alive connections: as many as requests in flight, which the engine
        #: bounds to this process's share of ``concurrency``
        self.wire = Wire()
        self._headers = {"Content-Type": "application/json", **target.headers}
        #: an optional path missing from a reply → the reply's closest path, looked up on the
        #: first such reply only (a typo misses in every turn; the lookup walks the reply)
        self._closest: dict[str, str | None] = {}
        #: the request template and the history item's shape, their placeholders found once
        self._body = compiled(target.request_template)
        self._shape = None if target.history_item is None else compiled(target.history_item)

    def body(self, request: TurnRequest) -> Any:
        values = request.names()
        values["history"] = self._history(request.history)
        return self._body(values)

    def _history(self, history: list[dict[str, str]]) -> list[Any]:
        shape = self._shape
        roles = self.target.roles
        out: list[Any] = []
        for item in history:
            entry = {"role": roles.get(item["role"], item["role"]), "content": item["content"]}
            out.append(shape(entry) if shape is not None else entry)
        return out

    async def send(self, request: TurnRequest) -> AgentReply:
        payload = to_json(self.body(request))  # pydantic's encoder: compact UTF-8 JSON
        try:  # the agent's timeout: the loop's stalls excluded (see _clock)
            async with agent_timeout(self.target.timeout_s):
                reply = await self.wire.request(self.target.method, self.target.url,
                                                payload, self._headers)
        except TimeoutError:
            raise AgentError("timeout", f"no reply within {self.target.timeout_s:g} s") from None
        except WireError as exc:
            raise AgentError("connection", str(exc)) from None
        status, raw = reply.status, reply.body
        if not 200 <= status < 300:
            text = raw.decode("utf-8", errors="replace")
            raise AgentError("http_status", f"HTTP {status}: {clip(text, _SNIPPET)}", status)
        return self.parse(raw, status)

    def parse(self, raw: bytes, status: int = 200) -> AgentReply:
        """Normalise a 2xx reply body through ``response_map``."""
        try:
            data = json.loads(raw)
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise AgentError("bad_body", f"the reply is not UTF-8: byte 0x{raw[exc.start]:02x} "
                             f"at offset {exc.start} (line {line}); JSON replies are UTF-8",
                             status) from None
        except json.JSONDecodeError as exc:
            text = raw.decode("utf-8", errors="replace")
            raise AgentError("bad_body", f"the reply is not JSON ({exc.msg} at line {exc.lineno}"
                             f" column {exc.colno}): {clip(text, _SNIPPET)!r}", status) from None
        rmap = self.target.response_map
        output = dig(data, rmap.output)
        if output is MISSING or not isinstance(output, str):
            found = "missing" if output is MISSING else _JSON_KIND.get(type(output), "not text")
            text = raw.decode("utf-8", errors="replace")
            near = closest_path(data, rmap.output) if output is MISSING else None
            hint = f" (did you mean '{near}'?)" if near else ""
            raise AgentError("bad_body", f"response_map.output '{rmap.output}' is {found} in "
                             f"the reply{hint}, expected a string: {clip(text, _SNIPPET)}", status)
        values: dict[str, Any] = {}
        missing: list[tuple[str, str, str | None]] = []
        for name in _OPTIONAL:
            path = getattr(rmap, name)
            value = None if path is None else dig(data, path)
            if value is MISSING:  # configured, not in this reply: a typo shows in every turn
                if path not in self._closest:
                    self._closest[path] = closest_path(data, path)
                missing.append((name, path, self._closest[path]))
                value = None
            values[name] = value
        return AgentReply(
            output=output,
            intent_code=scalar_code(values["intent_code"]),
            intent_name=_text(values["intent_name"]),
            conversation_id=_text(values["conversation_id"]),
            raw=data,
            missing=tuple(missing),
        )

    async def aclose(self) -> None:
        await self.wire.aclose()


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
