"""The reference agent's HTTP API (a vendor-style JSON API, like the seed's).

``POST /api/chat`` with ``{"input": str, "chatHistory": [{"role", "content"}],
"knowledge": {...} | null, "conversationId": str | null}`` answers
``{"code": 0, "data": {"reply": str, "intent": {"code": int, "name": str}},
"conversationId": str}``. A malformed request answers HTTP 400.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .agent import respond

__all__ = ["DemoServer", "JsonHandler", "handle"]

PATH = "/api/chat"


def handle(body: Any, fixed: frozenset[str] = frozenset()) -> tuple[int, dict[str, Any]]:
    """Answer one request body (with the deliberate defects ``fixed`` switched off);
    returns (HTTP status, JSON reply)."""
    if not isinstance(body, dict) or not isinstance(body.get("input"), str):
        return 400, {"code": 400, "message": "body must be an object with a string 'input'"}
    history = body.get("chatHistory") or []
    if not isinstance(history, list) or not all(
        isinstance(h, dict) and isinstance(h.get("content"), str) for h in history
    ):
        return 400, {"code": 400, "message": "chatHistory must be a list of {role, content}"}
    knowledge = body.get("knowledge")
    if knowledge is not None and not isinstance(knowledge, dict):
        return 400, {"code": 400, "message": "knowledge must be an object or null"}
    reply = respond(body["input"], history, knowledge, fixed)
    cid = body.get("conversationId") or uuid.uuid4().hex[:12]
    data = {"reply": reply.reply, "intent": {"code": reply.intent_code, "name": reply.intent_name}}
    return 200, {"code": 0, "data": data, "conversationId": cid}


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 keep-alive handler that answers JSON (also used by the tests' servers)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK

    def read_json(self) -> Any:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return json.loads(raw)

    def send_json(self, status: int, payload: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client left (a cancelled run): nothing to say

    def log_message(self, format: str, *args: Any) -> None:
        return None


class _Handler(JsonHandler):
    server: _Server

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != PATH:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_json(404, {"code": 404, "message": f"POST {PATH}"})
            return
        try:
            body = self.read_json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.send_json(400, {"code": 400, "message": "body is not JSON"})
            return
        if self.server.latency_s:
            time.sleep(self.server.latency_s)
        self.send_json(*handle(body, self.server.fixed))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    latency_s: float = 0.0
    fixed: frozenset[str] = frozenset()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that hung up mid-request is not worth a traceback


class DemoServer:
    """The reference agent on a loopback port, in a background thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, latency_ms: float = 0.0,
                 fixed: frozenset[str] = frozenset()) -> None:
        self._server = _Server((host, port), _Handler)
        self._server.latency_s = latency_ms / 1000.0
        self._server.fixed = fixed
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}{PATH}"

    def start(self) -> DemoServer:
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="agenteval-demo-agent", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
