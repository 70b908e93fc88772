"""Benchmark of issue 12: the plugin against the floor, by size, judge and xdist workers.

Not part of the test run (pytest collects ``test_*.py`` only). Run::

    python tests/perf/bench.py [--sizes 1000,10000] [--scenarios 0] [--workers 0,2,8]
                               [--latency-ms 100] [--concurrency 64] [--judge-latency-ms 300]
                               [--modes rules,judge] [--repeat 1] [--json OUT]
    python tests/perf/bench.py --chart OUT.json > chart.svg

In this process it starts a local agent (``agents.FakeAgent``) that answers every
request after exactly ``--latency-ms`` and, for the judge mode, a local
OpenAI-compatible judge (``judge_server.JudgeServer``) that answers after
``--judge-latency-ms``; both serve a thread per connection, so neither queues.
For each mode (``rules``: rules only; ``judge``: the same plus one judge call per
turn) and each size N it writes a scratch project of N single-turn cases (and
``--scenarios`` five-turn scenarios), two explicit checks a turn and no ledger,
and runs ``pytest cases -q -n W`` in a subprocess for each W of ``--workers``.
Each mode and size also has its floor, ``bare client``: a process of its own
(``_floor.py``) that sends the very agent and judge requests the plugin sent
(recorded in the first run of ``--workers``,
``-n 0`` by default) from a bare asyncio + aiohttp loop, the longest conversations
first (the best order for a fixed number of slots). And
pytest's own floor: N parametrized no-op tests, in a folder without
``agenteval.yaml``.

Per row (the median of ``--repeat`` runs, each number on its own):

* ``wall``       — process start → exit, start-up included;
* ``window``     — first agent request → last reply (the judge's in the judge mode),
  as the servers saw them; ``ratio`` = window / the floor's window, ``wall×`` = wall /
  the floor's wall;
* ``1st req``    — process start → first agent request; ``tail`` — last reply → exit;
* ``CPU``        — user + sys of the process and all its children
  (``RUSAGE_CHILDREN``; the servers run here, so they are not counted), per item,
  and split by ``/proc`` samples into before the first request, in the window and
  after the last reply;
* ``RSS``        — peak of the tree's summed VmRSS, sampled every 50 ms;
* ``json`` / ``jsonl`` / ``html`` — sizes of results.json, results.jsonl, report.html;
* ``judge``      — judge calls received / expected (one per judged turn; a mismatch
  fails the benchmark).

Then the marginal CPU per item between the smallest and largest N, and the
targets of issue 12, each met or not (the harness-CPU line splits the ``-n 0``
marginal: pytest's own no-op items, the bare client's calls, the plugin's own).
Bytecode is cached in a private folder (``PYTHONPYCACHEPREFIX``, outside the
repository) as on a user's machine, and one
untimed run per mode warms it first. The code measured is a snapshot taken at the
start (``--code head``: the last commit, by default; ``worktree``: the files as they
are), put first on the runs' ``PYTHONPATH``, so that edits made while the benchmark
runs do not change what it measures. Other people's work on the machine is
detected (``/proc/stat`` busy time that neither the run nor this process spent):
each run waits for a quiet machine, and one that was disturbed anyway is run again.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: agents, judge_server, bench_concurrency

from _project import JUDGE_KEY_ENV, TURNS, write_noop, write_project  # noqa: E402
from _report import print_marginal, print_noop, print_section, print_targets  # noqa: E402
from _tree import Measured, measured, wait_quiet  # noqa: E402
from bench_concurrency import TimedAgent, reset_judge  # noqa: E402
from judge_server import JudgeServer, fenced_data  # noqa: E402

#: other plugins' hooks are not ours to measure
NOISE = ["-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest"]
PYCACHE = Path(tempfile.gettempdir()) / "agenteval-bench-pycache"


def disturbed(r: dict[str, float]) -> bool:
    """Other processes used more than 0.3 s plus a tenth of a core over the run."""
    return r["foreign_cpu"] > 0.3 + 0.1 * r["wall"]


def steady(args: argparse.Namespace, run: Callable[[], dict[str, float]]) -> dict[str, float]:
    """``run()`` on a quiet machine: waits (up to ``--patience-s``) for other people's work to
    stop first, and runs again (up to ``--tries`` in all) when some ran meanwhile; the last
    try is kept, its ``foreign_cpu`` shown."""
    for attempt in range(args.tries):
        waited = wait_quiet(patience_s=args.patience_s)
        if waited > 5:
            print(f"  (waited {waited:.0f} s for other processes to finish)", file=sys.stderr,
                  flush=True)
        r = {**run(), "retries": attempt, "waited_s": waited}
        if not disturbed(r):
            break
        print(f"  (disturbed: {r['foreign_cpu']:.1f} s of other processes' CPU in "
              f"{r['wall']:.1f} s; run again)", file=sys.stderr, flush=True)
    return r


@dataclass
class Bench:
    args: argparse.Namespace
    agent: TimedAgent
    judge: JudgeServer | None
    scratch: Path
    env: dict[str, str]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ints: Callable[[str], list[int]] = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=ints, default=[1000, 10000], help="N single-turn cases")
    p.add_argument("--scenarios", type=int, default=0, help="M five-turn scenarios added")
    p.add_argument("--workers", type=ints, default=[0, 2, 8], help="the -n values")
    p.add_argument("--asked", type=ints, default=[8],
                   help="-n values also run with --agenteval-workers asked (the workers -n "
                   "asks for, where the plugin's default fits them to the machine)")
    p.add_argument("--latency-ms", type=float, default=100.0)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--judge-latency-ms", type=float, default=300.0)
    p.add_argument("--modes", default="rules,judge", help="rules (rules only), judge")
    p.add_argument("--repeat", type=int, default=1, help="runs per row; the median is shown")
    p.add_argument("--section-budget-s", type=float, default=None,
                   help="repeat a mode and size only while its runs fit in this many seconds")
    p.add_argument("--tries", type=int, default=5, help="runs of a disturbed row, at most")
    p.add_argument("--patience-s", type=float, default=120.0,
                   help="how long to wait for a quiet machine before each run")
    p.add_argument("--code", choices=("head", "worktree"), default="head",
                   help="measure the last commit (default) or the work tree as it is")
    p.add_argument("--json", type=Path, default=None, help="write every number here")
    p.add_argument("--chart", type=Path, default=None, help="print the SVG chart of a --json")
    return p.parse_args(argv)


def snapshot(scratch: Path, which: str) -> tuple[Path, str]:
    """A copy of ``pytest_agenteval`` (the last commit's, or the work tree's) in ``scratch``,
    and what it is."""
    import io
    import subprocess
    import tarfile

    code, repo = scratch / "code", HERE.parent.parent
    if which == "worktree":
        shutil.copytree(repo / "pytest_agenteval", code / "pytest_agenteval",
                        ignore=shutil.ignore_patterns("__pycache__"))
        return code, f"work tree of {code_state()}"
    tar = subprocess.run(["git", "archive", "HEAD", "pytest_agenteval"], cwd=repo, check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(code, filter="data")
    return code, code_state().split(",")[0] + " (committed)"


def bench_env(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env[JUDGE_KEY_ENV] = "bench"
    return env


# --- one run ------------------------------------------------------------------------------

def reset(b: Bench) -> None:
    b.agent.reset()
    b.agent.headers.clear()
    if b.judge is not None:
        reset_judge(b.judge)


def artefacts(root: Path) -> dict[str, float]:
    runs = sorted((root / "reports").glob("*/results.json"), key=lambda p: p.stat().st_mtime)
    out = {}
    for name in ("results.json", "results.jsonl", "report.html"):
        path = runs[-1].parent / name if runs else None
        out[name] = path.stat().st_size / 1e6 if path is not None and path.exists() else 0.0
    shutil.rmtree(root / "reports", ignore_errors=True)
    return out


def numbers(b: Bench, m: Measured, items: int) -> dict[str, float]:
    """What one run measured, from the process's tree and the servers' clocks."""
    first = b.agent.first
    last = b.judge.last if b.judge is not None else b.agent.last
    assert first is not None and last is not None, "the servers saw no request"
    before, upto = m.cpu_at(first), m.cpu_at(last)
    return {"wall": m.wall, "window": last - first, "first_request": first - m.started,
            "tail": m.exited - last, "cpu": m.cpu_s, "cpu_ms": m.cpu_s / items * 1000,
            "cpu_startup": before, "cpu_window": upto - before, "cpu_tail": m.cpu_s - upto,
            "rss_mb": m.peak_rss_mb, "procs": m.peak_procs,
            "in_flight": b.agent.max_in_flight,
            "judge_calls": len(b.judge.chat_calls) if b.judge is not None else 0,
            "foreign_cpu": m.foreign_s}


def check(b: Bench, m: Measured, out: Path, turns: int, what: str) -> None:
    sent = len(b.agent.requests)
    calls = len(b.judge.chat_calls) if b.judge is not None else turns
    if m.returncode == 0 and sent == turns and calls == turns:
        return
    tail = out.read_text(encoding="utf-8", errors="replace")[-3000:]
    raise SystemExit(f"{what} failed: rc={m.returncode}, agent requests {sent}, judge calls "
                     f"{calls}, expected {turns} each\n{tail}")


def plugin_run(b: Bench, root: Path, workers: int, items: int, turns: int,
               asked: bool = False) -> dict[str, float]:
    return steady(b.args, lambda: _plugin_run(b, root, workers, items, turns, asked))


def _plugin_run(b: Bench, root: Path, workers: int, items: int, turns: int,
                asked: bool) -> dict[str, float]:
    reset(b)
    argv = [sys.executable, "-m", "pytest", "cases", "-q", *NOISE, "-n", str(workers)]
    if asked:
        argv += ["--agenteval-workers", "asked"]
    if b.judge is not None:
        argv.append("--agenteval-no-cache")
    out = root / "pytest.out"
    m = measured(argv, root, b.env, out)
    check(b, m, out, turns, f"pytest -n {workers}{' asked' if asked else ''}")
    return {**numbers(b, m, items), **artefacts(root)}


def floor_run(b: Bench, root: Path, items: int, turns: int) -> dict[str, float]:
    return steady(b.args, lambda: _floor_run(b, root, items, turns))


def _floor_run(b: Bench, root: Path, items: int, turns: int) -> dict[str, float]:
    reset(b)
    out = root / "floor.out"
    m = measured([sys.executable, str(HERE / "_floor.py"), str(root / "floor.pickle")], root,
                 b.env, out)
    check(b, m, out, turns, "the bare client")
    return numbers(b, m, items)


def noop_run(b: Bench, root: Path, workers: int, items: int) -> dict[str, float]:
    return steady(b.args, lambda: _noop_run(b, root, workers, items))


def _noop_run(b: Bench, root: Path, workers: int, items: int) -> dict[str, float]:
    out = root / "noop.out"
    for old in root.glob("last-*.txt"):
        old.unlink()
    m = measured([sys.executable, "-m", "pytest", "-q", *NOISE, "-n", str(workers)], root,
                 b.env, out)
    if m.returncode != 0:
        raise SystemExit(f"no-op pytest failed: {out.read_text()[-2000:]}")
    last = max(float(f.read_text()) for f in root.glob("last-*.txt"))
    return {"wall": m.wall, "cpu": m.cpu_s, "cpu_ms": m.cpu_s / items * 1000,
            "rss_mb": m.peak_rss_mb, "procs": m.peak_procs, "foreign_cpu": m.foreign_s,
            "tail": m.exited - last}


# --- the floor's requests -------------------------------------------------------------------

def record_floor(b: Bench, root: Path) -> None:
    """The plugin's requests, per item in turn order, paired with each turn's judge request:
    what the bare client replays (identical strings shared, so the pickle stays small)."""
    shared: dict[str, Any] = {}

    def intern(value: Any) -> Any:
        return shared.setdefault(json.dumps(value, ensure_ascii=False, sort_keys=True), value)

    judged: dict[str, dict[str, Any]] = {}
    for call in b.judge.chat_calls if b.judge is not None else []:
        body = call["body"]
        body = {k: intern(v) for k, v in body.items()}
        judged[str(fenced_data(call["body"]).get("user_input"))] = body
    items: dict[str, list[dict[str, Any]]] = {}
    for body in b.agent.requests:
        items.setdefault(str(body.get("case_id")), []).append(body)
    spec = [[(t, judged.get(str(t.get("input"))) if b.judge is not None else None)
             for t in sorted(turns, key=lambda t: t.get("turn_index") or 0)]
            for turns in items.values()]
    spec.sort(key=len, reverse=True)  # the longest conversations first: the best order
    if b.judge is not None and any(j is None for turns in spec for _, j in turns):
        raise SystemExit("a judge request could not be paired with its turn's input")
    doc = {"url": b.agent.url, "judge_url": b.judge.base_url if b.judge is not None else None,
           "concurrency": b.args.concurrency, "items": spec}
    (root / "floor.pickle").write_bytes(pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL))


# --- rows -----------------------------------------------------------------------------------

def median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {**{k: statistics.median(r[k] for r in runs) for k in runs[0]}, "runs": len(runs)}


def size_rows(b: Bench, mode: str, n: int, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every runner of one mode and size, ``--repeat`` times; returns the median rows."""
    m = b.args.scenarios
    items, turns = n + m, n + TURNS * m
    root = b.scratch / f"{mode}-{n}"
    write_project(root, b.agent.url, n, m, b.args.concurrency,
                  b.judge.base_url if b.judge is not None else None)
    got: dict[str, list[dict[str, float]]] = {}

    def keep(runner: str, rep: int, r: dict[str, float]) -> None:
        got.setdefault(runner, []).append(r)
        runs.append({"mode": mode, "size": n, "runner": runner, "rep": rep, **r})

    started = time.perf_counter()
    for rep in range(b.args.repeat):
        if rep and over_budget(b.args, time.perf_counter() - started, rep):
            break
        for w in b.args.workers:
            keep(f"-n {w}", rep, plugin_run(b, root, w, items, turns))
            if rep == 0 and w == b.args.workers[0]:
                record_floor(b, root)
            if w == b.args.workers[0]:
                keep("bare client", rep, floor_run(b, root, items, turns))
        for w in b.args.asked:
            keep(f"-n {w} asked", rep, plugin_run(b, root, w, items, turns, asked=True))
    shutil.rmtree(root)
    return finish_rows(mode, n, items, turns, {k: median(v) for k, v in got.items()})


def over_budget(args: argparse.Namespace, spent: float, reps: int) -> bool:
    """One more repetition would take the section past ``--section-budget-s``."""
    budget = args.section_budget_s
    return budget is not None and spent * (reps + 1) / reps > budget


def finish_rows(mode: str, n: int, items: int, turns: int,
                med: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    floor = med["bare client"]
    order = ["bare client", *sorted((k for k in med if k != "bare client"),
                                    key=lambda k: (int(k.split()[1]), k.endswith("asked")))]
    return [{"mode": mode, "size": n, "items": items, "turns": turns, "runner": k, **med[k],
             "ratio": med[k]["window"] / floor["window"],
             "wall_ratio": med[k]["wall"] / floor["wall"]} for k in order]


def noop_rows(b: Bench, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    warm = b.scratch / "noop-warm"
    write_noop(warm, 10)
    workers = sorted({*b.args.workers, *b.args.asked})
    for w in workers:  # untimed: bytecode into the private cache
        noop_run(b, warm, w, 10)
    rows = []
    for n in b.args.sizes:
        items = n + b.args.scenarios
        root = b.scratch / f"noop-{n}"
        write_noop(root, items)
        for w in workers:
            rs = [noop_run(b, root, w, items) for _ in range(b.args.repeat)]
            runs += [{"mode": "pytest", "size": n, "runner": f"-n {w}", "rep": i, **r}
                     for i, r in enumerate(rs)]
            rows.append({"mode": "pytest", "size": n, "items": items, "runner": f"-n {w}",
                         **median(rs)})
        shutil.rmtree(root)
    return rows


def warm_up(b: Bench, mode: str) -> None:
    """One untimed run (bytecode compiled into the private cache, files in the page cache)."""
    root = b.scratch / f"warm-{mode}"
    write_project(root, b.agent.url, 64, 2, b.args.concurrency,
                  b.judge.base_url if b.judge is not None else None)
    plugin_run(b, root, 2, 66, 64 + 2 * TURNS)
    record_floor(b, root)
    floor_run(b, root, 66, 64 + 2 * TURNS)
    shutil.rmtree(root)


def code_state() -> str:
    """The commit measured, and whether the work tree differs from it (other people's
    uncommitted edits are measured too: the package is installed in editable mode)."""
    import hashlib
    import subprocess

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], check=False, cwd=HERE, capture_output=True,
                              text=True).stdout

    head = git("rev-parse", "--short", "HEAD").strip()
    new = git("ls-files", "--others", "--exclude-standard", ":/pytest_agenteval").split()
    diff = git("diff", "HEAD", "--", ":/pytest_agenteval") + "".join(
        (HERE / f).read_text(errors="replace") for f in new)
    dirty = f", uncommitted diff {hashlib.sha1(diff.encode()).hexdigest()[:8]}" if diff else ""
    return f"{head or '?'}{dirty}"


def meta(args: argparse.Namespace) -> dict[str, Any]:
    import pytest

    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.processor())
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "cpus": os.cpu_count(), "cpu": cpu,
            "python": platform.python_version(), "pytest": pytest.__version__,
            "load_before": os.getloadavg()[0],
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}}


def save(args: argparse.Namespace, doc: dict[str, Any]) -> None:
    """Write ``--json`` (after each section too: a long run that stops keeps what it had)."""
    if args.json is not None:
        args.json.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")


def mode_rows(args: argparse.Namespace, mode: str, scratch: Path, env: dict[str, str],
              doc: dict[str, Any]) -> None:
    judged = mode == "judge"
    agent = TimedAgent(args.latency_ms / 1000)
    judge = JudgeServer(latency_s=args.judge_latency_ms / 1000) if judged else None
    with agent:
        if judge is not None:
            judge.__enter__()
        try:
            b = Bench(args, agent, judge, scratch, env)
            warm_up(b, mode)
            for n in args.sizes:
                section = size_rows(b, mode, n, doc["runs"])
                print_section(args, mode, section)
                doc["rows"] += section
                save(args, doc)
        finally:
            if judge is not None:
                judge.__exit__(None, None, None)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.chart is not None:
        from _chart import chart

        sys.stdout.write(chart(json.loads(args.chart.read_text(encoding="utf-8"))))
        return
    with tempfile.TemporaryDirectory(prefix="agenteval-bench-") as tmp:
        scratch = Path(tmp)
        code, state = snapshot(scratch, args.code)
        env = bench_env(code)
        doc: dict[str, Any] = {"meta": {**meta(args), "code": state}, "runs": [], "rows": []}
        m = doc["meta"]
        print(f"{m['date']} · {m['cpus']} CPUs ({m['cpu']}) · Python {m['python']} · pytest "
              f"{m['pytest']} · load {m['load_before']:.2f} · code {m['code']} · up to "
              f"{args.repeat} runs a row, the median shown", flush=True)
        doc["noop"] = noop_rows(Bench(args, TimedAgent(0), None, scratch, env), doc["runs"])
        print_noop(args, doc["noop"])
        save(args, doc)
        for mode in [m for m in args.modes.split(",") if m]:
            mode_rows(args, mode, scratch, env, doc)
    doc["marginal"] = print_marginal(args, doc["rows"], doc["noop"])
    doc["targets"] = print_targets(args, doc["rows"], doc["marginal"], doc.get("noop"))
    save(args, doc)


if __name__ == "__main__":
    main()
