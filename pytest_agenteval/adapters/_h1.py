"""HTTP/1.1 to the agent, on asyncio's own transports.

The ``http`` adapter makes one request per turn, and on the machine that runs the
evaluation the request's CPU is the run's: aiohttp's request machinery (its URL,
header and cookie handling, request and response objects, tracing hooks, connector)
cost 0.42-0.55 ms of CPU a request against a local agent, this client 0.25-0.32 ms in
the same hour, a bare ``asyncio.Protocol`` exchange 0.15-0.21 ms (docs/performance.md).
It does what an agent's endpoint may ask of it:

- ``http`` and ``https`` (the system's certificates, as aiohttp's default), the port,
  the path and the query of the URL; no proxy (the adapter never used one);
- connections kept alive and reused, one request at a time on each; an idle one is
  dropped after :data:`IDLE_S`, or when the server has closed it;
- a body of ``Content-Length``, ``Transfer-Encoding: chunked`` or read to the close;
  ``Connection: close`` and HTTP/1.0 honoured; interim ``1xx`` replies skipped;
  ``gzip`` and ``deflate`` bodies decoded (none is asked for);
- redirects followed as aiohttp follows them: up to ten, ``303`` (and ``301``/``302``
  of a ``POST``) as a ``GET`` without the body, ``307``/``308`` as sent;
- a request cancelled (the agent's timeout) drops its connection.

Every failure is a :class:`WireError` whose words say what happened.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import zlib
from collections.abc import Mapping
from functools import lru_cache
from urllib.parse import SplitResult, unquote, urljoin, urlsplit

from .. import __version__

__all__ = ["IDLE_S", "Reply", "Wire", "WireError"]

#: how long an idle connection is kept (aiohttp's keep-alive default)
IDLE_S = 15.0
#: the most redirects followed (aiohttp's default)
MAX_REDIRECTS = 10
#: the longest status line and headers accepted
MAX_HEAD = 65_536
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_USER_AGENT = f"pytest-agenteval/{__version__}"


class WireError(Exception):
    """A request that got no complete reply: the words say why."""


class Reply:
    """A reply's status, headers (names in lower case) and body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


class _Closed(Exception):
    """The server closed the connection (``partial``: after part of the reply)."""

    def __init__(self, partial: bool) -> None:
        super().__init__()
        self.partial = partial


class _Bad(Exception):
    """The reply is not HTTP/1.x as it should be."""


class _Conn(asyncio.Protocol):
    """One connection: the bytes received, and a waiter woken when more come."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.eof = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def more(self) -> None:
        """Wait for more bytes or the end of the connection."""
        self._waiter = self.loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    @property
    def usable(self) -> bool:
        return (not self.eof and self.transport is not None
                and not self.transport.is_closing() and not self.buf)

    def close(self, abort: bool = False) -> None:
        """Close it (``abort``: at once, without TLS's closing handshake, whose passes of the
        loop an ending run does not wait for)."""
        self.eof = True
        if self.transport is not None:
            if abort:
                self.transport.abort()
            else:
                self.transport.close()


class Wire:
    """A pool of keep-alive connections per origin; every method runs on one loop."""

    def __init__(self, *, user_agent: str = _USER_AGENT,
                 tls: ssl.SSLContext | None = None) -> None:
        self._idle: dict[tuple[str, str, int], list[_Conn]] = {}
        #: for ``https``: the system's certificates unless given (made at the first use)
        self._tls = tls
        self._user_agent = user_agent
        self._closed = False

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: Mapping[str, str]) -> Reply:
        """Send one request (following redirects); its final reply. A redirect to another
        origin goes without the ``Authorization`` header, as aiohttp's does."""
        origin = _origin(url)  # (the same few URLs, every turn: each parsed once)
        for _ in range(MAX_REDIRECTS + 1):
            reply = await self._once(method, url, body, headers)
            location = reply.headers.get("location")
            if reply.status not in _REDIRECTS or not location:
                return reply
            url = urljoin(url, location)
            if (reply.status == 303 and method != "HEAD") or \
                    (reply.status in (301, 302) and method == "POST"):
                method, body = "GET", None
            if _origin(url) != origin:
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        raise WireError(f"too many redirects (more than {MAX_REDIRECTS}), the last to {url}")

    async def _once(self, method: str, url: str, body: bytes | None,
                    headers: Mapping[str, str]) -> Reply:
        key = _endpoint(url)
        head = self._head(method, url, body, headers)
        conn = await self._acquire(key)
        keep = False
        try:
            assert conn.transport is not None
            conn.transport.write(head + body if body else head)
            reply, keep = await _read(conn, method)
            return reply
        except _Closed as exc:
            if exc.partial:
                raise WireError("the reply's body was cut short or malformed (the connection "
                                "closed mid-reply); the connection broke while the body was "
                                "being read") from None
            raise WireError("the server closed the connection before replying") from None
        except _Bad as exc:
            raise WireError(f"the reply's body was cut short or malformed ({exc}); the reply "
                            "is not HTTP/1.1") from None
        except OSError as exc:  # reset, broken pipe
            raise WireError(f"the connection broke: {exc.strerror or exc}") from None
        finally:  # a cancel (the agent's timeout) included: the connection is not reused
            if keep and not self._closed:
                conn.idle_since = conn.loop.time()
                self._idle.setdefault(key, []).append(conn)
            else:
                conn.close()

    def _head(self, method: str, url: str, body: bytes | None,
              headers: Mapping[str, str]) -> bytes:
        """The request line and headers: the caller's (a name in any case replaces the
        default of that name), the body's length, basic auth from the URL as aiohttp
        sends it. All but the length are made once for a method, URL and headers."""
        sized = body is not None or method in ("POST", "PUT", "PATCH")
        lines = _lines(method, url, tuple(headers.items()), self._user_agent)
        if sized:
            lines += f"\r\nContent-Length: {len(body or b'')}"
        return (lines + "\r\n\r\n").encode("utf-8")

    async def _acquire(self, key: tuple[str, str, int]) -> _Conn:
        loop = asyncio.get_running_loop()
        idle = self._idle.get(key)
        now = loop.time()
        while idle:
            conn = idle.pop()
            if conn.usable and now - conn.idle_since < IDLE_S:
                return conn
            conn.close()
        scheme, host, port = key
        tls = None
        if scheme == "https":
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        try:
            _, conn = await loop.create_connection(lambda: _Conn(loop), host, port, ssl=tls,
                                                   server_hostname=host if tls else None)
        except ssl.SSLCertVerificationError as exc:
            await _settle()
            raise WireError(f"cannot connect to {host}:{port}: TLS: certificate verify "
                            f"failed: {exc.verify_message}") from None
        except ssl.SSLError as exc:
            await _settle()
            raise WireError(f"cannot connect to {host}:{port}: TLS: "
                            f"{exc.reason or exc}") from None
        except OSError as exc:  # refused, unreachable, no such host
            why = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else str(exc)
            raise WireError(f"cannot connect to {host}:{port}: {why}") from None
        return conn

    async def aclose(self) -> None:
        """Close the idle connections (one pass of the loop lets their sockets go, before
        a loop that is ending leaves them to the garbage collector's warnings)."""
        self._closed = True
        closing = [conn for conns in self._idle.values() for conn in conns]
        self._idle.clear()
        for conn in closing:
            conn.close(abort=True)
        if closing:
            await _settle()


@lru_cache(maxsize=256)
def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


@lru_cache(maxsize=256)
def _endpoint(url: str) -> tuple[str, str, int]:
    """Where ``url``'s requests go: its scheme, host and port (the pool's key)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise WireError(f"not an http(s) URL: {url!r}")
    return scheme, parts.hostname, parts.port or (443 if scheme == "https" else 80)


@lru_cache(maxsize=256)
def _lines(method: str, url: str, headers: tuple[tuple[str, str], ...],
           user_agent: str) -> str:
    """The request line and the headers but the body's length, without the last line
    break (see ``Wire._head``)."""
    parts: SplitResult = urlsplit(url)
    scheme, host, port = _endpoint(url)
    default_port = port == (443 if scheme == "https" else 80)
    authority = host if ":" not in host else f"[{host}]"
    named = {"host": ("Host", authority if default_port else f"{authority}:{port}"),
             "user-agent": ("User-Agent", user_agent), "accept": ("Accept", "*/*")}
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        named["authorization"] = ("Authorization",
                                  "Basic " + base64.b64encode(pair.encode()).decode())
    for name, value in headers:
        if name.lower() not in ("host", "content-length", "transfer-encoding"):
            named[name.lower()] = (name, value)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [f"{method} {target} HTTP/1.1"]
    for name, value in named.values():
        text = f"{name}: {value}"
        if "\r" in text or "\n" in text:
            raise WireError(f"the header {name!r} holds a line break")
        lines.append(text)
    return "\r\n".join(lines)


async def _settle() -> None:
    """Two passes of the loop: a transport closed (or whose TLS handshake failed) closes its
    socket in them (asyncio closes it by callbacks), before a loop that ends leaves it to
    the garbage collector's ``ResourceWarning``."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


async def _read(conn: _Conn, method: str) -> tuple[Reply, bool]:
    """One reply from ``conn``; whether the connection may serve another request."""
    version, status, headers = await _final_head(conn)
    connection = headers.get("connection", "").lower()
    keep = ("close" not in connection) if version == "HTTP/1.1" else ("keep-alive" in connection)
    if method == "HEAD" or status in (204, 304):
        body = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _chunked(conn)
    elif "content-length" in headers:
        text = headers["content-length"]
        if not text.isdigit():
            raise _Bad(f"Content-Length {text!r}")
        body = await _exactly(conn, int(text))
    else:  # to the close
        while not conn.eof:
            await conn.more()
        body, keep = bytes(conn.buf), False
        conn.buf.clear()
    coding = headers.get("content-encoding", "").lower().strip()
    if coding and coding != "identity":
        body = _decoded(body, coding)
    return Reply(status, headers, body), keep and not conn.eof


async def _final_head(conn: _Conn) -> tuple[str, int, dict[str, str]]:
    """The status line and headers of the reply, past any interim (1xx) one."""
    got_any = False
    while True:
        end = conn.buf.find(b"\r\n\r\n")
        while end < 0:
            if len(conn.buf) > MAX_HEAD:
                raise _Bad("a status line and headers of more than 64 KB")
            if conn.eof:
                raise _Closed(partial=got_any or bool(conn.buf))
            await conn.more()
            end = conn.buf.find(b"\r\n\r\n")
        got_any = True
        head = bytes(conn.buf[:end]).decode("latin-1")
        del conn.buf[:end + 4]
        version, status, headers = _head(head)
        if status == 101:
            raise _Bad("101 switching protocols")
        if not 100 <= status < 200:
            return version, status, headers


def _head(head: str) -> tuple[str, int, dict[str, str]]:
    lines = head.split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise _Bad(f"the status line {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise _Bad(f"the header line {line[:80]!r}")
        name = name.strip().lower()
        value = value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return version, int(code), headers


async def _exactly(conn: _Conn, n: int) -> bytes:
    while len(conn.buf) < n:
        if conn.eof:
            raise _Closed(partial=True)
        await conn.more()
    body = bytes(conn.buf[:n])
    del conn.buf[:n]
    return body


async def _chunked(conn: _Conn) -> bytes:
    out = bytearray()
    while True:
        end = conn.buf.find(b"\r\n")
        while end < 0:
            if conn.eof:
                raise _Closed(partial=True)
            if len(conn.buf) > MAX_HEAD:
                raise _Bad("a chunk size line of more than 64 KB")
            await conn.more()
            end = conn.buf.find(b"\r\n")
        size_text = bytes(conn.buf[:end]).split(b";", 1)[0].strip()
        del conn.buf[:end + 2]
        try:
            size = int(size_text, 16)
        except ValueError:
            raise _Bad(f"the chunk size {size_text[:20]!r}") from None
        if size == 0:  # the trailers, then an empty line
            while True:
                end = conn.buf.find(b"\r\n")
                while end < 0:
                    if conn.eof:
                        raise _Closed(partial=True)
                    await conn.more()
                    end = conn.buf.find(b"\r\n")
                line = bytes(conn.buf[:end])
                del conn.buf[:end + 2]
                if not line:
                    return bytes(out)
        out += await _exactly(conn, size)
        if await _exactly(conn, 2) != b"\r\n":
            raise _Bad("a chunk not followed by CRLF")


def _decoded(body: bytes, coding: str) -> bytes:
    try:
        if coding in ("gzip", "x-gzip"):
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if coding == "deflate":
            try:
                return zlib.decompress(body)
            except zlib.error:  # raw deflate, as some servers send it
                return zlib.decompress(body, -zlib.MAX_WBITS)
    except zlib.error as exc:
        raise _Bad(f"a {coding} body that does not decode: {exc}") from None
    raise _Bad(f"a body in Content-Encoding {coding!r}, which was not asked for")

