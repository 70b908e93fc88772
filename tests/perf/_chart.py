"""An SVG chart of a benchmark's ``--json``, by mode, size and workers: the window's ratio
to the floor's (the targets of issue 12, dashed), and the CPU each item cost."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["chart"]

_W, _PANEL, _LEFT, _TOP, _GAP = 720, 230, 48, 28, 46
_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d", "#e45756", "#72b7b2")
_LIMITS = {("rules", 0): 1.5, ("rules", 1): 1.25, ("judge", 0): 1.15, ("judge", 1): 1.15}


def _groups(doc: dict[str, Any]) -> list[tuple[str, int, list[dict[str, Any]]]]:
    rows = doc["rows"]
    keys = dict.fromkeys((r["mode"], r["size"]) for r in rows)
    return [(m, n, [r for r in rows if (r["mode"], r["size"]) == (m, n)]) for m, n in keys]


def _limit(doc: dict[str, Any], mode: str, size: int) -> float:
    sizes = sorted({r["size"] for r in doc["rows"]})
    return _LIMITS[(mode, 0 if size == sizes[0] else 1)]


def _panel(out: list[str], doc: dict[str, Any], top_y: float, title: str, key: str,
           fmt: str, runners: list[str], colour: dict[str, str],
           limit: Callable[[str, int], float | None]) -> None:
    """One panel: a bar per runner in each (mode, size) group, of ``row[key]``."""
    groups = _groups(doc)
    values = [r[key] for _, _, rs in groups for r in rs if r["runner"] in runners]
    top = max([2.0, *values]) * 1.08
    plot_h = _PANEL - _TOP
    y = lambda v: top_y + _TOP + plot_h * (1 - v / top)  # noqa: E731
    gw = (_W - _LEFT - 10) / len(groups)
    bw = gw * 0.8 / len(runners)
    out.append(f'<text x="{_LEFT}" y="{top_y + 16}" font-size="13">{title}</text>')
    step = next(s for s in (0.25, 0.5, 1, 2, 5, 10) if top / s <= 8)
    for k in range(int(top / step) + 1):
        v = k * step
        out.append(f'<line x1="{_LEFT}" x2="{_W - 10}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="#ddd"/><text x="{_LEFT - 6}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">{v:g}</text>')
    for g, (mode, size, rows) in enumerate(groups):
        x0 = _LEFT + g * gw + gw * 0.1
        for r in rows:
            if r["runner"] not in runners:
                continue
            i = runners.index(r["runner"])
            x = x0 + i * bw
            out.append(f'<rect x="{x:.1f}" y="{y(r[key]):.1f}" width="{bw - 2:.1f}" '
                       f'height="{y(0) - y(r[key]):.1f}" fill="{colour[r["runner"]]}"/>'
                       f'<text x="{x + bw / 2 - 1:.1f}" y="{y(r[key]) - 3:.1f}" '
                       f'text-anchor="middle" font-size="8">{format(r[key], fmt)}</text>')
        lim = limit(mode, size)
        if lim is not None:
            out.append(f'<line x1="{x0 - 4:.1f}" x2="{x0 + gw * 0.8 + 4:.1f}" '
                       f'y1="{y(lim):.1f}" y2="{y(lim):.1f}" stroke="#c00" '
                       'stroke-dasharray="4 3"/>')
        label = "rules only" if mode == "rules" else "with judge"
        out.append(f'<text x="{x0 + gw * 0.4:.1f}" y="{y(0) + 14:.1f}" '
                   f'text-anchor="middle">{label}, {size:,}</text>')


def chart(doc: dict[str, Any]) -> str:
    runners = list(dict.fromkeys(r["runner"] for r in doc["rows"]))
    colour = {r: _COLOURS[i % len(_COLOURS)] for i, r in enumerate(runners)}
    height = 2 * _PANEL + 2 * _GAP + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height}" '
           f'viewBox="0 0 {_W} {height}" font-family="sans-serif" font-size="11">']
    plugin = [r for r in runners if r != "bare client"]
    _panel(out, doc, 0, "window / the floor's window (dashed: the target of issue 12)",
           "ratio", ".2f", plugin, colour, lambda m, n: _limit(doc, m, n))
    _panel(out, doc, _PANEL + _GAP, "CPU per item, ms: the whole run's, start-up and exit "
           "included (dashed: 1 ms)", "cpu_ms", ".1f", runners, colour, lambda m, n: 1.0)
    for i, runner in enumerate(runners):
        lx = _LEFT + i * 95
        out.append(f'<rect x="{lx}" y="{height - 22}" width="10" height="10" '
                   f'fill="{colour[runner]}"/><text x="{lx + 14}" y="{height - 13}">{runner}'
                   '</text>')
    return "\n".join([*out, "</svg>"]) + "\n"
