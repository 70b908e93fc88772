"""A minimal OpenAI-compatible ``/v1/chat/completions`` server on loopback."""

from __future__ import annotations

import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any, Self

from pytest_agenteval.demo.server import JsonHandler


class _Handler(JsonHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.read_json()
        owner = self.server.owner
        owner.requests.append({"path": self.path, "body": body,
                               "auth": self.headers.get("Authorization")})
        last = body["messages"][-1]["content"]
        if last == "__429__":
            return self.send_json(429, {"error": {"message": "rate limited", "type": "rate"}})
        if last == "__slow__":
            time.sleep(2)
        content = None if last == "__null__" else f"[{body['model']}] 收到：{last}"
        self.send_json(200, {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # a burst of connections from a concurrent client is not dropped
    owner: Any


class LoopbackServer:
    """An HTTP server on a free loopback port, in a thread, for the length of a ``with``."""

    def __init__(self, handler: type[JsonHandler]) -> None:
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class OpenAIServer(LoopbackServer):
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        super().__init__(_Handler)
