"""One asyncio loop per process, in a background thread, running items ahead.

pytest runs items one after another; an agent answers in hundreds of
milliseconds. The engine lets many conversations be in flight at once while
pytest still reports item by item, in order: upcoming items are *submitted*
(at most ``concurrency`` in flight), and ``CaseItem.runtest`` only waits for
its own future. Which items a process may submit ahead is decided by a
:class:`Prefetch` policy, so that under xdist no conversation is ever sent
twice and none is sent for an item this process will not run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

from .adapters import Adapter, make_adapter
from .pipeline import run_plan
from .plan import ItemPlan
from .taxonomy import Taxonomy

__all__ = ["Engine"]

T = TypeVar("T")


class Engine:
    """Runs :class:`ItemPlan` conversations concurrently on a private event loop."""

    def __init__(self, target: Any, rootdir: Path, taxonomy: Taxonomy, concurrency: int) -> None:
        self.target = target
        self.rootdir = rootdir
        self.taxonomy = taxonomy
        self.concurrency = max(1, concurrency)
        self._futures: dict[str, concurrent.futures.Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="agenteval-engine", daemon=True)
        self._thread.start()
        self._adapter: Adapter | None = None
        self._sem: asyncio.Semaphore | None = None
        self._closed = False
        try:
            self._call(self._start())
        except BaseException:
            self._stop_loop()
            raise

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _start(self) -> None:
        self._sem = asyncio.Semaphore(self.concurrency)
        self._adapter = make_adapter(self.target, self.rootdir, self.concurrency)

    async def _run(self, plan: ItemPlan) -> dict[str, Any]:
        assert self._sem is not None and self._adapter is not None
        async with self._sem:
            return await run_plan(plan, self._adapter, self.taxonomy)

    def submit(self, key: str, plan: ItemPlan) -> concurrent.futures.Future[dict[str, Any]]:
        """Start ``plan`` unless it was started already; never starts it twice."""
        with self._lock:
            fut = self._futures.get(key)
            if fut is None:
                if self._closed:
                    raise RuntimeError("the engine is closed")
                fut = asyncio.run_coroutine_threadsafe(self._run(plan), self._loop)
                self._futures[key] = fut
            return fut

    def submit_many(self, work: Iterable[tuple[str, ItemPlan]]) -> int:
        n = 0
        for key, plan in work:
            self.submit(key, plan)
            n += 1
        return n

    def result(self, key: str, plan: ItemPlan) -> dict[str, Any]:
        """Wait for ``plan``'s result (submitting it now if nobody did)."""
        return self.submit(key, plan).result()

    @property
    def submitted(self) -> int:
        return len(self._futures)

    def close(self) -> None:
        """Cancel what is queued or in flight, close the adapter, stop the loop."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            futures = list(self._futures.values())
        for fut in futures:
            fut.cancel()
        try:
            if self._adapter is not None:
                self._call(asyncio.wait_for(self._adapter.aclose(), timeout=10))
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        async def _drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(_drain(), self._loop).result(timeout=10)
            except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()
