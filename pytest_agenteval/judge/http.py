"""The judge endpoint's HTTP: JSON over one ``aiohttp`` session, no SDK in the way.

An OpenAI-compatible endpoint is three JSON routes (``/chat/completions``,
``/embeddings``, ``/moderations``), and the judge needs none of what the OpenAI SDK
adds on top: its retries are off (the client's own honour per-minute quotas), its
typed responses are parsed again by the rubric, and it costs about 7 ms of CPU a call
against aiohttp's 0.4 ms, on the core the engine shares with pytest (measured with
``tests/perf/bench.py``, docs/performance.md). Importing it costs 0.7 s as well, in
every process. What the SDK did that users rely on is kept here:

- ``base_url`` ``null`` means ``OPENAI_BASE_URL``, else ``https://api.openai.com/v1``;
  ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT_ID`` are sent as its headers are;
- proxies come from ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` (never for a loopback
  endpoint), certificates from ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else certifi's;
- without a proxy the calls go through the agent adapter's HTTP/1.1 client
  (:mod:`..adapters._h1`, about half of aiohttp's CPU a call); through a proxy, aiohttp's;
- an error's body is the provider's ``error`` object when it sends one.

The key never leaves the ``Authorization`` header: a provider that echoes it in an error
body has it replaced before the text reaches a reason.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic_core import to_json

from .. import __version__
from ..adapters._h1 import Wire, WireError

if TYPE_CHECKING:
    import ssl

    import aiohttp

__all__ = ["BadReply", "Endpoint", "StatusError", "Unreachable", "base_url"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_LOOPBACK = ("localhost", "::1")


class StatusError(Exception):
    """A reply outside 2xx: its status, its error text and its headers (``Retry-After``)."""

    def __init__(self, status: int, body: str, headers: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status_code, self.body, self.headers = status, body, headers


class Unreachable(Exception):
    """No reply: the connection failed or broke (the words say which)."""


class BadReply(Exception):
    """A 2xx reply that is not a JSON object."""


def base_url(configured: str | None) -> str:
    """The endpoint's base URL, as the OpenAI SDK resolves it."""
    return (configured or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


class Endpoint:
    """One per judge client; its session is made on the engine's loop at the first call."""

    def __init__(self, configured_base_url: str | None, api_key: str) -> None:
        self.base = base_url(configured_base_url)
        self._key = api_key
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": f"pytest-agenteval/{__version__}"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"),
                            ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if os.environ.get(env):
                self._headers[header] = os.environ[env]
        self._session: aiohttp.ClientSession | None = None
        self._wire: Wire | None = None

    def _open(self) -> None:
        """Our HTTP/1.1 client where no proxy applies, aiohttp's session through one."""
        https = self.base.startswith("https:")
        if not through_proxy(self.base):
            self._wire = Wire(user_agent=self._headers["User-Agent"],
                              tls=_tls() if https else None)
            return
        import aiohttp

        tls: ssl.SSLContext | bool = _tls() if https else True
        # no limit of its own: chat calls hold the client's semaphore (judge.concurrency)
        connector = aiohttp.TCPConnector(limit=0, ssl=tls)
        self._session = aiohttp.ClientSession(
            connector=connector, trust_env=True,
            timeout=aiohttp.ClientTimeout(total=None))  # the caller's asyncio.timeout rules

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``base + path``; the reply's JSON object."""
        if self._wire is None and self._session is None:
            self._open()
        data = to_json(body)  # pydantic's encoder: a sixth of the json module's time here
        if self._wire is not None:
            try:
                reply = await self._wire.request("POST", self.base + path, data, self._headers)
            except WireError as exc:
                raise Unreachable(self._scrub(str(exc))) from None
            status, headers, raw = reply.status, reply.headers, reply.body
        else:
            status, headers, raw = await self._aiohttp_post(path, data)
        if not 200 <= status < 300:
            raise StatusError(status, self._scrub(_error_text(raw)), headers)
        try:
            got = json.loads(raw)
        except ValueError:  # not UTF-8 or not JSON
            got = None
        if not isinstance(got, dict):
            text = raw[:200].decode("utf-8", errors="replace")
            raise BadReply(self._scrub(f"the judge's reply (HTTP {status}) is not a JSON "
                                       f"object: {text!r}"))
        return got

    async def _aiohttp_post(self, path: str, data: bytes) -> tuple[int, Any, bytes]:
        import aiohttp

        assert self._session is not None
        try:
            async with self._session.post(self.base + path, data=data,
                                          headers=self._headers) as response:
                return response.status, response.headers, await response.read()
        except aiohttp.ClientError as exc:
            raise Unreachable(self._scrub(_connection_detail(exc))) from None

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if len(self._key) >= 8 else text

    async def aclose(self) -> None:
        if self._wire is not None:
            await self._wire.aclose()
            self._wire = None
        if self._session is not None:
            await self._session.close()
            self._session = None


def through_proxy(base: str) -> bool:
    """Whether the calls to the endpoint ``base`` go through a proxy from the environment,
    as aiohttp's ``trust_env`` reads it (``HTTPS_PROXY``, ``HTTP_PROXY``, ``NO_PROXY``):
    then by aiohttp, else by the HTTP/1.1 client. Never for a loopback endpoint."""
    from urllib.request import getproxies, proxy_bypass

    parts = urlsplit(base)
    host = parts.hostname or ""
    if host in _LOOPBACK or host.startswith("127."):
        return False
    return bool(getproxies().get(parts.scheme.lower())) and not proxy_bypass(host)


def _connection_detail(exc: aiohttp.ClientError) -> str:
    """The failure in words; aiohttp's payload errors carry a number that reads like a
    status."""
    import aiohttp

    name = type(exc).__name__
    if isinstance(exc, aiohttp.ClientPayloadError):
        return (f"the reply's body was cut short or malformed ({name}); the connection broke "
                "while the body was being read")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return f"the server closed the connection before replying ({name})"
    return f"{name}: {exc}"


def _error_text(raw: bytes) -> str:
    """The provider's ``error`` object as JSON text when it sends one, else the body."""
    text = raw.decode("utf-8", errors="replace")
    try:
        got = json.loads(text)
    except ValueError:
        return text
    if isinstance(got, dict) and "error" in got:
        got = got["error"]
    return got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)


def _tls() -> ssl.SSLContext:
    """``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set (OpenSSL reads them), else certifi's
    bundle: the certificates the OpenAI SDK (httpx) trusted."""
    import ssl

    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())
