"""Benchmark: collecting one large case file, and the floor (parsing it with libyaml alone).

Not part of the test run (the name does not start with ``test_``). Run::

    python tests/bench_collection.py [--cases 100000]

It writes one case file of N cases, each with its own knowledge (about 540
bytes a case, like a real exported suite), into a scratch project and prints,
each measured in a fresh subprocess:

* ``floor``   — ``yaml.parse`` over the file's events with libyaml and nothing
  else (the garbage collector paused): what any loader of this file pays;
* ``loads``   — the plugin's loader (values, lines, alias budget);
* ``collect`` — ``pytest --collect-only -q``: start-up, loading, validation,
  compiled plans and pytest items;

with wall time, CPU time and peak RSS, and the ratio to the floor. Measured
for the docs (execution.md, "Large case files") on a two-CPU machine:
100,000 cases collect in 68 s with an 843 MB peak.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD = """\
defaults:
  request:
    history: []
cases:
"""
CASE = """\
  - id: BIG-{i:06d}
    title: 批量用例 {i}
    request:
      input: {q}
      knowledge:
        carConfigInfo:
          title: 2021款 大众朗逸 1.5L 自动舒适版
          archives: {{mileage: 3.37万公里, firstRegDate: '2021-06', transferCount: {t}, \
color: 白色, gearbox: 自动}}
          price: {{listPrice: 8.98万}}
        storeInfo: {{name: 诚信二手车, address: 上海市闵行区七莘路1888号, openHours: '9:00-18:00'}}
    expected:
      behavior: VEHICLE_INFO
      assertions: {{max_sentences: 3}}
"""
QUESTIONS = ("这车跑了多少公里", "这车多少钱", "什么颜色的", "过户过几次", "你们店在哪")

FLOOR = """\
import gc, sys, yaml
gc.disable()
for _ in yaml.parse(open(sys.argv[1], encoding="utf-8").read(), Loader=yaml.CSafeLoader):
    pass
"""
LOADS = """\
import sys
from pathlib import Path
from pytest_agenteval.yamlio import load_yaml
load_yaml(Path(sys.argv[1]))
"""


def write_project(root: Path, n: int) -> Path:
    (root / "cases").mkdir()
    (root / "agenteval.yaml").write_text("target: {adapter: builtin}\n", encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n"
                                     "addopts = -p no:benchmark -p no:cacheprovider\n")
    path = root / "cases" / "big.yaml"
    with path.open("w", encoding="utf-8") as f:
        f.write(HEAD)
        for i in range(n):
            f.write(CASE.format(i=i, q=QUESTIONS[i % len(QUESTIONS)], t=i % 3))
    return path


def measure(argv: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS MB of one subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = write_project(root, args.cases)
        size = path.stat().st_size / 1e6
        print(f"{args.cases:,} cases, {size:.1f} MB")
        rows = [("floor", [sys.executable, "-c", FLOOR, str(path)]),
                ("loads", [sys.executable, "-c", LOADS, str(path)]),
                ("collect", [sys.executable, "-m", "pytest", "--collect-only", "-q"])]
        floor = None
        for name, argv in rows:
            wall, cpu, rss = measure(argv, root)
            floor = floor or wall
            # ru_maxrss of children is the largest child so far: rows grow in memory
            print(f"{name:8} wall {wall:6.1f} s  cpu {cpu:6.1f} s  peak RSS {rss:6.0f} MB  "
                  f"ratio {wall / floor:4.1f}")


if __name__ == "__main__":
    main()
