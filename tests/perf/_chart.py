"""An SVG bar chart of a benchmark's ``--json``: ratio to the floor by mode, size and workers."""

from __future__ import annotations

from typing import Any

__all__ = ["chart"]

_W, _H, _LEFT, _TOP, _BOTTOM = 680, 300, 48, 28, 54
_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d")
_LIMITS = {("rules", 0): 1.5, ("rules", 1): 1.25, ("judge", 0): 1.15, ("judge", 1): 1.15}


def _groups(doc: dict[str, Any]) -> list[tuple[str, int, list[dict[str, Any]]]]:
    rows = [r for r in doc["rows"] if r["runner"] != "bare client"]
    keys = dict.fromkeys((r["mode"], r["size"]) for r in rows)
    return [(m, n, [r for r in rows if (r["mode"], r["size"]) == (m, n)]) for m, n in keys]


def _limit(doc: dict[str, Any], mode: str, size: int) -> float:
    sizes = sorted({r["size"] for r in doc["rows"]})
    return _LIMITS[(mode, 0 if size == sizes[0] else 1)]


def chart(doc: dict[str, Any]) -> str:
    groups = _groups(doc)
    runners = list(dict.fromkeys(r["runner"] for _, _, rs in groups for r in rs))
    top = max(2.0, *(r["ratio"] for _, _, rs in groups for r in rs)) * 1.05
    plot_h = _H - _TOP - _BOTTOM
    y = lambda v: _TOP + plot_h * (1 - v / top)  # noqa: E731
    gw = (_W - _LEFT - 10) / len(groups)
    bw = gw * 0.7 / len(runners)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
           f'viewBox="0 0 {_W} {_H}" font-family="sans-serif" font-size="11">',
           f'<text x="{_LEFT}" y="16" font-size="13">window / the floor\'s window '
           '(dashed: the target of issue 12)</text>']
    step = 0.5 if top > 3 else 0.25
    for k in range(int(top / step) + 1):
        v = k * step
        out.append(f'<line x1="{_LEFT}" x2="{_W - 10}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="#ddd"/><text x="{_LEFT - 6}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">{v:g}</text>')
    for g, (mode, size, rows) in enumerate(groups):
        x0 = _LEFT + g * gw + gw * 0.15
        for r in rows:
            i = runners.index(r["runner"])
            x = x0 + i * bw
            out.append(f'<rect x="{x:.1f}" y="{y(r["ratio"]):.1f}" width="{bw - 2:.1f}" '
                       f'height="{y(0) - y(r["ratio"]):.1f}" fill="{_COLOURS[i % 5]}"/>'
                       f'<text x="{x + bw / 2 - 1:.1f}" y="{y(r["ratio"]) - 3:.1f}" '
                       f'text-anchor="middle" font-size="9">{r["ratio"]:.2f}</text>')
        lim = _limit(doc, mode, size)
        out.append(f'<line x1="{x0 - 4:.1f}" x2="{x0 + gw * 0.7 + 4:.1f}" y1="{y(lim):.1f}" '
                   f'y2="{y(lim):.1f}" stroke="#c00" stroke-dasharray="4 3"/>')
        label = "rules only" if mode == "rules" else "with judge"
        out.append(f'<text x="{x0 + gw * 0.35:.1f}" y="{_H - _BOTTOM + 16}" '
                   f'text-anchor="middle">{label}, {size:,}</text>')
    for i, runner in enumerate(runners):
        lx = _LEFT + i * 90
        out.append(f'<rect x="{lx}" y="{_H - 22}" width="10" height="10" '
                   f'fill="{_COLOURS[i % 5]}"/><text x="{lx + 14}" y="{_H - 13}">{runner}</text>')
    return "\n".join([*out, "</svg>"]) + "\n"
