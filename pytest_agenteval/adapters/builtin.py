"""The ``builtin`` adapter: the reference agent on a loopback port, over real HTTP."""

from __future__ import annotations

from typing import Any

from ..model.config import BuiltinTarget, HttpTarget, ResponseMap

__all__ = ["DEMO_TEMPLATE", "builtin_http_target"]

#: How the reference agent's vendor-style API is spoken (see demo/server.py).
DEMO_TEMPLATE: dict[str, Any] = {
    "input": "{input}",
    "chatHistory": "{history}",
    "knowledge": "{knowledge}",
    "conversationId": "{conversation_id}",
}
DEMO_RESPONSE_MAP = ResponseMap(
    output="data.reply",
    intent_code="data.intent.code",
    intent_name="data.intent.name",
    conversation_id="conversationId",
)


def builtin_http_target(url: str, builtin: BuiltinTarget) -> HttpTarget:
    """The http target that talks to a reference agent at ``url``."""
    return HttpTarget(
        adapter="http",
        url=url,
        request_template=DEMO_TEMPLATE,
        response_map=DEMO_RESPONSE_MAP,
        timeout_s=builtin.timeout_s,
        concurrency=builtin.concurrency,
        retries=builtin.retries,
        retry_backoff_s=builtin.retry_backoff_s,
    )


class BuiltinAdapter:
    """Starts the reference agent, then speaks to it through the real ``http`` adapter."""

    def __init__(self, target: BuiltinTarget) -> None:
        from ..demo.server import DemoServer
        from .http import HttpAdapter

        self.server = DemoServer(latency_ms=target.latency_ms,
                                 fixed=frozenset(target.fixed_defects)).start()
        self.http = HttpAdapter(builtin_http_target(self.server.url, target))

    async def send(self, request: Any) -> Any:
        return await self.http.send(request)

    async def aclose(self) -> None:
        try:
            await self.http.aclose()
        finally:
            self.server.stop()
