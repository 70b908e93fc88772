"""The ``http`` adapter: a JSON API described by a request template and a response map."""

from __future__ import annotations

import json
from typing import Any

import httpx

from ..model.config import HttpTarget
from ._template import MISSING, dig, render
from .base import AgentError, AgentReply, TurnRequest, scalar_code

__all__ = ["HttpAdapter"]

_SNIPPET = 300


class HttpAdapter:
    """Calls the agent once per turn; retries only when ``target.retries`` asks for it."""

    def __init__(self, target: HttpTarget, client: httpx.AsyncClient) -> None:
        self.target = target
        self.client = client

    def body(self, request: TurnRequest) -> Any:
        values = request.names()
        values["history"] = self._history(request.history)
        return render(self.target.request_template, values)

    def _history(self, history: list[dict[str, str]]) -> list[Any]:
        shape = self.target.history_item
        roles = self.target.roles
        out: list[Any] = []
        for item in history:
            entry = {"role": roles.get(item["role"], item["role"]), "content": item["content"]}
            out.append(render(shape, entry) if shape is not None else entry)
        return out

    async def send(self, request: TurnRequest) -> AgentReply:
        body = self.body(request)
        attempts = self.target.retries + 1
        for attempt in range(attempts):
            try:
                return await self._once(body)
            except AgentError:
                if attempt + 1 >= attempts:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _once(self, body: Any) -> AgentReply:
        try:
            response = await self.client.request(
                self.target.method, self.target.url, json=body,
                headers=self.target.headers, timeout=self.target.timeout_s,
            )
        except httpx.TimeoutException as exc:
            raise AgentError("timeout", f"no reply within {self.target.timeout_s:g} s"
                             f" ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise AgentError("connection", f"{type(exc).__name__}: {exc}") from None
        if not response.is_success:
            raise AgentError("http_status", f"HTTP {response.status_code}: "
                             f"{response.text[:_SNIPPET]}", response.status_code)
        return self.parse(response)

    def parse(self, response: httpx.Response) -> AgentReply:
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise AgentError("bad_body", "the reply is not JSON: "
                             f"{response.text[:_SNIPPET]!r}", response.status_code) from None
        rmap = self.target.response_map
        output = dig(data, rmap.output)
        if output is MISSING or not isinstance(output, str):
            found = "missing" if output is MISSING else f"a {type(output).__name__}"
            raise AgentError("bad_body", f"response_map.output '{rmap.output}' is {found} in "
                             f"the reply, expected a string: {response.text[:_SNIPPET]}",
                             response.status_code)
        return AgentReply(
            output=output,
            intent_code=scalar_code(self._optional(data, rmap.intent_code)),
            intent_name=_text(self._optional(data, rmap.intent_name)),
            conversation_id=_text(self._optional(data, rmap.conversation_id)),
            raw=data,
        )

    @staticmethod
    def _optional(data: Any, path: str | None) -> Any:
        if path is None:
            return None
        value = dig(data, path)
        return None if value is MISSING else value

    async def aclose(self) -> None:
        await self.client.aclose()


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
