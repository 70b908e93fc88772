"""Benchmark: execute-ahead throughput against a local agent with fixed latency.

Not part of the test run (the name does not start with ``test_``). Run::

    python tests/bench_concurrency.py [--cases 1000] [--latency-ms 100] [--concurrency 64]
                                      [--workers 4] [--judge-latency-ms 0]

It writes N single-turn cases into a scratch project, starts a local HTTP agent
that answers every request after exactly ``latency`` (a thread per connection,
so it never queues), and runs ``pytest cases/`` in a subprocess without and
with ``-n 4`` (``--workers``; 0 leaves that row out). For each run it prints:

* ``wall``   — the whole pytest process, start-up included;
* ``window`` — first request received → last reply sent, as the agent saw it;
* ``bound``  — N · latency / concurrency, the best any client could do;
* ``ratio``  — window / bound (target ≤ 1.10), and the fixed start-up
  (wall − window: interpreter, plugin and worker start, collection, report).

The first row, ``bare client``, sends the same calls from a plain asyncio +
aiohttp loop without pytest: the floor that this test agent allows.

**Judge mode** (``--judge-latency-ms`` > 0, e.g. 300) measures the LLM judge
instead: it also starts a local OpenAI-compatible judge
(``judge_server.JudgeServer``) that answers every chat completion after
exactly the judge latency, gives the scratch project a ``judge:`` block
(``output_mode: json_schema``, no cache, ``concurrency`` = the agent's), and
prints only judge rows, each followed by ``judge calls: N (expected N)``
(exactly one call per judged turn, else the run fails):

* ``bare client + judge`` — the floor: per case, within a semaphore of
  ``concurrency``, the agent call as above then one judge call through
  aiohttp (as the plugin's own client) that sends the very request the plugin
  sent for a case (recorded in a first plugin run, printed as the warm-up row),
  so the judge server does the same work for both;
* ``no xdist`` and ``-n W`` — the plugin, each turn judged as soon as it is answered.

There ``window`` runs from the first agent request to the last judge reply,
``ratio`` is window / the floor's window (target ≤ 1.10), and the heading shows
the bound N · (latency + judge latency) / concurrency.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_server import JudgeServer

from agents import FakeAgent

JUDGE_MODEL = "bench-judge"
JUDGE_KEY_ENV = "BENCH_JUDGE_KEY"


class TimedAgent(FakeAgent):
    def __init__(self, latency_s: float) -> None:
        super().__init__(latency_s=latency_s)
        self.first: float | None = None
        self.last: float | None = None

    def enter(self) -> None:
        super().enter()
        now = time.perf_counter()
        if self.first is None:
            self.first = now

    def leave(self) -> None:
        super().leave()
        self.last = time.perf_counter()

    def reset(self) -> None:
        self.first = self.last = None
        self.requests.clear()
        self.max_in_flight = 0


def reset_judge(judge: JudgeServer) -> None:
    with judge.lock:
        judge.requests.clear()
        judge.first = judge.last = None


def judge_block(base_url: str, concurrency: int) -> str:
    return (f"judge: {{model: {JUDGE_MODEL}, base_url: '{base_url}', api_key_env: "
            f"{JUDGE_KEY_ENV}, concurrency: {concurrency}, output_mode: json_schema, "
            "cache: null, timeout_s: 30}\n")


def write_project(root: Path, url: str, cases: int, concurrency: int,
                  judge_url: str | None = None) -> None:
    (root / "cases").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n")
    config = f"target: {{adapter: http, url: '{url}', concurrency: {concurrency}, timeout_s: 30}}\n"
    if judge_url is not None:
        config += judge_block(judge_url, concurrency)
    (root / "agenteval.yaml").write_text(config)
    per_file = 100
    for f in range(0, cases, per_file):
        rows = ["cases:"]
        for i in range(f, min(cases, f + per_file)):
            rows.append(f"  - {{id: BENCH-{i:05d}, request: {{input: 你好{i}}}, "
                        "rules: [{type: keyword_match, params: {any: [好的]}}]}")
        (root / "cases" / f"bench_{f // per_file:03d}.yaml").write_text("\n".join(rows) + "\n",
                                                                         encoding="utf-8")


def window(agent: TimedAgent, judge: JudgeServer | None) -> float:
    """First agent request → last reply: the agent's, or the judge's when there is one."""
    last = agent.last if judge is None else judge.last
    assert agent.first is not None and last is not None
    return last - agent.first


def run(root: Path, agent: TimedAgent, extra: list[str], cases: int,
        judge: JudgeServer | None = None) -> dict[str, float]:
    agent.reset()
    env = dict(os.environ)
    if judge is not None:
        reset_judge(judge)
        env[JUDGE_KEY_ENV] = "bench"
        extra = [*extra, "--agenteval-no-cache"]
    t0 = time.perf_counter()
    # pytest-benchmark and hypothesis are not ours; their hooks would be measured too
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "cases", *args, *extra], check=False,
                          cwd=root, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    tail = proc.stdout.strip().splitlines()[-1:]
    if proc.returncode != 0 or len(agent.requests) != cases:
        raise SystemExit(f"run failed (rc={proc.returncode}, sent={len(agent.requests)}): {tail}"
                         f"\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return {"wall": wall, "window": window(agent, judge), "max_in_flight": agent.max_in_flight}


def bare_client(agent: TimedAgent, cases: int, concurrency: int) -> dict[str, float]:
    """The floor: the same calls from a bare asyncio + aiohttp loop, no pytest at all."""
    import asyncio

    import aiohttp

    async def go() -> None:
        sem = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as s:
            async def one(i: int) -> None:
                async with sem, s.post(agent.url, json={"input": f"你好{i}", "case_id": str(i),
                                                        "turn_index": 0}) as r:
                    await r.read()
            await asyncio.gather(*(one(i) for i in range(cases)))

    agent.reset()
    t0 = time.perf_counter()
    asyncio.run(go())
    return {"wall": time.perf_counter() - t0, "window": window(agent, None),
            "max_in_flight": agent.max_in_flight}


def bare_client_judge(agent: TimedAgent, judge: JudgeServer, cases: int, concurrency: int,
                      bodies: list[dict[str, object]]) -> dict[str, float]:
    """The judge's floor: per case the agent call, then the very judge request the plugin
    sent for that case (``bodies``: the same prompt, schema and parameters, so the judge
    server does the same work) POSTed to ``/chat/completions``, both through aiohttp
    inside one slot of ``concurrency``; no pytest at all."""
    import asyncio
    import json

    import aiohttp

    async def go() -> None:
        sem = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
            async def one(i: int) -> None:
                body = bodies[i % len(bodies)]
                async with sem:
                    async with s.post(agent.url, json={"input": f"你好{i}", "case_id": str(i),
                                                       "turn_index": 0}) as r:
                        await r.read()
                    async with s.post(f"{judge.base_url}/chat/completions",
                                      data=json.dumps(body, ensure_ascii=False).encode(),
                                      headers={"Content-Type": "application/json"}) as r:
                        json.loads(await r.read())
            await asyncio.gather(*(one(i) for i in range(cases)))

    agent.reset()
    reset_judge(judge)
    t0 = time.perf_counter()
    asyncio.run(go())
    return {"wall": time.perf_counter() - t0, "window": window(agent, judge),
            "max_in_flight": agent.max_in_flight}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=4, help="the -n row's workers (0: none)")
    parser.add_argument("--judge-latency-ms", type=float, default=0.0,
                        help="> 0: judge mode, a local judge answering after this long")
    return parser.parse_args()


def xdist_row(workers: int) -> list[tuple[str, list[str] | None]]:
    return [(f"-n {workers}", ["-n", str(workers)])] if workers > 0 else []


def header() -> None:
    print(f"{'run':<20}{'wall s':>9}{'window s':>10}{'ratio':>8}{'start-up s':>12}"
          f"{'max in flight':>15}")


def row(label: str, r: dict[str, float], ratio: float) -> None:
    print(f"{label:<20}{r['wall']:>9.2f}{r['window']:>10.3f}{ratio:>8.3f}"
          f"{r['wall'] - r['window']:>12.2f}{r['max_in_flight']:>15.0f}")


def agent_rows(args: argparse.Namespace, agent: TimedAgent, root: Path) -> None:
    bound = args.cases * args.latency_ms / 1000 / args.concurrency
    print(f"{args.cases} cases · agent latency {args.latency_ms:g} ms · concurrency "
          f"{args.concurrency} · bound N·latency/concurrency = {bound:.3f} s")
    header()
    runs = [("bare client", None), ("no xdist", []), *xdist_row(args.workers)]
    for label, extra in runs:
        r = (bare_client(agent, args.cases, args.concurrency) if extra is None
             else run(root, agent, extra, args.cases))
        row(label, r, r["window"] / bound)


def judge_calls(judge: JudgeServer, cases: int) -> None:
    """One judge call per judged turn, exactly (printed, and the run fails otherwise)."""
    n = len(judge.chat_calls)
    print(f"{'':<20}judge calls: {n} (expected {cases})")
    if n != cases:
        raise SystemExit(f"judge calls: {n}, expected exactly {cases}")


def judge_rows(args: argparse.Namespace, agent: TimedAgent, judge: JudgeServer,
               root: Path) -> None:
    bound = args.cases * (args.latency_ms + args.judge_latency_ms) / 1000 / args.concurrency
    print(f"{args.cases} cases · agent latency {args.latency_ms:g} ms · judge latency "
          f"{args.judge_latency_ms:g} ms · concurrency {args.concurrency} · bound "
          f"N·(latency + judge latency)/concurrency = {bound:.3f} s · ratio = window / "
          "bare client + judge window")
    header()
    # the plugin's judge requests first, so that the floor sends exactly the same ones
    warm = run(root, agent, [], args.cases, judge)
    bodies = [c["body"] for c in judge.chat_calls]
    floor = bare_client_judge(agent, judge, args.cases, args.concurrency, bodies)
    row("bare client + judge", floor, 1.0)
    judge_calls(judge, args.cases)
    row("no xdist (warm-up)", warm, warm["window"] / floor["window"])
    for label, extra in [("no xdist", []), *xdist_row(args.workers)]:
        assert extra is not None
        r = run(root, agent, extra, args.cases, judge)
        row(label, r, r["window"] / floor["window"])
        judge_calls(judge, args.cases)


def main() -> None:
    args = parse_args()
    judged = args.judge_latency_ms > 0
    judge_server: contextlib.AbstractContextManager[JudgeServer | None] = (
        JudgeServer(latency_s=args.judge_latency_ms / 1000) if judged
        else contextlib.nullcontext())
    agent = TimedAgent(args.latency_ms / 1000)
    with agent, judge_server as judge, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_project(root, agent.url, args.cases, args.concurrency,
                      judge.base_url if judge is not None else None)
        if judge is None:
            agent_rows(args, agent, root)
        else:
            judge_rows(args, agent, judge, root)


if __name__ == "__main__":
    main()
