"""The judge's client: an OpenAI-compatible endpoint with the behaviour an evaluation run
needs, over :mod:`.http` (the plugin's HTTP/1.1 client, aiohttp through a proxy; the
OpenAI SDK costs 7 ms of CPU a call).

- **Budget.** Every call has a wall-clock budget (``asyncio.timeout``): per-operation
  timeouts would let a provider that keeps the connection alive with blank lines
  stretch one call past ten minutes.
- **Concurrency** of its own (``judge.concurrency``), apart from the agent's.
- **Retries** on 429, 5xx, 408/409 and connection errors, honouring
  ``Retry-After``/``retry-after-ms``/``X-RateLimit-Reset``, for up to
  ``retry_budget_s`` and ``max_attempts`` (the OpenAI SDK's back-off stops at 8 s, too
  short for per-minute quotas).
- **Moderation** (DashScope's ``data_inspection_failed``, Zhipu's
  ``finish_reason: sensitive``, ``content_filter``) is ``moderated``, never retried.
- **Output ladder.** ``json_schema`` (strict, flat schema), else ``json_object``
  (the schema and an example are in the prompt, which DeepSeek and Zhipu need),
  else plain text with the JSON extracted. The rung of an endpoint is found by
  its first call (the others wait for it: one probe per endpoint per process),
  remembered in the cache file, and stepped down only on a 400/422 that names
  the response format, or on two 2xx replies in a row that ignore the schema.
- **Contract.** A reply that is not valid is asked again with the validation
  error, at most ``max_contract_retries`` times; then the ask fails with
  ``contract_violation``. A failed ask is never a score.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar
from urllib.parse import urlsplit

from .http import BadReply, Endpoint, StatusError, Unreachable
from .rubric import ContractError, extract_json

if TYPE_CHECKING:
    from ..model.config import JudgeConfig
    from .cache import JudgeCache

__all__ = ["Asked", "Failure", "JudgeClient", "Mode", "thinking_off"]

T = TypeVar("T")
Mode = Literal["json_schema", "json_object", "text"]
LADDER: tuple[Mode, ...] = ("json_schema", "json_object", "text")
FailureCode = Literal["timeout", "rate_limited", "http_error", "contract_violation",
                      "moderated"]

#: endpoints known not to take ``json_schema``: no probe needed (judge-providers notes)
_KNOWN_MODES: dict[str, Mode] = {"api.deepseek.com": "json_object",
                                 "open.bigmodel.cn": "json_object"}
#: each provider's own switch for its thinking mode (sent to turn it off)
_THINKING_OFF: dict[str, dict[str, Any]] = {
    "api.deepseek.com": {"thinking": {"type": "disabled"}},
    "open.bigmodel.cn": {"thinking": {"type": "disabled"}},
    "api.moonshot.cn": {"thinking": {"type": "disabled"}},
    "api.moonshot.ai": {"thinking": {"type": "disabled"}},
    "dashscope.aliyuncs.com": {"enable_thinking": False},
    "dashscope-intl.aliyuncs.com": {"enable_thinking": False},
    "api.siliconflow.cn": {"enable_thinking": False},
    "api.siliconflow.com": {"enable_thinking": False},
}
_FORMAT_REFUSED = re.compile(r"response_format|json_schema|json_object|unavailable|"
                             r"must be 'json_schema'|moonshot flavored|structured output",
                             re.I)
_MODERATED = re.compile(r"data_inspection_failed|content_filter|inappropriate content|"
                        r"sensitive|contentfilter|\b1301\b", re.I)
_RETRY_STATUS = {408, 409, 429}
_REASK = ("Your previous reply broke the output contract: {error}. Reply again with only "
          "the JSON object that matches the schema (JSON only, no prose, no code fence).")


def thinking_off(base_url: str | None) -> dict[str, Any]:
    """The request fields that switch a known provider's thinking off (empty if unknown)."""
    return dict(_THINKING_OFF.get(urlsplit(base_url or "").hostname or "", {}))


@dataclass(frozen=True)
class Failure:
    """Why an ask gave no valid result (a ``JudgeResult`` reason code and its words)."""

    code: FailureCode
    reason: str


@dataclass(frozen=True)
class Asked(Generic[T]):
    """The outcome of one ask: a valid value or a failure, the calls made, their time."""

    value: T | Failure
    calls: int
    latency_ms: float


class _Retry(Exception):
    def __init__(self, code: FailureCode, reason: str, wait: float | None) -> None:
        super().__init__(reason)
        self.code, self.reason, self.wait = code, reason, wait


class JudgeClient:
    """One per judge endpoint and process; every method runs on the engine's loop."""

    def __init__(self, cfg: JudgeConfig, api_key: str, cache: JudgeCache | None = None) -> None:
        self.cfg = cfg
        self.http = Endpoint(cfg.base_url, api_key)
        base = self.http.base  # base_url, else OPENAI_BASE_URL, else OpenAI's
        self.endpoint = f"{cfg.base_url or base}|{cfg.model}"
        self._sem = asyncio.Semaphore(cfg.concurrency)
        self._cache = cache
        self._temperature: float | None = cfg.temperature
        self._extra = {**thinking_off(base), **(cfg.extra_body or {})}
        self.auto = cfg.output_mode == "auto"
        host = urlsplit(base).hostname or ""
        known = None if not self.auto else (cache.mode(self.endpoint) if cache else None)
        self.mode: Mode = (cfg.output_mode if not self.auto  # type: ignore[assignment]
                           else known or _KNOWN_MODES.get(host, "json_schema"))
        self._settled = not self.auto or known is not None or host in _KNOWN_MODES
        self._probe = asyncio.Lock()
        self._ignored = 0  # 2xx replies in a row that ignored the schema (json_schema rung)

    async def aclose(self) -> None:
        await self.http.aclose()

    # -- one ask: calls, re-asks ------------------------------------------------------------

    async def ask(self, messages: list[dict[str, str]], schema: dict[str, Any], name: str,
                  parse: Callable[[Any], T]) -> Asked[T]:
        """Ask until the reply is valid (``parse`` raises :class:`ContractError` when not)."""
        calls, spent = 0, 0.0
        convo = messages
        error = ""
        for _ in range(self.cfg.max_contract_retries + 1):
            got, n, ms = await self._settled_call(convo, schema, name)
            calls, spent = calls + n, spent + ms
            if isinstance(got, Failure):
                return Asked(got, calls, round(spent, 3))
            try:
                value = parse(extract_json(got))
            except ContractError as exc:
                error = str(exc)
                self._schema_ignored()
                convo = [*messages, {"role": "assistant", "content": got[:8000]},
                         {"role": "user", "content": _REASK.format(error=error)}]
                continue
            self._ignored = 0
            return Asked(value, calls, round(spent, 3))
        tries = self.cfg.max_contract_retries + 1
        return Asked(Failure("contract_violation", f"the judge's reply broke the contract "
                             f"{tries} time(s): {_cut(error)}"), calls, round(spent, 3))

    def _schema_ignored(self) -> None:
        """A 2xx reply that is not valid: twice in a row on ``json_schema``, the endpoint
        does not enforce it (Xinference before 2.10, Ollama Cloud): step down."""
        if self.mode != "json_schema" or not self.auto:
            return
        self._ignored += 1
        if self._ignored >= 2:
            self._step_down("json_schema")

    def _step_down(self, seen: Mode) -> None:
        """Step down from ``seen``, the rung a failed call used (once, however many calls
        in flight saw it fail)."""
        if self.mode != seen:
            return
        i = LADDER.index(self.mode)
        if i + 1 < len(LADDER):
            self.mode = LADDER[i + 1]
            self._ignored = 0
            if self._cache is not None:
                self._cache.set_mode(self.endpoint, self.mode)

    async def _settled_call(self, messages: list[dict[str, str]], schema: dict[str, Any],
                            name: str) -> tuple[str | Failure, int, float]:
        """One call; while the endpoint's rung is unknown, the first call finds it and the
        others wait for it."""
        if self._settled:
            return await self._call(messages, schema, name)
        async with self._probe:
            if self._settled:
                return await self._call(messages, schema, name)
            got = await self._call(messages, schema, name)
            if not isinstance(got[0], Failure):
                self._settled = True
                if self._cache is not None:
                    self._cache.set_mode(self.endpoint, self.mode)
            return got

    # -- one call: retries, the ladder ------------------------------------------------------

    async def _call(self, messages: list[dict[str, str]], schema: dict[str, Any],
                    name: str) -> tuple[str | Failure, int, float]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.cfg.retry_budget_s
        calls, spent, attempt = 0, 0.0, 0
        while True:
            calls += 1
            try:
                async with self._sem:
                    started = time.perf_counter()
                    try:
                        async with asyncio.timeout(self.cfg.timeout_s):
                            content = await self._once(messages, schema, name)
                    finally:
                        spent += (time.perf_counter() - started) * 1000
            except TimeoutError:
                return (Failure("timeout", f"no judge reply within {self.cfg.timeout_s:g} s"),
                        calls, spent)
            except _StepDown:
                continue  # the same call on the next rung (or without temperature)
            except _Retry as exc:
                attempt += 1
                wait = exc.wait if exc.wait is not None else _backoff(attempt)
                if attempt >= self.cfg.max_attempts or loop.time() + wait > deadline:
                    return Failure(exc.code, f"{exc.reason} (gave up after {attempt} "
                                   f"attempt(s))"), calls, spent
                await asyncio.sleep(wait)
            except _Fail as exc:
                return exc.failure, calls, spent
            else:
                return content, calls, spent

    async def _once(self, messages: list[dict[str, str]], schema: dict[str, Any],
                    name: str) -> str:
        body: dict[str, Any] = {"model": self.cfg.model, "messages": messages,
                                "max_tokens": self.cfg.max_tokens}
        if self._temperature is not None:
            body["temperature"] = self._temperature
        mode = self.mode
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": name, "schema": schema, "strict": True}}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        if self._extra:
            body.update(self._extra)
        try:
            resp = await self.http.post("/chat/completions", body)
        except StatusError as exc:
            raise self._status_error(exc, mode) from None
        except Unreachable as exc:
            raise _Retry("http_error", f"cannot reach the judge: {exc}", None) from None
        except BadReply as exc:
            raise _Fail(Failure("http_error", str(exc))) from None
        choices = resp.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            raise _Fail(Failure("http_error", "the judge's reply has no choices"))
        finish = choice.get("finish_reason")
        if str(finish) in ("sensitive", "content_filter"):
            raise _Fail(Failure("moderated", f"the judge's provider moderated the request "
                                f"(finish_reason {finish})"))
        message = choice.get("message")
        return _content(message.get("content") if isinstance(message, dict) else None)

    def _status_error(self, exc: StatusError, mode: Mode) -> Exception:
        code = exc.status_code
        body = exc.body
        if code in (400, 403, 422, 451) and _MODERATED.search(body):
            return _Fail(Failure("moderated", f"the judge's provider refused the content "
                                 f"(HTTP {code}: {body[:200]})"))
        if code in (400, 422) and self.auto and _FORMAT_REFUSED.search(body) \
                and mode != "text":
            self._step_down(mode)
            return _StepDown()
        if code == 400 and "temperature" in body.lower() and self._temperature is not None:
            self._temperature = None  # a model that pins its temperature (Kimi K2.x)
            return _StepDown()
        if code == 429:
            return _Retry("rate_limited", f"HTTP 429 rate limited: {body[:200]}",
                          _retry_after(exc))
        if code >= 500 or code in _RETRY_STATUS:
            return _Retry("http_error", f"HTTP {code}: {body[:200]}", _retry_after(exc))
        hint = ""
        if code in (400, 422) and not self.auto and _FORMAT_REFUSED.search(body):
            hint = " (the endpoint refuses this output mode: set judge.output_mode: auto)"
        return _Fail(Failure("http_error", f"HTTP {code}: {body[:300]}{hint}"))


def _content(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts; else empty."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content
                       if isinstance(p, dict) and p.get("type", "text") == "text")
    return ""


class _StepDown(Exception):
    pass


class _Fail(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


def _cut(text: str, n: int = 300) -> str:
    return text if len(text) <= n else text[:n] + " …"


def _backoff(attempt: int) -> float:
    """1, 2, 4, 8, 16, 30, 30 … s with ×0.75–1 jitter (per-minute quotas clear in a minute)."""
    return min(30.0, 2.0 ** (attempt - 1)) * random.uniform(0.75, 1.0)


def _retry_after(response: Any) -> float | None:
    """Seconds to wait, from the ``headers`` of ``response`` (a reply or a
    :class:`StatusError`): ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date) or
    ``x-ratelimit-reset`` (seconds, an epoch time, or ``1m30s``); ``None`` if absent."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    after = headers.get("retry-after")
    if after:
        try:
            return max(0.0, float(after))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(after)
        except (TypeError, ValueError):  # neither seconds nor a date: back off as usual
            when = None
        if when is not None and when.tzinfo is not None:
            return max(0.0, when.timestamp() - time.time())
    reset = headers.get("x-ratelimit-reset") or headers.get("x-ratelimit-reset-requests")
    if reset:
        return _duration(reset)
    return None


_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(text: str) -> float | None:
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
        if not parts:
            return None
        return sum(float(n) * _UNIT[u] for n, u in parts)
    if value > 1e12:  # epoch milliseconds
        return max(0.0, value / 1000 - time.time())
    if value > 1e9:  # epoch seconds
        return max(0.0, value - time.time())
    return max(0.0, value)
