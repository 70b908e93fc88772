"""Benchmark: report.html for N items, from a real run record.

Not part of the test run (the name does not start with ``test_``). Run::

    python tests/bench_report.py [--items 10000] [--record reports/latest/results.json]

Without ``--record`` it first runs the shipped example suite (``pytest cases/``) in a
scratch copy. Its items are repeated, each copy with a new id, up to ``--items``; then
it measures, in one process:

* ``fold``    — the items folded into the report's digest, one by one, as the recorder
  does while the run goes (per item: the cost on the hot path);
* ``render``  — the page built and written at the end of the run;
* ``floor``   — the same items written as ``results.json`` lines (``json.dumps``), what
  the run writes anyway;

and prints the page's size against the record's. Targets: ≤ 15 MB and ≤ 2 s for 10,000.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def shipped_record() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("cases", "rules"):
            shutil.copytree(ROOT / name, root / name)
        shutil.copy(ROOT / "agenteval.yaml", root / "agenteval.yaml")
        (root / "pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n")
        subprocess.run([sys.executable, "-m", "pytest", "cases", "-q", "-p", "no:benchmark"],
                       cwd=root, capture_output=True, check=False)
        path = next((root / "reports").glob("2*/results.json"))
        doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return doc


def grown(cases: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        case = dict(cases[i % len(cases)])
        case["id"] = f"{case['id']}-{i:05d}"
        out.append(case)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--record", type=Path, default=None)
    args = parser.parse_args()
    from pytest_agenteval.report.digest import Digest
    from pytest_agenteval.report.html import write_report

    doc = (json.loads(args.record.read_text(encoding="utf-8")) if args.record
           else shipped_record())
    cases = grown(doc["cases"], args.items)
    scenarios = sum(c["kind"] == "scenario" for c in cases)
    turns = sum(len(c["turns"]) for c in cases)
    t0 = time.perf_counter()
    lines = [json.dumps(c, ensure_ascii=False) for c in cases]
    floor = time.perf_counter() - t0
    digest = Digest()
    t0 = time.perf_counter()
    for c in cases:
        digest.add(c)
    fold = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        render = write_report(path, {**doc, "cases": None}, digest, "zh")
        size = path.stat().st_size
    record = sum(len(x.encode("utf-8")) + 1 for x in lines)
    print(f"{args.items} items ({scenarios} scenarios, {turns} turns) from "
          f"{len(doc['cases'])} recorded ones")
    print(f"{'':<10}{'seconds':>10}{'µs/item':>10}")
    for label, secs in (("fold", fold), ("render", render), ("floor", floor)):
        print(f"{label:<10}{secs:>10.3f}{secs / args.items * 1e6:>10.1f}")
    print(f"report.html {size / 1e6:.2f} MB · results.json cases {record / 1e6:.2f} MB · "
          f"fold + render {fold + render:.2f} s ({(fold + render) / floor:.2f}× the floor)")


if __name__ == "__main__":
    main()
