"""The agent's HTTP/1.1 client (adapters/_h1.py) against a server that writes every byte
of its replies as each test scripts them: bodies of each framing, keep-alive and its
ends, interim replies, redirects, encodings, faults, a cancel, TLS."""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_agenteval.adapters._h1 import Wire, WireError

TLS = Path(__file__).parent / "data" / "tls"


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    conn: int


#: a scripted reply: the bytes to send (in pieces), then whether to close the connection
Script = Callable[[Request], tuple[list[bytes], bool]]


@dataclass
class Server:
    script: Script
    tls: ssl.SSLContext | None = None
    requests: list[Request] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.scheme = "https" if self.tls else "http"
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/chat") -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn, self.connections),
                             daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            f = conn.makefile("rb")
            while True:
                line = f.readline()
                if not line:
                    return
                method, target, _ = line.decode().split(" ", 2)
                headers = {}
                while (h := f.readline()) not in (b"\r\n", b""):
                    k, _, v = h.decode().partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = f.read(int(headers.get("content-length", 0)))
                req = Request(method, target, headers, body, number)
                self.requests.append(req)
                pieces, close = self.script(req)
                for piece in pieces:
                    conn.sendall(piece)
                if close:
                    return
        except (OSError, ssl.SSLError, ValueError):
            return
        finally:
            conn.close()

    def stop(self) -> None:
        self.sock.close()


def ok(body: bytes = b'{"output": "ok"}', extra: str = "") -> list[bytes]:
    return [f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n".encode() + body]


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(script: Script, tls: ssl.SSLContext | None = None) -> Server:
        servers.append(Server(script, tls))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def run(coro_fn: Callable[[Wire], object]) -> object:
    async def main() -> object:
        wire = Wire()
        try:
            return await coro_fn(wire)  # type: ignore[misc]
        finally:
            await wire.aclose()  # its sockets closed before the loop ends (no warning)
    return asyncio.run(main())


def test_a_reply_is_read_and_its_connection_kept_for_the_next(serve) -> None:
    server = serve(lambda req: (ok(b'{"n": %d}' % len(req.body)), False))

    async def go(wire: Wire) -> list[bytes]:
        return [(await wire.request("POST", server.url("/chat?x=1"), b"abc",
                                    {"X-Token": "t"})).body for _ in range(3)]

    assert run(go) == [b'{"n": 3}'] * 3
    assert server.connections == 1
    first = server.requests[0]
    assert (first.method, first.target, first.body) == ("POST", "/chat?x=1", b"abc")
    assert first.headers["host"] == f"127.0.0.1:{server.port}"
    assert first.headers["x-token"] == "t" and first.headers["content-length"] == "3"


def test_a_chunked_body_in_pieces_with_extensions_and_trailers(serve) -> None:
    pieces = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"5;ext=1\r\nhel",
              b"lo\r\n", b"7\r\n, world\r\n0\r\nX-Trailer: 1\r\n", b"\r\n"]
    server = serve(lambda req: (pieces, False))

    async def go(wire: Wire) -> list[bytes]:
        return [(await wire.request("GET", server.url(), None, {})).body for _ in range(2)]

    assert run(go) == [b"hello, world"] * 2
    assert server.connections == 1


@pytest.mark.parametrize(("reply", "connections"), [
    (ok(extra="Connection: close\r\n"), 2),
    ([b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi"], 2),  # 1.0: closes by default
    ([b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi"], 1),
])
def test_a_connection_is_reused_only_where_the_server_keeps_it(serve, reply,
                                                                connections) -> None:
    server = serve(lambda req: (reply, "close" in reply[0].decode().lower()
                                or reply[0].startswith(b"HTTP/1.0 200 OK\r\nContent")))

    async def go(wire: Wire) -> None:
        for _ in range(2):
            assert (await wire.request("GET", server.url(), None, {})).status == 200

    run(go)
    assert server.connections == connections


def test_a_body_read_to_the_close(serve) -> None:
    server = serve(lambda req: ([b"HTTP/1.1 200 OK\r\n\r\n", b"all ", b"of it"], True))
    assert run(lambda w: w.request("GET", server.url(), None, {})).body == b"all of it"


def test_an_interim_reply_is_skipped(serve) -> None:
    server = serve(lambda req: ([b"HTTP/1.1 100 Continue\r\n\r\n", *ok(b"{}")], False))
    reply = run(lambda w: w.request("POST", server.url(), b"{}", {}))
    assert (reply.status, reply.body) == (200, b"{}")


def test_redirects_are_followed_as_aiohttp_follows_them(serve) -> None:
    def script(req: Request) -> tuple[list[bytes], bool]:
        if req.target == "/a":
            return [b"HTTP/1.1 307 Temporary\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n"], False
        if req.target == "/b":
            return [b"HTTP/1.1 303 See Other\r\nLocation: /c\r\nContent-Length: 0\r\n\r\n"], False
        return ok(req.method.encode()), False

    server = serve(script)
    reply = run(lambda w: w.request("POST", server.url("/a"), b"body", {}))
    assert reply.body == b"GET"
    assert [(r.method, r.target, r.body) for r in server.requests] == [
        ("POST", "/a", b"body"), ("POST", "/b", b"body"), ("GET", "/c", b"")]


def test_a_redirect_loop_ends(serve) -> None:
    server = serve(lambda req: ([b"HTTP/1.1 302 Found\r\nLocation: /x\r\n"
                                 b"Content-Length: 0\r\n\r\n"], False))
    with pytest.raises(WireError, match="too many redirects"):
        run(lambda w: w.request("GET", server.url("/x"), None, {}))


def test_a_gzip_body_is_decoded(serve) -> None:
    packed = gzip.compress('{"output": "你好"}'.encode())
    server = serve(lambda req: (ok(packed, "Content-Encoding: gzip\r\n"), False))
    assert run(lambda w: w.request("GET", server.url(), None, {})).body == \
        '{"output": "你好"}'.encode()


def test_an_idle_connection_the_server_closed_is_not_reused(serve) -> None:
    """A server that ends an idle keep-alive connection (its idle timeout) without having
    said so: the next request goes on a new connection, not into the closed one."""
    server = serve(lambda req: (ok(), True))  # closes after each reply, unannounced

    async def go(wire: Wire) -> list[int]:
        got = []
        for _ in range(3):
            got.append((await wire.request("POST", server.url(), b"{}", {})).status)
            await asyncio.sleep(0.05)  # its end of file reaches the loop
        return got

    assert run(go) == [200, 200, 200]
    assert server.connections == 3


@pytest.mark.parametrize(("pieces", "words"), [
    ([], "the server closed the connection before replying"),
    ([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"],
     "the reply's body was cut short or malformed (the connection closed mid-reply)"),
    ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"],
     "the reply's body was cut short or malformed"),
    ([b"SMTP ready\r\n\r\n"], "the reply's body was cut short or malformed (the status line"),
    ([b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n"],
     "the reply's body was cut short or malformed (Content-Length 'many')"),
])
def test_a_broken_reply_is_a_wire_error_in_words(serve, pieces, words) -> None:
    server = serve(lambda req: (pieces, True))
    with pytest.raises(WireError) as got:
        run(lambda w: w.request("POST", server.url(), b"{}", {}))
    assert str(got.value).startswith(words), str(got.value)


def test_nothing_listening_is_a_wire_error_naming_the_address() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(WireError, match=rf"cannot connect to 127.0.0.1:{port}: Connection "
                                        r"refused"):
        run(lambda w: w.request("GET", f"http://127.0.0.1:{port}/", None, {}))


def test_a_cancelled_request_drops_its_connection(serve) -> None:
    gate = threading.Event()

    def script(req: Request) -> tuple[list[bytes], bool]:
        if req.target == "/slow":
            gate.wait(5)
            return [b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate"], False
        return ok(), False

    server = serve(script)

    async def go(wire: Wire) -> bytes:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await wire.request("GET", server.url("/slow"), None, {})
        gate.set()
        return (await wire.request("GET", server.url("/fast"), None, {})).body

    assert run(go) == b'{"output": "ok"}'  # not the slow request's late reply
    assert server.connections == 2


def _server_tls() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(TLS / "loopback-test-only.crt", TLS / "loopback-test-only.key")
    return ctx


def test_https_trusts_the_systems_certificates_and_ssl_cert_file(serve, monkeypatch) -> None:
    server = serve(lambda req: (ok(), False), tls=_server_tls())
    with pytest.raises(WireError, match=r"cannot connect to 127.0.0.1:\d+: TLS: certificate "
                                        r"verify failed: self.signed certificate"):
        run(lambda w: w.request("GET", server.url(), None, {}))
    monkeypatch.setenv("SSL_CERT_FILE", str(TLS / "loopback-test-only.crt"))
    assert run(lambda w: w.request("GET", server.url(), None, {})).status == 200


def test_the_callers_headers_replace_the_defaults_whatever_their_case(serve) -> None:
    """One header per name (aiohttp's headers are case-insensitive too): the caller's
    ``content-type`` and ``user-agent`` replace the defaults; a body's length is the
    client's to say; the URL's user and password are sent as basic auth."""
    server = serve(lambda req: (ok(), False))
    run(lambda w: w.request("POST", server.url().replace("http://", "http://u%40x:p@"),
                            b"{}", {"Content-Type": "application/json",
                                    "content-type": "text/plain", "user-agent": "mine",
                                    "Content-Length": "999"}))
    got = server.requests[0].headers
    assert (got["content-type"], got["user-agent"], got["content-length"]) == (
        "text/plain", "mine", "2")
    assert got["authorization"] == "Basic dUB4OnA="  # base64 of "u@x:p"


def test_a_header_with_a_line_break_is_refused(serve) -> None:
    server = serve(lambda req: (ok(), False))
    with pytest.raises(WireError, match="the header 'X-Evil' holds a line break"):
        run(lambda w: w.request("GET", server.url(), None, {"X-Evil": "a\r\nX-Injected: 1"}))
    assert server.requests == []


def test_a_redirect_to_another_origin_goes_without_the_authorization(serve) -> None:
    other = serve(lambda req: (ok(), False))
    first = serve(lambda req: ([f"HTTP/1.1 307 Moved\r\nLocation: {other.url('/x')}\r\n"
                                f"Content-Length: 0\r\n\r\n".encode()], False))
    run(lambda w: w.request("POST", first.url(), b"{}", {"Authorization": "Bearer k",
                                                         "X-Trace": "1"}))
    assert first.requests[0].headers["authorization"] == "Bearer k"
    moved = other.requests[0].headers
    assert "authorization" not in moved and moved["x-trace"] == "1"
