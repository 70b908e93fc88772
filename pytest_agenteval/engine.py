"""One asyncio loop per process, running items ahead, driven by pytest's own thread.

pytest runs items one after another; an agent answers in hundreds of
milliseconds. The engine lets many conversations be in flight at once while
pytest still reports item by item, in order: upcoming items are *submitted*
(at most ``concurrency`` in flight), and ``CaseItem.runtest`` only waits for
its own result. Which items a process may submit ahead is decided by a
:class:`~.scheduling.Prefetch` policy, so that under xdist no conversation is
ever sent twice and none is sent for an item this process will not run.

The loop runs on the thread that waits for a result: pytest's own, inside
the item's ``runtest``, until that item's conversation is done (at least one
pass over whatever is ready, when it is done already). Every conversation in
flight goes on meanwhile; between two case items the loop rests while pytest
reports. A loop in a thread of its own cost a fifth more CPU per case: every
result, submission and system call handed the interpreter from one thread to
the other and back, and each result was made on one core and read on the
other. When pytest's thread stays away longer than :data:`KEEP_S` while
conversations are in flight (a Python test between case files, a slow
terminal, a test of the engine that only submits), a keeper thread drives the
loop until pytest's thread wants it back; one thread at a time ever runs it.

Submitted items start in pytest's order, a long conversation earlier by its
length: an item of ``k`` turns starts as if it came ``(k - 1) * ahead_limit``
items sooner. Scenarios listed after the cases would otherwise start last and
leave the run's end to a few long conversations, most slots idle (measured,
200 five-turn scenarios after 1,000 cases, with a judge: 9% of the time from
the first request to the last reply).

Every wait is bounded: an item that has not finished its :class:`Budget`
after it started (its agent, judge and simulator calls are bounded by their own
timeouts, so only a rule or an adapter that blocks the loop gets here) becomes
an ``error`` result instead of a hang, once whatever blocks the loop lets go
of it; so does an item of an engine whose loop died (an exception that ended
a keeper's pass).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import heapq
import threading
import time
from asyncio import events
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from .adapters.base import Adapter
from .model.results import AgentError, ItemResult
from .pipeline import run_plan, start_failure
from .plan import ItemPlan
from .taxonomy import Taxonomy

if TYPE_CHECKING:
    from ._workers import WorkerLink
    from .judge import Judge
    from .simulator import Simulator

__all__ = ["Budget", "Engine"]

T = TypeVar("T")
#: how long the loop may go undriven while conversations are in flight before the keeper
#: thread drives it (and how often the keeper looks)
KEEP_S = 0.02
#: how often a waiting ``result()`` looks at its item's budget
_POLL_S = 0.1


@dataclass(frozen=True)
class Budget:
    """How long an item may take, in seconds: each turn (the agent's call and the judge's
    on it), each simulator call, the task's one judge call."""

    turn_s: float = 60.0
    simulator_call_s: float = 0.0
    task_call_s: float = 0.0

    def of(self, plan: ItemPlan) -> float:
        """``plan``'s budget: its scripted turns, or a simulated plan's ``max_turns`` each
        with its simulator call; and its task's judge call."""
        if plan.simulate is not None:
            turns = plan.simulate.max_turns * (self.turn_s + self.simulator_call_s)
        else:
            turns = len(plan.turns) * self.turn_s
        return turns + (self.task_call_s if plan.task is not None else 0.0)


class StartError(Exception):
    """What could not be started (the target adapter, the judge, the simulated user), and why."""

    def __init__(self, what: str, cause: Exception) -> None:
        super().__init__(f"could not start {what}: {type(cause).__name__}: {cause}")
        self.what = what


def _started(what: str, make: Callable[[], T]) -> T:
    try:
        return make()
    except Exception as exc:
        raise StartError(what, exc) from exc


class Engine:
    """Runs :class:`ItemPlan` conversations concurrently on a private event loop."""

    def __init__(self, make_adapter: Callable[[], Adapter], taxonomy: Taxonomy, concurrency: int,
                 budget: Budget | None = None, link: WorkerLink | None = None,
                 make_judge: Callable[[], Judge | None] | None = None,
                 make_simulator: Callable[[], Simulator | None] | None = None) -> None:
        self.taxonomy = taxonomy
        #: an xdist worker's journal of sent items (see :mod:`._workers`)
        self._link = link
        self.concurrency = max(1, concurrency)
        self.budget = budget or Budget()
        self._futures: dict[str, concurrent.futures.Future[ItemResult]] = {}
        self._started: dict[str, float] = {}
        #: submitted and not started yet: nothing exists of them on the loop (no task, no
        #: coroutine) until the look-ahead has room (guarded by ``_lock``)
        self._pending: dict[str, tuple[ItemPlan, int]] = {}
        #: their ``(place, order submitted, key)``, lowest place first (some started): the
        #: place is the order submitted, a long conversation's moved earlier (see _place)
        self._queue: list[tuple[int, int, str]] = []
        self._submitted = 0
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._death: BaseException | None = None
        #: who runs the loop now: a thread's ident, or ``None`` (guarded by ``_drive``)
        self._driver: int | None = None
        self._drive = threading.Condition()
        #: when the loop was last let go of, and whether its keeper was asked to stop
        self._idle_since = time.monotonic()
        self._stop_asked = False
        #: conversations started on the loop and not finished (changed by the loop's driver)
        self._in_flight = 0
        #: another loop that runs in the driving thread, set aside while ours runs (_take)
        self._aside: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._keep, name="agenteval-engine",
                                        daemon=True)
        self._adapter: Adapter | None = None
        self._judge: Judge | None = None
        self._simulator: Simulator | None = None
        #: a judge is configured: an item that is not answered says so in its L3
        self._judged = make_judge is not None
        self._sem: asyncio.Semaphore | None = None
        #: the look-ahead: an item starts when it is at most this many places ahead of
        #: the results handed out (a long conversation's place is earlier: _place), so
        #: that a pytest slower than the agent makes the engine wait, not results pile up
        self.ahead_limit = 2 * self.concurrency + 16
        #: conversations started whose results are not handed out yet (running, or done
        #: and waiting for pytest) are never more than this many, long ones started early
        #: included
        self.held_limit = 4 * self.ahead_limit
        #: conversations started (on the loop) and results handed out (by pytest's thread):
        #: their difference is what the look-ahead holds
        self._admitted = 0
        self._handed = 0
        self._closed = False
        #: nothing more is sent (Ctrl-C, the controller's stop): set by halt() and close()
        self._halted = False
        try:
            self._call(self._start(make_adapter, make_judge, make_simulator), timeout=120)
        except BaseException:
            self._stop_loop()
            raise
        self._thread.start()

    # -- who drives the loop -----------------------------------------------------------------

    def _take(self) -> bool:
        """Make this thread the loop's driver (the keeper, if it drives, is stopped first);
        ``False`` when it already was (a nested call: the outer one gives it back).

        A loop of someone else's that runs in this thread — pytest started from a
        notebook's cell, or from a test that drives a browser with Playwright's sync API —
        is set aside meanwhile, as a blocking call inside its callback would: it waits, and
        ours runs (asyncio allows one running loop a thread)."""
        me = threading.get_ident()
        with self._drive:
            if self._driver == me:
                return False
            while self._driver is not None:
                if not self._stop_asked:
                    self._stop_asked = True
                    self._loop.call_soon_threadsafe(self._loop.stop)
                self._drive.wait()
            self._driver = me
        self._aside = events._get_running_loop()
        if self._aside is not None:
            events._set_running_loop(None)
        return True

    def _give(self) -> None:
        if self._aside is not None:
            events._set_running_loop(self._aside)
            self._aside = None
        with self._drive:
            self._driver = None
            self._idle_since = time.monotonic()
            self._drive.notify_all()

    def _keep(self) -> None:
        """The keeper: drives the loop while conversations are in flight and no other thread
        has for :data:`KEEP_S`, until another thread takes it (or the engine closes)."""
        me = threading.get_ident()
        while True:
            time.sleep(KEEP_S)
            with self._drive:
                if self._closed and self._driver is None:
                    return
                if (self._driver is not None or not self._in_flight
                        or time.monotonic() - self._idle_since < KEEP_S):
                    continue
                self._driver, self._stop_asked = me, False
            try:
                self._loop.run_forever()
            except BaseException as exc:  # SystemExit from an adapter: remembered, told per item
                self._death = exc
            finally:
                with self._drive:
                    self._driver, self._stop_asked = None, False
                    self._idle_since = time.monotonic()
                    self._drive.notify_all()
            if self._death is not None:
                return

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop from this thread, driving it meanwhile."""
        taken = self._take()
        try:
            return self._until(asyncio.wait_for(coro, timeout))
        finally:
            if taken:
                self._give()

    def _until(self, aw: Awaitable[T]) -> T:
        """Drive the loop until ``aw`` is done (its driver's part): a stop that someone else
        asked for (a keeper's hand-over, an item's wake-up) ends one pass, not the wait."""
        loop = self._loop
        fut = asyncio.ensure_future(aw, loop=loop)
        fut.add_done_callback(lambda _: loop.stop())
        while not fut.done():
            loop.run_forever()
        return fut.result()

    async def _start(self, make_adapter: Callable[[], Adapter],
                     make_judge: Callable[[], Judge | None] | None,
                     make_simulator: Callable[[], Simulator | None] | None) -> None:
        self._sem = asyncio.Semaphore(self.concurrency)
        self._adapter = _started("the target adapter", make_adapter)
        self._judge = _started("the judge", make_judge) if make_judge is not None else None
        self._simulator = (_started("the simulated user", make_simulator)
                           if make_simulator is not None else None)

    def _place(self, plan: ItemPlan) -> tuple[int, int]:
        """Where a new submission queues, and its order: its place is its order,
        ``ahead_limit`` places earlier for each turn after its first (under ``_lock``)."""
        order = self._submitted
        self._submitted += 1
        return order - (plan.weight - 1) * self.ahead_limit, order

    def _fill(self, wanted: str | None = None) -> None:
        """On the loop: start submitted items by place while the look-ahead has room;
        ``wanted``, the item pytest waits for, first and whatever the room."""
        if wanted is not None:
            self._begin(wanted)
        while self._admitted - self._handed < self.held_limit:
            with self._lock:
                queue = self._queue
                while queue and queue[0][2] not in self._pending:
                    heapq.heappop(queue)  # started out of turn
                if not queue or queue[0][0] >= self._handed + self.ahead_limit:
                    return
                key = heapq.heappop(queue)[2]
            self._begin(key)

    def _begin(self, key: str) -> None:
        with self._lock:
            if self._closed:  # closing: a task made now might never run (nor its coroutine)
                return
            work = self._pending.pop(key, None)
            fut = self._futures.get(key)
        if work is None or fut is None or fut.done():  # started, or cancelled meanwhile
            return
        self._admitted += 1
        self._in_flight += 1
        task = self._loop.create_task(self._run(key, *work))
        task.add_done_callback(self._ended)
        _chain(task, fut, self._loop)

    def _ended(self, task: asyncio.Task[ItemResult]) -> None:
        self._in_flight -= 1

    async def _run(self, key: str, plan: ItemPlan, trial: int) -> ItemResult:
        assert self._sem is not None and self._adapter is not None
        async with self._sem:
            if self._halted:  # halted or closing while this item queued: send nothing more
                raise asyncio.CancelledError
            self._started[key] = time.monotonic()
            if self._link is not None:
                refusal = self._link.refusal(key)
                if refusal is not None:  # a crashed worker's leftover it had (or may have) sent
                    return start_failure(plan, judged=self._judged, error=AgentError(
                        kind="not_resent", detail=refusal))
                self._link.sending(key)
            # an adapter's own exceptions are agent errors (run_plan); anything else raised
            # here is a fault of the plugin's, not the agent's: the item shows it
            return await run_plan(plan, self._adapter, self.taxonomy, self._judge, trial,
                                  self._simulator)

    def submit(self, key: str, plan: ItemPlan,
               trial: int = 0) -> concurrent.futures.Future[ItemResult]:
        """Submit ``plan`` unless it was submitted and its result not handed out yet; it
        starts when the look-ahead has room (at once when pytest waits for it)."""
        taken = self._take()
        try:
            fut, new = self._submit(key, plan, trial)
            if new:
                self._fill()
            return fut
        finally:
            if taken:
                self._give()

    def _submit(self, key: str, plan: ItemPlan,
                trial: int) -> tuple[concurrent.futures.Future[ItemResult], bool]:
        with self._lock:
            fut = self._futures.get(key)
            if fut is not None:
                return fut, False
            if self._closed:
                raise RuntimeError("the engine is closed")
            fut = self._futures[key] = concurrent.futures.Future()
            if self._death is not None:
                fut.set_result(self._stopped(plan))
                return fut, False
            self._pending[key] = (plan, trial)
            heapq.heappush(self._queue, (*self._place(plan), key))
            return fut, True

    def submit_many(self, work: Iterable[tuple[str, ItemPlan, int]]) -> int:
        n = new = 0
        taken = self._take()
        try:
            for key, plan, trial in work:
                new += self._submit(key, plan, trial)[1]
                n += 1
            if new:
                self._fill()
            return n
        finally:
            if taken:
                self._give()

    def result(self, key: str, plan: ItemPlan, trial: int = 0) -> ItemResult:
        """Wait for ``plan``'s result (submitting it now if nobody did), boundedly, driving the
        loop meanwhile: every conversation in flight goes on while this one is awaited.

        The result is handed out once, and the engine lets go of it (kept until the end,
        the results of 10,000 cases were 80 MB). Asked again — a rerun — the item's
        conversation is held again, as a rerun means."""
        taken = self._take()
        try:
            return self._wait(key, plan, trial)
        except KeyboardInterrupt:  # Ctrl-C while pytest waits here: send nothing more now,
            self.halt()            # not once pytest has unwound to the end of the session
            raise
        finally:
            with self._lock:
                fut = self._futures.pop(key, None)
                self._started.pop(key, None)
            try:
                if fut is not None:
                    self._handed += 1
                    if self._pending and self._death is None:
                        self._fill()  # the room this result made: started at the next pass
            finally:
                if taken:
                    self._give()

    def _wait(self, key: str, plan: ItemPlan, trial: int) -> ItemResult:
        fut, new = self._submit(key, plan, trial)
        if self._death is not None and not fut.done():
            fut.cancel()
            return self._stopped(plan)
        if key in self._pending:  # pytest waits for it: it starts whatever the room
            self._fill(key)
        elif new:
            self._fill()
        loop = self._loop
        try:
            if fut.done():  # done ahead: one pass over what is ready, for the others
                self._pass()
                return fut.result()
            # the task's end sets it, on the loop; a cancel from outside the loop stops nothing
            fut.add_done_callback(lambda _: loop.stop() if loop.is_running() else None)
            budget = self.budget.of(plan)
            while not fut.done():
                wake = loop.call_later(_POLL_S, loop.stop)
                try:
                    loop.run_forever()
                finally:
                    wake.cancel()
                started = self._started.get(key)
                if not fut.done() and started is not None and \
                        time.monotonic() - started > budget:
                    return self._gave_up(plan, fut, self._judged,
                                         f"no result {budget:g} s after the item started; a "
                                         "rule, the judge or the adapter blocks the event loop")
            return fut.result()
        except (KeyboardInterrupt, concurrent.futures.CancelledError):
            raise
        except BaseException as exc:  # SystemExit out of the loop: it is no longer trusted
            if fut.done() and not fut.cancelled() and fut.exception() is exc:
                raise  # the item's own fault (not the loop's): pytest shows it
            self._death = exc
            fut.cancel()
            return self._stopped(plan)

    def step(self) -> None:
        """One pass of the loop over what is ready: submitted items start, their first
        requests go out (the keeper goes on with them if nobody else drives the loop)."""
        taken = self._take()
        try:
            if self._death is None:
                self._pass()
        finally:
            if taken:
                self._give()

    def _pass(self) -> None:
        self._loop.call_soon(self._loop.stop)
        self._loop.run_forever()

    def _stopped(self, plan: ItemPlan) -> ItemResult:
        why = f": {type(self._death).__name__}: {self._death}" if self._death else ""
        return start_failure(plan, AgentError(
            kind="connection", detail=f"the engine's event loop stopped before this item "
            f"finished{why}"), self._judged)

    @staticmethod
    def _gave_up(plan: ItemPlan, fut: concurrent.futures.Future[ItemResult], judged: bool,
                 why: str) -> ItemResult:
        fut.cancel()
        return start_failure(plan, AgentError(kind="timeout", detail=why), judged)

    def halt(self) -> None:
        """Send nothing more (thread-safe; what is in flight goes on until :meth:`close`,
        which still cancels it and closes the adapter)."""
        self._halted = True

    def close(self) -> None:
        """Cancel what is queued or in flight, close the adapter, stop the loop."""
        with self._lock:
            if self._closed:
                return
            self._closed = self._halted = True
            futures = list(self._futures.values())
        for fut in futures:
            fut.cancel()
        try:
            if self._death is None:
                if self._adapter is not None:
                    self._call(self._adapter.aclose(), timeout=10)
                for service in (self._judge, self._simulator):
                    if service is not None:
                        self._call(service.aclose(), timeout=10)
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        async def _drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=10)

        with self._drive:
            self._closed = True  # the keeper ends once it lets go of the loop
        taken = self._take()
        try:
            if self._death is None:
                self._until(_drain())
        finally:
            if taken:
                self._give()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        with self._lock:
            self._pending.clear()  # never started: nothing of them exists on the loop
            self._queue.clear()
        if not self._loop.is_running():
            import inspect

            for task in asyncio.all_tasks(self._loop):  # the loop died before stepping these
                coro = task.get_coro()
                if inspect.iscoroutine(coro) and \
                        inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
                    coro.close()  # nothing to await or warn about
            self._loop.close()


def _chain(task: asyncio.Task[ItemResult], fut: concurrent.futures.Future[ItemResult],
           loop: asyncio.AbstractEventLoop) -> None:
    """``fut`` (pytest's side) follows ``task`` (the loop's), and cancelling ``fut`` cancels
    ``task``: what ``asyncio.run_coroutine_threadsafe`` does, for a task started later."""

    def done(t: asyncio.Task[ItemResult]) -> None:
        if t.cancelled():
            fut.cancel()
        if not fut.set_running_or_notify_cancel():
            return
        exc = t.exception()
        if exc is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(t.result())

    def cancelled(f: concurrent.futures.Future[ItemResult]) -> None:
        if f.cancelled():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop is closed: the task is gone with it
                pass

    task.add_done_callback(done)
    fut.add_done_callback(cancelled)
