"""Benchmark: execute-ahead throughput against a local agent with fixed latency.

Not part of the test run (the name does not start with ``test_``). Run::

    python tests/bench_concurrency.py [--cases 1000] [--latency-ms 100] [--concurrency 64]

It writes N single-turn cases into a scratch project, starts a local HTTP agent
that answers every request after exactly ``latency`` (a thread per connection,
so it never queues), and runs ``pytest cases/`` in a subprocess without and
with ``-n 4``. For each run it prints:

* ``wall``   — the whole pytest process, start-up included;
* ``window`` — first request received → last reply sent, as the agent saw it;
* ``bound``  — N · latency / concurrency, the best any client could do;
* ``ratio``  — window / bound (target ≤ 1.10), and the fixed start-up
  (wall − window: interpreter, plugin and worker start, collection, report).

The first row, ``bare client``, sends the same calls from a plain asyncio +
aiohttp loop without pytest: the floor that this test agent allows.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents import FakeAgent


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


def write_project(root: Path, url: str, cases: int, concurrency: int) -> None:
    (root / "cases").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n")
    (root / "agenteval.yaml").write_text(
        f"target: {{adapter: http, url: '{url}', concurrency: {concurrency}, timeout_s: 30}}\n")
    per_file = 100
    for f in range(0, cases, per_file):
        rows = ["cases:"]
        for i in range(f, min(cases, f + per_file)):
            rows.append(f"  - {{id: BENCH-{i:05d}, request: {{input: 你好{i}}}, "
                        "rules: [{type: keyword_match, params: {any: [好的]}}]}")
        (root / "cases" / f"bench_{f // per_file:03d}.yaml").write_text("\n".join(rows) + "\n",
                                                                         encoding="utf-8")


def run(root: Path, agent: TimedAgent, extra: list[str], cases: int) -> dict[str, float]:
    agent.reset()
    t0 = time.perf_counter()
    # pytest-benchmark and hypothesis are not ours; their hooks would be measured too
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "cases", *args, *extra], check=False,
                          cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    tail = proc.stdout.strip().splitlines()[-1:]
    if proc.returncode != 0 or len(agent.requests) != cases:
        raise SystemExit(f"run failed (rc={proc.returncode}, sent={len(agent.requests)}): {tail}"
                         f"\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    assert agent.first is not None and agent.last is not None
    return {"wall": wall, "window": agent.last - agent.first, "max_in_flight": agent.max_in_flight}


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
    assert agent.first is not None and agent.last is not None
    return {"wall": time.perf_counter() - t0, "window": agent.last - agent.first,
            "max_in_flight": agent.max_in_flight}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    bound = args.cases * latency / args.concurrency
    print(f"{args.cases} cases · agent latency {args.latency_ms:g} ms · concurrency "
          f"{args.concurrency} · bound N·latency/concurrency = {bound:.3f} s")
    with TimedAgent(latency) as agent, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_project(root, agent.url, args.cases, args.concurrency)
        print(f"{'run':<12}{'wall s':>9}{'window s':>10}{'ratio':>8}{'start-up s':>12}"
              f"{'max in flight':>15}")
        runs = [("bare client", None), ("no xdist", []),
                (f"-n {args.workers}", ["-n", str(args.workers)])]
        for label, extra in runs:
            r = (bare_client(agent, args.cases, args.concurrency) if extra is None
                 else run(root, agent, extra, args.cases))
            print(f"{label:<12}{r['wall']:>9.2f}{r['window']:>10.3f}{r['window'] / bound:>8.3f}"
                  f"{r['wall'] - r['window']:>12.2f}{r['max_in_flight']:>15.0f}")


if __name__ == "__main__":
    main()
