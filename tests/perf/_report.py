"""The benchmark's printed tables: rows by mode and size, pytest's floor, marginals, targets."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

__all__ = ["print_marginal", "print_noop", "print_section", "print_targets"]

_MODE = {"rules": "rules only", "judge": "with the judge"}
_COLUMNS = [  # (heading, key, width, format)
    ("run", "runner", 12, "s"), ("wall s", "wall", 8, ".2f"), ("window s", "window", 9, ".2f"),
    ("ratio", "ratio", 7, ".3f"), ("wall×", "wall_ratio", 7, ".2f"),
    ("1st req s", "first_request", 10, ".2f"), ("tail s", "tail", 7, ".2f"),
    ("CPU s", "cpu", 7, ".2f"), ("ms/item", "cpu_ms", 8, ".2f"),
    ("CPU pre/in/post s", "split", 18, "s"), ("RSS MB", "rss_mb", 7, ".0f"),
    ("procs", "procs", 6, ".0f"), ("flight", "in_flight", 7, ".0f"),
    ("json MB", "results.json", 8, ".1f"), ("jsonl MB", "results.jsonl", 9, ".1f"),
    ("html MB", "report.html", 8, ".1f"), ("judge", "judge", 12, "s"),
    ("other s", "foreign_cpu", 8, ".1f"),
]


def _cells(row: dict[str, Any], judged: bool) -> dict[str, Any]:
    out = dict(row)
    out["split"] = f"{row['cpu_startup']:.1f}/{row['cpu_window']:.1f}/{row['cpu_tail']:.1f}"
    out["judge"] = f"{row['judge_calls']:.0f}/{row['turns']}" if judged else "-"
    return out


def _line(cells: dict[str, Any]) -> str:
    parts = []
    for i, (_, key, width, fmt) in enumerate(_COLUMNS):
        value = cells.get(key)
        text = "-" if value is None else format(value, fmt)
        parts.append(f"{text:<{width}}" if i == 0 else f"{text:>{width}}")
    return "".join(parts)


def print_section(args: argparse.Namespace, mode: str, rows: list[dict[str, Any]]) -> None:
    first = rows[0]
    per_turn = args.latency_ms + (args.judge_latency_ms if mode == "judge" else 0)
    bound = first["turns"] * per_turn / 1000 / args.concurrency
    judge = f" · judge {args.judge_latency_ms:g} ms" if mode == "judge" else ""
    print(f"\n{_MODE[mode]} · {first['size']:,} cases + {args.scenarios:,} five-turn scenarios "
          f"({first['turns']:,} turns) · agent {args.latency_ms:g} ms{judge} · "
          f"{args.concurrency} in flight · bound turns·latency/concurrency = {bound:.2f} s · "
          f"median of {first['runs']}")
    print("".join(f"{h:<{w}}" if i == 0 else f"{h:>{w}}"
                  for i, (h, _, w, _) in enumerate(_COLUMNS)))
    for row in rows:
        print(_line(_cells(row, mode == "judge")), flush=True)


def print_noop(args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    print("\npytest's own floor: N parametrized no-op tests, no agenteval.yaml (plugin inert)"
          f" · median of {rows[0]['runs'] if rows else 0}")
    print(f"{'run':<8}{'items':>8}{'wall s':>9}{'CPU s':>8}{'ms/item':>9}{'RSS MB':>8}"
          f"{'procs':>7}{'tail s':>8}")
    for r in rows:
        tail = f"{r['tail']:>8.2f}" if r.get("tail") is not None else f"{'-':>8}"
        print(f"{r['runner']:<8}{r['items']:>8,}{r['wall']:>9.2f}{r['cpu']:>8.2f}"
              f"{r['cpu_ms']:>9.3f}{r['rss_mb']:>8.0f}{r['procs']:>7.0f}{tail}", flush=True)


def _marginal(rows: list[dict[str, Any]], key: str = "cpu") -> float | None:
    """(CPU at the largest N − at the smallest) / (items between them), in ms."""
    if len(rows) < 2:
        return None
    lo, hi = min(rows, key=lambda r: r["items"]), max(rows, key=lambda r: r["items"])
    return (hi[key] - lo[key]) / (hi["items"] - lo["items"]) * 1000


def _groups(rows: list[dict[str, Any]]) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    keys = dict.fromkeys((r["mode"], r["runner"]) for r in rows)
    for mode, runner in keys:
        yield mode, runner, [r for r in rows if r["mode"] == mode and r["runner"] == runner]


def print_marginal(args: argparse.Namespace, rows: list[dict[str, Any]],
                   noop: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sizes = sorted(args.sizes)
    print(f"\nmarginal CPU per item, {sizes[0]:,} → {sizes[-1]:,} cases (ms; window: CPU "
          "spent between first request and last reply)")
    out = []
    for mode, runner, group in [*_groups(noop), *_groups(rows)]:
        total, window = _marginal(group), _marginal(group, "cpu_window") if mode != "pytest" \
            else None
        if total is None:
            continue
        out.append({"mode": mode, "runner": runner, "cpu_ms": total, "window_cpu_ms": window})
        label = "pytest no-op" if mode == "pytest" else _MODE[mode]
        extra = f" (window {window:.2f})" if window is not None else ""
        print(f"  {label:<15}{runner:<12}{total:>6.2f}{extra}")
    return out


#: "no slower": the same run twice differs by this much in wall time on this machine (a
#: fitted ``-n 8`` is one process, as ``-n 0`` is)
_SAME_WALL = 1.03


def _verdict(value: float, limit: float) -> str:
    return "met" if value <= limit else "NOT MET"


def _target(out: list[dict[str, Any]], name: str, where: str, value: float, limit: float,
            unit: str) -> str:
    out.append({"target": name, "where": where, "value": value, "limit": limit,
                "met": value <= limit})
    return f"{where} {value:.2f}{unit} {_verdict(value, limit)}"


def _ratio_targets(rows: list[dict[str, Any]], out: list[dict[str, Any]],
                   sizes: list[int]) -> Iterator[str]:
    # the issue's: rules only 1.5× at the small size and 1.25× at the large one (a run of
    # one size is held to the small size's), the judge 1.15× at both
    ends = list(dict.fromkeys([sizes[0], sizes[-1]]))
    specs = [("rules", sizes[0], 1.5), *[("rules", n, 1.25) for n in ends[1:]],
             *[("judge", n, 1.15) for n in ends]]
    for mode, n, limit in specs:
        got = [r for r in rows if r["mode"] == mode and r["size"] == n
               and r["runner"] != "bare client" and not r["runner"].endswith("asked")]
        if got:
            name = f"{_MODE[mode]} ≤ {limit}× the floor's window at {n:,}"
            yield f"{name}: " + " · ".join(
                _target(out, name, r["runner"], r["ratio"], limit, "×") for r in got)


def _other_targets(rows: list[dict[str, Any]], marginal: list[dict[str, Any]],
                   out: list[dict[str, Any]], top: int,
                   noop: list[dict[str, Any]]) -> Iterator[str]:
    for m in marginal:
        if m["mode"] != "pytest" and m["runner"] != "bare client" \
                and not m["runner"].endswith("asked"):
            name = f"{_MODE[m['mode']]}: harness CPU ≤ 1 ms per case, marginal"
            yield f"{name}: " + _target(out, name, m["runner"], m["cpu_ms"], 1.0, " ms") \
                + _shares(m, marginal)
    for r in rows:
        if r["size"] == top and r["runner"] == "-n 0":
            name = f"{_MODE[r['mode']]}: peak RSS ≤ 300 MB at {top:,}, no xdist"
            yield f"{name}: " + _target(out, name, "-n 0", r["rss_mb"], 300, " MB")
        if r["size"] == top and r["runner"] != "bare client" \
                and not r["runner"].endswith("asked"):
            name = f"{_MODE[r['mode']]}: exit ≤ 1 s after the last reply at {top:,}"
            own = next((x.get("tail") for x in noop
                        if x["runner"] == r["runner"] and x["size"] == top), None)
            yield (f"{name}: " + _target(out, name, r["runner"], r["tail"], 1.0, " s")
                   + (f" (pytest's own no-op items: {own:.2f} s from the last test to the "
                      f"exit; the plugin's share {r['tail'] - own:+.2f} s)"
                      if own is not None else ""))
    for r in rows:
        base = next((x for x in rows if x["mode"] == r["mode"] and x["size"] == r["size"]
                     and x["runner"] == "-n 0"), None)
        if r["runner"] == "-n 8" and base is not None:
            name = (f"{_MODE[r['mode']]}: -n 8 no slower than -n 0 at {r['size']:,} (wall, "
                    f"within {_SAME_WALL - 1:.0%}: the spread of one command run twice)")
            asked = next((x for x in rows if x["mode"] == r["mode"] and x["size"] == r["size"]
                          and x["runner"] == "-n 8 asked"), None)
            how = (f"; {r['procs']:.0f} process(es) at -n 8"
                   + (f", the 8 workers asked for: {asked['wall'] / base['wall']:.2f}× "
                      f"({asked['wall']:.2f} s)" if asked is not None else ""))
            yield (f"{name}: " + _target(out, name, "-n 8 / -n 0", r["wall"] / base["wall"],
                                         _SAME_WALL, "×")
                   + f" ({r['wall']:.2f} s vs {base['wall']:.2f} s{how})")


def _shares(m: dict[str, Any], marginal: list[dict[str, Any]]) -> str:
    """What of a ``-n 0`` run's marginal CPU is pytest's own (its no-op items), what the
    calls' own (the bare client's), and what is left: the plugin's. (Not for ``-n``: a
    fitted run of case items is one process where pytest's no-op items start workers.)"""
    if m["runner"] != "-n 0":
        return ""
    tax = next((x["cpu_ms"] for x in marginal
                if x["mode"] == "pytest" and x["runner"] == m["runner"]), None)
    calls = next((x["cpu_ms"] for x in marginal
                  if x["mode"] == m["mode"] and x["runner"] == "bare client"), None)
    if tax is None or calls is None:
        return ""
    return (f" (pytest's own no-op items {tax:.2f} + the bare client's calls {calls:.2f} "
            f"+ the plugin's own {m['cpu_ms'] - tax - calls:.2f})")


def print_targets(args: argparse.Namespace, rows: list[dict[str, Any]],
                  marginal: list[dict[str, Any]],
                  noop: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    sizes = sorted(args.sizes)
    out: list[dict[str, Any]] = []
    print("\ntargets of issue 12")
    for line in [*_ratio_targets(rows, out, sizes), *_other_targets(rows, marginal, out,
                                                                      sizes[-1], noop or [])]:
        print(f"  {line}")
    judged = [r for r in rows if r["mode"] == "judge" and r["runner"] != "bare client"]
    if judged:
        print("  with the judge: exactly one judge call per judged turn: met (checked on every "
              "run; a mismatch stops the benchmark)")
    return out
