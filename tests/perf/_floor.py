"""The floor: the plugin's very calls, sent by a bare asyncio + aiohttp client.

Run by ``bench.py`` as ``python _floor.py SPEC.pickle`` (a process of its own, so that
its wall, CPU and RSS are measured exactly as the plugin's are, start-up included).
The spec holds the agent's URL, the judge's base URL (or ``None``), the concurrency
and, per item, its turns in order: ``(agent body, judge body or None)`` as the
plugin sent them. Per item, within one slot of ``concurrency`` (as the engine holds
one slot per item): each turn's agent call, then that turn's judge call through
``openai.AsyncOpenAI`` (no retries), as the plugin does.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import sys
from typing import Any

#: the chat-completion parameters the SDK takes by name; any other key of a recorded body
#: goes in ``extra_body``
SDK_KEYS = frozenset({"model", "messages", "response_format", "temperature", "max_tokens",
                      "seed", "top_p"})
_JSON = {"Content-Type": "application/json"}


def _judge_client(base_url: str | None) -> Any:
    if base_url is None:
        return None
    import openai

    return openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)


async def _judge(client: Any, body: dict[str, Any]) -> None:
    named = {k: v for k, v in body.items() if k in SDK_KEYS}
    extra = {k: v for k, v in body.items() if k not in SDK_KEYS}
    await client.chat.completions.create(**named, extra_body=extra or None)


async def run(spec: dict[str, Any]) -> None:
    import aiohttp

    url, sem = spec["url"], asyncio.Semaphore(spec["concurrency"])
    client = _judge_client(spec["judge_url"])
    connector = aiohttp.TCPConnector(limit=spec["concurrency"])
    async with aiohttp.ClientSession(connector=connector) as session:
        async def item(turns: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
            async with sem:
                for agent_body, judge_body in turns:
                    data = json.dumps(agent_body, ensure_ascii=False).encode("utf-8")
                    async with session.post(url, data=data, headers=_JSON) as reply:
                        await reply.read()
                    if judge_body is not None:
                        await _judge(client, judge_body)

        await asyncio.gather(*(item(turns) for turns in spec["items"]))
    if client is not None:
        await client.close()


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        asyncio.run(run(pickle.load(f)))
