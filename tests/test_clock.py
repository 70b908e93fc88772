"""The agent timeout counts the time the event loop was awake, not a stalled process's pause."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest

from pytest_agenteval.adapters._clock import agent_timeout

Timeout = Callable[[float], AbstractAsyncContextManager[None]]


async def _answer_during_a_stall(timeout: Timeout, answer_after_s: float | None) -> str:
    """The loop stalls for 1 s from 0.05 s on (a full garbage collection, say); the agent's
    answer arrives at ``answer_after_s``, during the stall (or never)."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()
    loop.call_later(0.05, time.sleep, 1.0)  # blocks the loop itself
    if answer_after_s is not None:
        timer = threading.Timer(answer_after_s,
                                lambda: loop.call_soon_threadsafe(answer.set_result, "ok"))
        timer.start()
    async with timeout(0.5):
        return await answer


def test_a_stall_of_the_loop_is_no_timeout_of_the_agent() -> None:
    assert asyncio.run(_answer_during_a_stall(agent_timeout, 0.3)) == "ok"


def test_a_wall_clock_timeout_would_have_called_it_one() -> None:
    """The same stall under ``asyncio.timeout``: the false timeout the clock prevents."""
    with pytest.raises(TimeoutError):
        asyncio.run(_answer_during_a_stall(asyncio.timeout, 0.3))


def test_an_agent_that_never_answers_still_times_out_after_the_awake_time() -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        asyncio.run(_answer_during_a_stall(agent_timeout, None))
    elapsed = time.monotonic() - started
    # 0.5 s awake + the 1 s stall; never before the stall plus the timeout
    assert 1.4 <= elapsed < 10, elapsed


def test_without_a_stall_it_is_a_plain_timeout() -> None:
    async def never() -> None:
        async with agent_timeout(0.2):
            await asyncio.sleep(5)

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        asyncio.run(never())
    assert 0.2 <= time.monotonic() - started < 5


def test_a_call_leaves_no_reference_cycle() -> None:
    """A call's task, timeout and result are freed by their reference counts once it is
    done, whether it answered or timed out: a cycle kept each item's whole result alive
    until a full garbage collection found it (two fifths of the collector's time in a
    10,000-case run, and memory that grew with the run)."""
    async def call(seconds: float, wait_s: float) -> list[object]:
        async with agent_timeout(seconds):
            await asyncio.sleep(wait_s)
        return [object()]

    async def timed_out() -> None:
        try:
            await call(0.001, 1.0)
        except TimeoutError:
            pass

    async def garbage_of_calls() -> int:
        await asyncio.create_task(call(5, 0))  # the loop's clock and first-time work
        await asyncio.create_task(timed_out())
        gc.collect()
        gc.disable()
        try:
            for _ in range(20):
                await asyncio.create_task(call(5, 0))
                await asyncio.create_task(timed_out())
            return gc.collect()
        finally:
            gc.enable()

    assert asyncio.run(garbage_of_calls()) == 0
