"""An agent timeout that measures the agent, not a paused interpreter.

A plain ``asyncio.timeout(2)`` counts wall-clock time. When the process stalls -
a full garbage collection of a large heap, a CPU starved by other processes,
the main thread holding the GIL in a long C call - the event loop cannot run,
and every conversation in flight times out when it wakes, although the agent's
answers may be sitting in the sockets. 100,000 cases against a healthy local
agent gave 50 such false timeouts, with "latencies" of 2.5-5.8 s.

:func:`agent_timeout` excludes the loop's stalls: a tick every 50 ms notes
every gap longer than 150 ms as a stall, and a deadline that falls due checks
first how long the loop was stalled since the call began, and moves itself that
much later. An agent that does not answer still times out after ``seconds`` of
time in which the loop was awake to see its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from types import TracebackType

__all__ = ["LoopClock", "agent_timeout", "clock_of"]

#: how often the loop notes that it is awake, and the lateness that counts as a stall
TICK_S = 0.05
STALL_S = 0.1


class LoopClock:
    """How long one event loop has been stalled, in total."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.last = loop.time()
        self.stalled = 0.0
        loop.call_later(TICK_S, self._tick)

    def _tick(self) -> None:
        self.observe()
        self.loop.call_later(TICK_S, self._tick)

    def observe(self) -> float:
        """The total stall so far, the one in progress included."""
        now = self.loop.time()
        gap = now - self.last
        if gap > TICK_S + STALL_S:
            self.stalled += gap - TICK_S
        self.last = now
        return self.stalled


_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopClock] = (
    weakref.WeakKeyDictionary())


def clock_of(loop: asyncio.AbstractEventLoop) -> LoopClock:
    clock = _CLOCKS.get(loop)
    if clock is None:
        clock = _CLOCKS[loop] = LoopClock(loop)
    return clock


class _Deadline:
    """When one agent call times out: a deadline that moves later by the loop's stalls.

    A class and not a closure: a closure that schedules itself again refers to itself,
    a reference cycle that held each call's task, timeout and whole item result until a
    full garbage collection found it (two fifths of a 10,000-case run's collector time). The
    bound method the timer holds is let go when the timer is cancelled."""

    __slots__ = ("_clock", "_end", "_loop", "_stalled", "_timeout", "handle")

    def __init__(self, loop: asyncio.AbstractEventLoop, clock: LoopClock, seconds: float,
                 timeout: asyncio.Timeout) -> None:
        self._loop, self._clock, self._timeout = loop, clock, timeout
        self._end = loop.time() + seconds
        self._stalled = clock.observe()
        self.handle = loop.call_at(self._end, self._due)

    def _due(self) -> None:
        deadline = self._end + (self._clock.observe() - self._stalled)
        now = self._loop.time()
        if now < deadline:  # the loop was stalled meanwhile: wait that much more
            self.handle = self._loop.call_at(deadline, self._due)
        else:
            self._timeout.reschedule(now)  # expires now


class _AgentTimeout(contextlib.AbstractAsyncContextManager[None]):
    """:func:`agent_timeout`'s context: an ``asyncio.Timeout`` whose deadline a
    :class:`_Deadline` moves (a class, not a generator-based context manager: a call
    costs a third as much, and every agent call has one)."""

    __slots__ = ("_deadline", "_seconds", "_timeout")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    async def __aenter__(self) -> None:
        loop = asyncio.get_running_loop()
        self._timeout = timeout = asyncio.timeout(None)
        await timeout.__aenter__()
        self._deadline = _Deadline(loop, clock_of(loop), self._seconds, timeout)

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        self._deadline.handle.cancel()
        await self._timeout.__aexit__(kind, exc, tb)  # an expiry raises TimeoutError here
        return None


def agent_timeout(seconds: float) -> contextlib.AbstractAsyncContextManager[None]:
    """Like ``asyncio.timeout(seconds)`` (``TimeoutError`` on expiry), with the event loop's
    stalls excluded from the time counted."""
    return _AgentTimeout(seconds)
