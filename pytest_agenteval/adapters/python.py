"""The ``python`` adapter: a sync or async callable imported from the rootdir."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._traceback import user_traceback
from ..model.config import PythonTarget
from ..privacy import clip
from ._clock import agent_timeout
from .base import AgentError, AgentReply, TurnRequest, scalar_code

__all__ = ["ElasticPool", "PythonAdapter", "import_callable"]


def import_callable(spec: str, rootdir: Path) -> Callable[..., Any]:
    """Import ``package.module:function``, with the rootdir importable."""
    module_name, _, attr = spec.partition(":")
    root = str(rootdir)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"target.callable {spec!r}: cannot import {module_name!r}: {exc}") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"target.callable {spec!r}: {module_name} has no callable {attr!r}")
    return fn  # type: ignore[no-any-return]


class ElasticPool:
    """Threads for a sync callable: a call never waits for a thread.

    A fixed pool would let one call that hangs past its timeout keep its thread,
    so the next calls would queue behind it and time out too, with the time they
    queued counted as their latency. Here an idle thread takes the call, or a new
    one is started; a thread that stays idle for ``idle_s`` ends.
    """

    def __init__(self, name: str = "agenteval-py", idle_s: float = 30.0) -> None:
        self.name = name
        self.idle_s = idle_s
        self._work: queue.SimpleQueue[tuple[Callable[[], Any], Callable[..., None]] | None] = (
            queue.SimpleQueue())
        self._lock = threading.Lock()
        self._idle = 0
        self._closed = False

    def run(self, fn: Callable[[], Any], done: Callable[..., None]) -> None:
        """Call ``fn()`` in a thread; then ``done(result, None)`` or ``done(None, exc)``."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the pool is closed")
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._worker, name=self.name, daemon=True).start()
        self._work.put((fn, done))

    def _worker(self) -> None:
        while True:
            try:
                job = self._work.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle and self._work.empty():
                        self._idle -= 1
                        return
                continue
            if job is None:
                return
            fn, done = job
            try:
                result = fn()
            except BaseException as exc:  # the callable's SystemExit too: it ends a call
                done(None, exc)
            else:
                done(result, None)
            with self._lock:
                self._idle += 1

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._work.put(None)


class PythonAdapter:
    """Calls the function once per turn with one dict (SPEC 5)."""

    def __init__(self, target: PythonTarget, fn: Callable[..., Any], limits: int = 32) -> None:
        self.target = target
        self.fn = fn
        self._async = inspect.iscoroutinefunction(fn)
        self._pool = None if self._async else ElasticPool()

    async def send(self, request: TurnRequest) -> AgentReply:
        payload = request.names()
        try:
            async with agent_timeout(self.target.timeout_s):
                if self._async:
                    result = await self.fn(payload)
                else:
                    result = await self._in_thread(payload)
        except TimeoutError:
            raise AgentError("timeout", f"no reply within {self.target.timeout_s:g} s") from None
        except BaseException as exc:  # the user's code: keep its traceback in the record
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
                raise
            raised = exc.raised if isinstance(exc, _Escaped) else exc
            raise AgentError("connection", f"{type(raised).__name__}: {raised}",
                             traceback=user_traceback(raised)) from exc
        return self._normalise(result)

    async def _in_thread(self, payload: dict[str, Any]) -> Any:
        assert self._pool is not None
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def done(result: Any, exc: BaseException | None) -> None:
            try:
                loop.call_soon_threadsafe(_settle, future, result, exc)
            except RuntimeError:  # the run ended (loop closed) while the call still ran
                pass

        self._pool.run(lambda: self.fn(payload), done)
        return await future

    def _normalise(self, result: Any) -> AgentReply:
        if not isinstance(result, dict) or not isinstance(result.get("output"), str):
            raise AgentError("bad_body", "the callable must return a dict with a string 'output',"
                             f" got {type(result).__name__}: {clip(str(result), 200)}")
        cid = result.get("conversation_id")
        name = result.get("intent_name")
        return AgentReply(
            output=result["output"],
            intent_code=scalar_code(result.get("intent_code")),
            intent_name=None if name is None else str(name),
            conversation_id=None if cid is None else str(cid),
            raw=None,
        )

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.close()


class _Escaped(Exception):
    """Carries a callable's SystemExit (or other BaseException) across to the loop, where
    it may end a call but must not end the loop."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(str(raised))
        self.raised = raised


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.done():  # timed out and cancelled: the late result goes nowhere
        return
    if exc is not None:
        future.set_exception(exc if isinstance(exc, Exception) else _Escaped(exc))
    else:
        future.set_result(result)

