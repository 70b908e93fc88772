"""Real HTTP servers on loopback that tests point the plugin at.

``FakeAgent`` speaks the default ``http`` protocol of the plugin (request
template = every template name, reply ``{output, intent_code, intent_name,
conversation_id}``). What it does is steered by the user's input:

- ``__500__`` → HTTP 500 · ``__slow__`` → sleeps ``slow_s`` · ``__nonjson__`` → text body
- ``__nooutput__`` → JSON without ``output`` · ``__numoutput__`` → ``output`` is a number
- ``__phone__`` → replies with a phone number (to check masking)
- ``__cutbody__`` → closes mid-body · ``__latin1__`` → a body that is not UTF-8
- ``__echo401__`` → HTTP 401 whose body echoes the Authorization header and an ID number
  where a 300-character cut of the error detail falls (to check that cuts leak nothing)
- anything else → ``{"output": "好的：<input>", "intent_code": extra.intent}``
  (no intent unless the case asks for one)

Every request is recorded (thread-safe) so tests can count sends per case.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import ThreadingHTTPServer
from typing import Any

from pytest_agenteval.demo.server import JsonHandler


class _Handler(JsonHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.read_json()
        owner = self.server.owner
        owner.record(body, dict(self.headers))
        owner.enter()
        try:
            owner.respond(self, body)
        finally:
            owner.leave()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512
    owner: FakeAgent


class FakeAgent:
    def __init__(self, latency_s: float = 0.0, slow_s: float = 4.0) -> None:
        self.latency_s = latency_s
        self.slow_s = slow_s
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/chat"

    def record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def sends_per_case(self) -> Counter[str]:
        with self._lock:
            return Counter(r.get("case_id", "?") for r in self.requests if r.get("turn_index") == 0)

    def respond(self, handler: _Handler, body: dict[str, Any]) -> None:
        text = body.get("input", "")
        if self.latency_s:
            time.sleep(self.latency_s)
        if text == "__500__":
            handler.send_json(500, {"error": "boom"})
        elif text == "__slow__":
            time.sleep(self.slow_s)
            handler.send_json(200, {"output": "late"})
        elif text == "__nonjson__":
            handler.send_json(200, None, raw=b"<html>oops</html>")
        elif text == "__nooutput__":
            handler.send_json(200, {"reply": "wrong field"})
        elif text == "__numoutput__":
            handler.send_json(200, {"output": 42})
        elif text == "__cutbody__":  # promises 100 bytes, sends 12, closes
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", "100")
            handler.end_headers()
            handler.wfile.write(b'{"output": "')
            handler.wfile.flush()
            handler.close_connection = True
        elif text == "__latin1__":
            handler.send_json(200, None, raw='{"output": "café"}'.encode("latin-1"))
        elif text == "__echo401__":
            auth = handler.headers.get("Authorization", "")
            body_text = ("x" * 262 + " " + auth + " " + "y" * 10 + " 110101199003077777 end")
            handler.send_json(401, None, raw=body_text.encode())
        elif text == "__phone__":
            handler.send_json(200, {"output": "请拨打 13912345678 或写信到 a.b@example.com",
                               "intent_code": 1})
        else:
            extra = body.get("extra") or {}
            handler.send_json(200, {"output": f"好的：{text}", "intent_code": extra.get("intent"),
                               "intent_name": extra.get("intent_name"),
                               "conversation_id": body.get("conversation_id") or "c-1"})

    def start(self) -> FakeAgent:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def read_record(root: Any) -> dict[str, Any]:
    """The newest ``reports/<timestamp>/results.json`` under ``root``."""
    from pathlib import Path

    runs = sorted(Path(root, "reports").glob("*/results.json"), key=lambda p: p.stat().st_mtime)
    assert runs, f"no results.json under {root}/reports"
    data: dict[str, Any] = json.loads(runs[-1].read_text(encoding="utf-8"))
    return data


def by_id(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in record["cases"]}
