"""The agent timeout counts the time the event loop was awake, not a stalled process's pause."""

from __future__ import annotations

import asyncio
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
