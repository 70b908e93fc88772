"""The ``python`` adapter: a sync or async callable imported from the rootdir."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..model.config import PythonTarget
from .base import AgentError, AgentReply, TurnRequest, scalar_code

__all__ = ["PythonAdapter", "import_callable"]


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


class PythonAdapter:
    """Calls the function once per turn with one dict (SPEC 5)."""

    def __init__(self, target: PythonTarget, fn: Callable[..., Any], limits: int = 32) -> None:
        self.target = target
        self.fn = fn
        # a sync callable gets threads of its own, as many as conversations may be in
        # flight (asyncio's default pool has min(32, cpus + 4): it would queue them)
        self._pool: ThreadPoolExecutor | None = None
        if not inspect.iscoroutinefunction(fn):
            self._pool = ThreadPoolExecutor(max_workers=limits, thread_name_prefix="agenteval-py")

    async def send(self, request: TurnRequest) -> AgentReply:
        payload = request.names()
        try:
            async with asyncio.timeout(self.target.timeout_s):
                if inspect.iscoroutinefunction(self.fn):
                    result = await self.fn(payload)
                else:
                    loop = asyncio.get_running_loop()
                    result = await loop.run_in_executor(self._pool, self.fn, payload)
        except TimeoutError:
            raise AgentError("timeout", f"no reply within {self.target.timeout_s:g} s") from None
        except Exception as exc:
            raise AgentError("connection", f"{type(exc).__name__}: {exc}") from None
        return self._normalise(result)

    def _normalise(self, result: Any) -> AgentReply:
        if not isinstance(result, dict) or not isinstance(result.get("output"), str):
            raise AgentError("bad_body", "the callable must return a dict with a string 'output',"
                             f" got {type(result).__name__}: {str(result)[:200]}")
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
            self._pool.shutdown(wait=False, cancel_futures=True)
