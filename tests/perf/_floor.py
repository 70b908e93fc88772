"""The floor: the plugin's very calls, sent by a bare asyncio + aiohttp client.

Run by ``bench.py`` as ``python _floor.py SPEC.pickle`` (a process of its own, so that
its wall, CPU and RSS are measured exactly as the plugin's are, start-up included).
The spec holds the agent's URL, the judge's base URL (or ``None``), the concurrency
and, per item, its turns in order: ``(agent body, judge body or None)`` as the
plugin sent them. Per item, within one slot of ``concurrency`` (as the engine holds
one slot per item): each turn's agent call, then that turn's judge call, the very
body POSTed to ``/chat/completions`` through aiohttp, as the plugin does.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import sys
from typing import Any

_JSON = {"Content-Type": "application/json"}


async def run(spec: dict[str, Any]) -> None:
    import aiohttp

    url, sem = spec["url"], asyncio.Semaphore(spec["concurrency"])
    judge_url = f"{spec['judge_url']}/chat/completions" if spec["judge_url"] else None
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def post(to: str, body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            async with session.post(to, data=data, headers=_JSON) as reply:
                json.loads(await reply.read())

        async def item(turns: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
            async with sem:
                for agent_body, judge_body in turns:
                    await post(url, agent_body)
                    if judge_body is not None and judge_url is not None:
                        await post(judge_url, judge_body)

        await asyncio.gather(*(item(turns) for turns in spec["items"]))


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        asyncio.run(run(pickle.load(f)))
