"""The comparison as text for a terminal or a CI log, and as JSON (``--json``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ..text import safe
from ._gate import Limits, Verdict, _fmt
from ._metrics import _CHECK_NAMES, _TOLERANCE, Comparison, MetricDelta, RunInfo, _short
from ._records import item_label

# -- text --------------------------------------------------------------------------------------


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _columns(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Rows with every column but the last padded to its widest cell."""
    widths = [max(_width(r[i]) for r in rows if len(r) > i) for i in range(max(map(len, rows)))]
    return [indent + "  ".join(cell + " " * (widths[i] - _width(cell)) if i < len(r) - 1
                               else cell for i, cell in enumerate(r)).rstrip()
            for r in rows]


def _run_line(tag: str, info: RunInfo) -> str:
    parts = [safe(info.path), f"started {info.started or '?'}", f"{info.items} item(s)",
             f"gate {info.gate or 'none'}"]
    return f"  {tag}  " + " · ".join(parts)


def _check_rows(c: Comparison) -> list[list[str]]:
    rows = [["what", "A", "B", ""]]
    for ch in c.checks:
        state = "same" if ch.same else ("DIFFERENT" if ch.blocking else
                                        "different (does not block)")
        rows.append([_CHECK_NAMES[ch.check], _short(ch.a), _short(ch.b), state])
    same_items = not c.only_in_a and not c.only_in_b
    rows.append(["items", str(c.a.items), str(c.b.items),
                 "same" if same_items else f"{len(c.only_in_a)} only in A, "
                 f"{len(c.only_in_b)} only in B (does not block)"])
    return rows


def _dataset_lines(c: Comparison) -> list[str]:
    d = c.dataset
    out = [f"    {label}: {', '.join(files)}" for label, files in (
        ("case files changed", d.files_changed), ("case files only in A", d.files_only_in_a),
        ("case files only in B", d.files_only_in_b)) if files]
    if d.lineage:
        out.append(f"    {d.lineage}")
    for label, refs in (("item ids only in A", c.only_in_a), ("item ids only in B",
                                                              c.only_in_b)):
        if refs:
            ids = [item_label(r.id, r.trial) for r in refs]
            out.append(f"    {label}: " + ", ".join(ids[:20])
                       + (f" … ({len(ids)} in all)" if len(ids) > 20 else ""))
    return out


def _headline(c: Comparison) -> str:
    if c.comparable:
        return "Comparable: same dataset, rule ledger, judge model, judge rubric and repeat count"
    return "NOT comparable: " + "; ".join(c.why_not_comparable())


_KIND_WORD = {"fixed": "fixed", "regressed": "regressed", "status": "status",
              "detail": "changed"}


def _change_lines(c: Comparison) -> list[str]:
    head = (f"Changed items: {c.count('fixed')} fixed · {c.count('regressed')} regressed · "
            f"{c.count('status')} other status change(s) · {c.count('detail')} with changed "
            f"details · {len(c.only_in_a)} only in A · {len(c.only_in_b)} only in B")
    out = [head]
    order = {"regressed": 0, "fixed": 1, "status": 2, "detail": 3}
    for x in sorted(c.changes, key=lambda x: order[x.change]):
        out += _columns([[_KIND_WORD[x.change], item_label(x.id, x.trial),
                          f"{x.a} → {x.b}", safe(x.title)]])
        out += [f"      {d.field.replace('_', ' ')}: {safe(d.a)} → {safe(d.b)}"
                for d in x.details]
    for tag, refs in (("only in A", c.only_in_a), ("only in B", c.only_in_b)):
        out += [f"  {tag}  {item_label(r.id, r.trial)}  {r.status}  {safe(r.title)}"
                for r in refs]
    return out


def _signed(m: MetricDelta, value: float) -> str:
    sign = "±" if abs(value) < _TOLERANCE else ("+" if value > 0 else "−")
    if m.unit == "pct":
        return f"{sign}{abs(value) * 100:.1f}"
    return f"{sign}{abs(value):.0f}" if m.unit == "ms" else f"{sign}{abs(value):.3f}"


def _unit(m: MetricDelta) -> str:
    return {"pct": " pp", "ms": " ms"}.get(m.unit, "")


def delta_text(m: MetricDelta) -> tuple[str, str]:
    """B − A and its interval as text: ``("+0.4 pp", "[−2.7, +3.5] pp *")``."""
    if m.delta is None:
        return "—", ""
    if m.low is None or m.high is None:
        return _signed(m, m.delta) + _unit(m), ("no interval" if m.kind == "rate" else "")
    star = " *" if m.significant else ""
    return (_signed(m, m.delta) + _unit(m),
            f"[{_signed(m, m.low)}, {_signed(m, m.high)}]{_unit(m)}{star}")


def _metric_lines(c: Comparison) -> list[str]:
    rows = [["metric", "A", "B", "B − A", "95% interval"]]
    for m in c.metrics:
        rows.append([m.metric, _fmt(m, m.a), _fmt(m, m.b), *delta_text(m)])
    return ["Metric deltas: B − A; rates with a 95% interval (Newcombe hybrid score), "
            "* = significant (the interval excludes 0)", *_columns(rows)]


def _red_line_lines(c: Comparison) -> list[str]:
    if not c.new_red_lines:
        return ["New red-line failures: none"]
    rows = [[item_label(r.id, r.trial) + (" (only in B)" if r.only_in_b else ""), r.rule_id,
             (f"turn {r.turn + 1}: " if r.turn is not None else "")
             + safe(r.evidence or r.reason)] for r in c.new_red_lines]
    return [f"New red-line failures: {len(rows)}", *_columns(rows)]


def _verdict_lines(c: Comparison, v: Verdict, limits: Limits) -> list[str]:
    if v.result == "PASS":
        drops = ", ".join(f"{k}={x:g}" for k, x in limits.max_drop.items())
        return [f"Comparison gate: PASS (exit 0): no new red-line failure; "
                f"{c.count('regressed')} regression(s), --max-regressions "
                f"{limits.max_regressions}; "
                + (f"no metric worse than --max-drop {drops}" if drops else "no --max-drop set")]
    if v.result == "FAIL":
        return ["Comparison gate: FAIL (exit 1)", *(f"  {f}" for f in v.failures)]
    out = ["Comparison gate: NOT COMPARABLE (exit 3): not applied; --allow-incomparable "
           "applies it", *(f"  {r}" for r in v.not_comparable)]
    if v.failures:
        out += ["  it would fail:", *(f"    {f}" for f in v.failures)]
    return out


def render_text(c: Comparison, v: Verdict, limits: Limits) -> str:
    """The comparison for a terminal or a CI log (English, aligned, masked)."""
    lines = ["agenteval compare: A (baseline) → B (candidate)", _run_line("A", c.a),
             _run_line("B", c.b), "", _headline(c), *_columns(_check_rows(c)),
             *_dataset_lines(c), "", *_change_lines(c), "", *_metric_lines(c), "",
             *_red_line_lines(c), "", *_verdict_lines(c, v, limits)]
    return "\n".join(lines) + "\n"


# -- JSON --------------------------------------------------------------------------------------


def to_json(c: Comparison, v: Verdict) -> dict[str, Any]:
    """The comparison as one JSON document for CI (``--json``)."""
    return {
        "version": 1, "a": asdict(c.a), "b": asdict(c.b), "comparable": c.comparable,
        "checks": [{**asdict(ch), "same": ch.same} for ch in c.checks],
        "dataset": asdict(c.dataset),
        "changes": [asdict(x) for x in c.changes],
        "only_in_a": [asdict(r) for r in c.only_in_a],
        "only_in_b": [asdict(r) for r in c.only_in_b],
        "metrics": [asdict(m) for m in c.metrics],
        "new_red_lines": [asdict(r) for r in c.new_red_lines],
        "gate": {"result": v.result, "exit": v.exit, "failures": v.failures,
                 "not_comparable": v.not_comparable},
    }
