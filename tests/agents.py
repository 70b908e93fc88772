"""Real HTTP servers on loopback that tests point the plugin at.

``FakeAgent`` speaks the default ``http`` protocol of the plugin (request
template = every template name, reply ``{output, intent_code, intent_name,
conversation_id}``). What it does is steered by the user's input:

- ``__500__`` → HTTP 500 · ``__slow__`` → sleeps ``slow_s`` · ``__nonjson__`` → text body
- ``__nooutput__`` → JSON without ``output`` · ``__numoutput__`` → ``output`` is a number
- ``__404__`` → HTTP 404 · ``__empty__`` → ``{"output": ""}`` (an empty reply)
- ``__phone__`` → replies with a phone number (to check masking)
- ``__huge__`` → an ``output`` of about 1 MB of Chinese text with the phone number
  ``HUGE_PHONE`` in the middle and the ID number ``HUGE_ID`` near the end
- ``__cutbody__`` → closes mid-body · ``__latin1__`` → a body that is not UTF-8
- ``__surrogate__`` → an ``output`` with half an emoji (``\ud83d``, a lone surrogate)
- ``__drip__`` → headers at once, then a 23-byte JSON body one byte every ``drip_s``
  (4.6 s in all: longer than a 1.5 s timeout)
- ``__never__`` → reads the request and never answers (waits ``never_s`` or until
  :meth:`FakeAgent.stop`, then closes) · ``__closenow__`` → closes without any response
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

#: ``__huge__``'s personal data: masked in every artefact, never shown as such
HUGE_PHONE = "13912345678"
HUGE_ID = "110101199003077777"
_FILLER = "二手车质保一年，全国联保，支持七天无理由退车。"  # 23 characters, 69 bytes in UTF-8
#: about 1 MB in UTF-8: filler, the phone number in the middle, the ID number near the end
HUGE_OUTPUT = (_FILLER * 7_600 + f"请拨打{HUGE_PHONE}联系顾问。" + _FILLER * 7_600
               + f"身份证{HUGE_ID}已登记。" + _FILLER * 10)


#: inputs answered with a fixed JSON reply: (HTTP status, body)
_CANNED: dict[str, tuple[int, Any]] = {
    "__500__": (500, {"error": "boom"}),
    "__404__": (404, {"error": "no such route"}),
    "__nooutput__": (200, {"reply": "wrong field"}),
    "__numoutput__": (200, {"output": 42}),
    "__empty__": (200, {"output": ""}),
    "__phone__": (200, {"output": "请拨打 13912345678 或写信到 a.b@example.com", "intent_code": 1}),
    "__huge__": (200, {"output": HUGE_OUTPUT}),
}


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
    def __init__(self, latency_s: float = 0.0, slow_s: float = 4.0, drip_s: float = 0.2,
                 never_s: float = 60.0) -> None:
        self.latency_s = latency_s
        self.slow_s = slow_s
        self.drip_s = drip_s
        self.never_s = never_s
        self._stopped = threading.Event()  # ends ``__never__`` and ``__drip__`` at stop()
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
        if text in _CANNED:
            handler.send_json(*_CANNED[text])
        elif text == "__drip__":
            self._drip(handler, json.dumps({"output": "慢慢来"}, ensure_ascii=False).encode())
        elif text == "__never__":
            self._stopped.wait(self.never_s)
            handler.close_connection = True
        elif text == "__closenow__":
            handler.close_connection = True  # nothing written: the socket is just closed
        elif text == "__slow__":
            time.sleep(self.slow_s)
            handler.send_json(200, {"output": "late"})
        elif text == "__nonjson__":
            handler.send_json(200, None, raw=b"<html>oops</html>")
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
        elif text == "__surrogate__":  # an emoji cut in half: valid JSON, not valid text
            handler.send_json(200, None, raw=b'{"output": "\\ud83d\xe5\xa5\xbd", '
                              b'"intent_name": "\\udc00"}')
        elif text == "__echo401__":
            auth = handler.headers.get("Authorization", "")
            body_text = ("x" * 262 + " " + auth + " " + "y" * 10 + " 110101199003077777 end")
            handler.send_json(401, None, raw=body_text.encode())
        else:
            extra = body.get("extra") or {}
            handler.send_json(200, {"output": f"好的：{text}", "intent_code": extra.get("intent"),
                               "intent_name": extra.get("intent_name"),
                               "conversation_id": body.get("conversation_id") or "c-1"})

    def _drip(self, handler: _Handler, data: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.flush()
        try:
            for i in range(len(data)):
                if self._stopped.wait(self.drip_s):
                    break
                handler.wfile.write(data[i:i + 1])
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): nothing to say
        handler.close_connection = True

    def start(self) -> FakeAgent:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
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


#: gw1 sends its conversations as soon as it has collected, before the controller has sent
#: it anything: the crash waits until gw1 runs K-01, so that xdist knows K-01 as the item
#: gw1 was running (on a loaded machine the controller can take longer than a fixed wait)
K01_RUNNING = """
def pytest_runtest_logstart(nodeid, location):
    if nodeid.endswith("::K-01"):
        open("k01-running", "w").close()
"""
CRASHBOT = """
import os
import time


def reply(turn):
    fd = os.open("calls.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (turn["case_id"] + "\\n").encode())
    os.close(fd)
    if turn["input"] == "crash":
        for _ in range(300):
            if os.path.exists("k01-running"):
                break
            time.sleep(0.05)
        time.sleep(0.1)
        os._exit(3)
    time.sleep(2.0)
    return {"output": "ok " + turn["input"]}
"""
